"""Reading click logs: the plain format and UBI 1.x queries and events, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from rankscope.errors import FileAccessError, InputError, OptionError, ParseError
from rankscope.judgments.clicks import ClickLog, read_click_log, read_ubi


def _rows(log: ClickLog) -> list[tuple]:
    return sorted(log.frame.rows())


def test_plain_csv_with_aliases_and_purchases(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text("session,qid,docno,rank,click,purchased\n"
                    "s1,q1,d1,1,1,0\ns1,q1,d2,2,0,0\ns2,q1,d2,1,true,1\n")
    log = read_click_log(path)
    assert _rows(log) == [("s1", "q1", "d1", 1, 1, 0), ("s1", "q1", "d2", 2, 0, 0),
                          ("s2", "q1", "d2", 1, 1, 1)]
    assert log.n_pages == 2 and log.n_queries == 1 and len(log) == 3


def test_plain_jsonl_json_and_parquet_read_alike(tmp_path: Path):
    records = [{"session_id": "s1", "query_id": 7, "doc_id": "d1", "position": 1,
                "clicked": 1}, {"session_id": "s1", "query_id": 7, "doc_id": "d2",
                                "position": 2, "clicked": False}]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (tmp_path / "log.json").write_text(json.dumps(records))
    pl.DataFrame({"session_id": ["s1", "s1"], "query_id": [7, 7], "doc_id": ["d1", "d2"],
                  "position": [1, 2], "clicked": [1, 0]}).write_parquet(tmp_path / "log.parquet")
    expected = [("s1", "7", "d1", 1, 1, 0), ("s1", "7", "d2", 2, 0, 0)]
    for name in ("log.jsonl", "log.json", "log.parquet"):
        assert _rows(read_click_log(tmp_path / name)) == expected, name


@pytest.mark.parametrize(("body", "message", "line", "value"), [
    ("s1,q,d1,x,0\n", "position is not a whole number", 2, "x"),
    ("s1,q,d1,1.5,0\n", "position is not a whole number", 2, "1.5"),
    ("s1,q,d1,1,0\ns1,q,d2,2,2\n", "clicked must be 0 or 1", 3, "2"),
    ("s1,q,d1,0,0\n", "position must be 1 or more", 2, "0"),
    ("s1,q,d1,1,0\ns1,q,d2,1,1\n", "position 1 listed twice", 3, None),
    ("s1,q,d1,1,0\ns1,q,d1,2,1\n", "document 'd1' listed twice", 3, None),
    ("s1,q,,1,0\n", "empty doc_id", 2, None),
    ("s1,q,d1,1\n", "too few fields", 2, "s1,q,d1,1"),
])
def test_plain_log_errors_name_file_line_and_value(tmp_path: Path, body, message, line, value):
    path = tmp_path / "clicks.csv"
    path.write_text("session_id,query_id,doc_id,position,clicked\n" + body)
    with pytest.raises(ParseError, match=message) as info:
        read_click_log(path)
    assert info.value.source == str(path) and info.value.line == line
    assert info.value.value == value


def test_a_log_without_a_needed_column_says_which(tmp_path: Path):
    path = tmp_path / "clicks.csv"
    path.write_text("session_id,query_id,doc_id,clicked\ns,q,d,1\n")
    with pytest.raises(InputError, match="no position column among session_id, query_id"):
        read_click_log(path)
    with pytest.raises(FileAccessError, match="no such file"):
        read_click_log(tmp_path / "missing.csv")


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _event(action: str, qid: str | None, obj: str | None, ordinal: int | None = None,
           **extra) -> dict:
    attributes: dict = {}
    if obj is not None:
        attributes["object"] = {"object_id": obj, "object_id_field": "sku"}
    if ordinal is not None:
        attributes["position"] = {"ordinal": ordinal}
    event = {"application": "shop", "action_name": action, "client_id": "c1",
             "timestamp": "2024-05-01T10:00:00Z", "event_attributes": attributes, **extra}
    if qid is not None:
        event["query_id"] = qid
    return event


@pytest.fixture
def ubi(tmp_path: Path) -> tuple[Path, Path]:
    # Three searches for two texts ("red  shoes" and "red shoes" are one query once the
    # spaces are collapsed); u3 showed nothing anyone clicked.
    queries = _jsonl(tmp_path / "ubi_queries.jsonl", [
        {"query_id": "u1", "user_query": "red shoes", "object_id_field": "sku",
         "query_response_hit_ids": ["A", "B", "C"], "timestamp": "2024-05-01T10:00:00Z"},
        {"query_id": "u2", "user_query": "red  shoes", "object_id_field": "sku",
         "query_response_hit_ids": ["B", "A"]},
        {"query_id": "u3", "user_query": "boots", "query_response_hit_ids": ["X", 12]},
    ])
    events = _jsonl(tmp_path / "ubi_events.jsonl", [
        _event("click", "u1", "B", 2, session_id="s1"),
        _event("add_to_cart", "u1", "B", 2),
        _event("purchase", "u1", "B", 2),
        _event("click", "u2", "A", 1),                     # ordinal 1, but A is second in u2
        _event("click", "u2", "Z", 3),                     # not among u2's hits
        _event("click", None, "A", 1),                     # no search
        _event("click", "u1", None, 1),                    # no object
        _event("hover", "u1", "A", 1),
    ])
    return queries, events


def test_ubi_queries_and_events_make_pages(ubi):
    queries, events = ubi
    log = read_ubi(events, queries)
    assert _rows(log) == [
        ("u1", "red shoes", "A", 1, 0, 0), ("u1", "red shoes", "B", 2, 1, 1),
        ("u1", "red shoes", "C", 3, 0, 0), ("u2", "red shoes", "A", 2, 1, 0),
        ("u2", "red shoes", "B", 1, 0, 0), ("u3", "boots", "12", 2, 0, 0),
        ("u3", "boots", "X", 1, 0, 0)]
    notes = " | ".join(log.notes)
    for expected in ("1 click/purchase/impression events without a query_id",
                     "1 events without event_attributes.object.object_id",
                     "1 clicks/purchases on objects not among the search's results",
                     "1 clicks/purchases whose ordinal differs",
                     "add_to_cart (1)", "hover (1)"):
        assert expected in notes, notes


def test_ubi_actions_are_configurable(ubi):
    queries, events = ubi
    log = read_ubi(events, queries, click_actions=["add_to_cart"], purchase_actions=[])
    clicked = log.frame.filter(pl.col("clicked") == 1).select("session_id", "doc_id").rows()
    assert clicked == [("u1", "B")]
    with pytest.raises(OptionError, match="named as a purchase and a click"):
        read_ubi(events, queries, click_actions=["buy"], purchase_actions=["buy"])


def test_ubi_text_mapping_to_query_ids(ubi):
    queries, events = ubi
    log = read_ubi(events, queries, query_ids={"red shoes": "q7"})
    assert set(log.frame.get_column("query_id")) == {"q7"}
    assert any("1 searches of 1 query texts not in the query set" in n for n in log.notes)


def test_ubi_events_alone_use_impressions_and_their_text(tmp_path: Path):
    # OpenSearch's exports: documents under _source, bulk action lines between them
    lines = []
    for event in (_event("impression", "u1", "A", 0, user_query="tent"),
                  _event("impression", "u1", "B", 1, user_query="tent"),
                  _event("click", "u1", "B", 1, user_query="tent"),
                  _event("click", "u1", "C", 2, user_query="tent")):
        lines += [{"index": {"_index": "ubi_events"}}, {"_source": event}]
    events = _jsonl(tmp_path / "events.jsonl", lines)
    log = read_ubi(events, ordinal_base=0)
    # C was clicked at ordinal 2 without an impression event: clicked, so shown there
    assert _rows(log) == [("u1", "tent", "A", 1, 0, 0), ("u1", "tent", "B", 2, 1, 0),
                          ("u1", "tent", "C", 3, 1, 0)]
    with pytest.raises(ParseError, match=r"ordinal below 1 .*ordinal base 0") as info:
        read_ubi(events)
    assert info.value.line == 2 and info.value.source == str(events)


@pytest.mark.parametrize(("records", "kind", "message", "line"), [
    ([{"query_id": "u1", "user_query": "a"}, {"query_id": "u1", "user_query": "b"}],
     "queries", "query_id 'u1' given twice .first at line 1.", 2),
    ([{"user_query": "a"}], "queries", "a UBI query without a query_id", 1),
    ([{"query_id": "u1", "user_query": "a", "query_response_hit_ids": "A,B"}], "queries",
     "query_response_hit_ids must be a list", 1),
    ([{"query_id": "u1", "user_query": "a", "query_response_hit_ids": ["A", "A"]}], "queries",
     "lists 'A' twice", 1),
    ([{"query_id": "u1", "user_query": 5}], "queries", "user_query must be text", 1),
    ([_event("click", "u1", "A", 1), {"query_id": "u1"}], "events",
     "a UBI event without an action_name", 2),
    ([_event("click", "u1", "A", 1), _event("click", "u1", "A")], "events", None, None),
    (["not an object"], "events", "expected a JSON object", 1),
])
def test_ubi_errors_name_file_and_line(tmp_path: Path, records, kind, message, line):
    path = _jsonl(tmp_path / f"{kind}.jsonl", records)
    good_queries = _jsonl(tmp_path / "q.jsonl", [{"query_id": "u1", "user_query": "a",
                                                  "query_response_hit_ids": ["A"]}])
    args = (None, path) if kind == "queries" else (path, good_queries)
    if message is None:  # a click without ordinal is fine: hit ids place it
        assert _rows(read_ubi(*args)) == [("u1", "a", "A", 1, 1, 0)]
        return
    with pytest.raises(ParseError, match=message) as info:
        read_ubi(*args)
    assert info.value.source == str(path) and info.value.line == line


def test_ubi_object_id_field_mismatch_is_an_error(tmp_path: Path):
    queries = _jsonl(tmp_path / "q.jsonl", [{"query_id": "u1", "user_query": "a",
                                             "object_id_field": "_id",
                                             "query_response_hit_ids": ["A"]}])
    events = _jsonl(tmp_path / "e.jsonl", [_event("click", "u1", "A", 1)])
    with pytest.raises(ParseError, match="names its object by 'sku' but search 'u1' lists "
                                         "its results by '_id'") as info:
        read_ubi(events, queries)
    assert info.value.line == 1


def test_ubi_two_documents_at_one_position_is_an_error(tmp_path: Path):
    events = _jsonl(tmp_path / "e.jsonl", [
        _event("impression", "u1", "A", 1, user_query="a"),
        _event("impression", "u1", "B", 1, user_query="a")])
    with pytest.raises(ParseError, match="shows 'A' and 'B' at position 1") as info:
        read_ubi(events)
    assert info.value.line == 2


def test_a_ubi_log_that_builds_nothing_says_why(tmp_path: Path):
    events = _jsonl(tmp_path / "e.jsonl", [_event("click", "u1", "A", 1)])
    with pytest.raises(InputError, match=r"no result page could be built .*without a user_query"):
        read_ubi(events)
