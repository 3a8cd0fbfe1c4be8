"""Whether an input names an ir_datasets collection: ``irds:NAME``.

Apart from :mod:`rankscope.data.irds` (which re-exports both names) so that
reading a plain file, which asks this of every path, does not import the
collections' module (its dataclasses and helpers: about 2.5 ms of each
command's start, on the thread reading the first run).
"""

from __future__ import annotations

__all__ = ["PREFIX", "is_irds"]

PREFIX = "irds:"


def is_irds(path: object) -> bool:
    """Whether an input names an ir_datasets collection (``irds:NAME``).

    Examples
    --------
    >>> is_irds("irds:beir/scifact/test"), is_irds("qrels.txt"), is_irds(3)
    (True, False, False)
    """
    return isinstance(path, str) and path.startswith(PREFIX)
