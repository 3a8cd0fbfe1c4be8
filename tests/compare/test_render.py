"""Every output format of a comparison: table, Markdown, LaTeX, HTML, CSV, TSV, JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest

from rankscope.compare.comparison import compare
from rankscope.compare.result import CompareResult
from rankscope.errors import OptionError
from rankscope.render.latex import escape

from .data import make_qrels, make_run

pytest.importorskip("scipy")
pytest.importorskip("statsmodels")

QRELS = make_qrels(2)
RUNS = {"run_a": make_run(QRELS, 1, 0.7), "run_b": make_run(QRELS, 2, 1.8),
        "<c>": make_run(QRELS, 3, 0.3)}


@pytest.fixture(scope="module")
def result() -> CompareResult:
    return compare(QRELS, RUNS, ["nDCG@10", "P@5"])


def test_json_shape(result: CompareResult) -> None:
    out = json.loads(result.render("json"))
    assert set(out["runs"]) == set(RUNS)
    assert out["runs"]["run_a"]["mean"] == result.means["run_a"]
    keys = {"metric", "run", "baseline", "delta", "p_value", "p_adjusted", "wins", "ties",
            "losses"}
    assert len(out["comparisons"]) == 4
    for c in out["comparisons"]:
        assert keys <= set(c)
        assert c["metric"] in ("nDCG@10", "P@5")
        assert c["baseline"] == "run_a"
    assert out["test"] == "t" and out["correction"] == "holm"
    assert out["n_queries"] == {"nDCG@10": len(QRELS), "P@5": len(QRELS)}


def test_csv_round_trips_the_numbers(result: CompareResult) -> None:
    rows = list(csv.DictReader(io.StringIO(result.render("csv"))))
    assert len(rows) == len(result.comparisons)
    for row, c in zip(rows, result.comparisons, strict=True):
        assert (row["metric"], row["run"], row["baseline"]) == (c.metric, c.run, c.baseline)
        # 15 significant digits: every digit a float64 holds for sure (issue 27: 0.3, not
        # 0.30000000000000004), so equal to a relative 1e-14
        assert float(row["p_value"]) == pytest.approx(c.p_value, rel=1e-14, abs=0)
        assert float(row["delta"]) == pytest.approx(c.delta, rel=1e-14, abs=0)
        assert int(row["wins"]) == c.wins
    tsv = result.render("tsv").splitlines()
    assert tsv[0].split("\t")[:3] == ["metric", "run", "baseline"]


def test_terminal_table(result: CompareResult) -> None:
    text = result.render("table")
    assert "baseline: run_a" in text
    assert "paired t-test" in text and "Holm" in text
    assert f"nDCG@10: {len(QRELS)}" in text  # number of queries shown
    assert "policy 'qrels'" in text
    c = result.comparison("nDCG@10", "run_b")
    assert f"{c.delta:+.4f}" in text and f"{c.wins}/{c.ties}/{c.losses}" in text


def test_markdown(result: CompareResult) -> None:
    text = result.render("markdown")
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert lines[1].startswith("| --- | --- | ---:")
    assert all(line.count("|") == lines[0].count("|") for line in lines)


def test_latex_booktabs_best_bold_marks_in_caption(result: CompareResult) -> None:
    text = result.render("latex")
    for command in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{lrr}"):
        assert command in text
    assert r"run\_a (baseline)" in text
    for metric in ("nDCG@10", "P@5"):
        best = max(RUNS, key=lambda n: result.means[n][metric] or 0.0)
        assert best == "run_b"
        assert r"\textbf{" + f"{result.means[best][metric]:.4f}" + "}" in text
    # run_b is far better: marked, and the caption explains the mark and the test.
    assert result.comparison("nDCG@10", "run_b").significant(0.05)
    row = next(line for line in text.splitlines() if line.startswith("run\\_b"))
    assert r"$^{\dagger}$" in row
    caption = next(line for line in text.splitlines() if line.startswith(r"\caption"))
    assert r"\dagger" in caption and "Holm" in caption and "0.05" in caption
    assert f"{len(QRELS)} queries" in caption


def test_latex_all_pairs_numbers_runs() -> None:
    res = compare(QRELS, RUNS, ["P@5"], all_pairs=True)
    text = res.render("latex")
    assert r"\# & Run & P@5" in text
    # run_b (2) beats run_a (1) and <c> (3) significantly: superscript lists 1 and 3.
    assert res.comparison("P@5", "run_b", "run_a").significant(0.05)
    assert res.comparison("P@5", "<c>", "run_b").significant(0.05)
    row = next(line for line in text.splitlines() if line.startswith("2 & run\\_b"))
    assert "$^{1,3}$" in row
    assert "Superscripts list the runs" in text


def test_latex_escape() -> None:
    assert escape("a_b & 50% #1 {x} $~^\\") == (
        r"a\_b \& 50\% \#1 \{x\} \$\textasciitilde{}\textasciicircum{}\textbackslash{}")


def test_html_escapes_and_has_tables(result: CompareResult) -> None:
    text = result.render("html")
    assert text.count("<table") == 1 and "&lt;c&gt;" in text and "<c>" not in text


def test_unknown_format(result: CompareResult) -> None:
    with pytest.raises(OptionError, match="unknown format"):
        result.render("docx")
