"""One options object for every driver: how ties, unjudged documents, queries,
duplicates and the relevance threshold are treated.

:class:`EvalOptions` travels unchanged through every way of evaluating (the
local engine, the streaming engine, Spark, the judgments path and the
``rankscope trec_eval`` command), so a new convention is added in one place.
The drivers take it as ``options=`` and also accept its fields as keyword
arguments (``ties="input"``), merged by :meth:`EvalOptions.merged`.

A conventions profile (one tool's names, defaults, tie rule and query policy
at once) is meant to be an ``EvalOptions`` preset plus a naming table.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Literal, TypedDict

from rankscope.data.tables import OnDuplicate
from rankscope.errors import OptionError

if TYPE_CHECKING:
    from rankscope.metrics.base import Metric

__all__ = ["EvalOptions", "OptionFields", "QueryPolicy", "Ties", "Unjudged"]

Ties = Literal["trec", "input", "docid_asc"]
Unjudged = Literal["nonrelevant", "condensed", "null"]
QueryPolicy = Literal["qrels", "intersection", "nonnull"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("trec", "input", "docid_asc"),
    "unjudged": ("nonrelevant", "condensed", "null"),
    "queries": ("qrels", "intersection", "nonnull"),
    "on_duplicate": ("error", "first", "max"),
}


class OptionFields(TypedDict, total=False):
    """The fields of :class:`EvalOptions`, as keyword arguments of the drivers."""

    ties: Ties
    unjudged: Unjudged
    queries: QueryPolicy
    on_duplicate: OnDuplicate
    rel: float | None


@dataclass(frozen=True)
class EvalOptions:
    """How an evaluation treats ties, unjudged documents, queries, duplicates, relevance.

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
    queries : {"qrels", "intersection", "nonnull"}, default "qrels"
        Which queries are averaged: every query with judgments (a query the
        run lacks scores as an empty ranking, trec_eval ``-c``); only queries
        in both; or every query with judgments but a query the run lacks has
        no value.
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one query's ranking: an error, or keep its first
        or highest-scored line.
    rel : float, optional
        The relevance threshold of every metric that has one (trec_eval
        ``-l``); default: each metric's own ``rel``.

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
    """

    ties: Ties = "trec"
    unjudged: Unjudged = "nonrelevant"
    queries: QueryPolicy = "qrels"
    on_duplicate: OnDuplicate = "error"
    rel: float | None = None

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise OptionError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.rel is not None and not isinstance(self.rel, int | float):
            raise OptionError(f"rel must be a number, not {self.rel!r}")

    @classmethod
    def merged(cls, options: EvalOptions | None, given: OptionFields) -> EvalOptions:
        """``options`` (default: the defaults) with the keyword fields ``given`` on top."""
        known = {f.name for f in fields(cls)}
        unknown = set(given) - known
        if unknown:
            raise OptionError(f"unknown option(s): {', '.join(sorted(unknown))}")
        base = options if options is not None else cls()
        if not isinstance(base, EvalOptions):
            raise OptionError(f"options must be an EvalOptions, not {type(base).__name__}")
        return replace(base, **given) if given else base

    def bind(self, metric: Metric) -> Metric:
        """``metric`` with this evaluation's relevance threshold, when one is set."""
        if self.rel is None or not any(p.name == "rel" for p in metric.spec.params):
            return metric
        from rankscope.metrics.base import make_metric

        return make_metric(metric.family, k=metric.k, **{**dict(metric.params), "rel": self.rel})
