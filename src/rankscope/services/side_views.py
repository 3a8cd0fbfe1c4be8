"""The app's side-by-side views: what they share, and any two snapshots of a project.

Three views page through two ranked lists a query at a time, with
:func:`rankscope.services.snapshot_compare.side_by_side` (its moves, grades,
per-query metric and mismatch warnings): an evaluation next to another
(:func:`rankscope.services.comparison.side_by_side`), a try next to its
evaluation's snapshot (:func:`rankscope.services.tries.side_by_side`), and,
here, any two snapshots of the evaluation's project (:func:`snapshots_side_by_side`:
two tries, a try and another evaluation's, two runs of one evaluation), picked
from :func:`project_snapshots`. Each is shown on an evaluation's grades and
rules, and its B side's results carry that evaluation's grading tasks, so the
grading keys work in all three.

A snapshot belongs to the project of the endpoint it was taken from (an
evaluation's, a try's changed endpoint is recorded under the same project): a
snapshot of a project the user cannot see is not found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from rankscope.errors import ConflictError, NotFoundError
from rankscope.services.campaigns import evaluation_row
from rankscope.store.models import Endpoint, Query, QuerySet, Snapshot, SnapshotHit, SnapshotQuery
from rankscope.store.models_app import Evaluation, EvaluationSnapshot, Item, Task, Try

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.orm import Session

    from rankscope.data.tables import Qrels
    from rankscope.services.accounts import Actor
    from rankscope.services.campaign_data import EvaluationData
    from rankscope.services.snapshot_diff import Ranking
    from rankscope.store.db import Store

__all__ = ["attach_to_rows", "evaluation_tasks", "explanations_of", "graded_as",
           "project_snapshots", "snapshot_ranking", "snapshots_side_by_side", "why_missing"]


def evaluation_tasks(session: Session, evaluation_id: int) -> dict[tuple[str, str], int]:
    """``{(query id, doc id): task id}`` of every task of the evaluation."""
    return {(q, d): t for q, d, t in session.execute(
        select(Query.query_id, Item.doc_id, Task.id)
        .join(Query, Task.query_row_id == Query.id).join(Item, Task.item_id == Item.id)
        .where(Task.evaluation_id == evaluation_id)).all()}


def graded_as(data: EvaluationData, ev: Evaluation) -> tuple[Qrels | None, str | None]:
    """The evaluation's grades aggregated by its rule on its scale, and its first metric
    (None, None before any grade)."""
    if not data.has_grades:
        return None, None
    return data.plan().qrels(ev.scale), (data.metrics[0] if data.metrics else None)


def explanations_of(session: Session, snapshot_id: int,
                    query_ids: Sequence[str] | None = None) -> dict[tuple[str, str], Any]:
    """``{(query id, doc id): explanation}`` of the snapshot's hits that recorded one
    (only ``query_ids`` when given)."""
    query = (select(Query.query_id, SnapshotHit.doc_id, SnapshotHit.explanation)
             .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
             .join(Query, SnapshotQuery.query_row_id == Query.id)
             .where(SnapshotQuery.snapshot_id == snapshot_id,
                    SnapshotHit.explanation.is_not(None)))
    if query_ids is not None:
        query = query.where(Query.query_id.in_(list(query_ids)))
    # a hit without one holds JSON null (not SQL NULL) when written with the others
    return {(q, d): e for q, d, e in session.execute(query).all() if e is not None}


def snapshot_ranking(session: Session, snapshot_id: int, label: str, *,
                     depth: int | None = None,
                     queries: Sequence[tuple[str, str]] | None = None) -> Ranking:
    """A snapshot of the store as a ranking, in the engine's order.

    ``queries`` (``(id, text)``, in order) and ``depth`` default to the
    snapshot's own query set and depth; its query set is named by its content's
    SHA-256, so :func:`rankscope.services.snapshot_diff.align` tells snapshots
    of different query sets apart.
    """
    from rankscope.services.snapshot_diff import Ranking
    from rankscope.services.snapshot_hits import run_lines_of

    snapshot = session.get(Snapshot, snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"no snapshot #{snapshot_id}")
    if queries is None:
        queries = [(q, t) for q, t in session.execute(
            select(Query.query_id, Query.text).where(Query.query_set_id == snapshot.query_set_id)
            .order_by(Query.position)).all()]
    query_set = session.get(QuerySet, snapshot.query_set_id)
    _, hits = run_lines_of(session, snapshot_id, label)
    return Ranking(label=label, frame=hits.select("query_id", "doc_id", "rank", "score",
                                                  "title", "url", "snippet"),
                   query_ids=[q for q, _ in queries], texts=dict(queries),
                   depth=depth if depth is not None else snapshot.depth,
                   query_set=query_set.content_sha256 if query_set is not None else None)


def attach_to_rows(out: dict[str, Any], *, tasks: dict[tuple[str, str], int] | None = None,
                   tasks_a: bool = False,
                   explained: tuple[dict[tuple[str, str], Any],
                                    dict[tuple[str, str], Any]] | None = None) -> None:
    """Give a side-by-side comparison's rows (``out``, its dict) their task and explanation.

    B's results get their ``task_id`` (A's too with ``tasks_a``) from ``tasks``;
    each side's results their ``explanation`` from ``explained`` (A's, B's).
    """
    for q in out["queries"]:
        for r in q["rows"]:
            for side, i in (("a", 0), ("b", 1)):
                hit = r[side]
                if hit is None:
                    continue
                key = (q["query_id"], hit["doc_id"])
                if tasks is not None and (side == "b" or tasks_a):
                    hit["task_id"] = tasks.get(key)
                if explained is not None:
                    hit["explanation"] = explained[i].get(key)


def _owners(session: Session, snapshot_ids: Sequence[int]) -> dict[int, str]:
    """What each snapshot was taken for, in words: an evaluation's run, a try (and the
    evaluation a try was made)."""
    runs: dict[int, str] = {}
    for sid, eid, name in session.execute(
            select(EvaluationSnapshot.snapshot_id, Evaluation.id, Evaluation.name)
            .join(Evaluation, EvaluationSnapshot.evaluation_id == Evaluation.id)
            .where(EvaluationSnapshot.snapshot_id.in_(list(snapshot_ids)))
            .order_by(EvaluationSnapshot.id)).all():
        runs.setdefault(sid, f"evaluation #{eid} {name}")
    tried: dict[int, str] = {}
    for found, number, eid, name in session.execute(
            select(Try.snapshot_id, Try.number, Evaluation.id, Evaluation.name)
            .join(Evaluation, Try.evaluation_id == Evaluation.id)
            .where(Try.snapshot_id.in_(list(snapshot_ids)))).all():
        if found is not None:
            tried.setdefault(found, f"try #{number} of evaluation #{eid} {name}")
    said = dict(runs)
    for sid, what in tried.items():
        said[sid] = f"{what}, now {runs[sid]}" if sid in runs else what
    return said


def project_snapshots(store: Store, actor: Actor, evaluation_id: int) -> list[dict[str, Any]]:
    """The snapshots of the evaluation's project, newest first, to pick two to compare.

    Each: ``id, name, of`` (``evaluation #3 name``, ``try #2 of evaluation #3
    name`` or None: a snapshot taken otherwise, by ``rankscope snapshot`` or a
    sweep), ``query_set``, ``depth``, ``status``, ``started_at``,
    ``evaluation_id`` (the snapshot this evaluation grades now is marked
    ``current``).
    """
    from rankscope.services.campaigns import latest_snapshot_id

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        current = latest_snapshot_id(session, ev.id)
        rows = session.execute(
            select(Snapshot, QuerySet.name)
            .join(Endpoint, Snapshot.endpoint_id == Endpoint.id)
            .join(QuerySet, Snapshot.query_set_id == QuerySet.id)
            .where(Endpoint.project_id == ev.project_id)
            .order_by(Snapshot.id.desc())).all()
        owners = _owners(session, [s.id for s, _ in rows])
        return [{"id": s.id, "name": s.name, "of": owners.get(s.id), "query_set": qs,
                 "depth": s.depth, "status": s.status, "current": s.id == current,
                 "started_at": s.started_at.isoformat()} for s, qs in rows]


def _project_snapshot(session: Session, project_id: int, snapshot_id: int) -> Snapshot:
    """The snapshot when it is one of the project's (else not found: the same answer as a
    snapshot that does not exist)."""
    snapshot = session.get(Snapshot, snapshot_id)
    endpoint = session.get(Endpoint, snapshot.endpoint_id) if snapshot is not None else None
    if snapshot is None or endpoint is None or endpoint.project_id != project_id:
        raise NotFoundError(f"no snapshot #{snapshot_id} in this project")
    if snapshot.status != "complete":
        raise ConflictError(f"snapshot #{snapshot_id} ({snapshot.name}) is {snapshot.status}: "
                            "only a complete snapshot is compared as if whole")
    return snapshot


def snapshots_side_by_side(store: Store, actor: Actor, evaluation_id: int, a: int,
                           b: int) -> dict[str, Any]:
    """Snapshot ``b`` next to snapshot ``a``, query by query, on the evaluation's grades.

    Both must be snapshots of the evaluation's project (another project's, or
    none, is a :class:`~rankscope.errors.NotFoundError`) and complete.
    Different depths or query sets are compared on what both have, with
    ``warnings`` saying so (the moves would count every difference as a
    change). The grades, the per-query metric and B's grading tasks are the
    evaluation's when both snapshots were taken over its query set; otherwise
    the lists are shown without them, and a warning says why. Each result
    carries its ``explanation`` where its snapshot recorded one.

    Returns :meth:`rankscope.services.snapshot_compare.SideBySide.to_dict`
    with ``a_id``, ``b_id``, ``a_of``, ``b_of`` (what each snapshot was taken
    for) and ``why``: per side, what a result without an explanation means
    (:func:`why_missing`).
    """
    from rankscope.services.campaign_data import load_data
    from rankscope.services.snapshot_compare import side_by_side as compare_side_by_side

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        snap_a = _project_snapshot(session, ev.project_id, a)
        snap_b = _project_snapshot(session, ev.project_id, b)
        if snap_a.id == snap_b.id:
            raise ConflictError("choose two different snapshots")
        owners = _owners(session, [a, b])
        rankings = [snapshot_ranking(session, s.id, f"#{s.id} {s.name}")
                    for s in (snap_a, snap_b)]
        own_set = session.get(QuerySet, ev.query_set_id)
        graded = own_set is not None and all(
            r.query_set == own_set.content_sha256 for r in rankings)
        warnings: list[str] = []
        qrels = metric = None
        tasks: dict[tuple[str, str], int] | None = None
        if graded:
            qrels, metric = graded_as(load_data(session, ev), ev)
            tasks = evaluation_tasks(session, ev.id)
        else:
            warnings.append(f"not both snapshots were taken over evaluation #{ev.id}'s query "
                            "set: shown without its grades and grading tasks")
        explained = (explanations_of(session, a), explanations_of(session, b))
        why = {"a": why_missing(session, a, asked=bool(explained[0])),
               "b": why_missing(session, b, asked=bool(explained[1]))}
    found = compare_side_by_side(rankings[0], rankings[1], qrels=qrels, metric=metric,
                                 allow_mismatch=True)
    out = found.to_dict()
    attach_to_rows(out, tasks=tasks, tasks_a=True, explained=explained)
    out["warnings"] = [*out["warnings"], *warnings]
    out.update({"a_id": a, "b_id": b, "a_of": owners.get(a), "b_of": owners.get(b),
                "why": why, "evaluation_id": evaluation_id})
    return out


def why_missing(session: Session, snapshot_id: int | None, *, kind: str | None = None,
                asked: bool = False) -> str:
    """What a result of this snapshot without an explanation means, in words.

    The kind of its endpoint (or ``kind``, for a try of one query, which has no
    snapshot) cannot explain; or explanations were ``asked`` (the evaluation's
    ``explain``, a try, a snapshot that recorded some) and the engine gave none
    for it; or the snapshot was taken without asking.
    """
    from rankscope.search.config import explains

    if kind is None and snapshot_id is not None:
        kind = session.scalar(select(Endpoint.kind).join(
            Snapshot, Snapshot.endpoint_id == Endpoint.id).where(Snapshot.id == snapshot_id))
    if kind is not None and not explains(kind):
        return f"this kind of endpoint ({kind}) cannot explain"
    if asked:
        return "no explanation recorded"
    return "no explanation recorded (taken without explain)"
