"""Plots render to PNG and SVG and show what they claim."""

from __future__ import annotations

from pathlib import Path

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
    bars = fig.axes[0].patches
    heights = [bar.get_height() for bar in bars]
    assert len(bars) == len(QRELS)
    assert heights == sorted(heights, reverse=True)  # sorted per-query differences
    expected = sorted(result.column("b", "AP") - result.column("a", "AP"), reverse=True)
    assert heights == pytest.approx(expected)
    fig = result.plot_distribution("AP")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["a", "b"]
    with pytest.raises(OptionError, match="baseline"):
        plots.plot_differences(result, "AP", run="a")


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
