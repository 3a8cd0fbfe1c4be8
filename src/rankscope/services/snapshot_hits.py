"""A snapshot's results as an evaluation reads them, and kept per server process once finished.

A finished snapshot's hits never change (what the engine returned, in its
order), so they are read once per server process under
:func:`snapshot_state`, which tells a snapshot from any other (a resumed one
runs again; a deleted one's id may be reused by a new one): the hits without
their texts for the numbers, with them for the pages that show results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.data.tables import Run
from rankscope.services.kept import KeptByStamp
from rankscope.store.models import Query, Snapshot, SnapshotHit, SnapshotQuery

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.store.db import Store

__all__ = [
    "HITS_SCHEMA",
    "KEEP_SNAPSHOTS",
    "KEEP_SNAPSHOT_BYTES",
    "KEEP_SNAPSHOT_TEXTS",
    "RANKED_SCHEMA",
    "read_hits",
    "run_from_lines",
    "run_lines_of",
    "snapshot_run",
    "snapshot_state",
]


RANKED_SCHEMA = {"query_id": pl.String, "rank": pl.Int64, "doc_id": pl.String,
                  "score": pl.Float64}
"""What a number needs of a hit: where it is and what it is (:func:`read_hits` without
its texts)."""
HITS_SCHEMA = {**RANKED_SCHEMA, "title": pl.String, "snippet": pl.String, "url": pl.String}


def read_hits(session: Session, snapshot_id: int, *,
                   texts: bool = True) -> tuple[pl.DataFrame, int]:
    """The snapshot's hits (queries in the set's order, each in rank order) and its depth.

    Read as plain columns (a Core select on the session's connection: no ORM
    rows), straight into a frame: ``query_id, rank, doc_id, score`` and, with
    ``texts``, each hit's ``title, snippet, url`` (most of the bytes read: a
    number needs none of them).
    """
    connection = session.connection()
    depth = connection.execute(select(Snapshot.depth).where(Snapshot.id == snapshot_id)).scalar()
    columns: list[Any] = [Query.query_id, SnapshotHit.rank, SnapshotHit.doc_id, SnapshotHit.score]
    if texts:
        columns += [SnapshotHit.title, SnapshotHit.snippet, SnapshotHit.url]
    rows = connection.execute(
        select(*columns)
        .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
        .join(Query, SnapshotQuery.query_row_id == Query.id)
        .where(SnapshotQuery.snapshot_id == snapshot_id)
        .order_by(Query.position, SnapshotHit.rank)).all()
    hits = pl.DataFrame(rows, schema=HITS_SCHEMA if texts else RANKED_SCHEMA, orient="row")
    return hits, depth if depth is not None else 10


KEEP_SNAPSHOTS = 32
"""Finished snapshots whose hits without texts and run frame are kept per store in this
process (the least recently read dropped first): a finished snapshot's hits never change."""
KEEP_SNAPSHOT_TEXTS = 8
"""Finished snapshots whose hits with their texts (title, snippet, URL: most of the bytes)
are kept per store in this process, the same way."""
KEEP_SNAPSHOT_BYTES = 256 * 2**20
"""The most bytes (polars' estimate) the kept snapshots weigh per store, without texts and
with them each: past it the least recently read are dropped, and a snapshot heavier than it
alone is read again on each view."""


def snapshot_state(session: Session, snapshot_id: int | None) -> tuple[Any, ...] | None:
    """What tells this snapshot's hits from any other's: its id, when it was started and
    finished, its status, depth and counts (None: no such snapshot).

    A snapshot's hits change only while it runs (each recorded batch moves its counts); a
    resume sets it running again (no finish time) and finishes it at a new time; a deleted
    snapshot's id reused by a new one (SQLite may) comes with the new one's start.
    """
    if snapshot_id is None:
        return None
    found = session.connection().execute(
        select(Snapshot.started_at, Snapshot.finished_at, Snapshot.status, Snapshot.depth,
               Snapshot.n_done, Snapshot.n_failed, Snapshot.n_hits)
        .where(Snapshot.id == snapshot_id)).one_or_none()
    return None if found is None else ("snapshot", snapshot_id, *found)


def _finished_stamp(session: Session, snapshot_id: int) -> tuple[Any, ...] | None:
    """:func:`snapshot_state` of a finished snapshot (its hits will not change: they may be
    kept); None while it runs (or was resumed: running again)."""
    state = snapshot_state(session, snapshot_id)
    # ("snapshot", id, started_at, finished_at, status, ...)
    return None if state is None or state[3] is None or state[4] == "running" else state


def snapshot_run(session: Session, snapshot_id: int, texts: bool,
                  shared: dict[tuple[Any, ...], Any] | None, kept_in: Store | None = None,
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The snapshot's hits and run frame (:func:`engine_run_frame` at the snapshot's depth),
    read once per request for every evaluation served this snapshot (``shared``,
    :func:`load_data`'s): a read with the texts serves one without them. With ``kept_in``,
    a finished snapshot's are read once per process (:data:`KEEP_SNAPSHOTS` kept per store
    without texts, :data:`KEEP_SNAPSHOT_TEXTS` with them, at most
    :data:`KEEP_SNAPSHOT_BYTES` each) under :func:`_finished_stamp`,
    read before and after the hits (kept only when unchanged); each caller gets its own
    copy."""
    from rankscope.services.snapshot_runs import engine_run_frame

    # a frame is never changed once made: one request's evaluations may hold the same one
    for key in (("hits", snapshot_id, True), ("hits", snapshot_id, texts)):
        if shared is not None and key in shared:
            hits, frame = shared[key]
            return (hits if texts else hits.select(list(RANKED_SCHEMA))), frame
    stamp = None if kept_in is None else _finished_stamp(session, snapshot_id)
    kept = None
    if stamp is not None and kept_in is not None:
        kept = _KEPT_BARE.get(kept_in, stamp) if not texts else None
        kept = kept if kept is not None else _KEPT_WHOLE.get(kept_in, stamp)
    if kept is not None:  # the kept ones stay as read
        hits, frame = kept[0].clone(), kept[1].clone()
        hits = hits if texts else hits.select(list(RANKED_SCHEMA))
    else:
        hits, depth = read_hits(session, snapshot_id, texts=texts)
        frame = engine_run_frame(hits, depth)
        if stamp is not None and kept_in is not None \
                and _finished_stamp(session, snapshot_id) == stamp:
            _KEPT_BARE.put(kept_in, stamp, (hits.select(list(RANKED_SCHEMA)), frame.clone()))
            if texts:
                _KEPT_WHOLE.put(kept_in, stamp, (hits.clone(), frame.clone()))
    if shared is not None:
        shared[("hits", snapshot_id, texts)] = hits, frame
    return hits, frame


def run_lines_of(session: Session, snapshot_id: int, tag: str) -> tuple[list[str], pl.DataFrame]:
    """The snapshot's TREC run lines (as ``rankscope snapshot -o`` writes them) and its hits."""
    from rankscope.services.snapshot_runs import engine_run_frame, frame_lines

    hits, depth = read_hits(session, snapshot_id)
    return frame_lines(engine_run_frame(hits, depth), tag), hits


def run_from_lines(lines: list[str], name: str) -> Run:
    parts = [line.split() for line in lines]
    frame = pl.DataFrame({"query_id": [p[0] for p in parts], "doc_id": [p[2] for p in parts],
                          "score": [float(p[4]) for p in parts]},
                         schema={"query_id": pl.String, "doc_id": pl.String,
                                 "score": pl.Float64})
    return Run(frame, name=name, source=name)


def _frames_size(frames: tuple[pl.DataFrame, pl.DataFrame]) -> int:
    return sum(int(frame.estimated_size()) for frame in frames)


_KEPT_BARE: KeptByStamp[tuple[pl.DataFrame, pl.DataFrame]] = KeptByStamp(
    KEEP_SNAPSHOTS, budget=KEEP_SNAPSHOT_BYTES, size=_frames_size)
"""Finished snapshots' hits without texts and run frames (:func:`snapshot_run`)."""
_KEPT_WHOLE: KeptByStamp[tuple[pl.DataFrame, pl.DataFrame]] = KeptByStamp(
    KEEP_SNAPSHOT_TEXTS, budget=KEEP_SNAPSHOT_BYTES, size=_frames_size)
"""Finished snapshots' hits with texts and run frames (:func:`snapshot_run`)."""
