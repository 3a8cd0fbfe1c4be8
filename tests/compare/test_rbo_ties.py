"""Tie-aware RBO against Corsi & Urbano's published reference values; average overlap.

``data/rbo_ties_reference.csv.gz`` holds 1,500 of the authors' 10,000 reference cases
(see data/README.md); every variant (w, a, b) and score (ext, min, max, res) must match.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

import rankscope
from rankscope.compare.rbo_ties import TieList, tie_rbo

REFERENCE = Path(__file__).parent / "data" / "rbo_ties_reference.csv.gz"


def _rows() -> list[dict[str, str]]:
    with gzip.open(REFERENCE, "rt", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _scores(text: str) -> dict[str, float]:
    """'a (b c) d' -> scores that rank a, then b and c tied, then d."""
    out: dict[str, float] = {}
    level, group = 0, False
    for token in text.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            group, level = True, level + 1
        elif token == ")":
            group = False
        else:
            level += 0 if group else 1
            out[token] = -float(level)
    return out


def _tie_list(scores: dict[str, float], codes: dict[str, int]) -> TieList:
    docs = list(scores)  # in rank order
    return TieList(np.array([codes.setdefault(d, len(codes)) for d in docs]),
                   np.array([scores[d] for d in docs]))


def test_every_reference_case() -> None:
    rows = _rows()
    assert len(rows) == 1500
    for row in rows:
        codes: dict[str, int] = {}
        x = _tie_list(_scores(row["x"]), codes)
        y = _tie_list(_scores(row["y"]), codes)
        for variant in "wab":
            got = tie_rbo(x, y, float(row["p"]), variant)
            for score in ("ext", "min", "max", "res"):
                assert got[score] == pytest.approx(float(row[f"{variant}.{score}"]), abs=1e-9), (
                    row["x"], row["y"], variant, score)


def test_through_similarity_runs_with_tied_scores() -> None:
    for row in _rows()[:40]:
        a = {"q": _scores(row["x"])}
        b = {"q": _scores(row["y"])}
        p = float(row["p"])
        names = [f"RBO(p={p},ties={v},form={f})" for v in "wab" for f in ("ext", "min", "max")]
        result = rankscope.similarity(a, b, names)
        for name in names:
            variant, form = name.split("ties=")[1].rstrip(")").split(",form=")
            assert result[name] == pytest.approx(float(row[f"{variant}.{form}"]), abs=1e-9)


def _webber_min(a: list[str], b: list[str], p: float) -> float:
    """RBO_MIN without ties, from Webber et al.'s eq. (11), term by term."""
    depth = max(len(a), len(b))
    x = [len(set(a[:d]) & set(b[:d])) for d in range(1, depth + 1)]
    xl = x[-1]
    total = sum((x[d - 1] - xl) / d * p**d for d in range(1, depth + 1))
    return (1 - p) / p * (total - xl * np.log(1 - p))


def test_without_ties_every_variant_is_rbo() -> None:
    rng = np.random.default_rng(4)
    for _ in range(30):
        a = [f"d{i}" for i in rng.permutation(12)[: rng.integers(1, 12)]]
        b = [f"d{i}" for i in rng.permutation(12)[: rng.integers(1, 12)]]
        runs = [{"q": {d: float(-i) for i, d in enumerate(r)}} for r in (a, b)]
        names = ["RBO(p=0.8,form=min)"] + [f"RBO(p=0.8,form=min,ties={v})" for v in "wab"]
        result = rankscope.similarity(*runs, names)
        for name in names:
            assert result[name] == pytest.approx(_webber_min(a, b, 0.8), abs=1e-12), name
        bounds = rankscope.similarity(*runs, ["rbo_max(p=0.8)", "RBO(p=0.8,form=max,ties=a)",
                                              "rbo_min(p=0.8)", "rbo_res(p=0.8)"])
        assert bounds["rbo_max(p=0.8)"] == pytest.approx(bounds["RBO(p=0.8,form=max,ties=a)"])
        assert bounds["rbo_max(p=0.8)"] == pytest.approx(
            bounds["rbo_min(p=0.8)"] + bounds["rbo_res(p=0.8)"])  # type: ignore[operator]


@pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")  # q3 in one run only
def test_average_overlap_by_hand_and_lengths() -> None:
    a = {"q1": {"d1": 3, "d2": 2, "d3": 1}, "q2": {"x": 1}, "q3": {"y": 2, "z": 1}}
    b = {"q1": {"d2": 3, "d1": 2, "d4": 1}, "q2": {"x": 2, "w": 1}}
    result = rankscope.similarity(a, b, ["AO@3", "average_overlap@1"])
    # q1: X = 0, 2, 2 -> (0/1 + 2/2 + 2/3) / 3; q2: X = 1, 1, 1 -> (1 + 1/2 + 1/3) / 3;
    # q3 against nothing: 0
    assert result.per_query["q1"]["AO@3"] == pytest.approx((0 + 1 + 2 / 3) / 3)
    assert result.per_query["q2"]["AO@3"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert result.per_query["q3"]["AO@3"] == 0.0
    assert result.per_query["q2"]["average_overlap@1"] == 1.0
    with pytest.raises(rankscope.errors.MetricParameterError, match="needs a cut-off"):
        rankscope.similarity(a, b, "AO")
