"""How much of an evaluation is graded and left: for a grader and for the evaluation.

:func:`progress` counts the results, the slots (grades wanted) and the
counted grades filling them (an adjudicated result counts as full), the
results a grader graded (their "mine": :mod:`rankscope.services.grading_walk`)
and those they may still take (the pool of
:mod:`rankscope.services.assignment`). It reads a few grouped rows, never
every task: the database keeps each task's counted grades.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, func, select

from rankscope.services.assignment import pool_size
from rankscope.services.campaigns import evaluation_row
from rankscope.services.grading_walk import walk_size
from rankscope.store.models_app import Adjudication, Rater, Task

if TYPE_CHECKING:
    from sqlalchemy import Select
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store
    from rankscope.store.models_app import Evaluation

__all__ = ["progress", "progress_in"]


@functools.cache
def _tally() -> Select[int, int, int]:
    """The tasks of ``ev`` by (counted grades, grades wanted): a few rows."""
    return (select(Task.grades_counted, Task.grades_wanted, func.count())
            .where(Task.evaluation_id == bindparam("ev"))
            .group_by(Task.grades_counted, Task.grades_wanted))


@functools.cache
def _settled_open() -> Select[int, int]:
    """Tasks of ``ev`` adjudicated on ``scale`` that their counted grades do not fill."""
    return (select(Task.grades_counted, Task.grades_wanted)
            .where(Task.evaluation_id == bindparam("ev"),
                   Task.item_id.in_(select(Adjudication.item_id)
                                    .where(Adjudication.scale == bindparam("scale"))),
                   Task.grades_counted < Task.grades_wanted))


def progress_in(session: Session, ev: Evaluation, rater_id: int | None,
                mine: int | None = None) -> dict[str, int]:
    """:func:`progress`, read in the caller's session (``mine``: the rater's
    :func:`~rankscope.services.grading_walk.walk_size`, when the caller has it)."""
    results = slots = filled = complete = 0
    for counted, wanted, n in session.execute(_tally(), {"ev": ev.id}):
        results += n
        slots += wanted * n
        filled += min(counted, wanted) * n
        complete += n if counted >= wanted else 0
    unfilled = results - complete
    for counted, wanted in session.execute(_settled_open(), {"ev": ev.id, "scale": ev.scale}):
        filled += wanted - counted  # an adjudicated result counts as full
        complete += 1
    left = 0
    if rater_id is None:
        mine = 0
        if ev.status == "ready":
            left = results - complete
    else:
        mine = walk_size(session, ev, rater_id) if mine is None else mine
        if ev.status == "ready":
            left = pool_size(session, ev, rater_id, unfilled)
    return {"mine": mine, "left_for_me": left, "results": results, "complete": complete,
            "slots": slots, "filled": filled}


def progress(store: Store, actor: Actor, evaluation_id: int) -> dict[str, int]:
    """How much is done and left, for the actor and for the evaluation.

    ``mine``: results the actor graded in this evaluation (and still has a
    grade of); ``left_for_me``: results they may still take (others'
    leases aside); ``slots``/``filled``: grades wanted over all results /
    counted grades given (an adjudicated result counts as full);
    ``results``/``complete``: results, and those with every grade they want.
    """
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater_id = session.scalar(select(Rater.id).where(Rater.user_id == actor.user_id))
        return progress_in(session, ev, rater_id)
