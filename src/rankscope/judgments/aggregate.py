r"""Aggregation: several raters' grades of one result become one grade.

Every strategy works per (query, document) on the *non-null* grades (an
empty grade means "seen, not graded") and gives null when there is none, so
the result is qrels whose grades may be null (= ungraded). Strategies:

``majority``
    The grade with strictly more votes than any other; a tie is null. On the
    binary scale this is the judging platform's rule (seed 004): 1 if relevant
    votes > irrelevant votes, 0 if fewer, null if equal (``1, 0`` and
    ``1, 0, null`` are ties). On other scales it is the strict mode.
``mean``
    The arithmetic mean (seed 004's rule for graded and detail scales).
``median``
    The median; with an even count, the mean of the two middle grades.
``min`` / ``max``
    The lowest / highest grade.
``latest``
    The grade with the latest ``time``; grades without a time are older than
    any timed one; several different grades at the latest time are a tie
    (null). Needs a time column.
``top3``
    The rule of another popular judging tool: one or two grades give their
    mean; with three or more, take the three highest: their common value when
    they agree, else the lowest of the three (so it is always the third
    highest grade).

By default the scale decides, as the judging platform does: ``majority`` for
the binary scale, ``mean`` for every other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

from rankscope.data.tables import Qrels
from rankscope.errors import OptionError
from rankscope.judgments.scales import Scale, get_scale

if TYPE_CHECKING:
    # the table's methods call these functions: the table is only named here
    from rankscope.judgments.table import Judgments

__all__ = [
    "STRATEGIES",
    "aggregate",
    "aggregate_frame",
    "majority_vote",
    "resolve_strategy",
    "tie_rate",
    "tie_rate_by_query",
]

STRATEGIES = ("majority", "mean", "median", "min", "max", "latest", "top3")

_KEYS = ["query_id", "doc_id"]


def resolve_strategy(
    strategy: str | Mapping[str, str] | None, scale: Scale | None
) -> str:
    """The strategy to use on ``scale``.

    ``strategy`` may name one for every scale, map scale names to strategies
    (``{"binary": "majority", "graded": "median"}``), or be None for the
    scale's default (majority if binary, else mean).

    Raises
    ------
    OptionError
        For an unknown strategy, or no strategy and no scale.
    """
    chosen: str | None
    if isinstance(strategy, Mapping):
        chosen = strategy.get(scale.name) if scale is not None else None
        if chosen is None:
            chosen = strategy.get("*")
    else:
        chosen = strategy
    if chosen is None:
        if scale is None:
            raise OptionError(
                "declare the judgments' scale (binary, graded, trec, detail or MIN-MAX) "
                "or name an aggregation strategy (" + ", ".join(STRATEGIES) + ")"
            )
        return scale.default_strategy
    chosen = chosen.strip().lower()
    if chosen not in STRATEGIES:
        raise OptionError(
            f"unknown aggregation strategy {chosen!r}; choose one of {', '.join(STRATEGIES)}"
        )
    return chosen


def _majority(graded: pl.DataFrame) -> pl.DataFrame:
    """Strict mode per item: the grade with the most votes, null on a tie."""
    votes = graded.group_by([*_KEYS, "grade"]).agg(pl.len().alias("votes"))
    return (
        votes.group_by(_KEYS)
        .agg(
            pl.col("votes").max().alias("top"),
            (pl.col("votes") == pl.col("votes").max()).sum().alias("n_top"),
            pl.col("grade").filter(pl.col("votes") == pl.col("votes").max()).first().alias("g"),
        )
        .select(
            *_KEYS,
            pl.when(pl.col("n_top") == 1).then(pl.col("g")).alias("grade"),
            (pl.col("n_top") > 1).alias("tie"),
        )
    )


def majority_vote(judgments: Judgments) -> tuple[pl.DataFrame, int]:
    """One grade per result by strict majority vote, the tied results left out.

    Returns ``(frame, n_tied)``: ``query_id, doc_id, grade`` for every result
    some rater graded and whose most frequent grade is one (sorted by query
    and document), and how many graded results had a tie. The vote of
    :func:`aggregate` with ``majority``; the LLM judge's agreement votes each
    side with it.

    Examples
    --------
    >>> import polars as pl
    >>> from rankscope.judgments.table import Judgments
    >>> j = Judgments(pl.DataFrame({"query_id": ["q"] * 5, "doc_id": list("aaabb"),
    ...     "rater": list("xyzxy"), "grade": [1.0, 1.0, 0.0, 1.0, 0.0]}))
    >>> frame, tied = majority_vote(j)
    >>> frame.rows(), tied
    ([('q', 'a', 1.0)], 1)
    """
    graded = judgments.frame.filter(pl.col("grade").is_not_null())
    votes = _majority(graded)
    tied = int(votes.get_column("tie").sum())
    winners = votes.filter(~pl.col("tie")).select(*_KEYS, pl.col("grade").cast(pl.Float64))
    return winners.sort(_KEYS), tied


def _latest(graded: pl.DataFrame) -> pl.DataFrame:
    """Grade(s) at the latest time per item; different grades there are a tie."""
    latest = pl.col("time").max()
    at_latest = pl.when(latest.is_null()).then(True).otherwise(pl.col("time") == latest)
    return (
        graded.group_by(_KEYS)
        .agg(pl.col("grade").filter(at_latest.fill_null(False)).unique().alias("gs"))
        .select(
            *_KEYS,
            pl.when(pl.col("gs").list.len() == 1).then(pl.col("gs").list.first()).alias("grade"),
            (pl.col("gs").list.len() > 1).alias("tie"),
        )
    )


def _top3(graded: pl.DataFrame) -> pl.DataFrame:
    top = pl.col("grade").sort(descending=True).head(3)
    return (
        graded.group_by(_KEYS)
        .agg(
            pl.len().alias("n"),
            pl.col("grade").mean().alias("mean"),
            top.alias("top"),
        )
        .select(
            *_KEYS,
            pl.when(pl.col("n") <= 2)
            .then(pl.col("mean"))
            .when(pl.col("top").list.first() == pl.col("top").list.last())
            .then(pl.col("top").list.first())  # the three agree: their common value
            .otherwise(pl.col("top").list.min())  # else the lowest of the three
            .alias("grade"),
            pl.lit(False).alias("tie"),
        )
    )


_SIMPLE = {
    "mean": pl.col("grade").mean(),
    "median": pl.col("grade").median(),
    "min": pl.col("grade").min(),
    "max": pl.col("grade").max(),
}


def aggregate_frame(
    judgments: Judgments,
    strategy: str | Mapping[str, str] | None = None,
    *,
    scale: Scale | str | None = None,
) -> pl.DataFrame:
    """Aggregate with details: ``query_id, doc_id, grade, n_grades, n_raters, tie``.

    ``n_grades`` counts non-null grades, ``n_raters`` every rater who saw the
    result; ``tie`` is true where the strategy found a tie (majority, latest).
    Rows are sorted by query and document.
    """
    sc = get_scale(scale) if scale is not None else judgments.scale
    if sc is not None and sc is not judgments.scale:
        judgments = judgments.with_scale(sc)
    how = resolve_strategy(strategy, sc)
    frame = judgments.frame
    if how == "latest" and not judgments.has_time:
        raise OptionError(
            f"strategy 'latest' needs a time column ({judgments.source} has none)"
        )
    items = frame.group_by(_KEYS).agg(
        pl.col("grade").count().alias("n_grades"),
        pl.col("rater").n_unique().alias("n_raters"),
    )
    graded = frame.filter(pl.col("grade").is_not_null())
    if how == "majority":
        result = _majority(graded)
    elif how == "latest":
        result = _latest(graded)
    elif how == "top3":
        result = _top3(graded)
    else:
        result = graded.group_by(_KEYS).agg(_SIMPLE[how].alias("grade"), pl.lit(False).alias("tie"))
    return (
        items.join(result, on=_KEYS, how="left")
        .select(
            *_KEYS,
            pl.col("grade").cast(pl.Float64),
            pl.col("n_grades").cast(pl.Int64),
            pl.col("n_raters").cast(pl.Int64),
            pl.col("tie").fill_null(False),
        )
        .sort(_KEYS)
    )


def aggregate(
    judgments: Judgments,
    strategy: str | Mapping[str, str] | None = None,
    *,
    scale: Scale | str | None = None,
) -> Qrels:
    """Aggregate raters' grades to qrels: one grade (possibly null) per result.

    Parameters
    ----------
    judgments : Judgments
        The raters' grades.
    strategy : str or mapping, optional
        ``majority``, ``mean``, ``median``, ``min``, ``max``, ``latest`` or
        ``top3`` (see the module documentation), or a map from scale name to
        strategy; default: the scale's (majority if binary, else mean).
    scale : Scale or str, optional
        The scale (default: the judgments' declared scale).

    Returns
    -------
    Qrels
        Grades per (query, document); null where no rater graded the result
        or the strategy found a tie.

    Examples
    --------
    Binary majority vote (seed 004): ``1, 1, 0`` -> 1; ``1, 0`` and
    ``1, 0, null`` -> null (ties); graded mean: ``3, 2, null`` -> 2.5.
    """
    frame = aggregate_frame(judgments, strategy, scale=scale)
    return Qrels(frame.select(*_KEYS, "grade"), source=judgments.source)


def _tie_items(judgments: Judgments) -> pl.DataFrame:
    details = aggregate_frame(judgments, "majority", scale=None)
    return details.filter(pl.col("n_grades") > 0)


def tie_rate(judgments: Judgments) -> float | None:
    """The share of graded results whose majority vote is a tie.

    Over results with at least one non-null grade (``1, 0`` and ``1, 0, null``
    are ties; ``null`` alone is not graded). None when nothing is graded.
    """
    graded = _tie_items(judgments)
    if graded.height == 0:
        return None
    return float(graded.get_column("tie").sum()) / graded.height


def tie_rate_by_query(judgments: Judgments) -> pl.DataFrame:
    """:func:`tie_rate` per query: ``query_id, n_graded, n_ties, tie_rate``.

    Queries with no graded result are left out.
    """
    return (
        _tie_items(judgments)
        .group_by("query_id")
        .agg(pl.len().cast(pl.Int64).alias("n_graded"),
             pl.col("tie").sum().cast(pl.Int64).alias("n_ties"))
        .with_columns((pl.col("n_ties") / pl.col("n_graded")).alias("tie_rate"))
        .sort("query_id")
    )
