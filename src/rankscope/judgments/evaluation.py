"""Evaluate a run against raters' judgments, the way the judging platform does.

The two stages of seed 004: first each result's grades are mapped to the
scale each metric needs (transformers) and aggregated (majority vote, mean,
...), then the metrics are computed on the aggregated qrels, typically with
``unjudged="null"``.

Which scale a metric needs: binary-relevance metrics (P, AP, RR, ...) the
``binary`` scale, graded ones (CG, DCG, nDCG, ERR) the ``graded`` scale, when
a transformer from the judgments' scale exists (the platform's defaults cover
binary, graded and detail; others need rules); otherwise the judgments' own
grades are used. The platform's spellings ``CG(d)@k``, ``DCG(d)@k``,
``nDCG(d)@k`` ask for the detail scale, and ``ERR-0.18@k`` for ERR with the
rank^0.18 position factor. ``metric_scales`` overrides any of this per metric.
A metric with a ``max_grade`` parameter left unset gets the top grade of its
scale (so ERR's :math:`g_{max}` is the scale's, not the data's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Unpack

import numpy as np

from rankscope.data.overlap import check_query_sets
from rankscope.data.tables import Qrels, as_run, input_name
from rankscope.engine.assemble import QueryAccount, assemble_result
from rankscope.engine.evaluate import MetricPlan, compute_ranked, rank_plan, resolve_metrics
from rankscope.engine.options import EvalOptions, OptionFields
from rankscope.errors import MetricError, OptionError
from rankscope.judgments.aggregate import aggregate
from rankscope.judgments.scales import BINARY, DETAIL, GRADED, Scale, get_scale
from rankscope.judgments.table import Judgments, as_judgments
from rankscope.judgments.transform import DEFAULT_RULES, transform
from rankscope.metrics.base import Metric, make_metric
from rankscope.metrics.conventions import Reading, Resolved, resolve_name
from rankscope.result import EvaluationResult

__all__ = ["JudgmentPlan", "SeedPlan", "evaluate_judgments", "plan_evaluation",
           "plan_seed_metrics", "resolve_seed_metrics", "resolve_seed_plan"]

Rules = Mapping[float, float] | str
TransformsArg = Mapping[tuple[str, str], Rules] | Mapping[str, Rules] | None

_DETAIL = re.compile(r"^(?P<fam>CG|DCG|nDCG)\(d\)(?P<cut>@\s*\d+)?$", re.IGNORECASE)
_ERR_018 = re.compile(r"^ERR-0\.18(?P<cut>@\s*\d+)?$", re.IGNORECASE)


def resolve_seed_metrics(
    metrics: str | Metric | Iterable[str | Metric], conventions: str | None = None
) -> list[tuple[str, Metric, Scale | None]]:
    """Parse metric names, also the judging platform's own spellings.

    Returns ``(label, metric, scale)`` triples: the label as typed, the
    metric, and the scale the spelling asks for (``DETAIL`` for ``nDCG(d)@10``;
    None when the spelling says nothing). ``conventions`` reads the other
    names as that profile does (see :func:`resolve_seed_plan`).
    """
    return [(found.label, found.metric, scale)
            for found, scale in resolve_seed_plan(metrics, conventions)]


@dataclass(frozen=True)
class SeedPlan:
    """Metric names read once (:func:`plan_seed_metrics`), the platform's spellings included.

    Give it to :func:`plan_evaluation` in place of the names: a command that
    checks the names before reading the judgments does not read them twice.
    """

    entries: tuple[tuple[Resolved, Scale | None], ...]
    conventions: str | None

    def for_qrels(self, options: EvalOptions) -> MetricPlan:
        """The same names for plain qrels (one grade per result), under ``options``.

        A spelling that names a scale of raters' grades (``nDCG(d)@10``) has
        no meaning there and is refused.
        """
        if options.conventions != self.conventions:
            raise OptionError(f"these metric names were read with conventions "
                              f"{self.conventions!r}, not {options.conventions!r}")
        scaled = [f"{found.label} (the {scale} scale)" for found, scale in self.entries
                  if scale is not None]
        if scaled:
            raise OptionError(f"{', '.join(scaled)} reads raters' grades on a scale; these "
                              "qrels have one grade per result (give raters' judgments)")
        return MetricPlan(tuple(replace(found, metric=options.bind(found.metric))
                                for found, _ in self.entries), options.conventions, options.rel)


def plan_seed_metrics(
    metrics: str | Metric | Iterable[str | Metric], conventions: str | None = None
) -> SeedPlan:
    """Read metric names once into a :class:`SeedPlan` (see :func:`resolve_seed_plan`)."""
    return SeedPlan(tuple(resolve_seed_plan(metrics, conventions)), conventions)


def resolve_seed_plan(
    metrics: str | Metric | Iterable[str | Metric] | SeedPlan, conventions: str | None = None
) -> list[tuple[Resolved, Scale | None]]:
    """As :func:`resolve_seed_metrics`, keeping how each metric reads the run.

    The platform's spellings (``nDCG(d)@10``, ``ERR-0.18@10``) keep their
    meaning under any conventions profile; other names are read as
    ``conventions`` reads them. A :class:`SeedPlan` is not read again (it must
    have been read under ``conventions``).
    """
    if isinstance(metrics, SeedPlan):
        if metrics.conventions != conventions:
            raise OptionError(f"these metric names were read with conventions "
                              f"{metrics.conventions!r}, not {conventions!r}: plan them again")
        return list(metrics.entries)
    items: list[str | Metric] = (
        [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    )
    out: list[tuple[Resolved, Scale | None]] = []
    seen: set[str] = set()
    for item in items:
        found: list[tuple[Resolved, Scale | None]]
        text = item.strip() if isinstance(item, str) else ""
        detail = _DETAIL.match(text)
        err018 = _ERR_018.match(text)
        if detail:
            family = {"cg": "CG", "dcg": "DCG", "ndcg": "nDCG"}[detail.group("fam").lower()]
            metric = resolve_metrics(family + (detail.group("cut") or ""))[0][1]
            found = [(Resolved(text, metric), DETAIL)]
        elif err018:
            base = resolve_metrics("ERR" + (err018.group("cut") or ""))[0][1]
            found = [(Resolved(text, _rebind(base, rank_exponent=0.18)), None)]
        else:
            found = [(resolved, None) for resolved in resolve_name(item, conventions)]
        for resolved, scale in found:
            if resolved.label not in seen:
                seen.add(resolved.label)
                out.append((resolved, scale))
    if not out:
        raise MetricError("no metric asked for")
    return out


def _rebind(metric: Metric, **params: Any) -> Metric:
    return make_metric(metric.family, k=metric.k, **{**dict(metric.params), **params})


def _has_rules(source: Scale, target: Scale, transforms: dict[tuple[str, str], Rules]) -> bool:
    key = (source.name, target.name)
    return key in DEFAULT_RULES or key in transforms


def _needed_scale(
    metric: Metric, scale: Scale | None, transforms: dict[tuple[str, str], Rules]
) -> Scale | None:
    """The scale a metric is computed on, by default (see the module docs)."""
    if scale is None:
        return None
    wanted = GRADED if metric.spec.graded else BINARY
    if scale == wanted or scale.name == wanted.name:
        return scale
    return wanted if _has_rules(scale, wanted, transforms) else scale


def _transform_key(key: tuple[str, str] | str) -> tuple[str, str]:
    if isinstance(key, tuple):
        return (key[0].lower(), key[1].lower())
    parts = re.split(r"\s*(?:->|>|:)\s*", key.strip().lower())
    if len(parts) != 2 or not all(parts):
        raise OptionError(f"a transformer is named FROM->TO (e.g. 'detail->binary'), not {key!r}")
    return (parts[0], parts[1])


@dataclass
class _Group:
    scale: Scale | None
    qrels: Qrels
    columns: list[int]


@dataclass
class JudgmentPlan:
    """Aggregated qrels per needed scale, ready to evaluate any number of runs.

    Build it with :func:`plan_evaluation`; call :meth:`evaluate` per run.
    """

    labels: list[str]
    metrics: list[Metric]
    scales: list[Scale | None]
    groups: list[_Group]
    source: str = "the judgments"
    readings: list[Reading] = field(default_factory=list)
    conventions: str | None = None

    def qrels(self, scale: Scale | str | None = None) -> Qrels:
        """The aggregated qrels of one scale (the only one when there is one)."""
        if scale is None:
            if len(self.groups) != 1:
                names = ", ".join(str(g.scale) for g in self.groups)
                raise OptionError(f"several scales are in use ({names}); name one")
            return self.groups[0].qrels
        sc = get_scale(scale)
        for group in self.groups:
            if group.scale == sc:
                return group.qrels
        raise OptionError(f"no metric is computed on the {sc} scale")

    def evaluate(
        self,
        run: Any,
        *,
        per_query: bool = False,
        run_name: str | None = None,
        allow_no_overlap: bool = False,
        warn_overlap: bool = True,
        options: EvalOptions | None = None,
        **option_fields: Unpack[OptionFields],
    ) -> EvaluationResult:
        """Evaluate one run (options as :func:`rankscope.evaluate`).

        ``warn_overlap=False`` leaves out the partial-overlap warning, for callers
        that report coverage themselves (the judging app, where a run is graded
        a query at a time).
        """
        if self.conventions is not None:
            option_fields = {"conventions": self.conventions, **option_fields}
        opts = EvalOptions.merged(options, option_fields)
        if opts.conventions != self.conventions:
            raise OptionError(
                f"this plan reads its metric names with conventions {self.conventions!r}, "
                f"not {opts.conventions!r}: plan again with conventions={opts.conventions!r}"
            )
        metrics = [opts.bind(m) for m in self.metrics]
        readings = self.readings or [Reading()] * len(metrics)
        run_t = as_run(run, name=run_name, on_duplicate=opts.on_duplicate)
        run_queries = set(run_t.frame.get_column("query_id").unique().to_list())
        judged_queries = {q for g in self.groups
                          for q in g.qrels.frame.get_column("query_id").unique().to_list()}
        check_query_sets(input_name(run_t), run_queries, self.source, judged_queries,
                         allow=allow_no_overlap, warn=warn_overlap)
        parts = []
        for group in self.groups:
            plan = [Resolved(self.labels[j], metrics[j], readings[j]) for j in group.columns]
            ranked = rank_plan(group.qrels, run_t, plan, opts)
            parts.append((group, ranked.lists, compute_ranked(ranked)))
        evaluated = {q for _, lists, _ in parts for q in lists.query_ids}
        if opts.unjudged == "null":
            # A query whose results are all ungraded (or tied) has no value under the
            # null rules: list it as null rather than drop it.
            extra = {q for g in self.groups
                     for q in g.qrels.frame.get_column("query_id").unique().to_list()}
            evaluated |= extra & run_queries if opts.queries == "intersection" else extra
        query_ids = sorted(evaluated)
        index = {q: i for i, q in enumerate(query_ids)}
        values = np.full((len(query_ids), len(metrics)), np.nan)
        qrels_queries: set[str] = set()
        for group, lists, part in parts:
            rows = np.array([index[q] for q in lists.query_ids], dtype=np.int64)
            if rows.size:
                values[np.ix_(rows, np.array(group.columns))] = part
            judged = group.qrels.frame
            if opts.unjudged != "null":
                judged = judged.drop_nulls("grade")
            qrels_queries.update(judged.get_column("query_id").unique().to_list())
        in_run = np.fromiter((q in run_queries for q in query_ids), dtype=bool,
                             count=len(query_ids))
        return assemble_result(
            self.labels, metrics, query_ids, values, options=opts, run_name=run_t.name,
            account=QueryAccount.of(qrels_queries, run_queries), in_run=in_run,
            per_query=per_query,
        )


def plan_evaluation(
    judgments: Any,
    metrics: str | Metric | Iterable[str | Metric] | SeedPlan,
    *,
    scale: Scale | str | None = None,
    strategy: str | Mapping[str, str] | None = None,
    transforms: TransformsArg = None,
    metric_scales: Mapping[str, Scale | str] | None = None,
    conventions: str | None = None,
) -> JudgmentPlan:
    """Transform and aggregate judgments once for every scale the metrics need.

    Parameters are those of :func:`evaluate_judgments`; ``conventions`` reads
    the metric names as that profile does (the plan then evaluates under it).
    """
    seed_plan = resolve_seed_plan(metrics, conventions)
    triples = [(found.label, found.metric, scale) for found, scale in seed_plan]
    j: Judgments = as_judgments(judgments)
    sc = get_scale(scale) if scale is not None else j.scale
    if sc is not None and j.scale != sc:
        j = j.with_scale(sc)
    rules = {_transform_key(k): v for k, v in (transforms or {}).items()}
    overrides = {label: get_scale(s) for label, s in (metric_scales or {}).items()}
    unknown = set(overrides) - {label for label, _, _ in triples}
    if unknown:
        names = ", ".join(sorted(unknown))
        raise OptionError(f"metric_scales names metrics not asked for: {names}")
    labels: list[str] = []
    bound: list[Metric] = []
    needed: list[Scale | None] = []
    for label, metric, spelled in triples:
        target = overrides.get(label) or spelled or _needed_scale(metric, sc, rules)
        if target is not None and sc is None:
            raise OptionError(f"{label} needs the {target} scale: declare the judgments' scale")
        has_max = any(p == "max_grade" for p, _ in metric.params)
        if target is not None and has_max and metric.get("max_grade") is None:
            metric = _rebind(metric, max_grade=target.max)
        labels.append(label)
        bound.append(metric)
        needed.append(target)
    groups: list[_Group] = []
    for target in dict.fromkeys(needed):
        on_target = j
        if target is not None and sc is not None and target != sc:
            on_target = transform(j, target, rules.get((sc.name, target.name)))
        qrels = aggregate(on_target, strategy, scale=target)
        columns = [i for i, s in enumerate(needed) if s == target]
        groups.append(_Group(target, qrels, columns))
    source = j.source if not j.source.startswith("<") else "the judgments"
    return JudgmentPlan(labels=labels, metrics=bound, scales=needed, groups=groups,
                        source=source, readings=[found.reading for found, _ in seed_plan],
                        conventions=conventions)


def evaluate_judgments(
    judgments: Any,
    run: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    scale: Scale | str | None = None,
    strategy: str | Mapping[str, str] | None = None,
    transforms: TransformsArg = None,
    metric_scales: Mapping[str, Scale | str] | None = None,
    per_query: bool = False,
    run_name: str | None = None,
    allow_no_overlap: bool = False,
    options: EvalOptions | None = None,
    **option_fields: Unpack[OptionFields],
) -> EvaluationResult:
    """Evaluate a run against raters' judgments: transform, aggregate, compute.

    Parameters
    ----------
    judgments : Judgments, Qrels, path or DataFrame
        Raters' grades (a qrels file is one rater's).
    run : Run, path, DataFrame or dict
        The ranking.
    metrics : str, Metric or a sequence of them
        Any spelling :func:`rankscope.parse_metrics` accepts, plus the
        platform's ``CG(d)@k``, ``DCG(d)@k``, ``nDCG(d)@k`` and ``ERR-0.18@k``.
    scale : Scale or str, optional
        The judgments' scale (``binary``, ``graded``, ``trec``, ``detail``,
        ``"MIN-MAX"``); default: the judgments' declared scale.
    strategy : str or mapping, optional
        Aggregation (see :mod:`rankscope.judgments.aggregate`), one for all
        scales or ``{scale name: strategy}``; default per scale: majority vote
        on binary, mean on the others.
    transforms : mapping, optional
        Transformer rules by ``(from, to)`` or ``"from->to"``:
        ``{"detail->binary": "1..3=0,4..10=1"}``; they override the defaults
        grade by grade.
    metric_scales : mapping, optional
        ``{label: scale}`` to compute a metric on another scale than its default.
    unjudged : {"nonrelevant", "condensed", "null"}, default "nonrelevant"
        ``"null"`` applies the platform's null rules (see
        :mod:`rankscope.engine.null_mode`).
    per_query, run_name, allow_no_overlap, options, **option_fields
        As for :func:`rankscope.evaluate` (one
        :class:`~rankscope.engine.options.EvalOptions`, or its fields).

    Returns
    -------
    EvaluationResult
        Same shape as :func:`rankscope.evaluate`'s; NaN (null) where a metric
        has no value, means over the queries with one.

    Examples
    --------
    >>> import polars as pl
    >>> from rankscope.judgments import Judgments, evaluate_judgments
    >>> j = Judgments(pl.DataFrame({
    ...     "query_id": ["q"] * 5, "doc_id": ["a", "a", "b", "b", "c"],
    ...     "rater": ["x", "y", "x", "y", "x"], "grade": [1.0, 1.0, 1.0, 0.0, 0.0]}),
    ...     scale="binary")
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    >>> r = evaluate_judgments(j, run, ["P@4", "RR@4"], unjudged="null")
    >>> r["P@4"]  # a: 1; b: tie -> ungraded; c: 0; d: ungraded -> 1 of 2 graded
    0.5
    """
    conventions = option_fields.get("conventions", options.conventions if options else None)
    plan = plan_evaluation(
        judgments, metrics, scale=scale, strategy=strategy, transforms=transforms,
        metric_scales=metric_scales, conventions=conventions,
    )
    return plan.evaluate(run, per_query=per_query, run_name=run_name,
                         allow_no_overlap=allow_no_overlap, options=options, **option_fields)
