"""Gathering a column's values at many rows, from a column read in many chunks.

A file read in chunks gives columns of hundreds of chunks: the ordering of
rankings and the matching of judgments gather from them (:func:`gather_many`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["at_rows", "gather_many", "one_chunk_for", "rechunk_pays"]

IntArray = npt.NDArray[np.int64]


def gather_many(column: pl.Series, rows: IntArray) -> pl.Series:
    """``column`` at ``rows``, made one chunk first when ``rows`` are many.

    A file read in chunks gives columns of hundreds of chunks, and gathering
    across chunks costs about ten times a gather from one chunk (0.8 s against
    0.08 s for 6 million short ids): past an eighth of the column the copy into
    one chunk is cheaper.
    """
    column = one_chunk_for(column, rows.size)
    if rows.size < _INDEXED_BELOW:
        return at_rows(column, rows)
    return column.gather(rows)


def at_rows(column: pl.Series, rows: npt.NDArray[np.integer]) -> pl.Series:
    """``column`` at ``rows`` (never negative, below its length), gathered directly.

    Indexing gathers on the calling thread (``gather`` plans a query first).
    The positions are handed over as a Series of polars' own index type: an
    array would be checked for negative and too large positions and copied
    into one in polars' Python code first (20-25 us of 40-55 a gather of a few
    thousand rows, about six gathers an evaluation of 10^4 lines).

    Parameters
    ----------
    column : polars.Series
        The values.
    rows : numpy.ndarray
        Integer positions in ``column``, any width, signed or not.

    Returns
    -------
    polars.Series
        ``column``'s values at ``rows``, in their order, under ``column``'s name.
    """
    return column[pl.Series(rows.astype(_INDEX_TYPE, copy=False))]


def one_chunk_for(column: pl.Series, gathered: int) -> pl.Series:
    """``column``, copied into one chunk if gathering ``gathered`` rows from it pays for the
    copy (:func:`rechunk_pays`): for a caller gathering those rows a block at a time."""
    return column.rechunk() if rechunk_pays(column, gathered) else column


def rechunk_pays(column: pl.Series, gathered: int) -> bool:
    """Whether ``gathered`` rows are gathered from ``column`` faster from a one-chunk copy
    (:func:`gather_many`'s rule: a column of several chunks, more than an eighth of it)."""
    return column.n_chunks() > 1 and gathered * _REGATHER > column.len()


_INDEX_TYPE = np.uint32 if pl.get_index_type() == pl.UInt32 else np.uint64
"""polars' row index as numpy holds it (rows passed to :func:`gather_many` are never negative)."""


_INDEXED_BELOW = 1 << 16
"""Rows up to which :func:`gather_many` gathers by indexing (a fixed cost less per call)."""


_REGATHER = 8  # rows gathered, as a fraction of the column, from which it is rechunked
