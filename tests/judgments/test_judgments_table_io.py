"""The Judgments table: readers and writers, scales, duplicates, and the errors bad input gets."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from rankscope.data.tables import Qrels
from rankscope.errors import (
    DuplicateDocumentError,
    InputError,
    OptionError,
    ParseError,
    ScaleError,
)
from rankscope.judgments import BINARY, DETAIL, GRADED, TREC, Judgments, Scale, get_scale
from rankscope.judgments.io import has_rater_column
from rankscope.judgments.table import as_judgments

CSV = (
    "query_id,doc_id,rater,grade\n"
    "q1,d1,ann,3\n"
    "q1,d1,bob,2\n"
    "# a comment\n"
    "q1,d2,ann,\n"
    "q2,d9,bob,0\n"
)


def _rows(j: Judgments) -> list[tuple]:
    return sorted(j.frame.select("query_id", "doc_id", "rater", "grade").iter_rows(),
                  key=lambda r: (r[0], r[1], r[2]))


EXPECTED = [
    ("q1", "d1", "ann", 3.0),
    ("q1", "d1", "bob", 2.0),
    ("q1", "d2", "ann", None),
    ("q2", "d9", "bob", 0.0),
]


# -- scales -------------------------------------------------------------------


def test_builtin_scales():
    assert (BINARY.min, BINARY.max, BINARY.values) == (0, 1, (0.0, 1.0))
    assert GRADED.values == (0.0, 1.0, 2.0, 3.0)
    assert TREC.values == (0.0, 1.0, 2.0, 3.0, 4.0)
    assert DETAIL.values == tuple(float(v) for v in range(1, 11))
    assert BINARY.default_strategy == "majority"
    assert GRADED.default_strategy == DETAIL.default_strategy == "mean"
    assert get_scale("Graded") is GRADED


@pytest.mark.parametrize("spec", ["1-5", "1..5", "1:5"])
def test_custom_scale_from_text(spec):
    scale = get_scale(spec)
    assert (scale.min, scale.max, scale.integer) == (1, 5, True)
    assert scale.values == (1.0, 2.0, 3.0, 4.0, 5.0)


def test_custom_scale_with_labels_and_bad_scales():
    stars = Scale("stars", 1, 3, labels=((1, "bad"), (3, "great")))
    assert stars.label_map() == {"bad": 1.0, "great": 3.0}
    with pytest.raises(OptionError, match="min < max"):
        Scale("x", 3, 1)
    with pytest.raises(OptionError, match="outside"):
        Scale("x", 0, 1, labels=((2, "two"),))
    with pytest.raises(OptionError, match="unknown scale"):
        get_scale("huge")


def test_grade_outside_scale_names_file_and_line(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("query_id,doc_id,rater,grade\nq1,d1,ann,1\n# note\nq1,d2,ann,4\n")
    with pytest.raises(ScaleError) as info:
        Judgments.read(path, scale="graded")
    err = info.value
    assert (err.source, err.line, err.value) == (str(path), 4, "4")
    assert "graded (0-3)" in str(err)


def test_fractional_grade_is_outside_an_integer_scale(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("qid\tdocid\tannotator\trating\nq\td\ta\t2.5\n")
    with pytest.raises(ScaleError) as info:
        Judgments.read(path, scale="detail")
    assert info.value.line == 2
    assert Judgments.read(path, scale=Scale("c", 0, 3, integer=False)).frame["grade"][0] == 2.5


def test_with_scale_checks_later_with_original_line(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("query_id,doc_id,rater,grade\nq,a,x,1\nq,b,x,7\n")
    j = Judgments.read(path)  # no scale: anything numeric goes
    with pytest.raises(ScaleError) as info:
        j.with_scale("binary")
    assert (info.value.source, info.value.line) == (str(path), 3)


# -- readers ------------------------------------------------------------------


def test_read_csv_with_empty_grade_as_null(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(CSV)
    j = Judgments.read(path, scale="graded")
    assert _rows(j) == EXPECTED
    assert j.raters == ["ann", "bob"]
    assert (j.n_queries, j.n_items, len(j)) == (2, 3, 4)
    assert j.scale is GRADED


def test_read_tsv_jsonl_json_parquet_round_trip(tmp_path):
    src = tmp_path / "g.csv"
    src.write_text(CSV)
    j = Judgments.read(src)
    for name in ("g.tsv", "g.jsonl", "g.json", "g.parquet"):
        out = tmp_path / name
        j.write(out)
        assert _rows(Judgments.read(out)) == EXPECTED, name


def test_read_jsonl_with_labels_and_aliases(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        '{"qid": "q1", "docno": "d1", "annotator": "ann", "label": "Relevant"}\n'
        "\n"
        '{"qid": "q1", "docno": "d2", "annotator": "ann", "label": 0}\n'
        '{"qid": "q1", "docno": "d3", "annotator": "ann", "label": null}\n'
        '{"qid": "q1", "docno": "d4", "annotator": "ann", "label": "maybe"}\n'
    )
    with pytest.raises(ParseError) as info:
        Judgments.read(path, scale="binary")
    assert info.value.line == 5 and info.value.value == "maybe"
    path.write_text("\n".join(path.read_text().splitlines()[:4]) + "\n")
    j = Judgments.read(path, scale="binary")
    assert _rows(j) == [("q1", "d1", "ann", 1.0), ("q1", "d2", "ann", 0.0),
                        ("q1", "d3", "ann", None)]


def test_trec_qrels_file_is_one_rater(tmp_path):
    path = tmp_path / "alice.qrels"
    path.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    j = Judgments.read(path, scale="trec")
    assert _rows(j) == [("q1", "d1", "alice", 2.0), ("q1", "d2", "alice", 0.0)]
    assert Judgments.read(path, rater="Alice").raters == ["Alice"]
    assert not has_rater_column(path)


def test_csv_without_rater_column_is_one_rater(tmp_path):
    path = tmp_path / "bob.csv"
    path.write_text("query_id,doc_id,grade\nq,d,1\n")
    assert Judgments.read(path).raters == ["bob"]
    assert not has_rater_column(path)
    path2 = tmp_path / "many.csv"
    path2.write_text("query_id,doc_id,rater,grade\nq,d,x,1\n")
    assert has_rater_column(path2)


def test_from_qrels_pandas_and_polars():
    qrels = Qrels.from_dict({"q": {"a": 1, "b": None}})
    j = Judgments.from_qrels(qrels, rater="trec")
    assert _rows(j) == [("q", "a", "trec", 1.0), ("q", "b", "trec", None)]
    frame = pl.DataFrame({"query": ["q"], "doc": ["a"], "user": ["u"], "rating": [2]})
    assert _rows(as_judgments(frame)) == [("q", "a", "u", 2.0)]
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rater": ["u", "u"],
                        "grade": [1.0, float("nan")]})
    assert _rows(as_judgments(pdf, scale="binary")) == [("q", "a", "u", 1.0),
                                                         ("q", "b", "u", None)]
    assert list(j.to_pandas().columns) == ["query_id", "doc_id", "rater", "grade"]


def test_missing_columns_and_non_numeric_grades(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("query_id,rater,grade\nq,x,1\n")
    with pytest.raises(InputError, match="no doc_id column"):
        Judgments.read(path)
    path.write_text("query_id,doc_id,rater,grade\nq,d,x,1\nq,e,x,high\n")
    with pytest.raises(ParseError) as info:
        Judgments.read(path)
    assert (info.value.line, info.value.value) == (3, "high")
    path.write_text("query_id,doc_id,rater,grade\nq,d,x,inf\n")
    with pytest.raises(ParseError, match="finite"):
        Judgments.read(path)


def test_time_column_numbers_and_iso_dates(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("query_id,doc_id,rater,grade,timestamp\nq,d,x,1,17\nq,d,y,0,\n")
    j = Judgments.read(path)
    assert j.has_time and j.frame["time"].to_list() == [17.0, None]
    path.write_text("query_id,doc_id,rater,grade,time\nq,d,x,1,2024-05-01T10:00:00\n")
    assert Judgments.read(path).frame["time"][0] == dt.datetime(2024, 5, 1, 10)
    path.write_text("query_id,doc_id,rater,grade,time\nq,d,x,1,yesterday\n")
    with pytest.raises(ParseError) as info:
        Judgments.read(path)
    assert (info.value.line, info.value.value) == (2, "yesterday")


# -- duplicates -----------------------------------------------------------------


DUP = (
    "query_id,doc_id,rater,grade,time\n"
    "q,d,x,1,5\n"
    "q,d,y,0,1\n"
    "q,d,x,0,9\n"
    "q,d,x,1,2\n"
)


def test_duplicate_grade_is_an_error_naming_both_lines(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(DUP)
    with pytest.raises(DuplicateDocumentError) as info:
        Judgments.read(path)
    assert info.value.line == 4 and "first at line 2" in str(info.value)


@pytest.mark.parametrize(("policy", "kept"), [("first", 1.0), ("last", 1.0), ("latest", 0.0)])
def test_duplicate_policies(tmp_path, policy, kept):
    # x graded d three times: 1 (time 5), 0 (time 9), 1 (time 2). first = line 2 (1),
    # last = line 5 (1), latest = time 9 (0).
    path = tmp_path / "g.csv"
    path.write_text(DUP)
    j = Judgments.read(path, on_duplicate=policy)
    grades = dict(j.frame.select("rater", "grade").iter_rows())
    assert grades == {"x": kept, "y": 0.0}
    assert len(j) == 2


def test_concat_raters_and_lines_survive(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("q 0 d1 1\nq 0 d2 0\n")
    b.write_text("q 0 d1 1\nq 0 d2 3\n")
    both = Judgments.concat([Judgments.read(a), Judgments.read(b)])
    assert both.raters == ["a", "b"]
    with pytest.raises(ScaleError) as info:
        both.with_scale("binary")
    assert (info.value.source, info.value.line) == (str(b), 2)
    with pytest.raises(OptionError, match="different scales"):
        Judgments.concat([Judgments.read(a, scale="binary"), Judgments.read(b, scale="graded")])


def test_write_trec_refuses_several_raters(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(CSV)
    with pytest.raises(OptionError, match="one rater"):
        Judgments.read(path).write(tmp_path / "out.txt")
