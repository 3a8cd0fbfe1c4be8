"""What the dashboards show: metrics, coverage and holes, agreement, disagreements, history,
and the comparison with a baseline, all computed by the library on :mod:`evaluation_data`.

- metrics: :meth:`JudgmentPlan.evaluate` (seed 004's two stages; the null rules
  when the evaluation asks for them): the numbers ``rankscope evaluate``
  prints on the exports;
- coverage: :func:`rankscope.judgments.coverage` of the top ``depth`` (a
  position counts when its aggregated grade is not null; "complete" when it
  has every grade wanted) and the holes (ungraded positions);
- agreement: :func:`rankscope.judgments.agreement` (Cohen pairwise and
  weighted, Fleiss, Krippendorff), and each grader against the consensus:
  Cohen's kappa between the grader's grades and the aggregated grade of the
  same results, rounded to the nearest grade of the scale (halves up);
- disagreements: results whose graders gave different grades, widest spread
  first, for a curator to adjudicate (:func:`adjudicate`: the curator's grade
  supersedes the graders' grades, which stay in the table);
- history: the evaluations of the same query set and endpoint, oldest first,
  each with its means (on today's grades) and its annotation;
- comparison: this evaluation's run and its baseline's evaluated with this
  evaluation's grades and rules, paired by query: the delta of means, the
  paired t-test (:func:`rankscope.compare.significance.paired_test`) with
  Holm's correction over the metrics, and RBO / Jaccard between the two
  snapshots (:func:`rankscope.services.snapshot_diff.diff_rankings`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
from sqlalchemy import select

from rankscope.errors import ConflictError, NotFoundError, OptionError
from rankscope.services.evaluation_data import EvaluationData, load_data
from rankscope.services.evaluations import evaluation_row, query_key
from rankscope.store.models import utcnow
from rankscope.store.models_app import Adjudication, Evaluation, Grade, Item, Rater

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "adjudicate",
    "agreement_report",
    "compare_with_baseline",
    "coverage_report",
    "disagreements",
    "drill_down",
    "history",
    "metrics_report",
]


def _clean(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _data(store: Store, actor: Actor, evaluation_id: int,
          at_least: str = "curator") -> tuple[Evaluation, EvaluationData]:
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, at_least)
        data = load_data(session, ev)
        session.expunge(ev)  # keep its loaded columns readable after the session ends
        return ev, data


def _metrics(data: EvaluationData) -> dict[str, Any]:
    labels = list(data.metrics)
    if not data.has_grades or data.run.frame.height == 0:
        return {"mean": dict.fromkeys(labels), "per_query": {}, "n_queries": 0}
    result = data.evaluate()
    return {"mean": {k: _clean(v) for k, v in result.means.items()},
            "per_query": {q: {label: _clean(result.values[i, j])
                              for j, label in enumerate(result.labels)}
                          for i, q in enumerate(result.query_ids)},
            "n_queries": len(result.query_ids)}


def metrics_report(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Every metric's mean and per-query value, with the query texts.

    ``{"mean": {metric: value}, "per_query": {qid: {metric: value}},
    "queries": [...], "n_queries", "unjudged", "command"}``; null where a
    metric has no value (nothing graded, or the null rules).
    """
    from rankscope.services.evaluation_data import evaluate_command

    ev, data = _data(store, actor, evaluation_id)
    out = _metrics(data)
    out.update(queries=data.queries, unjudged=data.unjudged, scale=data.scale,
               strategy=ev.strategy, snapshot_id=data.snapshot_id,
               command=evaluate_command(ev))
    return out


def coverage_report(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Coverage of the top ``depth``: graded share per query and overall, and the holes."""
    from rankscope.judgments.coverage import coverage

    ev, data = _data(store, actor, evaluation_id)
    if data.run.frame.height == 0:
        return {"k": ev.depth, "coverage": None, "complete": None, "per_query": {},
                "holes": []}
    graded = coverage(data.judgments, data.run, ev.depth, strategy=data.strategy,
                      scale=data.scale)
    complete = coverage(data.judgments, data.run, ev.depth, min_grades=ev.grades_wanted)
    full = dict(complete.per_query.select("query_id", "graded").iter_rows())
    holes = graded.ungraded.join(data.hits.select("query_id", "doc_id", "title"),
                                 on=["query_id", "doc_id"], how="left")
    return {
        "k": ev.depth, "coverage": graded.overall, "complete": complete.overall,
        "positions": graded.positions, "graded": graded.graded,
        "per_query": {q: {"positions": p, "graded": g, "coverage": c,
                          "complete": full.get(q, 0)}
                      for q, p, g, c in graded.per_query.iter_rows()},
        "holes": holes.to_dicts(),
    }


def drill_down(store: Store, actor: Actor, evaluation_id: int, query_id: str) -> dict[str, Any]:
    """One query's graded snapshot: each hit with its aggregated grade and grade count."""
    from rankscope.judgments.aggregate import aggregate_frame

    ev, data = _data(store, actor, evaluation_id)
    query = next((q for q in data.queries if q["query_id"] == query_id), None)
    if query is None:
        raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
    hits = data.hits.filter(pl.col("query_id") == query_id)
    agg = {}
    if data.judgments.frame.height:
        frame = aggregate_frame(data.judgments.filter(pl.col("query_id") == query_id),
                                data.strategy, scale=data.scale)
        agg = {r["doc_id"]: r for r in frame.iter_rows(named=True)}
    rows = [{**h, "grade": agg.get(h["doc_id"], {}).get("grade"),
             "n_grades": agg.get(h["doc_id"], {}).get("n_grades", 0),
             "n_raters": agg.get(h["doc_id"], {}).get("n_raters", 0)}
            for h in hits.iter_rows(named=True)]
    metrics = _metrics(data)["per_query"].get(query_id, dict.fromkeys(data.metrics))
    return {"query": query, "hits": rows, "metrics": metrics}


def _consensus_rows(data: EvaluationData) -> pl.DataFrame:
    from rankscope.judgments.aggregate import aggregate_frame
    from rankscope.judgments.scales import get_scale

    scale = get_scale(data.scale)
    frame = aggregate_frame(data.judgments, data.strategy, scale=data.scale).drop_nulls("grade")
    if scale is not None and scale.integer:  # a mean of 2 and 3 is 2.5: nearest grade, halves up
        frame = frame.with_columns((pl.col("grade") + 0.5).floor().clip(scale.min, scale.max))
    return frame.select("query_id", "doc_id", "grade")


def agreement_report(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Agreement between the graders, per query, and each grader against the consensus."""
    from rankscope.judgments.agreement import agreement, cohen_kappa
    from rankscope.judgments.table import Judgments

    _, data = _data(store, actor, evaluation_id)
    j = data.judgments
    if not data.has_grades:
        return {"n_items": 0, "n_raters": 0, "vs_consensus": []}
    out = agreement(j, by_query=True).to_dict()
    consensus = _consensus_rows(data)
    graded = j.frame.drop_nulls("grade")
    vs = []
    for rater in sorted(set(graded.get_column("rater").to_list())):
        own = graded.filter(pl.col("rater") == rater).select("query_id", "doc_id", "grade")
        both = own.join(consensus, on=["query_id", "doc_id"], suffix="_c")
        if both.height == 0:
            vs.append({"rater": rater, "n_items": 0, "kappa": None, "agree": None})
            continue
        pairs = pl.concat([
            both.select("query_id", "doc_id", pl.lit("grader").alias("rater"), "grade"),
            both.select("query_id", "doc_id", pl.lit("consensus").alias("rater"),
                        pl.col("grade_c").alias("grade"))])
        table = cohen_kappa(Judgments(pairs, scale=data.scale))
        kappa = table.get_column("kappa")[0] if table.height else None
        same = both.get_column("grade") == both.get_column("grade_c")
        agree = int(same.sum()) / both.height
        vs.append({"rater": rater, "n_items": both.height, "kappa": _clean(kappa),
                   "agree": agree})
    out["vs_consensus"] = vs
    return out


def disagreements(store: Store, actor: Actor, evaluation_id: int,
                  limit: int = 200) -> list[dict[str, Any]]:
    """Results whose graders disagree, widest spread first, with every grade (for curators)."""
    _, data = _data(store, actor, evaluation_id)
    graded = data.judgments.frame.drop_nulls("grade")
    if graded.height == 0:
        return []
    spread = (graded.group_by("query_id", "doc_id")
              .agg(pl.col("grade").max().alias("hi"), pl.col("grade").min().alias("lo"),
                   pl.col("grade").n_unique().alias("distinct"),
                   pl.struct("rater", "grade").alias("grades"))
              .filter(pl.col("distinct") > 1)
              .with_columns((pl.col("hi") - pl.col("lo")).alias("spread"))
              .sort(["spread", "query_id", "doc_id"], descending=[True, False, False])
              .head(limit))
    texts = {q["query_id"]: q["text"] for q in data.queries}
    return [{"query_id": r["query_id"], "query_text": texts.get(r["query_id"]),
             "doc_id": r["doc_id"], "spread": r["spread"], "grades": r["grades"]}
            for r in spread.iter_rows(named=True)]


def adjudicate(store: Store, actor: Actor, evaluation_id: int, query_id: str, doc_id: str,
               value: float, note: str | None = None) -> dict[str, Any]:
    """Settle a result's grade: the curator's grade supersedes the graders' (kept as history)."""
    from rankscope.services.accounts import rater_for
    from rankscope.services.grading import scale_of

    def work(session: Session) -> dict[str, Any]:
        from rankscope.store.models import Query

        ev = evaluation_row(session, actor, evaluation_id, "curator")
        scale = scale_of(ev)
        if isinstance(value, bool) or not scale.contains(float(value)):
            raise OptionError(f"grade {value!r} is outside the {scale.describe()} scale")
        query = session.scalar(select(Query).where(Query.query_set_id == ev.query_set_id,
                                                   Query.query_id == query_id))
        if query is None:
            raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
        item = session.scalar(select(Item).where(
            Item.project_id == ev.project_id, Item.query_key == query_key(query.text, query.params),
            Item.doc_id == doc_id).with_for_update())
        if item is None:
            raise NotFoundError(f"no graded result {doc_id!r} for query {query_id!r}")
        if session.scalar(select(Adjudication.id).where(Adjudication.item_id == item.id,
                                                        Adjudication.scale == ev.scale)):
            raise ConflictError("this result was adjudicated already")
        rater = rater_for(session, actor)
        current = list(session.scalars(select(Grade).where(
            Grade.item_id == item.id, Grade.active, Grade.scale == ev.scale)))
        for grade in current:
            grade.active = False
        session.flush()
        settled = Grade(item_id=item.id, rater_id=rater.id, scale=ev.scale, value=float(value),
                        explanation=note, source="adjudication", evaluation_id=ev.id,
                        active=True, created_at=utcnow())
        session.add(settled)
        session.flush()
        for grade in current:
            grade.superseded_by = settled.id
        session.add(Adjudication(item_id=item.id, evaluation_id=ev.id, curator_id=actor.user_id,
                                 grade_id=settled.id, scale=ev.scale, value=float(value),
                                 note=note, created_at=utcnow()))
        return {"grade_id": settled.id, "superseded": [g.id for g in current]}

    return store.write(work)


def history(store: Store, actor: Actor, evaluation_id: int) -> list[dict[str, Any]]:
    """The evaluations of the same query set and endpoint, oldest first, with their means."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        rows = session.scalars(select(Evaluation).where(
            Evaluation.project_id == ev.project_id, Evaluation.query_set_id == ev.query_set_id,
            Evaluation.endpoint_id == ev.endpoint_id).order_by(Evaluation.created_at,
                                                                Evaluation.id)).all()
        out = []
        for other in rows:
            data = load_data(session, other)
            out.append({"evaluation_id": other.id, "name": other.name,
                        "created_at": other.created_at.isoformat(),
                        "annotation": other.annotation, "status": other.status,
                        "mean": _metrics(data)["mean"]})
        return out


def _ranking(data: EvaluationData, label: str) -> Any:
    from rankscope.services.snapshot_diff import Ranking

    frame = data.hits.select("query_id", "doc_id", "rank", "title", "url", "snippet")
    scores = data.run.frame.select("query_id", "doc_id", "score")
    frame = frame.join(scores, on=["query_id", "doc_id"], how="left")
    ids = list(dict.fromkeys(frame.get_column("query_id").to_list()))
    return Ranking(label=label, frame=frame, query_ids=ids,
                   texts={q["query_id"]: q["text"] for q in data.queries})


def compare_with_baseline(store: Store, actor: Actor, evaluation_id: int,
                          baseline_id: int | None = None) -> dict[str, Any]:
    """This evaluation against its baseline (or ``baseline_id``), metric by metric.

    Both runs are evaluated with this evaluation's grades, scale and rules.
    Per metric: the means over the queries both have a value for, the delta,
    the paired t-test's p-value and Holm's adjustment over the metrics; and
    RBO (p = 0.9) and Jaccard@depth between the two snapshots.
    """
    from rankscope.compare.significance import adjust, paired_test
    from rankscope.services.snapshot_diff import diff_rankings

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        other_id = baseline_id if baseline_id is not None else ev.baseline_id
        if other_id is None:
            raise OptionError("this evaluation has no baseline: choose one")
        base = evaluation_row(session, actor, other_id, "curator")
        if base.project_id != ev.project_id:
            raise NotFoundError(f"no evaluation #{other_id} in this project")
        data, base_data = load_data(session, ev), load_data(session, base)
        ev_label, base_label = f"#{ev.id} {ev.name}", f"#{base.id} {base.name}"
        ev_id, base_id, base_name, depth = ev.id, base.id, base.name, ev.depth
    if data.run.frame.height == 0 or base_data.run.frame.height == 0:
        raise ConflictError("both evaluations need a snapshot: run them first")
    rows: list[dict[str, Any]] = []
    if data.has_grades:
        mine, theirs = data.evaluate(), data.evaluate(base_data.run)
        for j, label in enumerate(mine.labels):
            a = dict(zip(mine.query_ids, mine.values[:, j], strict=True))
            b = dict(zip(theirs.query_ids, theirs.values[:, j], strict=True))
            paired = [q for q in a if q in b and not (np.isnan(a[q]) or np.isnan(b[q]))]
            x = np.array([a[q] for q in paired], dtype=np.float64)
            y = np.array([b[q] for q in paired], dtype=np.float64)
            outcome = paired_test(x, y, "t")
            rows.append({"metric": label, "n_queries": len(paired),
                         "mean": _clean(x.mean()) if x.size else None,
                         "baseline_mean": _clean(y.mean()) if y.size else None,
                         "delta": _clean((x - y).mean()) if x.size else None,
                         "p_value": _clean(outcome.p_value),
                         "ci": [_clean(outcome.ci_low), _clean(outcome.ci_high)],
                         "wins": int((x > y).sum()), "losses": int((x < y).sum())})
        adjusted = adjust(np.array([np.nan if r["p_value"] is None else r["p_value"]
                                    for r in rows], dtype=np.float64), "holm")
        for row, p in zip(rows, adjusted, strict=True):
            row["p_adjusted"] = _clean(p)
    diff = diff_rankings([_ranking(base_data, base_label), _ranking(data, ev_label)], k=depth,
                         p=0.9)[0]
    return {"evaluation_id": ev_id, "baseline_id": base_id, "baseline_name": base_name,
            "test": "paired t-test", "correction": "holm (over the metrics)", "metrics": rows,
            "similarity": {k: v for k, v in diff.summary().items()
                           if k in ("rbo", "jaccard", "queries", "queries_changed", "k", "p")},
            "per_query_rbo": {r["query_id"]: _clean(r["rbo"])
                              for r in diff.per_query.iter_rows(named=True)}}


def rater_names(store: Store) -> dict[int, str]:
    """Rater id -> name (for pages that list grades)."""
    with store.read() as session:
        return dict(session.execute(select(Rater.id, Rater.name)).all())
