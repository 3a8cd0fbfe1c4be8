"""ReadAhead: every input read once, in order, at most one ahead of the caller (issue 30,
section 3: a command over many runs holds two of them, not all)."""

from __future__ import annotations

import threading

import pytest

from rankscope.data.read_ahead import ReadAhead


def _reading_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rankscope-read")]


def test_values_in_order_each_read_once() -> None:
    started: list[int] = []

    def read(i: int) -> int:
        started.append(i)
        return i * i

    with ReadAhead(range(6), read) as reading:
        got = list(reading)
    assert got == [0, 1, 4, 9, 16, 25]
    assert sorted(started) == list(range(6))
    assert _reading_threads() == []


def test_never_more_than_one_ahead() -> None:
    """When the caller holds item i, items 0..i+1 at most have been read (the next one is
    submitted only once item i is taken): memory holds two inputs whatever their number."""
    started: list[int] = []
    lock = threading.Lock()

    def read(i: int) -> int:
        with lock:
            started.append(i)
        return i

    seen = []
    for value in ReadAhead(list(range(8)), read):
        with lock:
            seen.append(max(started))
        assert max(started) <= value + 1
    assert seen[-1] == 7


def test_a_failed_read_raises_at_its_item_after_the_ones_before() -> None:
    def read(i: int) -> int:
        if i == 2:
            raise ValueError("run3.txt, line 4: bad score 'x'")
        return i

    got = []
    with pytest.raises(ValueError, match="line 4"):
        for value in ReadAhead([0, 1, 2, 3], read):
            got.append(value)
    assert got == [0, 1]
    assert _reading_threads() == []


def test_closed_early_waits_for_the_pending_read_and_leaves_no_thread() -> None:
    release = threading.Event()

    def read(i: int) -> int:
        if i == 1:
            release.wait(timeout=10)
        return i

    ahead = ReadAhead([0, 1, 2], read)
    it = iter(ahead)
    assert next(it) == 0  # item 1 is now being read (blocked)
    release.set()
    ahead.close()
    assert _reading_threads() == []


def test_nothing_to_read_and_iterated_once() -> None:
    assert list(ReadAhead([], lambda i: i)) == []
    ahead = ReadAhead([1], lambda i: i)
    assert list(ahead) == [1]
    with pytest.raises(RuntimeError, match="once"):
        list(ahead)
