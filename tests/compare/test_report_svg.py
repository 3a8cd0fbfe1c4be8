"""The report's inline SVG figures show the numbers they claim, escape every name, and parse.

The values are worked out by hand on a tiny example (reciprocal rank of one
relevant document a query), not read back from the program.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from rankscope.compare.comparison import compare
from rankscope.render.html_report import report
from rankscope.render.svg import (
    BETTER,
    WORSE,
    box_stats,
    differences_svg,
    distribution_svg,
    nice_ticks,
)

pytest.importorskip("scipy")
pytestmark = pytest.mark.filterwarnings("ignore:too few paired queries")

NS = "{http://www.w3.org/2000/svg}"

# one relevant document a query; RR is 1 / its rank (0 when absent)
QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
BASE = {"q1": {"a": 4, "x": 3, "y": 2, "z": 1},   # rank 1: RR 1
        "q2": {"x": 4, "b": 3, "y": 2, "z": 1},   # rank 2: 0.5
        "q3": {"x": 4, "y": 3, "z": 2, "c": 1},   # rank 4: 0.25
        "q4": {"x": 4, "y": 3, "z": 2, "w": 1}}   # absent: 0
NEW = {"q1": {"x": 4, "a": 3, "y": 2, "z": 1},    # rank 2: 0.5
       "q2": {"b": 4, "x": 3, "y": 2, "z": 1},    # rank 1: 1
       "q3": {"c": 4, "x": 3, "y": 2, "z": 1},    # rank 1: 1
       "q4": {"x": 4, "y": 3, "z": 2, "d": 1}}    # rank 4: 0.25
# new - base: q1 -0.5, q2 +0.5, q3 +0.75, q4 +0.25; largest first: q3, q2, q4, q1
SORTED = [("q3", 1.0, 0.25, 0.75), ("q2", 1.0, 0.5, 0.5), ("q4", 0.25, 0.0, 0.25),
          ("q1", 0.5, 1.0, -0.5)]


def _svg(text: str) -> ET.Element:
    root = ET.fromstring(text)  # well-formed XML or this raises
    assert root.tag == f"{NS}svg" and root.get("role") == "img" and root.get("aria-label")
    assert root.find(f"{NS}title") is not None
    return root


def _bars(root: ET.Element) -> list[tuple[float, float, str, str]]:
    group = next(g for g in root.iter(f"{NS}g") if g.get("class") == "bars")
    out = []
    for rect in group.iter(f"{NS}rect"):
        title = rect.find(f"{NS}title")
        assert title is not None and title.text is not None
        out.append((float(rect.get("y", "nan")), float(rect.get("height", "nan")),
                    rect.get("fill", ""), title.text))
    return out


def test_difference_bars_are_the_hand_worked_differences() -> None:
    result = compare(QRELS, {"base": BASE, "new": NEW}, ["RR"])
    root = _svg(differences_svg(result, "RR", run="new"))
    bars = _bars(root)
    assert len(bars) == 4
    zero_line = next(e for e in root.iter(f"{NS}line") if e.get("class") == "zero")
    zero = float(zero_line.get("y1", "nan"))
    unit = bars[0][1] / 0.75  # pixels per unit of RR, from the largest bar
    for (y, height, fill, title), (query, new, base, diff) in zip(bars, SORTED, strict=True):
        # the query and both values on hover: "q3: new 1.0000 − base 0.2500 = +0.7500"
        assert title == (f"{query}: new {new:.4f} \u2212 base {base:.4f} = "
                         f"{diff:+.4f}".replace("=-", "=\u2212").replace("= -", "= \u2212"))
        assert height == pytest.approx(abs(diff) * unit, abs=0.02)
        if diff > 0:  # above the zero line, green: new is better
            assert fill == BETTER and y + height == pytest.approx(zero, abs=0.02)
        else:  # below it, red: base is better
            assert fill == WORSE and y == pytest.approx(zero, abs=0.02)
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{NS}text"))
    assert "RR: new \u2212 base per query (3 better, 1 worse)" in texts
    assert "new better" in texts and "base better" in texts  # which colour is which run
    assert "difference in RR" in texts and "queries, sorted by difference" in texts
    # four queries: each is named under its bar, in the sorted order
    named = [t.text for t in root.iter(f"{NS}text") if t.text in QRELS]
    assert named == [q for q, *_ in SORTED]


def test_a_tie_is_a_sliver_at_zero_still_named() -> None:
    same = {**NEW, "q4": BASE["q4"]}  # q4: 0 on both sides
    result = compare(QRELS, {"base": BASE, "same": same}, ["RR"])
    bars = _bars(_svg(differences_svg(result, "RR")))
    tied = [b for b in bars if b[3].startswith("q4:")]
    assert len(tied) == 1 and tied[0][1] == pytest.approx(1.0) and tied[0][3].endswith("+0.0000")


def test_box_stats_by_hand_and_as_matplotlib_computes_them() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0, 100.0, np.nan])
    s = box_stats(x)
    # quartiles of 1..4, 100 (linear): 2, 3, 4; IQR 2, so the whiskers reach 2 - 3 and 4 + 3:
    # 1 and 4 are the furthest values inside, 100 is beyond; mean (1+2+3+4+100) / 5 = 22
    assert s is not None
    assert (s.low_whisker, s.q1, s.median, s.q3, s.high_whisker) == (1.0, 2.0, 3.0, 4.0, 4.0)
    assert s.outliers == (100.0,) and s.mean == 22.0 and s.n == 5
    assert box_stats(np.array([np.nan])) is None
    cbook = pytest.importorskip("matplotlib.cbook")
    rng = np.random.default_rng(7)
    for data in (rng.random(250), rng.exponential(size=97), np.r_[np.zeros(50), rng.random(9)]):
        (ref,) = cbook.boxplot_stats(data)
        got = box_stats(data)
        assert got is not None
        assert (got.low_whisker, got.q1, got.median, got.q3, got.high_whisker) == pytest.approx(
            (ref["whislo"], ref["q1"], ref["med"], ref["q3"], ref["whishi"]))
        assert sorted(got.outliers) == pytest.approx(sorted(ref["fliers"]))
        assert got.mean == pytest.approx(ref["mean"])


def test_distribution_names_each_runs_median_and_mean() -> None:
    result = compare(QRELS, {"base": BASE, "new": NEW}, ["RR"])
    root = _svg(distribution_svg(result, "RR"))
    label = root.get("aria-label", "")
    # base 1, .5, .25, 0: median .375, mean .4375; new .5, 1, 1, .25: median .75, mean .6875
    assert "base median 0.3750, mean 0.4375" in label
    assert "new median 0.7500, mean 0.6875" in label
    boxes = [g for g in root.iter(f"{NS}g") if g.get("class") == "box"]
    assert len(boxes) == 2


def test_curves_points_are_the_means_at_each_cut_off() -> None:
    page = report(QRELS, {"base": BASE, "new": NEW}, ["P@2", "RR"], ks=range(1, 5))
    # P@k by hand: base finds its relevant document at ranks 1, 2, 4, - ; new at 2, 1, 1, 4
    expected = {"base": [1 / 4, (1 + 1) / 2 / 4, (1 + 1) / 3 / 4, (1 + 1 + 1) / 4 / 4],
                "new": [2 / 4, 3 / 2 / 4, 3 / 3 / 4, 4 / 4 / 4]}
    for run, values in expected.items():
        for k, value in enumerate(values, start=1):
            assert f"<title>{run}: P@{k} = {value:.4f}</title>" in page
    # the 11-point curve: one titled point a recall level and run
    assert len(re.findall(r"<title>(base|new): recall \d\.\d: precision", page)) == 2 * 11


@pytest.mark.parametrize("bad", ["<script>alert(1)</script>", "\"&'", "a\x01b"])
def test_names_are_escaped_and_the_figures_stay_well_formed(bad: str) -> None:
    qrels = {f"{bad}{q}" if q == "q1" else q: docs for q, docs in QRELS.items()}
    base = {f"{bad}{q}" if q == "q1" else q: docs for q, docs in BASE.items()}
    new = {f"{bad}{q}" if q == "q1" else q: docs for q, docs in NEW.items()}
    page = report(qrels, {bad: base, "new": new}, ["RR", "P@2"], ks=range(1, 3))
    svgs = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    assert len(svgs) == 2 + 2 * 2
    shown: list[str] = []
    for text in svgs:
        root = _svg(text)
        shown += ["".join(e.itertext()) for e in root.iter()]
        shown.append(root.get("aria-label", ""))
    readable = bad.replace("\x01", "\ufffd")  # XML 1.0 cannot hold a control character
    assert any(readable in s for s in shown)  # the run's name and the query's, as written
    # no markup of the names survives: the one script of the page is the table sorter
    assert page.count("<script") == 1 and "alert(1)</script>" not in page.replace(
        "&lt;/script&gt;", "")


def test_nice_ticks_by_hand() -> None:
    # range 1.38 over ~5 ticks: 0.276 a tick, rounded up to 0.5
    assert nice_ticks(-0.55, 0.83) == [-0.5, 0.0, 0.5]
    assert nice_ticks(0.0, 1.02) == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])
    # 19 over ~8 ticks: 2.375 a tick, rounded up to 2.5 (the k axis keeps the whole ones)
    assert nice_ticks(1, 20, count=8) == [2.5 * i for i in range(1, 9)]


def test_the_page_needs_no_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The figures are written without matplotlib; only figure files need it."""
    import sys

    from rankscope.errors import DependencyError

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # importing it raises ImportError
    page = report(QRELS, {"base": BASE, "new": NEW}, ["P@2"], ks=range(1, 3))
    assert page.count("<svg ") == 2 + 2
    with pytest.raises(DependencyError, match="matplotlib"):
        report(QRELS, {"base": BASE, "new": NEW}, ["P@2"], figures_dir=tmp_path / "figs")
    assert not (tmp_path / "figs").exists()


def test_runs_given_as_an_iterator_are_read_for_both_passes() -> None:
    page = report(QRELS, iter([BASE, NEW]), ["P@2"], ks=range(1, 2), names=["base", "new"])
    # P@1 by hand (see the curves' test): base 1/4, new 2/4
    assert "<title>base: P@1 = 0.2500</title>" in page
    assert "<title>new: P@1 = 0.5000</title>" in page


def test_difference_bars_stand_one_step_apart_and_their_places_are_written_once() -> None:
    """Every bar i of n at x = 72 + i * step (the plot area's left, step = its width / n),
    as written with two decimals; the places are worked out once for plots of as many
    queries (a report draws dozens of them over the same queries)."""
    from rankscope.render import svg

    runs = {"base": BASE, "new": NEW, "same": {**NEW, "q4": BASE["q4"]}}
    result = compare(QRELS, runs, ["RR", "P@2"])
    svg._bar_lefts.cache_clear()
    drawn = [differences_svg(result, metric, run=run)
             for metric in ("RR", "P@2") for run in ("new", "same")]
    step = (svg.WIDTH - 72 - 16) / 4
    for text in drawn:
        group = next(g for g in _svg(text).iter(f"{NS}g") if g.get("class") == "bars")
        xs = [rect.get("x") for rect in group.iter(f"{NS}rect")]
        assert xs == [f"{72 + i * step:.2f}" for i in range(4)]
    info = svg._bar_lefts.cache_info()
    assert (info.misses, info.hits) == (1, 3)


def test_curves_lines_are_split_without_polars_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves' frames (17 runs x 20 cut-offs in a track's report) are split into one line
    a run in Python: polars' grouping cost more than the figure."""
    import polars as pl

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("group_by called")

    monkeypatch.setattr(pl.DataFrame, "group_by", refuse)
    page = report(QRELS, {"base": BASE, "new": NEW}, ["P@2", "RR"], ks=range(1, 3))
    # P@1, P@2 by hand (see the curves' test above), each run's line in the runs' order
    assert page.index("<title>base: P@1 = 0.2500</title>") < page.index(
        "<title>base: P@2 = 0.2500</title>") < page.index("<title>new: P@1 = 0.5000</title>")
    assert "<title>new: P@2 = 0.3750</title>" in page
    assert len(re.findall(r"<title>(base|new): recall \d\.\d: precision", page)) == 2 * 11


# a third run lacking q4: with queries="intersection" it has no value there (NaN)
SHORT = {q: docs for q, docs in NEW.items() if q != "q4"}


def _title_of(query: str, run: str, a: float, base: str, b: float) -> str:
    """A bar's title from its definition: both values and their signed difference."""
    d = f"{a - b:+.4f}".replace("-", "\u2212")
    return f"{query}: {run} {a:.4f} \u2212 {base} {b:.4f} = {d}"


@pytest.mark.filterwarnings("ignore:3 of the 3 queries")
def test_difference_plots_show_the_tables_texts_without_writing_a_value_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The report writes each run's per-query values (and their differences to the
    baseline) once, for the per-query table and the difference plots' titles; the titles
    are still each value at four decimals and the difference signed, as by definition."""
    from rankscope.render import report_tables

    runs = {"base": BASE, "new": NEW, "short": SHORT}
    result = compare(QRELS, runs, ["RR", "P@2"], queries="intersection")
    texts = report_tables.ValueTexts(result)
    table = report_tables.per_query_table_html(result, texts)

    def refuse(values: object) -> list[str]:
        raise AssertionError("a value written again")

    monkeypatch.setattr(report_tables, "_cells", refuse)
    for metric in ("RR", "P@2"):
        base_values = result.column("base", metric).tolist()
        for run in ("new", "short"):
            bars = _bars(_svg(differences_svg(result, metric, run=run, texts=texts)))
            values = result.column(run, metric).tolist()
            present = [i for i, v in enumerate(values) if v == v]
            expected = sorted(((values[i] - base_values[i], -i) for i in present), reverse=True)
            # largest difference first; the query short lacks has no bar
            assert [b[3] for b in bars] == [
                _title_of(result.query_ids[-j], run, values[-j], "base", base_values[-j])
                for _, j in expected]
    assert len(present) == 3  # short lacks q4
    # the table's cells of that query: '-' for short's value and its difference
    row = table[table.index("<tr><td>q4</td>"):].split("</tr>", 1)[0]
    assert row.count("<td>-</td>") == 2 * 2


@pytest.mark.parametrize("difference", [0.75, -0.5, 0.0, -0.0, -1e-9, 1e-9, -0.00005,
                                        0.00005, 123.456789, -2.5e-5, float("inf"),
                                        float("-inf")])
def test_a_difference_is_signed_from_its_tables_text_as_by_its_definition(
        difference: float) -> None:
    """The plots sign the table's text of a difference; the same text as formatting the
    number signed, for every number a difference can be (a tie's -0.0 included)."""
    from rankscope.render.report_tables import _cells
    from rankscope.render.svg import _signed_text

    (text,) = _cells(np.array([difference]))
    assert _signed_text(text) == f"{difference:+.4f}".replace("-", "\u2212")


def test_box_plots_quartiles_come_from_one_percentile_call_for_runs_of_as_many_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's box plot of 17 runs took 17 ``np.percentile`` calls; runs with as many
    values now share one, and each run's numbers are still the same bits as its own call."""
    rng = np.random.default_rng(3)
    rows = np.round(rng.random((6, 40)), 2)
    rows[4, ::7] = np.nan  # one run with fewer values
    rows[5] = np.nan  # one with none
    alone = [np.percentile(r[~np.isnan(r)], [25, 50, 75]).tolist() if (~np.isnan(r)).any()
             else None for r in rows]
    calls = []
    original = np.percentile

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[call-overload]

    from rankscope.render.svg import box_stats_rows

    monkeypatch.setattr(np, "percentile", counted)
    stats = box_stats_rows(rows)
    assert len(calls) == 2  # four runs of 40 values, one of 34
    assert stats[5] is None and alone[5] is None
    for s, q, row in zip(stats[:5], alone[:5], rows[:5], strict=True):
        assert s is not None and q is not None
        assert [s.q1, s.median, s.q3] == q  # the same bits
        assert s.mean == row[~np.isnan(row)].mean() and s.n == (~np.isnan(row)).sum()
    calls.clear()
    result = compare(QRELS, {"base": BASE, "new": NEW, "same": {**NEW, "q4": BASE["q4"]}},
                     ["RR"])
    distribution_svg(result, "RR")
    assert len(calls) == 1


@pytest.mark.filterwarnings("ignore:3 of the 3 queries")
def test_worse_queries_tables_show_the_tables_texts_without_writing_a_value_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The worse-queries tables take their values from the per-query table's texts; each row
    is still the query, both values at four decimals and the signed difference, worst
    first, as ``worse_queries`` lists them (a run lacking a query has no row for it)."""
    from rankscope.render import report_tables
    from rankscope.render.tabular import format_value

    runs = {"base": BASE, "new": NEW, "short": SHORT, "worst": {
        q: {d: -s for d, s in docs.items()} for q, docs in BASE.items()}}
    result = compare(QRELS, runs, ["RR", "P@2"], queries="intersection")
    texts = report_tables.ValueTexts(result)
    report_tables.per_query_table_html(result, texts)

    def refuse(values: object) -> list[str]:
        raise AssertionError("a value written again")

    def refuse_sign(*args: object) -> str:
        raise AssertionError("a row signed on its own, not a table's rows in one pass")

    monkeypatch.setattr(report_tables, "_cells", refuse)
    monkeypatch.setattr(report_tables, "signed_text", refuse_sign)
    page = report_tables.worse_queries_html(result, limit=2, texts=texts)
    expected_rows = []
    for metric in ("RR", "P@2"):
        for run in ("new", "short", "worst"):
            worse = result.worse_queries(metric, run)
            assert [result.query_ids[i] for i in result.worse_rows(metric, run).tolist()] == [
                q for q, *_ in worse]
            assert f"{metric}: {run} below base on {len(worse)} queries" in page
            expected_rows += [f"<tr><td>{q}</td><td>{format_value(x)}</td>"
                              f"<td>{format_value(y)}</td><td>{d:+.4f}</td></tr>"
                              for q, x, y, d in worse[:2]]
    assert re.findall(r"<tr><td>q.*?</tr>", page) == expected_rows
    # by hand: on RR new is below base on q1 alone (0.5 against 1); short lacks q4
    assert "RR: new below base on 1 queries" in page
    assert "<tr><td>q1</td><td>0.5000</td><td>1.0000</td><td>-0.5000</td></tr>" in page
    assert not any(row.startswith("<tr><td>q4</td>") and "short" in row for row in expected_rows)


# values whose differences to BASE's are ties (0.0), -0.0 and either sign
TIES = {"q1": BASE["q1"], "q2": NEW["q2"], "q3": BASE["q3"], "q4": NEW["q4"]}


@pytest.mark.filterwarnings("ignore:3 of the 3 queries")
def test_a_difference_plot_signs_its_bars_texts_in_one_pass_each_as_by_definition(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's 56 difference plots signed 14,000 bars' texts two calls a bar; each plot
    now signs its bars in one pass, and every title is still the definition's."""
    from rankscope.render import report_tables, svg

    def refuse(*args: object) -> str:
        raise AssertionError("a bar signed on its own")

    runs = {"base": BASE, "new": NEW, "ties": TIES, "short": SHORT}
    result = compare(QRELS, runs, ["RR", "P@2"], queries="intersection")
    monkeypatch.setattr(svg, "_signed_text", refuse)
    monkeypatch.setattr(svg, "signed_text", refuse)
    monkeypatch.setattr(report_tables, "signed_text", refuse)
    for metric in ("RR", "P@2"):
        base_values = result.column("base", metric).tolist()
        for run in ("new", "ties", "short"):
            bars = _bars(_svg(differences_svg(result, metric, run=run)))
            values = result.column(run, metric).tolist()
            expected = sorted(((values[i] - base_values[i], -i) for i, v in enumerate(values)
                               if v == v), reverse=True)
            assert [b[3] for b in bars] == [
                _title_of(result.query_ids[-j], run, values[-j], "base", base_values[-j])
                for _, j in expected]


def test_signed_texts_are_each_differences_text_signed_as_by_definition() -> None:
    """:func:`signed_texts` signs a block of the table's texts, each as formatting its
    number signed (``f"{d:+.4f}"``) writes it, with the minus sign given."""
    from rankscope.render.report_tables import _cells, signed_text, signed_texts

    differences = [0.75, -0.5, 0.0, -0.0, -1e-9, 1e-9, -0.00005, 0.00005, 123.456789,
                   -2.5e-5, 2.5e-5, -0.99995, float("inf"), float("-inf"), -1e300]
    texts = _cells(np.array(differences))
    assert signed_texts(texts) == [f"{d:+.4f}" for d in differences]
    assert signed_texts(iter(texts), "\u2212") == [
        f"{d:+.4f}".replace("-", "\u2212") for d in differences]
    assert [signed_text(t) for t in texts] == signed_texts(texts)
    assert signed_texts([]) == []


def test_bars_not_above_zero_share_two_texts_and_every_top_is_its_definition() -> None:
    """The bars' ``y``, largest difference first: each the definition's (the zero line
    minus the bar's height above it, a sliver half a pixel above the line), the bars
    not above zero sharing the zero line's and the sliver's texts, not formatted each."""
    from rankscope.render.svg import _bar_tops

    rng = np.random.default_rng(7)
    for zero, pixels in ((151.0, 214.0), (187.33333333333334, 97.5), (52.005, 1e4)):
        diff = np.concatenate([rng.normal(0, 0.3, 200), np.zeros(20), [-0.0] * 5,
                               rng.normal(0, 1e-3, 40), [0.004, -0.004, 1e-12, -1e-12]])
        diff = -np.sort(-diff, kind="stable")
        tops = zero - np.maximum(diff, 0.0) * pixels
        sizes = np.abs(diff) * pixels
        sliver = sizes < 1.0
        tops[sliver] = zero - 0.5
        up = int(np.sum(diff > 0))
        written = _bar_tops(tops, sliver, up, zero)
        assert written == [f"{t:.2f}" for t in tops.tolist()]
        # by definition, not from the array: a bar not above zero starts at the line
        assert written[up:] == [f"{zero - 0.5:.2f}" if abs(d) * pixels < 1.0
                                else f"{zero:.2f}" for d in diff[up:].tolist()]
        assert len({id(text) for text in written[up:]}) <= 2
    assert _bar_tops(np.zeros(0), np.zeros(0, dtype=bool), 0, 10.0) == []


def test_a_boxs_coordinates_are_written_once_and_its_outliers_sit_on_its_row(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A box plot wrote its row's middle again for each whisker end and each outlier (a
    track's 7 box plots: 5,400 coordinates); each box now writes it once, and every
    outlier's circle still sits on that row, one circle an outlier."""
    from rankscope.render import svg

    queries = [f"q{i:02d}" for i in range(12)]
    qrels = {q: {"rel": 1} for q in queries}
    # RR 1 on ten queries, then 0.5 and 0 (outliers: the quartiles are all 1)
    ranks = {"a": [1] * 10 + [2, 0], "b": [1] * 9 + [3, 0, 0]}
    runs = {name: {q: ({"rel": 5, "x": 4} if r == 1 else {"x": 5, "rel": 4, "y": 3} if r == 2
                       else {"x": 5, "y": 4, "rel": 3} if r == 3 else {"x": 5, "y": 4})
                   for q, r in zip(queries, rs, strict=True)}
            for name, rs in ranks.items()}
    result = compare(qrels, runs, ["RR"])
    calls: list[float] = []
    written = svg._num

    def counted(x: float) -> str:
        calls.append(x)
        return written(x)

    monkeypatch.setattr(svg, "_num", counted)
    root = _svg(distribution_svg(result, "RR"))
    boxes = [g for g in root.iter(f"{NS}g") if g.get("class") == "box"]
    assert len(boxes) == 2
    for box, name in zip(boxes, ("a", "b"), strict=True):
        stats = box_stats(result.column(name, "RR"))
        assert stats is not None and len(stats.outliers) == (2 if name == "a" else 3)
        whisker = box.find(f"{NS}line")
        assert whisker is not None and whisker.get("y1") == whisker.get("y2")
        row_y = float(whisker.get("y1", "nan"))
        circles = list(box.iter(f"{NS}circle"))
        assert len(circles) == len(stats.outliers)
        assert {c.get("cy") for c in circles} == {whisker.get("y1")}
        assert sum(1 for x in calls if x == pytest.approx(row_y, abs=0.005)) == 1
