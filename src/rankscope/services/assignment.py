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
the grades wanted. How much is left for a grader and for the evaluation is
:mod:`rankscope.services.grading_progress`.

How it stays fast: the database keeps each task's counted grades
(``tasks.grades_counted``, kept by triggers whoever writes grades) and an
index in the order above, so the next task is the first open row of an
index range (a handful of rows read, whatever the evaluation's size), and
what a request needs is read in a few statements, never by loading every
task. Taking tasks is serialised per project (a row lock on the project on
PostgreSQL; SQLite has one writer): a lease is taken on what was counted,
so two graders never take the last slot twice.

``j`` (skip) walks forward: :func:`next_tasks` with ``after`` gives the
tasks that come after that one in the order above, then wraps around to
the beginning, so skipping again and again visits the whole pool.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import (
    Integer,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.orm import aliased

from rankscope.errors import ConflictError, OptionError
from rankscope.services.accounts import rater_for
from rankscope.services.campaigns import evaluation_access
from rankscope.services.task_views import (
    TaskView,
    own_grade,
    scale_info,
    scale_of,
    task_row,
    task_views,
)
from rankscope.store.models import Project, utcnow
from rankscope.store.models_app import (
    Adjudication,
    Deferral,
    Evaluation,
    Grade,
    Lease,
    Rater,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from sqlalchemy import ColumnElement, Insert, Select, Table
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "LEASE",
    "MAX_BATCH",
    "TaskView",
    "lock_pool",
    "next_task",
    "next_tasks",
    "open_tasks",
    "pick",
    "pool_size",
    "release",
    "require_ready",
    "scale_info",
    "scale_of",
    "show_task",
    "take_tasks",
    "task_view",
    "view",
]

LEASE = timedelta(minutes=10)
MAX_BATCH = 500
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
    """The pieces of :func:`_pool_where`. The leases are few: the items they hold are read
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
def _pool_where() -> tuple[ColumnElement[bool], ...]:
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
    where = [*_pool_where(), part_of[part]]
    if beyond:
        where.append(tuple_(*ORDER) > tuple_(*(bindparam(k, type_=Integer) for k in "cpi")))
    return (select(Task.id).where(*where).order_by(*ORDER)
            .limit(bindparam("n", type_=Integer)))


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
class _Start:
    """What :func:`pick` reads that no other grader changes: read before the lock."""

    own: list[int]
    """The rater's live leases."""
    mark: tuple[int, int, int, bool] | None
    """Where a skip walks on from: that task's place in the order, and put off or not."""
    expired: list[int]
    """The rater's leases that expired (their tasks, any evaluation's)."""


def _start(session: Session, ev: Evaluation, rater_id: int, after: int | None) -> _Start:
    now = utcnow()
    leases = session.execute(select(Lease.task_id, Lease.expires_at).where(
        Lease.rater_id == rater_id)).all()
    own = [task_id for task_id, until in leases if until > now]
    expired = [task_id for task_id, until in leases if until <= now]
    mark = None if after is None else session.execute(
        select(*ORDER, exists().where(Deferral.task_id == Task.id,
                                      Deferral.rater_id == rater_id))
        .where(Task.id == after, Task.evaluation_id == ev.id)).first()
    return _Start(own, None if mark is None else (mark[0], mark[1], mark[2], bool(mark[3])),
                  expired)


@functools.cache
def _lease_statement(part: str, beyond: bool = False) -> Insert:
    """:func:`_pick_statement` leasing what it picks (until ``until``), in one statement:
    the picked tasks' ids, in the order picked (their leases' ids follow it)."""
    picked = _pick_statement(part, beyond).subquery("picked")
    # Core (the table, not the class): the parameters bind the statement, not rows to insert
    leases = cast("Table", Lease.__table__)
    return (insert(leases).from_select(
        ["task_id", "rater_id", "expires_at", "created_at"],
        select(picked.c.id, bindparam("rater", type_=Integer),
               bindparam("until", type_=leases.c.expires_at.type),
               bindparam("since", type_=leases.c.created_at.type)))
        .returning(leases.c.task_id, leases.c.id))


def pick(session: Session, ev: Evaluation, rater_id: int, n: int, *,
         exclude: Sequence[int] = (), after: int | None = None,
         start: _Start | None = None, lease_until: datetime | None = None) -> list[int]:
    """Up to ``n`` tasks for the rater, best first (nothing leased here unless
    ``lease_until``: then the tasks not already theirs are leased to them until then by
    the statement that picks them; their own leases are not renewed here).

    Their own live leases come first (a reload shows the same result), then
    the order of the module's docstring. ``after`` (a skip): the tasks after
    that one in the order, then from the beginning again, that one last.
    """
    start = start or _start(session, ev, rater_id, after)
    mark = start.mark
    skip = [*exclude, *([after] if mark is not None else [])]
    chosen: list[int] = []
    values: dict[str, Any] = {"ev": ev.id, "scale": ev.scale, "rater": rater_id,
                              "now": utcnow()}

    def take(part: str, beyond: bool = False, **more: Any) -> None:
        if len(chosen) >= n:
            return
        given = {**values, **more, "skip": [*skip, *chosen], "n": n - len(chosen)}
        if lease_until is None or part == "own":
            chosen.extend(session.scalars(_pick_statement(part, beyond), given))
            return
        leased = session.execute(_lease_statement(part, beyond), {
            **given, "until": lease_until, "since": lease_until - LEASE}).all()
        chosen.extend(task_id for task_id, _ in sorted(leased, key=lambda row: row[1]))

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


def lease(session: Session, task: Task, rater: Rater) -> Lease:
    """Hold ``task`` for ``rater`` for :data:`LEASE` from now (renewed when held)."""
    return _lease(session, [task.id], rater.id)[task.id]


def _lease(session: Session, task_ids: Sequence[int], rater_id: int) -> dict[int, Lease]:
    """Lease the tasks to the rater (a held lease is renewed); the rows by task."""
    if not task_ids:
        return {}
    rows = {r.task_id: r for r in session.scalars(select(Lease).where(
        Lease.rater_id == rater_id, Lease.task_id.in_(list(task_ids))))}
    now = utcnow()
    for task_id in task_ids:
        if task_id in rows:
            rows[task_id].expires_at = now + LEASE
        else:
            rows[task_id] = Lease(task_id=task_id, rater_id=rater_id, expires_at=now + LEASE,
                                  created_at=now)
            session.add(rows[task_id])
    session.flush()
    return rows


def lock_pool(session: Session, ev: Evaluation) -> None:
    """Serialise taking tasks in the evaluation's project (items are the project's).

    PostgreSQL: ``FOR NO KEY UPDATE`` on the project's row (new rows that
    point to the project are not held up); SQLite has one writer already.
    """
    session.execute(select(Project.id).where(Project.id == ev.project_id)
                    .with_for_update(key_share=True))


def require_ready(ev: Evaluation) -> None:
    """Grading needs a run evaluation (ConflictError otherwise)."""
    if ev.status != "ready":
        raise ConflictError(f"evaluation #{ev.id} is {ev.status}: run it before grading")


SPARE = 8
"""How many tasks past the ``n`` wanted :func:`take_tasks` reads ahead (graders taking
tasks at the same time take the first ones while this one waits for the lock)."""


def take_tasks(session: Session, ev: Evaluation, rater: Rater, n: int = 1, *,
               exclude: Sequence[int] = (), after: int | None = None,
               also: Sequence[int] = ()) -> list[TaskView]:
    """Lease up to ``n`` tasks to the rater, inside the caller's transaction; their views
    (then the views of the tasks ``also``, read with them).

    Everything that can be is read before the lock (the rater's own leases,
    the first tasks of the pool and their views): under the lock the choice
    is made again, now final, and the leases written, so the graders of a
    project wait for each other a few statements, not a page.
    """
    require_ready(ev)
    start = _start(session, ev, rater.id, after)
    if start.expired:  # their expired leases end here (rare: no statement when none)
        session.execute(delete(Lease).where(Lease.rater_id == rater.id,
                                            Lease.task_id.in_(start.expired)))
    ahead = pick(session, ev, rater.id, n + SPARE, exclude=exclude, after=after, start=start)
    views = {v.task_id: v for v in task_views(session, ev, [*ahead, *also], rater.id)}
    lock_pool(session, ev)
    until = utcnow() + LEASE
    # chosen again, final, and leased by the same statements (one round trip under the lock)
    chosen = pick(session, ev, rater.id, n, exclude=exclude, after=after, start=start,
                  lease_until=until)
    renew = [t for t in chosen if t in start.own]
    if renew:
        session.execute(update(Lease).where(Lease.rater_id == rater.id,
                                            Lease.task_id.in_(renew)).values(expires_at=until))
    missing = [t for t in chosen if t not in views]
    views.update((v.task_id, v) for v in task_views(session, ev, missing, rater.id))
    return [replace(views[t], lease_until=until.isoformat()) for t in chosen] + [
        views[t] for t in also]


def next_tasks(store: Store, actor: Actor, evaluation_id: int, n: int = 1,
               exclude: Sequence[int] = (), *, after: int | None = None) -> list[TaskView]:
    """Lease and return up to ``n`` tasks for the actor (their live leases first).

    ``after``: the tasks that follow that one (a skip), see :func:`pick`.
    """
    if n < 1 or n > MAX_BATCH:
        raise OptionError(f"ask for 1 to {MAX_BATCH} tasks, not {n}")

    def work(session: Session) -> list[TaskView]:
        ev, _, rater = evaluation_access(session, actor, evaluation_id, "judge")
        return take_tasks(session, ev, rater or rater_for(session, actor), n, exclude=exclude,
                          after=after)

    return store.write(work)


def next_task(store: Store, actor: Actor, evaluation_id: int,
              exclude: Sequence[int] = ()) -> TaskView | None:
    """The task the actor should grade now (leased to them), or None when none is left."""
    found = next_tasks(store, actor, evaluation_id, 1, exclude)
    return found[0] if found else None


def show_task(session: Session, task: Task, ev: Evaluation, rater: Rater, *,
              hold: bool = True) -> TaskView:
    """One task as the rater sees it, leased to them when it still wants their grade."""
    held = None
    if hold and ev.status == "ready" and own_grade(
            session, task.item_id, rater.id, ev.scale) is None:
        held = {task.id: _lease(session, [task.id], rater.id)[task.id].expires_at}
    return task_views(session, ev, [task.id], rater.id, held)[0]


def view(session: Session, ev: Evaluation, task: Task, rater: Rater,
         held: Lease | None) -> TaskView:
    """The task as ``rater`` sees it (``held``: their lease of it, if any)."""
    return task_views(session, ev, [task.id], rater.id,
                      {task.id: held.expires_at} if held is not None else None)[0]


def task_view(store: Store, actor: Actor, task_id: int, *, hold: bool = True) -> TaskView:
    """One task as the actor sees it (leased to them when it still wants their grade)."""

    def work(session: Session) -> TaskView:
        task, ev = task_row(session, actor, task_id)
        return show_task(session, task, ev, rater_for(session, actor), hold=hold)

    return store.write(work)


def release(store: Store, actor: Actor, task_id: int) -> None:
    """Give a leased task back to the pool (the grader moved on without grading it)."""

    def work(session: Session) -> None:
        task, _ = task_row(session, actor, task_id)
        rater = rater_for(session, actor)
        session.execute(delete(Lease).where(Lease.task_id == task.id, Lease.rater_id == rater.id))

    store.write(work)


def open_tasks(session: Session, ev: Evaluation, rater: Rater) -> list[Task]:
    """The tasks ``rater`` could still grade (no lease taken), best first."""
    deferred = exists().where(Deferral.task_id == Task.id, Deferral.rater_id == rater.id)
    return list(session.scalars(
        select(Task).where(*_pool_where()).order_by(deferred, *ORDER),
        {"ev": ev.id, "scale": ev.scale, "rater": rater.id, "now": utcnow(), "skip": []}))
