"""trec_eval's ``-m NAME.PARAMS``: reading a measure's parameters as trec_eval does.

The measure table itself is data in :mod:`rankscope.data.trec_catalog`
(re-exported here); everything trec_eval prints follows its order.
:func:`bind` checks a parameter string the way trec_eval does and names the
values the measure prints (``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rankscope.data.cnum import atof, atol
from rankscope.data.trec_catalog import (
    BY_NAME,
    MEASURES,
    NICKNAMES,
    MeasureDef,
    double_cutoff_name,
    well_formed_pairs,
)
from rankscope.trec_eval.exits import TrecEvalExit

__all__ = [
    "BY_NAME",
    "MEASURES",
    "NICKNAMES",
    "Bound",
    "MeasureDef",
    "bind",
    "double_cutoff_name",
    "expand",
]


@dataclass(frozen=True)
class Bound:
    """A measure with its parameters read, and the names of the values it prints.

    Attributes
    ----------
    spec : MeasureDef
        The table row.
    values : tuple of float
        Cut-offs (sorted) or parameters (in the given order).
    pairs : tuple of (str, float)
        ``key=value`` parameters, in the given order.
    names : tuple of str
        One printed name per value (``P_5``...); one name for other measures.
    """

    spec: MeasureDef
    values: tuple[float, ...]
    pairs: tuple[tuple[str, float], ...]
    names: tuple[str, ...]

    @property
    def name(self) -> str:
        """The measure's table name."""
        return self.spec.name


def _cannot(name: str, message: str) -> TrecEvalExit:
    return TrecEvalExit(f"{message}\ntrec_eval: Cannot initialize measure '{name}'\n", 2)


def _sorted_unique(name: str, cutoffs: list[float], positive: bool) -> tuple[float, ...]:
    cutoffs.sort()
    if positive and cutoffs[0] <= 0:
        raise _cannot(name, "trec_eval: Negative cutoff detected")
    if any(a == b for a, b in itertools.pairwise(cutoffs)):
        raise _cannot(name, "trec_eval: duplicate cutoffs detected")
    return tuple(cutoffs)


def bind(spec: MeasureDef, raw: str | None) -> Bound:
    """Read the parameters of one measure (``raw`` is the text after the dot, or None).

    Raises
    ------
    TrecEvalExit
        With trec_eval's message and status 2 for cut-offs <= 0 or repeated,
        and for malformed ``key=value`` lists.
    """
    name = spec.name
    if spec.params == "none" or raw is None:
        values = spec.default
        pairs: tuple[tuple[str, float], ...] = ()
        if spec.params == "long_cut":
            names = tuple(f"{name}_{int(v)}" for v in values)
        elif spec.params == "double_cut":
            names = tuple(double_cutoff_name(name, v) for v in values)
        else:
            names = (name,)
        return Bound(spec, values, pairs, names)
    parts = raw.split(",")
    if spec.params == "long_cut":
        longs: list[float] = [atol(p) for p in parts]
        cuts = _sorted_unique(name, longs, positive=True)
        return Bound(spec, cuts, (), tuple(f"{name}_{int(v)}" for v in cuts))
    if spec.params == "double_cut":
        cuts = _sorted_unique(name, [atof(p) for p in parts], positive=False)
        return Bound(spec, cuts, (), tuple(double_cutoff_name(name, v) for v in cuts))
    if spec.params == "double":
        return Bound(spec, tuple(atof(p) for p in parts), (), (f"{name}_{raw}",))
    if not well_formed_pairs(raw):
        raise _cannot(name, f"trec_eval: malformed pair parameters in '{raw}'")
    pairs = tuple((key, atof(value)) for key, value in (p.split("=", 1) for p in parts))
    return Bound(spec, (), pairs, (f"{name}_{raw}",))


def expand(name: str) -> tuple[str, ...] | None:
    """The measures a ``-m`` name marks (a nickname's members, or itself); None if unknown."""
    if name in NICKNAMES:
        return NICKNAMES[name]
    if name in BY_NAME:
        return (name,)
    return None
