"""Taking a snapshot: run a query set against an endpoint, keep what came back.

:func:`take_snapshot` sends every query (a few at a time) and, with a store,
hands each answer to a recorder thread that commits whatever has arrived in
one transaction (:class:`~rankscope.store.recorder.AnswerRecorder`): the
requests in flight never wait on the database. The snapshot is marked
``complete`` only after the last answer is committed. The first query that
fails for good (a non-retryable answer, retries spent, a body that does not
map) ends the snapshot as ``failed``: what was recorded before stays, and the
error names the query. An interruption (Ctrl-C) ends it as ``incomplete``; a
killed process leaves it ``running`` in the table, which the store reports as
``incomplete``. Any of them can be resumed (``resume=ID``): only the queries
not yet answered are asked, and it ends complete with the answers an
uninterrupted snapshot would have.

Every answer says what was off about it (partial, short of the depth,
duplicate ids dropped, requests retried): :meth:`SnapshotOutcome.counts`
sums them, the store keeps them per query.

:mod:`rankscope.services.snapshot_runs` writes the answers as a TREC run in
the engine's order (its names are importable from here too).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError, SearchRequestError, StoreError
from rankscope.search.types import Endpoint, QueryItem, SearchResponse
from rankscope.services.snapshot_runs import (
    RUN_SCORES,
    run_lines,
    run_scores,
    trec_lines,
    write_lines,
    write_run,
)

if TYPE_CHECKING:
    from rankscope.store.db import Store
    from rankscope.store.snapshots import Answer

__all__ = [
    "DEFAULT_DEPTH",
    "RUN_SCORES",
    "AnswerCounts",
    "SnapshotOutcome",
    "check_params",
    "run_lines",
    "run_scores",
    "take_snapshot",
    "trec_lines",
    "write_lines",
    "write_run",
]

DEFAULT_DEPTH = 10
"""Results kept per query: what a first page shows, and what Quepid and the
judging platforms grade by default. Ask for more (``--depth 100``) for
TREC-style runs and deep metrics."""


@dataclass(frozen=True)
class AnswerCounts:
    """What was off about a snapshot's answers, summed over its queries."""

    queries: int = 0
    empty: int = 0
    """Queries that returned no result."""
    hits: int = 0
    partial: int = 0
    """Queries the engine answered partially (a timeout, failed shards)."""
    short: int = 0
    """Queries short of the depth although the engine matched more."""
    duplicates: int = 0
    """Duplicate hits dropped."""
    retries: int = 0
    """Requests retried."""
    retry_reasons: dict[str, int] = field(default_factory=dict)

    @classmethod
    def stored(cls, info: Mapping[str, Any], counted: Mapping[str, Any]) -> AnswerCounts:
        """The counts of a stored snapshot: its row's fields (``n_hits``, ``n_partial``,
        ...) and :func:`~rankscope.store.snapshots.answer_counts` of its answers."""
        return cls(queries=counted["answered"], empty=counted["empty"], hits=info["n_hits"],
                   partial=info["n_partial"], short=info["n_short"],
                   duplicates=info["n_duplicates"], retries=info["n_retries"],
                   retry_reasons=dict(counted["retry_reasons"]))

    @classmethod
    def of(cls, responses: Sequence[SearchResponse]) -> AnswerCounts:
        """The counts of these answers."""
        reasons: dict[str, int] = {}
        for r in responses:
            for reason in r.retried:
                reasons[reason] = reasons.get(reason, 0) + 1
        return cls(queries=len(responses), empty=sum(not r.hits for r in responses),
                   hits=sum(len(r.hits) for r in responses),
                   partial=sum(r.partial is not None for r in responses),
                   short=sum(r.short is not None for r in responses),
                   duplicates=sum(r.duplicates for r in responses),
                   retries=sum(reasons.values()), retry_reasons=reasons)

    @property
    def incomplete(self) -> bool:
        """Whether an answer misses results the engine has (partial or short)."""
        return bool(self.partial or self.short)

    def describe(self) -> str:
        """What was off, in a few words ("" when nothing was).

        Examples
        --------
        >>> AnswerCounts(queries=9, partial=2, duplicates=1, retries=3,
        ...              retry_reasons={"HTTP 503": 2, "timeout": 1}).describe()
        '2 partial (the engine said so), 1 duplicate id dropped, 3 requests retried \
(HTTP 503 x2, timeout x1)'
        """
        parts = []
        if self.partial:
            parts.append(f"{self.partial} partial (the engine said so)")
        if self.short:
            parts.append(f"{self.short} short of the depth")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate id{'s' if self.duplicates > 1 else ''} "
                         "dropped")
        if self.retries:
            why = ", ".join(f"{k} x{v}" for k, v in sorted(self.retry_reasons.items()))
            parts.append(f"{self.retries} request{'s' if self.retries > 1 else ''} retried "
                         f"({why})")
        return ", ".join(parts)


@dataclass
class SnapshotOutcome:
    """What a snapshot run produced."""

    name: str
    depth: int
    engine_version: str | None
    responses: list[SearchResponse]
    """One per query asked by this run, in the query set's order."""
    snapshot_id: int | None = None
    status: str = "complete"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    resumed: int = 0
    """Answers a resumed snapshot had already (not asked again)."""
    recorder: dict[str, int] = field(default_factory=dict)
    """With a store: ``answers`` committed and the ``transactions`` they took."""
    stored: AnswerCounts | None = None
    """With a store given by its path or URL: the counts of every answer of the snapshot
    as the store holds them, read back by the recording process once it was finished."""

    @property
    def n_hits(self) -> int:
        """Hits over all queries asked by this run."""
        return sum(len(r.hits) for r in self.responses)

    def counts(self) -> AnswerCounts:
        """What was off about the answers of this run."""
        return AnswerCounts.of(self.responses)


def check_params(endpoint: Endpoint, queries: Sequence[QueryItem]) -> None:
    """Refuse, before sending anything, a query that lacks a parameter its template needs."""
    names = endpoint.needed_params()
    for query in queries:
        missing = sorted(n for n in names if n not in query.params)
        if missing:
            raise ConfigError(
                f"query {query.query_id} has no value for "
                + ", ".join("{{" + n + "}}" for n in missing)
                + " (give it a column of that name in the queries file, or a value in the "
                "endpoint's [variables])", source=endpoint.config.source)


def _starter(store: Store, endpoint: Endpoint, queries: Sequence[QueryItem], rows: dict[str, int],
             *, name: str, depth: int, version: str | None, keep_raw: bool,
             query_set_name: str, query_set_source: str | None,
             project: str | None) -> Callable[[], int]:
    """What starts a new snapshot in the store (on the recorder's thread), filling ``rows``."""

    def start() -> int:
        from rankscope.store.snapshot_writes import start_snapshot

        snapshot_id, found = start_snapshot(store, **_snapshot_row(
            endpoint, queries, name=name, depth=depth, version=version, keep_raw=keep_raw,
            query_set_name=query_set_name, query_set_source=query_set_source,
            project=project))
        rows.update(found)
        return snapshot_id

    return start


def _snapshot_row(endpoint: Endpoint, queries: Sequence[QueryItem], *, name: str, depth: int,
                  version: str | None, keep_raw: bool, query_set_name: str,
                  query_set_source: str | None, project: str | None) -> dict[str, Any]:
    """What :func:`~rankscope.store.snapshot_writes.start_snapshot` records of a new one."""
    return {"name": name, "endpoint_name": endpoint.config.name, "kind": endpoint.config.kind,
            "config": endpoint.config.settings, "config_hash": endpoint.config.config_hash,
            "query_set_name": query_set_name, "query_set_source": query_set_source,
            "queries": list(queries), "depth": depth, "engine_version": version,
            "keep_raw": keep_raw, **({"project": project} if project is not None else {})}


class _InProcess:
    """Recording with an open store: a writer thread of this process
    (:class:`~rankscope.store.recorder.AnswerRecorder`), what the web app does."""

    def __init__(self, store: Store, recorder: Any, rows: dict[str, int]) -> None:
        self.store = store
        self.recorder = recorder
        self.rows = rows
        self.answered: set[str] = set()
        """Query ids a resumed snapshot had answered already."""
        self.name = ""
        self.depth = 0

    @property
    def snapshot_id(self) -> int | None:
        return self.recorder.snapshot_id  # type: ignore[no-any-return]

    @property
    def recorded(self) -> int:
        return self.recorder.recorded  # type: ignore[no-any-return]

    @property
    def transactions(self) -> int:
        return self.recorder.transactions  # type: ignore[no-any-return]

    def put(self, item: tuple[str, SearchResponse]) -> None:
        self.recorder.put(item)

    def close(self) -> None:
        self.recorder.close()

    def fail(self, query_id: str, error: str) -> None:
        query_row = self.rows.get(query_id)
        if self.snapshot_id is not None and query_row is not None:
            from rankscope.store.snapshot_writes import record_failure

            record_failure(self.store, self.snapshot_id, query_row, error)

    def finish(self, status: str, error: str | None) -> None:
        """Close the snapshot (nothing read back: the caller has the store)."""
        if self.snapshot_id is not None:
            from rankscope.store.snapshot_writes import finish_snapshot

            finish_snapshot(self.store, self.snapshot_id, status, error)


def _resume(store: Store, endpoint: Endpoint, queries: Sequence[QueryItem], resume: str,
            project: str | None) -> tuple[int, dict[str, int], set[str], str, int]:
    """Take over an unfinished snapshot: its id, query rows, queries answered, name, depth."""
    from rankscope.store.snapshot_writes import resume_snapshot

    info, rows, answered = resume_snapshot(
        store, resume, config_hash=endpoint.config.config_hash,
        queries=queries, **({"project": project} if project is not None else {}))
    return info.id, rows, answered, info.name, info.depth


async def take_snapshot(
    endpoint: Endpoint,
    queries: Sequence[QueryItem],
    *,
    depth: int = DEFAULT_DEPTH,
    name: str | None = None,
    store: Store | str | Path | None = None,
    query_set_name: str = "queries",
    query_set_source: str | None = None,
    keep_raw: bool = False,
    concurrency: int = 4,
    advance: Callable[[int], None] | None = None,
    project: str | None = None,
    resume: str | None = None,
) -> SnapshotOutcome:
    """Send every query to ``endpoint`` and keep the answers (in ``store`` when given).

    Parameters
    ----------
    endpoint : Endpoint
        An open endpoint (:func:`rankscope.search.config.open_endpoint`).
    queries : sequence of QueryItem
        The query set, in order (ids unique).
    depth : int, default 10
        Hits kept per query (a resumed snapshot keeps its own).
    name : str, optional
        The snapshot's name (default: the endpoint's name).
    store : Store, str or Path, optional
        Record the snapshot there, off the event loop, in batched transactions:
        an open :class:`~rankscope.store.db.Store` is written by a thread of
        this process; a store's path or URL is opened and written by a process
        of its own (:class:`~rankscope.store.recorder_process.ProcessRecorder`:
        none of the store's work shares the requests' core; the outcome's
        ``stored`` holds the counts read back).
    query_set_name, query_set_source : str
        How the store names the query set and where it came from.
    keep_raw : bool, default False
        Also store each raw response body (its SHA-256 is always stored).
    concurrency : int, default 4
        Queries in flight at once.
    advance : callable, optional
        Called with 1 after each query (a progress bar).
    project : str, optional
        The store's project to record it in (default: the command line's, ``default``).
    resume : str, optional
        The id or name of an unfinished snapshot of ``store`` (an open one) to
        complete: only the queries it has no answer for are asked (same
        endpoint configuration and query set required).

    Returns
    -------
    SnapshotOutcome

    Raises
    ------
    SearchRequestError
        A query failed for good; the snapshot is recorded as ``failed``.
    ConfigError
        A query lacks a template parameter (checked before anything is sent).
    StoreError
        The answers could not be recorded, or the snapshot to resume cannot be.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ConfigError(f"depth must be a whole number >= 1, not {depth!r}")
    if resume is not None and store is None:
        raise StoreError("resuming a snapshot needs its store")
    if resume is not None and isinstance(store, str | Path):
        raise StoreError("resuming a snapshot needs its store opened (open_store)")
    check_params(endpoint, queries)
    name = name or endpoint.config.name
    started = datetime.now(UTC)
    recording: Any = None
    if isinstance(store, str | Path):  # started first: the child opens the store meanwhile
        from rankscope.store.recorder_process import ProcessRecorder

        recording = ProcessRecorder(store)
    try:
        version = await endpoint.version()
    except BaseException:
        if recording is not None:
            recording.stop()
        raise
    answered: set[str] = set()
    if recording is not None:
        recording.start(**_snapshot_row(
            endpoint, queries, name=name, depth=depth, version=version, keep_raw=keep_raw,
            query_set_name=query_set_name, query_set_source=query_set_source,
            project=project))
    elif store is not None and not isinstance(store, str | Path):
        recording = _open_recording(store, endpoint, queries, name=name, depth=depth,
                                    version=version, keep_raw=keep_raw,
                                    query_set_name=query_set_name,
                                    query_set_source=query_set_source, project=project,
                                    resume=resume)
        answered = recording.answered
        name, depth = recording.name, recording.depth
    todo = [i for i, q in enumerate(queries) if q.query_id not in answered]
    results: list[SearchResponse | None] = [None] * len(queries)
    pending: asyncio.Queue[int] = asyncio.Queue()
    for i in todo:
        pending.put_nowait(i)

    async def worker() -> None:
        while True:
            try:
                i = pending.get_nowait()
            except asyncio.QueueEmpty:
                return
            response = await endpoint.search(queries[i], depth)
            results[i] = response
            if recording is not None:
                recording.put((queries[i].query_id, response))
            if advance is not None:
                advance(1)

    status = "incomplete"
    error: str | None = None
    stored = None
    try:
        workers = [asyncio.ensure_future(worker())
                   for _ in range(max(1, min(concurrency, len(todo))))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*workers, return_exceptions=True)
            raise
        if recording is not None:
            recording.close()  # every answer committed before the snapshot is called complete
        status = "complete"
    except SearchRequestError as exc:
        status, error = "failed", str(exc)
        if recording is not None:
            with contextlib.suppress(StoreError):
                recording.close()
            recording.fail(exc.query_id, str(exc))
            if recording.snapshot_id is not None:
                kept = len(answered) + recording.recorded
                exc.args = (f"{exc}; snapshot #{recording.snapshot_id} kept as failed with "
                            f"{kept} of {len(queries)} queries (rankscope snapshot ... "
                            f"--resume {recording.snapshot_id} asks the rest)",)
        raise
    except Exception as exc:
        status, error = "failed", str(exc)
        raise
    finally:
        if recording is not None:
            try:
                with contextlib.suppress(StoreError):
                    recording.close()  # an interruption too: what arrived is committed first
            finally:  # even interrupted again: a recording process is ended, never left
                stored = recording.finish(status, error)
    done = [r for r in results if r is not None]
    return SnapshotOutcome(
        name=name, depth=depth, engine_version=version, responses=done,
        snapshot_id=None if recording is None else recording.snapshot_id, status=status,
        started_at=started, finished_at=datetime.now(UTC), resumed=len(answered),
        recorder={} if recording is None else {"answers": recording.recorded,
                                               "transactions": recording.transactions},
        stored=None if stored is None else AnswerCounts.stored(stored.info, stored.counted))


def _open_recording(store: Store, endpoint: Endpoint, queries: Sequence[QueryItem], *,
                    name: str, depth: int, version: str | None, keep_raw: bool,
                    query_set_name: str, query_set_source: str | None, project: str | None,
                    resume: str | None) -> _InProcess:
    """Recording into an open store: a new snapshot (started on the recorder's thread,
    while the first requests are under way) or the one to resume."""
    from rankscope.store.recorder import AnswerRecorder
    from rankscope.store.snapshots import Answer

    rows: dict[str, int] = {}
    raw = keep_raw

    def prepare(item: tuple[str, SearchResponse]) -> Answer:
        return Answer.of(rows[item[0]], item[1], keep_raw=raw)

    answered: set[str] = set()
    if resume is not None:
        snapshot_id, found, answered, name, depth = _resume(store, endpoint, queries, resume,
                                                            project)
        rows.update(found)
        recorder = AnswerRecorder(store, snapshot_id, prepare=prepare)
    else:
        recorder = AnswerRecorder(store, start=_starter(
            store, endpoint, queries, rows, name=name, depth=depth, version=version,
            keep_raw=keep_raw, query_set_name=query_set_name,
            query_set_source=query_set_source, project=project), prepare=prepare)
    recording = _InProcess(store, recorder, rows)
    recording.answered, recording.name, recording.depth = answered, name, depth
    return recording
