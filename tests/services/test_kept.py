"""Values kept per server process (:class:`~rankscope.services.kept.KeptByStamp`): at most
``keep`` of them per store and, when sized, at most ``budget`` bytes together, the least
recently used dropped first; one heavier than the budget is never kept."""

from __future__ import annotations

from rankscope.services.kept import KeptByStamp


class _Store:
    """Anything a weak reference can point at stands for a store."""


def _kept(budget: int | None, keep: int = 8) -> KeptByStamp[str]:
    return KeptByStamp(keep, budget=budget, size=len)


def test_the_least_recently_used_go_first_past_the_budget():
    store, kept = _Store(), _kept(budget=10)
    kept.put(store, ("a",), "aaaa")
    kept.put(store, ("b",), "bbbb")
    assert kept.get(store, ("a",)) == "aaaa"  # now "b" is the least recently used
    kept.put(store, ("c",), "cccc")  # 4 + 4 + 4 = 12 > 10: one goes
    assert kept.get(store, ("b",)) is None
    assert (kept.get(store, ("a",)), kept.get(store, ("c",))) == ("aaaa", "cccc")
    assert kept.weight(store) == 8


def test_a_value_heavier_than_the_budget_is_not_kept_nor_its_stale_one():
    store, kept = _Store(), _kept(budget=10)
    kept.put(store, ("a",), "aaaa")
    kept.put(store, ("x",), "old")
    kept.put(store, ("x",), "x" * 11)  # alone past the budget
    assert kept.get(store, ("x",)) is None, "neither the heavy value nor the one it replaced"
    assert kept.get(store, ("a",)) == "aaaa", "what fits stays"
    assert kept.weight(store) == 4


def test_a_value_of_exactly_the_budget_is_kept_alone():
    store, kept = _Store(), _kept(budget=10)
    kept.put(store, ("a",), "aaaa")
    kept.put(store, ("b",), "b" * 10)
    assert kept.get(store, ("a",)) is None
    assert kept.get(store, ("b",)) == "b" * 10


def test_the_count_still_bounds_and_each_store_has_its_own():
    one, two, kept = _Store(), _Store(), _kept(budget=None, keep=2)
    for name in "abc":
        kept.put(one, (name,), name * 100)
    kept.put(two, ("a",), "z")
    assert [kept.get(one, (n,)) for n in "abc"] == [None, "b" * 100, "c" * 100]
    assert kept.get(two, ("a",)) == "z"
    assert kept.weight(one) == 200


def test_unsized_values_weigh_nothing():
    store, kept = _Store(), KeptByStamp[str](2, budget=1)
    kept.put(store, ("a",), "a long value")
    assert kept.get(store, ("a",)) == "a long value"
    assert kept.weight(store) == 0
