"""Charts drawn on the server as SVG text: no JavaScript library, works offline."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["PALETTE", "delta_bars", "line_chart"]

PALETTE = ("#0a58b8", "#c2410c", "#15803d", "#7e22ce", "#b45309", "#475569")
UP, DOWN, FLAT = "#15803d", "#b42318", "#94a3b8"


def line_chart(labels: Sequence[str], series: dict[str, Sequence[float | None]],
               notes: Sequence[str] = (), *, width: int = 720, height: int = 280,
               provisional: Sequence[bool] = ()) -> str:
    """A line per series over the labels (evaluations, oldest first).

    A label marked ``provisional`` (an evaluation not frozen: its numbers may
    still move) has hollow points (``class="point provisional"``) and says
    so in their tooltips.

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
    >>> line_chart(["a", "b"], {"P@5": [0.5, 0.6]}, provisional=[False, True]).count("provisional")
    2
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
             'font-family="system-ui, sans-serif" font-size="11">']
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
            room = max(8, int(plot_w / max(n, 1) / 6))
            short = note if len(note) <= room else note[:room - 1] + "…"
            parts.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{top}" '
                         f'y2="{top + plot_h}" stroke="#cbd5e1" stroke-dasharray="3 3"/>'
                         f'<text x="{x(i):.1f}" y="{top + plot_h + 32}" text-anchor="middle" '
                         f'fill="#57606a"><title>{escape(note)}</title>{escape(short)}</text>')
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
            hollow = i < len(provisional) and provisional[i]
            parts.append(f'<circle class="point{" provisional" if hollow else ""}" '
                         f'cx="{x(i):.1f}" cy="{y(v):.1f}" r="4" '
                         + (f'fill="#fff" stroke="{color}" stroke-width="2">' if hollow
                            else f'fill="{color}">')
                         + f'<title>{escape(name)} {v:.4f}'
                         f'{" (provisional)" if hollow else ""}</title></circle>')
        if len(run) > 1:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" '
                         f'points="{" ".join(run)}"/>')
        ly = top + 14 * k + 6
        parts.append(f'<rect x="{left + plot_w + 12}" y="{ly - 8}" width="10" height="10" '
                     f'fill="{color}"/><text x="{left + plot_w + 26}" y="{ly + 1}">'
                     f'{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def delta_bars(labels: Sequence[str], deltas: Sequence[float | None], *, title: str = "",
               width: int = 720, height: int = 220) -> str:
    """Per-query differences as bars around zero, largest gain first (a query without a
    value on either side is left out).

    Each bar is a ``<rect class="delta">`` whose tooltip names the query and
    the difference; gains are green, losses red, ties grey.

    Examples
    --------
    >>> svg = delta_bars(["q1", "q2", "q3"], [0.25, -0.5, None], title="nDCG@10")
    >>> svg.count('class="delta"'), svg.index("q1") < svg.index("q2")
    (2, True)
    """
    pairs = sorted(((d, q) for q, d in zip(labels, deltas, strict=True) if d is not None),
                   key=lambda p: (-p[0], p[1]))
    left, right, top, bottom = 48, 12, 20, 24
    plot_w, plot_h = width - left - right, height - top - bottom
    reach = max([abs(d) for d, _ in pairs] + [1e-9])
    mid = top + plot_h / 2

    def y(v: float) -> float:
        return mid - (plot_h / 2) * (v / reach)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="per-query differences {escape(title)}" '
             'font-family="system-ui, sans-serif" font-size="11">']
    for tick in (-reach, -reach / 2, 0.0, reach / 2, reach):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" '
                     f'y2="{y(tick):.1f}" stroke="{"#888" if tick == 0 else "#e5e7eb"}"/>'
                     f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                     f'{tick:+.2f}</text>')
    n = len(pairs)
    step = plot_w / n if n else plot_w
    bar = max(1.0, step * 0.8)
    for i, (d, q) in enumerate(pairs):
        x = left + i * step + (step - bar) / 2
        y0, y1 = sorted((y(0.0), y(d)))
        color = UP if d > 0 else DOWN if d < 0 else FLAT
        parts.append(f'<rect class="delta" x="{x:.1f}" y="{y0:.1f}" width="{bar:.1f}" '
                     f'height="{max(y1 - y0, 1.0):.1f}" fill="{color}">'
                     f'<title>{escape(q)}: {d:+.4f}</title></rect>')
    wins = sum(1 for d, _ in pairs if d > 0)
    losses = sum(1 for d, _ in pairs if d < 0)
    parts.append(f'<text x="{left}" y="12">{escape(title)}: {wins} better, {losses} worse, '
                 f'{n - wins - losses} equal</text>')
    parts.append("</svg>")
    return "".join(parts)
