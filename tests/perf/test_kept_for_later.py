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


def _random_case(seed: int, *, queries: int, docs: int, judged: tuple[int, int],
                 grades: list[int], ranked: tuple[int, int] | int,
                 ) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels and a run without tied scores (so the ranking is the score order): each query
    judges between ``judged`` documents of ``docs`` (grades drawn from ``grades``) and ranks
    ``ranked`` of them (a number, or drawn between two)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(queries):
        names = [f"d{i}" for i in range(docs)]
        chosen = rng.choice(docs, size=int(rng.integers(*judged)), replace=False)
        qrels[f"q{q}"] = {names[int(j)]: int(rng.choice(grades)) for j in chosen}
        depth = ranked if isinstance(ranked, int) else int(rng.integers(*ranked))
        order = rng.permutation(docs)[:depth]
        run[f"q{q}"] = {names[int(j)]: float(10 * docs - r) for r, j in enumerate(order)}
    return qrels, run


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Twelve queries of 1-24 judgments and rankings of 1-29."""
    return _random_case(seed, queries=12, docs=40, judged=(1, 25), grades=[0, 0, 1, 2, 3],
                        ranked=(1, 30))


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
    """Whether the context keeps ``key`` for this run, or with the qrels for every run."""
    shared = ctx.lists.qrels_shared or {}
    return key in ctx._cache or ("qrels", *key) in ctx._cache or key in shared


def _held_after(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> Context:
    qrels, run = _case(3)
    _Kept.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Kept)
    rankscope.evaluate(qrels, run, names)  # a fresh qrels object each time
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
    assert _holds(ctx, ("ideal_dcg", *ideal[1:]))  # the sums, one per query, are kept
    ctx = _held_after(monkeypatch, ["ndcg@10", "ndcg@5", "bpref"])  # the cut-offs read the sums
    assert not _holds(ctx, ideal) and _holds(ctx, ("cut_sums", *ideal))


def test_terms_a_later_metric_reads_are_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    ideal, _ = _keys("ndcg")
    made: list[str] = []
    real = Context.gain_of

    def counting(self: Context, grades: np.ndarray, metric: object,
                 rows: np.ndarray | None = None) -> np.ndarray:
        made.append("judged" if grades is self.lists.judged_grades else "ranked")
        return real(self, grades, metric, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(Context, "gain_of", counting)
    for order in (["ndcg", "ndcg@5", "ndcg@10"], ["ndcg@5", "ndcg", "ndcg@10"]):
        made.clear()
        ctx = _held_after(monkeypatch, order)
        # the ideal's gains made once for the three, the run's gained rows once
        assert made.count("judged") == 1 and made.count("ranked") == 1, order
        assert _holds(ctx, ideal)  # kept with the qrels once made for two sums


def test_without_a_plan_a_context_keeps_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    ideal, gained = _keys("ndcg")
    ctx = _held_after(monkeypatch, ["bpref"])
    ctx.ahead = None  # a context used outside compute's loop: nothing known ahead
    ((_, m),) = rankscope.parse_metrics("ndcg")
    first = dcg(ctx, m), _ideal_dcg(ctx, m)
    assert _holds(ctx, ideal) and _holds(ctx, gained)
    again = dcg(ctx, m), _ideal_dcg(ctx, m)  # from what is kept: the same values
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))


# -- nDCG@k's ideal DCG over each query's first judgments only -------------------------------


def _long_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Queries with 60-100 judgments each and rankings of 50, no tied scores: nDCG@3 to
    nDCG@20 read at most a fifth of the judgments for their ideal DCG."""
    qrels, run = _random_case(seed, queries=10, docs=150, judged=(60, 101),
                              grades=[0, 0, 0, 1, 1, 2, 3], ranked=50)
    qrels["q10"] = {"d1": 2}  # fewer judgments than any cut-off
    run["q10"] = {"d1": 1.0, "d2": 0.5}
    return qrels, run


def _top_key(metric: str, depth: int) -> tuple[object, ...]:
    ideal, _ = _keys(metric)
    return ("cut_sums", *ideal, "top", depth)


@pytest.mark.parametrize("order", [("ndcg@3", "ndcg@10", "ndcg@20"),
                                   ("ndcg@20", "map", "ndcg@3"),
                                   ("ndcg@10", "dcg@5", "ndcg@3", "bpref")])
def test_cut_offs_read_the_first_judgments_and_give_the_definition(
        monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...]) -> None:
    qrels, run = _long_case(4)
    _Kept.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Kept)
    per_query = rankscope.evaluate(qrels, run, list(order)).per_query
    for name in set(order) - {"bpref", "map"}:
        for q, value in _definition(qrels, run, name).items():
            assert per_query[q][name] == pytest.approx(value, rel=1e-12, abs=1e-15), (name, q)
    (ctx,) = _Kept.made
    deepest = max(int(n.split("@")[1]) for n in order if n.startswith("ndcg@"))
    ideal, _ = _keys("ndcg")
    # the sums of the first `deepest` judgments only: no term of every judgment made
    assert _holds(ctx, _top_key("ndcg", deepest))
    assert not _holds(ctx, ("cut_sums", *ideal)) and not _holds(ctx, ideal)


@pytest.mark.parametrize("metric", ["ndcg@5", "ndcg(gain=exp)@7", "ndcg(rel=2)@4", "ndcg@100"])
def test_the_first_judgments_give_the_bits_of_every_judgment(
        monkeypatch: pytest.MonkeyPatch, metric: str) -> None:
    from rankscope.engine import kernels_graded

    qrels, run = _long_case(5)
    names = [metric, "ndcg@2"]
    top = rankscope.evaluate(qrels, run, names).per_query
    monkeypatch.setattr(kernels_graded, "_top_depth", lambda *args: None)  # every judgment
    whole = rankscope.evaluate(qrels, run, names).per_query
    for q in qrels:
        for name in names:
            assert top[q][name] == whole[q][name], (q, name)  # bit for bit, not approximately


def test_one_qrels_object_asked_for_a_deeper_cut_off_later() -> None:
    """The first judgments' sums are kept with the qrels under their depth: a later call
    asking for a deeper cut-off makes its own, never reads the shallower ones."""
    qrels_data, run = _long_case(6)
    qrels = rankscope.Qrels.from_dict(qrels_data)
    for name in ("ndcg@3", "ndcg@20", "ndcg@3", "ndcg@12"):
        per_query = rankscope.evaluate(qrels, run, [name]).per_query
        for q, value in _definition(qrels_data, run, name).items():
            assert per_query[q][name] == pytest.approx(value, rel=1e-12, abs=1e-15), (name, q)


@pytest.mark.parametrize("order", [("ndcg@5", "ndcg"), ("nDCG(gains={0:0,1:3,2:1,3:2})@5",)])
def test_every_judgment_when_the_whole_ideal_or_a_gains_map_is_read(
        monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...]) -> None:
    """nDCG without a cut-off ahead needs every judgment's term anyway (one sort for both);
    a gains map may rank the judgments otherwise than their grades."""
    qrels, run = _long_case(7)
    _Kept.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Kept)
    rankscope.evaluate(qrels, run, list(order))
    (ctx,) = _Kept.made
    ideal, _ = _keys(order[0])
    assert _holds(ctx, ("cut_sums", *ideal))
    assert not any(isinstance(k, tuple) and "top" in k for k in (ctx.lists.qrels_shared or {}))


@pytest.mark.parametrize("bounded", [False, True])
def test_row_sets_are_laid_out_without_every_rows_query(
        bounded: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the relevant and judged row sets know each row's query without the query index of
    # every ranked row (80 MB at 10^7 rows, made at a shuffled 10^7 file's peak by map's
    # first row set), bounded context or not. By hand: q1 ranks d3 (grade 1), d2 (0),
    # d1 (2): rows 0-2; q2, judged, is not in the run: no rows; q3 ranks d5 (3), d9
    # (unjudged), d4 (1): rows 3-5. Relevant (grade >= 1): rows 0, 2, 3, 5 of queries
    # 0, 0, 2, 2 at ranks 0, 2, 0, 2; judged: also row 1 (query 0, rank 1)
    from rankscope.data.tables import Qrels, Run
    from rankscope.engine import context
    from rankscope.engine.ranking import rank

    monkeypatch.setattr(context, "WATCHED_FROM", 0 if bounded else 1 << 62)
    lists = rank(Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d6": 1},
                                  "q3": {"d4": 1, "d5": 3}}),
                 Run.from_dict({"q1": {"d3": 3.0, "d2": 2.0, "d1": 1.0},
                                "q3": {"d5": 3.0, "d9": 2.0, "d4": 1.0}}))
    ctx = Context(lists)
    assert (ctx.kept is not None) == bounded
    rel = ctx.rel_rows(1.0)
    assert (rel.rows.tolist(), rel.q.tolist(), rel.pos.tolist()) == (
        [0, 2, 3, 5], [0, 0, 2, 2], [0, 2, 0, 2])
    assert rel.offsets.tolist() == [0, 2, 2, 4]
    judged = ctx.judged_rows
    assert (judged.rows.tolist(), judged.q.tolist(), judged.pos.tolist()) == (
        [0, 1, 2, 3, 5], [0, 0, 0, 2, 2], [0, 1, 2, 0, 2])
    assert rel.q.dtype == rel.pos.dtype == np.int64
    assert not ctx.is_cached(("row_query",)) and "row_query" not in ctx.__dict__


# -- a lone cut-off of its gain rule: the rows above it summed, no running sums ------------


_LONE_ORDERS = [("dcg@5",), ("ndcg@10", "map"), ("map", "ndcg@3", "bpref"),
                ("ndcg@5", "dcg@3", "ndcg@10"), ("ndcg@3", "ndcg(gain=exp)@7", "ndcg(rel=2)@4")]


@pytest.mark.parametrize("order", _LONE_ORDERS)
def test_a_lone_cut_off_makes_no_running_sums_and_gives_their_bits(
        monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...]) -> None:
    """A cut-off with no other cut-off of its gain rule ahead sums the rows above it
    (no running sum of every gained row, kept for cut-offs that never come); its values
    are the running sums' to the bit, and the definition's."""
    qrels, run = _long_case(8)
    _Kept.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Kept)
    per_query = rankscope.evaluate(qrels, run, list(order)).per_query
    (ctx,) = _Kept.made
    ruled = [n for n in order if "@" in n]
    for name in ruled:
        _, gained = _keys(name)
        others = [n for n in ruled if n != name and _keys(n)[1] == gained]
        # the running sums are made (and held) only for a rule with two cut-offs
        assert _holds(ctx, ("cut_sums", *gained)) == bool(others), (order, name)
        if "(" not in name:
            for q, value in _definition(qrels, run, name).items():
                assert per_query[q][name] == pytest.approx(value, rel=1e-12, abs=1e-15), \
                    (name, q)
    # every value kept for later (the running sums read at each cut-off): the same bits
    monkeypatch.setattr(Context, "wanted_later", lambda self, reads: True)
    kept = rankscope.evaluate(qrels, run, list(order)).per_query
    for q in qrels:
        for name in ruled:
            assert per_query[q][name] == kept[q][name], (q, name)  # bit for bit
