"""What the ranking step hands the kernels: :class:`RankedLists`.

For the evaluated queries (in byte order), the grades of the ranked documents
in rank order, flattened, with offsets marking where each query starts
(compressed sparse rows), each query's judged grades best first in the same
layout, and, worked out only when something reads them, the run rows they came
from (:class:`LazyRows`). Built by :func:`rankscope.engine.ranking.rank`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.ranking_order import gather_many

__all__ = ["STAND_IN_DOC", "BoolArray", "FloatArray", "IntArray", "LazyRows", "RankedLists",
           "csr"]

STAND_IN_DOC = "ceci_nest_pas_un_docno"
"""The document of trec_eval ``-c``'s stand-in ranking for a query the run lacks."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def csr(counts: IntArray) -> IntArray:
    """CSR offsets of lists ``counts`` long each: where each starts, and the total last."""
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


@dataclass(frozen=True)
class RankedLists:
    """All rankings of one run, judged and ordered, ready for the kernels.

    Attributes
    ----------
    query_ids : list of str
        The evaluated queries, in byte order.
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q``'s ranked rows are ``offsets[q]:offsets[q + 1]``.
    grades : ndarray of float64
        The grade of each ranked document; NaN when it has no (non-null)
        grade. With ``levels``: trec_eval's level (see :func:`rank`).
    in_run : ndarray of bool, shape (n_queries,)
        Whether the run has the query at all.
    judged_offsets : ndarray of int64, shape (n_queries + 1,)
        CSR offsets into ``judged_grades``.
    judged_grades : ndarray of float64
        Each query's non-null qrels grades, sorted descending (with
        ``levels``: the levels >= 0).
    max_grade : float
        The highest grade anywhere in the qrels (0 if there are none).
    row_source : ndarray of int64, or a function returning one
        The row of the run's frame each ranked row came from (same layout;
        -1 for a stand-in row), or how to find them: read them as
        :attr:`run_rows`, which calls the function once, when first read
        (most evaluations never need them).
    depth : int or None
        Rankings were cut after this many rows (None: complete).
    run_only_queries : list of str
        Queries the run has but the qrels do not (reported, not evaluated).
    missing_queries : list of str
        Queries of the qrels the run lacks: scored as empty rankings with the
        "qrels" policy, left out with "intersection", null with "nonnull".
    levels : bool
        Whether ``grades`` hold trec_eval's levels.
    qrels_shared : dict, optional
        What the kernels derive from the judged lists alone (their query of
        each judged row, R per query, the ideal DCG terms...), kept with the
        qrels for every run ranked against them
        (:meth:`~rankscope.engine.qrels_index.QrelsIndex.shared`; read through
        :meth:`~rankscope.engine.context.Context.qrels_cached`). None: kept with
        these lists only.
    """

    query_ids: list[str]
    offsets: IntArray
    grades: FloatArray
    in_run: BoolArray
    judged_offsets: IntArray
    judged_grades: FloatArray
    max_grade: float
    n_qrels_queries: int
    n_run_queries: int
    row_source: IntArray | Callable[[], IntArray] = field(repr=False)
    run_docs: pl.Series | None = field(repr=False)
    run_scores: pl.Series | None = field(repr=False)
    depth: int | None = None
    run_only_queries: list[str] = field(default_factory=list)
    missing_queries: list[str] = field(default_factory=list)
    levels: bool = False
    qrels_duplicates: list[str | None] | None = field(default=None, repr=False)
    pending_duplicates: Future[list[str | None]] | None = field(default=None, repr=False)
    pending_check: Future[object] | None = field(default=None, repr=False)
    qrels_shared: dict[tuple[object, ...], object] | None = field(
        default=None, repr=False, compare=False)

    @property
    def n_queries(self) -> int:
        """The number of evaluated queries."""
        return len(self.query_ids)

    @property
    def lengths(self) -> IntArray:
        """How many documents each query's ranking holds."""
        return np.diff(self.offsets)

    @cached_property
    def run_rows(self) -> IntArray:
        """The row of the run's frame each ranked row came from (-1: a stand-in row)."""
        source = self.row_source
        return source if isinstance(source, np.ndarray) else source()

    @cached_property
    def doc_ids(self) -> pl.Series:
        """The document id of each ranked row (same layout; gathered on demand).

        Tied rows of equal grade may come in either order among themselves
        (no measure can tell them apart), unless the ranking was asked for
        ``exact_ties``.
        """
        run_docs = self._run_column(self.run_docs)
        stand_in = self.run_rows < 0
        docs = gather_many(run_docs, np.where(stand_in, 0, self.run_rows)) if \
            run_docs.len() else pl.Series("doc_id", [STAND_IN_DOC] * stand_in.size)
        if stand_in.any():
            docs = pl.select(pl.when(pl.Series(stand_in)).then(pl.lit(STAND_IN_DOC))
                             .otherwise(docs)).to_series()
        return docs.alias("doc_id")

    @cached_property
    def scores(self) -> FloatArray:
        """The run's score of each ranked row (1 for a stand-in row)."""
        run_scores = self._run_column(self.run_scores)
        stand_in = self.run_rows < 0
        if not run_scores.len():
            return np.ones(stand_in.size)
        picked = run_scores.to_numpy()[np.where(stand_in, 0, self.run_rows)]
        return np.where(stand_in, 1.0, picked)

    def let_go_of_run(self) -> None:
        """Drop these lists' references to the run's document ids and scores.

        For a caller whose measures read neither (:attr:`doc_ids`, :attr:`scores`):
        the run's columns (700 MB of ids at 10^7 rows) are freed before the
        kernels, not held beside them. Reading either afterwards raises.
        """
        object.__setattr__(self, "run_docs", None)  # frozen: only this release mutates
        object.__setattr__(self, "run_scores", None)

    @staticmethod
    def _run_column(column: pl.Series | None) -> pl.Series:
        if column is None:  # a wrong value would pass unseen: fail instead
            raise RuntimeError("the run's document ids and scores were let go "
                               "(RankedLists.let_go_of_run) before a measure read them")
        return column

    @property
    def run_duplicates(self) -> list[str | None]:
        """Per query, the document its ranking lists twice, if any (when reported)."""
        if self.pending_duplicates is None:
            return [None] * self.n_queries
        return self.pending_duplicates.result()

    def check_duplicates(self) -> None:
        """Raise the run's duplicate-document error, when its search ran beside the measures."""
        if self.pending_check is not None:
            found = self.pending_check.result()
            if isinstance(found, Exception):
                raise found


class LazyRows:
    """Each ranked row's file row, worked out once, when first asked for.

    Building them is a whole-array gather (ten million rows on a large run)
    that most evaluations never need: the cuts and stand-in rows applied to
    the rankings are recorded here as steps instead.
    """

    def __init__(self, make: Callable[[], IntArray]) -> None:
        self._make: Callable[[], IntArray] | None = make
        self._value: IntArray | None = None
        self._lock = threading.Lock()  # the duplicate search may ask from its thread

    @classmethod
    def known(cls, rows: IntArray) -> LazyRows:
        """Rows already at hand."""
        lazy = cls(lambda: rows)
        lazy._value, lazy._make = rows, None
        return lazy

    def __call__(self) -> IntArray:
        with self._lock:
            if self._value is None and self._make is not None:
                self._value, self._make = self._make(), None  # frees what it read
            if self._value is None:
                raise RuntimeError("unreachable: the rows are made before they are read")
            return self._value

    def then(self, step: Callable[[IntArray], IntArray]) -> LazyRows:
        """These rows after ``step``, also worked out when first asked for."""
        return LazyRows(lambda: step(self()))
