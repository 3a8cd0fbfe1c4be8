"""The HTML report: tables and inline SVG figures, self-contained."""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from rankscope.render.html_report import report

from .data import make_qrels, make_run

pytest.importorskip("scipy")

QRELS = make_qrels(8, n_queries=12)
RUNS = {"base": make_run(QRELS, 1, 0.8), "new": make_run(QRELS, 2, 1.5),
        "other": make_run(QRELS, 3, 1.0)}


def test_report_has_tables_and_embedded_images(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    page = report(QRELS, RUNS, ["nDCG@10", "AP"], output=out, title="My <report>")
    assert out.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>My &lt;report&gt;</title>" in page
    assert page.count("<table class='rankscope-compare'>") == 1 and "baseline: base" in page
    assert page.count("<table class='sortable rankscope-per-query'>") == 1
    assert "nDCG@10" in page and "new" in page
    images = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    # curves: nDCG@k and precision-recall; per metric: distribution + 2 difference plots
    assert len(images) == 2 + 2 * 3
    for svg in images:  # each one well-formed XML, an accessible image
        root = ET.fromstring(svg)
        assert root.get("role") == "img" and root.get("aria-label")
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
    assert "<img" not in page
    # Self-contained: nothing is fetched from elsewhere.
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", page)
    # The one script is inline (the table sorter), no library is loaded.
    assert re.findall(r"<script[^>]*>", page) == ["<script>"] and "<link" not in page


def test_report_without_plots() -> None:
    page = report(QRELS, RUNS, ["AP"], plots=False, test="wilcoxon", baseline="new")
    assert "<svg" not in page and "baseline: new" in page and "Wilcoxon" in page


@pytest.mark.filterwarnings("ignore:too few paired queries")
def test_report_says_each_warning_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves evaluate the runs the comparison evaluated: what a run lacks is said once,
    not once more for each curve."""
    from rankscope.cli.main import main

    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    Path("r1.txt").write_text("q1 Q0 a 1 2 r1\nq9 Q0 b 1 1 r1\n")  # q9 not judged
    Path("r2.txt").write_text("q1 Q0 a 1 2 r2\nq2 Q0 b 1 1 r2\n")
    for extra in ([], ["--no-plots"]):
        code = main(["report", "qrels.txt", "r1.txt", "r2.txt", "-m", "P@1", "-o", "r.html",
                     *extra])
        assert code == 0
        err = capsys.readouterr().err
        assert err.count("queries of r1.txt are in qrels.txt") == 1, err
        assert err.count("queries of r2.txt are in qrels.txt") == 1, err


# a run that lacks two queries and ranks few documents in another: the query policies differ
_SHORT = {q: docs for q, docs in make_run(QRELS, 4, 0.5).items() if q not in ("q01", "q05")}
_SHORT["q03"] = dict(list(_SHORT["q03"].items())[:2])
CURVE_RUNS = {**RUNS, "short": _SHORT}


@pytest.mark.parametrize(("metrics", "family", "options"), [
    (["nDCG@10", "AP"], "nDCG", {}),  # nDCG@10 is compared and a point of the @k curve
    (["P@5", "AP", "RR"], "P", {"ties": "docid_asc"}),
    (["nDCG@10"], "nDCG", {"unjudged": "condensed"}),
    (["nDCG@10"], "nDCG", {"queries": "intersection"}),
    (["nDCG@10"], "nDCG", {"queries": "nonnull"}),
    (["nDCG@10"], "nDCG", {"queries": "zero"}),  # the curves read the runs again
    (["nDCG@10"], "nDCG", {"unjudged": "null"}),  # the same
    (["Rprec", "bpref"], None, {}),  # no metric with a cut-off: the precision-recall curve alone
])
def test_report_curves_are_each_runs_own_evaluation(
        monkeypatch: pytest.MonkeyPatch, metrics: list[str], family: str | None,
        options: dict[str, str]) -> None:
    """Measured in the comparison's pass or not, the curves' points are exactly those of
    metric_at_k and precision_recall, which evaluate each run alone with the curves'
    metrics only (issue 30 section 3: the report reads each run once)."""
    import rankscope.render.svg as svg
    from rankscope.compare.curves import metric_at_k, precision_recall

    drawn: dict[str, list[Any]] = {}
    original = svg.lines_svg

    def capture(series: Any, **kwargs: Any) -> str:
        drawn[kwargs["x_label"]] = list(series)
        return original(series, **kwargs)

    monkeypatch.setattr(svg, "lines_svg", capture)  # the curves load it where they draw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report(QRELS, CURVE_RUNS, metrics, ks=range(1, 13), **options)  # type: ignore[arg-type]
        ranked = {**options, "queries": "qrels"} if options.get("queries") == "zero" else options
        pr = precision_recall(QRELS, CURVE_RUNS, **{  # type: ignore[arg-type]
            **ranked, "unjudged": "nonrelevant" if options.get("unjudged") == "null"
            else ranked.get("unjudged", "nonrelevant")})
        at_k = (None if family is None else
                metric_at_k(QRELS, CURVE_RUNS, family, ks=range(1, 13), **ranked))  # type: ignore[arg-type]
    got_pr = {s.name: (s.x, s.y) for s in drawn["recall"]}
    for (name,), part in pr.group_by("run", maintain_order=True):
        assert got_pr[str(name)] == (tuple(part["recall"]), tuple(part["precision"]))
    if family is None:
        assert "cut-off k" not in drawn
        return
    assert at_k is not None
    got = {s.name: (s.x, s.y) for s in drawn["cut-off k"]}
    assert set(got) == set(CURVE_RUNS)
    for (name,), part in at_k.group_by("run", maintain_order=True):
        assert got[str(name)] == (tuple(part["k"]), tuple(part["value"])), name


def test_report_draws_the_per_query_figures_and_tables_before_the_tests(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures and tables of the per-query values are written while the comparison
    works out its intervals (before its tests), and the page is the one written after."""
    import rankscope.compare.comparison as comparison
    import rankscope.render.html_report as html_report

    events: list[str] = []

    def recorded(name: str, original: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            events.append(name)
            return original(*args, **kwargs)
        return wrapped

    for module, name in ((comparison, "t_test_p_values"), (html_report, "_metric_figures"),
                         (html_report, "per_query_table_html")):
        monkeypatch.setattr(module, name, recorded(name, getattr(module, name)))
    page = report(QRELS, RUNS, ["nDCG@10", "AP"])
    first_test = events.index("t_test_p_values")
    assert events.index("_metric_figures") < first_test
    assert events.index("per_query_table_html") < first_test
    assert events.count("_metric_figures") == events.count("per_query_table_html") == 1
    assert page.count("<table class='sortable rankscope-per-query'>") == 1


def test_measured_curves_make_one_precision_recall_frame_of_every_runs_points(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The precision-recall numbers measured in the comparison's pass are one frame (a
    frame a run, concatenated, cost about what drawing the curves did), and they are still
    each run's own precision_recall, run by run in the comparison's order."""
    import polars as pl

    import rankscope.render.html_report as html_report
    import rankscope.render.report_curves as report_curves
    from rankscope.compare.curves import precision_recall

    made: list[pl.DataFrame] = []
    original = report_curves.measured_curves

    def refuse(*args: Any, **kwargs: Any) -> pl.DataFrame:
        raise AssertionError("a frame a run, concatenated")

    def measured(*args: Any, **kwargs: Any) -> Any:
        with monkeypatch.context() as inside:
            inside.setattr(pl, "concat", refuse)
            at_k, pr = original(*args, **kwargs)
        made.append(pr)
        return at_k, pr

    monkeypatch.setattr(html_report, "measured_curves", measured)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report(QRELS, CURVE_RUNS, ["AP", "P@5"], ks=range(1, 4))
        expected = precision_recall(QRELS, CURVE_RUNS)
    (pr,) = made
    assert pr.schema == expected.schema
    assert pr.to_dict(as_series=False) == expected.to_dict(as_series=False)
    assert pr.get_column("run").unique(maintain_order=True).to_list() == list(CURVE_RUNS)
