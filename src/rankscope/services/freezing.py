"""Freezing an evaluation: its numbers are computed on the grades as of one moment, for good.

Grades are pooled across a project, so a grade given in a later evaluation
changes the numbers of every earlier one that shares the result. A frozen
evaluation's metrics, per-query values, coverage, agreement and comparison
are computed on the grades that counted at its ``frozen_at`` (and on the
snapshot its latest run had recorded then, with the raters kept apart then
still apart): later grades, regrades, undos, adjudications and an LLM judge
let count later do not move them. An evaluation is frozen

- explicitly, by a curator (:func:`freeze_evaluation`): as of that moment;
- automatically when its grading is complete (:func:`auto_freeze`, run
  before its numbers are read): as of the moment every result first had the
  grades it wants (:func:`rankscope.services.grade_history.completion_time`),
  so grades given after that moment, wherever, are not in its numbers (the
  moment of its run when its results were all graded before it).

Today's numbers stay one click away (``today=True`` of the data loaders),
shown beside the frozen ones with what changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from rankscope.errors import ConflictError
from rankscope.services.campaigns import evaluation_row
from rankscope.services.grade_history import completion_time, incomplete_tasks
from rankscope.store.models import utcnow
from rankscope.store.models_app import Evaluation, EvaluationSnapshot, Rater, Task

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = ["auto_freeze", "freeze_evaluation", "freeze_state"]


def freeze_state(ev: Evaluation) -> dict[str, Any]:
    """``{"frozen", "at", "how", "grades"}`` of an evaluation, for pages and the API."""
    return {"frozen": ev.frozen_at is not None,
            "at": ev.frozen_at.isoformat() if ev.frozen_at is not None else None,
            "how": ev.frozen_how, "grades": ev.frozen_grades}


def _seal(session: Session, ev: Evaluation) -> None:
    """Record who was kept apart and how many grades counted at the freeze."""
    from rankscope.services.campaign_data import load_data

    ev.frozen_apart = sorted(session.scalars(select(Rater.id).where(Rater.counts.is_(False))))
    ev.frozen_grades = load_data(session, ev).n_grades


def freeze_evaluation(store: Store, actor: Actor, evaluation_id: int) -> dict[str, Any]:
    """Freeze the evaluation's numbers now (a curator of its project).

    Returns :func:`freeze_state`.

    Raises
    ------
    ConflictError
        It is frozen already, or has no run to freeze (not ``ready``).
    """

    def work(session: Session) -> dict[str, Any]:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        session.execute(select(Evaluation.id).where(Evaluation.id == ev.id).with_for_update())
        session.refresh(ev)
        if ev.frozen_at is not None:
            raise ConflictError(f"evaluation #{ev.id} was frozen already, at "
                                f"{ev.frozen_at.isoformat()}")
        if ev.status != "ready":
            raise ConflictError(f"evaluation #{ev.id} is {ev.status}: run it before freezing "
                                f"its numbers")
        ev.frozen_at, ev.frozen_how, ev.frozen_by = utcnow(), "explicit", actor.user_id
        _seal(session, ev)
        return freeze_state(ev)

    return store.write(work)


def auto_freeze(store: Store, evaluation_id: int) -> bool:
    """Freeze a ready evaluation whose grading is complete, as of when it became complete.

    Cheap when there is nothing to do (one row and one count read). Returns
    whether it froze the evaluation now.
    """
    with store.read() as session:
        ev = session.get(Evaluation, evaluation_id)
        if ev is None or ev.frozen_at is not None or ev.status != "ready":
            return False
        if session.scalar(select(Task.id).where(Task.evaluation_id == ev.id).limit(1)) is None:
            return False
        if incomplete_tasks(session, ev):
            return False

    def work(session: Session) -> bool:
        ev = session.get(Evaluation, evaluation_id)
        if ev is None:
            return False
        session.execute(select(Evaluation.id).where(Evaluation.id == ev.id).with_for_update())
        session.refresh(ev)
        if ev.frozen_at is not None or ev.status != "ready":
            return False
        when = completion_time(session, ev)
        if when is None:
            return False
        # results graded before this run count from the run on: never before its snapshot
        ran = session.scalar(select(func.max(EvaluationSnapshot.created_at))
                             .where(EvaluationSnapshot.evaluation_id == ev.id))
        when = max(when, ran) if ran is not None else when
        ev.frozen_at, ev.frozen_how, ev.frozen_by = when, "complete", None
        _seal(session, ev)
        return True

    return store.write(work)
