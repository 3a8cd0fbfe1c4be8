"""What an evaluation's dashboards show of its own numbers: metrics, coverage and holes, and
one query's graded snapshot, all computed by the library on :mod:`campaign_data`.

- metrics: :meth:`JudgmentPlan.evaluate` (seed 004's two stages; the null rules
  when the evaluation asks for them): the numbers ``rankscope evaluate``
  prints on the exports;
- coverage: :func:`rankscope.judgments.coverage` of the top ``depth`` (a
  position counts when its aggregated grade is not null; "complete" when it
  has every grade wanted) and the holes (ungraded positions), grouped by
  query and in the order the next batch should be graded (highest positions
  first, then the query set's order);
- drill-down: one query's snapshot, each hit with its aggregated grade, who
  graded it and how (explanations and "can't tell" reasons included).

A frozen evaluation's dashboards are computed on its grades as of the freeze
(:mod:`rankscope.services.freezing`); the metrics page shows today's beside
them, and says by how much today's grades would move this evaluation's and
its baseline's numbers (``drift``). Every metric says over how many of its k
results it was computed, per query (:func:`metric_coverage`): results
whose grades tie or aggregate to nothing, "can't tell" and ungraded results
are counted apart and listed.

Agreement and adjudication are in :mod:`rankscope.services.adjudication`,
history and the comparison with a baseline in
:mod:`rankscope.services.comparison`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope.errors import NotFoundError
from rankscope.services.campaign_data import (
    EvaluationData,
    data_stamp,
    grade_details,
    holes_frame,
    load_data,
    qrels_exports,
)
from rankscope.services.campaigns import evaluation_row, query_key
from rankscope.services.kept import KeptByStamp

if TYPE_CHECKING:
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store
    from rankscope.store.models_app import Evaluation

KEEP_FROZEN = 8
"""Frozen evaluations' data kept per store in this process (the least recently read dropped
first): numbers that never change are read once, not on every view."""
KEEP_FROZEN_BYTES = 256 * 2**20
"""The most bytes (polars' estimate of their grades, run and hits) the kept frozen
evaluations' data weigh per store: past it the least recently read are dropped, and one
heavier than it alone is read again on each view."""


def _data_size(data: EvaluationData) -> int:
    return sum(int(frame.estimated_size()) for frame in (
        data.judgments.frame, data.advisory.frame, data.run.frame, data.hits))


_FROZEN: KeptByStamp[EvaluationData] = KeptByStamp(KEEP_FROZEN, budget=KEEP_FROZEN_BYTES,
                                                    size=_data_size)

__all__ = [
    "KEEP_FROZEN",
    "KEEP_FROZEN_BYTES",
    "Loaded",
    "clean",
    "coverage_report",
    "drill_down",
    "evaluation_metrics",
    "holes_frame",
    "load",
    "metric_coverage",
    "metrics_report",
]


def clean(value: Any) -> float | None:
    """A float for JSON: None for a missing, NaN or infinite value."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def load(store: Store, actor: Actor, evaluation_id: int, at_least: str = "curator", *,
         today: bool = False, loaded: Loaded | None = None,
         texts: bool = True) -> tuple[Evaluation, EvaluationData]:
    """The evaluation (detached, readable) and its data, when the actor may see them.

    A ready evaluation whose grading is complete is frozen first
    (:func:`rankscope.services.freezing.auto_freeze`); a frozen one's data are
    its grades as of the freeze unless ``today``, read once per process
    (:data:`KEEP_FROZEN` kept, :data:`KEEP_FROZEN_BYTES` at most, under
    :func:`~rankscope.services.campaign_data.data_stamp`). With ``loaded`` (one
    request's :class:`Loaded`), data read before in the request are handed
    back instead of read again. ``texts=False``: a provisional evaluation's
    hits without their title, snippet and URL
    (:func:`~rankscope.services.campaign_data.load_data`'s), for a number
    alone; a frozen one's are read whole (and kept). A finished snapshot's
    hits are read once per process
    (:data:`~rankscope.services.snapshot_hits.KEEP_SNAPSHOTS`).
    """
    if loaded is not None:
        return loaded.get(store, actor, evaluation_id, at_least, today=today, texts=texts)
    return _read(store, actor, evaluation_id, at_least, today, None, texts)


def _read(store: Store, actor: Actor, evaluation_id: int, at_least: str, today: bool,
          shared: dict[tuple[Any, ...], Any] | None, texts: bool = True,
          freeze: bool = True) -> tuple[Evaluation, EvaluationData]:
    from rankscope.services.freezing import auto_freeze

    if freeze:
        auto_freeze(store, evaluation_id)
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, at_least)
        if ev.frozen_at is None or today:
            data = load_data(session, ev, today=today, shared=shared, texts=texts,
                             kept_in=store)
        else:  # a frozen evaluation's data never change: read once per process
            stamp = data_stamp(session, ev)
            kept = _FROZEN.get(store, stamp)
            data = kept if kept is not None else load_data(session, ev, shared=shared,
                                                              kept_in=store)
            if kept is None:
                _FROZEN.put(store, stamp, data)
        session.expunge(ev)  # keep its loaded columns readable after the session ends
        return ev, data


class Loaded:
    """The evaluations' data one request (one page, one API call) has read: each read once.

    A page showing several views of an evaluation (its metrics, today's beside
    the frozen ones, its coverage and holes, a baseline's drift) asks
    :func:`load` for the same data several times; given the same
    :class:`Loaded`, the second ask gets the first answer. A provisional
    evaluation's data are the same today or not (read once for both). Made
    per request and dropped with it: never a number from an earlier request.
    Evaluations of one query set read within it share its queries and grades
    (:func:`~rankscope.services.campaign_data.load_data`'s ``shared``).
    """

    def __init__(self) -> None:
        # (evaluation, rights, today's, with texts): data read without texts serve only asks
        # without them
        self._seen: dict[tuple[int, str, bool, bool], tuple[Evaluation, EvaluationData]] = {}
        self._shared: dict[tuple[Any, ...], Any] = {}  # reads evaluations share (load_data)
        self._freezing_checked: set[int] = set()

    def freezing_checked(self, evaluation_id: int) -> None:
        """Say that the request has just checked whether the evaluation's grading is complete
        (:func:`~rankscope.services.freezing.auto_freeze`): its data are read without
        checking again."""
        self._freezing_checked.add(evaluation_id)

    def get(self, store: Store, actor: Actor, evaluation_id: int, at_least: str = "curator",
            *, today: bool = False, texts: bool = True) -> tuple[Evaluation, EvaluationData]:
        """:func:`load`'s answer, read at most once per evaluation, rights, day and texts."""
        whole = (evaluation_id, at_least, today, True)
        if whole in self._seen:
            return self._seen[whole]
        key = (evaluation_id, at_least, today, texts)
        if key not in self._seen:
            ev, data = _read(store, actor, evaluation_id, at_least, today, self._shared, texts,
                             evaluation_id not in self._freezing_checked)
            # a frozen evaluation's frozen data are read whole (kept per process)
            read = texts or (ev.frozen_at is not None and not today)
            self._seen[(evaluation_id, at_least, today, read)] = ev, data
            if ev.frozen_at is None:  # provisional: today's grades either way
                self._seen[(evaluation_id, at_least, not today, read)] = ev, data
            return ev, data
        return self._seen[key]


def evaluation_metrics(data: EvaluationData, *, per_query: bool = True) -> dict[str, Any]:
    """``{"mean", "per_query", "n_queries"}`` of the data's run (nulls where no value).

    ``per_query=False``: the means alone (``per_query`` empty), for a headline.
    """
    labels = list(data.metrics)
    if not data.has_grades or data.run.frame.height == 0:
        return {"mean": dict.fromkeys(labels), "per_query": {}, "n_queries": 0}
    result = data.evaluate()
    return {"mean": {k: clean(v) for k, v in result.means.items()},
            "per_query": {q: {label: clean(result.values[i, j])
                              for j, label in enumerate(result.labels)}
                          for i, q in enumerate(result.query_ids)} if per_query else {},
            "n_queries": len(result.query_ids)}


def _drift(ev_id: int, name: str, role: str, frozen: dict[str, Any],
           today: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics whose mean today's grades move, with both values and the change."""
    out = []
    for metric, was in frozen.items():
        now = today.get(metric)
        if was == now or (was is not None and now is not None and abs(now - was) < 1e-12):
            continue
        out.append({"evaluation_id": ev_id, "name": name, "role": role, "metric": metric,
                    "frozen": was, "today": now,
                    "delta": None if was is None or now is None else now - was})
    return out


def drift(store: Store, actor: Actor, ev: Evaluation, frozen_mean: dict[str, Any],
          today_mean: dict[str, Any] | None, *,
          loaded: Loaded | None = None) -> list[dict[str, Any]]:
    """How far today's grades would move the evaluation's and its baseline's frozen means.

    Each entry: ``evaluation_id, name, role`` (``this`` or ``baseline``),
    ``metric, frozen, today, delta``; only metrics that moved.
    """
    out = [] if today_mean is None else _drift(ev.id, ev.name, "this", frozen_mean, today_mean)
    if ev.baseline_id is not None:
        try:
            base, base_data = load(store, actor, ev.baseline_id, loaded=loaded)
        except NotFoundError:  # a baseline deleted meanwhile
            return out
        if base.frozen_at is not None:
            _, base_today = load(store, actor, base.id, today=True, loaded=loaded)
            out += _drift(base.id, base.name, "baseline", evaluation_metrics(base_data)["mean"],
                          evaluation_metrics(base_today)["mean"])
    return out


def metrics_report(store: Store, actor: Actor, evaluation_id: int, *,
                   today: bool = False, loaded: Loaded | None = None) -> dict[str, Any]:
    """Every metric's mean and per-query value, with the query texts.

    ``{"mean": {metric: value}, "per_query": {qid: {metric: value}},
    "queries": [...], "n_queries", "unjudged", "command", "qrels", "frozen",
    "n_grades", "as_of", "today", "drift", "over"}``; null where a metric has
    no value (nothing graded, or the null rules). ``qrels`` says which qrels
    export reproduces which metric
    (:func:`rankscope.services.campaign_data.qrels_exports`). ``frozen`` is
    :func:`rankscope.services.freezing.freeze_state`; a frozen evaluation's
    numbers are those of its grades as of then (``as_of``, ``n_grades``
    counted grades) and ``today`` holds the same numbers on today's grades
    (``mean, per_query, n_grades``) with ``drift``, the metrics today's grades
    move, here and in a frozen baseline. ``today=True`` puts today's numbers
    first. ``over`` is :func:`metric_coverage`. ``loaded``: the request's
    :class:`Loaded` (each evaluation's data read once; a new one by default).
    """
    from rankscope.services.campaign_data import evaluate_command
    from rankscope.services.freezing import freeze_state

    loaded = loaded if loaded is not None else Loaded()
    ev, data = load(store, actor, evaluation_id, today=today, loaded=loaded)
    out = evaluation_metrics(data)
    out.update(queries=data.queries, unjudged=data.unjudged, scale=data.scale,
               strategy=ev.strategy, snapshot_id=data.snapshot_id,
               command=evaluate_command(ev), qrels=qrels_exports(data),
               frozen=freeze_state(ev), n_grades=data.n_grades,
               as_of=None if data.as_of is None else data.as_of.isoformat(),
               today=None, drift=[], over=metric_coverage(data))
    if ev.frozen_at is not None:
        other = load(store, actor, evaluation_id, today=not today, loaded=loaded)[1]
        numbers = evaluation_metrics(other)
        frozen_mean, today_mean = ((numbers["mean"], out["mean"]) if today
                                   else (out["mean"], numbers["mean"]))
        if not today:
            out["today"] = {"mean": numbers["mean"], "per_query": numbers["per_query"],
                            "n_grades": other.n_grades}
        else:
            out["today"] = {"mean": out["mean"], "per_query": out["per_query"],
                            "n_grades": data.n_grades}
        out["drift"] = drift(store, actor, ev, frozen_mean, today_mean, loaded=loaded)
    else:
        out["drift"] = drift(store, actor, ev, {}, None, loaded=loaded)
    return out


def metric_coverage(data: EvaluationData) -> dict[str, Any]:
    """Over how many of its k results each metric was computed, per query and in all.

    A metric at cut-off k (the evaluation's depth when it has none) rests,
    per query, on the top k results whose grade aggregates to a value on the
    metric's scale (after its transformer: a 0-vs-2 split averaged on the
    binary scale is a tie, no value). The others are counted by why:
    ``tied`` (grades given, but they aggregate to nothing), ``cant_tell``
    (only "can't tell") and ``ungraded``. Under trec_eval's rule
    (``unjudged`` nonrelevant) they still enter the metric, as non-relevant.

    Returns ``{label: {"k", "positions", "used", "tied", "cant_tell",
    "ungraded", "per_query": {qid: same counts}, "dropped": [{"query_id",
    "doc_id", "rank", "why"}]}}``: the counts of the coverage function of
    :mod:`rankscope.judgments.coverage` on the metric's own aggregated qrels.
    """
    from rankscope.judgments.coverage import coverage

    if not data.has_grades or data.run.frame.height == 0:
        return {}
    plan = data.plan()
    raw = data.judgments.frame
    seen = raw.group_by("query_id", "doc_id").agg(
        pl.col("grade").is_not_null().any().alias("valued"))
    why_of = {(q, d): ("tied" if v else "cant_tell") for q, d, v in seen.iter_rows()}
    out: dict[str, Any] = {}
    for j, (label, metric) in enumerate(zip(plan.labels, plan.metrics, strict=True)):
        qrels = next(g.qrels for g in plan.groups if j in g.columns)
        k = metric.k if metric.k is not None else data.depth
        cov = coverage(qrels, data.run, k)
        dropped = [{"query_id": q, "doc_id": d, "rank": r, "why": why_of.get((q, d), "ungraded")}
                   for q, d, r in cov.ungraded.iter_rows()]
        per_query: dict[str, dict[str, int]] = {
            q: {"positions": p, "used": g, "tied": 0, "cant_tell": 0, "ungraded": 0}
            for q, p, g, _ in cov.per_query.iter_rows()}
        for row in dropped:
            per_query[row["query_id"]][row["why"]] += 1
        totals = {key: sum(v[key] for v in per_query.values())
                  for key in ("positions", "used", "tied", "cant_tell", "ungraded")}
        out[label] = {"k": k, **totals, "per_query": per_query, "dropped": dropped}
    return out


def coverage_report(store: Store, actor: Actor, evaluation_id: int, *,
                    loaded: Loaded | None = None) -> dict[str, Any]:
    """Coverage of the top ``depth``: graded share per query and overall, and the holes.

    ``holes`` lists every hole (next batch first); ``by_query`` groups them
    by query (the query set's order), each with its coverage. A frozen
    evaluation's coverage is as frozen (what its numbers rest on); its holes
    are today's (what to grade next). ``loaded``: as :func:`metrics_report`'s.
    """
    from rankscope.judgments.coverage import coverage

    loaded = loaded if loaded is not None else Loaded()
    ev, data = load(store, actor, evaluation_id, loaded=loaded)
    if data.run.frame.height == 0:
        return {"k": ev.depth, "coverage": None, "complete": None, "per_query": {},
                "holes": [], "by_query": [], "positions": 0, "graded": 0}
    # an evaluation starts with nothing graded: every position a hole, not an error
    graded = coverage(data.judgments, data.run, ev.depth, strategy=data.strategy,
                      scale=data.scale, allow_no_overlap=True)
    complete = coverage(data.judgments, data.run, ev.depth, min_grades=ev.grades_wanted,
                        allow_no_overlap=True)
    full = dict(complete.per_query.select("query_id", "graded").iter_rows())
    per_query = {q: {"positions": p, "graded": g, "coverage": c, "complete": full.get(q, 0)}
                 for q, p, g, c in graded.per_query.iter_rows()}
    # the holes are what to grade next: today's, also when the numbers are frozen
    holes = holes_frame(ev, load(store, actor, evaluation_id, today=True, loaded=loaded)[1])
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in holes.sort(["query_id", "rank"]).iter_rows(named=True):
        grouped.setdefault(row["query_id"], []).append(row)
    by_query = [{"query_id": q["query_id"], "text": q["text"],
                 "coverage": per_query.get(q["query_id"], {}).get("coverage"),
                 "holes": grouped[q["query_id"]]}
                for q in data.queries if q["query_id"] in grouped]
    return {
        "k": ev.depth, "coverage": graded.overall, "complete": complete.overall,
        "positions": graded.positions, "graded": graded.graded, "per_query": per_query,
        "holes": holes.to_dicts(), "by_query": by_query,
    }


def drill_down(store: Store, actor: Actor, evaluation_id: int, query_id: str) -> dict[str, Any]:
    """One query's graded snapshot: each hit with its aggregated grade and every grade given.

    Each hit has ``grade`` (the aggregated grade, null when none), ``n_grades``
    (counted grades with a value), ``n_raters`` and ``grades``: every active
    grade of the result, counted or not, with its rater (and the rater's
    kind: ``person``, ``import`` or ``llm``), value, "can't tell" reason and
    explanation; and ``why``: the engine's explanation of the hit where the
    snapshot recorded one (the evaluation's ``explain``), else None, with
    ``why_missing`` saying what a missing one means.
    """
    from rankscope.judgments.aggregate import aggregate_frame
    from rankscope.services.side_views import explanations_of, why_missing

    ev, data = load(store, actor, evaluation_id)
    query = next((q for q in data.queries if q["query_id"] == query_id), None)
    if query is None:
        raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
    hits = data.hits.filter(pl.col("query_id") == query_id)
    agg = {}
    if data.judgments.frame.height:
        frame = aggregate_frame(data.judgments.filter(pl.col("query_id") == query_id),
                                data.strategy, scale=data.scale)
        agg = {r["doc_id"]: r for r in frame.iter_rows(named=True)}
    key = query_key(query["text"], query["params"])
    with store.read() as session:
        details = grade_details(session, ev, [key], data.as_of)
        explained = ({} if data.snapshot_id is None
                     else explanations_of(session, data.snapshot_id, [query_id]))
        missing = why_missing(session, data.snapshot_id, asked=ev.explain or bool(explained))
    rows = [{**h, "why": explained.get((query_id, h["doc_id"])),
             "grade": agg.get(h["doc_id"], {}).get("grade"),
             "n_grades": agg.get(h["doc_id"], {}).get("n_grades", 0),
             "n_raters": agg.get(h["doc_id"], {}).get("n_raters", 0),
             "grades": details.get((key, h["doc_id"]), [])}
            for h in hits.iter_rows(named=True)]
    metrics = evaluation_metrics(data)["per_query"].get(query_id, dict.fromkeys(data.metrics))
    return {"query": query, "hits": rows, "metrics": metrics, "scale": data.scale,
            "strategy": ev.strategy, "why_missing": missing}
