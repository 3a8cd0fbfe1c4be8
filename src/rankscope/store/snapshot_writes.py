"""Writing snapshots to the store: start one, record answers, finish, resume.

Each function is one unit of work for :meth:`rankscope.store.db.Store.write`
(its own transaction). :mod:`rankscope.store.snapshots` re-exports them next
to the readers, so callers import both from one place.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, insert, select, update
from sqlalchemy.orm import Session

from rankscope.errors import InputError, StoreError
from rankscope.search.types import Hit, QueryItem
from rankscope.store.db import Store, serialize
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
from rankscope.store.snapshots import (
    DEFAULT_PROJECT,
    Answer,
    SnapshotInfo,
    effective_status,
    find_snapshot,
    owner_tag,
)
from rankscope.store.unstorable import UNSTORABLE, first_unstorable

__all__ = [
    "finish_snapshot",
    "query_set_for",
    "record_answers",
    "record_failure",
    "record_query",
    "resume_snapshot",
    "start_snapshot",
]


_QUERY_SET_COLUMNS = ("query_set_id", "position", "query_id", "text", "params", "need")
_QUERY_COLUMNS = ("snapshot_id", "query_row_id", "status", "request", "latency_ms",
                  "raw_sha256", "raw", "total_hits", "n_hits", "error", "created_at", "partial",
                  "short", "duplicates", "pages", "retries", "retry_reasons")
_QUERY_JSON = (3, 16)  # request, retry_reasons
_HIT_COLUMNS = ("snapshot_query_id", "rank", "doc_id", "score", "title", "snippet", "url",
                "image", "fields", "explanation")
_HIT_JSON = (7, 8)  # fields, explanation, in a hit's row before its query's id is known


def _refuse(session: Session, answer: Answer, column: str, rank: int | None = None) -> InputError:
    """The error of a value neither backend stores, naming the query (and hit) it came in."""
    query_id = session.scalar(select(Query.query_id).where(Query.id == answer.query_row_id))
    where = f"query {query_id!r}" + (f", hit {rank}" if rank is not None else "")
    return InputError(f"{UNSTORABLE} ({where}, {column})")


def _copies(connection: Connection) -> bool:
    """Whether rows are written with ``COPY``: PostgreSQL through psycopg 3 (the store's
    driver; another one given in the URL gets the many-row insert)."""
    return bool(connection.dialect.name == "postgresql" and connection.dialect.driver == "psycopg")


def _write_rows(connection: Connection, table: Table, columns: Sequence[str],
                rows: list[tuple[Any, ...]]) -> None:
    """Insert ``rows`` (values in the order of ``columns``) into ``table``, in the caller's
    transaction: PostgreSQL's ``COPY`` (one statement for them all; JSON columns given as
    their text), SQLite's many-row insert (JSON columns given as objects)."""
    if not _copies(connection):
        connection.execute(insert(table), [dict(zip(columns, row, strict=True)) for row in rows])
        return
    driver = connection.connection.driver_connection  # psycopg's, in this transaction
    names = ", ".join(columns)
    with driver.cursor() as cursor, cursor.copy(  # type: ignore[union-attr]
            f"COPY {table.name} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _query_set_hash(queries: Sequence[QueryItem]) -> str:
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
               queries: Sequence[QueryItem]) -> QuerySet:
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
    if queries:  # COPY or many rows a statement (ORM objects for thousands are slow)
        connection = session.connection()
        copy = _copies(connection)
        dump: Any = json.dumps if copy else (lambda value: value)
        rows = [(query_set.id, i, q.query_id, q.text, dump(dict(q.params)), q.need)
                for i, q in enumerate(queries, start=1)]
        bad = first_unstorable(rows, (4,), dumped=copy)
        if bad is not None:
            raise InputError(f"{UNSTORABLE} (query {rows[bad[0]][2]!r}, "
                             f"{_QUERY_SET_COLUMNS[bad[1]]})")
        _write_rows(connection, Query.__table__, _QUERY_SET_COLUMNS,  # type: ignore[arg-type]
                    rows)
    return query_set


def query_set_for(session: Session, project: Project, name: str, source: str | None,
                  queries: Sequence[QueryItem]) -> QuerySet:
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
    queries: Sequence[QueryItem],
    depth: int,
    engine_version: str | None,
    keep_raw: bool = False,
    project: str = DEFAULT_PROJECT,
    owner: str | None = None,
) -> tuple[int, dict[str, int]]:
    """Record a new ``running`` snapshot; its id and the store's row id of each query id.

    ``owner`` is the process taking it (default: this one, :func:`owner_tag`);
    while that process lives the snapshot is ``running``, after it ``incomplete``.
    """

    def work(session: Session) -> tuple[int, dict[str, int]]:
        serialize(session, "rankscope.start_snapshot")  # creates what it does not find
        proj = _project(session, project)
        query_set = _query_set(session, proj, query_set_name, query_set_source, queries)
        endpoint = _endpoint(session, proj, endpoint_name, kind, config, config_hash)
        now = utcnow()
        snapshot = Snapshot(
            endpoint_id=endpoint.id, query_set_id=query_set.id, name=name, status="running",
            depth=depth, engine_version=engine_version, config=dict(config),
            config_hash=config_hash, keep_raw=keep_raw, owner=owner or owner_tag(),
            started_at=now,
            heartbeat_at=now, n_queries=len(queries), n_done=0, n_failed=0, n_hits=0)
        session.add(snapshot)
        session.flush()
        rows = session.execute(select(Query.query_id, Query.id).where(
            Query.query_set_id == query_set.id)).all()
        return snapshot.id, {str(q): int(i) for q, i in rows}

    return store.write(work)


def record_answers(store: Store, snapshot_id: int, answers: Sequence[Answer]) -> None:
    """Record answers and their hits in one transaction (all of them, or none).

    Raises
    ------
    InputError
        A text holding a NUL character, or a whole number outside 64 bits
        (:data:`~rankscope.store.unstorable.UNSTORABLE`), in an answer: nothing of
        the batch is written, on SQLite as on PostgreSQL.
    """
    if not answers:
        return

    def work(session: Session) -> None:
        # Rows as tuples, screened here, then one COPY a table on PostgreSQL (an INSERT a
        # row through psycopg cost about as much CPU as everything else of the recording)
        # or many rows a statement on SQLite; never ORM objects (thousands of hits)
        now = utcnow()
        connection = session.connection()  # the tables, not the ORM's bulk path: less CPU
        copy = _copies(connection)
        # JSON: its text for COPY, as SQLAlchemy's JSON type writes it (json.dumps; None as
        # JSON null, not SQL NULL); objects for the insert, which dumps them so
        dump: Any = json.dumps if copy else (lambda value: value)
        query_rows = [
            (snapshot_id, a.query_row_id, "ok", dump(dict(a.request)), a.latency_ms,
             a.raw_sha256, a.raw, a.total_hits, len(a.hits), None, now, a.partial, a.short,
             a.duplicates, a.pages, len(a.retried), dump(a.retry_reasons())) for a in answers]
        hit_rows = [[(rank, h.doc_id, h.score, h.title, h.snippet, h.url, h.image,
                      dump(dict(h.fields)), dump(h.explanation))
                     for rank, h in enumerate(a.hits, start=1)] for a in answers]
        bad = first_unstorable(query_rows, _QUERY_JSON, dumped=copy)
        if bad is not None:
            raise _refuse(session, answers[bad[0]], _QUERY_COLUMNS[bad[1]])
        for answer, rows in zip(answers, hit_rows, strict=True):
            bad = first_unstorable(rows, _HIT_JSON, dumped=copy)
            if bad is not None:
                raise _refuse(session, answer, _HIT_COLUMNS[bad[1] + 1], bad[0] + 1)
        if connection.dialect.name == "postgresql":
            # Answers are acknowledged when the snapshot is finished, whose commit waits for
            # the log to reach disk (and with it every commit before); a crash before that
            # leaves the database whole and loses only answers a resume asks again.
            connection.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
        queries: Table = SnapshotQuery.__table__  # type: ignore[assignment]
        hit_table: Table = SnapshotHit.__table__  # type: ignore[assignment]
        _write_rows(connection, queries, _QUERY_COLUMNS, query_rows)
        # Their ids by (snapshot, query): one SELECT (RETURNING in input order would make
        # SQLite insert them one statement each; COPY returns nothing)
        row_of = dict(connection.execute(
            select(queries.c.query_row_id, queries.c.id).where(
                queries.c.snapshot_id == snapshot_id,
                queries.c.query_row_id.in_([a.query_row_id for a in answers]))).all())
        hits = [(row_id, *row) for a, rows in zip(answers, hit_rows, strict=True)
                for row_id in (row_of[a.query_row_id],) for row in rows]
        if hits:
            _write_rows(connection, hit_table, _HIT_COLUMNS, hits)
        session.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(
            n_done=Snapshot.n_done + len(answers),
            n_hits=Snapshot.n_hits + sum(len(a.hits) for a in answers),
            n_partial=Snapshot.n_partial + sum(a.partial is not None for a in answers),
            n_short=Snapshot.n_short + sum(a.short is not None for a in answers),
            n_duplicates=Snapshot.n_duplicates + sum(a.duplicates for a in answers),
            n_retries=Snapshot.n_retries + sum(len(a.retried) for a in answers),
            heartbeat_at=now))

    store.write(work)


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
    hits: Sequence[Hit],
) -> None:
    """Record one query's answer and its hits, in one transaction."""
    record_answers(store, snapshot_id, [Answer(
        query_row_id=query_row_id, request=request, latency_ms=latency_ms,
        raw_sha256=raw_sha256, raw=raw, total_hits=total_hits, hits=hits)])


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


def resume_snapshot(store: Store, ref: str, *, config_hash: str,
                    queries: Sequence[QueryItem],
                    project: str = DEFAULT_PROJECT) -> tuple[SnapshotInfo, dict[str, int],
                                                             set[str]]:
    """Take over an unfinished snapshot to ask the queries it lacks.

    The snapshot must have been taken with the same endpoint configuration
    (``config_hash``) over the same query set (``queries``). Its recorded
    answers stay; the queries that failed are forgotten (asked again); it is
    ``running`` again, owned by this process.

    Returns
    -------
    info : SnapshotInfo
        The snapshot as it is now.
    rows : dict
        The store's row id of each query id.
    answered : set of str
        The query ids already answered (not to be asked again).

    Raises
    ------
    StoreError
        No such snapshot, a complete one, one still running in a live process,
        or a different configuration or query set.
    """
    info = find_snapshot(store, ref, project=project)
    if info.status == "complete":
        raise StoreError(f"snapshot #{info.id} ({info.name}) is complete: nothing to resume")
    if info.status == "running":
        raise StoreError(f"snapshot #{info.id} ({info.name}) is still being taken by a live "
                         "process; resume it once that process has ended")
    if info.config_hash != config_hash:
        raise StoreError(f"snapshot #{info.id} ({info.name}) was taken with another endpoint "
                         f"configuration (sha256 {info.config_hash[:12]}, this file's "
                         f"{config_hash[:12]}): resume it with the same endpoint file")
    digest = _query_set_hash(queries)

    def work(session: Session) -> tuple[dict[str, int], set[str]]:
        snapshot = session.get(Snapshot, info.id, with_for_update=True)
        if snapshot is None:
            raise StoreError(f"no snapshot #{info.id}")
        query_set = session.get(QuerySet, snapshot.query_set_id)
        if query_set is None or query_set.content_sha256 != digest:
            raise StoreError(f"snapshot #{info.id} ({info.name}) was taken over another query "
                             "set: resume it with the same queries file")
        if effective_status(snapshot.status, snapshot.owner, snapshot.heartbeat_at) \
                not in ("incomplete", "failed"):
            raise StoreError(f"snapshot #{info.id} cannot be resumed: it is {snapshot.status}")
        failed = session.scalars(select(SnapshotQuery).where(
            SnapshotQuery.snapshot_id == info.id, SnapshotQuery.status == "error")).all()
        for row in failed:
            session.delete(row)
        now = utcnow()
        snapshot.status, snapshot.error, snapshot.finished_at = "running", None, None
        snapshot.owner, snapshot.heartbeat_at, snapshot.n_failed = owner_tag(), now, 0
        rows = session.execute(select(Query.query_id, Query.id).where(
            Query.query_set_id == snapshot.query_set_id)).all()
        answered = session.scalars(
            select(Query.query_id).join(SnapshotQuery, SnapshotQuery.query_row_id == Query.id)
            .where(SnapshotQuery.snapshot_id == info.id, SnapshotQuery.status == "ok")).all()
        return {str(q): int(i) for q, i in rows}, {str(q) for q in answered}

    rows, answered = store.write(work)
    return find_snapshot(store, str(info.id), project=project), rows, answered


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
