"""Recording a snapshot's answers off the event loop, in batches.

A snapshot's queries are sent from an event loop, many at a time; writing
each answer there (a transaction, an fsync on SQLite) would stall every
request in flight. :class:`AnswerRecorder` takes answers without waiting
(:meth:`AnswerRecorder.put`) and records them on a thread of its own: each
transaction holds every answer that arrived while the previous one was being
committed, and those arriving within ``linger`` seconds (50 ms) of the first
(group commit), so a fast engine costs at most a score of transactions a
second, not one per query, and the store's contents are the same. A process
killed meanwhile loses the answers of the last ``linger`` seconds, which a
resumed snapshot asks again.

Nothing acknowledged is lost: :meth:`AnswerRecorder.close` returns only once
every answer put is committed, and raises the store's error if one could
not be (the snapshot then cannot be complete). Counters
(:attr:`AnswerRecorder.recorded`, :attr:`AnswerRecorder.transactions`) say
what was done.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from rankscope.errors import StoreError
from rankscope.store.db import Store
from rankscope.store.snapshots import Answer

__all__ = ["AnswerRecorder"]

_STOP = object()


class AnswerRecorder:
    """Records answers of snapshot ``snapshot_id`` on a writer thread, in batches.

    Parameters
    ----------
    store : Store
        Where to record (its writer runs each batch's transaction).
    snapshot_id : int
        The snapshot the answers belong to.
    max_batch : int, default 500
        Answers per transaction at most.
    linger : float, default 0.05
        Seconds a transaction waits, after its first answer, for more.
    on_recorded : callable, optional
        Called on the writer thread with the number of answers of each
        committed batch.
    """

    def __init__(self, store: Store, snapshot_id: int, *, max_batch: int = 500,
                 linger: float = 0.05,
                 on_recorded: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.snapshot_id = snapshot_id
        self.max_batch = max_batch
        self.linger = linger
        self.on_recorded = on_recorded
        self.recorded = 0
        """Answers committed so far."""
        self.transactions = 0
        """Transactions committed so far."""
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="rankscope-recorder",
                                        daemon=True)
        self._thread.start()

    def put(self, answer: Answer) -> None:
        """Queue ``answer`` for recording (returns at once).

        Raises
        ------
        StoreError
            An earlier batch could not be recorded (nothing more is taken).
        """
        if self._error is not None:
            raise self._failure()
        if self._closed:
            raise StoreError(f"the recorder of snapshot #{self.snapshot_id} is closed")
        self._queue.put(answer)

    def close(self) -> None:
        """Wait until every answer put is committed; raise if one could not be."""
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
            self._thread.join()
        if self._error is not None:
            raise self._failure()

    def _failure(self) -> StoreError:
        error = self._error
        if isinstance(error, StoreError):
            return error
        orig = getattr(error, "orig", None)
        reason = str(orig if orig is not None else error).splitlines()[0]
        return StoreError(f"cannot record the answers of snapshot #{self.snapshot_id} in "
                          f"{self.store.url}: {reason}")

    def _run(self) -> None:
        from rankscope.store.snapshot_writes import record_answers

        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            until = time.monotonic() + self.linger
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get(timeout=max(0.0, until - time.monotonic()))
                except queue.Empty:
                    break
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)
            try:
                record_answers(self.store, self.snapshot_id, batch)  # type: ignore[arg-type]
            except BaseException as exc:  # kept for the caller's thread: close() raises it
                self._error = exc
                return
            self.recorded += len(batch)
            self.transactions += 1
            if self.on_recorded is not None:
                self.on_recorded(len(batch))
