"""trec_eval's gain tables and ideal rankings (``ndcg``, ``G``, ``Rndcg``, ``rbp``...).

Per query, trec_eval builds a table of (level, gain) entries: first one per
``key=value`` parameter whose key is an integer, then one for each level
0..num_rel_levels-1 not given (gain = level). Entries are sorted by gain with
glibc's merge sort and a comparator that truncates the gain difference to an
int, so gains less than 1 apart keep their insertion order (``-m
ndcg.1=2.5`` ranks level 2 above level 1). A ranked document's gain is that of
the first entry with its value (0 if none). The ideal ranking walks the table
from the top: each entry contributes as many positions as the query has
judgments at its level, and the walk stops at the first such entry whose gain
is <= 0 (or at once if the top entry's gain is <= 0).

Queries share a table when they have the same ``num_rel_levels``, so tables
are built once per distinct value and applied to all its queries at once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from rankscope.data.cnum import atof, atol
from rankscope.data.trec_catalog import well_formed_pairs
from rankscope.engine.context import Context
from rankscope.engine.ranking import FloatArray, IntArray
from rankscope.engine.rowsets import RowSet
from rankscope.errors import MetricParameterError

__all__ = ["Entry", "GainInfo", "gain_info", "gain_table", "parse_gain_pairs"]

Entry = tuple[int, float, int | None]  # level, gain, level whose count it takes


def parse_gain_pairs(name: str, text: str) -> tuple[tuple[str, float], ...]:
    """``key=value`` parameters as trec_eval reads them (values with C ``atof``)."""
    if not text:
        return ()
    if not well_formed_pairs(text):
        raise MetricParameterError(f"{name}: malformed gains {text!r} (expected '1=3,2=9')")
    return tuple((key, atof(value)) for key, value in (p.split("=", 1) for p in text.split(",")))


def _valid_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return bool(body) and all("0" <= ch <= "9" for ch in body)


def _compare(a: Entry, b: Entry) -> int:
    diff = a[1] - b[1]
    return 0 if diff != diff else int(max(min(diff, 2.0**31 - 1), -(2.0**31)))


def _msort(items: list[Entry]) -> list[Entry]:
    """glibc's merge sort: halves at n/2, ties (comparator <= 0) take the left."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _msort(items[:half]), _msort(items[half:])
    out: list[Entry] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if _compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def gain_table(pairs: tuple[tuple[str, float], ...], n_levels: int) -> list[Entry]:
    """The sorted gain table of a query with ``n_levels`` = num_rel_levels."""
    levels = [atol(k) for k, _ in pairs if _valid_int(k)]
    gains = [v for k, v in pairs if _valid_int(k)]
    sources: list[int | None] = [None] * len(levels)
    n_params = len(levels)
    for level in range(n_levels):
        for j in range(n_params):
            if levels[j] == level:
                sources[j] = level  # the first parameter for a level takes its count
                break
        else:
            levels.append(level)
            gains.append(float(level))
            sources.append(level)
    return _msort(list(zip(levels, gains, sources, strict=True)))


class GainInfo:
    """Gains of the ranked documents and the ideal ranking, for every query.

    Attributes
    ----------
    rows : RowSet
        The ranked rows whose gain is not 0, in rank order.
    gain : ndarray of float
        Their gains.
    ideal_offsets, ideal_gain : ndarray
        CSR layout of each query's ideal ranking (positive gains only).
    top : ndarray of float
        The gain of each query's top table entry (the walk's starting gain).
    tables : dict of int to list of Entry
        The sorted table for each num_rel_levels value present.
    """

    def __init__(
        self, st: Context, pairs: tuple[tuple[str, float], ...],
        transform: Callable[[list[Entry]], list[Entry]] | None = None,
    ) -> None:
        self.st = st
        nrl = st.num_rel_levels
        self.top = np.zeros(st.n, dtype=np.float64)
        self.tables: dict[int, list[Entry]] = {}
        for group in np.unique(nrl).tolist():
            table = gain_table(pairs, group)
            if transform is not None:
                table = transform(table)
            self.tables[group] = table
            if table:
                self.top[nrl == group] = table[-1][1]
        self.rows, self.gain = self._ranked_gains(st, nrl)

    @cached_property  # the judged levels' alone: a kernel keeping what it makes of it
    def _ideal_layout(self) -> tuple[FloatArray, IntArray]:  # for every run reads it once
        st, nrl = self.st, self.st.num_rel_levels
        ideal_q: list[IntArray] = []
        ideal_g: list[FloatArray] = []
        for group, table in self.tables.items():
            queries = np.flatnonzero(nrl == group)
            q, g = _ideal(table, queries, _level_matrix(st, queries, group))
            ideal_q.append(q)
            ideal_g.append(g)
        iq = np.concatenate(ideal_q) if ideal_q else np.zeros(0, np.int64)
        ig = np.concatenate(ideal_g) if ideal_g else np.zeros(0)
        order = np.argsort(iq, kind="stable")
        counts = np.bincount(iq, minlength=st.n) if iq.size else np.zeros(st.n, np.int64)
        return ig[order], np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @property
    def ideal_gain(self) -> FloatArray:
        """The gains of each query's ideal ranking, in CSR layout (:attr:`ideal_offsets`)."""
        return self._ideal_layout[0]

    @property
    def ideal_offsets(self) -> IntArray:
        """CSR offsets of the ideal rankings (positive gains only)."""
        return self._ideal_layout[1]

    def _ranked_gains(self, st: Context, nrl: IntArray) -> tuple[RowSet, FloatArray]:
        """The rows with a non-zero gain (few: judged documents, mostly) and their gains."""
        levels: set[int] = set()
        for table in self.tables.values():
            first: dict[int, float] = {}
            for level, level_gain, _ in table:
                first.setdefault(level, level_gain)
            levels.update(level for level, g in first.items() if g != 0.0)
        wanted = np.array(sorted(levels), dtype=np.int64)
        base = st.judged_rows if wanted.size and wanted.min() >= 0 else st.all_rows
        candidates = base.sub(np.isin(st.values_at(base.rows), wanted))
        values = st.values_at(candidates.rows)
        gain = np.zeros(values.size, dtype=np.float64)
        row_nrl = nrl[candidates.q]
        for group, table in self.tables.items():
            inside = np.flatnonzero(row_nrl == group)
            gain[inside] = _lookup(table, values[inside])
        keep = gain != 0.0
        return candidates.sub(keep), gain[keep]

    @cached_property  # read by every cut-off of a measure
    def ideal_len(self) -> IntArray:
        """L: positions in each query's ideal ranking."""
        return np.diff(self.ideal_offsets)

    @cached_property  # read by every cut-off of a measure
    def ideal_query(self) -> IntArray:
        """Query index of each ideal position."""
        return np.repeat(np.arange(self.st.n, dtype=np.int64), self.ideal_len)

    @cached_property  # read by every cut-off of a measure
    def ideal_pos(self) -> IntArray:
        """0-based position of each ideal entry."""
        starts = np.repeat(self.ideal_offsets[:-1], self.ideal_len)
        return np.arange(self.ideal_gain.size, dtype=np.int64) - starts


def _level_matrix(st: Context, queries: IntArray, n_levels: int) -> IntArray:
    """Counts per (query of ``queries``, level 0..n_levels-1), as a dense matrix."""
    local = np.full(st.n, -1, dtype=np.int64)
    local[queries] = np.arange(queries.size)
    lq = local[st.level_query]
    keep = lq >= 0
    out = np.zeros((queries.size, max(n_levels, 0)), dtype=np.int64)
    out[lq[keep], st.level_values[keep]] = st.level_counts[keep]
    return out


def _lookup(table: list[Entry], values: IntArray) -> FloatArray:
    first: dict[int, float] = {}
    for level, gain, _ in table:
        first.setdefault(level, gain)
    if not first:
        return np.zeros(values.size)
    keys = np.array(sorted(first), dtype=np.int64)
    gains = np.array([first[k] for k in keys.tolist()], dtype=np.float64)
    idx = np.clip(np.searchsorted(keys, values), 0, keys.size - 1)
    return np.where(keys[idx] == values, gains[idx], 0.0)


def _ideal(
    table: list[Entry], queries: IntArray, levels: IntArray
) -> tuple[IntArray, FloatArray]:
    """The ideal positions (query index, gain) of ``queries`` sharing ``table``."""
    if not table or table[-1][1] <= 0.0 or queries.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    top_down = table[::-1]
    gains = np.array([e[1] for e in top_down], dtype=np.float64)
    counts = np.zeros((queries.size, len(top_down)), dtype=np.int64)
    for j, (_, _, source) in enumerate(top_down):
        if source is not None and 0 <= source < levels.shape[1]:
            counts[:, j] = levels[:, source]
    stop = np.cumsum((counts > 0) & (gains <= 0.0)[None, :], axis=1) > 0
    counts[stop] = 0
    flat = counts.ravel()
    q = np.repeat(np.repeat(queries, len(top_down)), flat)
    g = np.repeat(np.tile(gains, queries.size), flat)
    return q.astype(np.int64), g


def gain_info(
    st: Context, pairs: tuple[tuple[str, float], ...], key: str = "",
    transform: Callable[[list[Entry]], list[Entry]] | None = None,
) -> GainInfo:
    """The :class:`GainInfo` of ``pairs`` on a levels context (cached by pairs and ``key``)."""
    return st.cached(("gain_info", pairs, key),  # type: ignore[no-any-return]
                     lambda: GainInfo(st, pairs, transform))
