"""A context's kept values bounded by a size budget (issue 30 §5, ``engine/kept.py``).

At 10^7 judged rows the values ``-m all_trec``'s kernels kept for later ones held
about 900 MB to the end. Past a budget the values read least recently are let go
and made again when read: the same to the bit, whatever is let go when. Here:
values let go and read again against the ones first made, a plan's values with a
budget of one byte against those of an unbounded context (each is checked against
its definition or trec_eval elsewhere; tests/trec_eval/test_kept_budget.py checks
all_trec against the binary's recorded output under the same budget), which value
goes first, and that a small evaluation pays nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

import rankscope
from rankscope.engine import context, kept, kernel_values
from rankscope.engine.context import Context
from rankscope.engine.kept import Kept, held_bytes
from rankscope.engine.trec_gains import gain_info

from .test_kept_for_later import _random_case

_PLAN = ["map", "map@100", "ndcg", "ndcg@10", "ndcg@5", "P@10", "recall@100", "recip_rank",
         "bpref", "rbp", "err@10", "Rprec", "success@5", "judged@10", "dcg@3", "R@10",
         "mrr@10", "rbp(p=0.8)", "infAP", "NDCG(gain=exp)@10", "AP(rel=2)", "P(rel=2)@5",
         "SetP", "set_F", "bpref(rel=2)", "iprec_at_recall_0.50", "Judged@10", "NumRet",
         "NumRel", "NumRelRet", "ndcg(gain=exp)", "INSQ", "infAP(rel=2)"]


class _Seen(Context):
    """A context that remembers itself."""

    made: ClassVar[list[Context]] = []

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        _Seen.made.append(self)


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Fifteen queries of 1-29 judgments (grades 0-3) and rankings of 1-39."""
    return _random_case(seed, queries=15, docs=50, judged=(1, 30), grades=[0, 0, 1, 2, 3],
                        ranked=(1, 40))


def _bounded(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """Every context bounded to ``limit`` bytes, each of its values counted (these are small)."""
    monkeypatch.setattr(context, "WATCHED_FROM", 0)
    monkeypatch.setattr(context, "BUDGET", limit)
    monkeypatch.setattr(kept, "_SMALL", 10**15)


def _context(monkeypatch: pytest.MonkeyPatch, seed: int = 5) -> Context:
    """The context of one evaluation of :func:`_case` (its kernels run: values kept)."""
    qrels, run = _case(seed)
    _Seen.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Seen)
    rankscope.evaluate(qrels, run, ["map", "ndcg", "bpref"])
    (ctx,) = _Seen.made
    return ctx


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_plan_gives_the_same_bits_with_a_budget_of_one_byte(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    qrels, run = _case(seed)
    free = rankscope.evaluate(qrels, run, _PLAN).per_query
    _bounded(monkeypatch, 1)
    _Seen.made.clear()
    monkeypatch.setattr(kernel_values, "Context", _Seen)
    tight = rankscope.evaluate(qrels, run, _PLAN).per_query
    (ctx,) = _Seen.made
    assert ctx.kept is not None and ctx.kept.let_go > 20  # values were let go and made again
    assert tight.keys() == free.keys()
    for q in free:
        for name in _PLAN:
            a, b = free[q][name], tight[q][name]
            assert np.float64(a).tobytes() == np.float64(b).tobytes(), (q, name, a, b)


def test_a_value_let_go_is_made_again_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    _bounded(monkeypatch, 10**12)
    ctx = _context(monkeypatch)
    assert ctx.kept is not None
    view = ctx.levels_view()
    assert view.kept is ctx.kept  # a levels view shares its context's budget
    first = {"judged_rows": [a.copy() for a in (view.judged_rows.rows, view.judged_rows.q,
                                                view.judged_rows.pos)],
             "values": view.values.copy(), "log2_rank": ctx.log2_rank.copy()}
    gains = gain_info(view, (("0", 0.0), ("1", 1.0), ("2", 2.0), ("3", 3.0)))
    layout = gains.ideal_gain.copy(), gains.ideal_offsets.copy()
    del gains
    ctx.kept.limit = 1
    ctx.cached(("a new value",), lambda: np.zeros(8))  # past the budget: the rest go
    assert not any(view.is_cached(k) for k in [("judged_rows",), ("values",)])
    assert not ctx.is_cached(("log2_rank",))
    assert ctx.kept.total <= 64
    again = view.judged_rows
    for was, now in zip(first["judged_rows"], (again.rows, again.q, again.pos), strict=True):
        assert was.tobytes() == now.tobytes() and was.dtype == now.dtype
    assert first["values"].tobytes() == view.values.tobytes()  # type: ignore[union-attr]
    assert first["log2_rank"].tobytes() == ctx.log2_rank.tobytes()  # type: ignore[union-attr]
    gains = gain_info(view, (("0", 0.0), ("1", 1.0), ("2", 2.0), ("3", 3.0)))
    assert layout[0].tobytes() == gains.ideal_gain.tobytes()
    assert layout[1].tobytes() == gains.ideal_offsets.tobytes()


def test_the_least_recently_read_go_first_and_a_held_value_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _bounded(monkeypatch, 10**12)
    ctx = _context(monkeypatch)
    budget = Kept(3 * 800)
    ctx.kept = budget
    for name in ("a", "b", "c"):
        ctx.cached((name,), lambda: np.zeros(100))  # 800 bytes each: all three fit
    ctx.cached(("a",), lambda: pytest.fail("kept"))  # read: now b is the oldest
    ctx.cached(("d",), lambda: np.zeros(100))
    assert [k for k in "abcd" if ctx.is_cached((k,))] == ["a", "c", "d"]
    held = ctx.cached(("c",), lambda: pytest.fail("kept"))  # a kernel holds c
    ctx.cached(("a",), lambda: pytest.fail("kept"))  # the oldest now: d, then c, then a
    # one more value: one must go; d is the oldest the cache alone holds
    ctx.cached(("e",), lambda: np.zeros(100))
    assert [k for k in "acde" if ctx.is_cached((k,))] == ["a", "c", "e"]  # d went, not c
    ctx.cached(("f",), lambda: np.zeros(200))  # 1,600 bytes: two must go, a and e (not c)
    assert [k for k in "acef" if ctx.is_cached((k,))] == ["c", "f"]
    assert budget.total == held.nbytes + 1600 and budget.let_go == 4


def test_a_small_evaluation_is_not_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below WATCHED_FROM rows nothing is counted (a small call pays nothing), from it a
    context is bounded."""
    assert _context(monkeypatch).kept is None
    monkeypatch.setattr(context, "WATCHED_FROM", 20)
    bounded = _context(monkeypatch)
    assert bounded.kept is not None and bounded.kept.limit == kept.BUDGET


def test_a_small_value_is_neither_counted_nor_let_go() -> None:
    budget = Kept(256 * 1000)  # values under 1,000 bytes are small
    ctx = Context.__new__(Context)
    ctx._cache, ctx.kept = {}, budget
    ctx.cached(("small",), lambda: np.zeros(124))  # 992 bytes
    ctx.cached(("large",), lambda: np.zeros(125))  # 1,000
    assert budget.total == 1000
    budget.limit = 1
    ctx.cached(("larger",), lambda: np.zeros(200))
    assert ctx.is_cached(("small",)) and not ctx.is_cached(("large",))


def test_the_bytes_held_by_a_value() -> None:
    rows = np.arange(10, dtype=np.int64)
    assert held_bytes(rows) == 80
    assert held_bytes((rows, np.zeros(3, np.float32), 5)) == 92
    assert held_bytes({"x": rows, "y": [rows[:2]]}) == 96
    ctx_free = type("Holder", (), {})()
    ctx_free.rows = rows  # type: ignore[attr-defined]
    assert held_bytes(ctx_free) == 80
