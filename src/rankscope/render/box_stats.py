"""What a box plot draws of a run's per-query values, as matplotlib's ``boxplot`` computes it.

The numbers only (quartiles, whiskers, outliers, mean); :mod:`rankscope.render.svg`
draws them. Kept apart from the drawing so the statistics can be checked against
their definition (and matplotlib) without any SVG.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["BoxStats", "box_stats", "box_stats_rows"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BoxStats:
    """What a box plot draws of one run: as matplotlib's ``boxplot`` computes it."""

    low_whisker: float
    q1: float
    median: float
    q3: float
    high_whisker: float
    mean: float
    outliers: tuple[float, ...]
    n: int


def box_stats(values: FloatArray) -> BoxStats | None:
    """Quartiles (linear interpolation), whiskers at the furthest value within 1.5 IQR of the
    box, the values beyond them, and the mean; None without values."""
    return box_stats_rows(np.asarray(values, dtype=np.float64)[np.newaxis, :])[0]


def box_stats_rows(rows: FloatArray) -> list[BoxStats | None]:
    """:func:`box_stats` of each row (a run's per-query values).

    The quartiles of the rows with as many values are taken in one
    ``np.percentile`` call (a report's box plot of 17 runs made 17, at about 50
    microseconds each); each row's quartiles are the same bits as its own call's.

    Parameters
    ----------
    rows : numpy.ndarray
        One row a run, NaN for a query without a value.

    Returns
    -------
    list of BoxStats or None
        Each row's statistics, None for a row without values.
    """
    kept = [row[~np.isnan(row)] for row in np.asarray(rows, dtype=np.float64)]
    by_size: dict[int, list[int]] = {}
    for i, x in enumerate(kept):
        if x.size:
            by_size.setdefault(x.size, []).append(i)
    quartiles: dict[int, list[float]] = {}
    for rows_of_size in by_size.values():
        found = np.percentile(np.stack([kept[i] for i in rows_of_size]), [25, 50, 75], axis=1)
        quartiles.update(zip(rows_of_size, found.T.tolist(), strict=True))
    return [_box(x, *quartiles[i]) if x.size else None for i, x in enumerate(kept)]


def _box(x: FloatArray, q1: float, median: float, q3: float) -> BoxStats:
    reach = 1.5 * (q3 - q1)
    inside = x[(x >= q1 - reach) & (x <= q3 + reach)]
    low = float(inside.min()) if inside.size else q1
    high = float(inside.max()) if inside.size else q3
    out = np.sort(x[(x < low) | (x > high)])
    return BoxStats(min(low, q1), q1, median, q3, max(high, q3), float(x.mean()),
                    tuple(float(v) for v in out), int(x.size))
