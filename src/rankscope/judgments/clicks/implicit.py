"""Implicit judgments: a click model's estimates mapped to grades, one rater per model.

:func:`implicit_judgments` fits a click model
(:mod:`rankscope.judgments.clicks.models`) on a click log, leaves out the
pairs shown fewer than ``min_impressions`` times, and maps each remaining
estimate to a grade:

- ``quantiles`` (the default, the quartiles), ``quantiles:0.5,0.9``: cut
  points at these quantiles of the estimates kept;
- ``thresholds:0.1,0.3,0.6``: fixed cut points;
- ``raw``: the estimate itself is the grade (no scale).

A pair's grade is the number of cut points its estimate is above (three cut
points give grades 0-3: the graded scale). The rater is ``implicit:<model>``,
so the result is read like any other rater's judgments: evaluated, compared
with human or LLM grades, imported into the judging app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from rankscope.errors import InputError, OptionError
from rankscope.judgments.clicks.log import ClickLog, read_click_log
from rankscope.judgments.clicks.models import ClickModelFit, coec, ctr, pbm, sdbn

if TYPE_CHECKING:
    from rankscope.data._io import PathLike
    from rankscope.judgments.table import Judgments

__all__ = ["MODELS", "GradeMapping", "ImplicitJudgments", "implicit_judgments"]

MODELS = {"ctr": ctr, "coec": coec, "pbm": pbm, "sdbn": sdbn}
"""The click models by name."""

_SCALES = {1: "binary", 3: "graded", 4: "trec"}


@dataclass(frozen=True)
class GradeMapping:
    """How estimates become grades: ``quantiles``, ``thresholds`` or ``raw``.

    Examples
    --------
    >>> m = GradeMapping.parse("thresholds:0.1,0.3,0.6")
    >>> m.grades([0.05, 0.1, 0.2, 0.9], m.cut_points([]))
    [0.0, 0.0, 1.0, 3.0]
    >>> q = GradeMapping.parse("quantiles")
    >>> q.cut_points([0.0, 0.0, 0.0, 0.4, 0.8])
    (0.0, 0.0, 0.4)
    >>> q.grades([0.0, 0.0, 0.0, 0.4, 0.8], q.cut_points([0.0, 0.0, 0.0, 0.4, 0.8]))
    [0.0, 0.0, 0.0, 2.0, 3.0]
    """

    kind: str
    cuts: tuple[float, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> GradeMapping:
        """``quantiles[:Q,...]``, ``thresholds:T,...`` or ``raw``.

        Raises
        ------
        OptionError
            Another kind, a number that does not parse, quantiles outside
            (0, 1), cut points not increasing.
        """
        kind, _, rest = spec.strip().partition(":")
        kind = kind.strip().lower()
        if kind == "raw":
            if rest.strip():
                raise OptionError("raw takes no cut points")
            return cls("raw")
        if kind not in ("quantiles", "thresholds"):
            raise OptionError(f"unknown grade mapping {spec!r}: quantiles[:Q,...], "
                              "thresholds:T,... or raw")
        if not rest.strip():
            if kind == "thresholds":
                raise OptionError("thresholds need cut points, e.g. thresholds:0.1,0.3,0.6")
            return cls("quantiles", (0.25, 0.5, 0.75))
        try:
            cuts = tuple(float(x) for x in rest.split(","))
        except ValueError:
            raise OptionError(f"cut points must be numbers: {rest!r}") from None
        if not all(np.isfinite(cuts)) or list(cuts) != sorted(set(cuts)):
            raise OptionError(f"cut points must be finite and increasing: {rest!r}")
        if kind == "quantiles" and not all(0 < c < 1 for c in cuts):
            raise OptionError(f"quantiles must be between 0 and 1 (exclusive): {rest!r}")
        return cls(kind, cuts)

    @property
    def scale(self) -> str | None:
        """The grading scale of the grades (None for ``raw``)."""
        if self.kind == "raw":
            return None
        return _SCALES.get(len(self.cuts), f"0-{len(self.cuts)}")

    def cut_points(self, values: Sequence[float]) -> tuple[float, ...]:
        """The cut points for these estimates (quantiles are taken over them)."""
        if self.kind != "quantiles":
            return self.cuts
        if len(values) == 0:
            return ()
        return tuple(float(x) for x in np.quantile(np.asarray(values, dtype=float),
                                                   self.cuts))

    def grades(self, values: Sequence[float], cuts: tuple[float, ...]) -> list[float]:
        """The grade of each estimate: how many cut points it is above."""
        array = np.asarray(values, dtype=float)
        if self.kind == "raw":
            return [float(v) for v in array]
        counted = (array[:, None] > np.asarray(cuts, dtype=float)[None, :]).sum(axis=1)
        return [float(g) for g in counted]


@dataclass(frozen=True)
class ImplicitJudgments:
    """Judgments from clicks: the grades, the estimates behind them and what was left out.

    Attributes
    ----------
    frame : polars.DataFrame
        ``query_id, doc_id, rater, grade``, the estimate (``probability``, or
        ``coec`` for COEC), ``impressions`` and ``clicks``.
    fit : ClickModelFit
        The model's whole fit (every pair, the position prior).
    mapping : GradeMapping
        How estimates became grades; ``cuts`` the cut points used.
    notes : list of str
        What was left out, and why.
    """

    frame: pl.DataFrame
    fit: ClickModelFit
    mapping: GradeMapping
    cuts: tuple[float, ...]
    rater: str
    notes: list[str] = field(default_factory=list)

    @property
    def scale(self) -> str | None:
        """The grades' scale (``graded`` for the default quartiles)."""
        return self.mapping.scale

    def to_judgments(self) -> Judgments:
        """The grades as a :class:`~rankscope.judgments.Judgments` table (one rater)."""
        from rankscope.judgments.table import Judgments

        return Judgments(self.frame.select("query_id", "doc_id", "rater", "grade"),
                         source=f"<{self.rater}>", scale=self.scale)

    def write(self, path: PathLike, *, format: str | None = None) -> None:
        """Write every column (CSV, TSV, JSONL, JSON, Parquet; TREC: the grades only)."""
        from rankscope.judgments.io import write_judgments_frame

        write_judgments_frame(self.frame, path, format)


def implicit_judgments(
    log: ClickLog | PathLike,
    model: str = "coec",
    *,
    min_impressions: int = 1,
    depth: int | None = None,
    purchase_weight: float = 1.0,
    grades: str | GradeMapping = "quantiles",
    rater: str | None = None,
    **options: Any,
) -> ImplicitJudgments:
    """Judgments from a click log: fit ``model``, keep pairs shown often enough, grade them.

    Parameters
    ----------
    log : ClickLog or path
        The click log (a path is read as the plain format).
    model : {"ctr", "coec", "pbm", "sdbn"}
        The click model (see :mod:`rankscope.judgments.clicks.models`).
    min_impressions : int, default 1
        Pairs shown fewer times get no judgment.
    depth : int, optional
        Only results shown at positions up to this count.
    purchase_weight : float, default 1
        The weight of a purchased result's click.
    grades : str or GradeMapping, default "quantiles"
        ``quantiles[:Q,...]``, ``thresholds:T,...`` or ``raw``.
    rater : str, optional
        The rater's name (default ``implicit:<model>``).
    **options
        Passed to the model (``max_iter``, ``tol`` for PBM).

    Examples
    --------
    >>> import polars as pl
    >>> from rankscope.judgments.clicks import ClickLog
    >>> log = ClickLog(pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
    ...     "query_id": ["q"] * 8, "doc_id": ["a", "b", "a", "b", "b", "a", "b", "a"],
    ...     "position": [1, 2, 1, 2, 1, 2, 1, 2], "clicked": [1, 0, 0, 0, 1, 0, 0, 1]}))
    >>> j = implicit_judgments(log, "ctr", grades="thresholds:0.3")
    >>> j.frame.select("doc_id", "rater", "grade", "probability").rows()
    [('a', 'implicit:ctr', 1.0, 0.5), ('b', 'implicit:ctr', 0.0, 0.25)]
    """
    if model not in MODELS:
        raise OptionError(f"unknown click model {model!r}; choose one of {', '.join(MODELS)}")
    if min_impressions < 1:
        raise OptionError(f"the minimum impressions must be 1 or more, not {min_impressions}")
    mapping = grades if isinstance(grades, GradeMapping) else GradeMapping.parse(grades)
    if not isinstance(log, ClickLog):
        log = read_click_log(log)
    fit = MODELS[model](log, depth=depth, purchase_weight=purchase_weight, **options)
    notes = list(log.notes) + list(fit.notes)
    pairs = fit.pairs
    rare = pairs.filter(pl.col("impressions") < min_impressions)
    if rare.height:
        notes.append(f"{rare.height} pairs shown fewer than {min_impressions} times left out")
    kept = pairs.filter((pl.col("impressions") >= min_impressions)
                        & pl.col("value").is_not_null())
    if kept.height == 0:
        raise InputError(f"no pair is shown at least {min_impressions} times with an "
                         f"estimate: no judgment to write", source=log.source)
    values = kept.get_column("value").to_list()
    cuts = mapping.cut_points(values)
    name = rater or f"implicit:{model}"
    frame = kept.select(
        "query_id", "doc_id", pl.lit(name, pl.String).alias("rater"),
        pl.Series("grade", mapping.grades(values, cuts), pl.Float64),
        pl.col("value").alias(fit.value_name), "impressions", "clicks",
    ).sort("query_id", "doc_id")
    return ImplicitJudgments(frame, fit, mapping, cuts, name, notes)
