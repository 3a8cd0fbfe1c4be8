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
    grade_details,
    holes_frame,
    load_data,
    qrels_exports,
)
from rankscope.services.campaigns import evaluation_row, query_key

if TYPE_CHECKING:
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store
    from rankscope.store.models_app import Evaluation

__all__ = [
    "clean",
    "coverage_report",
    "drill_down",
    "evaluation_metrics",
    "holes_frame",
    "load",
    "metrics_report",
]


def clean(value: Any) -> float | None:
    """A float for JSON: None for a missing, NaN or infinite value."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def load(store: Store, actor: Actor, evaluation_id: int,
         at_least: str = "curator") -> tuple[Evaluation, EvaluationData]:
    """The evaluation (detached, readable) and its data, when the actor may see them."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, at_least)
        data = load_data(session, ev)
        session.expunge(ev)  # keep its loaded columns readable after the session ends
        return ev, data


def evaluation_metrics(data: EvaluationData) -> dict[str, Any]:
    """``{"mean", "per_query", "n_queries"}`` of the data's run (nulls where no value)."""
    labels = list(data.metrics)
    if not data.has_grades or data.run.frame.height == 0:
        return {"mean": dict.fromkeys(labels), "per_query": {}, "n_queries": 0}
    result = data.evaluate()
    return {"mean": {k: clean(v) for k, v in result.means.items()},
            "per_query": {q: {label: clean(result.values[i, j])
                              for j, label in enumerate(result.labels)}
                          for i, q in enumerate(result.query_ids)},
            "n_queries": len(result.query_ids)}


def metrics_report(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Every metric's mean and per-query value, with the query texts.

    ``{"mean": {metric: value}, "per_query": {qid: {metric: value}},
    "queries": [...], "n_queries", "unjudged", "command", "qrels"}``; null
    where a metric has no value (nothing graded, or the null rules).
    ``qrels`` says which qrels export reproduces which metric
    (:func:`rankscope.services.campaign_data.qrels_exports`).
    """
    from rankscope.services.campaign_data import evaluate_command

    ev, data = load(store, actor, evaluation_id)
    out = evaluation_metrics(data)
    out.update(queries=data.queries, unjudged=data.unjudged, scale=data.scale,
               strategy=ev.strategy, snapshot_id=data.snapshot_id,
               command=evaluate_command(ev), qrels=qrels_exports(data))
    return out


def coverage_report(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Coverage of the top ``depth``: graded share per query and overall, and the holes.

    ``holes`` lists every hole (next batch first); ``by_query`` groups them
    by query (the query set's order), each with its coverage.
    """
    from rankscope.judgments.coverage import coverage

    ev, data = load(store, actor, evaluation_id)
    if data.run.frame.height == 0:
        return {"k": ev.depth, "coverage": None, "complete": None, "per_query": {},
                "holes": [], "by_query": [], "positions": 0, "graded": 0}
    graded = coverage(data.judgments, data.run, ev.depth, strategy=data.strategy,
                      scale=data.scale)
    complete = coverage(data.judgments, data.run, ev.depth, min_grades=ev.grades_wanted)
    full = dict(complete.per_query.select("query_id", "graded").iter_rows())
    per_query = {q: {"positions": p, "graded": g, "coverage": c, "complete": full.get(q, 0)}
                 for q, p, g, c in graded.per_query.iter_rows()}
    holes = holes_frame(ev, data)
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
    explanation.
    """
    from rankscope.judgments.aggregate import aggregate_frame

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
        details = grade_details(session, ev, [key])
    rows = [{**h, "grade": agg.get(h["doc_id"], {}).get("grade"),
             "n_grades": agg.get(h["doc_id"], {}).get("n_grades", 0),
             "n_raters": agg.get(h["doc_id"], {}).get("n_raters", 0),
             "grades": details.get((key, h["doc_id"]), [])}
            for h in hits.iter_rows(named=True)]
    metrics = evaluation_metrics(data)["per_query"].get(query_id, dict.fromkeys(data.metrics))
    return {"query": query, "hits": rows, "metrics": metrics, "scale": data.scale,
            "strategy": ev.strategy}
