"""Integer codes in the byte order of a few thousand document ids, for ordering ties.

Putting tied rows in document id order compares strings: polars sorts a
frame of (run, id) by encoding every row first, a fixed cost near 0.7 ms for
ten thousand short ids, and comparing long ids (URLs) byte by byte costs in
proportion to their common prefix. Ids mostly differ in a few byte positions
(a number inside a fixed pattern), so those positions, packed big-endian into
one unsigned 64-bit integer, order the ids exactly as their bytes do:
:func:`byte_order_codes` gives that integer per id (for 9 to 14 positions,
the dense rank of the first eight and the rest), or None when the ids differ
in more places (or are too many, too long, or hold a NUL byte), and the
caller compares strings as before.

Why the order is exact: every id is written left-aligned in a row of zero
bytes as long as the longest id (rounded up to whole 8-byte words). No id
holds a NUL byte (checked), so the padding sorts before every byte an id
holds and a prefix sorts before the longer id: two rows compare as their ids
do in byte order (UTF-8 byte order is also code point order), and equal rows
are equal ids. A position where every row holds the same byte decides no
comparison, so dropping those positions keeps the order; the at most eight
positions left, first position most significant, are the code (ranking the first
eight of 9 to 14 positions densely keeps the order too: equal ranks are equal bytes).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.string_views import INLINE_BYTES, string_views

__all__ = ["CODED_UP_TO", "byte_order_codes"]

UIntArray = npt.NDArray[np.uint64]

CODED_UP_TO = 1 << 16
"""Ids up to which :func:`byte_order_codes` tries."""
_LONGEST = 16
"""Longest id in bytes it codes: writing the matrix of the ids' bytes costs about 5 ns a
byte, as much per id at 16 bytes as polars' sort of short ids (and URLs, 70 bytes, differ
in more than 14 places more often than not)."""
_SPLIT = 14
"""Varying byte positions up to which the ids are coded (8 as they are, up to 14 as the
dense rank of their first 8 in the top 16 bits and the rest in the low 48)."""


def byte_order_codes(ids: pl.Series) -> UIntArray | None:
    """One code per id whose order is the ids' byte order (equal ids, equal codes).

    None when the ids cannot be coded in 64 bits this way (see the module
    docstring): more than :data:`CODED_UP_TO` of them, a null, one longer
    than :data:`_LONGEST` bytes or holding a NUL byte, or more than
    :data:`_SPLIT` byte positions where they differ.
    """
    n = ids.len()
    if n == 0 or n > CODED_UP_TO or ids.null_count():
        return None
    if len(str(ids[0]).encode()) > _LONGEST:
        return None  # one id too long refuses them all (URLs): no views read for it
    views = string_views(ids)
    if views is not None:
        size = views.view(np.uint32)[:, 0]  # each view's first 4 bytes: the id's length
        if int(size.max()) > _LONGEST:
            return None
        if int(size.max()) <= INLINE_BYTES:
            return _inline_codes(views, size)
    lengths = ids.str.len_bytes()
    longest = int(lengths.max())  # type: ignore[arg-type]
    if longest > _LONGEST:
        return None
    width = 8 * max(1, -(-longest // 8))
    size = lengths.to_numpy()
    # the ids taken shortest first: then the ids of each length are one block of the text
    # of every id's bytes (polars holds valid UTF-8: encoding it again gives the same bytes)
    # and fill their rows of the matrix in one copy each (a scatter of every byte cost
    # 5 ns a byte); the codes go back to the ids' order at the end
    by_length = np.argsort(size.astype(np.uint8), kind="stable")  # a radix sort of bytes
    raw = np.frombuffer(str(ids[by_length].str.join("").item()).encode(), dtype=np.uint8)
    if not raw.all():
        return None  # a NUL byte: the padding would no longer sort first
    grid = np.zeros((n, width), dtype=np.uint8)
    row = at = 0
    for length, count in enumerate(np.bincount(size, minlength=longest + 1).tolist()):
        if count:
            grid[row:row + count, :length] = raw[at:at + count * length].reshape(count, length)
            row, at = row + count, at + count * length
    coded = _coded(grid, n)
    if coded is None:
        return None
    out = np.empty(n, dtype=np.uint64)
    out[by_length] = coded
    return out


def _inline_codes(views: npt.NDArray[np.uint8], size: npt.NDArray[np.uint32]) -> UIntArray | None:
    """:func:`byte_order_codes` of ids of at most 12 bytes, from their string views.

    Each view holds its id then zeros: read as three big-endian 32-bit words,
    its bytes 4-15 are the matrix's row (whole 1-D columns: numpy's loops over
    rows of a few bytes cost 10 ns a row each).
    """
    n = size.size
    word = views.view(">u4")
    high = word[:, 1].astype(np.uint64) << np.uint64(32)
    high |= word[:, 2]
    if int(size.max()) <= 8:
        rows = high.astype(">u8")
    else:
        rows = np.empty((n, 2), dtype=">u8")
        rows[:, 0] = high
        rows[:, 1] = word[:, 3].astype(np.uint64) << np.uint64(32)
    grid = rows.view(np.uint8).reshape(n, -1)
    # the padding is zero, so every id is free of NUL bytes when the nonzero bytes are
    # as many as the ids' bytes
    if np.count_nonzero(grid) != int(size.sum(dtype=np.int64)):
        return None
    return _coded(grid, n)


def _coded(grid: npt.NDArray[np.uint8], n: int) -> UIntArray | None:
    """The codes of the ids written in the rows of ``grid`` (see :func:`byte_order_codes`)."""
    words = grid.view(">u8").astype(np.uint64)  # big-endian: a word's order is its bytes'
    if words.shape[1] == 1:
        return words[:, 0]
    differs = np.bitwise_or.reduce(words ^ words[0], axis=0)  # the bits where ids differ
    varying = np.flatnonzero(differs.astype(">u8").view(np.uint8))
    if varying.size <= 8:
        return _packed(grid[:, varying])
    if varying.size > _SPLIT:
        return None
    first = _packed(grid[:, varying[:8]])
    order = np.argsort(first)
    ranked = first[order]
    dense = np.empty(n, dtype=np.uint64)
    dense[order] = np.concatenate(([0], np.cumsum(ranked[1:] != ranked[:-1]))).astype(np.uint64)
    rest = _packed(grid[:, varying[8:]], right=True)  # below 2^48
    return (dense << np.uint64(48)) | rest


def _packed(columns: npt.NDArray[np.uint8], *, right: bool = False) -> UIntArray:
    """Up to 8 byte columns as one big-endian unsigned integer per row (the first column
    most significant; from the top byte, or ending at the lowest with ``right``)."""
    n, k = columns.shape
    packed = np.zeros((n, 8), dtype=np.uint8)
    if right:
        packed[:, 8 - k:] = columns
    else:
        packed[:, :k] = columns
    return packed.view(">u8").ravel().astype(np.uint64)
