"""Values kept per server process under a stamp that changes with what they were made of.

One mechanism for every such value: an evaluation's frozen data and its
headline (under :func:`~rankscope.services.campaign_data.data_stamp`), a
finished snapshot's hits (under
:func:`~rankscope.services.snapshot_hits.snapshot_state`).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["KeptByStamp"]

T = TypeVar("T")


class KeptByStamp(Generic[T]):
    """What was computed on some data, kept in this process under the data's stamp,
    per store, the ``keep`` last used (the oldest dropped first).

    With ``size`` (a value's bytes) and ``budget``, the values kept per store also weigh at
    most ``budget`` bytes together: the least recently used are dropped until they do, and
    a value heavier than the whole budget is not kept at all (a snapshot of a million hits
    is read again on each view rather than held by a long-running server).

    A value is put under the stamp read *before* the data it was computed on:
    then no later view can find it under a stamp that has passed.
    """

    def __init__(self, keep: int, *, budget: int | None = None,
                 size: Callable[[T], int] | None = None) -> None:
        self.keep = keep
        self.budget = budget
        self._size = size
        self._kept: weakref.WeakKeyDictionary[
            Store, OrderedDict[tuple[Any, ...], tuple[T, int]]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, store: Store, stamp: tuple[Any, ...]) -> T | None:
        """The value kept under ``stamp``, or None."""
        with self._lock:
            kept = self._kept.get(store)
            if kept is None or stamp not in kept:
                return None
            kept.move_to_end(stamp)
            return kept[stamp][0]

    def put(self, store: Store, stamp: tuple[Any, ...], value: T) -> None:
        """Keep ``value`` under ``stamp`` (dropping the least recently used past ``keep``,
        and past ``budget`` bytes when sized)."""
        weight = 0 if self._size is None else self._size(value)
        with self._lock:
            kept = self._kept.setdefault(store, OrderedDict())
            kept.pop(stamp, None)
            if self.budget is None or weight <= self.budget:
                kept[stamp] = (value, weight)
            # else heavier than everything kept may be: read again when asked
            total = sum(w for _, w in kept.values())
            while len(kept) > self.keep or (self.budget is not None and total > self.budget):
                total -= kept.popitem(last=False)[1][1]

    def weight(self, store: Store) -> int:
        """The bytes of the values kept for ``store`` (0 when not sized)."""
        with self._lock:
            return sum(w for _, w in self._kept.get(store, OrderedDict()).values())
