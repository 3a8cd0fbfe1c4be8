"""Coverage of a run's top k by grades, and the next batch to grade."""

from __future__ import annotations

import pytest

from rankscope.data.tables import Qrels
from rankscope.errors import MetricParameterError, OptionError
from rankscope.judgments import Judgments, coverage

RUN = {
    "q1": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0},
    "q2": {"x": 1.0, "y": 1.0},        # a score tie: trec order is y, x (id descending)
    "q3": {"z": 1.0},
}


def test_coverage_of_qrels_with_null_grades():
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": None, "c": 0}, "q2": {"x": 0}})
    cov = coverage(qrels, RUN, 3)
    # q1 top 3 = a, b, c: a and c graded -> 2/3; q2 = y, x: x graded -> 1/2; q3: 0/1
    assert cov.per_query.rows() == [("q1", 3, 2, pytest.approx(2 / 3)), ("q2", 2, 1, 0.5),
                                    ("q3", 1, 0, 0.0)]
    assert (cov.positions, cov.graded) == (6, 3)
    assert cov.overall == 0.5
    assert cov.mean == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)
    assert cov.ungraded.rows() == [("q1", "b", 2), ("q2", "y", 1), ("q3", "z", 1)]


def test_ties_input_order_changes_the_top_k():
    qrels = Qrels.from_dict({"q2": {"x": 0}})
    assert coverage(qrels, {"q2": RUN["q2"]}, 1).graded == 0             # y first
    assert coverage(qrels, {"q2": RUN["q2"]}, 1, ties="input").graded == 1  # x first


def test_judgments_min_grades_and_strategy(make_judgments):
    j = make_judgments([
        ("q1", "a", "r1", 1), ("q1", "a", "r2", 1), ("q1", "a", "r3", 0),
        ("q1", "b", "r1", 1), ("q1", "b", "r2", 0),
        ("q1", "c", "r1", None),
    ], scale="binary")
    run = {"q1": RUN["q1"]}
    # any grade: a, b graded of a b c d
    assert coverage(j, run, 4).graded == 2
    # at least 3 grades: only a
    assert coverage(j, run, 4, min_grades=3).graded == 1
    # aggregated: b is a tie -> ungraded as in the metrics
    agg = coverage(j, run, 4, strategy="majority")
    assert agg.graded == 1
    assert agg.ungraded.get_column("doc_id").to_list() == ["b", "c", "d"]


def test_write_ungraded_batch_and_read_it_back(tmp_path):
    qrels = Qrels.from_dict({"q1": {"a": 1}})
    cov = coverage(qrels, {"q1": RUN["q1"]}, 3)
    path = tmp_path / "next.csv"
    cov.write_ungraded(path, rater="carol")
    assert path.read_text().splitlines() == [
        "query_id,doc_id,rank,rater,grade", "q1,b,2,carol,", "q1,c,3,carol,"]
    batch = Judgments.read(path, scale="binary")
    assert batch.frame.get_column("grade").null_count() == 2
    with pytest.raises(OptionError, match="TREC"):
        cov.write_ungraded(tmp_path / "next.txt")


def test_bad_k_and_options():
    qrels = Qrels.from_dict({"q1": {"a": 1}})
    with pytest.raises(MetricParameterError):
        coverage(qrels, RUN, 0)
    with pytest.raises(OptionError, match="judgments"):
        coverage(qrels, RUN, 3, min_grades=2)


def test_to_dict():
    cov = coverage(Qrels.from_dict({"q3": {"z": 2}}), {"q3": RUN["q3"]}, 5)
    assert cov.to_dict(ungraded=True) == {
        "k": 5, "positions": 1, "graded": 1, "coverage": 1.0, "mean_query_coverage": 1.0,
        "n_ungraded": 0, "per_query": {"q3": {"positions": 1, "graded": 1, "coverage": 1.0}},
        "ungraded": []}
