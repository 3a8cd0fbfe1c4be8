"""``conventions="pytrec_eval"`` gives pytrec_eval's numbers, per query and mean.

pytrec_eval (trec_eval 9.x in-process) is run in the test on every dataset
shape (ties, ties only in float32, distinct scores; 0-3 and 0-4 grades with
negative ones; queries on one side only), with relevance levels 1 and 2 and
with judged-only lists, and rankscope is given pytrec_eval's own output names.
"""

from __future__ import annotations

import math

import pytest

import rankscope

from .data import datasets

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {
    "P.1,5,20", "recall.5,100", "map", "map_cut.5,20", "ndcg", "ndcg_cut.3,10", "recip_rank",
    "Rprec", "bpref", "success.1,5", "set_F", "set_P", "set_recall", "set_map",
    "set_relative_P", "num_rel_ret", "num_ret", "num_rel", "infAP", "iprec_at_recall",
    "11pt_avg", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg", "relative_P.5",
    "num_nonrel_judged_ret",
}
SUMMED = {"num_rel_ret", "num_ret", "num_rel", "num_nonrel_judged_ret"}
TOL = 1e-9

CASES = datasets(range(12))
TESTED_NAMES: set[str] = set()  # every pytrec_eval name compared (read by test_claims)


def _check(qrels: dict, run: dict, *, level: int = 1, judged_only: bool = False) -> None:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=level,
                                               judged_docs_only_flag=judged_only)
    tool = evaluator.evaluate(run)
    assert tool, "every dataset shares a query"
    names = sorted({name for row in tool.values() for name in row})
    TESTED_NAMES.update(names)
    fields: dict = {"rel": level} if level != 1 else {}
    if judged_only:
        fields["unjudged"] = "condensed"
    result = rankscope.evaluate(qrels, run, names, conventions="pytrec_eval",
                                allow_no_overlap=True, **fields)
    assert result.query_ids == sorted(tool)  # only queries in both, as pytrec_eval
    wrong = []
    for name in names:
        for q, row in tool.items():
            got = result.per_query[q][name]  # None: no value (NaN)
            want_q = row[name]
            same = (got is None and math.isnan(want_q)) or (
                got is not None and math.isclose(got, want_q, rel_tol=0, abs_tol=TOL))
            if not same:
                wrong.append(f"{name} q={q}: rankscope {got!r}, pytrec_eval {want_q!r}")
        # trec_eval's 0/0 (-J, nothing judged retrieved) is NaN; a mean taken over it is
        # NaN too, rankscope's leaves that query out (docs/conventions.md)
        values = [row[name] for row in tool.values() if not math.isnan(row[name])]
        if not values:
            continue
        want = math.fsum(values) if name in SUMMED else math.fsum(values) / len(values)
        mean = result.means[name]
        if mean is None or not math.isclose(mean, want, rel_tol=1e-12, abs_tol=TOL):
            wrong.append(f"mean {name}: rankscope {mean!r}, pytrec_eval {want!r}")
    assert not wrong, f"{len(wrong)} mismatches\nqrels={qrels}\nrun={run}\n" + "\n".join(
        wrong[:15])


@pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")
@pytest.mark.parametrize(("case", "qrels", "run"), CASES, ids=[c[0] for c in CASES])
def test_pytrec_eval_names_and_means(case: str, qrels: dict, run: dict) -> None:
    _check(qrels, run)


@pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")
@pytest.mark.parametrize(("case", "qrels", "run"), CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_relevance_level_2(case: str, qrels: dict, run: dict) -> None:
    _check(qrels, run, level=2)


@pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")
@pytest.mark.parametrize(("case", "qrels", "run"), CASES[1::3], ids=[c[0] for c in CASES[1::3]])
def test_judged_docs_only(case: str, qrels: dict, run: dict) -> None:
    _check(qrels, run, judged_only=True)


def test_float32_ties_change_the_number() -> None:
    """The data where the profile matters: scores tie only once read as 32-bit floats."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0 + 1e-9}}  # trec_eval 10.0: b first; pytrec_eval: a tie
    tool = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert tool["q"]["recip_rank"] == 0.5  # tie broken by document id descending: b, a
    # rankscope's default reads doubles: b then a as well here; invert the ids to see it
    run2 = {"q": {"b": 1.0, "a": 1.0 + 1e-9}}
    tool2 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run2)
    assert tool2["q"]["recip_rank"] == 0.5  # float32 tie: b (descending id) first
    assert rankscope.evaluate(qrels, run2, "recip_rank").means["recip_rank"] == 1.0
    assert rankscope.evaluate(qrels, run2, "recip_rank",
                              conventions="pytrec_eval").means["recip_rank"] == 0.5
