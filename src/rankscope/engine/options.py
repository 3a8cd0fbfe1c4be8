"""One options object for every driver: how ties, unjudged documents, queries,
duplicates, scores and the relevance threshold are treated, and under whose
conventions.

:class:`EvalOptions` travels unchanged through every way of evaluating (the
local engine, the streaming engine, Spark, the judgments path and the
``rankscope trec_eval`` command), so a new convention is added in one place.
The drivers take it as ``options=`` and also accept its fields as keyword
arguments (``ties="input"``), merged by :meth:`EvalOptions.merged`.

A conventions profile (``conventions="ir_measures"``: one tool's names,
defaults, tie rules and query policy at once, see
:mod:`rankscope.metrics.conventions`) is an ``EvalOptions`` preset plus a
naming table: setting ``conventions`` sets the profile's values of the other
fields, unless they are given too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from rankscope.data.ranking_order import TIE_RULES, TieRule
from rankscope.data.tables import OnDuplicate
from rankscope.errors import OptionError

if TYPE_CHECKING:
    from rankscope.metrics.base import Metric

__all__ = ["EvalOptions", "OptionFields", "Queries", "QueryPolicy", "Scores", "Ties", "Unjudged"]

Ties = TieRule
"""The tie rules (:data:`rankscope.data.ranking_order.TIE_RULES`), the same in every command."""
Unjudged = Literal["nonrelevant", "condensed", "null"]
QueryPolicy = Literal["qrels", "intersection", "nonnull"]
"""The query policies of the ranking step."""
Queries = Literal["qrels", "intersection", "nonnull", "zero"]
"""The query policies of an evaluation: the ranking step's, and ``zero``."""
Scores = Literal["float64", "float32"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "ties": TIE_RULES,
    "unjudged": ("nonrelevant", "condensed", "null"),
    "queries": ("qrels", "intersection", "nonnull", "zero"),
    "on_duplicate": ("error", "first", "max"),
    "scores": ("float64", "float32"),
}


class OptionFields(TypedDict, total=False):
    """The fields of :class:`EvalOptions`, as keyword arguments of the drivers."""

    ties: Ties
    unjudged: Unjudged
    queries: Queries
    on_duplicate: OnDuplicate
    rel: float | None
    scores: Scores
    conventions: str | None


_DEFAULTS: dict[str, Any] = {
    "ties": "trec", "unjudged": "nonrelevant", "queries": "qrels", "on_duplicate": "error",
    "rel": None, "scores": "float64",
}


def _preset(conventions: str | None) -> dict[str, Any]:
    """The option values a conventions profile sets (raises OptionError for an unknown one)."""
    if conventions is None:
        return {}
    from rankscope.metrics.conventions import get_profile

    return dict(get_profile(conventions).options)


@dataclass(frozen=True)
class EvalOptions:
    """How an evaluation treats ties, unjudged documents, queries, duplicates, scores, relevance.

    Parameters
    ----------
    ties : {"trec", "input", "docid_asc"}, default "trec"
        Score ties broken by document id descending (trec_eval), kept in
        input order, or broken by document id ascending (ir_measures' rule
        for RR@k and Judged@k).
    unjudged : {"nonrelevant", "condensed", "null"}, default "nonrelevant"
        Unjudged documents are non-relevant; or removed before ranking
        (judged-only lists, trec_eval ``-J``); or the judging platform's null
        rules.
    queries : {"qrels", "intersection", "nonnull", "zero"}, default "qrels"
        Which queries are averaged: every query with judgments (a query the
        run lacks scores as an empty ranking, trec_eval ``-c``); only queries
        in both; every query with judgments but a query the run lacks has no
        value; or every query with judgments, a query the run lacks scoring
        0 on every metric (ir_measures).
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one query's ranking: an error, or keep its first
        or highest-scored line.
    rel : float, optional
        The relevance threshold of every metric that has one (trec_eval
        ``-l``); default: each metric's own ``rel``. Gains are not thresholded
        by it (nDCG's own ``rel`` is; trec_eval's ``-l`` does not touch
        ``ndcg`` either).
    scores : {"float64", "float32"}, default "float64"
        ``float32`` rounds every score to a 32-bit float before ranking, as
        pytrec_eval reads them (scores closer than float32 resolution tie).
    conventions : {"trec_eval", "pytrec_eval", "ir_measures", "ranx", "sklearn", "quepid"}, optional
        A tool's conventions profile (:mod:`rankscope.metrics.conventions`):
        metric names read as that tool reads them, per-metric tie rules and
        score precision as it has them, and its values of the fields above
        for every field not given explicitly.

    Raises
    ------
    OptionError
        For a value outside the choices.

    Examples
    --------
    >>> from rankscope.engine.options import EvalOptions
    >>> EvalOptions(ties="input").queries
    'qrels'
    >>> opts = EvalOptions.merged(EvalOptions(ties="input"), {"queries": "intersection"})
    >>> (opts.ties, opts.queries, opts.unjudged)
    ('input', 'intersection', 'nonrelevant')
    >>> opts = EvalOptions(conventions="pytrec_eval")
    >>> (opts.queries, opts.scores)
    ('intersection', 'float32')
    >>> EvalOptions.merged(opts, {"queries": "qrels"}).queries  # given explicitly: kept
    'qrels'
    """

    ties: Ties = "trec"
    unjudged: Unjudged = "nonrelevant"
    queries: Queries = "qrels"
    on_duplicate: OnDuplicate = "error"
    rel: float | None = None
    scores: Scores = "float64"
    conventions: str | None = None
    # set once the profile's values have filled the fields left at their defaults
    _preset_applied: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.conventions is not None and not self._preset_applied:
            for name, value in _preset(self.conventions).items():
                if getattr(self, name) == _DEFAULTS[name]:
                    object.__setattr__(self, name, value)
        object.__setattr__(self, "_preset_applied", True)
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise OptionError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.rel is not None and not isinstance(self.rel, int | float):
            raise OptionError(f"rel must be a number, not {self.rel!r}")

    @classmethod
    def merged(cls, options: EvalOptions | None, given: OptionFields) -> EvalOptions:
        """``options`` (default: the defaults) with the keyword fields ``given`` on top.

        A new ``conventions`` in ``given`` brings its profile's values for
        every field neither ``given`` nor set by ``options`` away from its own
        profile's values.
        """
        known = {f.name for f in fields(cls)} - {"_preset_applied"}
        unknown = set(given) - known
        if unknown:
            raise OptionError(f"unknown option(s): {', '.join(sorted(unknown))}")
        base = options if options is not None else cls()
        if not isinstance(base, EvalOptions):
            raise OptionError(f"options must be an EvalOptions, not {type(base).__name__}")
        if "conventions" in given and given["conventions"] != base.conventions:
            values = {**_DEFAULTS, **_preset(given["conventions"]), **base.explicit_fields(),
                      **given}
            return cls(**values, _preset_applied=True)
        return replace(base, **given) if given else base

    def explicit_fields(self) -> dict[str, Any]:
        """The fields whose values differ from what the defaults and the profile give."""
        implied = {**_DEFAULTS, **_preset(self.conventions)}
        return {name: getattr(self, name) for name in _DEFAULTS
                if getattr(self, name) != implied[name]}

    @property
    def ranked_queries(self) -> QueryPolicy:
        """The query policy the ranking step applies (``zero`` ranks as ``qrels``)."""
        return "qrels" if self.queries == "zero" else self.queries

    def bind(self, metric: Metric) -> Metric:
        """``metric`` with this evaluation's relevance threshold, when one is set.

        Only a relevance threshold is bound: the ``rel`` of CG, DCG and nDCG
        (grades below it gain 0, ranx's ``-lN``) is left alone, as trec_eval's
        ``-l`` leaves its ``ndcg`` alone.
        """
        if self.rel is None or not any(p.name == "rel" and p.default is not None
                                       for p in metric.spec.params):
            return metric
        from rankscope.metrics.base import make_metric

        return make_metric(metric.family, k=metric.k, **{**dict(metric.params), "rel": self.rel})
