"""Matching a run's rows to their judgments; the keys the duplicate proofs sort.

Run rows are found in the qrels by a 64-bit key per (query index, document)
(:func:`doc_keys`), looked up in halves one after the other (on a thread
beside the ordering), every hash match confirmed on the strings; a small
run's rows whose judged ids fit their Arrow string views are keyed and
confirmed by those views instead (:mod:`~rankscope.engine.view_match`). The
same keys prove that no document is ranked twice
(:mod:`~rankscope.engine.ranking_duplicates`); :func:`first_duplicates` is the
exact search when a key repeats.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.gather import one_chunk_for
from rankscope.data.ranking_order import gather_many
from rankscope.data.rankings import Index
from rankscope.engine.key_table import KeyTable
from rankscope.engine.view_match import VIEWED_BELOW, ViewedJudgments, viewed_lookup

__all__ = ["MIX", "PROBED_BELOW", "TABLED_UP_TO", "GradeCodes", "Judged", "as_levels",
           "doc_keys", "first_duplicates", "lookup", "match_codes", "match_rows"]

IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
Positions = npt.NDArray[np.signedinteger[Any]]
FloatArray = npt.NDArray[np.float64]
NONPOOL = -1.0
"""trec_eval's level of a ranked document that is not in the qrels."""
POOLED_UNJUDGED = -2.0
"""trec_eval's level of a document judged with a negative grade: in the pool, not judged."""


MIX = 0x9E3779B97F4A7C15  # mixes the query index into a document hash
_MIX = np.uint64(MIX)


def doc_keys(qidx: Index | None, docs: pl.Series, out: UIntArray | None = None) -> UIntArray:
    """A 64-bit key per (query index, document id) row (written to ``out`` if given).

    The documents are hashed block by block into ``out``: the only temporary
    is one block's hashes, not a second array as long as the run (80 MB at
    10^7 rows). With ``qidx`` None the keys are the documents' hashes alone
    (for rows already grouped by query).
    """
    size = docs.len()
    if out is None:
        out = np.empty(size, dtype=np.uint64)
    step = _KEYED_BLOCK
    with np.errstate(over="ignore"):
        for lo in range(0, size, step):
            hi = min(lo + step, size)
            # a frame's row hash is a direct call; a column's hash plans a query (and hands
            # it to polars' threads: on a busy machine the wait outlasts the hashing)
            hashed = docs.slice(lo, hi - lo).to_frame().hash_rows(seed=0x5EED).to_numpy()
            if qidx is None:
                out[lo:hi] = hashed
                continue
            mixed = qidx[lo:hi].astype(np.uint64)
            np.multiply(mixed, _MIX, out=mixed)
            np.bitwise_xor(hashed, mixed, out=out[lo:hi])
    return out


_KEYED_BLOCK = 1 << 20
"""Rows hashed at a time by :func:`doc_keys` (8 MB of temporary hashes)."""


def first_duplicates(qidx: Index, docs: pl.Series, keys: UIntArray, n_queries: int,
                     rows: IntArray | None = None) -> list[str | None]:
    """Per query, the smallest document id listed twice among ``rows`` (default: all).

    ``keys`` are the keys of ``rows`` (of every row when ``rows`` is None).
    """
    out: list[str | None] = [None] * n_queries
    subset = keys
    if subset.size < 2 or pl.Series(subset).n_unique() == subset.size:
        return out
    candidates = np.flatnonzero(pl.Series(subset).is_duplicated().to_numpy())
    if rows is not None:
        candidates = rows[candidates]
    sub = pl.DataFrame({"q": qidx[candidates], "d": docs.gather(pl.Series(candidates))})
    dups = sub.filter(pl.struct("q", "d").is_duplicated() & (pl.col("q") >= 0))
    for q, d in dups.group_by("q").agg(pl.col("d").min()).iter_rows():
        out[q] = d
    return out


def lookup(run_keys: UIntArray, run_q: Index, run_docs: pl.Series,
           judged: Judged) -> tuple[IntArray, IntArray]:
    """The run rows found in ``judged``, and the index of their judgment line.

    Fewer rows than :data:`PROBED_BELOW` probe the judgments' hash table
    (:class:`~rankscope.engine.key_table.KeyTable`, built once per set of
    judgments of at most :data:`TABLED_UP_TO` lines); otherwise a hash join,
    whose table of the judgments costs more to build than a few thousand
    probes take: against more than :data:`_JOINED_AT_ONCE` judgments, one join
    per part of the keys (their top bits), one after the other. Every key
    match is confirmed on the strings.
    """
    if not judged.distinct:
        # a hash collision between different qrels lines: match on the strings
        index = np.arange(judged.keys.size, dtype=np.int64)
        left = pl.DataFrame({"q": run_q.astype(np.int64, copy=False), "d": run_docs})
        right = pl.DataFrame({"q": judged.query.astype(np.int64), "d": judged.docs, "j": index})
        found = left.join(right, on=["q", "d"], how="left", maintain_order="left")
        match = found.get_column("j").fill_null(-1).to_numpy()
        hit = np.flatnonzero(match >= 0)
        return hit, match[hit].astype(np.int64)
    if run_keys.size < PROBED_BELOW and judged.keys.size <= TABLED_UP_TO:
        at = judged.table.find(run_keys)
        hit = np.flatnonzero(at >= 0)
        j = at[hit]
    else:
        bits = _part_bits(judged.keys.size)
        if bits == 0:
            return _confirmed(*_joined(run_keys, None, judged.keys, None), run_q, run_docs,
                              judged)
        # a key's top bits pick its part: the run's rows of a part can only match the
        # judgments of that part, so each part is joined on its own, one after the other
        # (the join's tables and hashes then hold a part's keys, not every judgment's)
        run_part, judged_part = _top_bits(run_keys, bits), _top_bits(judged.keys, bits)
        # each part's judgment line written at its run rows: the keys are distinct, so a
        # row matches one line at most, and the rows found read back in the run's order,
        # as one join gives them (the strings are then confirmed in one gather of each
        # column, in order). No list, concatenation and stable sort of every part's hits
        # (five arrays of every hit at once: 23 MB traced less at 10^7 rows, same CPU)
        line_of: npt.NDArray[np.signedinteger[Any]] = np.full(
            run_keys.size, -1, dtype=np.int32 if judged.keys.size <= _INT32_MAX else np.int64)
        for part in range(1 << bits):
            rows = np.flatnonzero(run_part == part)
            at = np.flatnonzero(judged_part == part)
            hit, j = _joined(run_keys[rows], rows, judged.keys[at], at)
            line_of[hit] = j
        del run_part, judged_part, rows, at, hit, j
        hit = np.flatnonzero(line_of >= 0)
        j = line_of[hit].astype(np.int64, copy=False)
        del line_of
    return _confirmed(hit, j, run_q, run_docs, judged)


def _top_bits(keys: UIntArray, bits: int) -> npt.NDArray[np.uint8]:
    """Each key's top ``bits`` bits (at most 8), read from its top byte: no shifted copy
    of every key (8 bytes a key, 57 MB at 7.1 M judgments, the matching's peak)."""
    raw = np.ascontiguousarray(keys).view(np.uint8)
    top = raw[7::8] if sys.byteorder == "little" else raw[::8]
    return top >> np.uint8(8 - bits)


def _part_bits(judgments: int) -> int:
    """The top key bits parting a join against ``judgments`` keys (0: one join, up to
    :data:`_JOINED_AT_ONCE`; above, at most a quarter of that a part on average)."""
    if judgments <= _JOINED_AT_ONCE:
        return 0
    # parts of a quarter: each part's join tables beside the run's hits are what the
    # matching holds at its peak (7.1 M judgments: 16 parts, 26-54 MB lower than 4)
    part = max(_JOINED_AT_ONCE >> 2, 1)
    bits = 1
    while judgments > part << bits and bits < 8:
        bits += 1
    return bits


def _joined(run_keys: UIntArray, rows: IntArray | None, keys: UIntArray,
            lines: IntArray | None) -> tuple[IntArray, IntArray]:
    """The run rows whose key is among ``keys``, and the judgment line of each (``rows``
    and ``lines`` number the keys given; None: 0, 1, ...)."""
    # one inner join (a membership test first, then a join of the hits, builds the
    # qrels' hash table twice: a third slower when the qrels are as large as the run)
    keyed = pl.DataFrame({"k": keys, "j": np.arange(keys.size, dtype=np.int64)
                          if lines is None else lines})
    left = pl.DataFrame({"k": run_keys})
    # no fresh 80 MB index at 10^7 rows: polars' own row index, unless the rows are given
    left = left.with_row_index("i") if rows is None else left.with_columns(i=pl.Series(rows))
    found = left.join(keyed, on="k", how="inner", maintain_order="left")
    hit = found.get_column("i").to_numpy().astype(np.int64, copy=False)
    j = found.get_column("j").to_numpy().astype(np.int64, copy=False)
    return hit, j


def _confirmed(hit: IntArray, j: IntArray, run_q: Index, run_docs: pl.Series,
               judged: Judged) -> tuple[IntArray, IntArray]:
    """The key matches ``hit`` (run rows), ``j`` (judgment lines) whose query index and
    document are the same strings (a 64-bit key can collide)."""
    if hit.size == 0:
        return hit, j
    same = run_q[hit] == judged.query[j]
    # one copy into one chunk for every block's gather (a qrels file's is one already)
    judged_docs = one_chunk_for(judged.docs, hit.size)
    # ``hit`` ascends: a block of matches reads one stretch of the run's rows, copied into
    # one chunk on its own (a stretch's worth of ids alive at a time, not every row's)
    for lo in range(0, hit.size, _CONFIRMED_AT_ONCE):
        rows, lines = hit[lo:lo + _CONFIRMED_AT_ONCE], j[lo:lo + _CONFIRMED_AT_ONCE]
        first = int(rows[0])
        stretch = run_docs.slice(first, int(rows[-1]) - first + 1)
        same[lo:lo + rows.size] &= (gather_many(stretch, rows - first)
                                     == gather_many(judged_docs, lines)).to_numpy()
    return hit[same], j[same]


_CONFIRMED_AT_ONCE = 1 << 20
"""Matches :func:`_confirmed` compares on the strings at a time (their run rows ascend)."""


PROBED_BELOW = 1 << 16
"""Run rows from which a lookup joins instead of probing the judgments' hash table."""
_JOINED_AT_ONCE = 1 << 21
"""Judgments from which a lookup's join is parted by the keys' top bits (a part then
holds about a quarter of this many at most)."""
TABLED_UP_TO = 1 << 18
"""Judgments up to which they get a hash table of their own (16 MB at most, beside their
keys)."""


def as_levels(grades: FloatArray) -> FloatArray:
    """trec_eval's view of grades: integer levels, -2 for a negative grade, -1 for none (NaN)."""
    # the truncation's copy fixed in place: one float array alive, not two nested
    # np.where's over scalars (each ranked row converted at every levels view)
    out = np.trunc(grades if grades.dtype.kind == "f" else grades.astype(np.float64))
    with np.errstate(invalid="ignore"):
        np.copyto(out, POOLED_UNJUDGED, where=grades < 0)
    np.copyto(out, NONPOOL, where=np.isnan(grades))
    return out


_INT32_MAX = int(np.iinfo(np.int32).max)

_REGATHERED_UP_TO = 1 << 20
"""Judged documents up to which they are kept in one chunk (larger: gathered as needed)."""


def narrowed(query: IntArray | npt.NDArray[np.int32], n: int) -> IntArray | npt.NDArray[np.int32]:
    """A query index into ``n`` queries in 4 bytes when ``n`` fits (a copy unless it is
    already): alive through the matching, 28 MB less at 7 M judgments."""
    return query.astype(np.int32, copy=False) if n <= _INT32_MAX else query


class Judged:
    """The judgments of the evaluated queries, keyed for the lookup.

    ``query`` is each line's query index, ``docs`` its document, ``grades``
    its grade; a document judged twice for one query (allowed only when the
    qrels defer that error to its query, as trec_eval does) is matched on its
    first line, and :attr:`duplicates` names, per query, the smallest such
    document.
    """

    def __init__(self, query: IntArray | npt.NDArray[np.int32], docs: pl.Series,
                 grades: FloatArray, n: int, *,
                 find_duplicates: bool) -> None:
        self.n = n
        query = narrowed(query, n)
        keys = doc_keys(query, docs)
        self.duplicates: list[str | None] = [None] * n
        if find_duplicates:
            self.duplicates = first_duplicates(query, docs, keys, n)
            if any(d is not None for d in self.duplicates):
                first = pl.DataFrame({"q": query, "d": docs}).select(
                    pl.struct("q", "d").is_first_distinct()).to_series().to_numpy()
                keep = np.flatnonzero(first)
                query, docs = query[keep], docs.gather(pl.Series(keep))
                keys, grades = keys[keep], grades[keep]
        if docs.n_chunks() > 1 and docs.len() <= _REGATHERED_UP_TO:
            docs = docs.rechunk()  # kept: every run's matches are confirmed by gathers from it
        self.query = query
        self.docs, self.grades, self.keys = docs, grades, keys
        # a collision between two lines' keys: confirm matches on the strings instead
        self.distinct = pl.Series(keys).n_unique() == keys.size

    @cached_property
    def table(self) -> KeyTable:
        """The keys' hash table (for :func:`lookup`'s probes), built when first probed."""
        return KeyTable(self.keys)

    @cached_property
    def viewed(self) -> ViewedJudgments | None:
        """The judgments keyed by their ids' views (:mod:`~rankscope.engine.view_match`)."""
        return ViewedJudgments.of(self.query, self.docs)

    def grade_codes(self, levels: bool) -> GradeCodes | None:
        """The judgments' grades as small integer codes (see :class:`GradeCodes`).

        None when they do not fit 16 bits, or a grade is -0.0 (a table of
        distinct values would make it 0.0): the caller matches float grades.
        Not kept: a byte a judgment would stay alive under the measures (10 MB
        at 10^7 judgments), for a few milliseconds a million judgments.
        """
        return GradeCodes.of(self.grades, levels)


CodeArray = npt.NDArray[np.int8] | npt.NDArray[np.int16]


@dataclass(frozen=True)
class GradeCodes:
    """Grades as codes into a table of their distinct values, ``table[codes]`` the grades.

    At 10^7 matched rows every row's grade takes 1 or 2 bytes instead of 8
    while the ranking is sorted and its ties fixed (two such arrays are alive
    at its peak); equal codes are equal grades (every NaN one code), so the
    tie fixes compare codes as they would compare grades. ``missing`` is the
    code of a document not judged (NaN, or trec_eval's level -1).
    """

    codes: CodeArray
    table: FloatArray
    missing: int

    @classmethod
    def of(cls, grades: FloatArray, levels: bool = False) -> GradeCodes | None:
        """The codes of ``grades`` (trec_eval's levels with ``levels``) and of a document
        not judged; None: more than 16 bits, or -0.0.

        Worked out a million judgments at a time (10^7 judgments: no sorted copy,
        inverse or levels of every one at once, beside the ordering).
        """
        missing = NONPOOL if levels else np.nan
        distinct = {missing}
        for lo in range(0, grades.size, _CODED_AT_ONCE):
            part = _piece(grades, lo, levels)
            if bool(np.any((part == 0) & np.signbit(part))):
                return None
            distinct.update(pl.Series(part).unique().to_list())
            if len(distinct) > np.iinfo(np.int16).max:
                return None
        table = np.unique(np.array(list(distinct), dtype=np.float64))  # one NaN, last
        codes: CodeArray = np.empty(grades.size, dtype=np.int8) \
            if table.size <= np.iinfo(np.int8).max else np.empty(grades.size, dtype=np.int16)
        for lo in range(0, grades.size, _CODED_AT_ONCE):
            part = _piece(grades, lo, levels)
            at = np.searchsorted(table, part)
            if not np.array_equal(table[np.minimum(at, table.size - 1)], part, equal_nan=True):
                return None  # a value the table does not hold exactly: keep the floats
            codes[lo:lo + part.size] = at
        found = int(np.searchsorted(table, missing))
        return cls(codes, table, found)


_CODED_AT_ONCE = 1 << 20
"""Judgments :meth:`GradeCodes.of` codes at a time."""


def _piece(grades: FloatArray, lo: int, levels: bool) -> FloatArray:
    part = grades[lo:lo + _CODED_AT_ONCE]
    return as_levels(part) if levels else part


def match_rows(qidx: Index, docs: pl.Series, judged: Judged, *,
               keys_out: UIntArray | None = None, levels: bool = False) -> FloatArray:
    """The grade of each row (NaN when not judged), rows given by query index and document.

    ``keys_out`` receives each row's key (for the duplicate search). With
    ``levels`` the grades are trec_eval's levels (:func:`as_levels`),
    converted on the judgments, not on every row.

    From :data:`_HALVED_FROM` rows the rows are keyed and joined in two halves,
    one after the other: the join's own memory (about 100 MB a half at 10^7
    rows, in polars' allocator, which keeps it a while after it is freed) is
    reused by the second half instead of both being alive at once on two
    threads; on a machine whose cores are shared it was not slower (the
    caller orders the rows on another thread meanwhile).
    """
    found = _lookups(qidx, docs, judged, keys_out)
    # every row's grades (8 bytes a row) made once the lookups' keys and joins are gone:
    # not alive beside them (80 MB less at the peak at 10^7 rows)
    out = np.full(qidx.size, NONPOOL if levels else np.nan)
    source = as_levels(judged.grades) if levels else judged.grades
    for hit, line in found:
        out[hit] = source[line]
    return out


def match_codes(qidx: Index, docs: pl.Series, judged: Judged, coding: GradeCodes, *,
                keys_out: UIntArray | None = None) -> CodeArray:
    """:func:`match_rows` as codes: ``coding.table[match_codes(...)]`` are its grades.

    ``coding`` is ``judged.grade_codes(levels)``; each row takes 1 or 2 bytes.
    """
    found = _lookups(qidx, docs, judged, keys_out)
    out: CodeArray = np.full(qidx.size, coding.missing, dtype=coding.codes.dtype)
    for hit, line in found:
        out[hit] = coding.codes[line]
    return out


def _lookups(qidx: Index, docs: pl.Series, judged: Judged,
             keys_out: UIntArray | None) -> list[tuple[Positions, Positions]]:
    """The rows found in ``judged`` and their judgment lines, a half of the rows at a time."""
    if qidx.size == 0 or judged.keys.size == 0:
        if keys_out is not None and qidx.size:
            doc_keys(qidx, docs, out=keys_out)
        return []
    half = qidx.size // 2
    parts = [(0, half), (half, qidx.size)] if qidx.size >= _HALVED_FROM else [(0, qidx.size)]

    # a half's matches are held while the other is matched: 4 bytes each (18 MB at 10^7 rows)
    narrow = len(parts) > 1 and max(qidx.size, judged.keys.size) <= _INT32_MAX

    def probe(lo: int, hi: int) -> tuple[Positions, Positions]:
        part_q, part_docs = qidx[lo:hi], docs.slice(lo, hi - lo)
        # a small run's ids matched by their views on this thread, if they can be (against
        # judgments few enough for a table of their own, as the probe below)
        viewed = judged.viewed if keys_out is None and hi - lo < VIEWED_BELOW \
            and judged.keys.size <= TABLED_UP_TO else None
        found = None if viewed is None else viewed_lookup(part_q, part_docs, viewed)
        if found is None:
            # keys of this part only, freed after the lookup unless the caller keeps them
            part_keys = doc_keys(part_q, part_docs,
                                 out=None if keys_out is None else keys_out[lo:hi])
            found = lookup(part_keys, part_q, part_docs, judged)
            del part_keys
        hit, line = found[0] + lo, found[1]
        return (hit.astype(np.int32), line.astype(np.int32)) if narrow else (hit, line)

    return [probe(lo, hi) for lo, hi in parts]


_HALVED_FROM = 1 << 22
"""Rows from which :func:`match_rows` joins them in two halves (one after the other)."""
