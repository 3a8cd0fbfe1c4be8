"""What ordering a run produces: :class:`Ranking` (how the file's rows become
rankings, one permutation of them) and :class:`Blocks` (a ranked file's query blocks,
put in query order last). :mod:`rankscope.data.ranking_order` makes them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["Blocks", "Index", "Ranking"]

IntArray = npt.NDArray[np.int64]
Index = npt.NDArray[np.int32] | npt.NDArray[np.int64]
"""Positions or rows: 32-bit while a run's rows fit them (tie fixes' moves), else 64."""
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
_Item = TypeVar("_Item", bound=np.generic)


@dataclass(frozen=True)
class Ranking:
    """How the file's rows become rankings, queries in index order.

    ``order`` lists the rows in rank order (None: the file order itself, every
    row kept; 32-bit integers when the sort made them so), after which
    ``moves`` = (positions, rows) puts ``rows`` at ``positions`` (tie fixes;
    32-bit integers when the rows fit them). Query
    ``q``'s ranking is the next ``counts[q]`` positions; rows of no evaluated
    query are left out.

    ``blocks`` (only with ``order`` None) defers putting a ranked file's query
    blocks in query order: ties are then found and fixed on the file order
    (``moves`` name file positions, each within its query's block) and the
    block order, the file positions in rank order, is gathered once, last.

    ``tie_flags`` (with ``order``, when the sort worked them out): at
    position ``p + 1``, whether the rows at ``p`` and ``p + 1`` of ``order``
    share query and score (False at both ends), for :func:`find_ties`.
    """

    order: Index | None
    moves: tuple[Index, Index] | None
    counts: IntArray
    blocks: Blocks | None = None
    tie_flags: BoolArray | None = None

    @property
    def size(self) -> int:
        """How many rows the rankings hold."""
        return int(self.counts.sum())

    def apply(self, per_row: npt.NDArray[_Item], *, in_place: bool = False,
              ordered: npt.NDArray[_Item] | None = None) -> npt.NDArray[_Item]:
        """A per-row array of the file, in rank order (``in_place``: may overwrite it).

        ``ordered``: ``per_row[order]`` when the caller already gathered it
        (it is then overwritten with the result).
        """
        out = per_row if self.order is None else (
            per_row[self.order] if ordered is None else ordered)
        if self.moves is not None:
            if out is per_row and not in_place:
                out = out.copy()
            # the right side is gathered before anything is written: safe in place
            out[self.moves[0]] = per_row[self.moves[1]]
        return out if self.blocks is None else self.blocks.gather(out)

    def rows(self) -> IntArray:
        """The file row at each rank-order position."""
        if self.blocks is not None:
            if self.moves is None:
                return self.blocks.index()
            # file positions up to the last one named (moves may lie past the last block)
            last = max(self.blocks.last(), int(self.moves[0].max(initial=-1)),
                       int(self.moves[1].max(initial=-1)))
            return self.apply(np.arange(last + 1, dtype=np.int64), in_place=True)
        if self.order is None and self.moves is None:
            return np.arange(self.size, dtype=np.int64)
        if self.order is None:
            return self.apply(np.arange(self.size, dtype=np.int64), in_place=True)
        return _with_moves(self.order, self.moves)

    def kept_rows(self, n_rows: int) -> tuple[Callable[[], IntArray], Index | None]:
        """:meth:`rows` for later, and the order it holds (None: no order).

        A file of ``n_rows`` rows that fit 32-bit integers has its order held
        as such (4 bytes a row, not 8: 40 MB less at 10^7 rows, held beside the
        measures while most evaluations never ask for the rows); the rows are
        made 64-bit when asked for, as :meth:`rows` makes them.
        """
        order = self.order
        if order is None or self.blocks is not None or n_rows > _INT32_ROWS:
            return self.rows, order
        narrow = order.astype(np.int32, copy=False)  # the sort's own when 32-bit
        moves = self.moves
        return (lambda: _with_moves(narrow, moves)), narrow


_INT32_ROWS = int(np.iinfo(np.int32).max)
"""File rows up to which :meth:`Ranking.kept_rows` holds the order as 32-bit integers."""


def _with_moves(order: Index, moves: tuple[Index, Index] | None) -> IntArray:
    """The file row at each position: ``order`` (a 64-bit copy) after ``moves``."""
    out = order.astype(np.int64)  # a copy, whatever the order's width
    if moves is not None:
        out[moves[0]] = moves[1]
    return out


@dataclass(frozen=True)
class Blocks:
    """A ranked file's query blocks in query order: block i is the file rows
    ``first[i]`` .. ``first[i] + take[i] - 1``."""

    first: IntArray
    take: IntArray

    def last(self) -> int:
        """The last file row of any block (-1: none)."""
        return int((self.first + self.take - 1).max(initial=-1))

    def index(self) -> IntArray:
        """The file rows of the blocks, in order."""
        first, take = self.first, self.take
        # consecutive positions within a block: steps of 1, and at each block's
        # first position the jump from the previous block's last row (one cumsum)
        step = np.ones(int(take.sum()), dtype=np.int64)
        heads = np.cumsum(take) - take
        step[heads[1:]] = first[1:] - (first[:-1] + take[:-1] - 1)
        if step.size:
            step[0] = first[0]
        return np.cumsum(step, out=step)

    def at(self, positions: IntArray) -> IntArray:
        """The file rows at ``positions`` of :meth:`index` (sorted or not), without it."""
        heads = np.cumsum(self.take) - self.take
        block = np.searchsorted(heads, positions, side="right") - 1
        return self.first[block] + (positions - heads[block])

    def gather(self, per_row: npt.NDArray[_Item]) -> npt.NDArray[_Item]:
        """``per_row`` (one value per file row) at the blocks' rows, in order."""
        if self.take.size == 0 or self.take.size * _SLICED_BLOCK > int(self.take.sum()):
            return per_row[self.index()]
        # long blocks: copied as slices, without a whole-length index (its pages
        # cost more than the copy)
        ends = self.first + self.take
        return np.concatenate([per_row[a:b] for a, b in
                               zip(self.first.tolist(), ends.tolist(), strict=True)])


_SLICED_BLOCK = 64  # mean block length from which Blocks.gather copies slices
