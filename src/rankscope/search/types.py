"""The contract every search endpoint keeps, whatever engine is behind it.

An :class:`Endpoint` answers one :class:`QueryItem` with a :class:`SearchResponse`:
the ranked :class:`Hit` list plus what a snapshot must keep to be re-scored and
shown later (the rendered request, latency, a hash of the raw answer). Remote
kinds (Elasticsearch, OpenSearch, Solr, any HTTP JSON API) and the embedded
engine implement the same protocol, so the snapshot service never knows which
one it drives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from rankscope.search.files import FileScope

__all__ = ["DEFAULT_CONCURRENCY", "Endpoint", "EndpointConfig", "Hit", "QueryItem",
           "SearchResponse"]

DEFAULT_CONCURRENCY = 4
"""Requests in flight to an endpoint whose file does not say (``concurrency``)."""


@dataclass(frozen=True)
class QueryItem:
    """One query of a query set: its id, its text and named template parameters.

    ``params`` values are strings when read from a file and may be any JSON
    value when given from Python; ``need`` is the information need a grader
    reads (optional).
    """

    query_id: str
    text: str
    params: Mapping[str, Any] = field(default_factory=dict)
    need: str | None = None


@dataclass(frozen=True)
class Hit:
    """One ranked result as the engine returned it (rank = position in the list, from 1)."""

    doc_id: str
    score: float | None = None
    title: str | None = None
    snippet: str | None = None
    url: str | None = None
    image: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    explanation: Any = None
    """Why the engine ranked it there (a tree of ``value``, ``description``, ``details``),
    when the endpoint was asked to explain (``--explain``) and the engine could."""


@dataclass(frozen=True)
class SearchResponse:
    """What one query returned, with what a snapshot keeps about the exchange."""

    query: QueryItem
    hits: tuple[Hit, ...]
    request: Mapping[str, Any]
    """The rendered request: ``method``, ``url``, and ``body`` and/or ``params``."""
    latency_ms: float
    raw_sha256: str
    """SHA-256 (hex) of the raw response body (of the pages' bodies joined by newlines)."""
    raw: bytes | None = None
    """The raw response body (the pages' bodies joined by newlines), when asked to keep it."""
    total_hits: int | None = None
    """How many documents matched, where the engine says (ES ``hits.total``, Solr ``numFound``)."""
    partial: str | None = None
    """Why the engine's answer is partial, when it says so (ES/OpenSearch ``timed_out`` or
    failed shards, Solr ``partialResults``); None: a whole answer."""
    short: str | None = None
    """Why fewer than the depth came back although the engine matched more (the endpoint
    cannot page, a page came back empty); None: nothing is missing that paging could get."""
    duplicates: int = 0
    """Hits dropped because their document was already listed above (the first is kept)."""
    pages: int = 1
    """Requests sent to fill the depth (1: one page was enough)."""
    retried: tuple[str, ...] = ()
    """Why each retried request was retried (``HTTP 503``, ``timeout``, ...), every page."""


@dataclass(frozen=True)
class EndpointConfig:
    """An endpoint description read from TOML (credentials only as env-variable names).

    ``settings`` holds every key of the file as read (after ``template_file`` is
    resolved into ``template`` and other tools' placeholders are converted);
    ``config_hash`` is a SHA-256 of the canonical JSON of the settings that
    shape results (not the name, timeouts or rate limits), so two snapshots
    taken with the same configuration can be recognised.
    """

    kind: str
    name: str
    settings: Mapping[str, Any]
    config_hash: str
    source: str | None = None
    base_dir: str | None = None
    """The directory relative paths in ``settings`` are resolved against (the TOML's)."""
    files: FileScope | None = None
    """Where the files it names must be (a web user's endpoint); None: anywhere."""

    @property
    def concurrency(self) -> int:
        """Requests in flight at most: the file's ``concurrency``, else
        :data:`DEFAULT_CONCURRENCY`; every snapshot of the endpoint sends that many queries
        at once (a command's option may lower or raise it)."""
        return int(self.settings.get("concurrency", DEFAULT_CONCURRENCY))


@runtime_checkable
class Endpoint(Protocol):
    """A search engine that answers queries (use as an async context manager)."""

    config: EndpointConfig

    async def search(self, query: QueryItem, depth: int) -> SearchResponse:
        """Return at most ``depth`` hits for ``query``, best first."""
        ...

    async def version(self) -> str | None:
        """The engine's version where it reports one, else ``None``."""
        ...

    def needed_params(self) -> set[str]:
        """Named parameters every query must give (its templates use them, nothing else does)."""
        ...

    def preview(self, query: QueryItem, depth: int) -> dict[str, Any]:
        """The request that :meth:`search` would send for ``query``, sending nothing."""
        ...

    async def aclose(self) -> None:
        """Release connections and files."""
        ...
