"""``rankscope evaluate --ci`` through the installed entry point, at the real limit (10,000)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rankscope
from rankscope.cli.main import main


def _write(tmp_path: Path, n: int) -> tuple[Path, Path]:
    """n queries; the first document is relevant in every third query (P@1 = 1/3 or so)."""
    qrels = "".join(f"q{i:05d} 0 a {int(i % 3 == 0)}\nq{i:05d} 0 b 1\n" for i in range(n))
    run = "".join(f"q{i:05d} Q0 a 1 2 r\nq{i:05d} Q0 b 2 1 r\n" for i in range(n))
    qrels_path, run_path = tmp_path / f"qrels{n}.txt", tmp_path / f"run{n}.txt"
    qrels_path.write_text(qrels)
    run_path.write_text(run)
    return qrels_path, run_path


def test_auto_leaves_out_the_interval_of_10001_queries_and_says_so(tmp_path):
    qrels, run = _write(tmp_path, 10_001)
    done = subprocess.run([sys.executable, "-m", "rankscope", "evaluate", str(qrels), str(run),
                           "-m", "P@1", "-f", "json"], capture_output=True, text=True,
                          check=True, timeout=120)
    out = json.loads(done.stdout)
    assert out["mean"]["P@1"] == pytest.approx(3334 / 10_001)  # i = 0, 3, ..., 9999
    assert out["interval"] == {"P@1": None}
    assert "10,001 queries" in out["interval_skipped"]
    err = done.stderr.splitlines()
    assert len(err) == 1
    assert err[0].startswith("rankscope evaluate: intervals not computed for 10,001 queries")
    # the cost model: 10,000 resamples x 10,001 queries, one metric: about a second
    assert "about 1 s" in err[0] and err[0].endswith("--ci always to compute them")


def test_auto_computes_the_interval_of_10000_queries(tmp_path, capsys):
    qrels, run = _write(tmp_path, 10_000)
    assert main(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    out = json.loads(captured.out)
    expected = rankscope.evaluate(str(qrels), str(run), ["P@1"]).interval["P@1"]
    assert expected is not None and out["interval"]["P@1"] == list(expected)
    # 3,334 of 10,000 ones: the interval is close to p +- 1.96 sqrt(p (1 - p) / n)
    p = 0.3334
    half = 1.959964 * (p * (1 - p) / 10_000) ** 0.5
    assert out["interval"]["P@1"] == pytest.approx([p - half, p + half], abs=0.1 * half)
