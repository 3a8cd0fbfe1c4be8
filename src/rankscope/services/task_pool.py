"""The pool of a grader: the tasks they may take now, in the order they are handed out.

A grader gets a result of the evaluation they have not graded, that still
wants grades (its item's counted grades on the evaluation's scale plus the
other graders' live leases are fewer than the grades wanted), results with
the fewest grades first, then the highest positions (rank 1 first); results
they put off ("judge later") come after every other. Their own live leases
come first. Leasing what is picked is :mod:`rankscope.services.assignment`.

How it stays fast: the database keeps each task's counted grades
(``tasks.grades_counted``, kept by triggers whoever writes grades) and an
index in the order above, so the next task is the first open row of an
index range (a handful of rows read, whatever the evaluation's size), and
what a request needs is read in a few statements, never by loading every
task.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Integer,
    bindparam,
    exists,
    func,
    literal,
    or_,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.orm import aliased

from rankscope.store.models import utcnow
from rankscope.store.models_app import Adjudication, Deferral, Evaluation, Grade, Lease, Rater, Task

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy import ColumnElement, Select
    from sqlalchemy.orm import Session

__all__ = ["ORDER", "Start", "first_statement", "open_tasks", "pick", "pick_values", "pool_size",
           "pool_where", "start_of"]

ORDER = (Task.grades_counted, Task.position, Task.id)
"""The order results are handed out in (after the deferred split): ``ix_tasks_assignment``."""

# The statements of the pool are built once, with bound parameters (``ev``, ``scale``,
# ``rater``, ``now``, ``skip``: ids left out, ``n``): a request only binds its values.


@dataclass(frozen=True)
class _Barred:
    """What keeps the rater from an open task: their grades, adjudications, others' leases."""

    mine: Select[int]
    settled: Select[int]
    held_items: Select[int]
    held: ColumnElement[int]


@functools.cache
def _barred() -> _Barred:
    """The pieces of :func:`pool_where`. The leases are few: the items they hold are read
    once, and only those items' tasks count them (``held``, correlated to ``Task``)."""
    leased = aliased(Task, name="leased")
    others = (Lease.expires_at > bindparam("now"), Lease.rater_id != bindparam("rater"))
    return _Barred(
        mine=select(Grade.item_id).where(Grade.rater_id == bindparam("rater"),
                                         Grade.scale == bindparam("scale"), Grade.active),
        settled=select(Adjudication.item_id).where(Adjudication.scale == bindparam("scale")),
        held_items=select(leased.item_id).join(Lease, Lease.task_id == leased.id).where(*others),
        held=(select(func.count(Lease.id)).join(leased, leased.id == Lease.task_id)
              .where(leased.item_id == Task.item_id, *others).scalar_subquery()))


@functools.cache
def pool_where() -> tuple[ColumnElement[bool], ...]:
    """The tasks of evaluation ``ev`` (on ``scale``) that ``rater`` may take at ``now``.

    Open (fewer counted grades than wanted), not graded by them, not
    adjudicated, and not filled by the *other* graders' live leases (a lease
    on any evaluation's task of the item holds a slot); not in ``skip``.
    """
    b = _barred()
    return (Task.evaluation_id == bindparam("ev"), Task.grades_counted < Task.grades_wanted,
            Task.item_id.not_in(b.mine), Task.item_id.not_in(b.settled),
            or_(Task.item_id.not_in(b.held_items), Task.grades_counted + b.held
                < Task.grades_wanted),
            Task.id.not_in(bindparam("skip", expanding=True)))


@functools.cache
def _pick_statement(part: str, beyond: bool = False) -> Select[int]:
    """``n`` tasks of the pool, best first: ``own`` (of the ids ``own``), ``first``
    (not put off), ``later`` (put off), ``self`` (task ``after`` only); ``beyond``: only
    those after (``c``, ``p``, ``i``) in the order."""
    deferred = select(Deferral.task_id).where(Deferral.rater_id == bindparam("rater"))
    part_of = {
        "own": Task.id.in_(bindparam("own", expanding=True)),
        "first": Task.id.not_in(deferred), "later": Task.id.in_(deferred),
        "self": Task.id == bindparam("after", type_=Integer)}
    where = [*pool_where(), part_of[part]]
    if beyond:
        where.append(tuple_(*ORDER) > tuple_(*(bindparam(k, type_=Integer) for k in "cpi")))
    return (select(Task.id).where(*where).order_by(*ORDER)
            .limit(bindparam("n", type_=Integer)))


def first_statement() -> Select[int]:
    """The tasks :func:`pick` reads first for a rater without live leases and no ``after``
    (the pool's first ``n`` not put off), to be read inside another statement: its own
    tasks, not correlated to the one around it."""
    return _pick_statement("first").correlate(None)


def pick_values(ev: Evaluation, rater_id: int, n: int, skip: Sequence[int]) -> dict[str, Any]:
    """What :func:`first_statement` binds."""
    return {"ev": ev.id, "scale": ev.scale, "rater": rater_id, "now": utcnow(),
            "skip": list(skip), "n": n}


@functools.cache
def _barred_count() -> Select[int]:
    """How many open tasks of ``ev`` the rater may not take: read from the few items that
    bar them (their grades, adjudications, leased items), not from every task."""
    b = _barred()
    # (item, 1): barred whatever its count; (item, 0): leased, barred when the leases fill it
    items = union_all(
        b.mine.add_columns(literal(1).label("hard")),
        b.settled.add_columns(literal(1).label("hard")),
        b.held_items.add_columns(literal(0).label("hard"))).subquery("barring")
    return (select(func.count(func.distinct(Task.id))).select_from(Task)
            .join(items, items.c.item_id == Task.item_id)
            .where(Task.evaluation_id == bindparam("ev"),
                   Task.grades_counted < Task.grades_wanted,
                   or_(items.c.hard == 1, Task.grades_counted + b.held >= Task.grades_wanted)))


@functools.cache
def _open_count() -> Select[int]:
    return select(func.count()).where(Task.evaluation_id == bindparam("ev"),
                                      Task.grades_counted < Task.grades_wanted)


def pool_size(session: Session, ev: Evaluation, rater_id: int,
              unfilled: int | None = None) -> int:
    """How many tasks the rater may take now (what :func:`pick` chooses from).

    ``unfilled``: the evaluation's tasks with fewer counted grades than
    wanted, when the caller has counted them already.
    """
    if unfilled is None:
        unfilled = int(session.scalar(_open_count(), {"ev": ev.id}) or 0)
    barred = session.scalar(_barred_count(), {"ev": ev.id, "scale": ev.scale,
                                              "rater": rater_id, "now": utcnow()})
    return unfilled - int(barred or 0)


@dataclass(frozen=True)
class Start:
    """What :func:`pick` reads that no other grader changes: read before the lock."""

    own: list[int]
    """The rater's live leases."""
    mark: tuple[int, int, int, bool] | None
    """Where a skip walks on from: that task's place in the order, and put off or not."""
    expired: list[int]
    """The rater's leases that expired (their tasks, any evaluation's)."""


def start_of(session: Session, ev: Evaluation, rater_id: int, after: int | None) -> Start:
    now = utcnow()
    leases = session.execute(select(Lease.task_id, Lease.expires_at).where(
        Lease.rater_id == rater_id)).all()
    own = [task_id for task_id, until in leases if until > now]
    expired = [task_id for task_id, until in leases if until <= now]
    mark = None if after is None else session.execute(
        select(*ORDER, exists().where(Deferral.task_id == Task.id,
                                      Deferral.rater_id == rater_id))
        .where(Task.id == after, Task.evaluation_id == ev.id)).first()
    return Start(own, None if mark is None else (mark[0], mark[1], mark[2], bool(mark[3])),
                  expired)


def pick(session: Session, ev: Evaluation, rater_id: int, n: int, *,
         exclude: Sequence[int] = (), after: int | None = None,
         start: Start | None = None, first: Sequence[int] | None = None) -> list[int]:
    """Up to ``n`` tasks for the rater, best first (nothing leased here: see
    :func:`take_tasks`).

    Their own live leases come first (a reload shows the same result), then
    the order of the module's docstring. ``after`` (a skip): the tasks after
    that one in the order, then from the beginning again, that one last.
    ``first``: the tasks not put off, read already by the caller with
    :func:`first_statement` (a rater without live leases, no ``after``).
    """
    start = start or start_of(session, ev, rater_id, after)
    mark = start.mark
    skip = [*exclude, *([after] if mark is not None else [])]
    chosen: list[int] = list(first or [])
    values = pick_values(ev, rater_id, n, ())

    def take(part: str, beyond: bool = False, **more: Any) -> None:
        if len(chosen) >= n:
            return
        given = {**values, **more, "skip": [*skip, *chosen], "n": n - len(chosen)}
        chosen.extend(session.scalars(_pick_statement(part, beyond), given))

    if first is not None:
        if start.own or mark is not None:
            raise ValueError("the first part read apart is for a rater without leases")
        take("later")
        return chosen
    if start.own:  # their live leases first
        take("own", own=start.own)
    if mark is None:
        take("first")
        take("later")
        return chosen
    key = dict(zip("cpi", mark[:3], strict=True))
    for part, beyond in ([("later", True), ("first", False), ("later", False)] if mark[3]
                         else [("first", True), ("later", False), ("first", False)]):
        take(part, beyond, **key)
    if after not in exclude:  # nothing else: the skipped one is still the one to grade
        skip.remove(after)
        take("self", after=after)
    return chosen


def open_tasks(session: Session, ev: Evaluation, rater: Rater) -> list[Task]:
    """The tasks ``rater`` could still grade (no lease taken), best first."""
    deferred = exists().where(Deferral.task_id == Task.id, Deferral.rater_id == rater.id)
    return list(session.scalars(
        select(Task).where(*pool_where()).order_by(deferred, *ORDER),
        {"ev": ev.id, "scale": ev.scale, "rater": rater.id, "now": utcnow(), "skip": []}))
