"""Plots of comparisons (matplotlib, the ``plot`` extra): curves, differences, distributions.

Every function returns a :class:`matplotlib.figure.Figure` built without
pyplot (no global state, no display needed) that a notebook draws inline
(:mod:`rankscope.render.figure`); :func:`save_figure` writes it as PNG, SVG
or PDF (for papers).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.compare.curves import metric_at_k, precision_recall
from rankscope.errors import DependencyError, OptionError
from rankscope.render.svg import sorted_differences

if TYPE_CHECKING:
    import numpy.typing as npt
    import polars as pl
    from matplotlib.figure import Figure

    from rankscope.compare.result import CompareResult

__all__ = [
    "draw_metric_at_k",
    "draw_precision_recall",
    "figure_bytes",
    "plot_differences",
    "plot_distribution",
    "plot_metric_at_k",
    "plot_precision_recall",
    "save_figure",
]

FIGURE_FORMATS = ("png", "svg", "pdf")


def _figure(width: float = 6.4, height: float = 4.0) -> Figure:
    try:
        from rankscope.render.figure import Figure as ShownFigure
    except ImportError:
        raise DependencyError("matplotlib", "plot", "plotting") from None
    return ShownFigure(figsize=(width, height), layout="constrained")


def plot_metric_at_k(
    qrels: Any,
    runs: Any,
    metric: str = "nDCG",
    *,
    ks: Iterable[int] = range(1, 21),
    **options: Any,
) -> Figure:
    """Mean ``metric``@k against k, one line per run (options as :func:`metric_at_k`)."""
    return draw_metric_at_k(metric_at_k(qrels, runs, metric, ks=ks, **options), metric)


def draw_metric_at_k(data: pl.DataFrame, metric: str) -> Figure:
    """:func:`plot_metric_at_k` of the numbers already computed (columns run, k, value)."""
    fig = _figure()
    ax = fig.subplots()
    for name in data.get_column("run").unique(maintain_order=True).to_list():
        part = data.filter(data.get_column("run") == name)
        ax.plot(part.get_column("k").to_numpy(), part.get_column("value").to_numpy(),
                marker="o", markersize=3, label=name)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("cut-off k")
    ax.set_ylabel(f"mean {metric}@k")
    ax.set_title(f"{metric}@k")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def plot_precision_recall(qrels: Any, runs: Any, **options: Any) -> Figure:
    """11-point interpolated precision-recall curves, one per run."""
    return draw_precision_recall(precision_recall(qrels, runs, **options))


def draw_precision_recall(data: pl.DataFrame) -> Figure:
    """:func:`plot_precision_recall` of the numbers already computed (run, recall, precision)."""
    fig = _figure()
    ax = fig.subplots()
    for name in data.get_column("run").unique(maintain_order=True).to_list():
        part = data.filter(data.get_column("run") == name)
        ax.plot(part.get_column("recall").to_numpy(), part.get_column("precision").to_numpy(),
                marker="o", markersize=3, label=name)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_title("11-point interpolated precision-recall")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def plot_differences(result: CompareResult, metric: str, *, run: str | None = None) -> Figure:
    """Per-query difference run - baseline on ``metric``, sorted, one bar per query.

    ``run`` defaults to the first run that is not the baseline (in an
    all-pairs comparison the first run plays the baseline).
    """
    run, base, queries, diff = sorted_differences(result, metric, run)
    ids = np.array(queries, dtype=object)
    fig = _figure()
    ax = fig.subplots()
    _bars(ax, diff)
    ax.axhline(0, color="black", linewidth=0.8)
    wins, losses = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    ax.set_title(f"{metric}: {run} - {base} per query ({wins} better, {losses} worse)")
    ax.set_xlabel("queries, sorted by difference")
    ax.set_ylabel(f"difference in {metric}")
    # Query ids under the bars: all of them when they fit, else the extremes at each end.
    shown = (np.arange(diff.size) if diff.size <= MAX_LABELLED_QUERIES
             else np.r_[0:EXTREMES, diff.size - EXTREMES:diff.size])
    size = max(4.0, min(8.0, 400.0 / max(1, shown.size)))
    ax.set_xticks(shown, [str(q) for q in ids[shown]], rotation=90, fontsize=size)
    return fig


def _bars(ax: Any, heights: npt.NDArray[np.float64]) -> None:
    """One bar a query as ``ax.bar(x, heights, width=1.0)`` draws it, in one artist.

    Green above zero, red below, grey at zero. ``Axes.bar`` makes a
    Rectangle per bar (about 3 ms each to build and draw: 14,000 of them took
    most of a 17-run report); one PolyCollection of the same rectangles
    paints the same pixels, with the same limits (zero sticks to the axis).
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba_array

    x = np.arange(heights.size, dtype=np.float64)
    left, right = x - 0.5, x + 0.5
    zero = np.zeros_like(x)
    # each bar's corners in Rectangle's order: bottom left, bottom right, top right, top left
    corners = np.stack([np.c_[left, zero], np.c_[right, zero],
                        np.c_[right, heights], np.c_[left, heights]], axis=1)
    palette = to_rgba_array(["tab:green", "tab:red", "tab:gray"])
    colors = palette[np.where(heights > 0, 0, np.where(heights < 0, 1, 2))]
    bars = PolyCollection(list(corners), closed=True, facecolors=colors,
                          edgecolors="none", linewidths=0.0)
    bars.sticky_edges.y.append(0.0)
    ax.add_collection(bars, autolim=True)
    ax.autoscale_view()


MAX_LABELLED_QUERIES = 60
"""Difference plots name every query up to this many, else only the extremes."""

EXTREMES = 8
"""How many queries at each end of a long difference plot are named."""


def plot_distribution(result: CompareResult, metric: str) -> Figure:
    """Box plot of the per-query values of every run on ``metric`` (means as dots)."""
    columns = [result.column(name, metric) for name in result.run_names]
    columns = [c[~np.isnan(c)] for c in columns]
    fig = _figure(max(4.0, 1.0 + 0.9 * len(columns)), 4.0)
    ax = fig.subplots()
    ax.boxplot(columns, tick_labels=result.run_names, showmeans=True)
    ax.set_ylabel(metric)
    ax.set_title(f"distribution of per-query {metric}")
    ax.grid(axis="y", alpha=0.3)
    if len(columns) > 6:
        ax.tick_params(axis="x", labelrotation=45)
    return fig


def figure_bytes(fig: Figure, fmt: str = "png", *, dpi: int = 110) -> bytes:
    """The figure encoded as PNG, SVG or PDF."""
    if fmt not in FIGURE_FORMATS:
        raise OptionError(f"figure format must be png, svg or pdf, not {fmt!r}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def save_figure(fig: Figure, path: str | os.PathLike[str], *, fmt: str | None = None) -> None:
    """Write the figure to ``path`` as PNG, SVG or PDF (from the extension unless ``fmt``)."""
    from rankscope.data._io import write_bytes

    if fmt is None:
        fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    write_bytes(path, figure_bytes(fig, fmt))
