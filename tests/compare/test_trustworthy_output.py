"""Output people can use as it is: intervals in range, warnings for tiny tests, p < 1e-4,
the report's per-query parts, figure files and notebook display."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankscope
from rankscope import spread
from rankscope.cli.main import main
from rankscope.compare.comparison import compare
from rankscope.compare.significance import bootstrap_intervals
from rankscope.errors import RankscopeWarning
from rankscope.render.comparison import p_text

from .data import make_qrels, make_run

stats = pytest.importorskip("scipy.stats")

QRELS = make_qrels(3, n_queries=12)
RUNS = {"base": make_run(QRELS, 20, 0.5), "new": make_run(QRELS, 21, 1.5)}
SAMPLE = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "sample_data"


# -- intervals ---------------------------------------------------------------------------


def test_a_t_interval_can_leave_the_range_the_bootstrap_cannot() -> None:
    x = np.array([1.0, 1.0, 1.0, 1.0, 0.9])  # RR of five queries
    t = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=0.95)
    assert t.high > 1.0  # the old interval: above the largest possible RR
    low, high = bootstrap_intervals(x[None, :])
    assert 0.9 <= low[0] <= high[0] <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1), min_size=2, max_size=25), min_size=1, max_size=4)
       .filter(lambda rows: len({len(r) for r in rows}) == 1),
       st.floats(0.5, 0.99))
def test_bootstrap_ends_are_within_each_rows_values(rows: list[list[float]],
                                                    level: float) -> None:
    x = np.array(rows)
    low, high = bootstrap_intervals(x, confidence=level, n_resamples=200, seed=1)
    assert np.all(x.min(axis=1) <= low) and np.all(low <= high)
    assert np.all(high <= x.max(axis=1))


def test_batches_draw_the_documented_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    x = rng.random((2, 50))
    monkeypatch.setattr(spread, "_BATCH_CELLS", 1000)  # 20 resamples a batch
    low, high = bootstrap_intervals(x, n_resamples=200, seed=3)
    # slow reference: one draw of all resamples, each mean gathered directly
    idx = np.random.default_rng(3).integers(0, 50, size=(200, 50))
    means = np.stack([x[r][idx].mean(axis=1) for r in range(2)], axis=1)
    assert low == pytest.approx(np.quantile(means, 0.025, axis=0), abs=1e-12)
    assert high == pytest.approx(np.quantile(means, 0.975, axis=0), abs=1e-12)


def test_compare_intervals_stay_within_zero_and_one() -> None:
    # Nearly every query has its relevant document first: RR close to 1.
    qrels = {f"q{i}": {"r": 1} for i in range(12)}
    runs = {name: {f"q{i}": ({"r": 2.0, "x": 1.0} if i or name == "a" else
                             {"x": 2.0, "r": 1.0}) for i in range(12)} for name in ("a", "b")}
    result = compare(qrels, runs, ["RR"])
    for name in ("a", "b"):
        low, high = result.intervals[name]["RR"]
        assert 0.0 <= low <= high <= 1.0
    c = result.comparison("RR", "b")
    assert -1.0 <= c.ci_low <= c.delta <= c.ci_high <= 1.0


# -- warnings and p-values ------------------------------------------------------------------


def test_too_few_queries_warn() -> None:
    nine = {q: QRELS[q] for q in sorted(QRELS)[:9]}
    runs = {n: {q: r[q] for q in nine} for n, r in RUNS.items()}
    with pytest.warns(RankscopeWarning, match=r"too few paired queries .*\(AP: 9; fewer than 10"):
        compare(nine, runs, ["AP"])
    ten = {q: QRELS[q] for q in sorted(QRELS)[:10]}
    runs = {n: {q: r[q] for q in ten} for n, r in RUNS.items()}
    compare(ten, runs, ["AP"])  # no warning (the test config makes one an error)


def test_small_p_values_print_as_below_1e_4() -> None:
    assert p_text(0.0) == "< 1e-4"
    assert p_text(3e-9) == "< 1e-4"
    assert p_text(0.00012) == "0.0001"
    assert p_text(float("nan")) == "-"


def test_the_table_never_shows_a_zero_p_value(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SAMPLE)
    assert main(["compare", "qrels.txt", "run_a.txt", "run_b.txt", "-m", "nDCG@10"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "bm25_rerank" in line)
    # the t-test's p on the sample data is about 8e-9
    assert row.count("< 1e-4") == 2 and "e-0" not in row and " 0.0000 " not in row


# -- report ----------------------------------------------------------------------------------


def _report(tmp_path: Path, **options: object) -> str:
    return rankscope.report(QRELS, RUNS, ["AP", "nDCG@10"], output=tmp_path / "r.html",
                            **options)  # type: ignore[arg-type]


def test_report_names_the_queries_that_got_worse(tmp_path: Path) -> None:
    page = _report(tmp_path, plots=False)
    for label in ("AP", "nDCG@10"):
        base = rankscope.evaluate(QRELS, RUNS["base"], label).per_query
        new = rankscope.evaluate(QRELS, RUNS["new"], label).per_query
        worse = sorted((q for q in base if new[q][label] < base[q][label] - 1e-12),
                       key=lambda q: (new[q][label] - base[q][label], q))
        assert f"{label}: new below base on {len(worse)} queries" in page
        section = page.split(f"{label}: new below base")[1].split("</table>")[0]
        assert re.findall(r"<tr><td>(q\d+)</td>", section) == worse


def test_report_per_query_table_is_sortable_and_complete(tmp_path: Path) -> None:
    page = _report(tmp_path, plots=False)
    table = page.split("rankscope-per-query")[1].split("</table>")[0]
    assert re.findall(r"<tr><td>(q\d+)</td>", table) == sorted(QRELS)
    assert "<th>AP new - base</th>" in table
    assert "table.sortable" in page and "<script>" in page and "http" not in page.split(
        "<script>")[1]


def test_report_writes_figures_for_papers(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    _report(tmp_path, figures_dir=tmp_path / "figs", ks=range(1, 4))
    files = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert "differences_AP_new_vs_base.pdf" in files and "precision_recall.svg" in files
    assert (tmp_path / "figs" / "distribution_AP.pdf").read_bytes().startswith(b"%PDF")
    assert "<svg" in (tmp_path / "figs" / "AP_at_k.svg").read_text()


def test_difference_plot_names_its_queries() -> None:
    pytest.importorskip("matplotlib")
    result = compare(QRELS, RUNS, ["AP"])
    fig = result.plot_differences("AP")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    diff = result.column("new", "AP") - result.column("base", "AP")
    expected = [result.query_ids[i] for i in np.argsort(-diff, kind="stable")]
    assert labels == expected


# -- notebooks ------------------------------------------------------------------------------


def test_figures_display_inline() -> None:
    pytest.importorskip("matplotlib")
    fig = compare(QRELS, RUNS, ["AP"]).plot_distribution("AP")
    assert fig._repr_png_().startswith(b"\x89PNG")
    assert "<svg" in fig._repr_svg_()


def test_judgments_agreement_and_coverage_render_as_tables() -> None:
    pytest.importorskip("statsmodels")
    from rankscope.judgments import agreement, coverage

    grades = Path(__file__).resolve().parents[2] / "examples" / "judgments" / "grades.csv"
    j = rankscope.Judgments.read(grades, scale="graded")
    assert j._repr_html_().startswith("<table><caption>Judgments(3 queries")
    shown = agreement(j)._repr_html_()
    assert "<th>measure</th>" in shown and "Fleiss" in shown
    cov = coverage(j, str(grades.parent / "run.txt"), 5)._repr_html_()
    # 7 of the 12 top-5 positions have a grade (q1: 4 of 5, q2: 3 of 5, q3: 0 of 2)
    assert "coverage@5: 7 of 12" in cov and "<td>q3</td>" in cov


NOTEBOOK = [
    "import rankscope",
    "qrels = {f'q{i}': {'a': 1, 'b': 0} for i in range(3)}\n"
    "runs = {'x': {f'q{i}': {'a': 2.0, 'b': 1.0} for i in range(3)},\n"
    "        'y': {f'q{i}': {'b': 2.0, 'a': 1.0} for i in range(3)}}\n"
    "import warnings; warnings.simplefilter('ignore')\n"
    "result = rankscope.compare(qrels, runs, ['RR'])",
    "result.plot_differences('RR')",
    "result",
    "rankscope.Judgments.from_qrels(rankscope.Qrels.from_dict(qrels))",
]


@pytest.mark.slow
def test_a_fresh_kernel_displays_plots_and_tables() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = [cell.outputs for cell in nb.cells]
    plot = outputs[2][0]["data"]
    assert "image/png" in plot  # drawn, not "<Figure size 640x400 with 1 Axes>"
    assert "text/html" in outputs[3][0]["data"]  # the comparison table
    assert "<table>" in outputs[4][0]["data"]["text/html"]  # the judgments
    assert json.dumps(outputs).count("Traceback") == 0


@pytest.mark.filterwarnings("ignore:too few paired queries")
def test_worse_queries_worst_first_then_by_query_id() -> None:
    """Equal differences are ordered by query id (its text: 'q10' before 'q2'), NaN and
    ties with the baseline left out; the values are each run's own."""
    qrels = {q: {"r": 1, "s": 1, "n": 0} for q in ("q1", "q2", "q10", "q3", "q4")}
    # P@2 of base: 1 everywhere (r and s on top); of new: q1, q2, q10 drop to 0.5 (n then r),
    # q3 to 0 (n alone), q4 keeps 1
    base = {q: {"r": 2.0, "s": 1.0} for q in qrels}
    new = {"q1": {"n": 2.0, "r": 1.0}, "q2": {"n": 2.0, "s": 1.0}, "q10": {"n": 2.0, "r": 1.0},
           "q3": {"n": 1.0}, "q4": {"s": 2.0, "r": 1.0}}
    result = rankscope.compare(qrels, {"base": base, "new": new}, ["P@2"])
    assert result.worse_queries("P@2", "new") == [
        ("q3", 0.0, 1.0, -1.0), ("q1", 0.5, 1.0, -0.5), ("q10", 0.5, 1.0, -0.5),
        ("q2", 0.5, 1.0, -0.5)]
    assert result.worse_queries("P@2", "base", "new") == []
