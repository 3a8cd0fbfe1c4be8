"""Taking a snapshot from files: an endpoint file and a query set, as ``rankscope snapshot``.

:func:`load_job` reads and checks both files before anything is sent;
:func:`preview` renders the first query's request without sending it;
:func:`take` runs the query set (with a progress bar where one shows) through
:func:`rankscope.services.snapshots.take_snapshot`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.services.snapshots import DEFAULT_DEPTH, SnapshotOutcome, take_snapshot

if TYPE_CHECKING:
    from rankscope.search.types import QueryItem
    from rankscope.store.db import Store

__all__ = ["ClientOptions", "SnapshotJob", "load_job", "preview", "take"]


@dataclass(frozen=True)
class ClientOptions:
    """How the endpoint is asked (None: the endpoint file's setting, else the default)."""

    timeout: float | None = None
    concurrency: int | None = None
    rps: float | None = None
    max_retries: int | None = None
    keep_raw: bool = False
    explain: bool = False
    """Record why each result is there (the engine's explanation), where the kind can."""


@dataclass(frozen=True)
class SnapshotJob:
    """An endpoint file and a query set, read and checked."""

    config: Any
    queries: list[QueryItem]
    source: str
    """How the query set was named (a path or ``irds:NAME``)."""

    @property
    def query_set_name(self) -> str:
        """The query set's name in the store: ``irds:NAME``, or the file's stem."""
        return self.source if self.source.startswith("irds:") else Path(self.source).stem


def load_job(endpoint_path: str, queries_path: str) -> SnapshotJob:
    """Read the endpoint file and the query set (every error names its file and line)."""
    from rankscope.search.config import load_endpoint
    from rankscope.search.queries import read_queries

    return SnapshotJob(load_endpoint(endpoint_path), read_queries(queries_path), queries_path)


def _options(client: ClientOptions) -> dict[str, Any]:
    return {"timeout": client.timeout, "concurrency": client.concurrency, "rps": client.rps,
            "max_retries": client.max_retries, "keep_raw": client.keep_raw,
            "explain": client.explain}


def preview(job: SnapshotJob, *, depth: int | None = None,
            client: ClientOptions | None = None) -> dict[str, Any]:
    """The first query's request as it would be sent (nothing is sent)."""
    from rankscope.search.config import open_endpoint

    async def run() -> dict[str, Any]:
        endpoint = open_endpoint(job.config, **_options(client or ClientOptions()))
        try:
            found: dict[str, Any] = endpoint.preview(job.queries[0], depth or DEFAULT_DEPTH)
            return found
        finally:
            await endpoint.aclose()

    return asyncio.run(run())


def take(job: SnapshotJob, *, store: Store | str | None, name: str | None = None,
         depth: int | None = None, client: ClientOptions | None = None,
         resume: str | None = None) -> SnapshotOutcome:
    """Ask every query (``resume``: only those the snapshot has no answer for); the outcome.

    ``store``: an open store, or a store's path or URL (then opened and written by
    a process of its own, see :func:`~rankscope.services.snapshots.take_snapshot`).

    Raises what :func:`~rankscope.services.snapshots.take_snapshot` raises: a
    :class:`~rankscope.errors.SearchRequestError` names the query that failed
    for good (the answers before it stay in the store).
    """
    from rankscope import progress
    from rankscope.search.config import open_endpoint

    client = client or ClientOptions()
    title = name or job.config.name

    async def run() -> SnapshotOutcome:
        endpoint = open_endpoint(job.config, **_options(client))
        try:
            with progress.step_bar(len(job.queries), f"snapshot {title}", unit="query",
                                   lines=True) as advance:
                return await take_snapshot(
                    endpoint, job.queries, depth=depth or DEFAULT_DEPTH, name=title,
                    store=store, query_set_name=job.query_set_name,
                    query_set_source=job.source, keep_raw=client.keep_raw,
                    concurrency=client.concurrency or job.config.concurrency,
                    advance=advance, resume=resume)
        finally:
            await endpoint.aclose()

    return asyncio.run(run())
