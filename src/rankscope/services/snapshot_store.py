"""What the command line asks of a snapshot store: open it, list, show, export, resume.

The ``snapshot``, ``snapshots`` and ``check`` commands reach the store only
through here (and :mod:`rankscope.services.snapshots` to take one). A store
named to be read is never created: :func:`open_snapshot_store` refuses a
file that does not exist or a database without rankscope's tables.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError, StoreError
from rankscope.services.snapshot_runs import trec_lines
from rankscope.services.snapshots import AnswerCounts

if TYPE_CHECKING:
    from rankscope.store.db import Store
    from rankscope.store.snapshots import QueryRecord, SnapshotInfo

__all__ = [
    "SnapshotDetail",
    "check_resume",
    "export_lines",
    "find",
    "interrupted_note",
    "list_all",
    "open_snapshot_store",
    "show",
    "stored_counts",
    "stored_run_lines",
]

EXPORT_FORMATS = ("trec", "jsonl")
"""What a snapshot is exported as: a TREC run, or one JSON object per query."""


def open_snapshot_store(target: str | Path, *, create: bool = False) -> Store:
    """The store at a path or URL; with ``create`` False (reading) it must exist.

    Raises
    ------
    StoreError
        No store there (reading), or it cannot be opened.
    DependencyError
        The ``store`` extra is not installed.
    """
    from rankscope.store.db import open_store

    return open_store(target, create=create)


def list_all(store: Store) -> list[SnapshotInfo]:
    """Every snapshot of the store, oldest first."""
    from rankscope.store.snapshots import list_snapshots

    return list_snapshots(store)


def find(store: Store, ref: str) -> SnapshotInfo:
    """The snapshot named by ``ref`` (``3``, ``#3`` or a name: the newest of that name)."""
    from rankscope.store.snapshots import find_snapshot

    return find_snapshot(store, ref)


@dataclass(frozen=True)
class SnapshotDetail:
    """One snapshot: its settings, every query of its set and the hits kept for each."""

    info: SnapshotInfo
    records: list[QueryRecord]
    hits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """``query_id -> hits`` in rank order (``rank, doc_id, score, title, url, ...``)."""

    def answered(self) -> Iterator[QueryRecord]:
        """The queries answered, in the query set's order."""
        return (r for r in self.records if r.status == "ok")


def show(store: Store, ref: str, queries: list[str] | None = None) -> SnapshotDetail:
    """A snapshot with its queries and hits; ``queries`` must be among its queries."""
    from rankscope.store.snapshots import read_snapshot  # the one loader of its hits

    contents = read_snapshot(store, ref)
    info, records = contents.info, contents.queries
    known = {r.query_id for r in records}
    for q in queries or []:
        if q not in known:
            raise OptionError(f"snapshot #{info.id} has no query {q!r}")
    return SnapshotDetail(info, records, contents.hits)


def export_lines(store: Store, ref: str, fmt: str, *, scores: str = "rank",
                 partial: bool = False) -> tuple[SnapshotInfo, list[str]]:
    """A snapshot as TREC run lines (engine order) or JSON Lines, one object per query.

    An incomplete or failed snapshot is refused unless ``partial``: exported
    as if whole, its missing queries would score as empty rankings.
    """
    if fmt not in EXPORT_FORMATS:
        raise OptionError(f"a snapshot is exported as {' or '.join(EXPORT_FORMATS)}, not "
                          f"{fmt!r}")
    info = find(store, ref)
    if info.status != "complete" and not partial:
        raise StoreError(
            f"snapshot #{info.id} ({info.name}) is {info.status} ({info.n_done} of "
            f"{info.n_queries} queries): not exported as if whole (add --partial to "
            "export what it has)")
    detail = show(store, str(info.id))
    if fmt == "trec":
        lines = trec_lines(((r.query_id, [(h["doc_id"], h["score"])
                                          for h in detail.hits.get(r.query_id, [])])
                            for r in detail.answered()), info.depth, info.name, scores=scores)
        return info, lines
    return info, [json.dumps({
        "query_id": r.query_id, "query": r.text, "need": r.need, "params": dict(r.params),
        "status": r.status, "latency_ms": r.latency_ms, "total_hits": r.total_hits,
        "raw_sha256": r.raw_sha256, "request": r.request, "error": r.error,
        "partial": r.partial, "short": r.short, "duplicates": r.duplicates, "pages": r.pages,
        "retries": r.retries, "retry_reasons": r.retry_reasons,
        "hits": [{k: v for k, v in h.items() if k != "query_id"}
                 for h in detail.hits.get(r.query_id, [])]},
        ensure_ascii=False) + "\n" for r in detail.records]


def check_resume(store: Store, ref: str, *, depth: int | None, name: str | None,
                 keep_raw: bool) -> SnapshotInfo:
    """The snapshot to resume; options that contradict it are refused."""
    info = find(store, ref)
    if depth is not None and depth != info.depth:
        raise OptionError(f"snapshot #{info.id} was taken at depth {info.depth}: resume it "
                          f"without --depth (not {depth})")
    if name is not None and name != info.name:
        raise OptionError(f"snapshot #{info.id} is named {info.name!r}: resume it without "
                          "--name")
    if keep_raw:
        raise OptionError("--keep-raw is the snapshot's own setting: resume without it")
    return info


def interrupted_note(store: Store) -> str:
    """What an interruption left in the store by this process, for its message."""
    from rankscope.store.snapshots import owner_tag

    mine = [i for i in list_all(store) if i.owner == owner_tag() and i.status != "complete"]
    if not mine:
        return ""
    last = mine[-1]
    return (f": snapshot #{last.id} kept as {last.status} with {last.n_done} of "
            f"{last.n_queries} queries (--resume {last.id} asks the rest)")


def stored_run_lines(store: Store, snapshot_id: int, depth: int, tag: str,
                     scores: str) -> list[str]:
    """The whole stored snapshot as TREC run lines (a resumed one's earlier answers too)."""
    detail = show(store, str(snapshot_id))
    return trec_lines(((r.query_id, [(h["doc_id"], h["score"])
                                     for h in detail.hits.get(r.query_id, [])])
                       for r in detail.answered()), depth, tag, scores=scores)


def stored_counts(store: Store, snapshot_id: int) -> AnswerCounts:
    """The counts of a stored snapshot's answers (all of them, a resumed one's too)."""
    from rankscope.store.snapshots import answer_counts

    info = find(store, str(snapshot_id))
    return AnswerCounts.stored(dataclasses.asdict(info), answer_counts(store, snapshot_id))
