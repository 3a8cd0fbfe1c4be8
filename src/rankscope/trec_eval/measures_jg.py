"""trec_eval's judgment-group measures (``-R qrels_jg``): map_avgjg, P_avgjg, Rprec_mult_avgjg.

A qrels_jg file holds several users' judgments (judgment groups, JGs) per
query. Each (query, JG) pair is scored like a query of its own, against the
query's ranking (same ties, ``-M``, ``-J``, ``-l`` and duplicate rule) with
that JG's judgments: the engine ranks the run once per pair (the pair's id
sorts as the query, then the JG, in byte order) and computes map, P and
Rprec_mult; a query's value is the sum over its JGs (in byte order of the JG
name) divided by the number of JGs when there is more than one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.tables import Qrels, Run
from rankscope.data.trec_dialect import QrelsTable, RunTable
from rankscope.engine.kernel_values import compute
from rankscope.engine.ranking import FloatArray, rank
from rankscope.trec_eval.catalog import BY_NAME, Bound, metrics_of
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import PerQuery

__all__ = ["evaluate_jg"]

_PER_JG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
_SEP = "\x00"  # below every byte of an id: "q" + SEP + jg sorts as (q, jg)


def _pair_ids(query: pl.Expr, jg: pl.Expr) -> pl.Expr:
    return pl.concat_str([query, pl.lit(_SEP), jg])


def evaluate_jg(opts: Options, rel_info: QrelsTable, run: RunTable,
                bounds: list[Bound]) -> PerQuery:
    """Per-query values of the qrels_jg measures (others fail as in trec_eval)."""
    qrels = rel_info.frame
    if opts.debug_query is not None:
        qrels = qrels.filter(pl.col("query_id") == opts.debug_query)
    qids = qrels.get_column("query_id").unique().sort().to_list()
    n = len(qids)
    groups = qrels.select("query_id", "jg").unique().with_columns(
        _pair_ids(pl.col("query_id"), pl.col("jg")).alias("pair")).sort("pair")
    judged = Qrels(qrels.select(_pair_ids(pl.col("query_id"), pl.col("jg")).alias("query_id"),
                                "doc_id", pl.col("rel").cast(pl.Float64).alias("grade")),
                   _trusted=True)
    rows = run.frame.with_columns(pl.col("query_id").cast(pl.String)).join(
        groups.select("query_id", "pair"), on="query_id", how="inner", maintain_order="left")
    ranked = Run(rows.select(pl.col("pair").alias("query_id"), "doc_id", "score"),
                 name=run.run_id, _trusted=True, _defer_duplicates="report")
    ev = opts.evaluation()
    lists = rank(judged, ranked, ties="trec", unjudged=ev.unjudged, queries="qrels",
                 levels=True, stand_in=opts.complete, max_ret=opts.max_ret)
    pair_query = np.searchsorted(np.array(qids, dtype=object),
                                 np.array([p.split(_SEP, 1)[0] for p in lists.query_ids],
                                          dtype=object)).astype(np.int64)
    present = np.zeros(n, dtype=bool)
    present[pair_query[lists.in_run]] = True
    first_pair = np.searchsorted(pair_query, np.arange(n))
    n_jgs = np.bincount(pair_query, minlength=n).astype(np.float64)
    stand_in = (~present).astype(np.float64) if opts.complete else np.zeros(n)
    per = PerQuery(qids, stand_in)
    for bound in bounds:
        spec = bound.spec
        if spec.name == "num_q":
            per.columns["num_q"] = [np.ones(n)]
        elif spec.name in _PER_JG:
            inner = Bound(BY_NAME[_PER_JG[spec.name]], bound.values, (), bound.names)
            metrics = metrics_of(inner, opts.level, opts.n_docs) or []
            values = compute(lists, metrics, unjudged="nonrelevant")
            per.columns[spec.name] = [average_over_groups(values[:, j], pair_query, n_jgs, n)
                                      for j in range(len(metrics))]
        elif spec.value not in ("runid", "string"):
            per.columns[spec.name] = [np.zeros(n) for _ in bound.names]
    run_dup = lists.run_duplicates
    per.failure = first_failure(
        opts, per.query_ids, present, bounds,
        lambda q: (f"trec_eval.form_res_qrels: duplicate docs {run_dup[first_pair[q]]}"
                   if run_dup[first_pair[q]] is not None else None),
        "qrels_jg",
    )
    return per


def average_over_groups(values: FloatArray, pair_query: npt.NDArray[np.int64], n_jgs: FloatArray,
                        n: int) -> FloatArray:
    """Sum over each query's JGs in order, divided by their number if above one."""
    total = np.bincount(pair_query, weights=values, minlength=n).astype(np.float64)
    return np.where(n_jgs > 1, total / np.maximum(n_jgs, 1.0), total)
