"""What a grader sees of a task: the query, the result's display fields, their own grade.

:func:`task_views` builds the views of any number of tasks in one statement
(the tasks with their items and queries, the snapshot's hits, the grader's
own grades and deferrals): a page of one task, an API batch of 500 and a
query's result list cost the same. A grader never sees another grader's grade.
:func:`query_results` and :func:`query_ids` are the list mode's: one query's
tasks, and the queries that have tasks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, bindparam, select

from rankscope.errors import NotFoundError, OptionError
from rankscope.services.campaigns import evaluation_row
from rankscope.store.models import Query, SnapshotHit, SnapshotQuery
from rankscope.store.models_app import (
    Deferral,
    Evaluation,
    EvaluationSnapshot,
    Grade,
    Item,
    Rater,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from sqlalchemy import Select
    from sqlalchemy.orm import Session

    from rankscope.judgments.scales import Scale
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "TaskView",
    "own_grade",
    "query_ids",
    "query_results",
    "scale_info",
    "scale_of",
    "task_row",
    "task_views",
    "view_rows",
    "views_select",
]


@dataclass
class TaskView:
    """What a grader sees of one task: never another grader's grade."""

    task_id: int
    evaluation_id: int
    position: int
    query_id: str
    query_text: str
    need: str | None
    doc_id: str
    title: str | None
    snippet: str | None
    url: str | None
    image: str | None
    fields: dict[str, Any]
    my_grade: dict[str, Any] | None
    deferred: bool
    lease_until: str | None
    scale: dict[str, Any] = field(default_factory=dict)
    origin: str = "snapshot"
    """``snapshot``, ``try`` (a try's new result) or ``hand`` (added by hand to the pool)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


def scale_of(ev: Evaluation) -> Scale:
    """The evaluation's scale as a :class:`~rankscope.judgments.scales.Scale`."""
    from rankscope.judgments.scales import get_scale

    scale = get_scale(ev.scale)
    if scale is None:  # the column is NOT NULL and checked on creation
        raise OptionError(f"evaluation #{ev.id} has no scale")
    return scale


def scale_info(scale: Scale) -> dict[str, Any]:
    """The scale for a page or a client: name, bounds, allowed values, labels."""
    return {"name": scale.name, "min": scale.min, "max": scale.max,
            "values": list(scale.values), "labels": {f"{g:g}": label for g, label in scale.labels}}


def own_grade(session: Session, item_id: int, rater_id: int, scale: str) -> Grade | None:
    """The rater's grade of the item that counts now (None when they have none)."""
    return session.scalar(select(Grade).where(Grade.item_id == item_id,
                                              Grade.rater_id == rater_id, Grade.active,
                                              Grade.scale == scale))


def task_row(session: Session, actor: Actor, task_id: int) -> tuple[Task, Evaluation]:
    """The task and its evaluation, when the actor may grade it (404/403 otherwise)."""
    task = session.get(Task, task_id)
    if task is None:
        raise NotFoundError(f"no task #{task_id}")
    ev = evaluation_row(session, actor, task.evaluation_id, "judge")
    return task, ev


def _grade_dict(r: Any) -> dict[str, Any] | None:
    """The grader's own grade of a row of :func:`_views_statement` (None: they have none)."""
    if r.grade_id is None:
        return None
    return {"grade_id": r.grade_id, "value": r.grade_value, "reason": r.grade_reason,
            "explanation": r.grade_explanation, "created_at": r.grade_created_at.isoformat()}


@functools.cache
def views_select() -> Select[*tuple[Any, ...]]:
    """The tasks of evaluation ``ev`` with their item, query, the hit of the evaluation's
    latest snapshot (its best rank when a document repeats), and the grade and deferral of
    ``rater`` (on ``scale``); which tasks is the caller's ``where`` (:func:`view_rows` turns
    its rows into views)."""
    snapshot = (select(EvaluationSnapshot.snapshot_id)
                .where(EvaluationSnapshot.evaluation_id == bindparam("ev"))
                .order_by(EvaluationSnapshot.id.desc()).limit(1).scalar_subquery())
    best_hit = (select(SnapshotHit.id)
                .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
                .where(SnapshotQuery.snapshot_id == snapshot,
                       SnapshotQuery.query_row_id == Task.query_row_id,
                       SnapshotHit.doc_id == Item.doc_id)
                .order_by(SnapshotHit.rank, SnapshotHit.id).limit(1).scalar_subquery())
    # the hit's and the grade's columns shown, not the ORM objects: no identity map, no
    # hit's explanation read (a next task builds these views on every request)
    return (select(Task.id, Task.position, Item.doc_id, Query.query_id, Query.text,
                   Query.need, SnapshotHit.id.label("hit_id"), SnapshotHit.title,
                   SnapshotHit.snippet, SnapshotHit.url, SnapshotHit.image, SnapshotHit.fields,
                   Grade.id.label("grade_id"), Grade.value.label("grade_value"),
                   Grade.reason.label("grade_reason"),
                   Grade.explanation.label("grade_explanation"),
                   Grade.created_at.label("grade_created_at"), Deferral.id.label("deferral"),
                   Task.origin, Task.shown)
            .join(Item, Item.id == Task.item_id).join(Query, Query.id == Task.query_row_id)
            .outerjoin(SnapshotHit, SnapshotHit.id == best_hit)
            .outerjoin(Grade, and_(Grade.item_id == Task.item_id,
                                   Grade.rater_id == bindparam("rater"), Grade.active,
                                   Grade.scale == bindparam("scale")))
            .outerjoin(Deferral, and_(Deferral.task_id == Task.id,
                                      Deferral.rater_id == bindparam("rater")))
            .where(Task.evaluation_id == bindparam("ev")))


@functools.cache
def _views_statement() -> Select[*tuple[Any, ...]]:
    """:func:`views_select` of the tasks ``ids``: one statement whatever their number."""
    return views_select().where(Task.id.in_(bindparam("ids", expanding=True)))


def view_rows(ev: Evaluation, rows: Sequence[Any],
              held: Mapping[int, datetime] | None = None) -> list[TaskView]:
    """The views of rows of :func:`views_select`, in their order (``held``: as in
    :func:`task_views`)."""
    scale = scale_of(ev)
    out = []
    for r in rows:
        hit = r.hit_id is not None
        shown = r.shown or {}  # a result added from a try or by hand: what was kept of it
        until = (held or {}).get(r.id)
        out.append(TaskView(
            task_id=r.id, evaluation_id=ev.id, position=r.position, query_id=r.query_id,
            query_text=r.text, need=r.need, doc_id=r.doc_id,
            title=r.title if hit else shown.get("title"),
            snippet=r.snippet if hit else shown.get("snippet"),
            url=r.url if hit else shown.get("url"),
            image=r.image if hit else shown.get("image"),
            fields=dict(r.fields) if hit else {}, my_grade=_grade_dict(r),
            deferred=r.deferral is not None, lease_until=until.isoformat() if until else None,
            scale=scale_info(scale), origin=r.origin or "snapshot"))
    return out


def task_views(session: Session, ev: Evaluation, task_ids: Sequence[int], rater_id: int | None,
               held: Mapping[int, datetime] | None = None) -> list[TaskView]:
    """The tasks of ``ev`` as the rater sees them, in the order given.

    ``held``: the lease end of the tasks leased to the rater (the others show
    none). ``rater_id`` None: someone with no grade (their own grade is none).
    """
    ids = list(dict.fromkeys(task_ids))
    if not ids:
        return []
    rows = {r.id: r for r in session.execute(_views_statement(), {
        "ev": ev.id, "rater": -1 if rater_id is None else rater_id, "scale": ev.scale,
        "ids": ids})}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise NotFoundError(f"task #{missing[0]} lost its result")
    return view_rows(ev, [rows[i] for i in ids], held)


def query_results(store: Store, actor: Actor, evaluation_id: int,
                  query_id: str) -> list[TaskView]:
    """Every task of one query, by position, with the actor's own grades (the list mode)."""
    from rankscope.errors import NotFoundError

    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater_id = session.scalar(select(Rater.id).where(Rater.user_id == actor.user_id))
        tasks = session.scalars(select(Task.id).join(Query, Task.query_row_id == Query.id)
                                .where(Task.evaluation_id == ev.id, Query.query_id == query_id)
                                .order_by(Task.position, Task.id)).all()
        if not tasks:
            raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
        return task_views(session, ev, tasks, rater_id)


def query_ids(store: Store, actor: Actor, evaluation_id: int) -> list[str]:
    """The evaluation's query ids that have tasks, in the query set's order."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        return list(dict.fromkeys(session.scalars(
            select(Query.query_id).join(Task, Task.query_row_id == Query.id)
            .where(Task.evaluation_id == ev.id).order_by(Query.position))))

