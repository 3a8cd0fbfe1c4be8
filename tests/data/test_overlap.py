"""The overlap rule (rankscope.data.overlap) and what every entry point does with it."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import rankscope
from rankscope.data.overlap import check_overlap, check_query_sets
from rankscope.errors import InputError, NoOverlapError, RankscopeWarning
from rankscope.judgments import Judgments, evaluate_judgments

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}


def test_no_shared_query_is_an_error_naming_both_sides() -> None:
    with pytest.raises(NoOverlapError) as info:
        check_query_sets("run.txt", ["Q1", "Q2", "Q3", "Q4"], "qrels.txt", ["q1", "q2"])
    assert str(info.value) == (
        "no query of run.txt (4 queries: Q1, Q2, Q3, ...) is in qrels.txt (2 queries: q1, q2) "
        "(the ids differ only in upper/lower case); allow_no_overlap=True to go on anyway")
    # the hint in the reader's spelling: Python's keyword here, the option on the command line
    from rankscope.errors import command_line_spelling

    with command_line_spelling(), pytest.raises(NoOverlapError) as info:
        check_query_sets("run.txt", ["Q1"], "qrels.txt", ["q1"])
    assert str(info.value).endswith("; --allow-no-overlap to go on anyway")
    assert isinstance(info.value, InputError)  # exit code 2 on the command line


@pytest.mark.parametrize(("a", "b", "cause"), [
    (["1.0", "2.0"], ["1", "2"], "look like floats"),
    (["7"], ["7.00"], "look like floats"),
    ([" q1"], ["q1"], "surrounding spaces"),
    (["x"], ["y"], None),
])
def test_the_likely_cause_is_named(a: list[str], b: list[str], cause: str | None) -> None:
    with pytest.raises(NoOverlapError) as info:
        check_query_sets("a", a, "b", b)
    if cause is None:
        assert ") (" not in str(info.value)
    else:
        assert cause in str(info.value)


def test_allowed_no_overlap_and_partial_overlap_warn_with_counts() -> None:
    with pytest.warns(RankscopeWarning, match=r"^no query of r \(1 query: x\) is in q "):
        assert check_query_sets("r", ["x"], "q", ["y"], allow=True) == 0
    with pytest.warns(RankscopeWarning) as record:
        assert check_query_sets("r", ["a", "b", "x"], "q", ["a", "b", "y", "z"]) == 2
    assert str(record[0].message) == (
        "2 of the 3 queries of r are in q (4 queries); 1 only in r (x); 2 only in q (y, z)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_query_sets("r", ["a"], "q", ["a"]) == 1  # the same queries: silence
        assert check_overlap("r", 0, [], "q", 0, [], allow=True, warn=False) == 0


def test_evaluate_refuses_then_allows() -> None:
    run = {"Q1": {"a": 1.0}, "Q2": {"c": 1.0}}
    with pytest.raises(NoOverlapError, match=r"no query of run 'run' \(2 queries: Q1, Q2\) "
                                             r"is in the qrels \(2 queries: q1, q2\)"):
        rankscope.evaluate(QRELS, run, "P@1")
    with pytest.warns(RankscopeWarning, match="no query of"):
        result = rankscope.evaluate(QRELS, run, "P@1", allow_no_overlap=True)
    assert result["P@1"] == 0.0 and result.n_queries == {"P@1": 2}


def test_empty_run_and_empty_qrels_are_refused() -> None:
    empty_run = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                     "score": pl.Float64})
    with pytest.raises(NoOverlapError, match=r"no query of run 'run' \(no queries\)"):
        rankscope.evaluate(QRELS, empty_run, "P@1")
    with pytest.raises(NoOverlapError, match=r"is in the qrels \(no queries\)"):
        rankscope.evaluate({}, {"q1": {"a": 1.0}}, "P@1")


def test_the_judgments_path_and_compare_apply_the_rule() -> None:
    j = Judgments(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "a"],
                                "rater": ["x", "y"], "grade": [1.0, 1.0]}), scale="binary")
    with pytest.raises(NoOverlapError, match=r"is in the judgments \(1 query: q1\)"):
        evaluate_judgments(j, {"Q1": {"a": 1.0}}, "P@1")
    with pytest.raises(NoOverlapError, match=r"no query of run 'b'"), \
            pytest.warns(RankscopeWarning, match=r"of run 'a' are in the qrels"):
        rankscope.compare(QRELS, {"a": {"q1": {"a": 1.0}}, "b": {"Q1": {"a": 1.0}}}, "P@1")


def test_pandas_float_ids_are_read_as_integers_with_a_warning() -> None:
    pd = pytest.importorskip("pandas")
    # pandas makes an integer column with a missing value float: 1.0, 2.0, NaN
    frame = pd.DataFrame({"query_id": [1, 2, None], "doc_id": ["a", "c", "x"],
                          "grade": [1, 1, 0]}).dropna()
    assert frame["query_id"].dtype == "float64"
    with pytest.warns(RankscopeWarning, match=r"column 'query_id' holds whole numbers as floats "
                                              r"\(e.g. 1.0\); read as integers \(1\)"):
        result = rankscope.evaluate(frame, {"1": {"a": 1.0}, "2": {"c": 1.0}}, "P@1")
    assert result["P@1"] == 1.0  # both queries matched: the ids are "1" and "2"


def test_fractional_float_ids_stay_as_written() -> None:
    frame = pl.DataFrame({"query_id": [1.5], "doc_id": ["a"], "score": [1.0]})
    run = rankscope.Run(frame.with_columns(pl.col("query_id").cast(pl.String)))
    assert run.query_ids == ["1.5"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = rankscope.evaluate({"1.5": {"a": 1}}, frame, "P@1")
    assert result["P@1"] == 1.0
