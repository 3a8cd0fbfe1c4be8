"""A grader's walk of an evaluation: what they graded there, in order (``k`` and ``j``).

The walk is the results a grader graded in the evaluation (and still has a
grade of), in the order they first graded each: ``k`` walks back along it,
``j`` forward again, and regrading one keeps its place (:func:`walk_place`).
"You graded N results here" counts the same results (:func:`walk_size`):
grades given in this evaluation only, not those given in another
evaluation of the project that share a result (grades are shared between
evaluations, this count is not). Each figure is one small aggregate read,
its statement built once with bound parameters.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, bindparam, func, select, tuple_

from rankscope.store.models_app import Grade, Task

if TYPE_CHECKING:
    from sqlalchemy import Select, Subquery
    from sqlalchemy.orm import Session

    from rankscope.store.models_app import Evaluation

__all__ = ["WalkPlace", "walk_place", "walk_size"]


@dataclass(frozen=True)
class WalkPlace:
    """Where a task stands in a grader's walk of an evaluation.

    ``length``: results in the walk; ``at``: the task's place (1-based;
    None: not one of them); ``previous`` / ``following``: the tasks before
    and after it (not in the walk: ``previous`` is the last one).
    """

    length: int
    at: int | None
    previous: int | None
    following: int | None


@functools.cache
def _walked() -> Subquery:
    """(task_id, first) of the walk of ``rater`` in evaluation ``ev`` (on ``scale``)."""
    first = (select(Grade.item_id, func.min(Grade.id).label("first"))
             .where(Grade.rater_id == bindparam("rater"), Grade.evaluation_id == bindparam("ev"),
                    Grade.scale == bindparam("scale"))
             .group_by(Grade.item_id).subquery())
    active = select(Grade.item_id).where(Grade.rater_id == bindparam("rater"),
                                         Grade.scale == bindparam("scale"), Grade.active)
    return (select(Task.id.label("task_id"), first.c.first)
            .join(first, first.c.item_id == Task.item_id)
            .where(Task.evaluation_id == bindparam("ev"), Task.item_id.in_(active))
            .subquery("walked"))


@functools.cache
def _walk_statement(what: str) -> Select[int]:
    """``count``; ``here`` (the task's ``first``); ``before`` / ``after`` the mark (``f``,
    ``t``): the nearest one, or ``rank``: how many come before; ``last``."""
    w = _walked()
    key = tuple_(w.c.first, w.c.task_id)
    mark = tuple_(bindparam("f", type_=Integer), bindparam("t", type_=Integer))
    if what == "count":
        return select(func.count()).select_from(w)
    if what == "here":
        return select(w.c.first).where(w.c.task_id == bindparam("task", type_=Integer))
    if what == "rank":
        return select(func.count()).select_from(w).where(key < mark)
    if what == "before":
        return select(w.c.task_id).where(key < mark).order_by(
            w.c.first.desc(), w.c.task_id.desc()).limit(1)
    if what == "after":
        return select(w.c.task_id).where(key > mark).order_by(w.c.first, w.c.task_id).limit(1)
    return select(w.c.task_id).order_by(w.c.first.desc(), w.c.task_id.desc()).limit(1)


def walk_size(session: Session, ev: Evaluation, rater_id: int) -> int:
    """How many results the rater graded in this evaluation (and still has a grade of)."""
    values = {"ev": ev.id, "scale": ev.scale, "rater": rater_id}
    return int(session.scalar(_walk_statement("count"), values) or 0)


def walk_place(session: Session, ev: Evaluation, rater_id: int | None,
               task_id: int | None) -> WalkPlace:
    """The task's place in the rater's walk of the evaluation."""
    if rater_id is None:
        return WalkPlace(0, None, None, None)
    values: dict[str, Any] = {"ev": ev.id, "scale": ev.scale, "rater": rater_id}
    length = walk_size(session, ev, rater_id)
    first = None if task_id is None or not length else session.scalar(
        _walk_statement("here"), {**values, "task": task_id})
    if first is None:
        last = session.scalar(_walk_statement("last"), values) if length else None
        return WalkPlace(length, None, last, None)
    values.update(f=first, t=task_id)
    return WalkPlace(length, int(session.scalar(_walk_statement("rank"), values) or 0) + 1,
                     session.scalar(_walk_statement("before"), values),
                     session.scalar(_walk_statement("after"), values))
