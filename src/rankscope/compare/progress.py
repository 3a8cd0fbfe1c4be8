"""Progress bars for long comparisons, through :mod:`rankscope.progress`.

A bar appears only where :mod:`rankscope.progress` draws one (stderr is a
terminal, tqdm is installed, not ``--quiet``); ``show=False`` turns it off
for one call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rankscope.progress import step_bar

__all__ = ["bar"]


def _noop(n: int) -> None:
    del n


@contextmanager
def bar(total: int, desc: str, *, unit: str = "step", show: bool = True
        ) -> Iterator[Callable[[int], None]]:
    """A context giving ``advance(n)``; silent when ``show`` is False."""
    if not show:
        yield _noop
        return
    with step_bar(total, desc, unit=unit) as advance:
        yield advance
