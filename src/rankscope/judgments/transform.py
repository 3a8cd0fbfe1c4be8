"""Transformers: map grades from one scale to another before a metric needs them.

When a metric needs another scale than the judgments have (P@10 over detail
grades), every rater's grade is mapped first, then aggregated with the target
scale's strategy, as the judging platform does (seed 004). Its default rules:

=================  ==========================================
binary -> graded   0 -> 0, 1 -> 3
binary -> detail   0 -> 1, 1 -> 10
graded -> binary   0 -> 0, 1..3 -> 1
graded -> detail   0 -> 1, 1 -> 4, 2 -> 7, 3 -> 10
detail -> binary   1 -> 0, 2..10 -> 1
detail -> graded   1 -> 0, 2..4 -> 1, 5..7 -> 2, 8..10 -> 3
=================  ==========================================

Every rule is configurable: rules given for a pair of scales replace the
defaults grade by grade; pairs without defaults (custom scales, ``trec``) need
rules for every grade. A grade no rule covers is an error naming the file and
line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

from rankscope.errors import OptionError, ScaleError
from rankscope.judgments.scales import Scale, get_scale

if TYPE_CHECKING:
    # the table's methods call these functions: the table is only named here
    from rankscope.judgments.table import Judgments

__all__ = ["DEFAULT_RULES", "parse_rules", "rules_for", "transform", "transform_grades"]


def _expand(spec: Mapping[tuple[int, int], int]) -> dict[float, float]:
    return {float(g): float(v) for (lo, hi), v in spec.items() for g in range(lo, hi + 1)}


DEFAULT_RULES: dict[tuple[str, str], dict[float, float]] = {
    ("binary", "graded"): _expand({(0, 0): 0, (1, 1): 3}),
    ("binary", "detail"): _expand({(0, 0): 1, (1, 1): 10}),
    ("graded", "binary"): _expand({(0, 0): 0, (1, 3): 1}),
    ("graded", "detail"): _expand({(0, 0): 1, (1, 1): 4, (2, 2): 7, (3, 3): 10}),
    ("detail", "binary"): _expand({(1, 1): 0, (2, 10): 1}),
    ("detail", "graded"): _expand({(1, 1): 0, (2, 4): 1, (5, 7): 2, (8, 10): 3}),
}
"""The judging platform's transformer rules, (from, to) -> {grade: grade}."""

_NUM = r"(-?\d+(?:\.\d+)?)"
_RULE = re.compile(rf"^\s*{_NUM}\s*(?:\.\.\s*{_NUM}\s*)?[=:]\s*{_NUM}\s*$")


def parse_rules(text: str) -> dict[float, float]:
    """Read rules written as ``0=0,1..3=1`` (or ``0:0; 1..3:1``; ranges are inclusive).

    Raises
    ------
    OptionError
        For a part that is not ``GRADE=VALUE`` or ``LOW..HIGH=VALUE``.
    """
    out: dict[float, float] = {}
    for part in re.split(r"[,;\n]", text):
        if not part.strip():
            continue
        m = _RULE.match(part)
        if not m:
            raise OptionError(
                f"cannot read transformer rule {part.strip()!r}; write GRADE=VALUE or "
                "LOW..HIGH=VALUE, e.g. '0=0,1..3=1'"
            )
        low, value = float(m.group(1)), float(m.group(3))
        if m.group(2) is None:
            out[low] = value
            continue
        high = float(m.group(2))
        if high < low or not (low.is_integer() and high.is_integer()):
            raise OptionError(f"bad range in transformer rule {part.strip()!r}")
        for g in range(int(low), int(high) + 1):
            out[float(g)] = value
    if not out:
        raise OptionError("empty transformer rules")
    return out


def rules_for(
    source: Scale, target: Scale, rules: Mapping[float, float] | str | None = None
) -> dict[float, float]:
    """The grade map from ``source`` to ``target``: defaults overridden by ``rules``."""
    merged = dict(DEFAULT_RULES.get((source.name, target.name), {}))
    if isinstance(rules, str):
        rules = parse_rules(rules)
    for grade, value in (rules or {}).items():
        merged[float(grade)] = float(value)
    if not merged:
        raise OptionError(
            f"no transformer rules from {source.describe()} to {target.describe()}: "
            "give them, e.g. '0=0,1..3=1'"
        )
    for grade, value in merged.items():
        if not target.contains(value):
            raise OptionError(
                f"transformer rule {grade:g} -> {value:g} leaves the {target.describe()} scale"
            )
    return merged


def transform_grades(grades: pl.Series, mapping: Mapping[float, float]) -> pl.Series:
    """Map grades (nulls stay null; unmapped grades become NaN, for the caller to report)."""
    g = pl.col("grade")
    mapped = g.replace_strict(dict(mapping), default=float("nan"), return_dtype=pl.Float64)
    return (
        pl.DataFrame({"grade": grades})
        .select(pl.when(g.is_null()).then(None).otherwise(mapped).alias("grade"))
        .to_series()
    )


def transform(
    judgments: Judgments,
    to: Scale | str,
    rules: Mapping[float, float] | str | None = None,
    *,
    source: Scale | str | None = None,
) -> Judgments:
    """Map every grade of ``judgments`` to the scale ``to``.

    Parameters
    ----------
    judgments : Judgments
        The grades to map (each rater's grade, before aggregation).
    to : Scale or str
        The target scale.
    rules : mapping or str, optional
        ``{grade: new_grade}`` or ``"0=0,1..3=1"``, overriding the defaults
        grade by grade (see the module documentation).
    source : Scale or str, optional
        The judgments' scale (default: their declared scale).

    Returns
    -------
    Judgments
        The same rows with mapped grades, declared on ``to``.

    Raises
    ------
    ScaleError
        A grade no rule covers (file, line, value).
    OptionError
        No scale declared, or no rules for a pair without defaults.

    Examples
    --------
    Detail -> binary with the defaults: 1 -> 0 and 2..10 -> 1, so raters'
    grades ``1, 7, 2`` become ``0, 1, 1`` (majority: 1).
    """
    src = get_scale(source) if source is not None else judgments.scale
    if src is None:
        raise OptionError("transforming grades needs the judgments' scale (binary, graded...)")
    target = get_scale(to)
    if target is None:
        raise OptionError("transforming grades needs a target scale")
    if src is not judgments.scale:
        judgments = judgments.with_scale(src)
    if src == target and not rules:
        return judgments
    mapping = rules_for(src, target, rules)
    grades = judgments.frame.get_column("grade")
    mapped = transform_grades(grades, mapping)
    unmapped = mapped.is_nan().fill_null(False)
    if unmapped.any():
        row = int(unmapped.arg_true()[0])
        file, line = judgments.where(row)
        raise ScaleError(
            f"no transformer rule maps this grade from {src.name} to {target.name}",
            source=file, line=line, value=f"{grades[row]:g}",
        )
    return judgments.with_grades(mapped, scale=target)
