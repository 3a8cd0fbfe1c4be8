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
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["KeptByStamp"]

T = TypeVar("T")


class KeptByStamp(Generic[T]):
    """What was computed on some data, kept in this process under the data's stamp,
    per store, the ``keep`` last used (the oldest dropped first).

    A value is put under the stamp read *before* the data it was computed on:
    then no later view can find it under a stamp that has passed.
    """

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._kept: weakref.WeakKeyDictionary[Store, OrderedDict[tuple[Any, ...], T]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def get(self, store: Store, stamp: tuple[Any, ...]) -> T | None:
        """The value kept under ``stamp``, or None."""
        with self._lock:
            kept = self._kept.get(store)
            if kept is None or stamp not in kept:
                return None
            kept.move_to_end(stamp)
            return kept[stamp]

    def put(self, store: Store, stamp: tuple[Any, ...], value: T) -> None:
        """Keep ``value`` under ``stamp`` (dropping the least recently used past ``keep``)."""
        with self._lock:
            kept = self._kept.setdefault(store, OrderedDict())
            kept[stamp] = value
            while len(kept) > self.keep:
                kept.popitem(last=False)
