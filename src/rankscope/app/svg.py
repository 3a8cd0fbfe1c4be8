"""Charts drawn on the server as SVG text: no JavaScript library, works offline."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["PALETTE", "line_chart"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def line_chart(labels: Sequence[str], series: dict[str, Sequence[float | None]],
               notes: Sequence[str] = (), *, width: int = 720, height: int = 280) -> str:
    """A line per series over the labels (evaluations, oldest first).

    The axis runs from 0 to 1, or to the largest value when one is above 1
    (DCG, CG).

    A point without a value is left out (the line breaks there); each label's
    note (the evaluation's "what changed") is its tooltip and is numbered
    under the axis.

    Examples
    --------
    >>> svg = line_chart(["a", "b"], {"nDCG@10": [0.5, 0.75]}, ["first", "stemming"])
    >>> svg.startswith("<svg") and svg.count("<circle") == 2 and "stemming" in svg
    True
    >>> ">3.00<" in line_chart(["a"], {"DCG@10": [3.0]})  # the axis grows to the data
    True
    """
    left, right, top, bottom = 48, 150, 16, 56
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(labels)
    top_value = max([1.0, *(v for vs in series.values() for v in vs if v is not None)])

    def x(i: int) -> float:
        return left + (plot_w * (i + 0.5) / n if n else 0)

    def y(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, v / top_value)))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="metrics over time" '
             'font-family="sans-serif" font-size="11">']
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        tick = share * top_value
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" '
                     f'y2="{y(tick):.1f}" stroke="#ddd"/>'
                     f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                     f'{tick:.2f}</text>')
    for i, label in enumerate(labels):
        note = notes[i] if i < len(notes) else ""
        parts.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                     f'<title>{escape(note)}</title>{escape(label)}</text>')
        if note:
            parts.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 32}" text-anchor="middle" '
                         f'fill="#555">[{i + 1}] {escape(note[:24])}</text>')
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        run: list[str] = []
        for i, v in enumerate(values):
            if v is None:
                if len(run) > 1:
                    parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" '
                                 f'points="{" ".join(run)}"/>')
                run = []
                continue
            run.append(f"{x(i):.1f},{y(v):.1f}")
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{color}">'
                         f'<title>{escape(name)} {v:.4f}</title></circle>')
        if len(run) > 1:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" '
                         f'points="{" ".join(run)}"/>')
        ly = top + 14 * k + 6
        parts.append(f'<rect x="{left + plot_w + 12}" y="{ly - 8}" width="10" height="10" '
                     f'fill="{color}"/><text x="{left + plot_w + 26}" y="{ly + 1}">'
                     f'{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
