"""Every measure with its defaults against each tool's own defaults.

The profile tests (``test_*_profile.py``) mostly spell parameters out; a user
migrating from a tool writes its names bare (``RBP``, ``Compat``, ``P``,
``ndcg_cut``, ``dcg_burges``) and gets that tool's defaults. Here each tool is
called with nothing but the name, and rankscope is given the same name under
the tool's profile: a default that drifted from the tool's (RBP's persistence,
Compat's p, ERR's top grade, trec_eval's default cut-offs...) fails here.
The intent-aware measures (pyndeval) are in ``tests/metrics/test_intent_aware.py``;
trec_eval's command-line defaults in the golden outputs (``tests/trec_eval``).
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

import rankscope

from .data import SHAPES, Shape, dataset, datasets

QUIET = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")
CONFORMANCE = Path(__file__).resolve().parents[1] / "trec_eval" / "conformance"

# ir_measures' measures by their bare names: every parameter at ir_measures' default
# (the C/W/L measures need max_rel and RBP rel: ir_measures has no default for them)
IR_MEASURES_BARE = [
    "nDCG", "nDCG@10", "P@5", "R@5", "AP", "AP@10", "RR", "RR@10", "Success@5", "Rprec",
    "Bpref", "infAP", "Judged@5", "SetP", "SetR", "SetF", "SetAP", "NumRet", "NumRel",
    "NumRelRet", "RBP(rel=1)", "ERR@10", "Compat", "BPM(max_rel=3)@10", "INSQ(max_rel=3)",
    "INST(max_rel=3)", "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@10",
    "NERR10(max_rel=3)", "NERR11(max_rel=3)",
]


@QUIET
@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ERR@k) needs perl")
@pytest.mark.parametrize(("case", "qrels", "run"), datasets(range(3)),
                         ids=[c[0] for c in datasets(range(3))])
def test_ir_measures_names_without_parameters(case: str, qrels: dict, run: dict) -> None:
    """Mutations: RBP's default p 0.8 -> 0.9, Compat's 0.95 -> 0.9, the C/W/L measures'
    T 1 -> 2: this fails (the profile's names give those parameters explicitly)."""
    pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    from .test_ir_measures_profile import check

    check(qrels, run, IR_MEASURES_BARE)


# pytrec_eval's measures by their bare names: trec_eval 9.x's default parameters
PYTREC_EVAL_BARE = [
    "P", "recall", "ndcg_cut", "map_cut", "success", "relative_P", "Rprec_mult",
    "iprec_at_recall", "11pt_avg", "set_F", "utility", "map", "ndcg", "recip_rank", "Rprec",
    "bpref", "infAP", "binG", "G", "ndcg_rel", "Rndcg", "set_P", "set_recall", "set_map",
    "set_relative_P", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
]
SUMMED = {"num_rel_ret", "num_ret", "num_rel", "num_nonrel_judged_ret"}


@QUIET
@pytest.mark.parametrize("shape", SHAPES[::2], ids=lambda s: f"{s.scores}-{s.top}")
def test_pytrec_eval_names_without_parameters(shape: Shape) -> None:
    """pytrec_eval's ``{"P", "ndcg_cut"}`` gives P_5 ... P_1000 and ndcg_cut_5 ...: the
    profile reads the bare names the same way, every value equal. Mutation: the bare name
    read as rankscope's (``P`` over the whole ranking): this fails."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = dataset(3, shape)
    for name in PYTREC_EVAL_BARE:
        tool = pytrec_eval.RelevanceEvaluator(qrels, {name}).evaluate(run)
        printed = sorted({key for row in tool.values() for key in row})
        result = rankscope.evaluate(qrels, run, [name], conventions="pytrec_eval",
                                    allow_no_overlap=True)
        assert sorted(result.means) == printed, name
        for key in printed:
            for q, row in tool.items():
                assert result.per_query[q][key] == pytest.approx(row[key], abs=1e-9), (key, q)
            values = [row[key] for row in tool.values()]
            want = math.fsum(values) / (1 if key in SUMMED else len(values))
            assert result.means[key] == pytest.approx(want, abs=1e-9), key


# trec_eval 10.0's measures by their bare names, as `-m NAME` reads them (those of
# all_trec; success, at 1, 5 and 10 by default in 9.x as in 10.0, is pytrec_eval's above)
TREC_EVAL_BARE = ["P", "recall", "ndcg_cut", "map_cut", "relative_P", "Rprec_mult",
                  "iprec_at_recall", "11pt_avg", "ndcg", "utility", "bpref", "G"]


@QUIET
def test_trec_eval_names_without_parameters() -> None:
    """Against trec_eval 10.0's own output for ``-m all_trec`` (its conformance folder),
    where each of these measures appears at its default parameters."""
    expected = {}
    for line in (CONFORMANCE / "out.test.a").read_text().splitlines():
        measure, _, value = line.split()
        expected[measure] = value
    for name in TREC_EVAL_BARE:
        result = rankscope.evaluate(CONFORMANCE / "qrels.test", CONFORMANCE / "results.test",
                                    [name], conventions="trec_eval")
        shown = re.compile(rf"^{re.escape(name)}(_[0-9.]+)?$")
        printed = sorted(m for m in expected if shown.match(m))
        assert sorted(result.means) == printed, name
        for key in printed:
            assert f"{result.means[key]:6.4f}" == expected[key], key


# ranx's metrics by their bare names (no cut-off: the whole ranking; relevance level 1)
RANX_BARE = ["ndcg", "map", "mrr", "precision", "recall", "f1", "hits", "hit_rate",
             "r-precision", "bpref", "dcg", "dcg_burges", "ndcg_burges"]


@pytest.mark.slow
@QUIET
@pytest.mark.parametrize("seed", range(2))
def test_ranx_names_without_parameters(seed: int) -> None:
    """ranx compiles its kernels on first use (slow). Distinct scores: ranx's order of tied
    scores is its sort's."""
    pytest.importorskip("ranx")
    from .test_ranx_profile import _both_judged, _check

    shape = Shape("distinct", 3, True)
    qrels, run = dataset(seed, shape)
    _check(_both_judged(qrels, shape.top), run, RANX_BARE)


def test_the_metrics_listing_shows_how_each_tool_reads_a_bare_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``rankscope metrics P``: trec_eval and pytrec_eval read it at nine cut-offs."""
    from rankscope.cli.main import main

    assert main(["metrics", "P"]) == 0
    out = capsys.readouterr().out
    nine = ", ".join(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000))
    assert f"trec_eval: {nine}\n" in out
    assert f"pytrec_eval: {nine}; options queries=intersection, scores=float32\n" in out
    assert "ir_measures: P; options" in out  # ir_measures' P is rankscope's
