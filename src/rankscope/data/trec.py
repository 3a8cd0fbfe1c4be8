"""TREC qrels and run files: fast bulk parsing with an exact, slow error path.

A qrels line is ``query iteration document grade``; a run line is
``query Q0 document rank score tag``. Lines end at ``\\n``, ``\\r\\n`` or
``\\r``; fields are separated by runs of ASCII spaces, tabs, form feeds or
vertical tabs (what :meth:`bytes.split` splits on); a line whose first field
starts with ``#`` is a comment and a line of nothing but whitespace is
skipped (``#`` inside a later field is part of it). A UTF-8 byte order mark
at the start of the file is ignored. The rank column of a run is ignored, as
trec_eval ignores it.

The data is cut at line ends into chunks parsed in parallel, each by the
first of three readers that accepts it:

1. *regular*: single spaces (or single tabs) between fields, polars' CSV
   reader straight on the bytes;
2. *irregular*: any other whitespace layout, read as whole lines by polars
   and split with vectorized string operations (no Python regex);
3. *slow*: line by line in Python; it names the file, the 1-based line and
   the value of the first bad line.

A chunk goes to the next reader whenever the current one refuses it or leaves
any hole, so the readers must agree on every valid file (tests/perf checks
that they do on tricky whitespace and comments). The readers of one chunk are
in :mod:`rankscope.data.trec_chunks`; this module cuts, combines and opens files.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data._io import Kind, RowLocator, check_text_head
from rankscope.data.trec_chunks import (
    Parsed,
    _empty,
    _parse_chunk,
    _read_slow,
    _value_name,
)
from rankscope.errors import FileAccessError

if TYPE_CHECKING:
    from rankscope.data._io import PathLike

__all__ = [
    "CHUNK_BYTES",
    "iter_trec_chunks",
    "parse_trec",
    "read_trec_file",
]

CHUNK_BYTES = 16 << 20
"""Bytes per parse task: small enough to overlap two tasks, large enough to amortize."""

_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"


COMPACT_FROM = 64 << 20
"""Bytes of a run or qrels file from which its query ids are held as codes: where the 12
bytes a row saved matter (10^7 lines: about 120 MB). Below, strings: a small run evaluated
again and again (a validation set after every epoch) is compared faster as strings than
through its codes (0.3-0.4 ms of a 2.5 ms call at 10^4 lines)."""


# -- splitting and combining ------------------------------------------------------------------


def _lines_in(data: bytes) -> int:
    """How many line breaks ``bytes.splitlines`` sees in ``data`` (which ends a line)."""
    if b"\r" not in data:
        return data.count(b"\n")
    return len(data.splitlines())


def _cut(data: bytes, size: int) -> Iterator[bytes]:
    """Slices of ``data`` ending at a line break, each about ``size`` bytes."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


class _Values:
    """The value column of every chunk, copied into one array as the chunks arrive.

    Polars leaves a file read in chunks with one column chunk per piece, and
    every later ``to_numpy`` of it copies the whole column (80 MB at 10^7
    lines, alive beside the ranking). Here each chunk's values go into one
    array as soon as it is parsed, and its own column is dropped: the frame
    gets one zero-copy column at the end, with no second copy of the whole.
    The array is sized from the first chunk's rows per byte; its untouched
    tail is never resident, and it grows (one copy) if the estimate is short.
    """

    def __init__(self, total_bytes: int) -> None:
        self._total = total_bytes
        self._array: npt.NDArray[np.float64] | None = None
        self.rows = 0

    def take(self, frame: pl.DataFrame, name: str, n_bytes: int) -> pl.DataFrame:
        """Copy ``frame``'s column ``name`` in; return the frame without it."""
        values = frame.get_column(name).to_numpy()
        end = self.rows + values.size
        if self._array is None or end > self._array.size:
            expected = int(self._total * values.size / max(n_bytes, 1) * 1.25) + 1024
            capacity = max(end, expected, 0 if self._array is None else 2 * self._array.size)
            grown = np.empty(capacity, dtype=np.float64)
            if self._array is not None:
                grown[: self.rows] = self._array[: self.rows]
            self._array = grown
        self._array[self.rows:end] = values
        self.rows = end
        return frame.drop(name)

    def column(self, name: str) -> pl.Series:
        """The values taken so far, as one polars column (no copy)."""
        if self._array is None:
            return pl.Series(name, [], dtype=pl.Float64)
        return pl.Series(name, self._array[: self.rows])


def _merge(parts: list[Parsed], kind: Kind, values: _Values | None = None,
           compact: bool = False) -> Parsed:
    """One frame of the parsed chunks (``values``: their value column, taken apart)."""
    frames = [f for f, _ in parts if f.height]
    tags: dict[str, None] = {}
    for _, chunk_tags in parts:
        tags.update(dict.fromkeys(chunk_tags))
    if not frames:
        return _empty(kind, compact), list(tags)
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=False)
    if kind == "qrels" and frame.get_column("doc_id").n_chunks() > 1:
        # the judged documents are gathered from at scattered lines by every run's matching
        # (each match confirmed on the strings): one chunk now, made while little else is
        # alive, instead of a copy into one chunk at each matching, beside the ranking
        frame = frame.with_columns(frame.get_column("doc_id").rechunk())
    if values is not None:
        frame = frame.with_columns(values.column(_value_name(kind)))
    return frame, list(tags)


def _workers() -> int:
    return max(1, min(4, pl.thread_pool_size()))


def _parse_all(
    chunks: Iterator[bytes],
    kind: Kind,
    source: str,
    on_chunk: Callable[[int], None] | None,
    lines_before: Callable[[int], int],
    total_bytes: int,
) -> Parsed:
    """Parse chunks two at a time; the slow path runs on a chunk no bulk reader took.

    ``lines_before(offset)`` counts the lines before a byte offset; it is
    only called for such a chunk (counting lines costs a pass over the data).
    ``total_bytes`` (the input's size) sizes the one array of values.

    A run or qrels of :data:`COMPACT_FROM` bytes or more has its query ids read
    as a polars Categorical (global categories): a query id repeats once per
    ranked or judged document, and a string view takes 16 bytes a row where a
    code takes 4 (at 10^7 lines, 40 MB instead of 160).
    :class:`~rankscope.data.tables.Run` and :class:`~rankscope.data.tables.Qrels`
    hold them so and give strings to whoever reads their ``frame``.
    """
    compact = total_bytes >= COMPACT_FROM
    parts: list[Parsed] = []
    offset = 0
    values: _Values | None = None

    def consume(chunk: bytes, parsed: Parsed | None) -> None:
        nonlocal offset
        if parsed is None:
            parsed = _read_slow(chunk, kind, source, lines_before(offset) + 1, compact)
        if values is not None:
            parsed = (values.take(parsed[0], _value_name(kind), len(chunk)), parsed[1])
        parts.append(parsed)
        offset += len(chunk)
        if on_chunk is not None:
            on_chunk(len(chunk))

    first = next(chunks, None)
    if first is None:
        return _empty(kind, compact), []
    second = next(chunks, None)
    if second is None:  # small input: no thread pool
        consume(first, _parse_chunk(first, kind, compact))
        return _merge(parts, kind, compact=compact)
    values = _Values(total_bytes)  # several chunks: their values gathered in one array
    with ThreadPoolExecutor(_workers()) as pool:
        pending = [(c, pool.submit(_parse_chunk, c, kind, compact)) for c in (first, second)]
        for chunk in chunks:
            done_chunk, future = pending.pop(0)
            pending.append((chunk, pool.submit(_parse_chunk, chunk, kind, compact)))
            consume(done_chunk, future.result())
        for done_chunk, future in pending:
            consume(done_chunk, future.result())
    return _merge(parts, kind, values, compact)


def _file_lines_before(path: PathLike) -> Callable[[int], int]:
    """Count the lines before a byte offset (past any BOM) by reading the file again."""

    def count(offset: int) -> int:
        with open(path, "rb") as handle:
            head = handle.read(len(_BOM))
            if head != _BOM:
                handle.seek(0)
            return _lines_in(handle.read(offset))

    return count


def parse_trec(data: bytes, source: str, kind: Kind) -> tuple[pl.DataFrame, list[str]]:
    """Parse a TREC qrels or run file held in memory.

    Parameters
    ----------
    data : bytes
        The file's content (already un-gzipped).
    source : str
        The file's name, for messages.
    kind : {"qrels", "run"}
        Which layout to expect.

    Returns
    -------
    frame : polars.DataFrame
        Columns ``query_id``, ``doc_id`` (strings; ``query_id`` a polars
        Categorical from :data:`COMPACT_FROM` bytes) and ``grade`` (qrels) or ``score`` (run), both
        float64, in file order.
    tags : list of str
        The distinct run tags in order of first appearance (empty for qrels).

    Raises
    ------
    ParseError
        A line with the wrong number of fields, a grade / score that is not a
        finite number, or bytes that are not UTF-8, naming the file, the line
        and the value.
    """
    data = data.removeprefix(_BOM)
    return _parse_all(_cut(data, CHUNK_BYTES), kind, source, None,
                      lambda offset: _lines_in(data[:offset]), len(data))


# -- reading from a path without holding the whole file ---------------------------------------


def _file_chunks(handle: BinaryIO, size: int) -> Iterator[bytes]:
    """Chunks of an open file, each ending at a line break.

    The file is memory-mapped: each chunk is one copy out of the page cache,
    and pages already copied are released so they do not count as ours.
    """
    length = os.fstat(handle.fileno()).st_size
    if length == 0:
        return
    with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        start = len(_BOM) if view[: len(_BOM)] == _BOM else 0
        while start < length:
            end = view.find(b"\n", start + size)
            end = length if end < 0 else end + 1
            yield view[start:end]
            page_start = start - start % mmap.PAGESIZE
            view.madvise(mmap.MADV_DONTNEED, page_start, end - page_start)
            start = end


def _open(path: PathLike, name: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise FileAccessError("no such file", source=name) from None
    except IsADirectoryError:
        raise FileAccessError("is a directory, not a file", source=name) from None
    except PermissionError:
        raise FileAccessError("permission denied", source=name) from None
    except OSError as exc:
        raise FileAccessError(f"cannot read: {exc.strerror or exc}", source=name) from None


def _plain_file(path: PathLike) -> bool:
    text = os.fspath(path)
    if text == "-":
        return False
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode)


def _locator_for(path: PathLike) -> RowLocator:
    """Map data rows to file lines (comments and blank lines skipped), lazily."""
    cache: list[int] = []

    def locate(row: int) -> int | None:
        if not cache:
            with open(path, "rb") as handle:
                data = handle.read().removeprefix(_BOM)
            for number, line in enumerate(data.splitlines(), start=1):
                fields = line.split()
                if fields and not fields[0].startswith(b"#"):
                    cache.append(number)
        return cache[row] if 0 <= row < len(cache) else None

    return locate


def iter_trec_chunks(
    path: PathLike, kind: Kind, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[pl.DataFrame, int]]:
    """Parse a plain TREC file piece by piece (for bounded-memory evaluation).

    Yields ``(frame, bytes_consumed)`` per chunk of about ``chunk_bytes``
    bytes, each frame in the layout of :func:`parse_trec`; errors name the
    file's real line numbers.
    """
    name = os.fspath(path)
    handle = _open(path, name)
    try:
        head = handle.read(65536)
        if head[:2] == _GZIP_MAGIC:
            raise FileAccessError(
                "gzipped input cannot be streamed; decompress it first", source=name
            )
        check_text_head(head, name)
        handle.seek(0)
        offset = 0
        lines_before = _file_lines_before(path)
        for chunk in _file_chunks(handle, chunk_bytes):
            parsed = _parse_chunk(chunk, kind) or _read_slow(
                chunk, kind, name, lines_before(offset) + 1
            )
            offset += len(chunk)
            yield parsed[0], len(chunk)
    finally:
        handle.close()


def read_trec_file(
    path: PathLike, kind: Kind
) -> tuple[pl.DataFrame, list[str], str, RowLocator] | None:
    """Read a plain (uncompressed, seekable) TREC file without holding all its bytes.

    Returns what :func:`rankscope.data.formats.read_table` returns, or None
    when ``path`` is stdin, gzipped or not a regular file (then read the bytes
    and use :func:`parse_trec`). A progress bar shows on a terminal for big
    files (see :mod:`rankscope.progress`).
    """
    if not _plain_file(path):
        return None
    name = os.fspath(path)
    handle = _open(path, name)
    try:
        head = handle.read(65536)
        if head[:2] == _GZIP_MAGIC:
            return None
        check_text_head(head, name)
        handle.seek(0)
        size = os.fstat(handle.fileno()).st_size
        from rankscope.progress import byte_bar

        with byte_bar(size, f"reading {os.path.basename(name)}") as advance:
            frame, tags = _parse_all(_file_chunks(handle, CHUNK_BYTES), kind, name, advance,
                                     _file_lines_before(path), size)
    finally:
        handle.close()
    return frame, tags, name, _locator_for(path)
