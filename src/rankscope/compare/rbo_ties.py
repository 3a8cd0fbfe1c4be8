r"""Tie-aware rank-biased overlap (Corsi & Urbano, SIGIR 2024).

A run gives equal scores to documents it cannot order. Breaking those ties by
document id (the evaluation rule) makes two runs look more or less alike by
accident. Corsi & Urbano's variants treat a group of tied documents occupying
ranks T..B (n = B - T + 1 documents) as one unit. At depth d each document
contributes :math:`c(d)` to the list's prefix:

- ``w`` (ties as equality): :math:`c(d) = [d \ge T]`, the whole group enters
  together;
- ``a`` and ``b`` (ties as uncertainty): :math:`c(d) = \min(1, \max(0, (d - T + 1) / n))`,
  the chance that the document is in the first d when the tie is broken at random.

The overlap at depth d is :math:`X_d = \sum_{i \in S \cap L} c^S_i(d) \, c^L_i(d)` and
the agreement :math:`A_d` is :math:`2 X_d / (|S|_d + |L|_d)` (``w``, with
:math:`|S|_d = \sum_i c^S_i(d)`), :math:`X_d / d` (``a``: the expected RBO over the
random tie breaks) or :math:`X_d / \sqrt{\sum_i c^S_i(d)^2 \sum_i c^L_i(d)^2}` (``b``:
corrected for the information the ties hide, so that :math:`RBO^b(X, X) = 1`).
Beyond the shorter list's length s the shorter side counts d; RBO is then
:math:`\frac{1-p}{p}\big(\sum_{d=1}^{l} A_d p^d + \text{tail}\big)` with the
``min`` (no further overlap), ``max`` (every later document shared) and ``ext``
(the agreement at depth s continues) tails of the paper, and ``res`` = max - min.
Without ties every variant is Webber et al.'s RBO.

Average overlap (RBO's p -> 1 limit over a finite depth) is computed for all
queries at once in :mod:`rankscope.compare.rank_similarity`.

The tie-aware computation runs per query (numpy within a query): its work is the
two lists' lengths plus, for each shared document, the length of its tie group.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankscope.errors import MetricError

__all__ = ["TieList", "tie_rbo"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class TieList:
    """One query's ranking as tie groups: each document's first and last rank (1-based).

    Parameters
    ----------
    docs : ndarray of int
        Document codes in rank order (shared codes across the two lists).
    scores : ndarray of float
        Their scores; equal neighbouring scores form a tie group.
    """

    def __init__(self, docs: IntArray, scores: FloatArray) -> None:
        self.docs = np.asarray(docs, dtype=np.int64)
        n = self.docs.size
        new_group = np.ones(n, dtype=bool)
        if n:
            new_group[1:] = scores[1:] != scores[:-1]
        starts = np.flatnonzero(new_group)
        sizes = np.diff(np.append(starts, n))
        self.top = np.repeat(starts + 1, sizes).astype(np.int64)
        self.size = np.repeat(sizes, sizes).astype(np.int64)

    def __len__(self) -> int:
        return int(self.docs.size)

    @property
    def bottom(self) -> IntArray:
        """The last rank of each document's group."""
        return self.top + self.size - 1


def _steps(at: IntArray, depth: int, weights: FloatArray | None = None) -> FloatArray:
    """Sum over items of weight * [d >= at_i], for d = 0..depth (index d)."""
    keep = at <= depth
    counts = np.bincount(at[keep], weights=None if weights is None else weights[keep],
                         minlength=depth + 1)
    return np.cumsum(counts[: depth + 1]).astype(np.float64)


def _ramps(start: IntArray, end: IntArray, value_at: object, depth: int) -> FloatArray:
    """Sum over items of value_i(d) for start_i <= d < end_i (d <= depth)."""
    end = np.minimum(end, depth + 1)
    lengths = np.maximum(end - start, 0)
    out = np.zeros(depth + 1)
    if not lengths.any():
        return out
    item = np.repeat(np.arange(start.size), lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    d = np.arange(item.size) - np.repeat(offsets, lengths) + start[item]
    values = value_at(item, d)  # type: ignore[operator]
    return np.asarray(np.bincount(d, weights=values, minlength=depth + 1)[: depth + 1],
                      dtype=np.float64)


def _share(top: IntArray, size: IntArray, d: IntArray, tied: bool) -> FloatArray:
    """c(d) of documents (top, size) at depths d."""
    if not tied:
        return (d >= top).astype(np.float64)
    return np.asarray(np.clip((d - top + 1) / size, 0.0, 1.0), dtype=np.float64)


def _seen(lst: TieList, depth: int, tied: bool, from_depth: IntArray | None = None,
          squared: bool = False, rows: IntArray | None = None) -> FloatArray:
    """Sum over documents of c(d) (or c(d)^2), counting each from ``from_depth`` on."""
    idx = np.arange(len(lst)) if rows is None else rows
    top, size = lst.top[idx], lst.size[idx]
    lo = top if from_depth is None else np.maximum(from_depth, top)
    if not tied:
        return _steps(lo, depth)
    bottom = top + size - 1
    power = 2 if squared else 1
    full = _steps(np.maximum(lo, bottom), depth)
    part = _ramps(lo, bottom, lambda i, d: ((d - top[i] + 1) / size[i]) ** power, depth)
    return full + part


def _overlap(s: TieList, big: TieList, depth: int, tied: bool) -> FloatArray:
    """X_d for d = 0..depth: the shared documents' products of contributions."""
    _, si, li = np.intersect1d(s.docs, big.docs, assume_unique=True, return_indices=True)
    ts, ns, tl, nl = s.top[si], s.size[si], big.top[li], big.size[li]
    start = np.maximum(ts, tl)
    if not tied:
        return _steps(start, depth)
    end = np.maximum(ts + ns - 1, tl + nl - 1)
    full = _steps(end, depth)
    part = _ramps(start, end, lambda i, d: _share(ts[i], ns[i], d, True)
                  * _share(tl[i], nl[i], d, True), depth)
    return full + part


def tie_rbo(x: TieList, y: TieList, p: float, variant: str) -> dict[str, float]:
    """Tie-aware RBO (``ext``, ``min``, ``max``, ``res``) of two rankings; NaN if both are empty."""
    if variant not in ("w", "a", "b"):
        raise MetricError(f"RBO ties must be break, w, a or b, not {variant!r}")
    s_list, l_list = (y, x) if len(x) >= len(y) else (x, y)
    s, big_l = len(s_list), len(l_list)
    nan = float("nan")
    if big_l == 0:
        return {"ext": nan, "min": nan, "max": nan, "res": nan}
    if s == 0:
        return {"ext": 0.0, "min": 0.0, "max": 1.0, "res": 1.0}
    tied = variant != "w" and bool((s_list.size > 1).any() or (l_list.size > 1).any())
    depths = np.arange(big_l + 1, dtype=np.float64)  # index d = depth d; index 0 unused
    overlap = _overlap(s_list, l_list, big_l, tied)
    if variant == "w":
        seen_s = _seen(s_list, big_l, False)
        seen_s[s + 1:] = depths[s + 1:]  # beyond s the shorter side counts d
        norm = (seen_s + _seen(l_list, big_l, False)) / 2.0
    elif variant == "a" or not tied:
        norm = depths
    else:
        sq_s = _seen(s_list, big_l, True, squared=True)
        sq_s[s + 1:] = depths[s + 1:]
        norm = np.sqrt(sq_s * _seen(l_list, big_l, True, squared=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        agree_seen = np.where(norm > 0, overlap / norm, 0.0)
    a_s = float(agree_seen[s])
    only_l = np.flatnonzero(~np.isin(l_list.docs, s_list.docs))  # L's own documents, in order
    d_all = np.arange(big_l + 1)
    # max: the first d - s of L's own documents also turn up in S's unseen part
    extra_max = _seen(l_list, big_l, tied, rows=only_l,
                      from_depth=s + 1 + np.arange(only_l.size, dtype=np.int64))
    # ext: d - s unseen places of S, each agreeing as at depth s, times L's mean share
    share_sum = _seen(l_list, big_l, tied, rows=only_l)
    share_cnt = _steps(l_list.top[only_l], big_l)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_share = np.where(share_cnt > 0, share_sum / share_cnt, 0.0)
    extra_ext = np.where(d_all > s, (d_all - s) * a_s * mean_share, 0.0)
    beyond = d_all > s
    with np.errstate(divide="ignore", invalid="ignore"):
        agree_max = np.where(beyond & (norm > 0), (overlap + extra_max) / norm, agree_seen)
        agree_ext = np.where(beyond & (norm > 0), (overlap + extra_ext) / norm, agree_seen)
    weights = p ** depths
    weights[0] = 0.0
    x_l = float(overlap[big_l])
    tail_min = x_l * (-np.log1p(-p) - float(np.sum(p ** depths[1:] / depths[1:])))
    f = big_l + s - x_l  # fractional when ties are shared out
    dd = np.arange(big_l + 1, f + 1, dtype=np.float64)
    tail_max = float(np.sum((2 * dd - big_l - s + x_l) / dd * p**dd)) + p ** (f + 1) / (1 - p)
    tail_ext = (x_l + (big_l - s) * a_s) / big_l * p ** (big_l + 1) / (1 - p)
    scale = (1 - p) / p
    low = scale * (float(np.sum(agree_seen * weights)) + tail_min)
    high = scale * (float(np.sum(agree_max * weights)) + tail_max)
    ext = scale * (float(np.sum(agree_ext * weights)) + tail_ext)
    return {"ext": ext, "min": low, "max": high, "res": high - low}
