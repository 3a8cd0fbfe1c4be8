"""What each tool runs, in a fresh process, for one measurement.

``python benchmarks/workers.py TOOL MODE METRICS QRELS RUN`` with MODE
``e2e`` (import, read the files, evaluate, print: the whole process is
timed from outside) or ``memory`` (read first, then time only the
evaluation of the already-loaded data, from inside). The last line printed
is JSON: the means ``{metric: value}`` and, for ``memory``, the wall and CPU
seconds and peak resident memory of the evaluation.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# metric set name -> tool -> names in that tool's spelling, in the same order
METRICS: dict[str, dict[str, list[str]]] = {
    "typical": {
        "rankscope": ["ndcg@10", "map@100", "mrr@10", "P@10", "recall@100"],
        "trec_eval": ["ndcg_cut.10", "map_cut.100", "recip_rank", "P.10", "recall.100"],
        "pytrec_eval": ["ndcg_cut_10", "map_cut_100", "recip_rank", "P_10", "recall_100"],
        "ranx": ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100"],
        "ir_measures": ["nDCG@10", "AP@100", "RR@10", "P@10", "R@100"],
    },
}
LABELS = ["ndcg@10", "map@100", "mrr@10", "P@10", "recall@100"]
"""Common labels of the typical set (trec_eval's recip_rank has no cut-off)."""


def _reset_peak() -> None:
    # Writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS (Linux).
    Path("/proc/self/clear_refs").write_text("5")


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _pytrec_eval(metric_set: str, qrels: str, run: str) -> tuple[Callable[[], Any], Any]:
    import pytrec_eval

    with open(qrels) as f:
        q = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        r = pytrec_eval.parse_run(f)
    names = (
        set(pytrec_eval.supported_measures)
        if metric_set == "all_trec"
        else set(METRICS["typical"]["trec_eval"])
    )

    def go() -> dict[str, float]:
        per_query = pytrec_eval.RelevanceEvaluator(q, names).evaluate(r)
        if metric_set == "all_trec":
            return {"n_queries": float(len(per_query))}
        keys = METRICS["typical"]["pytrec_eval"]
        n = len(per_query)
        return {lab: sum(v[k] for v in per_query.values()) / n
                for lab, k in zip(LABELS, keys, strict=True)}

    return go, None


def _ranx(metric_set: str, qrels: str, run: str) -> tuple[Callable[[], Any], Any]:
    from ranx import Qrels, Run, evaluate

    q = Qrels.from_file(qrels, kind="trec")
    r = Run.from_file(run, kind="trec")
    names = METRICS["typical"]["ranx"]

    def go() -> dict[str, float]:
        out = evaluate(q, r, names, save_results_in_run=False)
        return {lab: float(out[k]) for lab, k in zip(LABELS, names, strict=True)}

    return go, None


def _ir_measures(metric_set: str, qrels: str, run: str) -> tuple[Callable[[], Any], Any]:
    import ir_measures

    q = list(ir_measures.read_trec_qrels(qrels))
    r = list(ir_measures.read_trec_run(run))
    measures = [ir_measures.parse_measure(m) for m in METRICS["typical"]["ir_measures"]]

    def go() -> dict[str, float]:
        out = ir_measures.calc_aggregate(measures, q, r)
        return {lab: float(out[m]) for lab, m in zip(LABELS, measures, strict=True)}

    return go, None


def _rankscope(metric_set: str, qrels: str, run: str) -> tuple[Callable[[], Any], Any]:
    import rankscope

    q = rankscope.Qrels.read(qrels)
    r = rankscope.Run.read(run)
    names = METRICS["typical"]["rankscope"]

    def go() -> dict[str, float]:
        result = rankscope.evaluate(q, r, names)
        return {lab: float(result[k] or 0.0) for lab, k in zip(LABELS, names, strict=True)}

    return go, None


LOADERS = {"pytrec_eval": _pytrec_eval, "ranx": _ranx, "ir_measures": _ir_measures,
           "rankscope": _rankscope}


def main(argv: list[str]) -> int:
    tool, mode, metric_set, qrels, run = argv
    go, _ = LOADERS[tool](metric_set, qrels, run)
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
