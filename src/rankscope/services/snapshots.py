"""Taking a snapshot: run a query set against an endpoint, keep what came back.

:func:`take_snapshot` sends every query (a few at a time), and with a store
records each query's answer in its own transaction as soon as it arrives;
the snapshot is marked ``complete`` only after the last one. The first query
that fails for good (a non-retryable answer, retries spent, a body that does
not map) ends the snapshot as ``failed``: what was recorded before stays,
and the error names the query. An interruption (Ctrl-C) ends it as
``incomplete``; a killed process leaves it ``running`` in the table, which
the store reports as ``incomplete``.

:func:`write_run` writes the answers as a TREC run in the engine's order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError, RankscopeWarning, SearchRequestError
from rankscope.search.types import Endpoint, QueryItem, SearchResponse

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = [
    "DEFAULT_DEPTH",
    "RUN_SCORES",
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


@dataclass
class SnapshotOutcome:
    """What a snapshot run produced."""

    name: str
    depth: int
    engine_version: str | None
    responses: list[SearchResponse]
    """One per query, in the query set's order."""
    snapshot_id: int | None = None
    status: str = "complete"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def n_hits(self) -> int:
        """Hits over all queries."""
        return sum(len(r.hits) for r in self.responses)


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


def _store_hits(response: SearchResponse) -> list[Any]:
    from rankscope.store.snapshots import HitRow

    return [HitRow(rank=i, doc_id=h.doc_id, score=h.score, title=h.title, snippet=h.snippet,
                   url=h.url, image=h.image, fields=dict(h.fields))
            for i, h in enumerate(response.hits, start=1)]


async def take_snapshot(
    endpoint: Endpoint,
    queries: Sequence[QueryItem],
    *,
    depth: int = DEFAULT_DEPTH,
    name: str | None = None,
    store: Store | None = None,
    query_set_name: str = "queries",
    query_set_source: str | None = None,
    keep_raw: bool = False,
    concurrency: int = 4,
    advance: Callable[[int], None] | None = None,
    project: str | None = None,
) -> SnapshotOutcome:
    """Send every query to ``endpoint`` and keep the answers (in ``store`` when given).

    Parameters
    ----------
    endpoint : Endpoint
        An open endpoint (:func:`rankscope.search.config.open_endpoint`).
    queries : sequence of QueryItem
        The query set, in order (ids unique).
    depth : int, default 10
        Hits kept per query.
    name : str, optional
        The snapshot's name (default: the endpoint's name).
    store : Store, optional
        Record the snapshot there, one transaction per query.
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

    Returns
    -------
    SnapshotOutcome

    Raises
    ------
    SearchRequestError
        A query failed for good; the snapshot is recorded as ``failed``.
    ConfigError
        A query lacks a template parameter (checked before anything is sent).
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ConfigError(f"depth must be a whole number >= 1, not {depth!r}")
    check_params(endpoint, queries)
    name = name or endpoint.config.name
    started = datetime.now(UTC)
    version = await endpoint.version()
    snapshot_id: int | None = None
    rows: dict[str, int] = {}
    if store is not None:
        from rankscope.store.snapshots import NewQuery, start_snapshot

        snapshot_id, rows = start_snapshot(
            store, name=name, endpoint_name=endpoint.config.name, kind=endpoint.config.kind,
            config=endpoint.config.settings, config_hash=endpoint.config.config_hash,
            query_set_name=query_set_name, query_set_source=query_set_source,
            queries=[NewQuery(q.query_id, q.text, dict(q.params), q.need) for q in queries],
            depth=depth, engine_version=version, keep_raw=keep_raw,
            **({"project": project} if project is not None else {}))
    results: list[SearchResponse | None] = [None] * len(queries)
    pending: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(queries)):
        pending.put_nowait(i)

    async def worker() -> None:
        while True:
            try:
                i = pending.get_nowait()
            except asyncio.QueueEmpty:
                return
            response = await endpoint.search(queries[i], depth)
            results[i] = response
            if store is not None and snapshot_id is not None:
                from rankscope.store.snapshots import record_query

                record_query(store, snapshot_id, rows[queries[i].query_id],
                             request=response.request, latency_ms=response.latency_ms,
                             raw_sha256=response.raw_sha256,
                             raw=response.raw if keep_raw else None,
                             total_hits=response.total_hits, hits=_store_hits(response))
            if advance is not None:
                advance(1)

    status = "incomplete"
    error: str | None = None
    try:
        workers = [asyncio.ensure_future(worker())
                   for _ in range(max(1, min(concurrency, len(queries))))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*workers, return_exceptions=True)
            raise
        status = "complete"
    except SearchRequestError as exc:
        status, error = "failed", str(exc)
        if store is not None and snapshot_id is not None:
            from rankscope.store.snapshots import record_failure

            query_row = rows.get(exc.query_id)
            if query_row is not None:
                record_failure(store, snapshot_id, query_row, str(exc))
            kept = sum(r is not None for r in results)
            exc.args = (f"{exc}; snapshot #{snapshot_id} kept as failed with {kept} of "
                        f"{len(queries)} queries",)
        raise
    except Exception as exc:
        status, error = "failed", str(exc)
        raise
    finally:
        if store is not None and snapshot_id is not None:
            from rankscope.store.snapshots import finish_snapshot

            finish_snapshot(store, snapshot_id, status, error)
    done = [r for r in results if r is not None]
    return SnapshotOutcome(name=name, depth=depth, engine_version=version, responses=done,
                           snapshot_id=snapshot_id, status=status, started_at=started,
                           finished_at=datetime.now(UTC))


RUN_SCORES = ("rank", "engine")
"""What the score column of a run written from a snapshot holds: ``rank`` (the default,
``depth - rank + 1``: strictly decreasing in the engine's order) or ``engine`` (the
engine's own scores, where every hit has one and they do not increase)."""


def run_scores(scores: Sequence[float | None], depth: int, *,
               source: str = "rank") -> list[float]:
    """The run-file scores of one query's hits, given the engine's scores in rank order.

    By default (``source="rank"``) ``depth - rank + 1``: strictly decreasing
    down the engine's list, so any tool that orders a run by score (and
    breaks ties its own way) scores exactly the order the engine returned.
    With ``source="engine"`` the engine's own scores when every hit has one
    and they do not increase down the list (equal scores are kept, and
    tools then break those ties their own way); otherwise the rank scores.

    Examples
    --------
    >>> run_scores([3.5, 2.0, 2.0], 10)
    [10.0, 9.0, 8.0]
    >>> run_scores([3.5, 2.0, 2.0], 10, source="engine")
    [3.5, 2.0, 2.0]
    >>> run_scores([1.0, None, 0.5], 10, source="engine")
    [10.0, 9.0, 8.0]
    >>> run_scores([1.0, 4.0], 5, source="engine")
    [5.0, 4.0]
    """
    if source not in RUN_SCORES:
        raise ConfigError(f"run scores are 'rank' or 'engine', not {source!r}")
    if source == "engine" and _engine_scores_usable(scores):
        return [float(s) for s in scores if s is not None]
    return [float(depth - rank + 1) for rank in range(1, len(scores) + 1)]


def _engine_scores_usable(scores: Sequence[float | None]) -> bool:
    """Every hit has a score and they do not increase down the list."""
    engine = [s for s in scores if s is not None]
    return len(engine) == len(scores) and all(a >= b for a, b in itertools.pairwise(engine))


def trec_lines(ranked: Iterable[tuple[str, Sequence[tuple[str, float | None]]]], depth: int,
               tag: str, *, scores: str = "rank") -> list[str]:
    """TREC run lines from ``(query_id, [(doc_id, engine score), ...])`` in rank order.

    ``scores`` is ``rank`` (default: strictly decreasing in the engine's
    order) or ``engine`` (see :func:`run_scores`). With ``engine``, a
    :class:`~rankscope.errors.RankscopeWarning` counts the queries whose
    engine scores tie (other tools will order those hits their own way, not
    as the engine did) and those written with rank scores instead (a hit
    without a score, or scores that rise down the list).
    """
    tag = "_".join(tag.split()) or "rankscope"
    lines = []
    tied = fallback = 0
    for qid, hits in ranked:
        engine = [score for _, score in hits]
        written = run_scores(engine, depth, source=scores)
        if scores == "engine":
            if not _engine_scores_usable(engine):
                fallback += 1
            elif len(set(written)) < len(written):
                tied += 1
        for rank, ((doc_id, _), score) in enumerate(zip(hits, written, strict=True), start=1):
            lines.append(f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n")
    if tied or fallback:
        parts = []
        if tied:
            parts.append(f"{tied} quer{'y has' if tied == 1 else 'ies have'} tied engine "
                         "scores: evaluation tools order those hits by their own tie rule "
                         "(trec_eval: document id), not as the engine returned them")
        if fallback:
            parts.append(f"{fallback} quer{'y' if fallback == 1 else 'ies'} written with rank "
                         "scores (a hit without a score, or scores rising down the list)")
        warnings.warn("run scores from the engine: " + "; ".join(parts), RankscopeWarning,
                      stacklevel=2)
    return lines


def run_lines(responses: Sequence[SearchResponse], depth: int, tag: str, *,
              scores: str = "rank") -> list[str]:
    """TREC run lines, queries in order, hits in the engine's order (rank from 1).

    The score is ``depth - rank + 1`` (strictly decreasing in the engine's
    order), or with ``scores="engine"`` the engine's own (see :func:`trec_lines`).
    """
    return trec_lines(((r.query.query_id, [(h.doc_id, h.score) for h in r.hits])
                       for r in responses), depth, tag, scores=scores)


def write_run(path: str | Path, responses: Sequence[SearchResponse], depth: int,
              tag: str, *, scores: str = "rank") -> int:
    """Write a TREC run of the answers atomically; the number of lines written."""
    return write_lines(path, run_lines(responses, depth, tag, scores=scores))


def write_lines(path: str | Path, lines: Sequence[str]) -> int:
    """Write TREC run lines atomically (a temporary file renamed into place); lines written.

    A document id with white space cannot be written to a TREC file and is
    refused (:class:`~rankscope.errors.ConfigError` naming the query).
    """
    for line in lines:
        parts = line.split()
        if len(parts) != 6:
            raise ConfigError(f"query {parts[0] if parts else '?'}: a query or document id with "
                              "white space cannot go in a TREC run; export JSONL instead",
                              value=line.rstrip("\n"))
    target = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(lines)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes it private; a run file is not
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return len(lines)
