"""Plots render to PNG and SVG and show what they claim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankscope.compare.comparison import compare
from rankscope.errors import OptionError

from .data import make_qrels, make_run

pytest.importorskip("matplotlib")
pytest.importorskip("scipy")

from rankscope.render import plots

QRELS = make_qrels(6, n_queries=15)
RUNS = {"a": make_run(QRELS, 1, 0.8), "b": make_run(QRELS, 2, 1.5)}


def test_curves_have_one_line_per_run() -> None:
    fig = plots.plot_metric_at_k(QRELS, RUNS, "P", ks=range(1, 6))
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2, 3, 4, 5]
    fig = plots.plot_precision_recall(QRELS, RUNS)
    assert len(fig.axes[0].get_lines()[1].get_xdata()) == 11


def test_differences_and_distribution() -> None:
    result = compare(QRELS, RUNS, ["AP"])
    fig = result.plot_differences("AP")
    heights = _bar_heights(fig.axes[0])
    assert len(heights) == len(QRELS)
    assert heights == sorted(heights, reverse=True)  # sorted per-query differences
    expected = sorted(result.column("b", "AP") - result.column("a", "AP"), reverse=True)
    assert heights == pytest.approx(expected)
    fig = result.plot_distribution("AP")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["a", "b"]
    with pytest.raises(OptionError, match="baseline"):
        plots.plot_differences(result, "AP", run="a")


def _bar_heights(ax: Any) -> list[float]:
    """The bars' signed heights, from the corners of the one collection drawing them."""
    (bars,) = ax.collections
    return [float(path.vertices[2, 1] - path.vertices[0, 1]) for path in bars.get_paths()]


def _pixels(fig: Any) -> np.ndarray:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def test_difference_bars_are_one_artist_with_matplotlibs_bar_picture() -> None:
    """The bars are one collection (not a Rectangle each: 14,000 of them took most of a
    17-run report), painting exactly the pixels and limits ``Axes.bar`` gives."""
    from matplotlib.figure import Figure

    rng = np.random.default_rng(7)
    diff = np.sort(np.round(rng.normal(0.0, 0.2, 300), 2))[::-1]
    diff[100:104] = 0.0  # grey bars of no height
    fig = Figure(figsize=(6.4, 4.0), dpi=110)
    ax = fig.subplots()
    plots._bars(ax, diff)
    assert not ax.patches and len(ax.collections) == 1
    assert _bar_heights(ax) == pytest.approx(list(diff))
    # the reference: matplotlib's own bar chart of the same values and colours
    ref = Figure(figsize=(6.4, 4.0), dpi=110)
    ref_ax = ref.subplots()
    colors = np.where(diff > 0, "tab:green", np.where(diff < 0, "tab:red", "tab:gray"))
    ref_ax.bar(np.arange(diff.size), diff, color=list(colors), width=1.0)
    assert ax.get_xlim() == ref_ax.get_xlim() and ax.get_ylim() == ref_ax.get_ylim()
    assert np.array_equal(_pixels(fig), _pixels(ref))


def test_png_and_svg(tmp_path: Path) -> None:
    fig = plots.plot_precision_recall(QRELS, RUNS)
    png = tmp_path / "pr.png"
    svg = tmp_path / "pr.svg"
    plots.save_figure(fig, png)
    plots.save_figure(fig, svg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]
    with pytest.raises(OptionError, match="png, svg or pdf"):
        plots.save_figure(fig, tmp_path / "pr.gif")
