"""Progress bars for long reads and evaluations, on a terminal only.

A bar is drawn on stderr with tqdm (the ``progress`` extra) when stderr is a
terminal and the work is big enough to be worth watching; it is silent when
stderr is not a terminal, when tqdm is not installed, or after
``set_enabled(False)`` (what ``--quiet`` does). ``set_enabled(True)``
insists on bars (a :class:`~rankscope.errors.DependencyError` without tqdm).

Library code reports progress through :func:`byte_bar` and :func:`step_bar`,
which hand back a plain ``advance(n)`` callable, and :func:`status_bar`, which
hands back ``show(done, status)`` (a count so far and a line of figures after
the bar), so nothing else depends on tqdm.

Where stderr is not a terminal (a CI log, a pipe) a bar would be noise; a
``step_bar(..., lines=True)`` writes one line instead every
:data:`LINE_SECONDS` seconds (``$RANKSCOPE_PROGRESS_SECONDS`` changes it;
0 writes a line at every step), e.g. ``snapshot shop: 420/1000 queries
(42%), 61 s``. ``set_enabled(False)`` silences those too.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rankscope.errors import DependencyError

__all__ = ["LINE_SECONDS", "MIN_BYTES", "byte_bar", "enabled", "set_enabled", "status_bar",
           "step_bar"]

LINE_SECONDS = 10.0
"""Seconds between two progress lines when stderr is not a terminal."""

MIN_BYTES = 64 << 20
"""Reads smaller than this finish too fast to deserve a bar."""

_setting: bool | None = None


def set_enabled(value: bool | None) -> None:
    """Force bars on (True) or off (False), or back to automatic (None)."""
    global _setting
    _setting = value


def enabled() -> bool:
    """Whether a bar would be drawn now."""
    if _setting is False:
        return False
    if _setting is None and not _stderr_is_terminal():
        return False
    return _tqdm() is not None or _setting is True


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        if _setting is True:
            raise DependencyError("tqdm", "progress", "showing progress bars") from None
        return None
    return tqdm


def _noop(n: int) -> None:
    del n


@contextmanager
def _bar(total: int, desc: str, **options: Any) -> Iterator[Callable[[int], None]]:
    tqdm = _tqdm() if enabled() else None
    if tqdm is None:
        yield _noop
        return
    bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False, **options)
    try:
        yield bar.update
    finally:
        bar.close()


@contextmanager
def byte_bar(total: int, desc: str) -> Iterator[Callable[[int], None]]:
    """A bar over ``total`` bytes (shown only from :data:`MIN_BYTES` on)."""
    if total < MIN_BYTES:
        yield _noop
        return
    with _bar(total, desc, unit="B", unit_scale=True, unit_divisor=1024) as advance:
        yield advance


def _line_seconds() -> float:
    text = os.environ.get("RANKSCOPE_PROGRESS_SECONDS")
    if text is None:
        return LINE_SECONDS
    try:
        value = float(text)
    except ValueError:
        return LINE_SECONDS
    return value if value >= 0 else LINE_SECONDS


class _Lines:
    """One progress line every ``every`` seconds (on the clock given)."""

    def __init__(self, total: int, desc: str, unit: str, every: float,
                 clock: Callable[[], float]) -> None:
        self.total, self.desc, self.unit, self.every, self.clock = total, desc, unit, every, clock
        self.done = 0
        self.started = clock()
        self.last = self.started

    def advance(self, n: int) -> None:
        self.done += n
        now = self.clock()
        if now - self.last < self.every:
            return
        self.last = now
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        units = self.unit if self.done == 1 else _PLURALS.get(self.unit, self.unit + "s")
        sys.stderr.write(f"{self.desc}: {self.done}/{self.total} {units}{share}, "
                         f"{now - self.started:.0f} s\n")
        sys.stderr.flush()


_PLURALS = {"query": "queries", "batch": "batches"}


@contextmanager
def step_bar(total: int, desc: str, *, unit: str = "step", lines: bool = False,
             clock: Callable[[], float] | None = None, show: bool = True,
             ) -> Iterator[Callable[[int], None]]:
    """A bar over ``total`` steps (queries, chunks, metrics).

    With ``lines``, where stderr is not a terminal and progress is not off,
    a line every :data:`LINE_SECONDS` seconds instead (``clock``:
    ``time.monotonic`` unless given). ``show=False`` turns it off for one call.
    """
    if not show:
        yield _noop
        return
    if lines and _setting is not False and not _stderr_is_terminal():
        yield _Lines(total, desc, unit, _line_seconds(), clock or time.monotonic).advance
        return
    with _bar(total, desc, unit=unit) as advance:
        yield advance


def _no_status(done: int, status: str) -> None:
    del done, status


@contextmanager
def status_bar(total: int, desc: str, *, unit: str = "step") -> Iterator[
        Callable[[int, str], None]]:
    """A bar over ``total`` steps with a status after it: ``show(done, status)`` moves the
    bar to ``done`` and shows ``status`` (counts, costs so far); tqdm adds the rate and
    the time left. Drawn at once, at 0, so a long first step is not a silent one."""
    tqdm = _tqdm() if enabled() else None
    if tqdm is None:
        yield _no_status
        return
    bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False, unit=unit)

    def show(done: int, status: str) -> None:
        bar.n = done
        bar.set_postfix_str(status, refresh=False)
        bar.refresh()

    try:
        yield show
    finally:
        bar.close()
