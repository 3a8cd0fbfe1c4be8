"""Recording a snapshot's answers off the event loop, in batches.

A snapshot's queries are sent from an event loop, many at a time; writing
each answer there (a transaction, an fsync on SQLite) would stall every
request in flight. :class:`AnswerRecorder` takes answers without waiting
(:meth:`AnswerRecorder.put`) and records them on a thread of its own: each
transaction holds every answer that arrived while the previous one was being
committed, and those arriving within ``linger`` seconds (0.2 s) of the first
(group commit), so a fast engine costs at most five transactions a
second, not one per query, and the store's contents are the same. A process
killed meanwhile loses the answers of the last ``linger`` seconds, which a
resumed snapshot asks again.

The thread can also start the snapshot (``start``) and turn what is put
into :class:`~rankscope.store.snapshots.Answer` rows (``prepare``), so
that even that work (and the import of the store's models) is done while
the event loop waits on the engine rather than before the first request.

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
from typing import TYPE_CHECKING, Any

from rankscope.errors import StoreError
from rankscope.store.db import shown_url

if TYPE_CHECKING:
    from rankscope.store.db import Store
    from rankscope.store.snapshots import Answer

__all__ = ["AnswerRecorder"]

_STOP = object()


class AnswerRecorder:
    """Records the answers of one snapshot on a writer thread, in batches.

    Parameters
    ----------
    store : Store
        Where to record (its writer runs each batch's transaction).
    snapshot_id : int, optional
        The snapshot the answers belong to; or None with ``start``.
    start : callable, optional
        Run first on the writer thread; returns the snapshot's id (creating it).
    prepare : callable, optional
        Turns each item put into an :class:`~rankscope.store.snapshots.Answer`
        on the writer thread (default: the items are answers).
    max_batch : int, default 500
        Answers per transaction at most.
    linger : float, default 0.2
        Seconds a transaction waits, after its first answer, for more.
    on_recorded : callable, optional
        Called on the writer thread with the number of answers of each
        committed batch.
    """

    def __init__(self, store: Store, snapshot_id: int | None = None, *,
                 start: Callable[[], int] | None = None,
                 prepare: Callable[[Any], Answer] | None = None, max_batch: int = 500,
                 linger: float = 0.2,
                 on_recorded: Callable[[int], None] | None = None) -> None:
        if (snapshot_id is None) == (start is None):
            raise ValueError("give the snapshot's id or how to start it, one of the two")
        self.store = store
        self.snapshot_id = snapshot_id
        """The snapshot's id (None until ``start`` has run)."""
        self.max_batch = max_batch
        self.linger = linger
        self.on_recorded = on_recorded
        self.recorded = 0
        """Answers committed so far."""
        self.transactions = 0
        """Transactions committed so far."""
        self._start = start
        self._prepare = prepare
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="rankscope-recorder",
                                        daemon=True)
        self._thread.start()

    def put(self, item: Any) -> None:
        """Queue an answer (or what ``prepare`` turns into one) for recording; returns at once.

        Raises
        ------
        StoreError
            The snapshot could not be started, or an earlier batch could not
            be recorded (nothing more is taken).
        """
        if self._error is not None:
            raise self._failure()
        if self._closed:
            raise StoreError(f"the recorder of snapshot #{self.snapshot_id} is closed")
        self._queue.put(item)

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
        which = f"snapshot #{self.snapshot_id}" if self.snapshot_id is not None else \
            "the snapshot"
        return StoreError(f"cannot record the answers of {which} in {shown_url(self.store.url)}: "
                          f"{reason}")

    def _run(self) -> None:
        try:
            snapshot_id = self._start() if self._start is not None else self.snapshot_id
        except BaseException as exc:  # kept for the caller's thread: put() and close() raise it
            self._error = exc
            return
        self.snapshot_id = snapshot_id
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
                answers = [self._prepare(i) for i in batch] if self._prepare else batch
                record_answers(self.store, snapshot_id, answers)  # type: ignore[arg-type]
            except BaseException as exc:
                self._error = exc
                return
            self.recorded += len(batch)
            self.transactions += 1
            if self.on_recorded is not None:
                self.on_recorded(len(batch))
