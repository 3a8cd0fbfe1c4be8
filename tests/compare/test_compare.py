"""compare(): every number checked against evaluate() + scipy / statsmodels on the same arrays."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from rankscope.compare.comparison import compare
from rankscope.data.tables import Run
from rankscope.engine.evaluate import evaluate
from rankscope.errors import OptionError, RankscopeWarning

from .data import make_qrels, make_run

stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")

QRELS = make_qrels(1)
RUNS = {"base": make_run(QRELS, 10, 0.8), "better": make_run(QRELS, 11, 1.6),
        "same": make_run(QRELS, 12, 0.8)}
METRICS = ["nDCG@10", "P@5", "AP"]


def _reference_intervals(rows: np.ndarray, level: float = 0.95, n_resamples: int = 10000,
                         seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap the slow way: gather each resample's values, take means, quantiles.

    The resamples are drawn as the documented ``rng.integers(0, n, (B, n))``.
    """
    n = rows.shape[1]
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    means = np.stack([rows[r][idx].mean(axis=1) for r in range(rows.shape[0])], axis=1)
    tail = (1 - level) / 2
    return np.quantile(means, tail, axis=0), np.quantile(means, 1 - tail, axis=0)


def _per_query(run: dict[str, dict[str, float]], metric: str, **options: object) -> np.ndarray:
    result = evaluate(QRELS, run, [metric], **options)  # type: ignore[arg-type]
    return result.values[:, 0]


def test_t_test_against_baseline_matches_scipy() -> None:
    result = compare(QRELS, RUNS, METRICS)
    assert result.baseline == "base"
    for metric in METRICS:
        y = _per_query(RUNS["base"], metric)
        columns = [_per_query(RUNS[n], metric) for n in RUNS]
        diffs = [columns[1] - columns[0], columns[2] - columns[0]]
        low, high = _reference_intervals(np.vstack([*columns, *diffs]))
        raw = []
        for i, name in enumerate(("better", "same")):
            x = _per_query(RUNS[name], metric)
            c = result.comparison(metric, name)
            ref = stats.ttest_rel(x, y)
            assert c.p_value == pytest.approx(ref.pvalue, rel=1e-10)
            # Intervals of differences: percentile bootstrap, resampled with the runs' means.
            assert (c.ci_low, c.ci_high) == pytest.approx((low[3 + i], high[3 + i]), abs=1e-12)
            assert c.delta == pytest.approx(x.mean() - y.mean())
            assert (c.wins, c.ties, c.losses) == (
                int(np.sum(x > y + 1e-12)), int(np.sum(np.abs(x - y) <= 1e-12)),
                int(np.sum(x < y - 1e-12)))
            assert c.effect_size == pytest.approx((x - y).mean() / (x - y).std(ddof=1))
            assert c.n_queries == len(QRELS)
            raw.append(ref.pvalue)
        holm = multitest.multipletests(raw, method="holm")[1]
        got = [result.comparison(metric, n).p_adjusted for n in ("better", "same")]
        assert got == pytest.approx(list(holm))
        for r, name in enumerate(RUNS):
            x = _per_query(RUNS[name], metric)
            assert result.means[name][metric] == pytest.approx(x.mean())
            assert result.intervals[name][metric] == pytest.approx((low[r], high[r]), abs=1e-12)
            # and close to scipy's percentile bootstrap (other resamples: Monte Carlo error)
            ci = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=10000,
                                 rng=np.random.default_rng(1)).confidence_interval
            assert result.intervals[name][metric] == pytest.approx((ci.low, ci.high), abs=0.01)


def test_the_better_run_is_found_better() -> None:
    c = compare(QRELS, RUNS, "nDCG@10").comparison("nDCG@10", "better")
    assert c.delta > 0 and c.significant(0.05) and c.wins > c.losses


@pytest.mark.parametrize("test", ["wilcoxon", "permutation", "bootstrap"])
def test_other_tests_match_scipy(test: str) -> None:
    result = compare(QRELS, RUNS, ["AP"], test=test, correction="bonferroni",
                     n_resamples=999, seed=5)
    y = _per_query(RUNS["base"], "AP")
    x = _per_query(RUNS["same"], "AP")
    if test == "wilcoxon":
        expected = stats.wilcoxon(x, y).pvalue
    elif test == "permutation":
        expected = stats.permutation_test(
            (x, y), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=999, rng=np.random.default_rng(5)).pvalue
    else:
        dist = stats.bootstrap((x - y,), np.mean, n_resamples=999, method="percentile",
                               confidence_level=0.95, vectorized=True,
                               rng=np.random.default_rng(5)).bootstrap_distribution
        extreme = np.abs(dist - (x - y).mean()) >= abs((x - y).mean())
        expected = (1 + extreme.sum()) / (1 + extreme.size)
    c = result.comparison("AP", "same")
    assert c.p_value == pytest.approx(expected, rel=1e-10)
    assert c.p_adjusted == pytest.approx(min(1.0, 2 * expected), rel=1e-10)


def test_tukey_over_all_pairs() -> None:
    result = compare(QRELS, RUNS, ["P@5"], test="tukey", all_pairs=True, correction="bh")
    assert result.baseline is None
    assert [(c.run, c.baseline) for c in result.comparisons] == [
        ("better", "base"), ("same", "base"), ("same", "better")]
    for c in result.comparisons:
        assert c.p_adjusted == c.p_value  # Tukey's HSD is already family-wise
    assert result.to_dict()["correction"] == "none"
    # The interval half-width is q_crit * sqrt(MSE / n), the same for every pair.
    widths = {round(c.ci_high - c.ci_low, 12) for c in result.comparisons}
    assert len(widths) == 1


def test_all_pairs_corrects_over_every_pair() -> None:
    result = compare(QRELS, RUNS, ["AP"], all_pairs=True, correction="holm")
    values = {n: _per_query(r, "AP") for n, r in RUNS.items()}
    pairs = list(itertools.combinations(list(RUNS), 2))
    raw = [stats.ttest_rel(values[b], values[a]).pvalue for a, b in pairs]
    expected = multitest.multipletests(raw, method="holm")[1]
    assert [c.p_adjusted for c in result.comparisons] == pytest.approx(list(expected))


def test_baseline_by_name() -> None:
    result = compare(QRELS, RUNS, ["AP"], baseline="better")
    assert {(c.run, c.baseline) for c in result.comparisons} == {
        ("base", "better"), ("same", "better")}
    assert result.comparison("AP", "base").delta < 0


def test_intersection_policy_pairs_the_shared_queries() -> None:
    partial = {q: docs for q, docs in RUNS["better"].items() if q not in ("q03", "q07")}
    runs = {"base": RUNS["base"], "partial": partial}
    # The run lacking two queries is named, with the counts of both sides.
    lacking = r"38 of the 38 queries of run 'partial' are in the qrels \(40 queries\); 2 only"
    with pytest.warns(RankscopeWarning, match=lacking):
        result = compare(QRELS, runs, ["nDCG@10"], queries="intersection")
    assert result.n_queries["nDCG@10"] == len(QRELS) - 2
    keep = [q for q in sorted(QRELS) if q not in ("q03", "q07")]
    base = evaluate(QRELS, runs["base"], "nDCG@10", per_query=True).per_query
    with pytest.warns(RankscopeWarning, match=r"only in the qrels \(q03, q07\)"):
        part = evaluate(QRELS, partial, "nDCG@10", per_query=True, run_name="partial").per_query
    y = np.array([base[q]["nDCG@10"] for q in keep])
    x = np.array([part[q]["nDCG@10"] for q in keep])
    c = result.comparison("nDCG@10", "partial")
    assert c.p_value == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert result.means["base"]["nDCG@10"] == pytest.approx(y.mean())
    # Default policy: the two missing queries score as empty rankings (0) instead.
    with pytest.warns(RankscopeWarning, match=lacking):
        default = compare(QRELS, runs, ["nDCG@10"])
    assert default.n_queries["nDCG@10"] == len(QRELS)


def test_labels_exactly_as_typed() -> None:
    result = compare(QRELS, RUNS, ["ndcg_cut_10", "nDCG@10", "P.5,10"])
    assert result.labels == ["ndcg_cut_10", "nDCG@10", "P_5", "P_10"]
    assert result.means["base"]["ndcg_cut_10"] == result.means["base"]["nDCG@10"]
    assert {c.metric for c in result.comparisons} == set(result.labels)


def test_run_names_tag_then_file_name(tmp_path: Path) -> None:
    paths = []
    for name in ("base", "better"):
        path = tmp_path / f"{name}.txt"
        Run.from_dict(RUNS[name], name="same_tag").write(path)
        paths.append(path)
    other = tmp_path / "other.txt"
    Run.from_dict(RUNS["same"], name="unique").write(other)
    result = compare(QRELS, [*paths, other], ["AP"])
    assert result.run_names == ["base.txt", "better.txt", "unique"]
    renamed = compare(QRELS, [*paths, other], ["AP"], names=["A", "B", "C"])
    assert renamed.run_names == ["A", "B", "C"]
    with pytest.raises(OptionError, match="unique"):
        compare(QRELS, [*paths, other], ["AP"], names=["A", "A", "C"])


def test_more_than_26_runs() -> None:
    runs = {f"r{i}": make_run(QRELS, 100 + i, 0.5 + 0.05 * i, depth=10) for i in range(30)}
    result = compare(QRELS, runs, ["P@5"], all_pairs=True, test="t", correction="bh")
    assert len(result.comparisons) == 30 * 29 // 2
    latex = result.render("latex")
    assert "\n30 & r29 &" in latex


def test_tables_and_notebook_display() -> None:
    result = compare(QRELS, RUNS, ["AP", "P@5"])
    frame = result.to_polars()
    assert frame.height == 4 and frame.get_column("baseline").unique().to_list() == ["base"]
    runs = result.to_polars("runs")
    assert runs.shape == (6, 6)
    per_query = result.to_polars("per_query")
    assert per_query.shape == (3 * len(QRELS), 4)
    assert isinstance(frame, pl.DataFrame)
    pandas_frame = result.to_pandas("runs")
    assert list(pandas_frame.columns) == runs.columns
    assert "<table" in result._repr_html_()
    assert "baseline: base" in repr(result)


def test_identical_runs_are_not_different() -> None:
    result = compare(QRELS, {"a": RUNS["base"], "b": RUNS["base"]}, ["AP"])
    c = result.comparison("AP", "b")
    assert (c.delta, c.p_value, c.wins, c.losses) == (0.0, 1.0, 0, 0)
    assert c.ties == len(QRELS)


def test_refusals() -> None:
    with pytest.raises(OptionError, match="at least two runs"):
        compare(QRELS, [RUNS["base"]], "AP")
    with pytest.raises(OptionError, match="no run named"):
        compare(QRELS, RUNS, "AP", baseline="nope")
    with pytest.raises(OptionError, match="alpha"):
        compare(QRELS, RUNS, "AP", alpha=1.5)
    with pytest.raises(OptionError, match="not both"):
        compare(QRELS, RUNS, "AP", baseline="base", all_pairs=True)
    with pytest.raises(OptionError, match="test must be"):
        compare(QRELS, RUNS, "AP", test="anova")


def test_progress_only_where_bars_are_enabled(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    import rankscope.progress as progress

    compare(QRELS, RUNS, ["AP"])  # stderr is not a terminal here: no bar
    assert capsys.readouterr().err == ""
    progress.set_enabled(True)  # what a terminal gets
    try:
        compare(QRELS, RUNS, ["AP"], test="permutation", n_resamples=99)
        assert "testing" in capsys.readouterr().err
        compare(QRELS, RUNS, ["AP"], progress=False)
        assert capsys.readouterr().err == ""
    finally:
        progress.set_enabled(None)


def test_intervals_drawn_on_two_threads_are_those_drawn_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """compare draws the metrics' intervals two at a time (beside the tests) unless one
    metric's resampled means are large; the numbers are the same to the last bit."""
    import threading

    import rankscope.compare.intervals as intervals

    names: set[str] = set()
    running = [0, 0]  # now, at most
    lock = threading.Lock()
    original = intervals.paired_bootstrap_intervals

    def recorded(*args: object, **kwargs: object) -> object:
        with lock:
            names.add(threading.current_thread().name)
            running[0] += 1
            running[1] = max(running)
        try:
            return original(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(intervals, "paired_bootstrap_intervals", recorded)
    two = compare(QRELS, RUNS, METRICS, all_pairs=True)
    # on the process's kept threads (rankscope.workers), never more than two at once, and
    # none still running once compare returns
    assert {n.rsplit("_", 1)[0] for n in names} == {"rankscope-worker"}
    assert running[0] == 0 and 1 <= running[1] <= 2
    monkeypatch.setattr(intervals, "_TWO_AT_ONCE_BYTES", 0)  # as for --rounds 10000000
    names.clear()
    one = compare(QRELS, RUNS, METRICS, all_pairs=True)
    assert names == {threading.current_thread().name}
    assert two.intervals == one.intervals
    assert [c.to_dict() for c in two.comparisons] == [c.to_dict() for c in one.comparisons]


def test_counts_drawn_after_the_first_run_serve_the_intervals_or_are_drawn_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The resample counts are drawn as soon as the first run is measured, for as many
    queries as it has values; intervals over another number of paired queries draw their
    own. Either way each interval is the one worked out alone."""
    from types import SimpleNamespace

    import rankscope.spread as spread
    from rankscope.compare.intervals import ThreadedIntervals
    from rankscope.spread import paired_bootstrap_intervals

    draws: list[int] = []
    original = spread._resample_counts

    def counted(n: int, n_resamples: int, seed: int | None) -> object:
        draws.append(n)
        return original(n, n_resamples, seed)

    monkeypatch.setattr(spread, "_resample_counts", counted)
    rng = np.random.default_rng(11)
    first = SimpleNamespace(values=rng.random((30, 2)))  # 30 queries with values
    for n in (30, 20):  # paired queries: as the first run's, or fewer
        draws.clear()
        pairs_of = [rng.random((3, n)), rng.random((3, n))]
        with ThreadedIntervals(500, 4) as intervals_of:
            intervals_of.predraw(first)  # type: ignore[arg-type]
            intervals_of.start(pairs_of, [(1, 0), (2, 0)], 0.9)
            got = [intervals_of(m) for m in range(2)]
        assert sorted(draws) == ([30] if n == 30 else [20, 30])
        for paired, (low, high) in zip(pairs_of, got, strict=True):
            alone = paired_bootstrap_intervals(paired, [(1, 0), (2, 0)], confidence=0.9,
                                               n_resamples=500, seed=4)
            assert np.array_equal(low, alone[0]) and np.array_equal(high, alone[1])


def test_also_metrics_are_measured_in_the_pass_and_not_compared() -> None:
    """``also``: each run's mean of further metrics, measured beside the comparison, equal to
    evaluating the run with those metrics alone; the comparison itself is unchanged (nDCG@10
    is both compared and asked again: one column serves)."""
    from rankscope.metrics.base import make_metric

    also = [make_metric("nDCG", k=10), make_metric("P", k=3),
            make_metric("iprec_at_recall", p=0.3, rel=1)]
    plain = compare(QRELS, RUNS, ["nDCG@10", "AP"], test="t")
    got = compare(QRELS, RUNS, ["nDCG@10", "AP"], test="t", also=also)
    assert got.labels == plain.labels == ["nDCG@10", "AP"]
    assert np.array_equal(got.values, plain.values, equal_nan=True)
    assert got.comparisons == plain.comparisons and plain.also_means == {}
    for name, run in RUNS.items():
        alone = evaluate(QRELS, run, also)
        assert got.also_means[name] == {m.name: alone.means[m.name] for m in also}
    with pytest.raises(OptionError, match="also takes Metric objects"):
        compare(QRELS, RUNS, ["AP"], also=["P@3"])  # type: ignore[list-item]


def test_also_is_refused_over_raters_judgments() -> None:
    from rankscope.metrics.base import make_metric

    raters = pl.DataFrame({"query_id": ["q00", "q00"], "doc_id": ["d0", "d1"],
                           "rater": ["a", "b"], "grade": [1, 0]})
    with pytest.raises(OptionError, match="plain qrels"):
        compare(raters, RUNS, ["P@1"], strategy="mean",
                also=[make_metric("P", k=1)])


def test_on_measured_gets_the_values_before_the_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """``on_measured`` is called once, after every run is measured and before any pair is
    tested, with the per-query values, names and baseline of the final result (a report
    draws its figures then, while the intervals are worked out)."""
    import rankscope.compare.comparison as comparison

    events: list[str] = []
    seen: list[Any] = []
    original = comparison.t_test_p_values

    def tested(*args: Any, **kwargs: Any) -> Any:
        events.append("test")
        return original(*args, **kwargs)

    def measured(result: Any) -> None:
        events.append("measured")
        seen.append(result)

    monkeypatch.setattr(comparison, "t_test_p_values", tested)
    got = compare(QRELS, RUNS, METRICS, on_measured=measured)
    assert events[0] == "measured" and events.count("measured") == 1
    assert events.count("test") == len(METRICS)  # each metric's pairs tested at once
    early = seen[0]
    assert (early.run_names, early.baseline, early.labels, early.query_ids) == (
        got.run_names, got.baseline, got.labels, got.query_ids)
    assert np.array_equal(early.values, got.values, equal_nan=True)
    assert early.comparisons == [] and early.means == {} and early.intervals == {}


@pytest.mark.parametrize("test", ["t", "tukey", "wilcoxon"])
def test_each_comparison_is_its_pair_tested_alone_to_the_bit(test: str) -> None:
    """compare tests every pair of a metric in one pass; each comparison's delta, p-value,
    effect size and wins are those of the one-pair functions on that pair's paired values
    (here some queries lack a value for one run: the pairs are over the shared ones)."""
    from rankscope.compare.significance import (
        effect_size,
        paired_test,
        tukey_hsd,
        win_tie_loss,
    )

    fewer = {q: ranked for q, ranked in make_run(QRELS, 13, 1.2).items()
             if q not in ("q01", "q04")}
    with pytest.warns(RankscopeWarning, match="2 only in the qrels"):
        result = compare(QRELS, {**RUNS, "fewer": fewer}, METRICS, test=test,
                         all_pairs=True, queries="intersection")
    assert set(result.n_queries.values()) == {38}  # the queries every run has a value for
    for c in result.comparisons:
        x = result.column(c.run, c.metric)
        y = result.column(c.baseline, c.metric)
        shared = ~np.isnan(np.stack([result.column(r, c.metric) for r in result.run_names])
                           ).any(axis=0)
        x, y = x[shared].copy(), y[shared].copy()
        assert c.delta == float(np.mean(x) - np.mean(y))
        np.testing.assert_array_equal(c.effect_size, effect_size(x, y))
        assert (c.wins, c.ties, c.losses) == win_tie_loss(x, y)
        if test == "tukey":
            block = np.stack([result.column(r, c.metric)[shared] for r in result.run_names])
            p = tukey_hsd(block)[0][result.run_names.index(c.run),
                                    result.run_names.index(c.baseline)]
            assert c.p_value == pytest.approx(float(p), rel=1e-12)
        else:
            assert c.p_value == paired_test(x, y, test).p_value
