"""A hash table of 64-bit keys in numpy arrays, built once and probed many times.

The ranking step finds a run's rows among the judgments by their 64-bit keys
(:mod:`~rankscope.engine.ranking_match`). A large run is joined with polars;
a small one (a validation set evaluated after every training epoch) is probed
here, in a table built once per set of judgments: a join would build its own
table of the judgments on every call, and a binary search of sorted keys
mispredicts nearly every branch.

Open addressing with double hashing (each key steps through the table by an
odd stride of its own, so probe sequences do not pile up as linear probing's
do), at most an eighth full. A slot holds a key's position only (4 bytes);
the key itself is read from the keys given (kept, not copied): a small call
probes the table out of the caches, and a table a quarter the size (256 kB
for 7,000 judgments, not 1 MB of keys and 8-byte positions) misses less.
Building and probing are vectorized by rounds: every key not yet placed (or
not yet found) moves to its next slot together; most keys need one probe, and
a key needs more than k probes with a chance of about 8^-k, so a few thousand
keys take a handful of rounds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["KeyTable"]

UIntArray = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]

_SPREAD = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the home slot from the top bits


class KeyTable:
    """Where each of ``keys`` (distinct) is: :meth:`find` gives the position of a key.

    ``keys`` are kept as given (the caller does not change them) and read by
    every :meth:`find`.
    """

    def __init__(self, keys: UIntArray) -> None:
        bits = max(int(keys.size).bit_length() + 3, 4)  # at most an eighth full
        self._shift = np.uint64(64 - bits)
        self._mask = (1 << bits) - 1
        self._of = keys
        # each slot's key position, -1: an empty slot
        self._where: npt.NDArray[np.int32] | IntArray = \
            np.full(1 << bits, -1, dtype=np.int32) if keys.size <= _INT32_MAX else \
            np.full(1 << bits, -1, dtype=np.int64)
        pending = np.arange(keys.size, dtype=np.int64)
        slot, stride = self._probes(keys)
        while pending.size:
            free = np.flatnonzero(self._where[slot] < 0)
            # of the keys whose slot is free, the first of each slot takes it
            taken, first = np.unique(slot[free], return_index=True)
            self._where[taken] = pending[free[first]]
            stay = np.ones(pending.size, dtype=bool)
            stay[free[first]] = False
            pending, slot, stride = pending[stay], slot[stay], stride[stay]
            slot = (slot + stride) & self._mask

    @property
    def nbytes(self) -> int:
        """Bytes the table holds beside the keys given."""
        return int(self._where.nbytes)

    def _probes(self, keys: UIntArray) -> tuple[IntArray, IntArray]:
        """Each key's first slot (its top bits, spread) and odd stride (its low bits)."""
        with np.errstate(over="ignore"):
            slot = ((keys * _SPREAD) >> self._shift).view(np.int64)
        stride = (keys & np.uint64(self._mask)).view(np.int64) | 1
        return slot, stride

    def find(self, keys: UIntArray) -> IntArray:
        """The position of each key in the table's keys; -1 where it is absent."""
        if self._of.size == 0:
            return np.full(keys.size, -1, dtype=np.int64)
        slot, stride = self._probes(keys)
        at = self._where[slot].astype(np.int64)
        # an empty slot's -1 reads the last key: no find there, and the end of the search
        filled = at >= 0
        found = (self._of[at] == keys) & filled
        out = np.where(found, at, -1)
        looking = np.flatnonzero(~found & filled)
        slot, stride = slot[looking], stride[looking]
        while looking.size:
            slot = (slot + stride) & self._mask
            at = self._where[slot].astype(np.int64)
            filled = at >= 0
            found = (self._of[at] == keys[looking]) & filled
            out[looking[found]] = at[found]
            going = ~found & filled
            looking, slot, stride = looking[going], slot[going], stride[going]
        return out


_INT32_MAX = int(np.iinfo(np.int32).max)
