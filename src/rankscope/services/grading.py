"""Grades in: one or a batch, regraded, undone, put off ("judge later") or "can't tell".

Who grades what next is :mod:`rankscope.services.assignment`; this module
records what graders answer. Submitting (:func:`submit_grade`,
:func:`submit_batch`) runs in one transaction that locks the item's row
(``SELECT ... FOR UPDATE`` on PostgreSQL; on SQLite every write goes through
the one writer), counts the item's counted grades and refuses the grade when
the result has all it wants (:class:`~rankscope.errors.ConflictError`), so
the limit is never exceeded however many graders submit at once. A grader
regrading a result replaces their own grade (the old row is kept,
superseded). "Can't tell" is a grade without a value and with a reason: it
fills a slot (the grader saw the result) and aggregates as "seen, not
graded" (seed 004's null). "Judge later" is not a grade. Undo retracts the
grader's latest grade of the evaluation (the row stays, with
``retracted_at``) and gives the task back to them.

An LLM judge grades through :func:`submit_batch` with ``source="llm"`` and
``as_rater`` (its rater, of kind ``llm``), sent by a curator of the
evaluation; when its rater does not count, its grades fill no slot.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Integer, Text, bindparam, delete, exists, func, insert, select

from rankscope.errors import ConflictError, ForbiddenError, OptionError
from rankscope.services.accounts import rater_for
from rankscope.services.assignment import (
    MAX_BATCH,
    hold_items,
    lease_task,
    require_ready,
    row_locks,
)
from rankscope.services.campaigns import evaluation_access, evaluation_row
from rankscope.services.limits import (
    MAX_EXPLANATION,
    MAX_NAME,
    MAX_NOTE,
    check_spec,
    spec_field,
)
from rankscope.services.task_views import scale_of, task_row
from rankscope.store.models import utcnow
from rankscope.store.models_app import (
    Adjudication,
    Deferral,
    Evaluation,
    Grade,
    GradeBatch,
    Item,
    Lease,
    LLMJudge,
    Rater,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy import CursorResult, Delete, Insert, Select, Table
    from sqlalchemy.orm import Session

    from rankscope.judgments.scales import Scale
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "SOURCES",
    "GradeBatchSpec",
    "GradeInput",
    "Undone",
    "grade_in",
    "grade_task",
    "judge_later",
    "later_in",
    "submit_batch",
    "submit_grade",
    "undo_grade",
    "undo_in",
    "undo_last",
    "undo_outcome_in",
]

SOURCES = ("app", "api", "llm")


@dataclass(frozen=True)
class GradeInput:
    """One grade: a value on the scale, or null with a reason (can't tell).

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    task_id: int = spec_field(doc="The task graded.", is_id=True)
    value: float | None = spec_field(None, doc="A number on the evaluation's scale (true is "
                                     "not one); null: can't tell, with a reason.")
    reason: str | None = spec_field(None, doc="Why it can't be told (with a null value).",
                                    limit=MAX_NOTE, label="the reason")
    explanation: str | None = spec_field(None, doc="The grader's explanation.",
                                         limit=MAX_EXPLANATION, label="the explanation")


@dataclass(frozen=True)
class GradeBatchSpec:
    """Grades in one transaction; ``batch_id`` (the client's) makes a retry harmless.

    Its limits are written once, here: :func:`submit_batch` checks them and the
    API's input model is derived from them (each grade's from :class:`GradeInput`).
    """

    batch_id: str = spec_field(doc="The client's id of the batch: the same id again replays "
                               "the first answer.", limit=MAX_NAME, label="the batch id")
    grades: Sequence[GradeInput] = spec_field(
        doc="The grades, each accepted or refused on its own.", items=MAX_BATCH,
        label="a batch")


def _check_value(scale: Scale, value: float | None, reason: str | None) -> None:
    if value is None:
        if not (reason or "").strip():
            raise OptionError("can't tell needs a reason")
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not scale.contains(
            float(value)):
        raise OptionError(f"grade {value!r} is outside the {scale.describe()} scale")


@dataclass(frozen=True)
class _Given:
    """A grade recorded: its id and value, whether it replaced the grader's own, the
    result's counted grades after it."""

    grade_id: int
    value: float | None
    regrade: bool
    counted: int


@functools.cache
def _batch_statement() -> Select[GradeBatch]:
    """The batch ``key`` of rater ``rater``, its row locked (a retry racing the first try
    waits): built once."""
    return select(GradeBatch).where(GradeBatch.rater_id == bindparam("rater", type_=Integer),
                                    GradeBatch.batch_key == bindparam("key", type_=Text)
                                    ).with_for_update()


@functools.cache
def _tasks_statement(hold: bool) -> Select[Task]:
    """The tasks ``ids`` of evaluation ``ev``; ``hold``: their items held in the same
    statement, in the items' id order (:func:`hold_items`' lock and order, a round trip
    fewer a grade): built once."""
    query = select(Task).where(Task.id.in_(bindparam("ids", expanding=True)),
                               Task.evaluation_id == bindparam("ev", type_=Integer))
    if not hold:
        return query
    return (query.join(Item, Item.id == Task.item_id).order_by(Item.id)
            .with_for_update(of=Item))


@functools.cache
def _state_statement() -> Select[bool, int | None, int, bool, bool]:
    """What a grade of task ``task`` (item ``item``) by rater ``rater`` on ``scale`` must
    know, in one statement built once: whether a curator settled the item, the rater's
    own grade, the counted grades, and whether the rater leased or put off the task."""
    item, rater, task = (bindparam(name, type_=Integer) for name in ("item", "rater", "task"))
    scale = bindparam("scale", type_=Text)
    return select(
        exists().where(Adjudication.item_id == item, Adjudication.scale == scale),
        select(Grade.id).where(Grade.item_id == item, Grade.rater_id == rater,
                               Grade.active, Grade.scale == scale).scalar_subquery(),
        select(func.count(Grade.id)).join(Rater, Grade.rater_id == Rater.id)
        .where(Grade.item_id == item, Grade.active, Grade.scale == scale,
               Rater.counts).scalar_subquery(),
        exists().where(Lease.task_id == task, Lease.rater_id == rater),
        exists().where(Deferral.task_id == task, Deferral.rater_id == rater))


@functools.cache
def _insert_statement(model: type[Grade | GradeBatch], lease_ended: bool) -> Insert:
    """A Core insert of one row of ``model``; ``lease_ended``: the lease of task
    ``lease_task`` held by rater ``lease_rater`` deleted by the same statement (a
    data-modifying ``WITH``, PostgreSQL's: run once whether read or not): built once."""
    table = cast("Table", model.__table__)
    if not lease_ended:
        return insert(table)
    # the id returned by name: SQLAlchemy's implicit RETURNING is off with a WITH
    return insert(table).add_cte(_lease_delete().cte("lease_ended")).returning(table.c.id)


@functools.cache
def _lease_delete() -> Delete:
    """The lease of task ``lease_task`` held by rater ``lease_rater``: built once."""
    return delete(Lease).where(Lease.task_id == bindparam("lease_task", type_=Integer),
                               Lease.rater_id == bindparam("lease_rater", type_=Integer))


def _insert_row(session: Session, model: type[Grade | GradeBatch], row: dict[str, Any],
                lease: tuple[int, int] | None = None) -> int:
    """Insert one row of ``model`` with a Core statement in the session's transaction; its
    id (the ORM's unit of work, for a row nothing reads back, was a tenth of a grade's
    SQLAlchemy time). ``lease``: the (task, rater) lease deleted first, by the same
    statement on PostgreSQL (a round trip fewer), by its own elsewhere."""
    together = lease is not None and session.get_bind().dialect.name == "postgresql"
    if lease is not None:
        where = {"lease_task": lease[0], "lease_rater": lease[1]}
        if together:
            row = {**row, **where}
        else:
            session.execute(_lease_delete(), where)
    result = cast("CursorResult[Any]",
                  session.execute(_insert_statement(model, together), row))
    if together:
        return int(result.scalar_one())
    (row_id,) = cast("tuple[int]", result.inserted_primary_key)  # one row, one key
    return row_id


def _submit_in(session: Session, rater: Rater, task: Task, ev: Evaluation, given: GradeInput,
               source: str, *, held: bool = False) -> _Given:
    """Record one grade inside the caller's transaction (the limit checked under a lock;
    ``held``: the caller holds the task's item already)."""
    check_spec(given)
    _check_value(scale_of(ev), given.value, given.reason)
    # Lock the item: concurrent submits of the same result wait here (PostgreSQL; SQLite
    # has one writer anyway); what is read next (its own statement, so read after the
    # wait) is the state at commit. Nothing is written before the grade is known to be
    # accepted, so a refused one leaves no trace without a savepoint around it.
    if not held:
        hold_items(session, [task.item_id])
    settled, own_id, n, leased, deferred = session.execute(_state_statement(), {
        "item": task.item_id, "rater": rater.id, "scale": ev.scale, "task": task.id}).one()
    if settled:
        raise ConflictError(f"task #{task.id}: a curator settled this result's grade")
    if own_id is None and rater.counts and n >= task.grades_wanted:
        raise ConflictError(f"task #{task.id}: this result has the {task.grades_wanted} "
                            f"grade(s) it wants")
    # the grader's own lease and deferral of the task end here (theirs: only they add or
    # remove them, so what was just read holds; no statement for what is not there)
    if deferred:
        session.execute(delete(Deferral).where(Deferral.task_id == task.id,
                                               Deferral.rater_id == rater.id))
    now = utcnow()
    value = None if given.value is None else float(given.value)
    reason = (given.reason or "").strip() or None if value is None else None
    own = session.get(Grade, own_id) if own_id is not None else None
    if own is not None:  # a regrade: the old row stays, superseded by the new one
        own.active = False
        session.flush()
    grade_id = _insert_row(session, Grade, {
        "item_id": task.item_id, "rater_id": rater.id, "scale": ev.scale, "value": value,
        "reason": reason, "explanation": (given.explanation or "").strip() or None,
        "source": source, "evaluation_id": ev.id, "active": True, "created_at": now},
        lease=(task.id, rater.id) if leased else None)
    if own is not None:
        own.superseded_by = grade_id
    return _Given(grade_id, value, own is not None, int(n) + (own is None and rater.counts))


def submit_grade(store: Store, actor: Actor, given: GradeInput, *,
                 source: str = "app") -> dict[str, Any]:
    """Grade one task; the answer is sent only after the commit.

    Returns ``{"grade_id", "task_id", "value", "grades", "wanted", "regrade"}``.

    Raises
    ------
    ConflictError
        The result has every grade it wants, or was adjudicated.
    OptionError
        A value outside the scale, or "can't tell" without a reason.
    """
    if source not in ("app", "api"):
        raise OptionError("a person's grade comes from the app or the api")
    return store.write(lambda session: grade_in(session, actor, given, source))


def grade_in(session: Session, actor: Actor, given: GradeInput,
             source: str = "app") -> dict[str, Any]:
    """:func:`submit_grade` inside the caller's transaction."""
    task, ev = task_row(session, actor, given.task_id)
    return grade_task(session, rater_for(session, actor), task, ev, given, source)


def grade_task(session: Session, rater: Rater, task: Task, ev: Evaluation, given: GradeInput,
               source: str = "app") -> dict[str, Any]:
    """:func:`grade_in` once the caller found the task and checked who may grade it."""
    require_ready(ev)
    given_ = _submit_in(session, rater, task, ev, given, source)
    return {"grade_id": given_.grade_id, "task_id": task.id, "value": given_.value,
            "grades": given_.counted, "wanted": task.grades_wanted, "regrade": given_.regrade}


def _batch_rater(session: Session, actor: Actor, ev: Evaluation, source: str,
                 as_rater: int | None, own: Rater | None) -> Rater:
    """Who grades: the actor (``own``: their rater row, if read already), or an LLM judge."""
    if as_rater is None:
        if source == "llm":
            raise OptionError("grades from an LLM judge name its rater (as_rater)")
        return own or rater_for(session, actor)
    if source != "llm":
        raise OptionError("only an LLM judge's grades are sent for another rater")
    evaluation_row(session, actor, ev.id, "curator")  # a curator runs the judge
    rater = session.get(Rater, as_rater)
    attached = session.scalar(select(LLMJudge.id).where(LLMJudge.evaluation_id == ev.id,
                                                        LLMJudge.rater_id == as_rater))
    if rater is None or rater.kind != "llm" or attached is None:
        raise ForbiddenError(f"rater #{as_rater} is not an LLM judge of evaluation #{ev.id}")
    return rater


_ANSWER_KEYS = ("batch_id", "evaluation_id", "accepted", "results")
_RESULT_KEYS = ("task_id", "ok", "grade_id", "error")


def _in_answer_order(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored batch answer with its keys in the first answer's order: PostgreSQL's jsonb
    gives keys back in its own order, and a retry's answer must be the first one's bytes."""
    def ordered(row: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        return {**{key: row[key] for key in keys if key in row}, **row}  # any other key after

    answer = ordered(stored, _ANSWER_KEYS)
    answer["results"] = [ordered(item, _RESULT_KEYS) for item in stored["results"]]
    return answer


def submit_batch(store: Store, actor: Actor, evaluation_id: int, batch_id: str,
                 grades: Sequence[GradeInput], *, source: str = "api",
                 as_rater: int | None = None) -> dict[str, Any]:
    """Grade several tasks in one transaction, idempotently by the client's ``batch_id``.

    Each grade is accepted or refused on its own (a refused one names why);
    the answer is stored with the batch, so a retried batch (same id, same
    grader) gets the first answer again and counts nothing twice.

    Parameters
    ----------
    source : {"api", "app", "llm"}
        Where the grades come from.
    as_rater : int, optional
        With ``source="llm"``: the rater (kind ``llm``) of an LLM judge
        attached to the evaluation; the actor must be one of its curators.


    Raises
    ------
    InputError
        The batch past its limits (:class:`GradeBatchSpec`): an id too long, too many
        grades, a grade's text too long.
    """
    if source not in SOURCES:
        raise OptionError(f"source must be one of {', '.join(SOURCES)}")
    check_spec(GradeBatchSpec(batch_id, grades))
    batch_id = batch_id.strip()
    if not batch_id:
        raise OptionError("a batch needs an id (the client's, for retries)")

    def work(session: Session) -> dict[str, Any]:
        ev, _, own = evaluation_access(session, actor, evaluation_id, "judge")
        rater = _batch_rater(session, actor, ev, source, as_rater, own)
        # lock the (rater, batch) pair's row if it exists: a retry racing the first try waits
        seen = session.scalar(_batch_statement(), {"rater": rater.id, "key": batch_id})
        if seen is not None:
            if seen.evaluation_id != ev.id:
                raise ConflictError(f"batch {batch_id!r} was sent for another evaluation")
            return {**_in_answer_order(seen.response), "replayed": True}
        require_ready(ev)
        # every item of the batch held as its tasks are read, in one order: two batches
        # grading the same results in opposite orders would otherwise each hold one and
        # wait for the other (SQLite: its one writer holds them all)
        tasks = {t.id: t for t in session.scalars(_tasks_statement(row_locks(session)), {
            "ids": sorted({g.task_id for g in grades}), "ev": ev.id})}
        results: list[dict[str, Any]] = []
        for given in grades:
            task = tasks.get(given.task_id)
            if task is None or task.evaluation_id != ev.id:
                results.append({"task_id": given.task_id, "ok": False,
                                "error": "no such task in this evaluation"})
                continue
            try:  # a refused grade wrote nothing (_submit_in checks before it writes)
                grade_id = _submit_in(session, rater, task, ev, given, source,
                                      held=True).grade_id
                results.append({"task_id": task.id, "ok": True, "grade_id": grade_id})
            except (ConflictError, OptionError) as exc:
                results.append({"task_id": given.task_id, "ok": False, "error": str(exc)})
        response = {"batch_id": batch_id, "evaluation_id": ev.id,
                    "accepted": sum(r["ok"] for r in results), "results": results}
        _insert_row(session, GradeBatch, {  # Core, as the grade's insert
            "rater_id": rater.id, "batch_key": batch_id, "evaluation_id": ev.id,
            "response": response, "created_at": utcnow()})
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
    return store.write(lambda session: undo_in(session, actor, evaluation_id))


def undo_grade(store: Store, actor: Actor, evaluation_id: int) -> Undone | None:
    """:func:`undo_last` saying what it did: the grade removed, the earlier one restored."""
    return store.write(lambda session: undo_outcome_in(session, actor, evaluation_id))


def undo_in(session: Session, actor: Actor, evaluation_id: int) -> int | None:
    """:func:`undo_last` inside the caller's transaction."""
    undone = undo_outcome_in(session, actor, evaluation_id)
    return undone.task_id if undone is not None else None


@dataclass(frozen=True)
class Undone:
    """What an undo did: the grade it removed and the earlier one it restored, if any.

    A value of None with a reason is a "can't tell".
    """

    task_id: int | None
    removed: float | None
    removed_reason: str | None
    restored: bool
    restored_value: float | None = None
    restored_reason: str | None = None


def undo_outcome_in(session: Session, actor: Actor, evaluation_id: int) -> Undone | None:
    """Retract the actor's latest grade of the evaluation (None: nothing to undo), inside
    the caller's transaction; the answer names the grade removed and the earlier grade
    it restored, if any, so that a page can say what the undo did."""
    ev = evaluation_row(session, actor, evaluation_id, "judge")
    rater = rater_for(session, actor)
    grade = session.scalar(select(Grade).where(
        Grade.rater_id == rater.id, Grade.evaluation_id == ev.id, Grade.active,
        Grade.source.in_(("app", "api"))).order_by(Grade.id.desc()).limit(1))
    if grade is None:
        return None
    hold_items(session, [grade.item_id])
    grade.active = False
    grade.retracted_at = utcnow()
    session.flush()
    previous = session.scalar(select(Grade).where(Grade.superseded_by == grade.id))
    if previous is not None:
        previous.active, previous.superseded_by = True, None
    task = session.scalar(select(Task).where(Task.evaluation_id == ev.id,
                                             Task.item_id == grade.item_id))
    if task is not None and previous is None:  # theirs again, when it has a slot for them
        lease_task(session, task, ev, rater.id)
    return Undone(task.id if task is not None else None, grade.value, grade.reason,
                  previous is not None,
                  previous.value if previous is not None else None,
                  previous.reason if previous is not None else None)


def judge_later(store: Store, actor: Actor, task_id: int) -> None:
    """Put a task off: it comes back to this grader after every other (not a grade)."""
    store.write(lambda session: later_in(session, actor, task_id))


def later_in(session: Session, actor: Actor, task_id: int) -> Evaluation:
    """:func:`judge_later` inside the caller's transaction; the task's evaluation."""
    task, ev = task_row(session, actor, task_id)
    rater = rater_for(session, actor)
    if session.scalar(select(Deferral.id).where(Deferral.task_id == task.id,
                                                Deferral.rater_id == rater.id)) is None:
        session.add(Deferral(task_id=task.id, rater_id=rater.id, created_at=utcnow()))
    session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))
    return ev
