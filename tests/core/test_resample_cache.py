"""ResampleCache (issue 30, section 3: a comparison drew the same resamples once per metric):
intervals with the cache are those drawn afresh, to the last bit, and the counts are drawn
once per (queries, resamples, seed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rankscope.spread as spread
from rankscope.spread import ResampleCache, bootstrap_intervals


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, Any]]:
    calls: list[tuple[int, int, Any]] = []
    original = spread._resample_counts

    def counted(n: int, n_resamples: int, seed: int | None) -> Any:
        calls.append((n, n_resamples, seed))
        return original(n, n_resamples, seed)

    monkeypatch.setattr(spread, "_resample_counts", counted)
    return calls


def test_same_bits_as_drawing_afresh_and_drawn_once(draws: list[Any]) -> None:
    rng = np.random.default_rng(7)
    sets = [rng.random((5, 40)), rng.random((9, 40)), rng.integers(0, 2, (3, 40)) * 1.0]
    cache = ResampleCache()
    for rows in sets:
        fresh = bootstrap_intervals(rows, n_resamples=2000, seed=3)
        kept = bootstrap_intervals(rows, n_resamples=2000, seed=3, cache=cache)
        assert np.array_equal(fresh[0], kept[0]) and np.array_equal(fresh[1], kept[1])
    # three fresh draws, one kept for the three cached calls
    assert draws.count((40, 2000, 3)) == 4
    # another number of queries or seed: drawn again
    bootstrap_intervals(sets[0][:, :30], n_resamples=2000, seed=3, cache=cache)
    bootstrap_intervals(sets[0], n_resamples=2000, seed=4, cache=cache)
    assert draws[-2:] == [(30, 2000, 3), (40, 2000, 4)]


def test_no_seed_or_too_many_counts_are_drawn_each_time(draws: list[Any],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = np.random.default_rng(1).random((2, 20))
    cache = ResampleCache()
    bootstrap_intervals(rows, n_resamples=500, seed=None, cache=cache)
    bootstrap_intervals(rows, n_resamples=500, seed=None, cache=cache)
    assert len(draws) == 2
    monkeypatch.setattr(spread, "_BATCH_CELLS", 1000)  # 20 x 500 counts no longer fit
    a = bootstrap_intervals(rows, n_resamples=500, seed=2, cache=cache)
    b = bootstrap_intervals(rows, n_resamples=500, seed=2, cache=cache)
    assert len(draws) == 4
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_threads_sharing_a_cache_draw_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """compare draws its metrics' intervals on two threads sharing one cache: a second
    thread asking for the same counts while the first draws them waits for them."""
    import threading

    entered: list[int] = []
    second = threading.Event()
    original = spread._resample_counts

    def slow(n: int, n_resamples: int, seed: int | None) -> Any:
        entered.append(n)
        if len(entered) == 1:
            second.wait(timeout=2)  # a second drawer, if it may enter, enters meanwhile
        else:
            second.set()
        return original(n, n_resamples, seed)

    monkeypatch.setattr(spread, "_resample_counts", slow)
    rows = np.random.default_rng(5).random((3, 30))
    cache = ResampleCache()
    got: list[Any] = [None, None]

    def one(i: int) -> None:
        got[i] = bootstrap_intervals(rows, n_resamples=300, seed=1, cache=cache)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert entered == [30]
    alone = bootstrap_intervals(rows, n_resamples=300, seed=1)
    for low, high in got:
        assert np.array_equal(low, alone[0]) and np.array_equal(high, alone[1])
