"""Pieces every HTTP client of rankscope shares: Retry-After parsing and pacing.

The LLM-judge client (:mod:`rankscope.llm_judge.client`) and the search-endpoint
client (:mod:`rankscope.search.client`) both wait as a server's
``Retry-After`` header asks and both cap how many requests start per unit of
time; the rules live here once. Each client keeps its own backoff formula
(the judge's half jitter, the search client's full jitter), so neither
changes the other's behaviour.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable

__all__ = ["Pacer", "Sleep", "full_jitter", "parse_retry_after"]

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
