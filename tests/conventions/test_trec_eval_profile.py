"""``conventions="trec_eval"`` (rankscope's defaults) gives trec_eval 10.0's numbers.

The expected values are trec_eval 10.0's own outputs in its conformance
folder (``tests/trec_eval/conformance``: ``-m all_trec -q``, and with ``-c``
on a run that lacks a query); every measure trec_eval prints per query is
asked of ``rankscope.evaluate`` by its trec_eval name and compared as
trec_eval prints it (``%6.4f``, counts as integers). The trec_eval binary is
not run in CI (``tests/trec_eval/test_binary_diff.py`` runs it when present).
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import rankscope
from rankscope.errors import UnknownMetricError
from rankscope.metrics.parser import parse_metrics

CONFORMANCE = Path(__file__).resolve().parents[1] / "trec_eval" / "conformance"
# num_q: rankscope's NumQ counts the queries the run answers, not -c's qrels queries
NOT_METRICS = {"runid", "relstring", "num_q"}
COUNTS = ("num_",)


def _per_query(name: str) -> dict[tuple[str, str], str]:
    rows = (line.split("\t") for line in (CONFORMANCE / name).read_text().splitlines())
    return {(m.strip(), q): v for m, q, v in rows}


def _shown(name: str, value: float | None) -> str:
    if value is None:
        return "-nan"
    return str(int(value)) if name.startswith(COUNTS) else f"{value:6.4f}"


def _names(expected: dict[tuple[str, str], str]) -> list[str]:
    names = []
    for name in dict.fromkeys(m for m, _ in expected):
        if name in NOT_METRICS:
            continue
        try:
            parse_metrics(name)
        except UnknownMetricError:
            continue
        names.append(name)
    return names


@pytest.mark.parametrize(("output", "run", "conventions"), [
    ("out.test.aq", "results.test", "trec_eval"),
    ("out.test.aq", "results.test", None),
    ("out.test.aqc", "results.trunc", "trec_eval"),
])
def test_every_printed_value(tmp_path: Path, output: str, run: str,
                             conventions: str | None) -> None:
    expected = _per_query(output)
    names = _names(expected)
    assert len(names) > 80
    path = tmp_path / run  # results.trunc's lines carry extra fields rankscope refuses
    path.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in
                            (CONFORMANCE / run).read_text().splitlines()))
    with pytest.warns() if run == "results.trunc" else _no_warning():
        result = rankscope.evaluate(CONFORMANCE / "qrels.test", path, names,
                                    conventions=conventions, per_query=True)
    wrong = []
    for name in names:
        for q in result.query_ids:
            want = expected.get((name, q))
            if want is not None and _shown(name, result.per_query[q][name]) != want.strip():
                wrong.append(f"{name} q={q}: {result.per_query[q][name]!r} vs {want}")
        want = expected[(name, "all")]
        if _shown(name, result.means[name]) != want.strip():
            wrong.append(f"{name} all: {result.means[name]!r} vs {want}")
    assert not wrong, "\n".join(wrong[:20])


class _no_warning:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# measures trec_eval prints only when asked by name (not in -m all_trec)
BY_NAME_ONLY = ("yaap", "ideal_dcg")
GOLDEN = CONFORMANCE.parent / "golden" / "cases.jsonl.gz"


def _golden_cases() -> list[dict[str, Any]]:
    """Recorded trec_eval 10.0 runs asking for a by-name-only measure, with no flag but
    -q, -c and -l1 (see tests/trec_eval/golden/make_golden.py)."""
    with gzip.open(GOLDEN, "rt") as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
    chosen = []
    for case in cases:
        args = case["args"]
        asked = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-m"]
        flags = {a for i, a in enumerate(args)
                 if a.startswith("-") and a != "-m" and (i == 0 or args[i - 1] != "-m")}
        if (case["status"] == 0 and not case.get("cwd") and flags <= {"-q", "-c", "-l1"}
                and any(m in BY_NAME_ONLY for m in asked)):
            chosen.append(case)
    return chosen


def by_name_only_tested() -> set[str]:
    """The by-name-only measures the golden test below compares."""
    return {a for case in _golden_cases() for a in case["args"] if a in BY_NAME_ONLY}


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda c: " ".join(c["args"]))
def test_measures_asked_by_name(tmp_path: Path, case: dict[str, Any]) -> None:
    for name, text in case["files"].items():
        (tmp_path / name).write_text(text)
    args = case["args"]
    names = [m for m in BY_NAME_ONLY if m in args]
    expected = {(m.strip(), q): v.strip()
                for m, q, v in (line.split("\t") for line in case["stdout"].splitlines())}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial overlap is part of these cases
        result = rankscope.evaluate(tmp_path / "qrels", tmp_path / "run", names, per_query=True,
                                    queries="qrels" if "-c" in args else "intersection")
    for name in names:
        for q in result.query_ids:
            if (name, q) in expected:  # printed per query with -q
                assert _shown(name, result.per_query[q][name]) == expected[(name, q)], (name, q)
        assert _shown(name, result.means[name]) == expected[(name, "all")], name
