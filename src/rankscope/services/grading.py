"""Grading: who grades what next, and grades in, undone, put off or "can't tell".

Assignment (:func:`next_task`): a grader gets a result of the evaluation
they have not graded, that still wants grades (its item's grades on the
evaluation's scale plus the other graders' live leases are fewer than the
grades wanted), results with the fewest grades first, then the highest
positions (rank 1 first); results they put off ("judge later") come after
every other. Taking a task leases it for :data:`LEASE` so two graders do
not fill the last slot twice; a lease that expires returns the task to the
pool. A grader never sees another's grade.

Submitting (:func:`submit_grade`, :func:`submit_batch`) runs in one
transaction that locks the item's row (``SELECT ... FOR UPDATE`` on
PostgreSQL; on SQLite every write goes through the one writer), counts the
item's grades and refuses the grade when the result has all it wants
(:class:`~rankscope.errors.ConflictError`), so the limit is never exceeded
however many graders submit at once. A grader regrading a result replaces
their own grade (the old row is kept, superseded). "Can't tell" is a grade
without a value and with a reason: it fills a slot (the grader saw the
result) and aggregates as "seen, not graded" (seed 004's null). "Judge
later" is not a grade. Undo retracts the grader's latest grade of the
evaluation (the row stays, with ``retracted_at``) and gives the task back
to them.
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
    GradeBatch,
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
    "GradeInput",
    "TaskView",
    "judge_later",
    "my_grades",
    "next_task",
    "next_tasks",
    "query_results",
    "release",
    "submit_batch",
    "submit_grade",
    "task_view",
    "undo_last",
]

LEASE = timedelta(minutes=10)
MAX_BATCH = 500
SOURCES = ("app", "api", "llm")


@dataclass(frozen=True)
class GradeInput:
    """One grade to give: a value on the scale, or None with a reason (can't tell)."""

    task_id: int
    value: float | None
    reason: str | None = None
    explanation: str | None = None


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


def _counts(session: Session, item_ids: Sequence[int], scale: str) -> dict[int, int]:
    if not item_ids:
        return {}
    rows = session.execute(select(Grade.item_id, func.count(Grade.id))
                           .where(Grade.item_id.in_(list(item_ids)), Grade.active,
                                  Grade.scale == scale)
                           .group_by(Grade.item_id)).all()
    return {int(i): int(n) for i, n in rows}


def _closed(session: Session, item_ids: Sequence[int], scale: str) -> set[int]:
    """Items a curator adjudicated on this scale (no more grades wanted)."""
    if not item_ids:
        return set()
    return set(session.scalars(select(Adjudication.item_id).where(
        Adjudication.item_id.in_(list(item_ids)), Adjudication.scale == scale)))


def _candidates(session: Session, ev: Evaluation, rater: Rater,
                exclude: set[int] | None = None) -> list[Task]:
    """The tasks this rater may take now, best first."""
    now = utcnow()
    tasks = list(session.scalars(select(Task).where(Task.evaluation_id == ev.id)))
    item_ids = [t.item_id for t in tasks]
    counts = _counts(session, item_ids, ev.scale)
    closed = _closed(session, item_ids, ev.scale)
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
            if t.item_id not in mine and t.item_id not in closed
            and t.id not in (exclude or set())
            and counts.get(t.item_id, 0) + held.get(t.item_id, 0) < t.grades_wanted]
    free.sort(key=lambda t: (t.id in deferred, counts.get(t.item_id, 0), t.position, t.id))
    return free


def _lease(session: Session, task: Task, rater: Rater) -> Lease:
    lease = session.scalar(select(Lease).where(Lease.task_id == task.id,
                                               Lease.rater_id == rater.id))
    until = utcnow() + LEASE
    if lease is None:
        lease = Lease(task_id=task.id, rater_id=rater.id, expires_at=until, created_at=utcnow())
        session.add(lease)
    else:
        lease.expires_at = until
    session.flush()
    return lease


def _ready(ev: Evaluation) -> None:
    if ev.status != "ready":
        raise ConflictError(f"evaluation #{ev.id} is {ev.status}: run it before grading")


def next_tasks(store: Store, actor: Actor, evaluation_id: int, n: int = 1,
               exclude: Sequence[int] = ()) -> list[TaskView]:
    """Lease and return up to ``n`` tasks for the actor (their live leases first)."""
    if n < 1 or n > MAX_BATCH:
        raise OptionError(f"ask for 1 to {MAX_BATCH} tasks, not {n}")

    def work(session: Session) -> list[TaskView]:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        _ready(ev)
        rater = rater_for(session, actor)
        session.execute(delete(Lease).where(Lease.expires_at <= utcnow()))
        chosen: list[Task] = []
        skip = set(exclude)
        for task in _candidates(session, ev, rater, skip):
            if len(chosen) == n:
                break
            chosen.append(task)
        # a task this rater already leases comes first (a reload shows the same result)
        leased = set(session.scalars(select(Lease.task_id).where(Lease.rater_id == rater.id)))
        chosen.sort(key=lambda t: t.id not in leased)
        return [_view(session, ev, t, rater, _lease(session, t, rater)) for t in chosen]

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


def _own_grade(session: Session, item_id: int, rater: Rater, scale: str) -> Grade | None:
    return session.scalar(select(Grade).where(Grade.item_id == item_id, Grade.rater_id == rater.id,
                                              Grade.active, Grade.scale == scale))


def _grade_dict(grade: Grade | None) -> dict[str, Any] | None:
    if grade is None:
        return None
    return {"grade_id": grade.id, "value": grade.value, "reason": grade.reason,
            "explanation": grade.explanation, "created_at": grade.created_at.isoformat()}


def _view(session: Session, ev: Evaluation, task: Task, rater: Rater,
          lease: Lease | None) -> TaskView:
    item = session.get(Item, task.item_id)
    query = session.get(Query, task.query_row_id)
    if item is None or query is None:
        raise NotFoundError(f"task #{task.id} lost its result")
    hit = _hit(session, ev, task, item.doc_id)
    deferred = session.scalar(select(Deferral.id).where(Deferral.task_id == task.id,
                                                        Deferral.rater_id == rater.id))
    return TaskView(
        task_id=task.id, evaluation_id=ev.id, position=task.position, query_id=query.query_id,
        query_text=query.text, need=query.need, doc_id=item.doc_id,
        title=hit.title if hit else None, snippet=hit.snippet if hit else None,
        url=hit.url if hit else None, image=hit.image if hit else None,
        fields=dict(hit.fields) if hit else {},
        my_grade=_grade_dict(_own_grade(session, item.id, rater, ev.scale)),
        deferred=deferred is not None,
        lease_until=lease.expires_at.isoformat() if lease else None,
        scale=scale_info(scale_of(ev)))


def _task(session: Session, actor: Actor, task_id: int) -> tuple[Task, Evaluation]:
    task = session.get(Task, task_id)
    if task is None:
        raise NotFoundError(f"no task #{task_id}")
    ev = evaluation_row(session, actor, task.evaluation_id, "judge")
    return task, ev


def task_view(store: Store, actor: Actor, task_id: int, *, lease: bool = True) -> TaskView:
    """One task as the actor sees it (leased to them when it still wants their grade)."""

    def work(session: Session) -> TaskView:
        task, ev = _task(session, actor, task_id)
        rater = rater_for(session, actor)
        held = None
        if lease and ev.status == "ready" and _own_grade(
                session, task.item_id, rater, ev.scale) is None:
            held = _lease(session, task, rater)
        return _view(session, ev, task, rater, held)

    return store.write(work)


def _check_value(scale: Scale, value: float | None, reason: str | None) -> None:
    if value is None:
        if not (reason or "").strip():
            raise OptionError("can't tell needs a reason")
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not scale.contains(
            float(value)):
        raise OptionError(f"grade {value!r} is outside the {scale.describe()} scale")


def _submit_in(session: Session, rater: Rater, task: Task, ev: Evaluation, given: GradeInput,
               source: str) -> Grade:
    """Record one grade inside the caller's transaction (the limit checked under a lock)."""
    _check_value(scale_of(ev), given.value, given.reason)
    # Lock the item: concurrent submits of the same result wait here (PostgreSQL; SQLite
    # has one writer anyway), so the count below is the count at commit.
    session.execute(select(Item.id).where(Item.id == task.item_id).with_for_update())
    if _closed(session, [task.item_id], ev.scale):
        raise ConflictError(f"task #{task.id}: a curator settled this result's grade")
    own = _own_grade(session, task.item_id, rater, ev.scale)
    if own is None:
        n = _counts(session, [task.item_id], ev.scale).get(task.item_id, 0)
        if n >= task.grades_wanted:
            raise ConflictError(f"task #{task.id}: this result has the {task.grades_wanted} "
                                f"grade(s) it wants")
    now = utcnow()
    value = None if given.value is None else float(given.value)
    reason = (given.reason or "").strip() or None if value is None else None
    grade = Grade(item_id=task.item_id, rater_id=rater.id, scale=ev.scale, value=value,
                  reason=reason, explanation=(given.explanation or "").strip() or None,
                  source=source, evaluation_id=ev.id, active=True, created_at=now)
    if own is not None:  # a regrade: the old row stays, superseded by the new one
        own.active = False
        session.flush()
    session.add(grade)
    session.flush()
    if own is not None:
        own.superseded_by = grade.id
    session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))
    session.execute(delete(Deferral).where(Deferral.task_id == task.id,
                                           Deferral.rater_id == rater.id))
    return grade


def submit_grade(store: Store, actor: Actor, given: GradeInput, *,
                 source: str = "app") -> dict[str, Any]:
    """Grade one task; the answer is sent only after the commit.

    Returns ``{"grade_id", "task_id", "value", "grades", "wanted"}``.

    Raises
    ------
    ConflictError
        The result has every grade it wants, or was adjudicated.
    OptionError
        A value outside the scale, or "can't tell" without a reason.
    """
    if source not in SOURCES:
        raise OptionError(f"source must be one of {', '.join(SOURCES)}")

    def work(session: Session) -> dict[str, Any]:
        task, ev = _task(session, actor, given.task_id)
        _ready(ev)
        rater = rater_for(session, actor)
        grade = _submit_in(session, rater, task, ev, given, source)
        n = _counts(session, [task.item_id], ev.scale).get(task.item_id, 0)
        return {"grade_id": grade.id, "task_id": task.id, "value": grade.value,
                "grades": n, "wanted": task.grades_wanted}

    return store.write(work)


def submit_batch(store: Store, actor: Actor, evaluation_id: int, batch_id: str,
                 grades: Sequence[GradeInput], *, source: str = "api") -> dict[str, Any]:
    """Grade several tasks in one transaction, idempotently by the client's ``batch_id``.

    Each grade is accepted or refused on its own (a refused one names why);
    the answer is stored with the batch, so a retried batch (same id, same
    grader) gets the first answer again and counts nothing twice.
    """
    batch_id = batch_id.strip()
    if not batch_id or len(batch_id) > 200:
        raise OptionError("a batch needs an id of 1 to 200 characters (the client's, for "
                          "retries)")
    if len(grades) > MAX_BATCH:
        raise OptionError(f"a batch holds at most {MAX_BATCH} grades")

    def work(session: Session) -> dict[str, Any]:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        # lock the (rater, batch) pair's row if it exists: a retry racing the first try waits
        seen = session.scalar(select(GradeBatch).where(GradeBatch.rater_id == rater.id,
                                                       GradeBatch.batch_key == batch_id)
                              .with_for_update())
        if seen is not None:
            if seen.evaluation_id != ev.id:
                raise ConflictError(f"batch {batch_id!r} was sent for another evaluation")
            return {**seen.response, "replayed": True}
        _ready(ev)
        results: list[dict[str, Any]] = []
        for given in grades:
            task = session.get(Task, given.task_id)
            if task is None or task.evaluation_id != ev.id:
                results.append({"task_id": given.task_id, "ok": False,
                                "error": "no such task in this evaluation"})
                continue
            try:
                with session.begin_nested():
                    grade = _submit_in(session, rater, task, ev, given, source)
                results.append({"task_id": task.id, "ok": True, "grade_id": grade.id})
            except (ConflictError, OptionError) as exc:
                results.append({"task_id": given.task_id, "ok": False, "error": str(exc)})
        response = {"batch_id": batch_id, "evaluation_id": ev.id,
                    "accepted": sum(r["ok"] for r in results), "results": results}
        session.add(GradeBatch(rater_id=rater.id, batch_key=batch_id, evaluation_id=ev.id,
                               response=response, created_at=utcnow()))
        return {**response, "replayed": False}

    from sqlalchemy.exc import IntegrityError

    try:
        return store.write(work)
    except IntegrityError:  # the same batch committed by a concurrent retry: answer as it did
        return store.write(work)


def undo_last(store: Store, actor: Actor, evaluation_id: int) -> int | None:
    """Retract the actor's latest grade of the evaluation; the task it was for (or None).

    The row stays (``retracted_at``); a grade it had replaced counts again.
    """

    def work(session: Session) -> int | None:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        grade = session.scalar(select(Grade).where(
            Grade.rater_id == rater.id, Grade.evaluation_id == ev.id, Grade.active,
            Grade.source.in_(SOURCES)).order_by(Grade.id.desc()).limit(1))
        if grade is None:
            return None
        session.execute(select(Item.id).where(Item.id == grade.item_id).with_for_update())
        grade.active = False
        grade.retracted_at = utcnow()
        session.flush()
        previous = session.scalar(select(Grade).where(Grade.superseded_by == grade.id))
        if previous is not None:
            previous.active, previous.superseded_by = True, None
        task = session.scalar(select(Task).where(Task.evaluation_id == ev.id,
                                                 Task.item_id == grade.item_id))
        if task is None:
            return None
        if previous is None:
            _lease(session, task, rater)
        return task.id

    return store.write(work)


def judge_later(store: Store, actor: Actor, task_id: int) -> None:
    """Put a task off: it comes back to this grader after every other (not a grade)."""

    def work(session: Session) -> None:
        task, _ = _task(session, actor, task_id)
        rater = rater_for(session, actor)
        if session.scalar(select(Deferral.id).where(Deferral.task_id == task.id,
                                                    Deferral.rater_id == rater.id)) is None:
            session.add(Deferral(task_id=task.id, rater_id=rater.id, created_at=utcnow()))
        session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))

    store.write(work)


def release(store: Store, actor: Actor, task_id: int) -> None:
    """Give a leased task back to the pool (the grader moved on without grading it)."""

    def work(session: Session) -> None:
        task, _ = _task(session, actor, task_id)
        rater = rater_for(session, actor)
        session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))

    store.write(work)


def my_grades(store: Store, actor: Actor, evaluation_id: int) -> list[dict[str, Any]]:
    """The actor's active grades of the evaluation, oldest first (``k`` walks back these)."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
        if rater is None:
            return []
        rows = session.execute(
            select(Task.id, Grade.value, Grade.reason, Grade.id)
            .join(Grade, Grade.item_id == Task.item_id)
            .where(Task.evaluation_id == ev.id, Grade.rater_id == rater.id, Grade.active,
                   Grade.scale == ev.scale).order_by(Grade.id)).all()
        return [{"task_id": t, "value": v, "reason": r, "grade_id": g} for t, v, r, g in rows]


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
        return [_view(session, ev, t, rater, None) for t in tasks]
