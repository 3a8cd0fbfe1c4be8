"""Reading the next of several inputs while the caller works on the one before.

A command evaluating many runs against one qrels (``rankscope evaluate QRELS
RUN1 ... RUN17``, ``compare``, ``report``) reads each run, ranks it and
computes its measures. Reading is mostly polars' parsing, which releases the
interpreter: done on a thread of its own it overlaps the ranking of the run
before. One input is read ahead, never more, so memory holds at most two
runs (the one being evaluated and the next), whatever their number.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["ReadAhead"]

_Item = TypeVar("_Item")
_Read = TypeVar("_Read")


class ReadAhead(Generic[_Item, _Read]):
    """``read`` of each item, in order, the next one read on a thread meanwhile.

    The first item's reading starts when the object is made, so work done
    between making it and iterating (reading the qrels, say) overlaps it too.
    A reading that fails raises, when its item is reached, what ``read``
    raised. Iterate once; :meth:`close` (or the end of a ``with`` block)
    waits for a reading still running and discards it.
    """

    def __init__(self, items: Sequence[_Item], read: Callable[[_Item], _Read]) -> None:
        self._items = list(items)
        self._read = read
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="rankscope-read") if self._items else None
        self._next: Future[_Read] | None = self._submit(0)

    def _submit(self, i: int) -> Future[_Read] | None:
        if self._pool is None or i >= len(self._items):
            return None
        return self._pool.submit(self._read, self._items[i])

    def __iter__(self) -> Iterator[_Read]:
        try:
            for i in range(len(self._items)):
                current, self._next = self._next, None
                if current is None:
                    raise RuntimeError("a ReadAhead is iterated once")
                # held in a list, popped as it is yielded: this suspended frame keeps no
                # reference, so a consumer handing its own away frees the value
                value = [current.result()]
                del current  # the future would keep the value alive
                self._next = self._submit(i + 1)
                yield value.pop()
        finally:
            self.close()

    def close(self) -> None:
        """Stop reading ahead (waits for a reading under way; its result is dropped)."""
        pending, self._next = self._next, None
        if pending is not None:
            pending.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __enter__(self) -> ReadAhead[_Item, _Read]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
