"""trec_eval's judgment-group rankings (``-R qrels_jg``) and their average.

A qrels_jg file holds several users' judgments (judgment groups, JGs) per
query. Each (query, JG) pair is scored like a query of its own, against the
query's ranking (same ties, ``-M``, ``-J`` and duplicate check) with that JG's
judgments; a query's value is the sum over its JGs (in byte order of the JG
name) divided by the number of JGs when there is more than one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.trec_dialect import RunTable
from rankscope.engine.options import EvalOptions
from rankscope.engine.trec_lists import (
    NONPOOL,
    UNJUDGED,
    TrecLists,
    _csr,
    _first_dups,
    ranked_frame,
    trec_level,
)
from rankscope.engine.trec_stats import FloatArray

__all__ = ["average_over_groups", "jg_lists"]


def jg_lists(
    qrels: pl.DataFrame, run: RunTable, qmap: pl.DataFrame, options: EvalOptions, *,
    max_ret: int,
) -> tuple[TrecLists, npt.NDArray[np.bool_], list[str | None], npt.NDArray[np.int64]]:
    """Rankings of every (query, JG) pair, their query index, and run duplicates.

    ``qmap`` gives each evaluated query its index (``query_id``, ``qidx``);
    ``options`` and ``max_ret`` are read as by
    :func:`~rankscope.engine.trec_lists.build_lists` (``-c``, ``-J``, ``-l``, ``-M``).
    """
    complete = options.queries == "qrels"
    judged_only = options.unjudged == "condensed"
    lvl = trec_level(options.rel)
    n = qmap.height
    rows, present = ranked_frame(qmap, run, complete=complete, max_ret=max_ret)
    run_dup = _first_dups(rows.select("qidx", "doc_id"), n)
    judged = qrels.join(qmap, on="query_id", how="inner")
    groups = judged.select("qidx", "jg").unique().sort("qidx", "jg")
    groups = groups.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("pidx"))
    pairs = rows.join(groups, on="qidx", how="inner").sort("pidx", "pos")
    pairs = pairs.join(judged.select("qidx", "jg", "doc_id", "rel"),
                       on=["qidx", "jg", "doc_id"], how="left", maintain_order="left")
    rel = pairs.get_column("rel")
    filled = rel.fill_null(0).to_numpy()
    values = np.where(rel.is_null().to_numpy(), NONPOOL,
                      np.where(filled < 0, UNJUDGED, filled)).astype(np.int64)
    pidx = pairs.get_column("pidx").to_numpy()
    if judged_only:
        keep = values >= 0
        values, pidx = values[keep], pidx[keep]
    n_pairs = groups.height
    counts = (
        judged.filter(pl.col("rel") >= 0).join(groups, on=["qidx", "jg"])
        .group_by("pidx", "rel").agg(pl.len().alias("count")).sort("pidx", "rel")
    )
    lists = TrecLists(
        query_ids=[str(i) for i in range(n_pairs)],
        offsets=_csr(pidx, n_pairs),
        values=values,
        level_offsets=_csr(counts.get_column("pidx").to_numpy(), n_pairs),
        levels=counts.get_column("rel").to_numpy().astype(np.int64),
        level_counts=counts.get_column("count").to_numpy().astype(np.int64),
        lvl=lvl,
        in_run=np.ones(n_pairs, dtype=bool),
    )
    return lists, present, run_dup, groups.get_column("qidx").to_numpy().astype(np.int64)


def average_over_groups(values: FloatArray, pair_query: npt.NDArray[np.int64], n_jgs: FloatArray,
             n: int) -> FloatArray:
    """Sum over each query's JGs in order, divided by their number if above one."""
    total = np.bincount(pair_query, weights=values, minlength=n).astype(np.float64)
    return np.where(n_jgs > 1, total / np.maximum(n_jgs, 1.0), total)
