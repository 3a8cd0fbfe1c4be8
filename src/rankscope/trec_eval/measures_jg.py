"""trec_eval's judgment-group measures (``-R qrels_jg``): map_avgjg, P_avgjg, Rprec_mult_avgjg.

Each (query, JG) pair is ranked and scored by the engine
(:mod:`rankscope.engine.trec_jg`) with the measure's per-query computation
(map, P, Rprec_mult); a query's value averages its JGs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from rankscope.data.trec_dialect import QrelsTable, RunTable
from rankscope.engine.trec_compute import COMPUTE, Settings
from rankscope.engine.trec_jg import average_over_groups, jg_lists
from rankscope.engine.trec_stats import QueryStats
from rankscope.trec_eval.catalog import BY_NAME, Bound
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import PerQuery

__all__ = ["evaluate_jg"]

_PER_JG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


def evaluate_jg(opts: Options, rel_info: QrelsTable, run: RunTable,
                bounds: list[Bound]) -> PerQuery:
    """Per-query values of the qrels_jg measures (others fail as in trec_eval)."""
    qrels = rel_info.frame
    qids = qrels.get_column("query_id").unique().sort()
    if opts.debug_query is not None:
        qids = qids.filter(qids == opts.debug_query)
    n = qids.len()
    qmap = pl.DataFrame({"query_id": qids, "qidx": np.arange(n, dtype=np.int64)})
    lists, present, run_dup, pair_query = jg_lists(
        qrels, run, qmap, opts.evaluation(), max_ret=opts.max_ret)
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
                average_over_groups(values, pair_query, n_jgs, n)
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
