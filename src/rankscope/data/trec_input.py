"""trec_eval's input files as read from disk: memory-mapped, their layout found in one pass.

A :class:`Blob` holds a file's content (mapped, or bytes read from standard
input) and the facts about its bytes that decide how
:mod:`rankscope.data.trec_dialect` parses it (:class:`Layout`: its spaces,
odd whitespace, lines); :func:`read_input` opens one as trec_eval does,
:func:`decode_choice` picks the encoding of a set of them. Apart from the
parsing so the reading of bytes (pages let go, chunks counted) changes in one
place.
"""

from __future__ import annotations

import mmap
import os
import sys
from dataclasses import dataclass

import numpy as np

__all__ = ["Blob", "Layout", "decode_choice", "read_input"]

_ODD_WS = (b"\t", b"\r", b"\v", b"\f")
_CHUNK = 1 << 20
_WINDOW = 1 << 24  # bytes of a memory-mapped input passed over before its pages are let go


@dataclass(frozen=True)
class Layout:
    """Facts about a results file that tell whether a columnar read is exact.

    Attributes
    ----------
    odd_whitespace : bool
        A tab, carriage return, vertical tab or form feed occurs.
    double_space : bool
        Two spaces in a row occur.
    loose_space : bool
        A space is followed by a byte <= 32 (a space, a newline, a control
        byte) or ends the file: double spaces, spaces ending a line.
    spaces : int
        How many spaces the file holds (-1 when not counted).
    """

    odd_whitespace: bool
    double_space: bool
    loose_space: bool
    spaces: int


@dataclass(frozen=True)
class Blob:
    """An input file's content: bytes, or a memory map of the file (no copy).

    ``path`` is set when the content is a file the CSV reader can open itself.
    A memory map's pages are let go as each pass over them moves on (they stay
    in the page cache): read whole, they counted as resident memory beside
    the CSV reader's own map of the same file (334 MB twice at 10^7 lines).
    """

    data: bytes | mmap.mmap
    path: str | None = None

    def _release(self, start: int, end: int) -> None:
        """Let go of a memory map's pages from ``start`` to ``end`` (bytes: nothing)."""
        if isinstance(self.data, mmap.mmap) and end > start:
            page = start - start % mmap.PAGESIZE
            self.data.madvise(mmap.MADV_DONTNEED, page, end - page)

    def contains(self, needle: bytes) -> bool:
        """Whether the single byte ``needle`` occurs anywhere (memchr speed)."""
        if isinstance(self.data, bytes):
            return self.data.find(needle) >= 0
        size = len(self.data)
        for start in range(0, size, _WINDOW):
            end = min(size, start + _WINDOW)
            found = self.data.find(needle, start, end) >= 0
            self._release(start, end)
            if found:
                return True
        return False

    def layout(self) -> Layout:
        """What the fast run reader must know about the bytes (see :class:`Layout`)."""
        loose, spaces, other_low = self._scan(double_only=False)
        odd = other_low and any(self.contains(ch) for ch in _ODD_WS)
        double = loose and self._scan(double_only=True)[0]
        return Layout(odd, double, loose, spaces)

    def _scan(self, double_only: bool) -> tuple[bool, int, bool]:
        """One pass over the bytes, in 1 MB chunks and reused buffers.

        Returns whether a space is followed by a byte <= 32 or ends the file
        (``double_only``: by a space; the pass then stops at the first), how
        many spaces there are, and whether a byte < 32 other than a newline
        occurs. ``find(b"  ")`` stops at every space of a run file and is
        about five times slower.
        """
        size = len(self.data)
        found = False
        spaces = low = newlines = 0
        space = np.empty(_CHUNK + 1, dtype=bool)
        after = np.empty(_CHUNK, dtype=bool)
        low_buf = np.empty(_CHUNK + 1, dtype=bool)
        for start in range(0, size, _CHUNK):
            count = min(size - start, _CHUNK + 1)  # overlap one byte with the next chunk
            chunk = np.frombuffer(self.data, dtype=np.uint8, count=count, offset=start)
            is_space = np.equal(chunk, 32, out=space[:count])
            if double_only:
                follows = np.logical_and(is_space[1:], is_space[:-1], out=after[:count - 1])
                if follows.any():
                    return True, spaces, False
                continue
            own = min(count, _CHUNK)  # this chunk's bytes, without the overlap
            spaces += int(np.count_nonzero(is_space[:own]))
            is_low = np.less_equal(chunk, 32, out=low_buf[:count])
            low += int(np.count_nonzero(is_low[:own]))
            newlines += int(np.count_nonzero(np.equal(chunk[:own], 10, out=after[:own])))
            follows = np.logical_and(is_low[1:], is_space[:-1], out=after[:count - 1])
            found = found or bool(follows.any())
            if start % _WINDOW == _WINDOW - _CHUNK:  # the last chunk of a window read
                self._release(start + _CHUNK - _WINDOW, start + _CHUNK)
        if size and self.data[size - 1] == 32:
            found = not double_only
        self._release(size - size % _WINDOW, size)
        return found, spaces, low != spaces + newlines

    def is_ascii(self) -> bool:
        """Whether every byte is below 128."""
        if isinstance(self.data, bytes):
            return self.data.isascii()
        size = len(self.data)
        for start in range(0, size, _WINDOW):
            count = min(_WINDOW, size - start)
            high = int(np.frombuffer(self.data, dtype=np.uint8, count=count, offset=start).max())
            self._release(start, start + count)
            if high >= 128:
                return False
        return True

    def as_bytes(self) -> bytes:
        """The content as bytes (copies a memory map, whose pages are then let go: the
        copy is what is read, the map's pages are not held resident beside it and the
        frame read from it, 612 MB for a 10^7-judgment qrels file of URLs)."""
        if isinstance(self.data, bytes):
            return self.data
        copy = self.data[:]
        self._release(0, len(self.data))
        return copy


def read_input(path: str, what: str, stdin_allowed: bool = False) -> Blob | None:
    """An input file's content, or None when trec_eval "cannot read" it.

    trec_eval reads a results file whose name starts with ``-`` from stdin; a
    missing, unreadable or empty file cannot be read. Files are memory-mapped.
    """
    if stdin_allowed and path.startswith("-"):
        data = sys.stdin.buffer.read()
        return Blob(data) if data else None
    try:
        with open(os.fsencode(path), "rb") as handle:
            return Blob(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ), path)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None


def decode_choice(*blobs: Blob) -> str:
    """The text encoding for ids: UTF-8 if every file is UTF-8, else Latin-1.

    Latin-1 maps each byte to one character, so ids compare and print exactly
    as trec_eval's bytes do whatever the files hold.
    """
    for blob in blobs:
        if not blob.is_ascii():
            try:
                blob.as_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return "latin-1"
    return "utf-8"
