"""Grading scales: which grades a judgment may carry and what they are called.

Built in: ``binary`` {0, 1}, ``graded`` 0-3 (poor, fair, good, perfect),
``trec`` 0-4 (TREC's graded qrels), ``detail`` 1-10 (the judging platform's
fine scale, seed 004). Custom scales give a minimum, a maximum and optional
labels; ``"1-5"`` or ``"1..5"`` spells one in a command line.

A grade outside the declared scale is an error naming the file, line and value
(:class:`~rankscope.errors.ScaleError`), never a quietly wrong number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from rankscope.errors import OptionError, ScaleError

__all__ = [
    "BINARY",
    "DETAIL",
    "GRADED",
    "SCALES",
    "TREC",
    "Scale",
    "check_grades",
    "first_outside",
    "get_scale",
    "scale_error",
]


@dataclass(frozen=True)
class Scale:
    """A grading scale.

    Parameters
    ----------
    name : str
        ``binary``, ``graded``, ``trec``, ``detail`` or a custom name.
    min, max : float
        The lowest and the highest grade (``max`` is the top grade ERR uses).
    labels : tuple of (grade, label) pairs
        Names of grades (``0 = "irrelevant"``); they may be used in input files
        in place of the numbers (case-insensitively).
    integer : bool, default True
        Whether only whole grades are allowed.
    """

    name: str
    min: float
    max: float
    labels: tuple[tuple[float, str], ...] = ()
    integer: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.min) and math.isfinite(self.max)) or self.min >= self.max:
            raise OptionError(
                f"scale {self.name!r}: need finite min < max, not {self.min:g}..{self.max:g}"
            )
        for grade, _ in self.labels:
            if not self.min <= grade <= self.max:
                raise OptionError(f"scale {self.name!r}: label grade {grade:g} is outside it")

    @property
    def values(self) -> tuple[float, ...]:
        """Every allowed grade, ascending (integer scales only; empty otherwise)."""
        if not self.integer:
            return ()
        return tuple(float(v) for v in range(math.ceil(self.min), math.floor(self.max) + 1))

    @property
    def is_binary(self) -> bool:
        """Whether the scale is {0, 1}."""
        return self.integer and self.min == 0 and self.max == 1

    @property
    def default_strategy(self) -> str:
        """The judging platform's aggregation: majority vote if binary, else mean."""
        return "majority" if self.is_binary else "mean"

    @property
    def default_level(self) -> str:
        """Krippendorff level of measurement: nominal if binary, else ordinal."""
        return "nominal" if self.is_binary else "ordinal"

    def label_map(self) -> dict[str, float]:
        """Lower-cased label -> grade."""
        return {label.lower(): grade for grade, label in self.labels}

    def contains(self, grade: float) -> bool:
        """Whether ``grade`` is allowed."""
        if not self.min <= grade <= self.max:
            return False
        return not self.integer or float(grade).is_integer()

    def describe(self) -> str:
        """``graded (0-3)`` and the like."""
        kind = "" if self.integer else ", any number"
        return f"{self.name} ({self.min:g}-{self.max:g}{kind})"

    def __str__(self) -> str:
        return self.name


def _labels(pairs: Mapping[float, str]) -> tuple[tuple[float, str], ...]:
    return tuple(sorted((float(g), str(v)) for g, v in pairs.items()))


BINARY = Scale("binary", 0, 1, _labels({0: "irrelevant", 1: "relevant"}))
GRADED = Scale("graded", 0, 3, _labels({0: "poor", 1: "fair", 2: "good", 3: "perfect"}))
TREC = Scale("trec", 0, 4)
DETAIL = Scale("detail", 1, 10)

SCALES: dict[str, Scale] = {s.name: s for s in (BINARY, GRADED, TREC, DETAIL)}
"""The built-in scales by name."""

_RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-|\.\.|:)\s*(-?\d+(?:\.\d+)?)\s*$")


def get_scale(spec: Scale | str | None) -> Scale | None:
    """A scale from a :class:`Scale`, a built-in name or ``"MIN-MAX"`` (None passes through).

    Raises
    ------
    OptionError
        For an unknown name or a malformed range.
    """
    if spec is None or isinstance(spec, Scale):
        return spec
    if not isinstance(spec, str):
        raise OptionError(f"a scale is a name or a Scale, not {type(spec).__name__}")
    key = spec.strip().lower()
    if key in SCALES:
        return SCALES[key]
    m = _RANGE.match(key)
    if m:
        low, high = float(m.group(1)), float(m.group(2))
        integer = low.is_integer() and high.is_integer()
        return Scale(f"{low:g}-{high:g}", low, high, integer=integer)
    raise OptionError(
        f"unknown scale {spec!r}; use binary, graded (0-3), trec (0-4), detail (1-10) or MIN-MAX"
    )


def first_outside(grades: pl.Series, scale: Scale) -> int | None:
    """The 0-based row of the first non-null grade outside ``scale`` (None if all fit)."""
    inside = grades.is_between(scale.min, scale.max)
    if scale.integer:
        inside = inside & (grades == grades.round(0))
    bad = ~inside & grades.is_not_null()
    return int(bad.arg_true()[0]) if bad.any() else None


def scale_error(scale: Scale, value: object, source: str, line: int | None) -> ScaleError:
    """The error for a grade outside ``scale``."""
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    return ScaleError(
        f"grade outside the {scale.describe()} scale", source=source, line=line, value=shown
    )


def check_grades(
    grades: pl.Series,
    scale: Scale,
    source: str,
    locate: Callable[[int], int | None],
) -> None:
    """Raise :class:`ScaleError` for the first grade outside ``scale`` (nulls are fine).

    ``locate`` maps a 0-based row to the 1-based line of ``source``.
    """
    row = first_outside(grades, scale)
    if row is not None:
        raise scale_error(scale, grades[row], source, locate(row))
