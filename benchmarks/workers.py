"""What each tool runs, in a fresh process, for one measurement.

``python benchmarks/workers.py TOOL MODE METRICS QRELS RUN`` with MODE

* ``e2e``: import, read both files with the tool's own reader, evaluate,
  print (the whole process is timed from outside);
* ``objects``: read first into the tool's own Python objects, then time only
  the evaluation, from inside, after one warm-up call (ranx's numba
  compilation and every lazy import are paid there);
* ``polars`` / ``pandas``: the data is already in a DataFrame (columns
  ``query_id, doc_id, score`` and ``query_id, doc_id, grade``); timed: from
  the frame to the numbers, whatever conversion the tool needs (rankscope and
  ir_measures take frames; ranx converts with ``from_df``; pytrec_eval gets its
  nested dicts built from the frame), again after one warm-up call.

METRICS is a set name (:data:`METRICS`). The last line printed is JSON: the
means ``{label: value}`` and, in the timed-inside modes, the wall and CPU
seconds and the peak resident memory during the call (loaded data included).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# metric set -> tool -> names in that tool's spelling, in the order of LABELS[set]
METRICS: dict[str, dict[str, list[str]]] = {
    "cut": {
        "rankscope": ["ndcg@10", "P@10", "recall@100", "map@100"],
        "trec_eval": ["ndcg_cut.10", "P.10", "recall.100", "map_cut.100"],
        "pytrec_eval": ["ndcg_cut_10", "P_10", "recall_100", "map_cut_100"],
        "ranx": ["ndcg@10", "precision@10", "recall@100", "map@100"],
        "ir_measures": ["nDCG@10", "P@10", "R@100", "AP@100"],
    },
    "nocut": {
        "rankscope": ["map", "recip_rank", "ndcg", "bpref"],
        "trec_eval": ["map", "recip_rank", "ndcg", "bpref"],
        "pytrec_eval": ["map", "recip_rank", "ndcg", "bpref"],
        "ranx": ["map", "mrr", "ndcg", "bpref"],
        "ir_measures": ["AP", "RR", "nDCG", "Bpref"],
    },
}
LABELS: dict[str, list[str]] = {
    "cut": ["ndcg@10", "P@10", "recall@100", "map@100"],
    "nocut": ["map", "recip_rank", "ndcg", "bpref"],
}
FRAME_MODES = ("polars", "pandas")


def _reset_peak() -> None:
    # Writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS (Linux).
    Path("/proc/self/clear_refs").write_text("5")


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _frames(mode: str, qrels: str, run: str) -> tuple[Any, Any]:
    """Both files as frames of the mode's library (read with polars)."""
    import polars as pl

    q = pl.read_csv(qrels, separator=" ", has_header=False,
                    new_columns=["query_id", "iter", "doc_id", "grade"],
                    schema_overrides={"query_id": pl.String, "doc_id": pl.String}).drop("iter")
    r = pl.read_csv(run, separator=" ", has_header=False,
                    new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                    schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    r = r.select("query_id", "doc_id", "score")
    if mode == "pandas":
        return q.to_pandas(), r.to_pandas()
    return q, r


def _means(labels: list[str], values: list[float]) -> dict[str, float]:
    return {lab: float(v) for lab, v in zip(labels, values, strict=True)}


def _pytrec_eval(mode: str, metric_set: str, qrels: str, run: str) -> Callable[[], Any]:
    import pytrec_eval

    names = (set(pytrec_eval.supported_measures) if metric_set == "all_trec"
             else set(METRICS[metric_set]["trec_eval"]))
    if mode in FRAME_MODES:
        fq, fr = _frames("pandas", qrels, run)

        def load() -> tuple[Any, Any]:
            q: dict[str, dict[str, int]] = {}
            for a, b, c in zip(fq["query_id"], fq["doc_id"], fq["grade"], strict=True):
                q.setdefault(a, {})[b] = int(c)
            r: dict[str, dict[str, float]] = {}
            for a, b, c in zip(fr["query_id"], fr["doc_id"], fr["score"], strict=True):
                r.setdefault(a, {})[b] = float(c)
            return q, r
    else:
        with open(qrels) as f:
            q0 = pytrec_eval.parse_qrel(f)
        with open(run) as f:
            r0 = pytrec_eval.parse_run(f)

        def load() -> tuple[Any, Any]:
            return q0, r0

    def go() -> dict[str, float]:
        q, r = load()
        per_query = pytrec_eval.RelevanceEvaluator(q, names).evaluate(r)
        if metric_set == "all_trec":
            return {"n_queries": float(len(per_query))}
        n = len(per_query)
        return _means(LABELS[metric_set],
                      [sum(v[k] for v in per_query.values()) / n
                       for k in METRICS[metric_set]["pytrec_eval"]])

    return go


def _ranx(mode: str, metric_set: str, qrels: str, run: str) -> Callable[[], Any]:
    from ranx import Qrels, Run, evaluate

    names = METRICS[metric_set]["ranx"]
    if mode in FRAME_MODES:
        fq, fr = _frames("pandas", qrels, run)
        # ranx insists on object columns (pandas 3 makes strings its own dtype)
        fq = fq.astype({"query_id": object, "doc_id": object})
        fr = fr.astype({"query_id": object, "doc_id": object})

        def load() -> tuple[Any, Any]:
            return (Qrels.from_df(fq, q_id_col="query_id", score_col="grade"),
                    Run.from_df(fr, q_id_col="query_id"))
    else:
        q0 = Qrels.from_file(qrels, kind="trec")
        r0 = Run.from_file(run, kind="trec")

        def load() -> tuple[Any, Any]:
            return q0, r0

    def go() -> dict[str, float]:
        q, r = load()
        out = evaluate(q, r, names, save_results_in_run=False)
        return _means(LABELS[metric_set], [out[k] for k in names])

    return go


def _ir_measures(mode: str, metric_set: str, qrels: str, run: str) -> Callable[[], Any]:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in METRICS[metric_set]["ir_measures"]]
    if mode in FRAME_MODES:
        fq, fr = _frames("pandas", qrels, run)
        q: Any = fq.rename(columns={"grade": "relevance"})
        r: Any = fr
    else:
        q = list(ir_measures.read_trec_qrels(qrels))
        r = list(ir_measures.read_trec_run(run))

    def go() -> dict[str, float]:
        out = ir_measures.calc_aggregate(measures, q, r)
        return _means(LABELS[metric_set], [out[m] for m in measures])

    return go


def _rankscope(mode: str, metric_set: str, qrels: str, run: str) -> Callable[[], Any]:
    import rankscope

    names = METRICS[metric_set]["rankscope"]
    if mode in FRAME_MODES:
        q, r = _frames(mode, qrels, run)
    else:
        q, r = rankscope.Qrels.read(qrels), rankscope.Run.read(run)

    def go() -> dict[str, float]:
        result = rankscope.evaluate(q, r, names)
        return _means(LABELS[metric_set], [result[k] or 0.0 for k in names])

    return go


LOADERS = {"pytrec_eval": _pytrec_eval, "ranx": _ranx, "ir_measures": _ir_measures,
           "rankscope": _rankscope}


def main(argv: list[str]) -> int:
    tool, mode, metric_set, qrels, run = argv
    go = LOADERS[tool](mode, metric_set, qrels, run)
    if mode == "e2e":
        print(json.dumps({"means": go()}))
        return 0
    go()  # measure warm: first-call costs (ranx's numba compile, lazy imports) are paid here
    _reset_peak()
    wall, cpu = time.perf_counter(), time.process_time()
    means = go()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"means": means, "wall": wall, "cpu": cpu, "peak_mb": _peak_mb()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
