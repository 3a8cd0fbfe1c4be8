"""The one HTTP client every remote search kind uses (httpx, async).

- at most ``concurrency`` requests in flight and, with ``rps``, at most that
  many starting per second;
- a timeout per request;
- retries of connection errors, timeouts, 429 and 5xx answers through the one
  retrying transport (:mod:`rankscope.retry`): exponential backoff and full
  jitter (the n-th retry waits a uniform draw in
  ``[0, min(max_backoff, backoff * 2**n))``), or exactly what a
  ``Retry-After`` header asks (delay-seconds or an HTTP date; at most
  ``max_retry_after``), up to ``max_retries`` retries, each with its reason;
- any other answer that is not 2xx (400, 401, 403, 404, ...) ends the query
  at once with :class:`~rankscope.errors.SearchRequestError`: one line naming
  the query, the request and what the server said;
- redirects and hosts by the rules of :mod:`rankscope.outbound` (a redirect
  never changes the method, never carries the credentials to another
  origin; with a host policy, only the hosts it allows are reached): a
  refusal ends the query at once, unretried.

``sleep``, ``rng`` and ``clock`` are injectable so tests of the waiting are
instant and exact.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankscope.errors import DependencyError, OutboundError, SearchError, SearchRequestError
from rankscope.outbound.hosts import HostPolicy
from rankscope.outbound.transport import guarded_transport
from rankscope.retry import (
    Backoff,
    ClientStats,
    NoAnswer,
    Pacer,
    Retryable,
    Sleep,
    exchange,
    retry_after_of,
    retrying,
)
from rankscope.search.credentials import resolve_auth, resolve_params
from rankscope.search.types import DEFAULT_CONCURRENCY, EndpointConfig

__all__ = ["HttpRequest", "Reply", "SearchClient", "server_message"]


@dataclass(frozen=True)
class HttpRequest:
    """One rendered request: what is sent, and what a snapshot records of it."""

    method: str
    url: str
    params: Sequence[tuple[str, str]] = ()
    body: Any = None
    """A JSON value sent as the body (None: no body)."""

    def describe(self) -> dict[str, Any]:
        """The request as stored with a snapshot (no credentials: headers are left out)."""
        out: dict[str, Any] = {"method": self.method, "url": self.url}
        if self.params:
            out["params"] = [[k, v] for k, v in self.params]
        if self.body is not None:
            out["body"] = self.body
        return out


@dataclass(frozen=True)
class Reply:
    """A successful answer."""

    status: int
    body: bytes
    latency_ms: float
    attempts: int
    headers: Mapping[str, str] = field(default_factory=dict)
    retried: tuple[str, ...] = ()
    """Why each earlier attempt was retried (``HTTP 503``, ``timeout``, ``connection error``)."""


_TAGS = re.compile(r"<[^>]+>")


def server_message(body: bytes, limit: int = 200) -> str:
    """What an error body says, in one short line.

    Knows Elasticsearch / OpenSearch (``error.root_cause[0]``, ``error.type``
    and ``error.reason``, or an old-style string ``error``), Solr
    (``error.msg``) and the usual ``message`` / ``detail`` keys; otherwise the
    start of the body as text (HTML tags dropped).

    Examples
    --------
    >>> server_message(b'{"error": {"type": "parsing_exception", "reason": "bad"}, "status": 400}')
    'parsing_exception: bad'
    >>> server_message(b'{"error": {"msg": "no field", "code": 400}}')
    'no field'
    """
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    found: str | None = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            causes = error.get("root_cause")
            cause = causes[0] if isinstance(causes, list) and causes else error
            if isinstance(cause, dict) and ("type" in cause or "reason" in cause):
                found = ": ".join(str(cause[k]) for k in ("type", "reason") if cause.get(k))
            elif "msg" in error:
                found = str(error["msg"])
            elif "message" in error:
                found = str(error["message"])
        elif isinstance(error, str):
            found = error
        if found is None:
            for key in ("message", "detail", "error_description"):
                if isinstance(data.get(key), str):
                    found = data[key]
                    break
    if found is None:
        found = _TAGS.sub(" ", text)
    found = " ".join(found.split())
    return found if len(found) <= limit else found[: limit - 3] + "..."


class SearchClient:
    """Send search requests with limits and retries (see the module docstring).

    Parameters
    ----------
    timeout : float, default 10
        Seconds for one request (connect, write, read).
    concurrency : int, default 4
        Requests in flight at most.
    rps : float, optional
        Requests started per second at most.
    max_retries : int, default 4
        Retries after the first request.
    backoff, max_backoff : float, default 0.5 and 30
        The backoff's base and cap, in seconds.
    max_retry_after : float, default 120
        The longest ``Retry-After`` honoured.
    headers : mapping, optional
        Sent with every request (never stored).
    credentials : mapping, optional
        Headers that carry credentials: sent with every request, never
        stored, never sent to another origin after a redirect.
    credential_params : sequence of (name, value), optional
        Query parameters that carry credentials (``params_env``): added to
        every request, never stored or shown in a message.
    verify_tls : bool, default True
        Check the server's certificate.
    outbound : HostPolicy, optional
        The hosts that may be reached (the web app's); None: any.
    sleep, rng, clock : callables, optional
        ``asyncio.sleep``, ``random.random`` and ``time.monotonic`` (the
        pacing's clock) unless given.
    transport : httpx transport, optional
        For tests (e.g. ``httpx.MockTransport``): sends what the redirect and
        host rules let through.
    """

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        concurrency: int = 4,
        rps: float | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
        credential_params: Sequence[tuple[str, str]] = (),
        verify_tls: bool = True,
        outbound: HostPolicy | None = None,
        sleep: Sleep | None = None,
        rng: Callable[[], float] | None = None,
        transport: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise DependencyError("httpx", "search", "querying a remote search engine") from None
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._backoff = Backoff(backoff, max_backoff, max_retry_after)
        self._sleep: Sleep = sleep or asyncio.sleep
        self._rng = rng or random.random
        self._limit = asyncio.Semaphore(concurrency)
        self._pacer = Pacer(1.0 / rps if rps else 0.0, sleep=self._sleep, clock=clock)
        all_headers = {"Accept": "application/json", "User-Agent": "rankscope"}
        all_headers.update(headers or {})
        all_headers.update(credentials or {})
        self._credential_params = tuple(credential_params)
        self.transport = guarded_transport(transport, policy=outbound,
                                           secret_headers=list(credentials or {}),
                                           verify=verify_tls)
        self._http = httpx.AsyncClient(timeout=timeout, headers=all_headers,
                                       transport=self.transport, follow_redirects=False)
        self.stats = ClientStats()

    @classmethod
    def for_config(cls, config: EndpointConfig, **options: Any) -> SearchClient:
        """A client with the file's limits, overridden by ``options`` where given."""
        settings = config.settings
        headers = {str(k): str(v) for k, v in (settings.get("headers") or {}).items()}
        allowed_env = options.get("allowed_env")

        def pick(key: str, default: Any) -> Any:
            value = options.get(key)
            return value if value is not None else settings.get(key, default)

        return cls(
            timeout=float(pick("timeout", 10.0)),
            concurrency=int(pick("concurrency", DEFAULT_CONCURRENCY)),
            rps=pick("rps", None),
            max_retries=int(pick("max_retries", 4)),
            backoff=float(pick("backoff", 0.5)),
            max_backoff=float(pick("max_backoff", 30.0)),
            max_retry_after=float(pick("max_retry_after", 120.0)),
            headers=headers,
            credentials=resolve_auth(config, allowed_env=allowed_env),
            credential_params=resolve_params(config, allowed_env=allowed_env),
            verify_tls=bool(settings.get("verify_tls", True)),
            outbound=options.get("outbound"),
            sleep=options.get("sleep"),
            rng=options.get("rng"),
            transport=options.get("transport"),
            clock=options.get("clock"),
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    def _delay(self, retry: int, retry_after: float | None) -> float:
        return self._backoff.delay(retry, retry_after, self._rng)

    async def send(self, request: HttpRequest, *, query_id: str) -> Reply:
        """Send ``request`` for query ``query_id``, retried as needed (:mod:`rankscope.retry`).

        Raises
        ------
        SearchRequestError
            A non-retryable answer, or the retries are spent.
        """
        where = f"{request.method} {request.url}"
        params = (*request.params, *self._credential_params)

        async def attempt(n: int, retried: tuple[str, ...]) -> Reply | Retryable:
            await self._pacer.wait()
            async with self._limit:
                started = time.perf_counter()
                try:
                    response = await exchange(self._http, request.method, request.url,
                                              stats=self.stats, attempt=n,
                                              params=params or None, json=request.body)
                except OutboundError as exc:
                    self.stats.count("refused")
                    raise SearchRequestError(query_id, f"{where}: {exc}",
                                             attempts=n + 1) from None
            if isinstance(response, NoAnswer):
                said = (f"timed out after {self.timeout:g}s" if response.kind == "timeout"
                        else f"connection error ({response.detail})")
                return Retryable(response.kind, said)
            elapsed = (time.perf_counter() - started) * 1000.0
            status = response.status_code
            self.stats.count(str(status))
            if 200 <= status < 300:
                return Reply(status, response.content, elapsed, n + 1, dict(response.headers),
                             retried)
            said = server_message(response.content)
            if status != 429 and status < 500:
                raise SearchRequestError(query_id, f"HTTP {status} from {where}: {said}",
                                         status=status, attempts=n + 1)
            return Retryable(f"HTTP {status}", f"HTTP {status}: {said}", status,
                             retry_after_of(response.headers, time.time()))

        outcome = await retrying(attempt, max_retries=self.max_retries, backoff=self._backoff,
                                 sleep=self._sleep, rng=self._rng)
        if isinstance(outcome, Reply):
            return outcome
        raise SearchRequestError(
            query_id,
            f"gave up after {self.max_retries + 1} requests to {where}; last: {outcome.message}",
            status=outcome.status, attempts=self.max_retries + 1,
        )

    async def get_json(self, url: str) -> Any:
        """One GET without retries (engine version probes); None on any failure.

        Raises
        ------
        SearchError
            The host or a redirect is refused (:mod:`rankscope.outbound`).
        """
        import httpx

        try:
            async with self._limit:
                response = await self._http.get(url, params=self._credential_params or None)
        except OutboundError as exc:
            raise SearchError(f"the version probe GET {url}: {exc}") from None
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        try:
            return response.json()
        except ValueError:
            return None
