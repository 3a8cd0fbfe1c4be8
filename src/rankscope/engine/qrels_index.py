"""What ranking a run reads from its qrels, worked out once per :class:`Qrels` object.

An evaluation loop ranks many runs against one qrels: a validation set after
every training epoch, the runs of a track (``rankscope evaluate QRELS RUN1 ...
RUN17``), the runs of a comparison. The graded rows, their query ids and
highest grade, the judgments keyed for the lookup
(:class:`~rankscope.engine.ranking_match.Judged`) and each query's judged
grades best first depend only on the qrels and on which queries are
evaluated, and so do the kernels' statistics of the judged lists (each judged
row's query and best-first position, R per query, the ideal DCG's terms and
their sums at every cut-off: :meth:`QrelsIndex.shared`), so :func:`qrels_index`
keeps them with the Qrels object (in a weak mapping: they go when the object
goes) and the ranking step (:func:`~rankscope.engine.ranking.rank`) and the
kernels read them from there instead of working them out again for every run.

A :class:`~rankscope.data.tables.Qrels` is immutable (its frame is never
changed in place), so nothing kept here can go stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.run_queries import index_of
from rankscope.data.tables import Qrels
from rankscope.engine.ranked_lists import csr
from rankscope.engine.ranking_match import Judged, narrowed

__all__ = ["OneRun", "QrelsIndex", "judged_lists", "qrels_index"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
_T = TypeVar("_T")

_KEPT = 4
"""Entries kept per kind and qrels (distinct sets of evaluated queries; the oldest goes)."""


class QrelsIndex:
    """The parts of one qrels every ranking against it reads (see the module docstring).

    ``graded`` are the rows with a grade, ``query_ids`` their distinct query
    ids in byte order, ``max_grade`` the highest grade (0 when there is none).
    """

    def __init__(self, qrels: Qrels) -> None:
        frame = qrels.held  # query ids as read (a large TREC file's: codes, looked up by code)
        grade = frame.get_column("grade")
        self.graded = frame.filter(pl.col("grade").is_not_null()) if grade.null_count() \
            else frame
        self.query_ids: list[str] = sorted(
            self.graded.get_column("query_id").unique().cast(pl.String).to_list())
        grades = self.graded.get_column("grade")
        self.max_grade = float(grades.max()) if grades.len() else 0.0  # type: ignore[arg-type]
        self.query_set = frozenset(self.query_ids)
        self._find_duplicates = qrels.deferred_duplicates == "report"
        self._lock = threading.RLock()
        self._kept: OrderedDict[Hashable, object] = OrderedDict()
        self._last = False

    def _key(self, evaluated: list[str]) -> Hashable:
        """``evaluated`` as a key: every query of the qrels (the usual case) or the list."""
        return "every query" if evaluated is self.query_ids or evaluated == self.query_ids \
            else tuple(evaluated)

    def _kept_or_made(self, key: Hashable, make: Callable[[], _T]) -> _T:
        with self._lock:  # runs may be ranked on several threads against one qrels
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]  # type: ignore[return-value]
            made = make()
            self._kept[key] = made
            while len(self._kept) > 3 * _KEPT:
                self._kept.popitem(last=False)
            return made

    def judged(self, evaluated: list[str]) -> Judged:
        """The judgments of the ``evaluated`` queries (indexed in that list), keyed."""
        return self._kept_or_made(("judged", self._key(evaluated)),
                                  lambda: self._make_judged(evaluated))

    def _make_judged(self, evaluated: list[str]) -> Judged:
        graded = self.graded
        jq = index_of(graded.get_column("query_id"), evaluated)
        inside = jq >= 0
        docs = graded.get_column("doc_id")
        # the frame's own values, not a copy (alive beside the matching: 57 MB at 7 M lines)
        grades = graded.get_column("grade").to_numpy().astype(np.float64, copy=False)
        if not inside.all():
            docs, grades, jq = docs.filter(pl.Series(inside)), grades[inside], jq[inside]
        # narrowed here, not by Judged: the call would hold the 8-byte index (and a copy of
        # it, jq[inside]) through the keys' making (57 + 57 MB at 7 M judgments)
        query = narrowed(jq, len(evaluated))
        del jq, inside
        return Judged(query, docs, grades, len(evaluated),
                      find_duplicates=self._find_duplicates)

    def judged_lists(self, evaluated: list[str], *, levels: bool) -> tuple[IntArray, FloatArray]:
        """Each evaluated query's judged grades best first, as CSR (offsets, grades).

        After :meth:`last_ranking`, the keyed judgments are no longer kept once these
        are made (the ranking asks for both: the keyed ones to match, which it holds,
        then these, once matched).
        """
        made = self._kept_or_made(
            ("lists", self._key(evaluated), levels),
            lambda: judged_lists(self.judged(evaluated), len(evaluated), levels))
        if self._last:
            with self._lock:
                for key in [k for k in self._kept if isinstance(k, tuple) and k[0] == "judged"]:
                    del self._kept[key]
        return made

    def last_ranking(self) -> None:
        """Say that the next ranking against these qrels is the last (a command line
        ranking its one run, or the last of its runs): the keyed judgments (at 10^7
        judgments their keys, query indices and grades, 24 bytes a judgment, and their
        hash table) then go with that ranking instead of being kept for another.
        Another ranking still gives the same values (it keys the judgments again)."""
        self._last = True

    def shared(self, evaluated: list[str], *, levels: bool) -> dict[tuple[object, ...], object]:
        """The kernels' statistics of :meth:`judged_lists` ``(evaluated, levels=levels)``,
        filled as the kernels ask (:meth:`~rankscope.engine.context.Context.qrels_cached`).

        After :meth:`last_ranking` no later run reads them: an empty :class:`OneRun`,
        not kept, so that the run's context keeps them as its own (bounded) values.
        """
        if self._last:
            return OneRun()
        return self._kept_or_made(("shared", self._key(evaluated), levels), dict)


class OneRun(dict[tuple[object, ...], object]):
    """The statistics of a last ranking's judged lists (see :meth:`QrelsIndex.shared`):
    read by that run's kernels only, so kept by its context, within its budget
    (:class:`~rankscope.engine.kept.Kept`), not with the qrels."""


_INDEXES: WeakKeyDictionary[Qrels, QrelsIndex] = WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def qrels_index(qrels: Qrels) -> QrelsIndex:
    """The :class:`QrelsIndex` of ``qrels``, made on first use and kept with the object."""
    with _INDEXES_LOCK:
        found = _INDEXES.get(qrels)
        if found is None:
            found = _INDEXES[qrels] = QrelsIndex(qrels)
        return found


def judged_lists(judged: Judged, n: int, levels: bool) -> tuple[IntArray, FloatArray]:
    """Each query's judged grades (levels >= 0 with ``levels``), best first, in CSR form."""
    q, g = judged.query, judged.grades
    if levels:
        g = np.trunc(g)
        keep = g >= 0
        q, g = q[keep], g[keep]
    counts = np.bincount(q, minlength=n).astype(np.int64) if q.size else np.zeros(n, np.int64)
    return csr(counts), _best_first(q, g, n)


def _best_first(q: IntArray | npt.NDArray[np.int32], g: FloatArray, n: int) -> FloatArray:
    """The grades ``g`` ordered by query ``q``, then from best to worst.

    Grades are nearly always a few whole numbers: then counting each
    (query, grade) pair and writing each grade out as often as it occurs is
    one linear pass, where sorting ten million judgments takes half a second.
    The pairs are counted :data:`_COUNTED_AT_ONCE` judgments at a time: no
    temporaries of every judgment (four 8-byte arrays, 230 MB at 7 M
    judgments, made before the matching and kept resident by the allocator).
    """
    if g.size:
        top, bottom = float(g.max()), float(g.min())  # NaN makes span NaN: sorted below
        span = top - bottom + 1.0
        if np.isfinite(span) and span * n <= 4 * g.size + 4096 and _whole(g):
            width = int(span)
            per_bin = np.zeros(n * width, dtype=np.int64)
            for lo in range(0, g.size, _COUNTED_AT_ONCE):
                part_q, part_g = q[lo:lo + _COUNTED_AT_ONCE], g[lo:lo + _COUNTED_AT_ONCE]
                # q may be 32-bit: the bins in 64 bits
                per_bin += np.bincount(part_q * np.int64(width) + (top - part_g).astype(np.int64),
                                       minlength=n * width)
            grade = top - np.tile(np.arange(width, dtype=np.float64), n)
            return np.repeat(grade, per_bin)
    return g[np.lexsort((-g, q))]


def _whole(g: FloatArray) -> bool:
    """Whether every grade is a whole number and none is -0.0 (checked a block at a time)."""
    for lo in range(0, g.size, _COUNTED_AT_ONCE):
        part = g[lo:lo + _COUNTED_AT_ONCE]
        if not np.array_equal(part, np.trunc(part)) or np.any(np.signbit(part) & (part == 0.0)):
            return False
    return True


_COUNTED_AT_ONCE = 1 << 20
"""Judgments :func:`_best_first` counts (and checks) at a time."""
