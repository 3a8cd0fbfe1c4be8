"""Running a grading campaign: its snapshot taken, its grading tasks made.

:func:`run_evaluation` takes a snapshot of the evaluation's endpoint over its
query set with the snapshot service (one transaction per query), then creates
one grading task per result of the snapshot; :func:`attach_snapshot` serves a
snapshot taken already (a try's) the same way. Grades live on *items* (query x
document of the project, :func:`~rankscope.services.campaigns.ensure_items`),
so a result graded for an earlier evaluation on the same scale counts for this
one too: only results not yet graded enough need work. A run happens inside
the server's process: :func:`recover_interrupted_runs` marks ``failed`` the
runs a stopped server left ``running``. What an evaluation is (its settings,
creating and listing them) is :mod:`rankscope.services.campaigns`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from rankscope.errors import NotFoundError, RankscopeError
from rankscope.services.campaigns import (
    check_explains,
    ensure_items,
    evaluation_row,
    query_key,
)
from rankscope.store.models import Endpoint, Project, Query, QuerySet, SnapshotHit, SnapshotQuery
from rankscope.store.models import utcnow as _now
from rankscope.store.models_app import Evaluation, EvaluationSnapshot, Grade, Rater, Task

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = ["attach_snapshot", "recover_interrupted_runs", "run_evaluation"]


def recover_interrupted_runs(store: Store) -> list[int]:
    """Mark ``failed`` the runs a stopped server left ``running`` (call before serving).

    A run happens inside the server's process, so when a server starts none of
    them is going on any more; what their snapshot recorded stays, and the
    evaluation can be run again. Returns the evaluations so marked.
    """

    def work(session: Session) -> list[int]:
        stuck = list(session.scalars(select(Evaluation).where(Evaluation.status == "running")))
        for ev in stuck:
            ev.status, ev.error = "failed", "the server stopped during the run; run it again"
        return [ev.id for ev in stuck]

    return store.write(work)


def _set_status(store: Store, evaluation_id: int, status: str, error: str | None) -> None:
    def work(session: Session) -> None:
        ev = session.get(Evaluation, evaluation_id)
        if ev is not None:
            ev.status, ev.error = status, error

    store.write(work)


def _create_tasks(session: Session, ev: Evaluation, snapshot_id: int) -> dict[str, int]:
    """One task per result of the snapshot (best rank when a document repeats under a query)."""
    rows = session.execute(
        select(Query.id, Query.text, Query.params, SnapshotHit.doc_id, SnapshotHit.rank)
        .join(SnapshotQuery, SnapshotQuery.query_row_id == Query.id)
        .join(SnapshotHit, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
        .where(SnapshotQuery.snapshot_id == snapshot_id)
        .order_by(Query.position, SnapshotHit.rank)).all()
    keyed = [(query_row, query_key(text, params), text, doc_id, rank)
             for query_row, text, params, doc_id, rank in rows]
    items = ensure_items(session, ev.project_id, [(k, t, d) for _, k, t, d, _ in keyed])
    tasks = {t.item_id: t for t in session.scalars(select(Task).where(
        Task.evaluation_id == ev.id))}
    now = _now()
    for query_row, key, _, doc_id, rank in keyed:
        item_id = items[(key, doc_id)]
        if item_id not in tasks:  # a query text twice in the set: its first place counts
            task = Task(evaluation_id=ev.id, item_id=item_id, query_row_id=query_row,
                        position=rank, grades_wanted=ev.grades_wanted, created_at=now)
            session.add(task)
            tasks[item_id] = task
    session.flush()
    counts = dict(session.execute(
        select(Grade.item_id, func.count(Grade.id)).join(Rater, Grade.rater_id == Rater.id)
        .where(Grade.item_id.in_(list(tasks)), Grade.active, Grade.scale == ev.scale,
               Rater.counts)
        .group_by(Grade.item_id)).all()) if tasks else {}
    to_grade = sum(1 for item_id in tasks if counts.get(item_id, 0) < ev.grades_wanted)
    return {"tasks": len(tasks), "to_grade": to_grade, "results": len(rows)}


def attach_snapshot(store: Store, evaluation_id: int, snapshot_id: int) -> dict[str, Any]:
    """Serve a snapshot already taken (a try's) to an evaluation: its tasks, status ``ready``.

    Returns ``{"snapshot_id", "tasks", "to_grade", "results"}`` as :func:`run_evaluation`.
    """

    def work(session: Session) -> dict[str, Any]:
        ev = session.get(Evaluation, evaluation_id)
        if ev is None:
            raise NotFoundError(f"no evaluation #{evaluation_id}")
        return _attach(session, ev, snapshot_id)

    return store.write(work)


def _attach(session: Session, ev: Evaluation, snapshot_id: int) -> dict[str, Any]:
    session.add(EvaluationSnapshot(evaluation_id=ev.id, snapshot_id=snapshot_id,
                                   created_at=_now()))
    summary = _create_tasks(session, ev, snapshot_id)
    ev.status, ev.error = "ready", None
    return {"snapshot_id": snapshot_id, **summary}


def run_evaluation(store: Store, actor: Actor, evaluation_id: int, *,
                   boundary: Boundary,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Take the snapshot and create the grading tasks; the evaluation becomes ``ready``.

    ``boundary`` is the server's: the endpoint's files, variables and hosts
    are checked against it again before anything is sent. ``progress`` is
    told ``(queries answered, queries)`` when the run starts and after each
    answer (a page shows it while it polls). With the evaluation's
    ``explain`` the snapshot records each hit's explanation. Returns
    ``{"snapshot_id", "tasks", "to_grade", "results"}``. On failure the
    evaluation is ``failed`` with the error (what the snapshot recorded
    stays) and the error is raised.
    """
    from rankscope.search.config import open_endpoint
    from rankscope.search.types import QueryItem
    from rankscope.services.catalog import endpoint_config
    from rankscope.services.snapshots import take_snapshot

    def start(session: Session) -> tuple[Any, list[QueryItem], int, str, str, str | None,
                                         bool]:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        # lock the row (PostgreSQL): two runs started at once see each other's "running"
        session.execute(select(Evaluation.id).where(Evaluation.id == ev.id).with_for_update())
        session.refresh(ev)
        from rankscope.errors import ConflictError

        if ev.status == "running":
            raise ConflictError(f"evaluation #{evaluation_id} is running already")
        if ev.frozen_at is not None:  # a new snapshot would not be what its numbers rest on
            raise ConflictError(f"evaluation #{evaluation_id} is frozen: create a new "
                                f"evaluation to run the endpoint again")
        ep = session.get(Endpoint, ev.endpoint_id)
        qs = session.get(QuerySet, ev.query_set_id)
        project = session.get(Project, ev.project_id)
        if ep is None or qs is None or project is None:
            raise NotFoundError(f"evaluation #{evaluation_id} lost its endpoint or query set")
        config = endpoint_config(ep, boundary)
        if ev.explain:
            check_explains(ep)
        queries = [QueryItem(q.query_id, q.text, dict(q.params), q.need) for q in session.scalars(
            select(Query).where(Query.query_set_id == qs.id).order_by(Query.position))]
        ev.status, ev.error = "running", None
        return config, queries, ev.depth, project.name, qs.name, qs.source, ev.explain

    config, queries, depth, project_name, qs_name, qs_source, explain = store.write(start)
    answered = [0]

    def advance(n: int) -> None:
        answered[0] += n
        if progress is not None:
            progress(answered[0], len(queries))

    if progress is not None:
        progress(0, len(queries))

    async def take() -> Any:
        endpoint = open_endpoint(config, explain=explain, **boundary.open_options())
        try:
            return await take_snapshot(endpoint, queries, depth=depth, store=store,
                                       name=config.name, query_set_name=qs_name,
                                       query_set_source=qs_source, project=project_name,
                                       concurrency=boundary.in_flight(config), advance=advance)
        finally:
            await endpoint.aclose()

    try:
        outcome = asyncio.run(take())
    except RankscopeError as exc:
        _set_status(store, evaluation_id, "failed", str(exc))
        raise
    except Exception as exc:  # an engine's own failure: recorded, then raised
        _set_status(store, evaluation_id, "failed", f"{type(exc).__name__}: {exc}")
        raise

    def finish(session: Session) -> dict[str, Any]:
        ev = session.get(Evaluation, evaluation_id)
        if ev is None:
            raise NotFoundError(f"evaluation #{evaluation_id} was deleted while running")
        return _attach(session, ev, outcome.snapshot_id)

    return store.write(finish)
