"""trec_eval's levels of a run's grades (``ranking_match.as_levels``): made in one array.

Every levels view (the precision-recall curve's points, trec_eval's measures)
converts each ranked row's grade; the conversion fixes its truncation's copy in
place instead of nesting two ``np.where`` over scalars (two row-sized float
arrays and two masks alive at once).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rankscope.engine.ranking_match import as_levels

EDGES = [np.nan, -0.0, 0.0, -0.5, -3.0, 0.5, 1.9, 2.0, 3.999, np.inf, -np.inf, 1e300, -1e-300,
         5e-324, -5e-324]


def _definition(grade: float) -> float:
    """trec_eval's level of one grade: -1 for none, -2 for a negative grade, else its
    integer part."""
    if grade != grade:
        return -1.0
    if grade < 0:
        return -2.0
    return float(np.trunc(grade))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_each_level_is_the_definitions_bit_for_bit(dtype: type) -> None:
    rng = np.random.default_rng(7)
    grades = np.concatenate([np.array(EDGES), rng.uniform(-4, 4, 500),
                             np.where(rng.random(500) < 0.8, np.nan, rng.integers(-1, 4, 500))])
    with np.errstate(over="ignore"):  # 1e300 is infinite in 32 bits
        grades = grades.astype(dtype)
    out = as_levels(grades)
    assert out.dtype == dtype  # the grades' precision kept, as before
    want = np.array([_definition(float(g)) for g in grades], dtype=dtype)
    # bit for bit: -0.0 stays -0.0 (its integer part), no NaN is left
    assert out.tobytes() == want.tobytes()


def test_whole_number_grades_become_float_levels() -> None:
    out = as_levels(np.array([3, -2, 0, 1]))
    assert out.dtype == np.float64
    assert out.tolist() == [3.0, -2.0, 0.0, 1.0]
    assert as_levels(np.zeros(0)).size == 0


def test_the_levels_take_one_array_and_one_mask_at_a_time() -> None:
    n = 1 << 20
    grades = np.full(n, np.nan)
    grades[::10] = 2.0
    grades[5::10] = -1.0
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = as_levels(grades)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out[0] == 2.0 and out[1] == -1.0 and out[5] == -2.0
    # the output (8 bytes a row) and one mask at a time (a byte a row); the nested
    # np.where held two float arrays and two masks at once (18 bytes a row)
    assert peak < 10 * n, peak
