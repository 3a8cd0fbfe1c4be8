"""``show_interval`` / ``--ci``: the bootstrap interval up to a query count, '-' and a reason above.

Expected intervals come from a plain numpy percentile bootstrap written here
(same seed and batches of draws as the library, means taken by indexing rather
than by counting; query ids are zero-padded so they sort as built), and
per-query values from how the files are built: query i's one relevant document
sits at rank p_i + 1, so P@1 = [p_i = 0] and RR = 1 / (p_i + 1).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import rankscope
import rankscope.result
from rankscope.cli.main import main


def _positions(n: int, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 3, size=n)


def _write(tmp_path: Path, n: int) -> tuple[Path, Path]:
    """Qrels and a run of n queries: docs a, b, c ranked in that order, one relevant."""
    qrels, run = [], []
    for i, p in enumerate(_positions(n)):
        for k, doc in enumerate("abc"):
            qrels.append(f"q{i:05d} 0 {doc} {int(k == p)}")
            run.append(f"q{i:05d} Q0 {doc} {k + 1} {3 - k} r")
    qrels_path, run_path = tmp_path / f"qrels{n}.txt", tmp_path / f"run{n}.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


def _expected_values(n: int) -> dict[str, np.ndarray]:
    p = _positions(n)
    return {"P@1": (p == 0).astype(float), "RR": 1.0 / (p + 1)}


def _reference_interval(x: np.ndarray, n_resamples: int = 10000) -> tuple[float, float]:
    """Percentile bootstrap of the mean: draw n of n with replacement, 2.5/97.5 % quantiles."""
    n = x.size
    rng = np.random.default_rng(0)
    step = max(1, (1 << 23) // n)  # the library draws in batches of this many resamples
    means = np.concatenate([
        x[rng.integers(0, n, size=(min(step, n_resamples - start), n))].mean(axis=1)
        for start in range(0, n_resamples, step)
    ])
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def _run_json(tmp_path: Path, n: int, capsys: pytest.CaptureFixture[str],
              *extra: str) -> tuple[dict, str]:
    qrels, run = _write(tmp_path, n)
    assert main(["evaluate", str(qrels), str(run), "-m", "P@1", "-m", "RR", "-m", "num_ret",
                 "-f", "json", *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.parametrize("n", [39, 40])
def test_auto_at_or_below_the_limit_prints_the_intervals(tmp_path, capsys, monkeypatch, n):
    monkeypatch.setattr(rankscope.result, "AUTO_INTERVAL_QUERIES", 40)
    out, err = _run_json(tmp_path, n, capsys)
    assert err == "" and "interval_skipped" not in out
    qrels, run = _write(tmp_path, n)
    library = rankscope.evaluate(str(qrels), str(run), ["P@1", "RR", "num_ret"]).intervals()
    for label, values in _expected_values(n).items():
        assert out["interval"][label] == list(library[label])  # exactly, to the bit
        assert out["interval"][label] == pytest.approx(_reference_interval(values), rel=1e-9)
    assert out["interval"]["num_ret"] is None  # a sum has no interval


def test_auto_above_the_limit_shows_dashes_says_why_and_keeps_the_shape(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.setattr(rankscope.result, "AUTO_INTERVAL_QUERIES", 40)
    out, err = _run_json(tmp_path, 41, capsys)
    assert out["interval"] == {"P@1": None, "RR": None, "num_ret": None}
    assert "41 queries" in out["interval_skipped"] and "more than 40" in out["interval_skipped"]
    assert err.count("\n") == 1
    assert err.startswith("rankscope evaluate: intervals not computed for 41 queries")
    assert err.rstrip().endswith("--ci always to compute them")
    qrels, run = _write(tmp_path, 41)
    base = [str(qrels), str(run), "-m", "P@1"]

    assert main(["evaluate", *base]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["metric", "value", "n_queries", "std", "ci95"]
    assert lines[2].split()[0] == "P@1" and lines[2].split()[-1] == "-"

    assert main(["evaluate", *base, "-f", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "run,metric,value,n_queries,std,ci_low,ci_high"
    assert rows[1].endswith(",,")  # empty, as null prints

    assert main(["evaluate", *base, "-f", "markdown", "--per-query"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert "| ci_low | - |" in md and "| ci_high | - |" in md


def test_always_computes_above_the_limit_and_never_skips_quietly(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(rankscope.result, "AUTO_INTERVAL_QUERIES", 40)
    out, err = _run_json(tmp_path, 41, capsys, "--ci", "always")
    assert err == "" and "interval_skipped" not in out
    for label, values in _expected_values(41).items():
        assert out["interval"][label] == pytest.approx(_reference_interval(values), rel=1e-9)

    out, err = _run_json(tmp_path, 5, capsys, "--ci", "never")
    assert err == ""  # asked for: nothing to explain on stderr
    assert out["interval"] == {"P@1": None, "RR": None, "num_ret": None}
    assert out["interval_skipped"] == "intervals not asked for"


def test_the_limit_counts_every_metrics_own_queries(monkeypatch):
    monkeypatch.setattr(rankscope.result, "AUTO_INTERVAL_QUERIES", 40)
    qrels = {f"q{i:05d}": {"a": int(p == 0), "b": int(p == 1), "c": int(p == 2)}
             for i, p in enumerate(_positions(41))}
    run = {q: {"a": 3.0, "b": 2.0, "c": 1.0} for q in qrels}
    result = rankscope.evaluate(qrels, run, ["P@1", "RR", "num_ret"])
    result.show_interval = "auto"
    assert result.interval_skipped() is not None  # 41 values each
    values = result.values.copy()
    values[:1, 0] = np.nan  # P@1 now has 40 values, RR still 41: still too many
    mixed = dataclasses.replace(result, values=values)
    assert mixed.interval_skipped() is not None
    values[:1, 1] = np.nan  # both 40; num_ret (a sum, no interval) keeps 41
    fits = dataclasses.replace(result, values=values)
    assert fits.interval_skipped() is None
    assert fits.shown_interval() == fits.intervals()
    # the library default shows it whatever the size, and reading it always computes it
    plain = dataclasses.replace(result, show_interval="always")
    assert plain.interval_skipped() is None
    assert plain.to_polars()["ci_low"].null_count() == 1  # num_ret only
    skipped = dataclasses.replace(result, show_interval="never")
    assert skipped.to_polars()["ci_low"].null_count() == 3
    assert skipped.interval["RR"] == pytest.approx(
        _reference_interval(_expected_values(41)["RR"]), rel=1e-9)


def test_ci_option_shows_in_help(capsys):
    assert main(["evaluate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--ci {auto,always,never}" in out and "10,000" in out
