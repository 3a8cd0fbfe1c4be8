r"""What the supervised fusion methods learn from qrels, as ranx learns it.

Each run's *hit lists* are read once: for every training query (every query of
the training qrels), whether the document at each rank of the run's ranking
(after the depth cut) is relevant (grade >= 1). From them:

- ``mapfuse``: the run's MAP over the training queries (AP divides by the
  query's relevant documents; a query the run lacks scores 0);
- ``posfuse`` / ``slidefuse``: :math:`P(r)`, the share of the training
  queries ranked at least r deep whose document at rank r is relevant;
- ``probfuse``: for x segments, :math:`P(k) = \frac{1}{|Q|} \sum_q
  \frac{\text{relevant in segment } k}{\text{size of segment } k}`, each query
  cut into x segments of :math:`\lceil m_q / x \rceil` ranks (the last ones
  shorter or empty: an empty segment adds 0);
- ``segfuse``: the same over the fixed segments of 5, 10, 20, ..., 2560 ranks,
  each divided by its full size;
- ``bayesfuse``: the precision :math:`p` of the segments [0, 5), [5, 10),
  [10, 15), [15, 20), [20, 30), [30, 100), [100, 200), [200, 500), [500, 1000)
  averaged over queries, 0 raised to 0.001 and 1 - p = 0 raised to 0.001, as
  the log-odds :math:`\log(p / (1 - p))` of every rank of the segment.

|Q|, the number of training queries, counts queries a run did not rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.tables import Qrels
from rankscope.errors import OptionError

__all__ = ["BAYES_CUTS", "SEG_BOUNDS", "FusionModel", "train_fusion"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SEG_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
"""SegFuse's segment boundaries (0-based positions): [0, 5), [5, 15), [15, 35), ..."""

BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
"""BayesFuse's segment boundaries (0-based positions)."""

_FLOOR = 0.001


@dataclass(frozen=True)
class FusionModel:
    """What one supervised method learned: one array per run.

    Attributes
    ----------
    method : str
        The method trained.
    per_run : tuple of ndarray
        ``mapfuse``: [MAP]; ``posfuse``/``slidefuse``: P(r) for r = 1..;
        ``probfuse``/``segfuse``: P(k) per segment; ``bayesfuse``: the log-odds
        of each position 1..1000.
    n_queries : int
        How many training queries it was learned from.
    """

    method: str
    per_run: tuple[FloatArray, ...]
    n_queries: int


@dataclass(frozen=True)
class _Hits:
    """One run's hit lists: per ranked row its query (0..n_q-1), 0-based rank, hit."""

    query: IntArray
    pos: IntArray
    hit: FloatArray
    length: IntArray  # per training query: how many documents the run ranks
    n_relevant: FloatArray  # per training query: R
    n_queries: int


def _hits(ranked: pl.DataFrame, qrels: Qrels) -> _Hits:
    judged = qrels.frame.select("query_id", "doc_id", pl.col("grade"))
    queries = judged.get_column("query_id").unique().sort()
    qmap = pl.DataFrame({"query_id": queries,
                         "_q": np.arange(queries.len(), dtype=np.int64)})
    rows = (ranked.select("query_id", "doc_id", "rank")
            .join(qmap, on="query_id", how="inner")
            .join(judged, on=["query_id", "doc_id"], how="left")
            .sort(["_q", "rank"]))
    q = rows.get_column("_q").to_numpy().astype(np.int64)
    grade = rows.get_column("grade").fill_null(float("nan")).to_numpy().astype(np.float64)
    with np.errstate(invalid="ignore"):
        hit = (grade >= 1.0).astype(np.float64)
    n_q = int(queries.len())
    rel = judged.filter(pl.col("grade") >= 1).join(qmap, on="query_id")
    n_relevant = np.bincount(rel.get_column("_q").to_numpy().astype(np.int64),
                             minlength=n_q).astype(np.float64)
    return _Hits(q, rows.get_column("rank").to_numpy().astype(np.int64) - 1, hit,
                 np.bincount(q, minlength=n_q).astype(np.int64), n_relevant, n_q)


def _map(h: _Hits) -> FloatArray:
    # Running hit count within each query: rows are sorted by (query, rank).
    running = np.cumsum(h.hit)
    starts = np.concatenate(([0], np.cumsum(h.length)))[:-1]
    before = np.concatenate(([0.0], running))[starts]
    prec = (running - np.repeat(before, h.length)) / (h.pos + 1.0)
    ap_sum = np.bincount(h.query, weights=prec * h.hit, minlength=h.n_queries)
    ap = np.divide(ap_sum, h.n_relevant, out=np.zeros(h.n_queries), where=h.n_relevant > 0)
    return np.array([ap.mean() if h.n_queries else 0.0])


def _positional(h: _Hits) -> FloatArray:
    deepest = int(h.pos.max()) + 1 if h.pos.size else 0
    hits = np.bincount(h.pos, weights=h.hit, minlength=deepest)
    seen = np.bincount(h.pos, minlength=deepest).astype(np.float64)
    return np.divide(hits, seen, out=np.zeros(deepest), where=seen > 0)


def _probfuse(h: _Hits, segments: int) -> FloatArray:
    size = -(-h.length // segments)  # ceil(m / x) per query
    size_row = np.maximum(size[h.query], 1)
    seg = h.pos // size_row
    # Real length of each (query, segment): the last ones are shorter or empty.
    seg_len = np.clip(h.length[h.query] - seg * size_row, 0, size_row).astype(np.float64)
    out = np.bincount(seg, weights=h.hit / seg_len, minlength=segments)[:segments]
    return np.asarray(out / max(h.n_queries, 1), dtype=np.float64)


def _fixed_segments(h: _Hits, bounds: IntArray) -> FloatArray:
    seg = np.searchsorted(bounds, h.pos, side="right") - 1
    inside = seg < bounds.size - 1
    sizes = np.diff(bounds).astype(np.float64)
    out = np.bincount(seg[inside], weights=h.hit[inside] / sizes[seg[inside]],
                      minlength=bounds.size - 1)
    return np.asarray(out / max(h.n_queries, 1), dtype=np.float64)


def _bayes(h: _Hits) -> FloatArray:
    precision = _fixed_segments(h, BAYES_CUTS)
    p = np.where(precision == 0, _FLOOR, precision)
    q = 1.0 - p
    q = np.where(q == 0, _FLOOR, q)
    return np.repeat(np.log(p / q), np.diff(BAYES_CUTS))


def train_fusion(method: str, qrels: Qrels, ranked: list[pl.DataFrame],
                 segments: int = 10) -> FusionModel:
    """Learn a supervised method's per-run statistics from ``qrels``.

    ``ranked`` holds each run ranked (columns ``query_id``, ``doc_id``,
    ``rank``), cut as it will be fused. Only the queries of ``qrels`` are read.
    """
    if qrels.frame.height == 0:
        raise OptionError(f"{method} learns from qrels, and the training qrels are empty")
    per_run: list[FloatArray] = []
    n_q = 0
    for frame in ranked:
        h = _hits(frame, qrels)
        n_q = h.n_queries
        if method == "mapfuse":
            per_run.append(_map(h))
        elif method in ("posfuse", "slidefuse"):
            per_run.append(_positional(h))
        elif method == "probfuse":
            per_run.append(_probfuse(h, segments))
        elif method == "segfuse":
            per_run.append(_fixed_segments(h, SEG_BOUNDS))
        elif method == "bayesfuse":
            per_run.append(_bayes(h))
        else:
            raise OptionError(f"{method} does not learn from qrels")
    return FusionModel(method, tuple(per_run), n_q)
