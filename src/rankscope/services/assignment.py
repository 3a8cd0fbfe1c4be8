"""Who grades what next: leases, what a grader sees, and how much is left.

Assignment (:func:`next_tasks`): a grader gets the first result of their
pool (:mod:`rankscope.services.task_pool`: what they may take, in the order
it is handed out). Taking a task leases it for :data:`LEASE` so two graders
do not fill the last slot twice; a lease that expires returns the task to
the pool. A grader never sees another's grade.

A grade *counts* when its rater's ``counts`` is true (people, imports, an
LLM judge the curator let count): only counted grades fill the slots of
the grades wanted. How much is left for a grader and for the evaluation is
:mod:`rankscope.services.grading_progress`.

How two graders never take the last slot twice: every path that creates a
lease (:func:`take_tasks`, :func:`show_task`, an undo) holds the row lock of
the item first (the lock a grade of it takes) and leases in a statement
begun after the lock was granted, so it counts every lease and grade
committed by whoever held the item before; a lease is created only while
the item's counted grades plus the other graders' live leases are fewer than
wanted (:func:`lease_held`, the one implementation). On PostgreSQL the next
task locks its candidates with ``FOR UPDATE SKIP LOCKED``: graders taking
tasks at once take different results instead of queueing behind one lock
(the project's row, before). SQLite has one writer: no lock is taken there.
A lease that expires holds nothing: its task is back in the pool (its
grader may still grade it while a slot is free; a grade is always checked
against the grades wanted under the item's lock).

``j`` (skip) walks forward: :func:`next_tasks` with ``after`` gives the
tasks that come after that one in the pool's order, then wraps around to
the beginning, so skipping again and again visits the whole pool.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import (
    Integer,
    bindparam,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)

from rankscope.errors import ConflictError, OptionError
from rankscope.services.accounts import rater_for
from rankscope.services.campaigns import evaluation_access
from rankscope.services.task_pool import (
    ORDER,
    Start,
    first_statement,
    open_tasks,
    pick,
    pick_values,
    pool_size,
    pool_where,
    start_of,
)
from rankscope.services.task_views import (
    TaskView,
    own_grade,
    scale_info,
    scale_of,
    task_row,
    task_views,
    view_rows,
    views_select,
)
from rankscope.store.models import utcnow
from rankscope.store.models_app import (
    Evaluation,
    Item,
    Lease,
    Rater,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from sqlalchemy import Insert, Select, Table
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "LEASE",
    "MAX_BATCH",
    "TaskView",
    "hold_items",
    "lease_held",
    "lease_task",
    "next_task",
    "next_tasks",
    "open_tasks",
    "pick",
    "pool_size",
    "release",
    "require_ready",
    "row_locks",
    "scale_info",
    "scale_of",
    "show_task",
    "take_tasks",
    "task_view",
    "view",
]

LEASE = timedelta(minutes=10)
MAX_BATCH = 500





def row_locks(session: Session) -> bool:
    """Whether leasing takes the items' row locks: PostgreSQL (SQLite has one writer)."""
    return session.get_bind().dialect.name == "postgresql"


def hold_items(session: Session, item_ids: Sequence[int]) -> None:
    """Hold the items' rows until the transaction ends, waiting for whoever holds them.

    The lock a grade, an adjudication and every lease of an item take
    (PostgreSQL ``SELECT ... FOR UPDATE``, in the items' id order: two
    holders of several items wait in the same order); on SQLite the one
    writer is the lock, no statement is run.
    """
    if item_ids and row_locks(session):
        session.execute(select(Item.id).where(Item.id.in_(sorted(set(item_ids))))
                        .order_by(Item.id).with_for_update())


@functools.cache
def _free_statement() -> Select[int]:
    """Of the tasks ``ids``, the first ``k`` (in the order of ``ids``) whose item no other
    transaction holds, their items now held (``FOR UPDATE SKIP LOCKED``: never waits)."""
    from sqlalchemy import any_
    from sqlalchemy.dialects.postgresql import ARRAY

    ids = bindparam("ids", type_=ARRAY(Integer))
    return (select(Task.id).join(Item, Item.id == Task.item_id).where(Task.id == any_(ids))
            .order_by(func.array_position(ids, Task.id)).limit(bindparam("k", type_=Integer))
            .with_for_update(of=Item, skip_locked=True))


def _hold_free(session: Session, task_ids: Sequence[int], k: int) -> list[int]:
    """The first ``k`` of the tasks whose items this transaction could hold at once, held
    (in their order); SQLite: the first ``k`` (its one writer holds everything)."""
    if not row_locks(session):
        return list(task_ids[:k])
    got = set(session.scalars(_free_statement(), {"ids": list(task_ids), "k": k}))
    return [t for t in task_ids if t in got]


@functools.cache
def _lease_among() -> Insert:
    """Lease to ``rater`` until ``until`` those of the tasks ``among`` that are in their
    pool now (:func:`~rankscope.services.task_pool.pool_where`: a slot free counting
    grades and the other graders' live leases) and not leased to them already; the tasks
    leased."""
    # Core (the table, not the class): the parameters bind the statement, not rows to insert
    leases = cast("Table", Lease.__table__)
    mine = exists().where(Lease.task_id == Task.id, Lease.rater_id == bindparam("rater"))
    return (insert(leases).from_select(
        ["task_id", "rater_id", "expires_at", "created_at"],
        select(Task.id, bindparam("rater", type_=Integer),
               bindparam("until", type_=leases.c.expires_at.type),
               bindparam("since", type_=leases.c.created_at.type))
        .where(*pool_where(), Task.id.in_(bindparam("among", expanding=True)), ~mine))
        .returning(leases.c.task_id))


def lease_held(session: Session, ev: Evaluation, rater_id: int, task_ids: Sequence[int],
               until: datetime) -> list[int]:
    """Lease to the rater, until ``until``, those of the tasks that have a slot for them;
    the tasks leased, in the order given.

    The one way a lease is created. The caller holds the tasks' items
    (:func:`hold_items`, or the next task's ``SKIP LOCKED``): this statement
    begins after the locks were granted, so under PostgreSQL's read
    committed it sees every lease and grade committed by the item's earlier
    holders, and no one else leases the item before this transaction ends.
    """
    if not task_ids:
        return []
    got = set(session.scalars(_lease_among(), {
        "ev": ev.id, "scale": ev.scale, "rater": rater_id, "now": utcnow(), "skip": [],
        "among": list(task_ids), "until": until, "since": until - LEASE}))
    return [t for t in task_ids if t in got]


def lease_task(session: Session, task: Task, ev: Evaluation, rater_id: int) -> datetime | None:
    """Hold ``task`` for the rater for :data:`LEASE` from now: their live lease renewed, or
    a new one when the result has a slot for them (its item held first); when they
    expire (None: not leased, the result is full or theirs no more)."""
    until = utcnow() + LEASE
    mine = session.scalar(select(Lease.expires_at).where(Lease.task_id == task.id,
                                                         Lease.rater_id == rater_id))
    if mine is not None and mine > utcnow():  # theirs: renewing takes no slot
        session.execute(update(Lease).where(Lease.task_id == task.id,
                                            Lease.rater_id == rater_id).values(expires_at=until))
        return until
    if mine is not None:  # expired: it held nothing; a new lease follows the rule
        session.execute(delete(Lease).where(Lease.task_id == task.id,
                                            Lease.rater_id == rater_id))
    hold_items(session, [task.item_id])
    return until if lease_held(session, ev, rater_id, [task.id], until) else None


def require_ready(ev: Evaluation) -> None:
    """Grading needs a run evaluation (ConflictError otherwise)."""
    if ev.status != "ready":
        raise ConflictError(f"evaluation #{ev.id} is {ev.status}: run it before grading")


SPARE = 8
"""How many tasks past the ``n`` wanted :func:`take_tasks` reads ahead (graders taking
tasks at the same time hold the first ones: this one takes the next)."""
REREADS = 3
"""How many times :func:`take_tasks` reads the pool again when every task it read was held
by others or filled meanwhile, before waiting for the held ones."""
WAIT_MS = 500
"""How long :func:`take_tasks` waits at most for an item held by another transaction when
nothing else is left (PostgreSQL's ``lock_timeout``, under its 1 s ``deadlock_timeout``:
two graders each holding what the other waits for give up, neither fails)."""


def _wait_for(session: Session, ev: Evaluation, rater_id: int, busy: Sequence[int], k: int,
              until: datetime) -> list[int]:
    """Wait (at most :data:`WAIT_MS`) for the items of the first ``k`` tasks ``busy`` held by
    other transactions, then lease those with a slot; nothing when the wait runs out."""
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    tasks = busy[:k]
    items = list(session.scalars(select(Task.item_id).where(Task.id.in_(tasks))))
    try:
        with session.begin_nested():  # a lock refused rolls back to here, nothing else
            old = session.scalar(text("SELECT current_setting('lock_timeout')"))
            session.execute(text("SELECT set_config('lock_timeout', :t, true)"),
                            {"t": f"{WAIT_MS}ms"})
            hold_items(session, items)
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) not in ("55P03", "40P01"):  # timeout, deadlock
            raise
        return []
    session.execute(text("SELECT set_config('lock_timeout', :t, true)"), {"t": old})
    return lease_held(session, ev, rater_id, tasks, until)


@functools.cache
def _first_views() -> Select[Any]:
    """:func:`~rankscope.services.task_pool.pick`'s first part with the tasks' views, in the
    pool's order: one statement for the two a next task read before the lock."""
    return views_select().where(Task.id.in_(first_statement())).order_by(*ORDER)


def _take(session: Session, ev: Evaluation, rater_id: int, n: int, ahead: list[int],
          start: Start, exclude: Sequence[int], after: int | None,
          until: datetime) -> list[int]:
    """Up to ``n`` tasks for the rater, leased (their live leases renewed by the caller),
    from the tasks read ahead (best first), each item held while it is leased."""
    chosen = [t for t in ahead if t in start.own][:n]  # theirs: no slot taken
    seen, asked = list(ahead), n + SPARE
    candidates = [t for t in ahead if t not in start.own]
    busy: list[int] = []  # held by another transaction when tried
    rereads = 0
    while len(chosen) < n:
        if not candidates:  # every one read held, or filled since: read the pool again
            if rereads >= REREADS or len(seen) < asked:
                break
            rereads += 1
            ahead = pick(session, ev, rater_id, n - len(chosen) + SPARE,
                         exclude=[*exclude, *seen, *busy], after=after, start=start)
            seen, asked = [*seen, *ahead], len(seen) + n - len(chosen) + SPARE
            candidates = ahead
            continue
        k = n - len(chosen)
        held = _hold_free(session, candidates, k)
        if len(held) < k:  # every candidate was tried
            busy += [t for t in candidates if t not in held]
            candidates = []
        else:  # tried up to the last one held
            last = candidates.index(held[-1])
            busy += [t for t in candidates[:last] if t not in held]
            candidates = candidates[last + 1:]
        chosen += lease_held(session, ev, rater_id, held, until)
    if len(chosen) < n and busy:  # nothing else left: wait a little for the held ones
        chosen += _wait_for(session, ev, rater_id, busy, n - len(chosen), until)
    return chosen


def take_tasks(session: Session, ev: Evaluation, rater: Rater, n: int = 1, *,
               exclude: Sequence[int] = (), after: int | None = None,
               also: Sequence[int] = ()) -> list[TaskView]:
    """Lease up to ``n`` tasks to the rater, inside the caller's transaction; their views
    (then the views of the tasks ``also``, read with them).

    The first tasks of the pool and their views are read before any lock;
    then each candidate's item is held in turn (on PostgreSQL, skipping those
    another grader holds at that moment) and leased when it still has a slot
    (:func:`lease_held`), so graders asking at once take different results
    and wait for nobody.
    """
    require_ready(ev)
    start = start_of(session, ev, rater.id, after)
    if start.expired:  # their expired leases end here (rare: no statement when none)
        session.execute(delete(Lease).where(Lease.rater_id == rater.id,
                                            Lease.task_id.in_(start.expired)))
    if start.own or start.mark is not None or also:
        ahead = pick(session, ev, rater.id, n + SPARE, exclude=exclude, after=after,
                     start=start)
        views = {v.task_id: v for v in task_views(session, ev, [*ahead, *also], rater.id)}
    else:  # the usual next task: the pool's first tasks read with their views
        rows = session.execute(_first_views(), pick_values(ev, rater.id, n + SPARE, exclude))
        views = {v.task_id: v for v in view_rows(ev, list(rows))}
        ahead = list(views)
        if len(ahead) < n + SPARE:  # the tasks put off come after (rare: few not put off)
            ahead = pick(session, ev, rater.id, n + SPARE, exclude=exclude, start=start,
                         first=ahead)
            views.update((v.task_id, v) for v in task_views(
                session, ev, [t for t in ahead if t not in views], rater.id))
    until = utcnow() + LEASE
    chosen = _take(session, ev, rater.id, n, ahead, start, exclude, after, until)
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
    """One task as the rater sees it, leased to them when it still has a slot for them
    (:func:`lease_task`)."""
    held = None
    if hold and ev.status == "ready" and own_grade(
            session, task.item_id, rater.id, ev.scale) is None:
        until = lease_task(session, task, ev, rater.id)
        held = {task.id: until} if until is not None else None
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
