"""Recording a snapshot from a process of its own: the store's work off the requests' core.

A snapshot's requests keep one core busy (the event loop and the HTTP
client); every CPU second the store spends in the same process (importing
SQLAlchemy and the driver, opening the store, turning answers into rows,
committing) is taken from them, whatever thread does it.
:class:`ProcessRecorder` starts a child process (``python -m
rankscope.store.recorder_process``) as soon as it is made: the child imports
the store and opens it (creating or migrating it as :func:`open_store` does)
while the parent sends its first requests, then records the answers with
:class:`~rankscope.store.recorder.AnswerRecorder`, the one writer of
snapshot answers, exactly as in one process. The parent only hands each
answer to a thread of its own, which pickles what arrived into one frame on
the child's stdin; nothing of the store is imported in the parent.

The conversation, in order (frames: a 4-byte length and a pickle, each way):
``open`` (the store's path or URL: never on a command line, where ``ps``
shows it), ``start`` (what :func:`~rankscope.store.snapshot_writes.start_snapshot`
needs), ``answers`` (``(query_id, SearchResponse)`` pairs), ``close`` (commit
every answer sent; the child says how many), ``fail`` (a query that failed
for good), ``finish`` (the snapshot's status; the child answers with the
snapshot as stored and its answers' counts, read back, and exits).

Nothing acknowledged is lost: :meth:`ProcessRecorder.close` returns once
the child has committed every answer put, and raises the store's error if it
could not. A child that fails says why (a :class:`StoreError` in the parent,
at the next :meth:`~ProcessRecorder.put` or at the end) and first marks the
snapshot ``failed`` where it can. A parent that dies (killed, a crash)
closes the child's stdin: the child commits what it received and exits,
leaving the snapshot ``running`` under the parent's pid, which the store
reports as ``incomplete`` (``--resume`` asks the rest). The child ignores
Ctrl-C: the parent, interrupted, ends the snapshot as ``incomplete``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from rankscope.errors import StoreError
from rankscope.store.db import shown_url

if TYPE_CHECKING:
    from rankscope.search.types import SearchResponse

__all__ = ["ProcessRecorder", "StoredSnapshot"]

_LENGTH = struct.Struct("!I")
_STOP = ("stop",)
_LINGER = 0.05
"""Seconds between two frames of answers to the child, at least."""
_CLOSE_TIMEOUT = 600.0
"""Seconds the parent waits for the child's answer to ``close`` or ``finish`` at most
(SQLite waits up to 30 s for a lock; a child that says nothing for this long is stuck)."""


def _write_frame(stream: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class StoredSnapshot:
    """The snapshot as the child read it back once finished: its row and its answers' counts."""

    def __init__(self, info: dict[str, Any], counted: dict[str, Any]) -> None:
        self.info = info
        """The :class:`~rankscope.store.snapshots.SnapshotInfo`'s fields, a dict."""
        self.counted = counted
        """:func:`~rankscope.store.snapshots.answer_counts` of the snapshot."""


class ProcessRecorder:
    """Records one new snapshot in a child process (see the module's description).

    Parameters
    ----------
    target : str or Path
        The store's path or URL (opened, created when needed, by the child).

    The methods follow the snapshot: :meth:`start` once, :meth:`put` each
    answer, :meth:`close` (everything committed), :meth:`fail` for a query
    that failed for good, :meth:`finish` last (always: it also ends the child).
    """

    def __init__(self, target: str | Path) -> None:
        from rankscope.store.db import check_target, require

        require()  # the extra's absence said here, not by the child
        check_target(target, create=True)
        self.target = str(target)
        self.snapshot_id: int | None = None
        """The snapshot's id (known once :meth:`close` or :meth:`finish` returned)."""
        self.recorded = 0
        """Answers committed (known once :meth:`close` returned)."""
        self.transactions = 0
        """Transactions they took."""
        self._error: StoreError | None = None
        self._replies: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._finished = False
        self._closed = False  # every answer put is committed (close() returned since)
        package = str(Path(__file__).resolve().parents[2])  # this rankscope, whatever sys.path
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package, env.get("PYTHONPATH")) if p)
        # what the child says on stderr (a crash's last words) goes to a file: a pipe that
        # nobody reads until the end could fill and stop it
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self._child = subprocess.Popen(
            [sys.executable, "-m", "rankscope.store.recorder_process"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        self._outbox.put(("open", self.target))
        self._sender = threading.Thread(target=self._send, name="rankscope-recorder-send",
                                        daemon=True)
        self._reader = threading.Thread(target=self._read, name="rankscope-recorder-read",
                                        daemon=True)
        self._sender.start()
        self._reader.start()

    # the parent's two threads ------------------------------------------------------------

    def _send(self) -> None:
        """Pickle what was put onto the child's stdin, a frame every ``_LINGER`` seconds at
        most (what arrived meanwhile, in order): waking for every answer would take the
        event loop's thread from it as often."""
        stdin = cast(IO[bytes], self._child.stdin)  # Popen with stdin=PIPE
        try:
            while True:
                items = [self._outbox.get()]
                while True:
                    try:
                        items.append(self._outbox.get_nowait())
                    except queue.Empty:
                        break
                answers: list[Any] = []
                for item in items:
                    if item[0] == "answer":
                        answers.append(item[1])
                        continue
                    if answers:
                        _write_frame(stdin, ("answers", answers))
                        answers = []
                    if item is _STOP:
                        return
                    _write_frame(stdin, item)
                if answers:
                    _write_frame(stdin, ("answers", answers))
                self._wake.wait(_LINGER)  # set when a message other than an answer comes
                self._wake.clear()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the child has ended: the reader says why
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        """Take the child's answers; its error, or its end before ``finish``, is kept."""
        stdout = cast(IO[bytes], self._child.stdout)  # Popen with stdout=PIPE
        while True:
            try:
                message = _read_frame(stdout)
            except (OSError, EOFError, pickle.UnpicklingError):
                message = None
            if message is None:
                if not self._finished and self._error is None:
                    self._error = self._ended()
                self._replies.put(None)
                return
            if message[0] == "error":
                self._error = StoreError(message[1])
            self._replies.put(message)

    def _ended(self) -> StoreError:
        code = self._child.wait()
        self._stderr.seek(0)
        said = self._stderr.read()
        last = said.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        return StoreError(f"the process recording into the store {shown_url(self.target)} ended "
                          f"(exit code {code}: {last[0]}) before the snapshot was finished")

    # what the snapshot calls --------------------------------------------------------------

    def _tell(self, message: tuple[Any, ...]) -> None:
        """Queue a message other than an answer, sent at once (with the answers before it)."""
        self._outbox.put(message)
        self._wake.set()

    def start(self, **snapshot: Any) -> None:
        """Start the snapshot in the store (``start_snapshot``'s arguments but ``store``)."""
        self._tell(("start", snapshot))

    def put(self, item: tuple[str, SearchResponse]) -> None:
        """Queue ``(query_id, response)`` for recording; returns at once.

        Raises
        ------
        StoreError
            The child could not open the store, start the snapshot or record
            an earlier answer (nothing more is taken).
        """
        if self._error is not None:
            raise self._error
        self._closed = False
        self._outbox.put(("answer", item))

    def _wait(self, kind: str) -> Any:
        while True:
            try:
                message = self._replies.get(timeout=_CLOSE_TIMEOUT)
            except queue.Empty:
                self._error = StoreError(f"the process recording into the store "
                                         f"{shown_url(self.target)} did not answer in "
                                         f"{_CLOSE_TIMEOUT:g} s")
                self._child.kill()
                raise self._error from None
            if message is None or message[0] == "error":
                raise self._error or StoreError(f"the process recording into the store "
                                                f"{shown_url(self.target)} ended")
            if message[0] == kind:
                return message

    def close(self) -> None:
        """Wait until every answer put is committed; raise if one could not be."""
        if self._error is not None:
            raise self._error
        if self._closed:
            return
        self._tell(("close",))
        _, self.snapshot_id, self.recorded, self.transactions = self._wait("closed")
        self._closed = True

    def fail(self, query_id: str, error: str) -> None:
        """Record that the query ``query_id`` failed for good (with ``error``)."""
        self._tell(("fail", query_id, error))

    def finish(self, status: str, error: str | None = None) -> StoredSnapshot | None:
        """End the snapshot as ``status`` and the child; the snapshot as stored (None: the
        child had failed already, its error is :meth:`put`'s and :meth:`close`'s)."""
        try:
            if self._error is not None:
                return None
            self._tell(("finish", status, error))
            try:
                _, self.snapshot_id, info, counted = self._wait("finished")
            except StoreError:
                return None
            self._finished = True
            return StoredSnapshot(info, counted)
        finally:
            self.stop()

    def stop(self) -> None:
        """End the child (what it received is committed first) and the parent's threads."""
        self._tell(_STOP)
        self._sender.join()
        try:
            self._child.wait(timeout=_CLOSE_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
        self._reader.join()
        self._stderr.close()
        if self._child.stdout is not None:
            self._child.stdout.close()

    @property
    def error(self) -> StoreError | None:
        """Why the child could not record, once it said so (None: no error so far)."""
        return self._error


# the child --------------------------------------------------------------------------------


def _child_inbox(stream: IO[bytes]) -> queue.SimpleQueue[Any]:
    """The parent's messages, read by a thread as they come (the pipe never fills while
    the store is being opened); None at the end (the parent is done, or dead)."""
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                message = _read_frame(stream)
            except (OSError, EOFError, pickle.UnpicklingError):
                message = None
            inbox.put(message)
            if message is None:
                return

    threading.Thread(target=read, name="rankscope-recorder-inbox", daemon=True).start()
    return inbox


def _record(inbox: queue.SimpleQueue[Any], send: Callable[..., None]) -> None:
    """Open the store, then do what the parent asks, in order (see the module)."""
    import dataclasses
    import gc

    # importing SQLAlchemy, the models and the driver makes objects by the hundred thousand,
    # none of them garbage: the collector's passes over them cost about 0.05 s of CPU here
    # (with the command, the engine and the database on two cores); off until the store is
    # open, then what exists is set aside (never scanned again) and it is on again
    gc.disable()
    from rankscope.store.db import open_store
    from rankscope.store.recorder import AnswerRecorder
    from rankscope.store.snapshot_writes import (
        finish_snapshot,
        record_failure,
        start_snapshot,
    )
    from rankscope.store.snapshots import Answer, answer_counts, find_snapshot, owner_tag

    opening = inbox.get()
    if opening is None:
        return
    try:
        store = open_store(opening[1])
    finally:
        gc.freeze()
        gc.enable()
    recorder: AnswerRecorder | None = None
    rows: dict[str, int] = {}
    try:
        while True:
            message = inbox.get()
            if message is None:  # the parent is gone: keep what arrived, leave it running
                if recorder is not None:
                    recorder.close()
                return
            kind = message[0]
            if kind == "start":
                snapshot = dict(message[1])
                keep_raw = bool(snapshot.get("keep_raw", False))

                def start(snapshot: dict[str, Any] = snapshot) -> int:
                    snapshot_id, found = start_snapshot(
                        store, owner=owner_tag(os.getppid()), **snapshot)
                    rows.update(found)
                    return snapshot_id

                def prepare(item: tuple[str, SearchResponse], keep: bool = keep_raw) -> Answer:
                    return Answer.of(rows[item[0]], item[1], keep_raw=keep)

                recorder = AnswerRecorder(store, start=start, prepare=prepare)
            elif recorder is None:
                raise StoreError(f"the snapshot was not started before {kind!r}")
            elif kind == "answers":
                for item in message[1]:
                    recorder.put(item)
            elif kind == "close":
                recorder.close()
                send("closed", recorder.snapshot_id, recorder.recorded, recorder.transactions)
            elif kind == "fail":
                recorder.close()
                snapshot_id = recorder.snapshot_id
                if snapshot_id is not None and message[1] in rows:
                    record_failure(store, snapshot_id, rows[message[1]], message[2])
            elif kind == "finish":
                recorder.close()
                snapshot_id = recorder.snapshot_id
                if snapshot_id is None:
                    raise StoreError("the snapshot was not started")
                finish_snapshot(store, snapshot_id, message[1], message[2])
                info = find_snapshot(store, str(snapshot_id))  # plain values: the parent
                send("finished", snapshot_id, dataclasses.asdict(info),  # imports no store
                     answer_counts(store, snapshot_id))
                return
    except BaseException as exc:
        if recorder is not None and recorder.snapshot_id is not None:
            # say so in the store too, where it can (the error sent is the first one)
            with contextlib.suppress(Exception):
                finish_snapshot(store, recorder.snapshot_id, "failed", str(exc))
        raise
    finally:
        store.close()


def main() -> int:
    """The child: record what the parent sends (stdin), answer on stdout; exit 0 when done."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    inbox = _child_inbox(sys.stdin.buffer)
    out = sys.stdout.buffer

    def send(*message: Any) -> None:
        _write_frame(out, message)

    try:
        _record(inbox, send)
    except BaseException as exc:
        if isinstance(exc, StoreError):
            reason = str(exc)
        else:
            orig = getattr(exc, "orig", None)
            text = str(orig if orig is not None else exc).strip()
            reason = f"cannot record into the store: {type(exc).__name__}: " + (
                text.splitlines()[0] if text else "no message")
        with contextlib.suppress(OSError):
            send("error", reason)
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # everything is committed and said: skip the interpreter's teardown (SQLAlchemy's
    # modules, the driver), which the parent, waiting for the end, would pay for
    os._exit(code)
