"""trec_eval's preference measures (``-R prefs`` / ``-R qrels_prefs``).

The run is ranked by the engine's ranking step with score ties broken by
document id *ascending* (unlike the qrels measures), every tie ordered, cut to
``-M`` and checked for duplicates; ``-J`` and ``-l`` do not apply. Counting is
in :mod:`rankscope.engine.trec_prefs_counts`, the measures in
:mod:`rankscope.engine.kernels_trec_prefs`. Queries are handled one at a time.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from rankscope.data.tables import Qrels, Run
from rankscope.data.trec_dialect import QrelsTable, RunTable
from rankscope.engine.kernels_trec_prefs import prefs_values
from rankscope.engine.ranking import rank
from rankscope.engine.trec_prefs_counts import PrefsError, count_prefs
from rankscope.trec_eval.catalog import Bound
from rankscope.trec_eval.exits import TrecEvalExit
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import Failure, PerQuery

__all__ = ["evaluate_prefs"]


def evaluate_prefs(opts: Options, rel_info: QrelsTable, run: RunTable,
                   bounds: list[Bound]) -> PerQuery:
    """Per-query values of the preference measures (others fail as in trec_eval)."""
    frame = rel_info.frame
    if opts.debug_query is not None:
        frame = frame.filter(pl.col("query_id") == opts.debug_query)
    judged = Qrels(frame.select("query_id", "doc_id").unique().with_columns(
        pl.lit(0.0).alias("grade")), _trusted=True)
    lists = rank(judged, Run(run.frame, name=run.run_id, _trusted=True,
                             _defer_duplicates="report"),
                 ties="docid_asc", exact_ties=True, queries="qrels", levels=True,
                 stand_in=opts.complete, max_ret=opts.max_ret)
    qids = pl.Series("query_id", lists.query_ids, dtype=pl.String)
    n = qids.len()
    qmap = pl.DataFrame({"query_id": qids, "qidx": np.arange(n, dtype=np.int64)})
    present = lists.in_run
    dups = lists.run_duplicates
    docs = lists.doc_ids.to_list()
    bounds_at = lists.offsets.tolist()
    ranked = {q: docs[bounds_at[q]:bounds_at[q + 1]] for q in range(n)}
    lines = frame.join(qmap, on="query_id").group_by("qidx", maintain_order=True).agg(
        pl.struct("jg", "jsg", "doc_id", "level").alias("lines"))
    by_query = {q: [tuple(s.values()) for s in structs]
                for q, structs in zip(lines.get_column("qidx").to_list(),
                                      lines.get_column("lines").to_list(), strict=True)}
    wanted = [b for b in bounds if b.spec.source == "prefs"]
    values = {b.name: np.zeros(n) for b in bounds if b.spec.value not in ("runid", "string")}
    errors: dict[int, PrefsError] = {}
    for q in range(n):
        if not wanted or dups[q] is not None:
            continue
        try:
            qp = count_prefs(ranked.get(q, []), by_query.get(q, []))
        except PrefsError as exc:
            errors[q] = exc
            break  # trec_eval stops at the first failing query
        for name, value in prefs_values(qp).items():
            if name in values:
                values[name][q] = value
    if "num_q" in values:
        values["num_q"][:] = 1.0
    stand_in = (~present).astype(np.float64) if opts.complete else np.zeros(n)
    per = PerQuery(qids.to_list(), stand_in, {k: [v] for k, v in values.items()})

    def problem(q: int) -> str | None:
        if dups[q] is not None:
            return f"trec_eval.form_prefs_counts: duplicate docs {dups[q]}"
        return errors[q].text if q in errors and errors[q].status == 4 else None

    per.failure = first_failure(opts, per.query_ids, present, bounds, problem, "prefs")
    aborted = [q for q, e in errors.items() if e.status == 134]
    if aborted and (per.failure is None or aborted[0] < per.failure.index) and wanted:
        # abort(): no "Can't calculate" line, and buffered stdout is lost
        per.failure = Failure(aborted[0], TrecEvalExit(errors[aborted[0]].text, 134),
                              keep_output=False)
    return per
