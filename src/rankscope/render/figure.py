"""A matplotlib Figure that shows itself in a notebook without pyplot.

rankscope builds figures without pyplot (no global state, no display
needed), so IPython's inline backend never hears of them and a fresh kernel
would print ``<Figure size 640x400 with 1 Axes>``. :class:`Figure` adds
``_repr_png_`` and ``_repr_svg_`` (what IPython calls to display an object),
so a plot returned as a cell's value is drawn inline. Imported only by the
plotting functions: importing it imports matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure as _MatplotlibFigure

__all__ = ["Figure"]


class Figure(_MatplotlibFigure):
    """:class:`matplotlib.figure.Figure` with notebook display methods."""

    def _encoded(self, fmt: str) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format=fmt, dpi=110)
        return buffer.getvalue()

    def _repr_png_(self) -> bytes:
        return self._encoded("png")

    def _repr_svg_(self) -> str:
        return self._encoded("svg").decode("utf-8")
