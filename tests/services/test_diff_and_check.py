"""Snapshot diffs (RBO, Jaccard, churn, moves), holes, and the regression check."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest

from rankscope.data.tables import Qrels
from rankscope.errors import RankscopeWarning
from rankscope.services.regression import check_regression
from rankscope.services.snapshot_diff import Ranking, diff_rankings, holes


def ranking(label, lists, queries=None):
    rows = [(q, d, r, 100.0 - r) for q, docs in lists.items() for r, d in enumerate(docs, 1)]
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "rank": pl.Int64, "score": pl.Float64}, orient="row")
    return Ranking(label=label, frame=frame, query_ids=queries or list(lists),
                   texts={q: f"text of {q}" for q in lists})


def rbo_ext_seed(a, b, p):
    """Seed 000's RBO_EXT for two lists of the same length k, written from its formula:
    X_k / k * p^k + (1 - p) / p * sum_{d=1..k} X_d / d * p^d, X_d = |A_:d & B_:d|."""
    k = len(a)
    x = [len(set(a[:d]) & set(b[:d])) for d in range(1, k + 1)]
    return x[k - 1] / k * p**k + (1 - p) / p * sum(x[d - 1] / d * p**d for d in range(1, k + 1))


A = {"q1": ["a", "b", "c", "d", "e"], "q2": ["x"], "q3": [], "q4": ["m", "n"]}
B = {"q1": ["b", "a", "c", "f", "g"], "q2": [], "q3": [], "q4": ["m", "n"]}


def test_diff_per_query_against_hand_computed_values():
    (d,) = diff_rankings([ranking("A", A), ranking("B", B)], k=5, p=0.9)
    rows = {r["query_id"]: r for r in d.per_query.iter_rows(named=True)}
    assert list(rows) == ["q1", "q2", "q3", "q4"]
    assert rows["q1"]["rbo"] == pytest.approx(rbo_ext_seed(A["q1"], B["q1"], 0.9), abs=1e-12)
    assert rows["q4"]["rbo"] == pytest.approx(1.0)
    assert rows["q2"]["rbo"] == 0.0 and rows["q2"]["jaccard"] == 0.0  # one list empty
    assert rows["q3"]["rbo"] is None or math.isnan(rows["q3"]["rbo"])  # both empty: no value
    assert rows["q1"]["jaccard"] == pytest.approx(3 / 7)  # {a,b,c} shared of 7
    assert (rows["q1"]["entered"], rows["q1"]["left"], rows["q1"]["moved"]) == (2, 2, 2)
    # the mean move of the documents that moved: a and b by 1 each (c stayed at 3)
    assert rows["q1"]["mean_abs_move"] == pytest.approx((1 + 1) / 2)
    assert rows["q4"]["mean_abs_move"] is None  # nothing moved: no mean
    assert (rows["q2"]["entered"], rows["q2"]["left"]) == (0, 1)
    assert d.entered.filter(pl.col("query_id") == "q1").rows() == [("q1", "f", 4),
                                                                   ("q1", "g", 5)]
    assert d.left.rows() == [("q1", "d", 4), ("q1", "e", 5), ("q2", "x", 1)]
    assert d.moves.rows() == [("q1", "a", 1, 2), ("q1", "b", 2, 1)]
    summary = d.summary()
    assert summary["queries_changed"] == 2 and summary["entered"] == 2 and summary["left"] == 3
    expected_rbo = (rbo_ext_seed(A["q1"], B["q1"], 0.9) + 0.0 + 1.0) / 3
    assert summary["rbo"] == pytest.approx(expected_rbo)
    as_json = d.to_dict()
    assert as_json["per_query"]["q1"]["entered_docs"] == [{"doc_id": "f", "rank": 4},
                                                           {"doc_id": "g", "rank": 5}]
    assert as_json["per_query"]["q3"]["rbo"] is None


def test_the_cut_off_k_applies_to_jaccard_and_churn_not_to_rbo():
    (d,) = diff_rankings([ranking("A", A), ranking("B", B)], k=2, p=0.9)
    q1 = d.per_query.row(0, named=True)
    assert q1["jaccard"] == 1.0 and q1["entered"] == 0 and q1["moved"] == 2
    assert q1["rbo"] == pytest.approx(rbo_ext_seed(A["q1"], B["q1"], 0.9))


def test_holes_are_the_unjudged_documents_of_each_top_k():
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "f": 1}, "q4": {"m": 1}})
    coverages, batch = holes([ranking("A", A), ranking("B", B)], qrels, 3)
    assert coverages[0].ungraded.rows() == [("q1", "c", 3), ("q2", "x", 1), ("q4", "n", 2)]
    assert coverages[1].ungraded.rows() == [("q1", "c", 3), ("q4", "n", 2)]
    assert batch.select("query_id", "doc_id", "rank", "found_in").rows() == [
        ("q1", "c", 3, "A; B"), ("q2", "x", 1, "A"), ("q4", "n", 2, "A; B")]
    assert batch.get_column("query_text").to_list() == ["text of q1", "text of q2",
                                                        "text of q4"]
    assert batch.get_column("grade").null_count() == 3


# The regression check

def runs_from(p_at_1_base, p_at_1_run):
    """qrels and two runs whose P@1 per query are the given 0/1 values."""
    qrels, base, run = {}, {}, {}
    for i, (b, r) in enumerate(zip(p_at_1_base, p_at_1_run, strict=True)):
        q = f"q{i:02d}"
        qrels[q] = {"good": 1, "bad": 0}
        base[q] = {"good": 2.0, "bad": 1.0} if b else {"good": 1.0, "bad": 2.0}
        run[q] = {"good": 2.0, "bad": 1.0} if r else {"good": 1.0, "bad": 2.0}
    return qrels, base, run


def test_a_consistent_drop_is_a_regression_and_a_gain_is_not():
    qrels, base, run = runs_from([1] * 10, [0] * 10)
    result = check_regression(qrels, run, base, "P@1", max_drop=0.01)
    (c,) = result.checks
    assert result.regression and c.delta == -1.0 and c.p_value == 0.0  # no variance: certain
    assert not check_regression(qrels, base, run, "P@1", max_drop=0.01).regression


def test_the_one_sided_test_against_its_formula():
    from scipy import stats

    # 20 queries: the run loses one (1 -> 0) and keeps the others
    qrels, base, run = runs_from([1] * 20, [0] + [1] * 19)
    d = [-1.0] + [0.0] * 19
    n, mean = len(d), sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    for drop in (0.0, 0.02, 0.1):
        t = (mean + drop) / (sd / math.sqrt(n))
        expected = stats.t.cdf(t, n - 1)  # P(T <= t): H1 is "mean below -drop"
        with warnings.catch_warnings():  # 20 queries are too few for these margins: it says so
            warnings.simplefilter("ignore", RankscopeWarning)
            (c,) = check_regression(qrels, run, base, "P@1", max_drop=drop).checks
        assert c.p_value == pytest.approx(expected, rel=1e-10)
        assert c.regression == (expected < 0.05)
    # one lost query of 20 is not a significant drop, at any allowed drop
    assert not check_regression(qrels, run, base, "P@1").regression


def test_a_drop_within_the_allowance_passes_and_beyond_it_fails():
    # 40 queries, the run loses 10 of them: mean drop 0.25
    base_v = [1] * 40
    run_v = [0] * 10 + [1] * 30
    qrels, base, run = runs_from(base_v, run_v)
    assert check_regression(qrels, run, base, "P@1", max_drop=0.0).regression
    assert not check_regression(qrels, run, base, "P@1", max_drop=0.3).regression
    result = check_regression(qrels, run, base, "P@1", max_drop=0.0, test="wilcoxon")
    assert result.regression and result.test == "wilcoxon"


def test_bad_input_is_refused():
    from rankscope.errors import InputError, OptionError

    qrels, base, run = runs_from([1], [0])
    with pytest.raises(InputError, match="two or more queries"):
        check_regression(qrels, run, base, "P@1")
    with pytest.raises(OptionError, match="max_drop must be a number >= 0"):
        check_regression(qrels, run, base, "P@1", max_drop=-0.1)
    with pytest.raises(OptionError, match="alpha must be in"):
        check_regression(qrels, run, base, "P@1", alpha=1.5)


def test_the_interval_of_the_delta_against_its_formula():
    """Student's t interval at 1 - 2 alpha; its upper end decides the t-test's verdict."""
    from scipy import stats

    qrels, base, run = runs_from([1] * 30, [0] * 6 + [1] * 24)
    d = [-1.0] * 6 + [0.0] * 24
    n, mean = len(d), sum(d) / len(d)
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) / math.sqrt(n)
    for alpha in (0.05, 0.1):
        half = stats.t.ppf(1 - alpha, n - 1) * se
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankscopeWarning)
            result = check_regression(qrels, run, base, "P@1", alpha=alpha)
        (c,) = result.checks
        assert result.confidence == pytest.approx(1 - 2 * alpha)
        assert (c.ci_low, c.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-9)
        for drop in (0.0, 0.1, 0.25, 0.5):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RankscopeWarning)
                (c,) = check_regression(qrels, run, base, "P@1", alpha=alpha,
                                        max_drop=drop).checks
            assert c.regression == (c.ci_high < -drop)


def test_too_few_queries_for_the_margin_warns_with_statsmodels_figures():
    """The detectable drop and the queries needed agree with statsmodels' power solver."""
    power = pytest.importorskip("statsmodels.stats.power")
    qrels, base, run = runs_from([1] * 20, [0] + [1] * 19)
    d = [-1.0] + [0.0] * 19
    n, mean = len(d), sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    solver = power.TTestPower()
    effect = solver.solve_power(nobs=n, alpha=0.05, power=0.8, alternative="larger")
    with pytest.warns(RankscopeWarning, match="too few queries to detect the margin") as said:
        (c,) = check_regression(qrels, run, base, "P@1", max_drop=0.02).checks
    assert c.detectable == pytest.approx(0.02 + effect * sd, rel=1e-5)
    needed = math.ceil(solver.solve_power(effect_size=0.02 / sd, alpha=0.05, power=0.8,
                                          alternative="larger"))
    assert f"about {needed} queries would catch a drop of 0.04" in str(said[0].message)
    assert c.warnings == (str(said[0].message),)


def test_enough_queries_for_the_margin_do_not_warn():
    # 400 queries, 4 lost: sd = 0.0995; a drop of 2 x 0.05 is caught with power > 0.8
    qrels, base, run = runs_from([1] * 400, [0] * 4 + [1] * 396)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RankscopeWarning)
        (c,) = check_regression(qrels, run, base, "P@1", max_drop=0.05).checks
    assert c.warnings == () and c.detectable < 0.1


def test_a_signed_rank_test_that_can_never_reject_says_so():
    # 4 queries: the smallest one-sided p-value of the signed-rank test is 2^-4 = 0.0625
    qrels, base, run = runs_from([1] * 4, [0] * 3 + [1])
    with pytest.warns(RankscopeWarning, match=r"cannot reject at alpha 0.05 with 4 queries"):
        result = check_regression(qrels, run, base, "P@1", test="wilcoxon")
    assert not result.regression


def test_junit_xml_one_case_per_metric(tmp_path):
    import xml.etree.ElementTree as ET

    qrels, base, run = runs_from([1] * 10, [0] * 10)
    qrels["q00"]["good"] = 1
    result = check_regression(qrels, run, base, ["P@1", "P@2"], max_drop=0.0)
    root = ET.fromstring(result.to_junit())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["P@1", "P@2"]
    # P@1 drops 1 -> 0 on every query; P@2 stays 0.5 (both documents are in the top 2)
    assert cases[0].find("failure") is not None
    assert cases[1].find("failure") is None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["alpha"] == "0.05" and props["test"] == "t"
    assert "delta -1.0000" in cases[0].find("failure").text
