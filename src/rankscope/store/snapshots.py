"""Reading and writing snapshots in the store (plain values in, plain values out).

Writes are small units of work for :meth:`rankscope.store.db.Store.write`:
a snapshot is started (status ``running``), each query's answer is recorded
in its own transaction, and only after the last query is the snapshot
marked ``complete``. A snapshot whose process died stays ``running`` in the
table; :func:`effective_status` reports it as ``incomplete`` (its process is
gone on this host, or, on another host, it has not written for
:data:`STALE_AFTER`), so it is never listed, shown or exported as whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from rankscope.errors import StoreError
from rankscope.store.db import Store
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
    "HitRow",
    "NewQuery",
    "QueryRecord",
    "SnapshotInfo",
    "count_snapshots",
    "effective_status",
    "find_snapshot",
    "finish_snapshot",
    "list_snapshots",
    "owner_tag",
    "query_set_for",
    "record_failure",
    "record_query",
    "snapshot_hits",
    "snapshot_queries",
    "start_snapshot",
]

DEFAULT_PROJECT = "default"
STALE_AFTER = timedelta(minutes=15)


@dataclass(frozen=True)
class NewQuery:
    """A query of the set a snapshot is taken over."""

    query_id: str
    text: str
    params: Mapping[str, Any] = field(default_factory=dict)
    need: str | None = None


@dataclass(frozen=True)
class HitRow:
    """One ranked result to record (rank from 1)."""

    rank: int
    doc_id: str
    score: float | None = None
    title: str | None = None
    snippet: str | None = None
    url: str | None = None
    image: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


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


def owner_tag() -> str:
    """``host:pid`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


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


def _query_set_hash(queries: Sequence[NewQuery]) -> str:
    text = json.dumps([[q.query_id, q.text, dict(q.params), q.need] for q in queries],
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _project(session: Session, name: str) -> Project:
    project = session.scalar(select(Project).where(Project.name == name))
    if project is None:
        project = Project(name=name, created_at=utcnow())
        session.add(project)
        session.flush()
    return project


def _query_set(session: Session, project: Project, name: str, source: str | None,
               queries: Sequence[NewQuery]) -> QuerySet:
    digest = _query_set_hash(queries)
    found = session.scalar(select(QuerySet).where(
        QuerySet.project_id == project.id, QuerySet.name == name,
        QuerySet.content_sha256 == digest))
    if found is not None:
        return found
    query_set = QuerySet(project_id=project.id, name=name, source=source,
                         content_sha256=digest, created_at=utcnow())
    session.add(query_set)
    session.flush()
    session.add_all(Query(query_set_id=query_set.id, position=i, query_id=q.query_id,
                          text=q.text, params=dict(q.params), need=q.need)
                    for i, q in enumerate(queries, start=1))
    session.flush()
    return query_set


def query_set_for(session: Session, project: Project, name: str, source: str | None,
                  queries: Sequence[NewQuery]) -> QuerySet:
    """The project's query set of this name and content, created when new (in ``session``)."""
    return _query_set(session, project, name, source, queries)


def _endpoint(session: Session, project: Project, name: str, kind: str,
              config: Mapping[str, Any], config_hash: str) -> Endpoint:
    found = session.scalar(select(Endpoint).where(Endpoint.project_id == project.id,
                                                  Endpoint.name == name))
    now = utcnow()
    if found is None:
        found = Endpoint(project_id=project.id, name=name, kind=kind, config=dict(config),
                         config_hash=config_hash, created_at=now, updated_at=now)
        session.add(found)
    elif found.config_hash != config_hash or found.kind != kind:
        found.kind, found.config, found.config_hash = kind, dict(config), config_hash
        found.updated_at = now
    session.flush()
    return found


def start_snapshot(
    store: Store,
    *,
    name: str,
    endpoint_name: str,
    kind: str,
    config: Mapping[str, Any],
    config_hash: str,
    query_set_name: str,
    query_set_source: str | None,
    queries: Sequence[NewQuery],
    depth: int,
    engine_version: str | None,
    keep_raw: bool = False,
    project: str = DEFAULT_PROJECT,
) -> tuple[int, dict[str, int]]:
    """Record a new ``running`` snapshot; its id and the store's row id of each query id."""

    def work(session: Session) -> tuple[int, dict[str, int]]:
        proj = _project(session, project)
        query_set = _query_set(session, proj, query_set_name, query_set_source, queries)
        endpoint = _endpoint(session, proj, endpoint_name, kind, config, config_hash)
        now = utcnow()
        snapshot = Snapshot(
            endpoint_id=endpoint.id, query_set_id=query_set.id, name=name, status="running",
            depth=depth, engine_version=engine_version, config=dict(config),
            config_hash=config_hash, keep_raw=keep_raw, owner=owner_tag(), started_at=now,
            heartbeat_at=now, n_queries=len(queries), n_done=0, n_failed=0, n_hits=0)
        session.add(snapshot)
        session.flush()
        rows = session.execute(select(Query.query_id, Query.id).where(
            Query.query_set_id == query_set.id)).all()
        return snapshot.id, {str(q): int(i) for q, i in rows}

    return store.write(work)


def record_query(
    store: Store,
    snapshot_id: int,
    query_row_id: int,
    *,
    request: Mapping[str, Any],
    latency_ms: float,
    raw_sha256: str,
    raw: bytes | None,
    total_hits: int | None,
    hits: Sequence[HitRow],
) -> None:
    """Record one query's answer and its hits, in one transaction."""

    def work(session: Session) -> None:
        row = SnapshotQuery(
            snapshot_id=snapshot_id, query_row_id=query_row_id, status="ok",
            request=dict(request), latency_ms=latency_ms, raw_sha256=raw_sha256, raw=raw,
            total_hits=total_hits, n_hits=len(hits), created_at=utcnow())
        row.hits = [SnapshotHit(rank=h.rank, doc_id=h.doc_id, score=h.score, title=h.title,
                                snippet=h.snippet, url=h.url, image=h.image,
                                fields=dict(h.fields)) for h in hits]
        session.add(row)
        session.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(
            n_done=Snapshot.n_done + 1, n_hits=Snapshot.n_hits + len(hits),
            heartbeat_at=utcnow()))

    store.write(work)


def record_failure(store: Store, snapshot_id: int, query_row_id: int, error: str,
                   request: Mapping[str, Any] | None = None) -> None:
    """Record that one query failed (its error, no hits)."""

    def work(session: Session) -> None:
        session.add(SnapshotQuery(snapshot_id=snapshot_id, query_row_id=query_row_id,
                                  status="error", request=dict(request) if request else None,
                                  n_hits=0, error=error, created_at=utcnow()))
        session.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(
            n_failed=Snapshot.n_failed + 1, heartbeat_at=utcnow()))

    store.write(work)


def finish_snapshot(store: Store, snapshot_id: int, status: str, error: str | None = None) -> None:
    """Close a snapshot: ``complete`` (every query recorded), ``incomplete`` or ``failed``."""
    if status not in ("complete", "incomplete", "failed"):
        raise ValueError(f"a snapshot finishes complete, incomplete or failed, not {status!r}")

    def work(session: Session) -> None:
        snapshot = session.get(Snapshot, snapshot_id)
        if snapshot is None:
            raise StoreError(f"no snapshot #{snapshot_id}")
        if status == "complete" and snapshot.n_done != snapshot.n_queries:
            raise StoreError(f"snapshot #{snapshot_id} has {snapshot.n_done} of "
                             f"{snapshot.n_queries} queries: it cannot be complete")
        snapshot.status = status
        snapshot.error = error
        snapshot.finished_at = utcnow()

    store.write(work)


def _info(snapshot: Snapshot, endpoint: Endpoint, query_set: QuerySet) -> SnapshotInfo:
    return SnapshotInfo(
        id=snapshot.id, name=snapshot.name, endpoint=endpoint.name, kind=endpoint.kind,
        query_set=query_set.name,
        status=effective_status(snapshot.status, snapshot.owner, snapshot.heartbeat_at),
        depth=snapshot.depth, engine_version=snapshot.engine_version,
        config_hash=snapshot.config_hash, config=snapshot.config,
        started_at=snapshot.started_at, finished_at=snapshot.finished_at,
        n_queries=snapshot.n_queries, n_done=snapshot.n_done, n_failed=snapshot.n_failed,
        n_hits=snapshot.n_hits, error=snapshot.error)


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
            raise StoreError(f"no snapshot {ref!r} in {store.url} (by id or name; names: "
                             f"{known})")
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
                n_hits=r.n_hits if r else 0, error=r.error if r else None))
        return out


def snapshot_hits(store: Store, snapshot_id: int) -> list[dict[str, Any]]:
    """Every recorded hit: ``query_id, rank, doc_id, score, title, snippet, url, image, fields``.

    Ordered by the query's position in its set, then rank.
    """
    with store.read() as session:
        rows = session.execute(
            select(Query.query_id, SnapshotHit.rank, SnapshotHit.doc_id, SnapshotHit.score,
                   SnapshotHit.title, SnapshotHit.snippet, SnapshotHit.url, SnapshotHit.image,
                   SnapshotHit.fields)
            .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
            .join(Query, SnapshotQuery.query_row_id == Query.id)
            .where(SnapshotQuery.snapshot_id == snapshot_id)
            .order_by(Query.position, SnapshotHit.rank)).all()
    keys = ("query_id", "rank", "doc_id", "score", "title", "snippet", "url", "image", "fields")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def count_snapshots(store: Store) -> int:
    """How many snapshots the store holds (every project)."""
    with store.read() as session:
        return int(session.scalar(select(func.count()).select_from(Snapshot)) or 0)
