"""Differential tests against pytrec_eval (trec_eval 9.x in-process), where 9.x and 10.0 agree.

What differs between the versions and is therefore left out (see
docs/trec_eval.md): iprec_at_recall and 11pt_avg (rounding), queries the run
lacks (9.x skips them: the qrels are restricted to the run's queries here),
float32 scores in 9.x (scores here are multiples of 1/64, exact in float32),
``-c``, ``-M`` and 10.0-only measures. Per-query values are compared as
trec_eval prints them (``%6.4f``, integers for counts).
"""

from __future__ import annotations

import random

import pytest

from .generate import as_dicts, qrels_and_run
from .util import ours

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ["map", "P", "recall", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_cut", "map_cut",
            "relative_P", "success", "set_P", "set_recall", "set_relative_P", "set_map",
            "set_F", "utility", "infAP", "binG", "G", "Rndcg", "ndcg_rel", "Rprec_mult",
            "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def _tables(qrels: str, run: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    judged, ranked = as_dicts(qrels, run)
    # 9.x skips qrels queries the run lacks; it cannot take all-negative queries
    judged = {q: docs for q, docs in judged.items()
              if q in ranked and max(docs.values()) >= 0}
    return judged, ranked


def _as_printed(name: str, value: float) -> str:
    if value != value:
        return "  -nan"  # trec_eval prints the NaN of 0/0 as -nan
    return str(int(value)) if name in COUNTS else f"{value:6.4f}"


@pytest.mark.parametrize("seed", range(60))
def test_per_query_values_match(tmp_path, seed):
    rng = random.Random(seed)
    judged, ranked = _tables(*qrels_and_run(rng, n_docs=rng.choice([10, 40, 120])))
    if not judged:
        pytest.skip("no query left to compare")
    level = rng.choice([1, 1, 2])
    judged_only = rng.random() < 0.3
    qrels_text = "".join(f"{q} 0 {d} {g}\n" for q, docs in judged.items() for d, g in docs.items())
    run_text = "".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in ranked.items()
                       for d, s in docs.items())
    (tmp_path / "qrels").write_text(qrels_text)
    (tmp_path / "run").write_text(run_text)
    args = ["-q", "-n", f"-l{level}", *(["-J"] if judged_only else [])]
    for m in MEASURES:
        args += ["-m", m]
    got = ours([*args, "qrels", "run"], cwd=tmp_path)
    assert got.status == 0, got.stderr
    mine = {(name.strip(), q): v for name, q, v in
            (line.split("\t") for line in got.stdout.splitlines())}
    evaluator = pytrec_eval.RelevanceEvaluator(
        judged, set(MEASURES), relevance_level=level, judged_docs_only_flag=judged_only)
    theirs = evaluator.evaluate({q: docs for q, docs in ranked.items() if q in judged})
    compared = 0
    for q, values in theirs.items():
        for name, value in values.items():
            assert mine[(name, q)] == _as_printed(name, value), (name, q)
            compared += 1
    assert compared == len(mine)
