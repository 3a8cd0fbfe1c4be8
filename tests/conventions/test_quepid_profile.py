"""``conventions="quepid"`` computes Quepid's communal scorers as they are defined.

Quepid is a web application whose scorers are JavaScript run in the browser;
nothing installable runs them, so these tests do not claim "the same number
as Quepid". They pin the profile to the scorers' definitions (o19s/quepid,
``db/scorers/*.js``, 2025), re-implemented here as a slow, plain loop per
query: the results in the engine's order (by score, ties in the order
given), unrated documents rated 0, a query's score ``score || 0`` (NaN
counts 0), the case score the mean over the case's queries.
"""

from __future__ import annotations

import math

import pytest

import rankscope

from .data import Shape, dataset

pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")


def _ranked(run: dict[str, float]) -> list[str]:
    return sorted(run, key=lambda d: -run[d])  # stable: ties keep the order given


def quepid(name: str, k: int, ratings: dict[str, int], run: dict[str, float]) -> float:
    """One query's score by Quepid's scorer ``name`` (P, AP, RR, CG, DCG, nDCG, NDCG_CUT, ERR)."""
    docs = _ranked(run)
    rating = [ratings.get(d) for d in docs]  # None: not rated
    shown = rating[:k]
    gain = [r or 0 for r in shown]
    if name == "P":
        return sum(1 for r in shown if r is not None and r > 0) / len(shown) if shown else 0.0
    if name == "AP":
        count, total = 0, 0.0
        for i, r in enumerate(shown):
            if r is not None and r > 0:
                count += 1
                total += count / (i + 1)
        n_rel = sum(1 for r in ratings.values() if r > 0)
        return total / n_rel if n_rel else 0.0  # 0/0 is NaN, and NaN || 0 is 0
    if name == "RR":
        return next((1 / (i + 1) for i, r in enumerate(shown) if r is not None and r > 0), 0.0)
    if name == "CG":
        return float(sum(gain))

    def dcg(values: list[int]) -> float:
        return sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(values))

    if name == "DCG":
        return dcg(gain)
    best = sorted(ratings.values(), reverse=True)
    if name == "nDCG":  # every rated document in the ideal
        ideal = dcg(best)
        return dcg(gain) / ideal if ideal else 0.0
    if name == "NDCG_CUT":
        ideal = dcg(best[:k])
        return dcg(gain) / ideal if ideal else 0.0
    if name == "ERR":  # the communal scorer's scale is 0-3
        score, trust = 0.0, 1.0
        for i, g in enumerate(gain):
            useful = (2 ** g - 1) / 2 ** 3
            score += trust * useful / (i + 1)
            trust *= 1 - useful
        return score
    raise ValueError(name)


SCORERS = ["P", "AP", "RR", "CG", "DCG", "nDCG", "NDCG_CUT", "ERR"]


@pytest.mark.parametrize("shape", [Shape("ties", 3, False), Shape("distinct", 3, False),
                                   Shape("float32", 3, False)],
                         ids=lambda s: s.scores)
@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("k", [1, 5, 10])
def test_quepid_scorers(shape: Shape, seed: int, k: int) -> None:
    qrels, run = dataset(seed, shape)
    names = [f"{scorer}@{k}" for scorer in SCORERS]
    result = rankscope.evaluate(qrels, run, names, conventions="quepid",
                                allow_no_overlap=True)
    assert result.query_ids == sorted(qrels)  # a query without results scores 0, counted
    for scorer, name in zip(SCORERS, names, strict=True):
        want = {q: quepid(scorer, k, qrels[q], run.get(q, {})) for q in qrels}
        for q in qrels:
            assert result.per_query[q][name] == pytest.approx(want[q], abs=1e-12), (name, q)
        assert result.means[name] == pytest.approx(sum(want.values()) / len(want), abs=1e-12)


def test_the_profile_changes_what_the_names_mean() -> None:
    """P@k over the documents shown, nDCG@k over every rated document, DCG with 2^g - 1."""
    qrels = {"q": {"a": 1, "b": 1, "c": 2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    quepid_means = rankscope.evaluate(qrels, run, ["P@10", "nDCG@1", "DCG@2"],
                                      conventions="quepid").means
    assert quepid_means["P@10"] == 1.0  # 2 of the 2 shown; rankscope's default: 2/10
    ideal = 3 + 1 / math.log2(3) + 1 / 2  # every rated document: 2, 1, 1
    assert quepid_means["nDCG@1"] == pytest.approx(1 / ideal)
    assert quepid_means["DCG@2"] == pytest.approx(1 + 1 / math.log2(3))
    default = rankscope.evaluate(qrels, run, ["P@10", "nDCG@1"]).means
    assert default["P@10"] == pytest.approx(0.2)
    assert default["nDCG@1"] == pytest.approx(1 / 2)  # linear gain, ideal cut at 1: c (2)
