"""Who grades what next: the open tasks, leases, what a grader sees, and how much is left.

Assignment (:func:`next_tasks`): a grader gets a result of the evaluation
they have not graded, that still wants grades (its item's counted grades on
the evaluation's scale plus the other graders' live leases are fewer than
the grades wanted), results with the fewest grades first, then the highest
positions (rank 1 first); results they put off ("judge later") come after
every other. Taking a task leases it for :data:`LEASE` so two graders do
not fill the last slot twice; a lease that expires returns the task to the
pool. A grader never sees another's grade.

A grade *counts* when its rater's ``counts`` is true (people, imports, an
LLM judge the curator let count): only counted grades fill the slots of
the grades wanted. :func:`progress` says how much is left for a grader and
for the evaluation; :func:`graded_walk` is the order in which ``k`` walks
back through a grader's grades of an evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select

from rankscope.errors import ConflictError, NotFoundError, OptionError
from rankscope.services.accounts import rater_for
from rankscope.services.evaluations import evaluation_row, latest_snapshot_id
from rankscope.store.models import Query, SnapshotHit, SnapshotQuery, utcnow
from rankscope.store.models_app import (
    Adjudication,
    Deferral,
    Evaluation,
    Grade,
    Item,
    Lease,
    Rater,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.orm import Session

    from rankscope.judgments.scales import Scale
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "LEASE",
    "MAX_BATCH",
    "TaskView",
    "graded_walk",
    "my_grades",
    "next_task",
    "next_tasks",
    "open_tasks",
    "progress",
    "query_results",
    "release",
    "scale_info",
    "scale_of",
    "task_view",
]

LEASE = timedelta(minutes=10)
MAX_BATCH = 500


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


def counts(session: Session, item_ids: Sequence[int], scale: str) -> dict[int, int]:
    """Counted grades (active, on ``scale``, of a rater that counts) per item."""
    if not item_ids:
        return {}
    rows = session.execute(select(Grade.item_id, func.count(Grade.id))
                           .join(Rater, Grade.rater_id == Rater.id)
                           .where(Grade.item_id.in_(list(item_ids)), Grade.active,
                                  Grade.scale == scale, Rater.counts)
                           .group_by(Grade.item_id)).all()
    return {int(i): int(n) for i, n in rows}


def closed(session: Session, item_ids: Sequence[int], scale: str) -> set[int]:
    """Items a curator adjudicated on this scale (no more grades wanted)."""
    if not item_ids:
        return set()
    return set(session.scalars(select(Adjudication.item_id).where(
        Adjudication.item_id.in_(list(item_ids)), Adjudication.scale == scale)))


def candidates(session: Session, ev: Evaluation, rater: Rater,
               exclude: set[int] | None = None) -> list[Task]:
    """The tasks this rater may take now, best first."""
    now = utcnow()
    tasks = list(session.scalars(select(Task).where(Task.evaluation_id == ev.id)))
    item_ids = [t.item_id for t in tasks]
    n_grades = counts(session, item_ids, ev.scale)
    settled = closed(session, item_ids, ev.scale)
    mine = set(session.scalars(select(Grade.item_id).where(
        Grade.rater_id == rater.id, Grade.active, Grade.scale == ev.scale)))
    held: dict[int, int] = {}  # item -> live leases of other raters (on any evaluation's task)
    if item_ids:
        for item_id, n in session.execute(
                select(Task.item_id, func.count(Lease.id)).join(Lease, Lease.task_id == Task.id)
                .where(Lease.expires_at > now, Lease.rater_id != rater.id,
                       Task.item_id.in_(item_ids))
                .group_by(Task.item_id)):
            held[int(item_id)] = int(n)
    deferred = set(session.scalars(select(Deferral.task_id).where(
        Deferral.rater_id == rater.id)))
    free = [t for t in tasks
            if t.item_id not in mine and t.item_id not in settled
            and t.id not in (exclude or set())
            and n_grades.get(t.item_id, 0) + held.get(t.item_id, 0) < t.grades_wanted]
    free.sort(key=lambda t: (t.id in deferred, n_grades.get(t.item_id, 0), t.position, t.id))
    return free


def lease(session: Session, task: Task, rater: Rater) -> Lease:
    """Hold ``task`` for ``rater`` for :data:`LEASE` from now (renewed when held)."""
    row = session.scalar(select(Lease).where(Lease.task_id == task.id,
                                             Lease.rater_id == rater.id))
    until = utcnow() + LEASE
    if row is None:
        row = Lease(task_id=task.id, rater_id=rater.id, expires_at=until, created_at=utcnow())
        session.add(row)
    else:
        row.expires_at = until
    session.flush()
    return row


def require_ready(ev: Evaluation) -> None:
    """Grading needs a run evaluation (ConflictError otherwise)."""
    if ev.status != "ready":
        raise ConflictError(f"evaluation #{ev.id} is {ev.status}: run it before grading")


def next_tasks(store: Store, actor: Actor, evaluation_id: int, n: int = 1,
               exclude: Sequence[int] = ()) -> list[TaskView]:
    """Lease and return up to ``n`` tasks for the actor (their live leases first)."""
    if n < 1 or n > MAX_BATCH:
        raise OptionError(f"ask for 1 to {MAX_BATCH} tasks, not {n}")

    def work(session: Session) -> list[TaskView]:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        require_ready(ev)
        rater = rater_for(session, actor)
        session.execute(delete(Lease).where(Lease.expires_at <= utcnow()))
        chosen = candidates(session, ev, rater, set(exclude))[:n]
        # a task this rater already leases comes first (a reload shows the same result)
        leased = set(session.scalars(select(Lease.task_id).where(Lease.rater_id == rater.id)))
        chosen.sort(key=lambda t: t.id not in leased)
        return [view(session, ev, t, rater, lease(session, t, rater)) for t in chosen]

    return store.write(work)


def next_task(store: Store, actor: Actor, evaluation_id: int,
              exclude: Sequence[int] = ()) -> TaskView | None:
    """The task the actor should grade now (leased to them), or None when none is left."""
    found = next_tasks(store, actor, evaluation_id, 1, exclude)
    return found[0] if found else None


def _hit(session: Session, ev: Evaluation, task: Task, doc_id: str) -> SnapshotHit | None:
    snapshot_id = latest_snapshot_id(session, ev.id)
    if snapshot_id is None:
        return None
    return session.scalar(
        select(SnapshotHit).join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
        .where(SnapshotQuery.snapshot_id == snapshot_id,
               SnapshotQuery.query_row_id == task.query_row_id, SnapshotHit.doc_id == doc_id)
        .order_by(SnapshotHit.rank).limit(1))


def own_grade(session: Session, item_id: int, rater: Rater, scale: str) -> Grade | None:
    """The rater's grade of the item that counts now (None when they have none)."""
    return session.scalar(select(Grade).where(Grade.item_id == item_id, Grade.rater_id == rater.id,
                                              Grade.active, Grade.scale == scale))


def _grade_dict(grade: Grade | None) -> dict[str, Any] | None:
    if grade is None:
        return None
    return {"grade_id": grade.id, "value": grade.value, "reason": grade.reason,
            "explanation": grade.explanation, "created_at": grade.created_at.isoformat()}


def view(session: Session, ev: Evaluation, task: Task, rater: Rater,
         held: Lease | None) -> TaskView:
    """The task as ``rater`` sees it."""
    item = session.get(Item, task.item_id)
    query = session.get(Query, task.query_row_id)
    if item is None or query is None:
        raise NotFoundError(f"task #{task.id} lost its result")
    hit = _hit(session, ev, task, item.doc_id)
    shown = task.shown or {}  # a result added from a try or by hand: what was kept of it
    deferred = session.scalar(select(Deferral.id).where(Deferral.task_id == task.id,
                                                        Deferral.rater_id == rater.id))
    return TaskView(
        task_id=task.id, evaluation_id=ev.id, position=task.position, query_id=query.query_id,
        query_text=query.text, need=query.need, doc_id=item.doc_id,
        title=hit.title if hit else shown.get("title"),
        snippet=hit.snippet if hit else shown.get("snippet"),
        url=hit.url if hit else shown.get("url"), image=hit.image if hit else shown.get("image"),
        fields=dict(hit.fields) if hit else {},
        my_grade=_grade_dict(own_grade(session, item.id, rater, ev.scale)),
        deferred=deferred is not None,
        lease_until=held.expires_at.isoformat() if held else None,
        scale=scale_info(scale_of(ev)), origin=task.origin or "snapshot")


def task_row(session: Session, actor: Actor, task_id: int) -> tuple[Task, Evaluation]:
    """The task and its evaluation, when the actor may grade it (404/403 otherwise)."""
    task = session.get(Task, task_id)
    if task is None:
        raise NotFoundError(f"no task #{task_id}")
    ev = evaluation_row(session, actor, task.evaluation_id, "judge")
    return task, ev


def task_view(store: Store, actor: Actor, task_id: int, *, hold: bool = True) -> TaskView:
    """One task as the actor sees it (leased to them when it still wants their grade)."""

    def work(session: Session) -> TaskView:
        task, ev = task_row(session, actor, task_id)
        rater = rater_for(session, actor)
        held = None
        if hold and ev.status == "ready" and own_grade(
                session, task.item_id, rater, ev.scale) is None:
            held = lease(session, task, rater)
        return view(session, ev, task, rater, held)

    return store.write(work)


def release(store: Store, actor: Actor, task_id: int) -> None:
    """Give a leased task back to the pool (the grader moved on without grading it)."""

    def work(session: Session) -> None:
        task, _ = task_row(session, actor, task_id)
        rater = rater_for(session, actor)
        session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))

    store.write(work)


def _walk(session: Session, ev: Evaluation, rater_id: int) -> list[tuple[int, Grade]]:
    """(task id, active grade) of the rater's graded tasks, by when they first graded each."""
    first = (select(Grade.item_id, func.min(Grade.id).label("first"))
             .where(Grade.rater_id == rater_id, Grade.scale == ev.scale)
             .group_by(Grade.item_id).subquery())
    rows = session.execute(
        select(Task.id, Grade)
        .join(Grade, Grade.item_id == Task.item_id)
        .join(first, first.c.item_id == Task.item_id)
        .where(Task.evaluation_id == ev.id, Grade.rater_id == rater_id, Grade.active,
               Grade.scale == ev.scale)
        .order_by(first.c.first, Task.id)).all()
    return [(int(t), g) for t, g in rows]


def graded_walk(store: Store, actor: Actor, evaluation_id: int) -> list[int]:
    """The tasks the actor graded in the evaluation, in the order they first graded them.

    ``k`` walks back along this list and ``j`` forward; regrading a task
    keeps its place (the order is by the first grade of each result).
    """
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
        return [] if rater is None else [t for t, _ in _walk(session, ev, rater.id)]


def my_grades(store: Store, actor: Actor, evaluation_id: int) -> list[dict[str, Any]]:
    """The actor's active grades of the evaluation, in :func:`graded_walk` order."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
        if rater is None:
            return []
        return [{"task_id": t, "value": g.value, "reason": g.reason, "grade_id": g.id}
                for t, g in _walk(session, ev, rater.id)]


def open_tasks(session: Session, ev: Evaluation, rater: Rater) -> list[Task]:
    """The tasks ``rater`` could still grade (no lease taken), best first."""
    return candidates(session, ev, rater)


def progress(store: Store, actor: Actor, evaluation_id: int) -> dict[str, int]:
    """How much is done and left, for the actor and for the evaluation.

    ``mine``: results the actor graded here; ``left_for_me``: results they
    may still take (others' leases aside); ``slots``/``filled``: grades
    wanted over all results / counted grades given (an adjudicated result
    counts as full); ``results``/``complete``: results, and those with
    every grade they want.
    """
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        tasks = list(session.scalars(select(Task).where(Task.evaluation_id == ev.id)))
        item_ids = [t.item_id for t in tasks]
        n_grades = counts(session, item_ids, ev.scale)
        settled = closed(session, item_ids, ev.scale)
        filled = complete = 0
        for t in tasks:
            got = t.grades_wanted if t.item_id in settled else min(
                n_grades.get(t.item_id, 0), t.grades_wanted)
            filled += got
            complete += got >= t.grades_wanted
        rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
        mine = left = 0
        if rater is not None:
            mine = len(_walk(session, ev, rater.id))
            if ev.status == "ready":
                left = len(candidates(session, ev, rater))
        elif ev.status == "ready":
            left = sum(1 for t in tasks if t.item_id not in settled
                       and n_grades.get(t.item_id, 0) < t.grades_wanted)
        return {"mine": mine, "left_for_me": left, "results": len(tasks),
                "complete": complete, "slots": sum(t.grades_wanted for t in tasks),
                "filled": filled}


def query_results(store: Store, actor: Actor, evaluation_id: int,
                  query_id: str) -> list[TaskView]:
    """Every task of one query, by position, with the actor's own grades (the list mode)."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
        if rater is None:
            rater = Rater(id=-1, name=actor.name, kind="person")
        tasks = session.scalars(select(Task).join(Query, Task.query_row_id == Query.id)
                                .where(Task.evaluation_id == ev.id, Query.query_id == query_id)
                                .order_by(Task.position)).all()
        if not tasks:
            raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
        return [view(session, ev, t, rater, None) for t in tasks]


def query_ids(store: Store, actor: Actor, evaluation_id: int) -> list[str]:
    """The evaluation's query ids that have tasks, in the query set's order."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        return list(dict.fromkeys(session.scalars(
            select(Query.query_id).join(Task, Task.query_row_id == Query.id)
            .where(Task.evaluation_id == ev.id).order_by(Query.position))))
