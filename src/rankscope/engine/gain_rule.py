"""Each grade's gain under a metric's gain rule (``gain``, ``gains``, ``rel``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankscope.metrics.base import Metric

__all__ = ["gains_of"]

FloatArray = npt.NDArray[np.float64]

_GAINED_AT_ONCE = 1 << 16
"""Rows :func:`gains_of` gains at once."""


def gains_of(grades: FloatArray, metric: Metric,
             rows: npt.NDArray[np.int64] | None = None) -> FloatArray:
    """The gain of each grade (or of the grades at ``rows``) under a metric's gain rule.

    Parameters
    ----------
    grades : ndarray of float
        One grade a row, NaN for an unjudged document.
    metric : Metric
        Its ``gain`` (``"exp"``: 2^g - 1, else g), ``gains`` map and ``rel`` floor.
    rows : ndarray of int, optional
        Indices into ``grades``: the gains of ``grades[rows]``, gathered a block
        at a time (no array of the gathered grades beside the gains).

    Returns
    -------
    ndarray of float
        A new array, one gain a row (a row of ``rows`` when given).

    Notes
    -----
    Unjudged documents (NaN) and negative grades gain 0. With a ``gains`` map, a
    grade missing from the map keeps the gain ``gain`` gives it (trec_eval's and
    ir_measures' convention). The rows are gained a block at a time, so the
    steps' temporaries (several arrays of every row, 57 MB each at 7 M
    judgments) never outlast a block: only the gains are of every row.
    """
    pairs = metric.get("gains")
    keys = np.array([p[0] for p in pairs]) if pairs else None
    vals = np.array([p[1] for p in pairs]) if pairs else None
    size = grades.size if rows is None else rows.size
    out = np.empty(size, dtype=np.float64)
    for start in range(0, size, _GAINED_AT_ONCE):
        stop = min(start + _GAINED_AT_ONCE, size)
        block = grades[start:stop] if rows is None else grades[rows[start:stop]]
        out[start:stop] = _block(block, metric, keys, vals)
    return out


def _block(grades: FloatArray, metric: Metric, keys: FloatArray | None,
           vals: FloatArray | None) -> FloatArray:
    """:func:`gains_of` of one block of grades (``keys``, ``vals``: the ``gains`` map)."""
    with np.errstate(invalid="ignore", over="ignore"):
        unjudged = np.isnan(grades)
        g = np.where(unjudged, 0.0, grades)
        if metric.get("gain") == "exp":
            out = np.where(g > 0, np.exp2(g) - 1.0, 0.0)
        else:
            out = np.maximum(g, 0.0)
        if keys is not None and vals is not None:
            idx = np.clip(np.searchsorted(keys, g), 0, len(keys) - 1)
            out = np.where(keys[idx] == g, vals[idx], out)
        rel = metric.get("rel")
        if rel is not None:
            out = np.where(g >= rel, out, 0.0)
        out[unjudged | (g < 0)] = 0.0
    return out
