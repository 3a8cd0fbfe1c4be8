"""Which evaluated query each run row belongs to, and how the run's rows are grouped.

The ranking step (:func:`rankscope.engine.ranking.rank`) starts here: query ids
become integer indices (positions in the evaluated, byte-ordered query list;
-1 for a query not evaluated). A run written query by query is scanned as
runs of equal ids, and each run's id is looked up once; a shuffled run (most
lines start a new run) is looked up line by line, which is cheaper than
listing ten million one-line runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.gather import at_rows
from rankscope.data.rankings import Index

__all__ = ["LISTED_UP_TO", "RunQueries", "index_of", "query_counts", "run_queries"]

IntArray = npt.NDArray[np.int64]

_SLICE = 1 << 20  # rows per slice when scanning whole runs: bounded temporaries
_SCATTERED = 4  # mean rows per run of equal query ids below which a run counts as shuffled
_DIRECT_FROM = 1 << 10  # rows; a smaller run is always scanned as runs of equal ids


def index_of(ids: pl.Series, evaluated: list[str]) -> IntArray:
    """Position of each id in ``evaluated`` (-1 when absent), vectorized.

    A few ids (at most :data:`LISTED_UP_TO`, against not many more
    queries) are looked up in a dict: a vectorized replacement costs more to
    set up than a few thousand lookups take.
    """
    if not evaluated:
        return np.full(ids.len(), -1, dtype=np.int64)
    if isinstance(ids.dtype, pl.Categorical | pl.Enum) and ids.len() > LISTED_UP_TO \
            and not ids.null_count():
        return _by_code(ids, evaluated)
    if ids.len() <= LISTED_UP_TO and len(evaluated) <= 4 * LISTED_UP_TO:
        return _listed_index(ids.cast(pl.String).to_list(), evaluated)
    found = ids.cast(pl.String).replace_strict(
        evaluated, np.arange(len(evaluated), dtype=np.int64), default=-1, return_dtype=pl.Int64
    )
    return found.to_numpy()


LISTED_UP_TO = 1 << 12
"""Ids up to which :func:`index_of` looks them up one by one in a dict."""


def _code_table(distinct: pl.Series, names: list[str], evaluated: list[str]) -> IntArray:
    """Query index by code: ``distinct`` (a Categorical's distinct values, named ``names``)
    each looked up once in ``evaluated``, the rest of the table -1."""
    codes = distinct.to_physical().to_numpy()
    table = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
    table[codes] = _listed_index(names, evaluated) if \
        len(names) <= LISTED_UP_TO and len(evaluated) <= 4 * LISTED_UP_TO else \
        index_of(pl.Series(names, dtype=pl.String), evaluated)
    return table


def _by_code(ids: pl.Series, evaluated: list[str]) -> IntArray:
    """:func:`index_of` of a Categorical or Enum column: each distinct id looked up once,
    every row through its code (no string column of every row is made)."""
    distinct = ids.unique()
    table = _code_table(distinct, distinct.cast(pl.String).to_list(), evaluated)
    found: IntArray = table[ids.to_physical().to_numpy()]
    return found


def _listed_index(ids: list[str], evaluated: list[str]) -> IntArray:
    """Position of each of a few ids in ``evaluated`` (-1 when absent)."""
    where = {q: i for i, q in enumerate(evaluated)}
    # the dict's own lookups, mapped: no Python frame per id
    return np.fromiter(map(where.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))


def _segments(query_ids: pl.Series) -> tuple[IntArray, pl.Series] | None:
    """Runs of equal query ids: their start rows and ids (scanned slice by slice).

    None when the first slice (of a run of :data:`_DIRECT_FROM` rows or more)
    shows the rows are not grouped by query (runs shorter than
    :data:`_SCATTERED` rows on average): listing nearly every row as a run
    start would cost more than indexing the rows directly.
    """
    n_rows = query_ids.len()
    if n_rows <= _SLICE and query_ids.n_chunks() > 1:
        # compared with itself one row on: chunks that do not line up cost more than a copy
        query_ids = query_ids.rechunk()
    parts = [np.zeros(min(n_rows, 1), dtype=np.int64)]
    for start in range(0, n_rows - 1, _SLICE):
        # row i + 1 starts a run when its id differs from row i's (compared as strings)
        length = min(_SLICE, n_rows - 1 - start)
        change = query_ids.slice(start + 1, length) != query_ids.slice(start, length)
        local = np.flatnonzero(change.to_numpy()) + (start + 1)
        if start == 0 and n_rows >= _DIRECT_FROM and local.size * _SCATTERED > length + 1:
            return None
        parts.append(local.astype(np.int64, copy=False))
    starts = np.concatenate(parts)
    return starts, at_rows(query_ids, starts)  # a direct gather of the runs' first rows


def _narrow(index: IntArray) -> Index:
    """A lookup table of query indices as 32-bit integers when they fit (they are below
    the number of evaluated queries): every row's index gathered from it is then 4 bytes,
    not 8 (40 MB less at 10^7 rows, alive through the sort and the matching)."""
    if index.size == 0 or int(index.max()) <= _INT32_MAX:
        return index.astype(np.int32)
    return index


_INT32_MAX = int(np.iinfo(np.int32).max)


def query_counts(qidx: Index, minlength: int = 0) -> IntArray:
    """Rows per query index (``np.bincount`` of ``qidx``, every index >= 0).

    Parameters
    ----------
    qidx : numpy.ndarray
        Query indices, 32- or 64-bit.
    minlength : int, default 0
        The fewest counts returned.

    Returns
    -------
    numpy.ndarray
        The count of each index, 64-bit.

    Notes
    -----
    ``np.bincount`` copies 32-bit input to 64-bit first (80 MB at 10^7 rows, on
    the ranking's peak beside the matching): 32-bit indices are counted a
    slice at a time.
    """
    if qidx.dtype == np.int64 or qidx.size <= _COUNTED_AT_ONCE:
        return np.bincount(qidx, minlength=minlength).astype(np.int64, copy=False)
    top = int(qidx.max(initial=-1)) + 1
    out = np.zeros(max(minlength, top), dtype=np.int64)
    for lo in range(0, qidx.size, _COUNTED_AT_ONCE):
        out += np.bincount(qidx[lo:lo + _COUNTED_AT_ONCE], minlength=out.size)
    return out


_COUNTED_AT_ONCE = 1 << 20
"""32-bit query indices :func:`query_counts` counts at a time (an 8 MB copy)."""


@dataclass(frozen=True)
class RunQueries:
    """Each run row's query: the query index (-1: not evaluated) and the run's query ids."""

    qidx: Index
    names: set[str]
    grouped_lengths: IntArray | None  # runs of equal ids, when each query's rows are together
    starts: IntArray | None  # the first row of each run of equal ids (None: not listed)
    lengths: IntArray | None  # and its length

    def counts(self, n: int) -> IntArray:
        """Rows per evaluated query (from the runs of equal ids when listed)."""
        if self.qidx.size == 0:
            return np.zeros(n, np.int64)
        if self.starts is None or self.lengths is None:
            kept = self.qidx >= 0
            # every row evaluated (the common case): no copy of every row's index counted
            counted = self.qidx if kept.all() else self.qidx[kept]
            return query_counts(counted, n)
        run_q = self.qidx[self.starts]
        kept = run_q >= 0
        return np.bincount(run_q[kept], weights=self.lengths[kept],
                           minlength=n).astype(np.int64)


def run_queries(run_q: pl.Series,
                 select: Callable[[set[str]], list[str]]) -> tuple[list[str], RunQueries]:
    """The evaluated queries (``select`` of the run's query ids) and each row's index."""
    n_rows = run_q.len()
    if run_q.dtype == pl.Categorical:  # a TREC file's run: its ids compared by their codes
        return _coded(run_q, select)
    if run_q.dtype == pl.Enum:  # read against a known query list: the codes are the index
        categories = pl.Series(run_q.dtype.categories)  # type: ignore[attr-defined]
        codes = run_q.to_physical().to_numpy()
        present = np.zeros(categories.len(), dtype=bool)
        if _scattered(codes):
            # a shuffled file: no runs of equal ids listed (a start and a length of nearly
            # every row, 80 MB each at 10^7 rows, and their transients), every row's code
            # marks its id present
            starts = None
            present[codes] = True
        else:
            change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
            starts = np.concatenate(([0], change)).astype(np.int64) if n_rows else change
            del change
            present[codes[starts]] = True  # every run of equal codes starts somewhere
        names = set(categories.filter(pl.Series(present)).to_list())
        evaluated = select(names)
        index = index_of(categories, evaluated)
        if n_rows == 0:
            qidx = np.zeros(0, np.int32)
        elif np.array_equal(index, np.arange(index.size)):  # the codes are the index
            qidx = codes.astype(np.int32 if index.size <= _INT32_MAX else np.int64)
        else:
            qidx = _narrow(index)[codes]
        if starts is None:
            return evaluated, RunQueries(qidx, names, None, None, None)
    else:
        segments = _segments(run_q)
        if segments is None:  # a shuffled file: every row's id coded once, the codes looked up
            listed = run_q.unique().to_list()
            names = set(listed)
            evaluated = select(names)
            codes = run_q.cast(pl.Enum(listed)).to_physical().to_numpy()
            index = _listed_index(listed, evaluated) if len(listed) <= LISTED_UP_TO and \
                len(evaluated) <= 4 * LISTED_UP_TO else index_of(pl.Series(listed), evaluated)
            return evaluated, RunQueries(_narrow(index)[codes], names, None, None, None)
        starts, seg_names = segments
        few = seg_names.len() <= LISTED_UP_TO
        listed = seg_names.to_list() if few else []
        names = set(listed) if few else set(seg_names.unique().to_list())
        evaluated = select(names)
        seg_index = _listed_index(listed, evaluated) if few and \
            len(evaluated) <= 4 * LISTED_UP_TO else index_of(seg_names, evaluated)
        qidx = np.repeat(_narrow(seg_index), np.diff(np.append(starts, n_rows)))
    lengths = np.diff(np.append(starts, n_rows)).astype(np.int64)
    grouped = starts.size == len(names)
    return evaluated, RunQueries(qidx, names, lengths if grouped else None, starts, lengths)


def _scattered(codes: npt.NDArray[np.integer[Any]]) -> bool:
    """Whether the first slice of a column of :data:`_DIRECT_FROM` rows or more shows its
    rows not grouped by query (runs of equal codes shorter than :data:`_SCATTERED` rows
    on average): listing nearly every row as a run start would cost more than it saves."""
    n_rows = codes.size
    if n_rows < _DIRECT_FROM:
        return False
    first = codes[:_SLICE + 1]
    return int(np.count_nonzero(first[1:] != first[:-1])) * _SCATTERED > \
        min(_SLICE, n_rows - 1) + 1


def _coded(run_q: pl.Series,
           select: Callable[[set[str]], list[str]]) -> tuple[list[str], RunQueries]:
    """:func:`run_queries` of a Categorical column: runs and lookups on its integer codes.

    Each distinct id is turned into its index once (through a table indexed
    by code); rows are grouped into runs of equal codes by comparing
    neighbours, without touching a string.
    """
    n_rows = run_q.len()
    distinct = run_q.unique()
    names_list = distinct.cast(pl.String).to_list()
    names = set(names_list)
    evaluated = select(names)
    if n_rows == 0:
        return evaluated, RunQueries(np.zeros(0, np.int32), names, None, None, None)
    codes = run_q.to_physical().to_numpy()
    qidx = _narrow(_code_table(distinct, names_list, evaluated))[codes]
    if _scattered(codes):
        return evaluated, RunQueries(qidx, names, None, None, None)  # shuffled: no runs listed
    change = codes[1:] != codes[:-1]
    starts = np.concatenate((np.zeros(1, np.int64), np.flatnonzero(change) + 1))
    del change
    lengths = np.diff(np.append(starts, n_rows)).astype(np.int64)
    grouped = starts.size == len(names)
    return evaluated, RunQueries(qidx, names, lengths if grouped else None, starts, lengths)
