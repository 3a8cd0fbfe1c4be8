"""trec_eval's qrels reading without a copy of the file (issue 30 section 5).

At 7 M judgments with URL document ids (a 627 MB qrels file) the reading was the
``trec_eval`` command's peak: the file's memory map read whole (612 MB resident),
a copy of it in the C heap (627 MB) and a flag per byte to count the spaces
(627 MB) beside the frame being read. Now polars reads a plain UTF-8 file from
its path (the spaces counted by the one pass that checks the file's whitespace),
a copy is made only for the other files, the map's pages go once copied, and
bytes are counted a block at a time. The frames are checked against the copying
read (the bytes themselves, as before); the memory shapes with tracemalloc
(numpy's and Python's allocations) and the map's resident pages.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from rankscope.data import trec_input, trec_rules
from rankscope.data.trec_dialect import Blob, parse_qrels, read_input
from rankscope.errors import TrecEvalExit

PLAIN = b"".join(b"q%d 0 http://example.org/%d/doc-%d.html %d\n" % (i % 97, i, i * 7, i % 4 - 1)
                 for i in range(200_000))  # about 8 MB
CONTENTS = [
    PLAIN,
    b"q1 0 d#1 1\nq1 0 d2 0\n",  # a '#' inside an id: the copying read
    b"q1 0 d1 1\n#c\nq1 0 d2 0\n",  # a comment line: the line reader
    b"q1\t0 d1 1\nq1 0 d2\r 2\n",  # other whitespace: translated on the copy
    b"q1 0 d1 1\nq2 0 d2 3 extra\n",  # a long line: refused by the fast read
    b"q1 0 d1 1.9\nq1 0 d2 abc\nq2 0 d3 -2\n",  # C atol
    b"q1 0 d\xc3\xa9 1\nq1 0 d2 0\n",  # UTF-8
]


@pytest.mark.parametrize("content", CONTENTS)
def test_a_qrels_file_reads_as_its_bytes(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(content)
    blob = read_input(str(path), "qrels")
    assert blob is not None and blob.path is not None
    try:
        expected = parse_qrels(Blob(content), str(path), "utf-8")  # bytes: the copying read
    except TrecEvalExit as refused:  # a malformed line: the same message
        with pytest.raises(TrecEvalExit) as again:
            parse_qrels(blob, str(path), "utf-8")
        assert (again.value.stderr, again.value.status) == (refused.stderr, refused.status)
        return
    assert parse_qrels(blob, str(path), "utf-8").frame.equals(expected.frame)


def test_a_plain_qrels_file_is_read_from_its_path(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(PLAIN)
    blob = read_input(str(path), "qrels")
    assert blob is not None
    copied: list[int] = []
    as_bytes = Blob.as_bytes

    def counted(self: Blob) -> bytes:
        copied.append(1)
        return as_bytes(self)

    monkeypatch.setattr(Blob, "as_bytes", counted)
    tracemalloc.start()
    try:
        table = parse_qrels(blob, str(path), "utf-8")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert copied == []
    # before: the copy (8 MB) and a flag per byte (8 MB); now a few 1 MB buffers and
    # the levels (1.6 MB)
    assert peak < len(PLAIN) // 2
    expected = parse_qrels(Blob(PLAIN), str(path), "utf-8")
    assert table.frame.equals(expected.frame)


def test_counting_a_byte_makes_no_flag_per_byte() -> None:
    data = bytes(np.random.default_rng(3).integers(30, 36, 9 << 20, dtype=np.uint8))
    tracemalloc.start()
    try:
        counts = [trec_rules.count_byte(data, byte) for byte in (30, 32, 35, 200)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts == [data.count(bytes([b])) for b in (30, 32, 35, 200)]
    assert trec_rules.count_byte(b"", 32) == 0
    assert peak < 2 << 20  # one block's flags (1 MB), not 9 MB


def _resident_kb(address: int) -> int:
    """The resident kB of the mapping holding ``address`` (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("no mapping")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux's smaps")
def test_a_copied_map_lets_its_pages_go(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(PLAIN)
    blob = read_input(str(path), "qrels")
    assert blob is not None and not isinstance(blob.data, bytes)
    address = np.frombuffer(blob.data, dtype=np.uint8, count=1).ctypes.data
    # the window is larger than the file: no pass over it lets pages go before the copy
    monkeypatch.setattr(trec_input, "_WINDOW", 1 << 30)
    assert blob.as_bytes() == PLAIN
    assert _resident_kb(address) < 256  # before: the whole file's 8 MB
    assert blob.as_bytes() == PLAIN  # read again from the file
