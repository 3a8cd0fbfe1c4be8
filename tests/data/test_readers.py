"""Reading and writing qrels and runs in every format, and the errors bad input gets."""

from __future__ import annotations

import gzip
import io
import sys

import polars as pl
import pytest

from rankscope.data.tables import Qrels, Run, as_qrels, as_run
from rankscope.errors import DuplicateDocumentError, FileAccessError, InputError, ParseError

RUN_TEXT = (
    "# a comment line\n"
    "q1 Q0 d1 1 2.5 tagA\n"
    "q1\tQ0\td2\t2\t  1.25\ttagA\n"
    "\n"
    "q2 Q0 d#3 1 -0.5 tagA\n"
)
QRELS_TEXT = "q1 0 d1 2\nq1 0 d2 0\n# judged later\nq2 0 d#3 1\nq2 0 d4 -1\n"


def _write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_trec_run_with_comments_tabs_and_hash_in_docno(tmp_path):
    run = Run.read(_write(tmp_path, "r.txt", RUN_TEXT))
    assert run.name == "tagA"
    assert run.to_dict() == {"q1": {"d1": 2.5, "d2": 1.25}, "q2": {"d#3": -0.5}}


def test_trec_qrels_keeps_negative_and_graded(tmp_path):
    qrels = Qrels.read(_write(tmp_path, "q.txt", QRELS_TEXT))
    assert qrels.to_dict() == {"q1": {"d1": 2.0, "d2": 0.0}, "q2": {"d#3": 1.0, "d4": -1.0}}


def test_gzip_is_transparent(tmp_path):
    path = _write(tmp_path, "r.txt.gz", gzip.compress(RUN_TEXT.encode()), mode="wb")
    assert Run.read(path).to_dict()["q1"] == {"d1": 2.5, "d2": 1.25}


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(QRELS_TEXT.encode())))
    assert Qrels.read("-").to_dict()["q1"] == {"d1": 2.0, "d2": 0.0}


@pytest.mark.parametrize(
    ("text", "line", "fragment", "value"),
    [
        ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 1 t\n", 2, "expected 6 fields", "q1 Q0 d2 1 t"),
        ("# c\nq1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 abc t\n", 3, "score is not a number", "abc"),
        ("q1 Q0 d1 1 inf t\n", 1, "not a finite number", "inf"),
        ("q1 Q0 d1 1 nan t\n", 1, "not a finite number", "nan"),
        ("q1 Q0 d1 1 1.0 t extra\n", 1, "expected 6 fields", None),
    ],
)
def test_malformed_run_lines_name_file_line_value(tmp_path, text, line, fragment, value):
    path = _write(tmp_path, "bad.run", text)
    with pytest.raises(ParseError) as info:
        Run.read(path)
    err = info.value
    assert err.source == str(path) and err.line == line and fragment in str(err)
    if value is not None:
        assert err.value == value
    assert f"{path}, line {line}" in str(err)


def test_malformed_qrels_line(tmp_path):
    path = _write(tmp_path, "bad.qrels", "q1 0 d1 1\nq1 0 d2\n")
    with pytest.raises(ParseError, match=r"line 2: expected 4 fields"):
        Qrels.read(path)


def test_duplicate_document_in_a_ranking(tmp_path):
    path = _write(tmp_path, "dup.run", "# x\nq1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d1 3 1 t\n")
    with pytest.raises(DuplicateDocumentError) as info:
        Run.read(path)
    assert info.value.line == 4 and info.value.value == "d1"
    assert "first at line 2" in str(info.value)
    assert Run.read(path, on_duplicate="first").to_dict() == {"q1": {"d1": 3.0, "d2": 2.0}}
    path2 = _write(tmp_path, "dup2.run", "q1 Q0 d1 1 1 t\nq1 Q0 d1 2 5 t\n")
    assert Run.read(path2, on_duplicate="max").to_dict() == {"q1": {"d1": 5.0}}


def test_duplicate_judgment(tmp_path):
    path = _write(tmp_path, "dup.qrels", "q1 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(DuplicateDocumentError, match="line 2"):
        Qrels.read(path)


def test_missing_directory_and_binary_files(tmp_path):
    with pytest.raises(FileAccessError, match="no such file"):
        Run.read(tmp_path / "nope.txt")
    with pytest.raises(FileAccessError, match="directory"):
        Run.read(tmp_path)
    path = _write(tmp_path, "bin.run", b"\x00\x01\x02PNG\xff", mode="wb")
    with pytest.raises(FileAccessError, match="binary"):
        Run.read(path)


def test_csv_tsv_with_header_aliases(tmp_path):
    csv_path = _write(tmp_path, "q.csv", "qid,docno,relevance\nq1,d1,2\nq1,d2,0\n")
    assert Qrels.read(csv_path).to_dict() == {"q1": {"d1": 2.0, "d2": 0.0}}
    beir = _write(tmp_path, "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert Qrels.read(beir).to_dict() == {"q1": {"d1": 1.0}}
    bad = _write(tmp_path, "bad.csv", "query_id,doc_id,score\nq1,d1,1.5\nq1,d2,high\n")
    with pytest.raises(ParseError) as info:
        Run.read(bad)
    assert info.value.line == 3 and info.value.value == "high"
    nohdr = _write(tmp_path, "nohdr.csv", "a,b,c\nq1,d1,1\n")
    with pytest.raises(InputError, match="no query_id column"):
        Run.read(nohdr)


def test_json_nested_records_and_jsonl(tmp_path):
    nested = _write(tmp_path, "r.json", '{"q1": {"d1": 1.5, "d2": 0.5}}')
    assert Run.read(nested).to_dict() == {"q1": {"d1": 1.5, "d2": 0.5}}
    records = _write(tmp_path, "r2.json", '[{"qid": "q1", "docid": "d1", "score": 3}]')
    assert Run.read(records).to_dict() == {"q1": {"d1": 3.0}}
    jsonl = _write(tmp_path, "r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n{oops\n')
    with pytest.raises(ParseError) as info:
        Run.read(jsonl)
    assert info.value.line == 3


def test_dataframes_and_dicts():
    frame = pl.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    assert as_run(frame).to_dict() == {"q1": {"a": 1.0, "b": 2.0}}
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "grade": [1, 0]})
    assert as_qrels(pdf).to_dict() == {"1": {"a": 1.0, "b": 0.0}}
    with pytest.raises(ParseError, match="not a number"):
        as_run({"q": {"d": "high"}})
    with pytest.raises(ParseError, match="not a finite number"):
        as_run({"q": {"d": float("inf")}})
    with pytest.raises(InputError):
        as_run(42)


@pytest.mark.parametrize("ext", ["txt", "json", "jsonl", "csv", "tsv", "parquet", "txt.gz"])
def test_round_trip_every_format(tmp_path, ext):
    run = Run.from_dict({"q1": {"d1": 2.5, "d2": 1e-7}, "q10": {"x y": 0.1 + 0.2}}, name="r1")
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0.5}, "q10": {"z": -1}})
    if ext.startswith("txt"):  # TREC ids cannot hold spaces
        run = Run.from_dict({"q1": {"d1": 2.5, "d2": 1e-7}, "q10": {"xy": 0.1 + 0.2}}, name="r1")
    run.write(tmp_path / f"r.{ext}")
    qrels.write(tmp_path / f"q.{ext}")
    assert Run.read(tmp_path / f"r.{ext}").to_dict() == run.to_dict()
    assert Qrels.read(tmp_path / f"q.{ext}").to_dict() == qrels.to_dict()
