"""What the kernels keep is what the metrics still ahead read (issue 30 section 5).

The ideal DCG's per-judgment terms and the DCG's gained rows are shared by
every cut-off of one gain rule (ndcg, ndcg_cut.5, .10, ...): at 10^7
judgments each is 80 MB or more, and with no such metric ahead they were
still held through bpref, the peak of a 10^7 ``nocut`` evaluation. Here:
whatever the order of a plan, every value is nDCG's or DCG's definition
(written out below, over the same grades), and what is held after a kernel
follows what is still ahead.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np
import pytest

import rankscope
from rankscope.engine import kernel_values
from rankscope.engine.context import Context
from rankscope.engine.kernels_graded import _ideal_dcg, dcg

_NAMES = ["ndcg", "ndcg@5", "ndcg@10", "dcg", "dcg@3", "bpref"]


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels and a run without tied scores (so the ranking is the score order)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.choice(40, size=int(rng.integers(1, 25)), replace=False)
        qrels[f"q{q}"] = {docs[int(j)]: int(rng.choice([0, 0, 1, 2, 3])) for j in judged}
        ranked = rng.permutation(40)[: int(rng.integers(1, 30))]
        run[f"q{q}"] = {docs[int(j)]: float(100 - r) for r, j in enumerate(ranked)}
    return qrels, run


def _dcg(gains: list[float], k: int | None) -> float:
    """sum of gain / log2(rank + 1) over ranks 1..k, added in rank order."""
    total = 0.0
    for i, gain in enumerate(gains[:k] if k is not None else gains):
        total += gain / math.log2(i + 2)
    return total


def _definition(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                name: str) -> dict[str, float]:
    """nDCG / DCG per query: linear gains, ideal = every judgment best first (trec_eval's)."""
    k = int(name.split("@")[1]) if "@" in name else None
    out = {}
    for q, judged in qrels.items():
        ranked = sorted(run.get(q, {}), key=lambda d: -run[q][d])
        gained = _dcg([float(judged.get(d, 0)) for d in ranked], k)
        if name.startswith("dcg"):
            out[q] = gained
            continue
        ideal = _dcg(sorted((float(g) for g in judged.values()), reverse=True), k)
        out[q] = gained / ideal if ideal > 0 else 0.0
    return out


def _orders(n: int) -> list[tuple[str, ...]]:
    """Plans of nDCG and DCG with and without cut-offs (one twice), in ``n`` orders."""
    plans = list(itertools.permutations(["ndcg", "ndcg@5", "ndcg@10", "dcg", "dcg@3", "ndcg"]))
    rng = np.random.default_rng(0)
    picked = [plans[int(i)] for i in rng.choice(len(plans), size=n, replace=False)]
    # the orders the kept arrays depend on most: no cut-off first, last, alone
    return [*picked, ("ndcg", "ndcg@5", "dcg", "dcg@3"), ("ndcg@5", "dcg@3", "ndcg", "dcg"),
            ("ndcg", "bpref"), ("ndcg@10", "bpref", "ndcg")]


@pytest.mark.parametrize("seed", [1, 2])
def test_every_order_of_a_plan_gives_the_definition(seed: int) -> None:
    qrels, run = _case(seed)
    for order in _orders(30):
        per_query = rankscope.evaluate(qrels, run, list(order)).per_query
        for name in set(order) - {"bpref"}:
            for q, value in _definition(qrels, run, name).items():
                assert per_query[q][name] == pytest.approx(value, rel=1e-12, abs=1e-15), \
                    (order, name, q)


class _Kept(Context):
    """A context that remembers itself, to look at what it holds after the kernels."""

    made: ClassVar[list[Context]] = []

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        _Kept.made.append(self)


def _holds(ctx: Context, key: tuple[object, ...]) -> bool:
    return key in ctx._cache


def _held_after(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> Context:
    qrels, run = _case(3)
    _Kept.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Kept)
    rankscope.evaluate(qrels, run, names)
    (ctx,) = _Kept.made
    return ctx


def _keys(metric: str) -> tuple[tuple[object, ...], tuple[object, ...]]:
    ((_, m),) = rankscope.parse_metrics(metric)
    rule = (m.get("gain"), m.get("gains"), m.get("rel"))
    return ("ideal", *rule), ("gained", *rule)


def test_nothing_ahead_reads_the_terms_so_none_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    ideal, gained = _keys("ndcg")
    ctx = _held_after(monkeypatch, ["map", "ndcg", "bpref"])
    assert not _holds(ctx, ideal) and not _holds(ctx, gained)
    assert not _holds(ctx, ("cut_sums", *ideal))
    ctx = _held_after(monkeypatch, ["ndcg@10", "ndcg@5", "bpref"])  # the last cut-off lets go
    assert not _holds(ctx, ideal) and not _holds(ctx, ("cut_sums", *ideal))


def test_terms_a_later_metric_reads_are_kept_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    ideal, gained = _keys("ndcg")
    made: list[tuple[object, ...]] = []
    real = Context.cached

    def counting(self: Context, key: tuple[object, ...], make: object) -> object:
        if not _holds(self, key):
            made.append(key)
        return real(self, key, make)

    monkeypatch.setattr(Context, "cached", counting)
    ctx = _held_after(monkeypatch, ["ndcg", "ndcg@5", "ndcg@10"])
    # made once, shared by the three, and let go after the last reader
    assert made.count(ideal) == 1 and made.count(gained) == 1
    assert not _holds(ctx, ideal)


def test_without_a_plan_a_context_keeps_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    ideal, gained = _keys("ndcg")
    ctx = _held_after(monkeypatch, ["bpref"])
    ctx.ahead = None  # a context used outside compute's loop: nothing known ahead
    ((_, m),) = rankscope.parse_metrics("ndcg")
    first = dcg(ctx, m), _ideal_dcg(ctx, m)
    assert _holds(ctx, ideal) and _holds(ctx, gained)
    again = dcg(ctx, m), _ideal_dcg(ctx, m)  # from what is kept: the same values
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
