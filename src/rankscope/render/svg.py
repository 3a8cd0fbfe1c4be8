"""The HTML report's figures as inline SVG, written directly (no matplotlib, no font layout).

A report is read in a browser: a figure there can be SVG elements the
browser lays out itself, which costs milliseconds to write where a
matplotlib ``savefig`` spends a tenth of a second measuring text. Each
function here returns one ``<svg>`` element:

* :func:`differences_svg`: per-query differences run - baseline, sorted,
  one ``<rect>`` a query with a ``<title>`` naming the query and both
  values (shown on hover), a zero line, and which run is better;
* :func:`distribution_svg`: a box plot of every run's per-query values
  (quartiles, whiskers at 1.5 IQR, outliers, the mean), one row a run;
* :func:`lines_svg`: curves (metric@k, precision-recall), one line a run,
  a ``<title>`` on every point.

Every figure is accessible (``role="img"``, an ``aria-label`` and a
``<title>``), draws its axes and text in ``currentColor`` (readable on a
light or a dark page), scales down to a phone's width (``viewBox``), needs
no script, and is well-formed XML: every name is escaped and characters XML
cannot hold are replaced. The Python API's figures stay matplotlib
(:mod:`rankscope.render.plots`).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rankscope.render.box_stats import BoxStats, box_stats, box_stats_rows
from rankscope.render.report_tables import ValueTexts, signed_text, signed_texts

if TYPE_CHECKING:
    from rankscope.compare.result import CompareResult

__all__ = [
    "BoxStats",
    "Series",
    "box_stats",
    "box_stats_rows",
    "differences_svg",
    "distribution_svg",
    "lines_svg",
    "nice_ticks",
    "sorted_differences",
]

FloatArray = npt.NDArray[np.float64]

WIDTH = 640
"""Width of a figure's coordinate system (its ``viewBox``); the page scales it."""

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
"""Line colours (matplotlib's tab10); past ten runs the colours repeat dashed."""

BETTER, WORSE, TIED = "#2ca02c", "#d62728", "#7f7f7f"
"""Bar colours of a difference plot: the run better, the baseline better, a tie."""

LABEL_EVERY_QUERY = 40
"""A difference plot names each query under its bar up to this many queries; past it,
only the first and last (every bar still names its query on hover)."""

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: object) -> str:
    """Text safe inside an SVG element or a quoted attribute (escaped, XML characters only)."""
    return _escaped(str(value))


@lru_cache(maxsize=1 << 14)
def _escaped(text: str) -> str:
    """:func:`_text` of a string, kept: a report's 56 difference plots name each query in
    each bar's title, and the run names in each (14,000 escapes of 250 query ids)."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


def _num(x: float) -> str:
    """A coordinate: two decimals, no trailing zeros."""
    out = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


def _value(x: float) -> str:
    return f"{x:.4f}"


def _signed(x: float) -> str:
    return f"{x:+.4f}".replace("-", "\u2212")


def _signed_text(text: str) -> str:
    """The table's text of a difference (``f"{d:.4f}"``) as :func:`_signed` writes ``d``."""
    return signed_text(text, "\u2212")


def _short(name: str, limit: int = 24) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "\u2026"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) covering ``[low, high]``."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    i = first
    while i * step <= high + step * 1e-9:
        ticks.append(round(i * step, 12) + 0.0)
        i += 1
    return ticks


def _tick_text(values: Sequence[float]) -> list[str]:
    """Tick labels with as many decimals as the step needs."""
    if len(values) < 2:
        return [f"{v:g}" for v in values]
    step = abs(values[1] - values[0])
    decimals = max(0, min(6, -math.floor(math.log10(step) + 1e-9) + (1 if _is_half(step) else 0)))
    return [f"{v:.{decimals}f}".replace("-", "\u2212") for v in values]


def _is_half(step: float) -> bool:
    scaled = step / 10.0 ** math.floor(math.log10(step))
    return abs(scaled - 2.5) < 1e-9


@dataclass(frozen=True)
class _Frame:
    """A plot area: data ranges mapped to SVG coordinates (y grows downwards)."""

    left: float
    top: float
    width: float
    height: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def x(self, value: float) -> float:
        lo, hi = self.x_range
        return self.left + (value - lo) / (hi - lo) * self.width

    def y(self, value: float) -> float:
        lo, hi = self.y_range
        return self.top + (hi - value) / (hi - lo) * self.height


def _open(width: float, height: float, label: str, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" class="rankscope-figure" role="img" '
            f'viewBox="0 0 {_num(width)} {_num(height)}" width="{_num(width)}" '
            f'height="{_num(height)}" aria-label="{_text(label)}" '
            f'font-family="system-ui, -apple-system, \'Segoe UI\', sans-serif" font-size="12" '
            f'fill="currentColor">',
            f"<title>{_text(label)}</title>",
            f'<text x="{_num(width / 2)}" y="18" text-anchor="middle" font-size="13" '
            f'font-weight="bold">{_text(title)}</text>']


def _y_axis(frame: _Frame, label: str, ticks: Sequence[float]) -> list[str]:
    """Grid lines and labels at the ticks, the axis line and its rotated label."""
    parts = ['<g class="axis" stroke="currentColor">']
    right = frame.left + frame.width
    for tick in ticks:
        y = _num(frame.y(tick))
        parts.append(f'<line x1="{_num(frame.left)}" x2="{_num(right)}" y1="{y}" y2="{y}" '
                     f'stroke-opacity="0.15"/>')
    parts.append(f'<line x1="{_num(frame.left)}" x2="{_num(frame.left)}" '
                 f'y1="{_num(frame.top)}" y2="{_num(frame.top + frame.height)}"/></g>')
    for tick, text in zip(ticks, _tick_text(ticks), strict=True):
        parts.append(f'<text x="{_num(frame.left - 6)}" y="{_num(frame.y(tick) + 4)}" '
                     f'text-anchor="end">{text}</text>')
    middle = frame.top + frame.height / 2
    parts.append(f'<text transform="translate(14 {_num(middle)}) rotate(-90)" '
                 f'text-anchor="middle">{_text(label)}</text>')
    return parts


def _x_axis(frame: _Frame, label: str, ticks: Sequence[float], baseline_y: float) -> list[str]:
    bottom = frame.top + frame.height
    parts = [f'<line x1="{_num(frame.left)}" x2="{_num(frame.left + frame.width)}" '
             f'y1="{_num(bottom)}" y2="{_num(bottom)}" stroke="currentColor"/>']
    for tick, text in zip(ticks, _tick_text(ticks), strict=True):
        x = _num(frame.x(tick))
        parts.append(f'<line x1="{x}" x2="{x}" y1="{_num(bottom)}" y2="{_num(bottom + 4)}" '
                     f'stroke="currentColor"/>')
        parts.append(f'<text x="{x}" y="{_num(bottom + 16)}" text-anchor="middle">{text}</text>')
    parts.append(f'<text x="{_num(frame.left + frame.width / 2)}" y="{_num(baseline_y)}" '
                 f'text-anchor="middle">{_text(label)}</text>')
    return parts


def _padded(low: float, high: float, share: float = 0.05) -> tuple[float, float]:
    if high <= low:  # one value: a range around it
        spread = abs(low) * 0.1 or 1.0
        return low - spread, high + spread
    pad = (high - low) * share
    return low - pad, high + pad


# -- per-query differences -------------------------------------------------------------


def sorted_differences(result: CompareResult, metric: str, run: str | None = None,
                       ) -> tuple[str, str, list[str], FloatArray]:
    """Per-query ``run - baseline`` on ``metric``, largest first (queries without both left out).

    ``run`` defaults to the first run that is not the baseline (in an
    all-pairs comparison the first run plays the baseline). Returns the run,
    the baseline, the query ids and the differences, in the order drawn.
    """
    run, base, rows, diff, _, _ = _sorted_rows(result, metric, run)
    return run, base, _query_texts(result, rows), diff


def _sorted_rows(result: CompareResult, metric: str, run: str | None,
                 ) -> tuple[str, str, npt.NDArray[np.intp], FloatArray, FloatArray, FloatArray]:
    """:func:`sorted_differences` as rows of ``query_ids`` (the order drawn), with the
    run's and the baseline's whole columns."""
    from rankscope.errors import OptionError

    base = result.baseline or result.run_names[0]
    if run is None:
        run = next(name for name in result.run_names if name != base)
    if run == base:
        raise OptionError(f"{run!r} is the baseline; pick another run")
    ours, theirs = result.column(run, metric), result.column(base, metric)  # checks both names
    diff = ours - theirs
    rows = np.flatnonzero(~np.isnan(diff))
    order = np.argsort(-diff[rows], kind="stable")
    rows = rows[order]
    return run, base, rows, diff[rows], ours, theirs


def _query_texts(result: CompareResult, rows: npt.NDArray[np.intp]) -> list[str]:
    return [str(q) for q in np.array(result.query_ids, dtype=object)[rows]]


@lru_cache(maxsize=64)
def _bar_lefts(left: float, step: float, n: int) -> tuple[str, ...]:
    """The bars' x coordinates as written, kept: a report's difference plots all have the
    same queries, so the same bars (56 plots of 250 in a track's report)."""
    return tuple(f"{x:.2f}" for x in (left + np.arange(n) * step).tolist())


def _bar_tops(tops: FloatArray, sliver: npt.NDArray[np.bool_], up: int, zero: float,
              ) -> list[str]:
    """The bars' ``y`` as written (``f"{top:.2f}"``), largest difference first.

    The bars past the first ``up`` (those above zero) are not above zero, so each starts
    at the zero line, or at a sliver's top: two texts shared, not a format a bar (most of
    a track's 14,000 bars).
    """
    written = [f"{top:.2f}" for top in tops[:up].tolist()]
    at_zero, at_sliver = f"{zero:.2f}", f"{zero - 0.5:.2f}"
    return written + [at_sliver if thin else at_zero for thin in sliver[up:].tolist()]


def differences_svg(result: CompareResult, metric: str, run: str | None = None, *,
                    caption: str = "", texts: ValueTexts | None = None) -> str:
    """Sorted per-query differences ``run - baseline`` as bars, one ``<rect>`` a query.

    ``texts``: the values as written, when the per-query table writes them too.
    """
    # the rows drawn straight from the sort (not looked up again by query id)
    run, base, rows, diff, _, _ = _sorted_rows(result, metric, run)
    ids = _query_texts(result, rows)
    texts = ValueTexts(result) if texts is None else texts
    order = rows.tolist()
    run_texts, base_texts = texts.values(run, metric), texts.values(base, metric)
    values_run = [run_texts[i] for i in order]
    values_base = [base_texts[i] for i in order]
    differences = texts.differences(run, base, metric)
    signed = signed_texts(map(differences.__getitem__, order), "\u2212")
    wins, losses = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    n = len(ids)
    labelled = 0 < n <= LABEL_EVERY_QUERY
    longest = max((len(_short(q, 16)) for q in ids), default=0) if labelled else 0
    bottom_room = 44 + (min(longest, 16) * 6.5 if labelled else 14)
    height = 300 + bottom_room
    low, high = _padded(min(0.0, float(diff.min(initial=0.0))),
                        max(0.0, float(diff.max(initial=0.0))))
    frame = _Frame(72, 52, WIDTH - 72 - 16, height - 52 - bottom_room, (0.0, max(1, n)),
                   (low, high))
    title = f"{metric}: {run} \u2212 {base} per query ({wins} better, {losses} worse)"
    label = (caption or title) + (f"; {wins} queries better with {run}, {losses} better with "
                                  f"{base}, {n - wins - losses} tied")
    parts = _open(WIDTH, height, label, title)
    run_t, base_t = _text(run), _text(base)
    parts.append(f'<text x="{_num(WIDTH / 2)}" y="36" text-anchor="middle" font-size="11">'
                 f'<tspan fill="{BETTER}">\u25a0</tspan> {run_t} better  '
                 f'<tspan fill="{WORSE}">\u25a0</tspan> {base_t} better</text>')
    ticks = nice_ticks(low, high)
    parts += _y_axis(frame, f"difference in {metric}", ticks)
    zero = frame.y(0.0)
    step = frame.width / max(1, n)
    # every bar's place at once; a tie (or nearly) is a sliver at zero, still there to hover
    pixels = frame.height / (high - low)
    tops = zero - np.maximum(diff, 0.0) * pixels
    sizes = np.abs(diff) * pixels
    sliver = sizes < 1.0
    tops[sliver], sizes[sliver] = zero - 0.5, 1.0
    top_texts = _bar_tops(tops, sliver, wins, zero)
    colors = np.where(diff > 0, BETTER, np.where(diff < 0, WORSE, TIED)).tolist()
    lefts = _bar_lefts(frame.left, step, n)
    width = f"{step:.2f}"
    parts.append('<g class="bars" stroke="none">')
    # _text and the values' texts inline: 56 plots of 250 bars in a track's report
    parts += [f'<rect x="{x}" y="{top}" width="{width}" height="{size:.2f}" '
              f'fill="{color}"><title>{query}: {run_t} {a} \u2212 {base_t} {b} = '
              f'{d}</title></rect>'
              for query, x, top, size, color, a, b, d in zip(
                  map(_escaped, ids), lefts, top_texts, sizes.tolist(), colors, values_run,
                  values_base, signed, strict=True)]
    parts.append("</g>")
    parts.append(f'<line class="zero" x1="{_num(frame.left)}" '
                 f'x2="{_num(frame.left + frame.width)}" y1="{_num(zero)}" y2="{_num(zero)}" '
                 f'stroke="currentColor"/>')
    axis_y = frame.top + frame.height
    if labelled:
        for i, query in enumerate(ids):
            x = frame.left + (i + 0.5) * step
            parts.append(f'<text transform="translate({_num(x + 3)} {_num(axis_y + 6)}) '
                         f'rotate(90)" font-size="10">{_text(_short(query, 16))}</text>')
    elif n:
        parts.append(f'<text x="{_num(frame.left)}" y="{_num(axis_y + 14)}" font-size="10">'
                     f'\u2190 {_text(_short(ids[0], 20))}</text>')
        parts.append(f'<text x="{_num(frame.left + frame.width)}" y="{_num(axis_y + 14)}" '
                     f'font-size="10" text-anchor="end">{_text(_short(ids[-1], 20))} '
                     f'\u2192</text>')
    parts.append(f'<text x="{_num(frame.left + frame.width / 2)}" y="{_num(height - 8)}" '
                 f'text-anchor="middle">queries, sorted by difference (hover a bar for its '
                 f'query)</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- distributions ---------------------------------------------------------------------


def distribution_svg(result: CompareResult, metric: str, *, caption: str = "") -> str:
    """Box plot of every run's per-query ``metric``, one row a run (means as diamonds)."""
    names = result.run_names
    stats = box_stats_rows(np.stack([result.column(name, metric) for name in names]))
    row = 26
    longest = max(len(_short(n)) for n in names)
    left = 16 + min(longest, 24) * 6.6
    top, bottom_room = 44, 46
    height = top + row * len(names) + bottom_room
    present = [s for s in stats if s is not None]
    low = min((s.low_whisker for s in present), default=0.0)
    high = max((s.high_whisker for s in present), default=1.0)
    low = min([low, *(v for s in present for v in s.outliers)])
    high = max([high, *(v for s in present for v in s.outliers)])
    low, high = _padded(low, high)
    frame = _Frame(left, top, WIDTH - left - 20, row * len(names), (low, high), (0.0, 1.0))
    title = f"distribution of per-query {metric}"
    label = (caption or title) + ": " + "; ".join(
        f"{name} median {_value(s.median)}, mean {_value(s.mean)}" if s is not None
        else f"{name} no values" for name, s in zip(names, stats, strict=True))
    parts = _open(WIDTH, height, label, title)
    ticks = nice_ticks(low, high)
    bottom = top + row * len(names)
    for tick in ticks:
        x = _num(frame.x(tick))
        parts.append(f'<line x1="{x}" x2="{x}" y1="{_num(top)}" y2="{_num(bottom)}" '
                     f'stroke="currentColor" stroke-opacity="0.15"/>')
    parts += _x_axis(frame, metric, ticks, height - 8)
    for i, (name, s) in enumerate(zip(names, stats, strict=True)):
        mid = top + (i + 0.5) * row
        parts.append(f'<text x="{_num(left - 8)}" y="{_num(mid + 4)}" text-anchor="end">'
                     f'{_text(_short(name))}<title>{_text(name)}</title></text>')
        if s is None:
            continue
        tip = (f"{name}: n {s.n}, median {_value(s.median)}, mean {_value(s.mean)}, quartiles "
               f"{_value(s.q1)}-{_value(s.q3)}, whiskers {_value(s.low_whisker)}-"
               f"{_value(s.high_whisker)}, {len(s.outliers)} outliers")
        x1, x3 = frame.x(s.q1), frame.x(s.q3)
        half = row * 0.32
        # each coordinate written once a box (a track's 7 box plots of 17 runs wrote
        # 5,400 coordinates, a third of them the same few again)
        y, top_y, bottom_y = _num(mid), _num(mid - half), _num(mid + half)
        q1_x, q3_x = _num(x1), _num(x3)
        ends = [_num(frame.x(end)) for end in (s.low_whisker, s.high_whisker)]
        parts.append(f'<g class="box" stroke="currentColor"><title>{_text(tip)}</title>')
        parts.append(f'<line x1="{ends[0]}" x2="{q1_x}" y1="{y}" y2="{y}"/>')
        parts.append(f'<line x1="{q3_x}" x2="{ends[1]}" y1="{y}" y2="{y}"/>')
        tick_top, tick_bottom = _num(mid - half / 2), _num(mid + half / 2)
        parts += [f'<line x1="{x}" x2="{x}" y1="{tick_top}" y2="{tick_bottom}"/>'
                  for x in ends]
        parts.append(f'<rect x="{q1_x}" y="{top_y}" width="{_num(x3 - x1)}" '
                     f'height="{_num(2 * half)}" fill="{PALETTE[0]}" fill-opacity="0.25"/>')
        xm = _num(frame.x(s.median))
        parts.append(f'<line x1="{xm}" x2="{xm}" y1="{top_y}" '
                     f'y2="{bottom_y}" stroke="{PALETTE[1]}" stroke-width="2"/>')
        parts += [f'<circle cx="{_num(frame.x(v))}" cy="{y}" r="2.5" fill="none"/>'
                  for v in s.outliers]
        xa, r = frame.x(s.mean), 4.0
        xa_t = _num(xa)
        parts.append(f'<path d="M{xa_t} {_num(mid - r)}L{_num(xa + r)} {y}'
                     f'L{xa_t} {_num(mid + r)}L{_num(xa - r)} {y}Z" '
                     f'fill="{PALETTE[2]}" stroke="none"/></g>')
    parts.append(f'<text x="{_num(WIDTH - 20)}" y="36" text-anchor="end" font-size="11">'
                 f'box: quartiles, <tspan fill="{PALETTE[1]}">|</tspan> median, '
                 f'<tspan fill="{PALETTE[2]}">\u25c6</tspan> mean, whiskers 1.5 IQR, '
                 f'\u25cb outliers</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- curves ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One run's curve: its points, in order."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]


def lines_svg(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
              point: str = "{x:g}: {y:.4f}", x_range: tuple[float, float] | None = None,
              y_range: tuple[float, float] | None = None, integer_x: bool = False,
              caption: str = "") -> str:
    """Curves, one line with dots a run, each dot titled ``point`` (``{x}``, ``{y}``)."""
    xs = [v for s in series for v in s.x]
    ys = [v for s in series for v in s.y if math.isfinite(v)]
    if x_range is None:
        x_range = (min(xs, default=0.0), max(xs, default=1.0))
        if x_range[1] <= x_range[0]:
            x_range = (x_range[0] - 1, x_range[1] + 1)
    if y_range is None:
        y_range = _padded(min(ys, default=0.0), max(ys, default=1.0))
    columns = 3
    legend_rows = math.ceil(len(series) / columns)
    plot_height = 280
    top = 40
    height = top + plot_height + 44 + 18 * legend_rows + 8
    frame = _Frame(72, top, WIDTH - 72 - 20, plot_height, x_range, y_range)
    label = (caption or title) + ": " + "; ".join(
        f"{s.name} from {_value(s.y[0])} to {_value(s.y[-1])}" for s in series if s.y)
    parts = _open(WIDTH, height, label, title)
    y_ticks = nice_ticks(*y_range)
    parts += _y_axis(frame, y_label, y_ticks)
    x_ticks = nice_ticks(*x_range, count=8)
    if integer_x:
        x_ticks = [t for t in x_ticks if float(t).is_integer()]
    parts += _x_axis(frame, x_label, x_ticks, top + plot_height + 36)
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="5 3"' if (i // len(PALETTE)) % 2 else ""
        points = [(frame.x(x), frame.y(y), x, y) for x, y in zip(s.x, s.y, strict=True)
                  if math.isfinite(y)]
        path = " ".join(f"{_num(px)},{_num(py)}" for px, py, _, _ in points)
        parts.append(f'<g class="series"><polyline points="{path}" fill="none" '
                     f'stroke="{color}" stroke-width="1.5"{dash}/>')
        for px, py, x, y in points:
            tip = f"{s.name}: " + point.format(x=x, y=y)
            parts.append(f'<circle cx="{_num(px)}" cy="{_num(py)}" r="2.5" fill="{color}">'
                         f'<title>{_text(tip)}</title></circle>')
        parts.append("</g>")
        lx = frame.left + (i % columns) * (frame.width / columns)
        ly = top + plot_height + 56 + (i // columns) * 18
        parts.append(f'<line x1="{_num(lx)}" x2="{_num(lx + 22)}" y1="{_num(ly - 4)}" '
                     f'y2="{_num(ly - 4)}" stroke="{color}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{_num(lx + 28)}" y="{_num(ly)}" font-size="11">'
                     f'{_text(_short(s.name, 26))}<title>{_text(s.name)}</title></text>')
    parts.append("</svg>")
    return "".join(parts)
