"""Proving that no group of 64-bit keys repeats a key, fast.

Duplicate documents are looked for with a 64-bit hash per (query, document)
row: when no query's hashes repeat, no document repeats. Runs list each
query's rows together, so the proof only needs each query's keys sorted,
which numpy does for many short rows at once much faster than a hash table
(or one long sort) over every key.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["distinct_within"]

IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]


def distinct_within(keys: UIntArray, counts: IntArray) -> bool:
    """Whether each group of keys (consecutive, ``counts`` long) holds no key twice.

    Groups of similar length are sorted as the rows of padded matrices
    (numpy sorts many short rows much faster than polars or one long sort
    finds duplicates), a few million keys at a time. Padding is the largest
    key and sorts last, so only each row's first ``count`` entries are compared.
    """
    present = np.flatnonzero(counts > 1)
    if present.size == 0:
        return True
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    bucket = np.floor(np.log2(counts[present])).astype(np.int64)
    top = np.iinfo(np.uint64).max
    for b in np.unique(bucket):
        groups = present[bucket == b]
        width = int(counts[groups].max())
        step = max(1, (1 << 20) // width)
        for lo in range(0, groups.size, step):
            chunk = groups[lo:lo + step]
            lens = counts[chunk]
            if np.all(lens == width) and np.all(np.diff(offsets[chunk]) == width):
                start = int(offsets[chunk[0]])  # contiguous, no padding: a view
                grid = np.sort(keys[start:start + chunk.size * width].reshape(-1, width), axis=1)
            else:
                rows = np.repeat(np.arange(chunk.size), lens)
                cols = np.arange(rows.size) - np.repeat(np.cumsum(lens) - lens, lens)
                grid = np.full((chunk.size, width), top, dtype=np.uint64)
                grid[rows, cols] = keys[np.repeat(offsets[chunk], lens) + cols]
                grid.sort(axis=1)
            same = grid[:, 1:] == grid[:, :-1]
            same &= np.arange(1, width) < lens[:, None]
            if same.any():
                return False
    return True
