"""An evaluation against others: its history, and the comparison with a baseline.

- history: the evaluations of the same query set and endpoint (or, with
  ``scope="query_set"``, of the same query set on any endpoint), oldest
  first, each with its means and its annotation ("what changed"): a frozen
  evaluation's numbers as frozen, the others' on today's grades, marked
  provisional;
- comparison: this evaluation's run and its baseline's evaluated with this
  evaluation's grades and rules, paired by query: the delta of means, a
  paired test (:func:`rankscope.compare.significance.paired_test`: t-test by
  default, Wilcoxon, permutation or bootstrap) with a correction over the
  metrics (Holm by default, Bonferroni, Benjamini-Hochberg, none), RBO and
  Jaccard between the two snapshots
  (:func:`rankscope.services.snapshot_diff.diff_rankings`), and every
  query's values on both sides with their delta. Snapshots of different
  depths or query sets are compared on what both have (the smaller depth,
  the shared queries), with ``warnings`` saying so. When this evaluation
  or its baseline is frozen, both sides are as frozen (this evaluation's
  grades as of its freeze, each snapshot as of its own) and ``drift`` says
  how today's grades would change each metric's delta.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select

from rankscope.errors import ConflictError, NotFoundError, OptionError
from rankscope.services.campaign_data import EvaluationData, load_data
from rankscope.services.campaigns import evaluation_row
from rankscope.services.dashboards import clean, evaluation_metrics
from rankscope.store.models import Endpoint, QuerySet
from rankscope.store.models_app import Evaluation

if TYPE_CHECKING:
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = ["CORRECTIONS", "SCOPES", "TESTS", "compare_with_baseline", "history", "side_by_side"]

SCOPES = ("endpoint", "query_set")
TESTS = ("t", "wilcoxon", "permutation", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
_TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
               "permutation": "paired permutation test", "bootstrap": "paired bootstrap test"}


def history(store: Store, actor: Actor, evaluation_id: int,
            scope: str = "endpoint") -> list[dict[str, Any]]:
    """Evaluations of the same query set (and endpoint), oldest first, with their means.

    Each row: ``evaluation_id, name, endpoint, created_at, annotation,
    status, mean, frozen`` (:func:`rankscope.services.freezing.freeze_state`),
    ``provisional`` (not frozen: its numbers may still move) and ``n_grades``.
    """
    from rankscope.services.freezing import auto_freeze, freeze_state

    if scope not in SCOPES:
        raise OptionError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        ids = list(session.scalars(select(Evaluation.id).where(
            Evaluation.project_id == ev.project_id, Evaluation.query_set_id == ev.query_set_id)))
    for other_id in ids:
        auto_freeze(store, other_id)
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        query = select(Evaluation).where(Evaluation.project_id == ev.project_id,
                                         Evaluation.query_set_id == ev.query_set_id)
        if scope == "endpoint":
            query = query.where(Evaluation.endpoint_id == ev.endpoint_id)
        rows = session.scalars(query.order_by(Evaluation.created_at, Evaluation.id)).all()
        names = dict(session.execute(select(Endpoint.id, Endpoint.name).where(
            Endpoint.project_id == ev.project_id)).all())
        out = []
        for other in rows:
            data = load_data(session, other)
            out.append({"evaluation_id": other.id, "name": other.name,
                        "endpoint": names.get(other.endpoint_id, "?"),
                        "created_at": other.created_at.isoformat(),
                        "annotation": other.annotation, "status": other.status,
                        "mean": evaluation_metrics(data)["mean"],
                        "frozen": freeze_state(other), "provisional": other.frozen_at is None,
                        "n_grades": data.n_grades})
        return out


def _ranking(data: EvaluationData, label: str, query_set: str) -> Any:
    from rankscope.services.snapshot_diff import Ranking

    frame = data.hits.select("query_id", "doc_id", "rank", "title", "url", "snippet")
    scores = data.run.frame.select("query_id", "doc_id", "score")
    frame = frame.join(scores, on=["query_id", "doc_id"], how="left")
    return Ranking(label=label, frame=frame, query_ids=[q["query_id"] for q in data.queries],
                   texts={q["query_id"]: q["text"] for q in data.queries},
                   depth=data.depth, query_set=query_set)


def compare_with_baseline(store: Store, actor: Actor, evaluation_id: int,
                          baseline_id: int | None = None, *, test: str = "t",
                          correction: str = "holm") -> dict[str, Any]:
    """This evaluation against its baseline (or ``baseline_id``), metric by metric.

    Both runs are evaluated with this evaluation's grades, scale and rules.
    Per metric (``metrics``): the means over the queries both have a value
    for, the delta, the paired test's p-value and its adjustment over the
    metrics, wins and losses; ``similarity``: RBO (p = 0.9) and
    Jaccard@depth between the two snapshots; ``per_query``: each query's
    text, RBO and, per metric, ``{"this", "baseline", "delta"}``; ``frozen``:
    whether either side is frozen (then both are as frozen) and ``drift``: the
    metrics whose delta today's grades would change (``frozen_delta``,
    ``today_delta``, ``frozen_p``, ``today_p``, ``change``).
    """
    from rankscope.services.snapshot_diff import diff_rankings

    if test not in TESTS:
        raise OptionError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if correction not in CORRECTIONS:
        raise OptionError(f"correction must be one of {', '.join(CORRECTIONS)}, "
                          f"not {correction!r}")
    from rankscope.services.freezing import auto_freeze

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        other_id = baseline_id if baseline_id is not None else ev.baseline_id
        if other_id is None:
            raise OptionError("this evaluation has no baseline: choose one")
        base = evaluation_row(session, actor, other_id, "curator")
        if base.project_id != ev.project_id:
            raise NotFoundError(f"no evaluation #{other_id} in this project")
    auto_freeze(store, evaluation_id)
    auto_freeze(store, other_id)
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        base = evaluation_row(session, actor, other_id, "curator")
        data, base_data = load_data(session, ev), load_data(session, base)
        frozen = ev.frozen_at is not None or base.frozen_at is not None
        today = (load_data(session, ev, today=True), load_data(session, base, today=True)) \
            if frozen else None
        ev_label, base_label = f"#{ev.id} {ev.name}", f"#{base.id} {base.name}"
        ev_id, base_id, base_name, ev_depth = ev.id, base.id, base.name, ev.depth
        sets = {qs.id: qs.content_sha256 for qs in session.scalars(
            select(QuerySet).where(QuerySet.id.in_([ev.query_set_id, base.query_set_id])))}
        ev_set, base_set = sets.get(ev.query_set_id, ""), sets.get(base.query_set_id, "")
    if data.run.frame.height == 0 or base_data.run.frame.height == 0:
        raise ConflictError("both evaluations need a snapshot: run them first")
    sides = (ev_label, ev_set, base_label, base_set)
    rows, per_query, (base_ranking, ranking), warnings, depth = _paired(
        data, base_data, sides, test, correction, ev_depth)
    moved: list[dict[str, Any]] = []
    if today is not None and today[0].run.frame.height and today[1].run.frame.height:
        now_rows = {r["metric"]: r for r in _paired(today[0], today[1], sides, test,
                                                    correction, ev_depth)[0]}
        for row in rows:
            now = now_rows.get(row["metric"], {})
            was_d, now_d = row["delta"], now.get("delta")
            if was_d != now_d and not (was_d is not None and now_d is not None
                                       and abs(was_d - now_d) < 1e-12):
                moved.append({"metric": row["metric"], "frozen_delta": was_d,
                              "today_delta": now_d, "frozen_p": row["p_value"],
                              "today_p": now.get("p_value"),
                              "change": None if was_d is None or now_d is None
                              else now_d - was_d})
    diff = diff_rankings([base_ranking, ranking], k=max(1, depth), p=0.9)[0]
    rbo = {r["query_id"]: clean(r["rbo"]) for r in diff.per_query.iter_rows(named=True)}
    for q, row in per_query.items():
        row["rbo"] = rbo.get(q)
    return {"evaluation_id": ev_id, "baseline_id": base_id, "baseline_name": base_name,
            "test": _TEST_NAMES[test], "test_key": test,
            "correction": f"{correction} (over the metrics)", "correction_key": correction,
            "metrics": rows,
            "similarity": {k: v for k, v in diff.summary().items()
                           if k in ("rbo", "jaccard", "queries", "queries_changed", "k", "p")},
            "per_query_rbo": rbo, "per_query": list(per_query.values()),
            "warnings": warnings, "frozen": frozen, "drift": moved}


def _paired(data: EvaluationData, base_data: EvaluationData, sides: tuple[str, str, str, str],
            test: str, correction: str, depth: int) -> tuple[
                list[dict[str, Any]], dict[str, dict[str, Any]], Any, list[str], int]:
    """Both runs evaluated with ``data``'s grades, paired by query, metric by metric."""
    from rankscope.compare.corrections import adjust
    from rankscope.compare.significance import paired_test
    from rankscope.services.snapshot_diff import align

    ev_label, ev_set, base_label, base_set = sides
    # Different depths or query sets would count every difference as a change: compare
    # what both have (the smaller depth, the shared queries) and say so on the page.
    (base_ranking, ranking), warnings = align(
        [_ranking(base_data, base_label, base_set), _ranking(data, ev_label, ev_set)],
        allow=True)
    depth = min(base_ranking.effective_depth, ranking.effective_depth) or depth
    this_run, base_run = (ranking.ordered_run(), base_ranking.ordered_run()) if warnings \
        else (data.run, base_data.run)
    shared = set(ranking.query_ids)
    rows: list[dict[str, Any]] = []
    per_query: dict[str, dict[str, Any]] = {
        q["query_id"]: {"query_id": q["query_id"], "text": q["text"], "metrics": {}}
        for q in data.queries if not warnings or q["query_id"] in shared}
    if data.has_grades:
        mine, theirs = data.evaluate(this_run), data.evaluate(base_run)
        for j, label in enumerate(mine.labels):
            a = dict(zip(mine.query_ids, mine.values[:, j], strict=True))
            b = dict(zip(theirs.query_ids, theirs.values[:, j], strict=True))
            for q, row in per_query.items():
                x_q, y_q = clean(a.get(q)), clean(b.get(q))
                row["metrics"][label] = {"this": x_q, "baseline": y_q, "delta": (
                    None if x_q is None or y_q is None else x_q - y_q)}
            paired = [q for q in a if q in b and not (np.isnan(a[q]) or np.isnan(b[q]))]
            x = np.array([a[q] for q in paired], dtype=np.float64)
            y = np.array([b[q] for q in paired], dtype=np.float64)
            outcome = paired_test(x, y, test)
            rows.append({"metric": label, "n_queries": len(paired),
                         "mean": clean(x.mean()) if x.size else None,
                         "baseline_mean": clean(y.mean()) if y.size else None,
                         "delta": clean((x - y).mean()) if x.size else None,
                         "p_value": clean(outcome.p_value),
                         "ci": [clean(outcome.ci_low), clean(outcome.ci_high)],
                         "wins": int((x > y).sum()), "losses": int((x < y).sum())})
        adjusted = adjust(np.array([np.nan if r["p_value"] is None else r["p_value"]
                                    for r in rows], dtype=np.float64), correction)
        for row, p in zip(rows, adjusted, strict=True):
            row["p_adjusted"] = clean(p)
    return rows, per_query, (base_ranking, ranking), warnings, depth


def side_by_side(store: Store, actor: Actor, evaluation_id: int,
                 baseline_id: int) -> dict[str, Any]:
    """This evaluation's snapshot next to another's, query by query, with this one's tasks.

    As :func:`rankscope.services.snapshot_compare.side_by_side` (the baseline
    is A), on this evaluation's grades and rules (its first metric per query);
    each of this evaluation's results carries its grading task
    (``task_id``), each result of either its ``explanation`` where the
    snapshot recorded one (``why``: per side, what a missing one means).
    Different depths or query sets are compared on what both have, with
    ``warnings`` saying so.
    """
    from rankscope.services.side_views import (
        attach_to_rows,
        evaluation_tasks,
        explanations_of,
        graded_as,
        why_missing,
    )
    from rankscope.services.snapshot_compare import side_by_side as compare_side_by_side

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        base = evaluation_row(session, actor, baseline_id, "curator")
        if base.project_id != ev.project_id or base.id == ev.id:
            raise NotFoundError(f"no other evaluation #{baseline_id} in this project")
        data, base_data = load_data(session, ev), load_data(session, base)
        if data.snapshot_id is None or base_data.snapshot_id is None:
            raise ConflictError("both evaluations need a snapshot: run them first")
        sets = {qs.id: qs.content_sha256 for qs in session.scalars(
            select(QuerySet).where(QuerySet.id.in_([ev.query_set_id, base.query_set_id])))}
        a = _ranking(base_data, f"#{base.id} {base.name}", sets.get(base.query_set_id, ""))
        b = _ranking(data, f"#{ev.id} {ev.name}", sets.get(ev.query_set_id, ""))
        tasks = evaluation_tasks(session, ev.id)
        qrels, metric = graded_as(data, ev)
        explained = (explanations_of(session, base_data.snapshot_id),
                     explanations_of(session, data.snapshot_id))
        why = {"a": why_missing(session, base_data.snapshot_id,
                                asked=base.explain or bool(explained[0])),
               "b": why_missing(session, data.snapshot_id, asked=ev.explain or bool(explained[1]))}
    found = compare_side_by_side(a, b, qrels=qrels, metric=metric, allow_mismatch=True)
    out = found.to_dict()
    attach_to_rows(out, tasks=tasks, explained=explained)
    out.update({"evaluation_id": evaluation_id, "baseline_id": baseline_id, "why": why})
    return out
