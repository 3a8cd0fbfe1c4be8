"""The one retrying HTTP transport every client of rankscope uses.

The LLM-judge client (:mod:`rankscope.llm_judge.client`) and the search-endpoint
client (:mod:`rankscope.search.client`) send their requests through
:func:`exchange` (one request: its counts in :class:`ClientStats`, a timeout
or a connection error turned into a :class:`NoAnswer`) inside
:func:`retrying` (the loop: an attempt that asks for another try, a
:class:`Retryable`, waits :meth:`Backoff.delay` and is tried again, up to
``max_retries`` times). The waiting rule is written once, here and in
docs/snapshots.md: exactly what a ``Retry-After`` header asks (delay-seconds
or an HTTP date, at most ``max_retry_after``), else exponential backoff with
full jitter, the n-th retry (from 0) a uniform draw in
``[0, min(cap, base * 2**n))``. :class:`Pacer` caps how many requests start
per unit of time. What to retry stays each client's own (the judge's
fail-fast rules, the search client's refusals and reasons); the hosts a
client reaches are :mod:`rankscope.outbound`'s rules, in the ``httpx``
client each passes in.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["Backoff", "ClientStats", "NoAnswer", "Pacer", "Retryable", "Sleep", "exchange",
           "full_jitter", "parse_retry_after", "retry_after_of", "retrying"]

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value.

    Parameters
    ----------
    value : str or None
        The header as sent: delay-seconds (``"12"``) or an HTTP date
        (``"Wed, 21 Oct 2015 07:28:00 GMT"``), RFC 9110 section 10.2.3.
    now : float
        The current Unix time (``time.time()``), to turn a date into a delay.

    Returns
    -------
    float or None
        The delay in seconds (never negative), or None when the header is
        missing or unreadable.

    Examples
    --------
    >>> parse_retry_after("3", 0.0)
    3.0
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", 4.0)
    6.0
    >>> parse_retry_after("soon", 0.0) is None
    True
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def full_jitter(retry: int, base: float, cap: float, rng: Callable[[], float]) -> float:
    """The "full jitter" backoff: a uniform draw in ``[0, min(cap, base * 2**retry))``.

    Spreads retries of many clients over the whole window, which keeps them
    from hammering a recovering server in step (Brooker, "Exponential Backoff
    and Jitter", AWS Architecture Blog, 2015).

    Examples
    --------
    >>> full_jitter(3, 0.5, 30.0, lambda: 0.5)
    2.0
    >>> full_jitter(10, 0.5, 30.0, lambda: 1.0)
    30.0
    """
    return rng() * min(cap, base * 2.0**retry)


class Pacer:
    """Lets requests start at most once every ``interval`` seconds (shared by all tasks).

    Parameters
    ----------
    interval : float
        The minimum time between two starts (``60 / rpm`` or ``1 / rps``);
        0 or less paces nothing.
    sleep, clock : callables, optional
        ``asyncio.sleep`` and ``time.monotonic`` unless given (tests inject
        instant ones).
    """

    def __init__(
        self,
        interval: float,
        *,
        sleep: Sleep | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.interval = interval
        self._sleep: Sleep = sleep or asyncio.sleep
        self._clock = clock or time.monotonic
        self._lock: asyncio.Lock | None = None
        self._next_start = 0.0

    async def wait(self) -> None:
        """Return when the next request may start (at once when pacing is off)."""
        if self.interval <= 0:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = self._clock()
            if self._next_start > now:
                await self._sleep(self._next_start - now)
            self._next_start = max(now, self._next_start) + self.interval


def retry_after_of(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The delay a response's ``Retry-After`` header asks, from ``now`` (Unix time; default
    the clock's); None: none asked."""
    return parse_retry_after(headers.get("retry-after"), time.time() if now is None else now)


@dataclass(frozen=True)
class Backoff:
    """How long to wait before a retry: the one rule (see the module's documentation).

    Examples
    --------
    >>> rule = Backoff(base=1.0, cap=10.0, max_retry_after=300.0)
    >>> [rule.delay(n, None, lambda: 1.0) for n in range(5)]
    [1.0, 2.0, 4.0, 8.0, 10.0]
    >>> rule.delay(0, 500.0, lambda: 1.0), rule.delay(2, None, lambda: 0.25)
    (300.0, 1.0)
    """

    base: float
    cap: float
    max_retry_after: float

    def delay(self, retry: int, retry_after: float | None, rng: Callable[[], float]) -> float:
        """Seconds before retry ``retry`` (0 for the first)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return full_jitter(retry, self.base, self.cap, rng)


@dataclass
class ClientStats:
    """What a client sent and what came back.

    ``outcomes`` counts each answer's status (``"200"``, ``"503"``) and each
    failure without one (``"timeout"``, ``"connection error"``, and what the
    client adds); ``in_flight`` is the number of requests sent and not
    answered yet, ``peak_in_flight`` the most there ever were at once.
    """

    requests: int = 0
    retries: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    peak_in_flight: int = 0

    @property
    def statuses(self) -> dict[str, int]:
        """``outcomes`` (the LLM judge's name for them)."""
        return self.outcomes

    def count(self, what: str) -> None:
        """Count one outcome."""
        self.outcomes[what] = self.outcomes.get(what, 0) + 1


@dataclass(frozen=True)
class NoAnswer:
    """A request that got no HTTP answer: ``kind`` ``"timeout"`` or ``"connection error"``."""

    kind: str
    detail: str


@dataclass(frozen=True)
class Retryable:
    """An attempt's verdict: try again (after :meth:`Backoff.delay`).

    ``reason`` is short and kept per retry (``"HTTP 503"``, ``"timeout"``);
    ``message`` says what happened, for the error once the retries are spent.
    """

    reason: str
    message: str
    status: int | None = None
    retry_after: float | None = None


async def exchange(http: Any, method: str, url: str, *, stats: ClientStats, attempt: int,
                   **options: Any) -> Any:
    """Send one request with an ``httpx.AsyncClient``; the response, or a :class:`NoAnswer`.

    Counts the request (a retry when ``attempt`` > 0), the requests in
    flight, and a timeout or a connection error; a status is the caller's to
    count. :class:`~rankscope.errors.OutboundError` (a refused host) is raised
    as it comes.
    """
    import httpx

    stats.requests += 1
    if attempt:
        stats.retries += 1
    stats.in_flight += 1
    stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
    try:
        return await http.request(method, url, **options)
    except httpx.TimeoutException:
        stats.count("timeout")
        return NoAnswer("timeout", "")
    except httpx.TransportError as exc:
        stats.count("connection error")
        return NoAnswer("connection error", str(exc) or type(exc).__name__)
    finally:
        stats.in_flight -= 1


async def retrying(attempt: Callable[[int, tuple[str, ...]], Awaitable[T | Retryable]], *,
                   max_retries: int, backoff: Backoff, sleep: Sleep,
                   rng: Callable[[], float]) -> T | Retryable:
    """Call ``attempt(n, reasons so far)`` until it gives something else than a
    :class:`Retryable`, waiting :meth:`Backoff.delay` between tries; after
    ``max_retries`` retries, the last :class:`Retryable` is returned (the
    caller says it gave up, in its own words). What ``attempt`` raises goes
    through at once.

    Examples
    --------
    >>> async def flaky(n, reasons):
    ...     return "ok" if n == 2 else Retryable("HTTP 503", "busy", 503)
    >>> async def no_wait(seconds):
    ...     pass
    >>> asyncio.run(retrying(flaky, max_retries=3, backoff=Backoff(1, 8, 60),
    ...                      sleep=no_wait, rng=lambda: 0.5))
    'ok'
    """
    reasons: list[str] = []
    last = Retryable("no request sent", "no request sent")
    for n in range(max_retries + 1):
        outcome = await attempt(n, tuple(reasons))
        if not isinstance(outcome, Retryable):
            return outcome
        last = outcome
        reasons.append(outcome.reason)
        if n < max_retries:
            await sleep(backoff.delay(n, outcome.retry_after, rng))
    return last
