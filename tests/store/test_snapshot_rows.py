"""Answers written by ``record_answers`` (PostgreSQL: ``COPY``; SQLite: many-row inserts).

The reference is SQLAlchemy's ORM writing the same rows (``SnapshotQuery`` and
``SnapshotHit`` objects), the way every other write of the store goes: what
``record_answers`` stores must be exactly that, column by column, as the
database holds it (its text), on both backends; and what is read back is what
was given. Values no backend can store are refused before anything is
written, with the same error on both.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

sa = pytest.importorskip("sqlalchemy")

from rankscope.errors import InputError  # noqa: E402
from rankscope.search.types import Hit, QueryItem  # noqa: E402
from rankscope.store import snapshot_writes  # noqa: E402
from rankscope.store.db import open_store  # noqa: E402
from rankscope.store.models import (  # noqa: E402
    Query,
    QuerySet,
    Snapshot,
    SnapshotHit,
    SnapshotQuery,
    utcnow,
)
from rankscope.store.snapshot_writes import record_answers, start_snapshot  # noqa: E402
from rankscope.store.snapshots import Answer, find_snapshot  # noqa: E402

LONG_ID = "id-" + "x" * 100_000
HOSTILE = [
    # quotes, tabs, newlines, CR, backslashes and COPY's own markers (\N is NULL, \. the end)
    Hit("it's \"quoted\"", 1.5, "a\ttab", "line 1\nline 2\r\nline 3", "https://x.test/a?b=1&c='2'",
        None, {"k\t'\"": "v\\n", "nested": {"list": [1, "two\n", None, True]}}),
    Hit("\\N", -0.0, "\\N", "\\.", "back\\slash\\", "C:\\img.png", {"\\N": "\\."}),
    Hit("\\", 1e308, "ünïcödé 😀 עברית ç̧", "\u200b\ufeff", None, None,
        {"ü😀": "עברית", "big": 2**70, "float": 0.1, "tiny": 5e-324}),
    Hit(LONG_ID, -1e308, None, None, None, None, {}),
    Hit("d-null", None, None, None, None, None, {}, None),
    Hit("d-inf", math.inf, "", "", "", "", {"empty": ""},
        {"value": 1.0, "description": "weight(\"x\"\t\\)", "details": []}),
    Hit("d-ninf", -math.inf, " ", "\x01\x7f", None, None, {}, "explained as text"),
    Hit("d-tiny", 5e-324, None, None, None, None, {}, 0),
]


def _start(store: Any, name: str) -> tuple[int, dict[str, int]]:
    return start_snapshot(
        store, name=name, endpoint_name="ep", kind="embedded", config={}, config_hash="a" * 64,
        query_set_name="qs", query_set_source=None,
        queries=[QueryItem("q1", "one"), QueryItem("q'\t2", "two")], depth=10,
        engine_version=None)


def _answers(rows: dict[str, int]) -> list[Answer]:
    return [
        Answer(query_row_id=rows["q1"], request={"method": "POST", "body": {"q": "it's\t\\"}},
               latency_ms=12.25, raw_sha256="f" * 64, raw=b"\x00\\N\n\t'raw", total_hits=2**62,
               hits=HOSTILE, partial="shard 1 of 2\tfailed", short=None, duplicates=1,
               pages=2, retried=("HTTP 503", "HTTP 503", "timeout")),
        Answer(query_row_id=rows["q'\t2"], request={"method": "GET", "params": {"q": "\\N"}},
               latency_ms=-0.0, raw_sha256="e" * 64, raw=None, total_hits=None, hits=[]),
    ]


def _orm_write(store: Any, snapshot_id: int, answers: list[Answer]) -> None:
    """The same answers as ORM objects: the reference."""
    def work(session: Any) -> None:
        now = utcnow()
        for a in answers:
            query = SnapshotQuery(
                snapshot_id=snapshot_id, query_row_id=a.query_row_id, status="ok",
                request=dict(a.request), latency_ms=a.latency_ms, raw_sha256=a.raw_sha256,
                raw=a.raw, total_hits=a.total_hits, n_hits=len(a.hits), error=None,
                created_at=now, partial=a.partial, short=a.short, duplicates=a.duplicates,
                pages=a.pages, retries=len(a.retried), retry_reasons=a.retry_reasons())
            session.add(query)
            session.flush()
            for rank, h in enumerate(a.hits, start=1):
                session.add(SnapshotHit(
                    snapshot_query_id=query.id, rank=rank, doc_id=h.doc_id, score=h.score,
                    title=h.title, snippet=h.snippet, url=h.url, image=h.image,
                    fields=dict(h.fields), explanation=h.explanation))
    store.write(work)


def _as_stored(store: Any, snapshot_id: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every column but ids and times, as values and as the database's text of them."""
    q, h = SnapshotQuery.__table__, SnapshotHit.__table__
    text = sa.Text

    def both(col: Any) -> list[Any]:
        return [col, sa.cast(col, text), col.is_(None)]

    query_cols = [c for c in q.c if c.name not in ("id", "snapshot_id", "created_at")]
    hit_cols = [c for c in h.c if c.name not in ("id", "snapshot_query_id")]
    with store.read() as session:
        queries = session.execute(
            sa.select(*[x for c in query_cols for x in both(c)])
            .where(q.c.snapshot_id == snapshot_id).order_by(q.c.query_row_id)).all()
        hits = session.execute(
            sa.select(q.c.query_row_id, *[x for c in hit_cols for x in both(c)])
            .join(q, q.c.id == h.c.snapshot_query_id)
            .where(q.c.snapshot_id == snapshot_id).order_by(q.c.query_row_id, h.c.rank)).all()
    return [tuple(r) for r in queries], [tuple(r) for r in hits]


def _same(a: Any, b: Any) -> bool:
    """Equal, -0.0 told from 0.0 (the sign of a zero is kept)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("driver_copies", [True, False], ids=["copy", "insert"])
def test_hostile_answers_are_stored_as_the_orm_stores_them(db_url, driver_copies, monkeypatch):
    if not driver_copies:  # PostgreSQL through another driver than psycopg 3: the insert
        monkeypatch.setattr(snapshot_writes, "_copies", lambda connection: False)
    store = open_store(db_url)
    try:
        sid, rows = _start(store, "written")
        ref, ref_rows = _start(store, "reference")
        assert ref_rows == rows
        record_answers(store, sid, _answers(rows))
        _orm_write(store, ref, _answers(rows))
        got, expected = _as_stored(store, sid), _as_stored(store, ref)
        assert len(got[0]) == 2 and len(got[1]) == len(HOSTILE)
        for mine, theirs in zip(got[0] + got[1], expected[0] + expected[1], strict=True):
            assert _same(mine, theirs), (mine, theirs)
        # and what is read back is what was given (independently of either writer)
        hit_names = [c.name for c in SnapshotHit.__table__.c
                     if c.name not in ("id", "snapshot_query_id")]
        for hit, row in zip(HOSTILE, got[1], strict=True):
            value = dict(zip(hit_names, row[1::3], strict=True))
            assert value["doc_id"] == hit.doc_id and value["title"] == hit.title
            assert (value["snippet"], value["url"], value["image"]) == (hit.snippet, hit.url,
                                                                       hit.image)
            # equal; PostgreSQL keeps the sign of -0.0, SQLite stores it as 0.0 (its REAL
            # does, whoever writes: the ORM reference above does the same)
            assert value["score"] == hit.score or (value["score"] is None is hit.score)
            if store.dialect == "postgresql" and hit.score is not None:
                assert _same(value["score"], hit.score)
            assert value["fields"] == hit.fields and value["explanation"] == hit.explanation
        assert got[1][3][1 + 3 * hit_names.index("doc_id")] == LONG_ID
        info = find_snapshot(store, str(sid))
        assert (info.n_done, info.n_hits) == (2, len(HOSTILE))
    finally:
        store.close()


UNSTORABLE = ("a text holding a NUL character, or a whole number outside 64 bits, "
              "cannot be stored")


@pytest.mark.parametrize(("hit", "total_hits", "request_", "where"), [
    (Hit("d\x00"), 1, {}, "hit 2, doc_id"),
    (Hit("d", title="t\x00"), 1, {}, "hit 2, title"),
    (Hit("d", snippet="\x00"), 1, {}, "hit 2, snippet"),
    (Hit("d", fields={"a": ["ok", "n\x00"]}), 1, {}, "hit 2, fields"),
    (Hit("d", fields={"k\x00": 1}), 1, {}, "hit 2, fields"),
    (Hit("d", explanation={"description": "\x00"}), 1, {}, "hit 2, explanation"),
    (Hit("d", score=2**64), 1, {}, "hit 2, score"),  # type: ignore[arg-type]
    (Hit("d"), 2**63, {}, "total_hits"),
    (Hit("d"), -(2**63) - 1, {}, "total_hits"),
    (Hit("d"), 1, {"body": {"q": "\x00"}}, "request"),
], ids=["doc_id", "title", "snippet", "fields-value", "fields-key", "explanation", "score-int",
        "total_hits-high", "total_hits-low", "request"])
def test_unstorable_values_are_refused_alike_and_nothing_is_written(db_url, hit, total_hits,
                                                                    request_, where):
    store = open_store(db_url)
    try:
        sid, rows = _start(store, "s")
        good = Answer(query_row_id=rows["q1"], request={}, latency_ms=1.0, raw_sha256="0" * 64,
                      raw=None, total_hits=1, hits=[Hit("fine")])
        bad = Answer(query_row_id=rows["q'\t2"], request=request_, latency_ms=1.0,
                     raw_sha256="0" * 64, raw=None, total_hits=total_hits,
                     hits=[Hit("first"), hit])
        with pytest.raises(InputError) as caught:
            record_answers(store, sid, [good, bad])
        assert str(caught.value) == f"{UNSTORABLE} (query \"q'\\t2\", {where})"
        with store.read() as session:  # the whole batch refused: the good answer too
            assert session.scalar(sa.select(sa.func.count()).select_from(SnapshotQuery)) == 0
            assert session.scalar(sa.select(sa.func.count()).select_from(SnapshotHit)) == 0
            assert session.get(Snapshot, sid).n_done == 0
        # the store is still writable: the good answer alone goes in
        record_answers(store, sid, [good])
        assert find_snapshot(store, str(sid)).n_hits == 1
    finally:
        store.close()


@pytest.mark.parametrize(("query", "where"), [
    (QueryItem("q\x00", "text"), "query 'q\\x00', query_id"),
    (QueryItem("q", "te\x00xt"), "query 'q', text"),
    (QueryItem("q", "text", {"brand": "a\x00"}), "query 'q', params"),
    (QueryItem("q", "text", need="\x00"), "query 'q', need"),
], ids=["query_id", "text", "params", "need"])
def test_a_query_set_with_unstorable_values_is_refused_alike(db_url, query, where):
    store = open_store(db_url)
    try:
        with pytest.raises(InputError) as caught:
            start_snapshot(store, name="s", endpoint_name="ep", kind="embedded", config={},
                           config_hash="a" * 64, query_set_name="qs", query_set_source=None,
                           queries=[QueryItem("fine", "x"), query], depth=10,
                           engine_version=None)
        assert str(caught.value) == f"{UNSTORABLE} ({where})"
        with store.read() as session:  # nothing of it: no query set, no snapshot
            assert session.scalar(sa.select(sa.func.count()).select_from(Snapshot)) == 0
            assert session.scalar(sa.select(sa.func.count()).select_from(QuerySet)) == 0
            assert session.scalar(sa.select(sa.func.count()).select_from(Query)) == 0
    finally:
        store.close()
