"""``conventions="ir_measures"`` gives ir_measures' numbers, per query and mean.

ir_measures (with its default providers: pytrec_eval, msmarco, judged,
cwl_eval, gdeval) is run in the test on every dataset shape; rankscope is
given the profile's list of ir_measures spellings. gdeval prints 5 decimals,
so its two measures (ERR, exp-log2 nDCG) agree to 5e-6.
"""

from __future__ import annotations

import logging
import math
import shutil
from typing import Any

import pytest

import rankscope
from rankscope.metrics.conventions import PROFILES

from .data import datasets

im = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")
pytestmark = [
    pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning"),
    pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ERR@k) needs perl"),
]

NAMES = list(PROFILES["ir_measures"].names)
TOL = 1e-9
GDEVAL_TOL = 5.1e-6  # gdeval prints %.5f
CASES = datasets(range(6))


def _tool(names: list[str], qrels: dict, run: dict) -> tuple[dict, dict]:
    logging.getLogger("cwl").disabled = True
    # ir_measures 0.4.3's pytrec_eval provider puts NumRet and nDCG without gains into
    # whichever of the call's pytrec_eval invocations comes first, in the order of a set of
    # measures (by hash of their repr: it changes with PYTHONHASHSEED). When that is the
    # invocation of P(judged_only=True)@5, NumRet counts only judged documents; when it is
    # nDCG(gains=...)@5's, plain nDCG is computed with those gains (seen in CI processes:
    # every case of the module failed). They are asked for in a call of their own, without
    # judged-only or gain-mapped measures.
    alone = [name for name in names
             if name == "NumRet" or (name.startswith("nDCG") and "gains=" not in name
                                     and "judged_only" not in name)]
    per_query: dict[tuple[str, str], float] = {}
    means: dict[str, float] = {}
    for group in ([name for name in names if name not in alone], alone):
        if not group:
            continue
        measures = [im.parse_measure(name) for name in group]
        results = im.calc(measures, qrels, run)
        by_name = dict(zip(measures, group, strict=True))
        per_query.update({(m.query_id, by_name[m.measure]): float(m.value)
                          for m in results.per_query})
        means.update({by_name[m]: float(v) for m, v in results.aggregated.items()})
    return per_query, means


def check(qrels: dict, run: dict, names: list[str]) -> None:
    """Every name, per query and mean, under the profile, against ir_measures."""
    per_query, means = _tool(names, qrels, run)
    result = rankscope.evaluate(qrels, run, names, conventions="ir_measures",
                                allow_no_overlap=True)
    assert result.query_ids == sorted(qrels)  # every qrels query, as ir_measures
    wrong: list[str] = []
    for name in names:
        tol = GDEVAL_TOL if name.startswith("ERR") or "exp-log2" in name else TOL
        for q in result.query_ids:
            got, want = result.per_query[q][name], per_query.get((q, name))
            if got is None or want is None or not math.isclose(got, want, abs_tol=tol):
                wrong.append(f"{name} q={q}: rankscope {got!r}, ir_measures {want!r}")
        mean = result.means[name]
        if mean is None or not math.isclose(mean, means[name], abs_tol=tol):
            wrong.append(f"mean {name}: rankscope {mean!r}, ir_measures {means[name]!r}")
    assert not wrong, f"{len(wrong)} mismatches\nqrels={qrels}\nrun={run}\n" + "\n".join(
        wrong[:15])


@pytest.mark.parametrize(("case", "qrels", "run"), CASES, ids=[c[0] for c in CASES])
def test_ir_measures_names(case: str, qrels: dict, run: dict) -> None:
    check(qrels, run, NAMES)


def _tied() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    # three tied documents: by id ascending a, b, c; descending c, b, a; input b, a, c.
    # a is relevant, c unjudged; query 2 is missing from the run (0 under either policy)
    qrels = {"1": {"a": 1, "b": 0}, "2": {"x": 1}}
    run = {"1": {"b": 2.0, "a": 2.0, "c": 2.0}}
    return qrels, run


@pytest.mark.parametrize(("name", "default", "tool"), [
    ("RR@3", (1 / 3) / 2, 1 / 2),  # msmarco provider: a first
    ("RR", (1 / 3) / 2, (1 / 3) / 2),  # pytrec_eval: c, b, a, as rankscope's default
    ("Judged@1", 0.0, 1 / 2),  # judged provider: a first (c, first by default, is unjudged)
    ("RBP(p=0.5,rel=1)", 0.5 * 0.25 / 2, 0.5 * 0.5 / 2),  # cwl_eval: input order, a second
])
def test_tie_rules_per_provider(name: str, default: float, tool: float) -> None:
    """ir_measures' RR@k and Judged@k break ties by document id ascending, its RR
    (pytrec_eval) by id descending, its RBP keeps input order: the profile follows each."""
    qrels, run = _tied()
    _, means = _tool([name], qrels, run)
    assert means[name] == pytest.approx(tool)
    assert rankscope.evaluate(qrels, run, [name],
                              conventions="ir_measures").means[name] == pytest.approx(tool)
    assert rankscope.evaluate(qrels, run, [name]).means[name] == pytest.approx(default)


def test_names_cover_the_providers() -> None:
    """The profile's names reach every provider whose reading differs (so each rule is
    exercised against the tool above)."""
    providers: dict[str, Any] = {}
    for name in NAMES:
        measure = im.parse_measure(name)
        for provider in (im.pytrec_eval, im.msmarco, im.judged, im.cwl_eval, im.gdeval):
            if provider.supports(measure):
                providers.setdefault(provider.NAME, []).append(name)
                break
    assert set(providers) == {"pytrec_eval", "msmarco", "judged", "cwl_eval", "gdeval"}
