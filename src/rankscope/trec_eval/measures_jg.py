"""trec_eval's judgment-group measures (``-R qrels_jg``): map_avgjg, P_avgjg, Rprec_mult_avgjg.

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

from rankscope.data.trec_dialect import QrelsTable, RunTable
from rankscope.engine.trec_lists import (
    NONPOOL,
    UNJUDGED,
    TrecLists,
    _csr,
    _first_dups,
    ranked_frame,
)
from rankscope.engine.trec_registry import COMPUTE, Settings
from rankscope.engine.trec_stats import FloatArray, QueryStats
from rankscope.trec_eval.catalog import BY_NAME, Bound
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import PerQuery

__all__ = ["evaluate_jg"]

_PER_JG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


def _jg_lists(
    opts: Options, qrels: pl.DataFrame, run: RunTable, qmap: pl.DataFrame
) -> tuple[TrecLists, npt.NDArray[np.bool_], list[str | None], npt.NDArray[np.int64]]:
    """Rankings of every (query, JG) pair, their query index, and run duplicates."""
    n = qmap.height
    rows, present = ranked_frame(qmap, run, complete=opts.complete, max_ret=opts.max_ret)
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
    if opts.judged_only:
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
        lvl=opts.level,
        in_run=np.ones(n_pairs, dtype=bool),
    )
    return lists, present, run_dup, groups.get_column("qidx").to_numpy().astype(np.int64)


def evaluate_jg(opts: Options, rel_info: QrelsTable, run: RunTable,
                bounds: list[Bound]) -> PerQuery:
    """Per-query values of the qrels_jg measures (others fail as in trec_eval)."""
    qrels = rel_info.frame
    qids = qrels.get_column("query_id").unique().sort()
    if opts.debug_query is not None:
        qids = qids.filter(qids == opts.debug_query)
    n = qids.len()
    qmap = pl.DataFrame({"query_id": qids, "qidx": np.arange(n, dtype=np.int64)})
    lists, present, run_dup, pair_query = _jg_lists(opts, qrels, run, qmap)
    st = QueryStats(lists)
    n_jgs = np.bincount(pair_query, minlength=n).astype(np.float64)
    stand_in = (~present).astype(np.float64) if opts.complete else np.zeros(n)
    per = PerQuery(qids.to_list(), stand_in)
    settings = Settings(n_docs=opts.n_docs)
    for bound in bounds:
        spec = bound.spec
        if spec.name == "num_q":
            per.columns["num_q"] = [np.ones(n)]
        elif spec.name in _PER_JG:
            inner = Bound(BY_NAME[_PER_JG[spec.name]], bound.values, (), bound.names)
            per.columns[spec.name] = [
                _average(values, pair_query, n_jgs, n)
                for values in COMPUTE[inner.name](st, inner, settings)
            ]
        elif spec.value not in ("runid", "string"):
            per.columns[spec.name] = [np.zeros(n) for _ in bound.names]
    per.failure = first_failure(
        opts, per.query_ids, present, bounds,
        lambda q: (f"trec_eval.form_res_qrels: duplicate docs {run_dup[q]}"
                   if run_dup[q] is not None else None),
        "qrels_jg",
    )
    return per


def _average(values: FloatArray, pair_query: npt.NDArray[np.int64], n_jgs: FloatArray,
             n: int) -> FloatArray:
    """Sum over each query's JGs in order, divided by their number if above one."""
    total = np.bincount(pair_query, weights=values, minlength=n).astype(np.float64)
    return np.where(n_jgs > 1, total / np.maximum(n_jgs, 1.0), total)
