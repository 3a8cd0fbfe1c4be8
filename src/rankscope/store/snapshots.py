"""Reading and writing snapshots in the store (plain values in, plain values out).

The records and the readers live here, the writers in
:mod:`rankscope.store.snapshot_writes` (which imports this module, never the other way).

Writes are small units of work for :meth:`rankscope.store.db.Store.write`:
a snapshot is started (status ``running``), the queries' answers are recorded
as they arrive (:func:`record_answers`: one transaction for whatever has
arrived, every answer whole or not at all), and only after the last query is
the snapshot marked ``complete``. :func:`resume_snapshot` takes over a
snapshot whose process died (or that failed or was interrupted): its answers
stay, its failed queries are forgotten, and the queries it lacks are asked
again. A snapshot whose process died stays ``running`` in the
table; :func:`effective_status` reports it as ``incomplete`` (its process is
gone on this host, or, on another host, it has not written for
:data:`STALE_AFTER`), so it is never listed, shown or exported as whole.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select

from rankscope.errors import StoreError
from rankscope.search.types import Hit, SearchResponse
from rankscope.store.db import Store, shown_url
from rankscope.store.models import (
    Endpoint,
    Project,
    Query,
    QuerySet,
    Snapshot,
    SnapshotHit,
    SnapshotQuery,
    utcnow,
)

__all__ = [
    "DEFAULT_PROJECT",
    "STALE_AFTER",
    "Answer",
    "QueryRecord",
    "SnapshotContents",
    "SnapshotInfo",
    "answer_counts",
    "count_snapshots",
    "effective_status",
    "find_snapshot",
    "list_snapshots",
    "owner_tag",
    "read_snapshot",
    "snapshot_hits",
    "snapshot_queries",
]

DEFAULT_PROJECT = "default"
STALE_AFTER = timedelta(minutes=15)


@dataclass(frozen=True)
class Answer:
    """One query's answer to record: the exchange, what was off about it, and its hits.

    ``hits`` are the engine's, as :mod:`rankscope.search` returns them, best first:
    the first is recorded at rank 1.
    """

    query_row_id: int
    request: Mapping[str, Any]
    latency_ms: float
    raw_sha256: str
    raw: bytes | None
    total_hits: int | None
    hits: Sequence[Hit]
    partial: str | None = None
    short: str | None = None
    duplicates: int = 0
    pages: int = 1
    retried: Sequence[str] = ()
    """Why each retried request was retried."""

    @classmethod
    def of(cls, query_row_id: int, response: SearchResponse, *, keep_raw: bool) -> Answer:
        """The answer to record of one search's response (its raw body only with
        ``keep_raw``), for the query of row ``query_row_id``."""
        return cls(
            query_row_id=query_row_id, request=response.request,
            latency_ms=response.latency_ms, raw_sha256=response.raw_sha256,
            raw=response.raw if keep_raw else None, total_hits=response.total_hits,
            hits=response.hits, partial=response.partial, short=response.short,
            duplicates=response.duplicates, pages=response.pages, retried=response.retried)

    def retry_reasons(self) -> dict[str, int] | None:
        """``{reason: count}`` (None: nothing was retried)."""
        counts: dict[str, int] = {}
        for reason in self.retried:
            counts[reason] = counts.get(reason, 0) + 1
        return counts or None


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot as listed: identity, status (effective), counts and times."""

    id: int
    name: str
    endpoint: str
    kind: str
    query_set: str
    status: str
    depth: int
    engine_version: str | None
    config_hash: str
    config: Mapping[str, Any]
    started_at: datetime
    finished_at: datetime | None
    n_queries: int
    n_done: int
    n_failed: int
    n_hits: int
    error: str | None
    n_partial: int = 0
    """Queries whose answer the engine marked partial."""
    n_short: int = 0
    """Queries short of the depth although the engine matched more."""
    n_duplicates: int = 0
    """Duplicate hits dropped, over all queries."""
    n_retries: int = 0
    """Requests retried, over all queries."""
    query_set_sha256: str = ""
    """The SHA-256 of the query set's content (ids, texts, parameters, needs)."""
    owner: str | None = None
    """``host:pid`` of the process that took it (or resumed it) last."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = dict(self.__dict__)
        out["config"] = dict(self.config)
        out["started_at"] = self.started_at.isoformat()
        out["finished_at"] = self.finished_at.isoformat() if self.finished_at else None
        return out


@dataclass(frozen=True)
class QueryRecord:
    """One query of a stored snapshot: what was asked and what came back."""

    position: int
    query_id: str
    text: str
    need: str | None
    params: Mapping[str, Any]
    status: str | None
    """``ok``, ``error``, or None when the snapshot never reached this query."""
    request: Mapping[str, Any] | None
    latency_ms: float | None
    raw_sha256: str | None
    total_hits: int | None
    n_hits: int
    error: str | None
    partial: str | None = None
    short: str | None = None
    duplicates: int = 0
    pages: int = 1
    retries: int = 0
    retry_reasons: Mapping[str, int] | None = None


def owner_tag(pid: int | None = None) -> str:
    """``host:pid`` of this process (or of the process ``pid`` of this host)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child not yet reaped is a zombie: it is gone for our purpose
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[-1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def effective_status(status: str, owner: str | None, heartbeat_at: datetime,
                     now: datetime | None = None) -> str:
    """The status to show: a ``running`` snapshot whose process is gone is ``incomplete``."""
    if status != "running":
        return status
    host, _, pid = (owner or "").rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        return "running" if _pid_alive(int(pid)) else "incomplete"
    now = now or utcnow()
    return "incomplete" if now - heartbeat_at > STALE_AFTER else "running"


def _info(snapshot: Snapshot, endpoint: Endpoint, query_set: QuerySet) -> SnapshotInfo:
    return SnapshotInfo(
        id=snapshot.id, name=snapshot.name, endpoint=endpoint.name, kind=endpoint.kind,
        query_set=query_set.name,
        status=effective_status(snapshot.status, snapshot.owner, snapshot.heartbeat_at),
        depth=snapshot.depth, engine_version=snapshot.engine_version,
        config_hash=snapshot.config_hash, config=snapshot.config,
        started_at=snapshot.started_at, finished_at=snapshot.finished_at,
        n_queries=snapshot.n_queries, n_done=snapshot.n_done, n_failed=snapshot.n_failed,
        n_hits=snapshot.n_hits, error=snapshot.error, n_partial=snapshot.n_partial,
        n_short=snapshot.n_short, n_duplicates=snapshot.n_duplicates,
        n_retries=snapshot.n_retries, query_set_sha256=query_set.content_sha256,
        owner=snapshot.owner)


def _listing(project: str) -> Any:
    return (select(Snapshot, Endpoint, QuerySet)
            .join(Endpoint, Snapshot.endpoint_id == Endpoint.id)
            .join(QuerySet, Snapshot.query_set_id == QuerySet.id)
            .join(Project, Endpoint.project_id == Project.id)
            .where(Project.name == project))


def list_snapshots(store: Store, *, project: str = DEFAULT_PROJECT) -> list[SnapshotInfo]:
    """Every snapshot of the project, oldest first."""
    with store.read() as session:
        rows = session.execute(_listing(project).order_by(Snapshot.id)).all()
        return [_info(s, e, q) for s, e, q in rows]


def find_snapshot(store: Store, ref: str, *, project: str = DEFAULT_PROJECT) -> SnapshotInfo:
    """A snapshot by id (``12`` or ``#12``) or by name (the newest of that name).

    Raises
    ------
    StoreError
        No snapshot answers to ``ref``.
    """
    text = ref.strip().lstrip("#")
    with store.read() as session:
        row = None
        if text.isdigit():
            row = session.execute(_listing(project).where(Snapshot.id == int(text))).first()
        if row is None:
            row = session.execute(_listing(project).where(Snapshot.name == ref)
                                  .order_by(Snapshot.id.desc()).limit(1)).first()
        if row is None:
            names = session.scalars(select(Snapshot.name).distinct().limit(20)).all()
            known = ", ".join(sorted(names)) or "none yet"
            raise StoreError(f"no snapshot {ref!r} in {shown_url(store.url)} (by id or name; "
                             f"names: {known})")
        return _info(*row)


def snapshot_queries(store: Store, snapshot_id: int) -> list[QueryRecord]:
    """Every query of the snapshot's query set, in order, with what was recorded for it."""
    with store.read() as session:
        snapshot = session.get(Snapshot, snapshot_id)
        if snapshot is None:
            raise StoreError(f"no snapshot #{snapshot_id}")
        recorded = {r.query_row_id: r for r in session.scalars(
            select(SnapshotQuery).where(SnapshotQuery.snapshot_id == snapshot_id))}
        out = []
        for q in session.scalars(select(Query).where(Query.query_set_id == snapshot.query_set_id)
                                 .order_by(Query.position)):
            r = recorded.get(q.id)
            out.append(QueryRecord(
                position=q.position, query_id=q.query_id, text=q.text, need=q.need,
                params=q.params, status=r.status if r else None,
                request=r.request if r else None, latency_ms=r.latency_ms if r else None,
                raw_sha256=r.raw_sha256 if r else None, total_hits=r.total_hits if r else None,
                n_hits=r.n_hits if r else 0, error=r.error if r else None,
                partial=r.partial if r else None, short=r.short if r else None,
                duplicates=r.duplicates if r else 0, pages=r.pages if r else 1,
                retries=r.retries if r else 0, retry_reasons=r.retry_reasons if r else None))
        return out


def answer_counts(store: Store, snapshot_id: int) -> dict[str, Any]:
    """What was off about a snapshot's recorded answers, summed.

    ``answered`` (queries with an answer), ``empty`` (of them, without a
    result), ``retry_reasons`` (``{reason: requests}``); the snapshot's own
    counts are in :class:`SnapshotInfo`.
    """
    with store.read() as session:
        answered, empty = session.execute(
            select(func.count(), func.coalesce(func.sum(case((SnapshotQuery.n_hits == 0, 1),
                                                              else_=0)), 0))
            .where(SnapshotQuery.snapshot_id == snapshot_id,
                   SnapshotQuery.status == "ok")).one()
        reasons: dict[str, int] = {}
        for found in session.scalars(select(SnapshotQuery.retry_reasons).where(
                SnapshotQuery.snapshot_id == snapshot_id, SnapshotQuery.retries > 0)):
            for reason, n in (found or {}).items():
                reasons[reason] = reasons.get(reason, 0) + int(n)
    return {"answered": int(answered), "empty": int(empty), "retry_reasons": reasons}


def snapshot_hits(store: Store, snapshot_id: int) -> list[dict[str, Any]]:
    """Every recorded hit: ``query_id, rank, doc_id, score, title, snippet, url, image, fields,
    explanation``.

    Ordered by the query's position in its set, then rank.
    """
    with store.read() as session:
        rows = session.execute(
            select(Query.query_id, SnapshotHit.rank, SnapshotHit.doc_id, SnapshotHit.score,
                   SnapshotHit.title, SnapshotHit.snippet, SnapshotHit.url, SnapshotHit.image,
                   SnapshotHit.fields, SnapshotHit.explanation)
            .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
            .join(Query, SnapshotQuery.query_row_id == Query.id)
            .where(SnapshotQuery.snapshot_id == snapshot_id)
            .order_by(Query.position, SnapshotHit.rank)).all()
    keys = ("query_id", "rank", "doc_id", "score", "title", "snippet", "url", "image", "fields",
            "explanation")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def count_snapshots(store: Store) -> int:
    """How many snapshots the store holds (every project)."""
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(Snapshot)) or 0)


@dataclass(frozen=True)
class SnapshotContents:
    """A stored snapshot read whole: what it is, its queries, and its hits by query."""

    info: SnapshotInfo
    queries: list[QueryRecord]
    """Every query of its query set, in order (answered or not)."""
    hits: dict[str, list[dict[str, Any]]]
    """``{query_id: hits}``, queries in their set's order, each list in rank order (the
    rows of :func:`snapshot_hits`); a query without a hit is absent."""

    @property
    def whole(self) -> bool:
        """Whether the snapshot is complete (every query asked, none failed for good)."""
        return self.info.status == "complete"


def read_snapshot(store: Store, ref: str, *, project: str = DEFAULT_PROJECT
                  ) -> SnapshotContents:
    """A snapshot by id or name (:func:`find_snapshot`), with its queries and hits by query.

    The one loader of a snapshot's hits: the comparison of snapshots, the exports and the
    LLM judge all read them here. Whether a snapshot that is not whole may be used is the
    caller's to say (:attr:`SnapshotContents.whole`).

    Raises
    ------
    StoreError
        No snapshot answers to ``ref``.
    """
    info = find_snapshot(store, ref, project=project)
    queries = snapshot_queries(store, info.id)
    by_query: dict[str, list[dict[str, Any]]] = {}
    for hit in snapshot_hits(store, info.id):
        by_query.setdefault(hit["query_id"], []).append(hit)
    return SnapshotContents(info, queries, by_query)
