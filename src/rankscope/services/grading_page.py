"""The grading page's actions, each one service call and one transaction.

A grader's action and what they see next are one unit of work: grade and
get the next result (:func:`grade_and_next`), skip (:func:`open_page` with
``skip``), put off (:func:`later_and_next`), undo (:func:`undo_and_show`),
open a result (:func:`task_page`), grade a row of a query's result list
(:func:`grade_row`). Each returns everything the page shows (the evaluation,
the result leased to the grader, their place in the walk, the progress),
read in the same transaction as the action, so what the page says is what
was committed, and the action costs one commit.

``after``: a grader who skipped walks on from the result they skipped
(:func:`rankscope.services.assignment.pick`): skipping again and again goes
through the whole pool, and a grade given on the way keeps the walk going
instead of bringing back the result they skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete

from rankscope.errors import ConflictError
from rankscope.services.accounts import rater_for
from rankscope.services.assignment import lease_next, progress_in, show_task, take_tasks
from rankscope.services.evaluations import EvaluationView, evaluation_row, evaluation_view
from rankscope.services.grading import GradeInput, grade_task, later_in, undo_in
from rankscope.services.grading_walk import WalkPlace, walk_place
from rankscope.services.projects import project_role
from rankscope.services.task_views import TaskView, task_row, task_views
from rankscope.store.models_app import Lease, Task

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store
    from rankscope.store.models_app import Evaluation, Rater

__all__ = [
    "GradingPage",
    "grade_and_next",
    "grade_row",
    "later_and_next",
    "open_page",
    "task_page",
    "undo_and_show",
]


@dataclass(frozen=True)
class GradingPage:
    """What the grading page shows after an action.

    ``task``: the result to grade now (leased to the grader), None when
    nothing is left for them; ``walking``: it is one they graded, reached
    with ``k``/``j``; ``after``: the result a skip walks on from. After a
    grade: ``graded`` (the result graded, as the grader sees it), ``saved``
    (what :func:`~rankscope.services.grading.submit_grade` returns) or
    ``refused`` (why it was not saved). After an undo: ``undone``, the task
    whose grade was taken back (None: nothing to undo).
    """

    evaluation: EvaluationView
    task: TaskView | None
    walk: WalkPlace
    walking: bool
    progress: dict[str, int]
    role: str
    after: int | None = None
    graded: TaskView | None = None
    saved: dict[str, Any] | None = None
    refused: str | None = None
    undone: int | None = None


def _page(session: Session, actor: Actor, ev: Evaluation, rater: Rater,
          task: TaskView | None, *, walking: bool = False, **kw: Any) -> GradingPage:
    place = walk_place(session, ev, rater.id, task.task_id if task else None)
    _, role = project_role(session, actor, ev.project_id)
    progress = progress_in(session, ev, rater.id, place.length)
    return GradingPage(evaluation=evaluation_view(session, ev, progress["results"]), task=task,
                       walk=place, walking=walking and place.at is not None,
                       progress=progress, role=role, **kw)


def _grade(session: Session, rater: Rater, task: Task, ev: Evaluation,
           given: GradeInput) -> tuple[dict[str, Any] | None, str | None]:
    """Grade in a savepoint: (what was saved, None) or (None, why the result refused it)."""
    try:
        with session.begin_nested():
            return grade_task(session, rater, task, ev, given, "app"), None
    except ConflictError as exc:
        return None, str(exc)


def _next(session: Session, ev: Evaluation, rater: Rater, after: int | None) -> TaskView | None:
    found = take_tasks(session, ev, rater, 1, after=after)
    return found[0] if found else None


def open_page(store: Store, actor: Actor, evaluation_id: int, *, skip: int | None = None,
              after: int | None = None) -> GradingPage:
    """The page with the next result; ``skip``: move on from that one (its lease is given
    back; the walk goes on after it); ``after``: go on after that one without a skip."""

    def work(session: Session) -> GradingPage:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        cursor = skip or after
        if skip:
            session.execute(delete(Lease).where(Lease.task_id == skip,
                                                Lease.rater_id == rater.id))
        task = _next(session, ev, rater, cursor) if ev.status == "ready" else None
        return _page(session, actor, ev, rater, task, after=cursor)

    return store.write(work)


def task_page(store: Store, actor: Actor, task_id: int, *, walking: bool = False) -> GradingPage:
    """The page showing one result (leased to the grader when it still wants their grade)."""

    def work(session: Session) -> GradingPage:
        task, ev = task_row(session, actor, task_id)
        rater = rater_for(session, actor)
        return _page(session, actor, ev, rater, show_task(session, task, ev, rater),
                     walking=walking)

    return store.write(work)


def grade_and_next(store: Store, actor: Actor, given: GradeInput, *, walking: bool = False,
                   after: int | None = None) -> GradingPage:
    """Grade a result, then the page with what comes next, in one transaction.

    Next: along the walk when the grader came back with ``k`` (the next
    result they graded), else a new result (after ``after`` when they had
    skipped). A grade the result cannot take (it has all it wants, or was
    adjudicated) is not saved (``refused``) and the grader moves on; a bad
    value raises :class:`~rankscope.errors.OptionError` (nothing is done).
    """

    def work(session: Session) -> GradingPage:
        task, ev = task_row(session, actor, given.task_id)
        rater = rater_for(session, actor)
        saved, refused = _grade(session, rater, task, ev, given)
        if walking:
            place = walk_place(session, ev, rater.id, task.id)
            following = session.get(Task, place.following) if place.following else None
            if following is not None:
                return _page(session, actor, ev, rater,
                             show_task(session, following, ev, rater), walking=True,
                             graded=task_views(session, ev, [task.id], rater.id)[0],
                             saved=saved, refused=refused)
        held = lease_next(session, ev, rater, 1, after=after) if ev.status == "ready" else {}
        # the result graded and the next one, read together
        shown = task_views(session, ev, [*held, task.id], rater.id, held)
        return _page(session, actor, ev, rater, shown[0] if held else None, after=after,
                     graded=shown[-1], saved=saved, refused=refused)

    return store.write(work)


def later_and_next(store: Store, actor: Actor, task_id: int, *,
                   after: int | None = None) -> GradingPage:
    """Put a result off ("judge later"), then the page with the next one."""

    def work(session: Session) -> GradingPage:
        ev = later_in(session, actor, task_id)
        rater = rater_for(session, actor)
        task = _next(session, ev, rater, after) if ev.status == "ready" else None
        return _page(session, actor, ev, rater, task, after=after)

    return store.write(work)


def undo_and_show(store: Store, actor: Actor, evaluation_id: int) -> GradingPage:
    """Take back the grader's latest grade here; the page shows that result again."""

    def work(session: Session) -> GradingPage:
        undone = undo_in(session, actor, evaluation_id)
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        again = session.get(Task, undone) if undone is not None else None
        task: TaskView | None = None
        if again is not None:
            task = show_task(session, again, ev, rater)
        elif ev.status == "ready":
            task = _next(session, ev, rater, None)
        return _page(session, actor, ev, rater, task, undone=undone)

    return store.write(work)


def grade_row(store: Store, actor: Actor, given: GradeInput) -> GradingPage:
    """Grade a row of a query's result list; the page holds that row (``task``) again."""

    def work(session: Session) -> GradingPage:
        task, ev = task_row(session, actor, given.task_id)
        rater = rater_for(session, actor)
        saved, refused = _grade(session, rater, task, ev, given)
        shown = task_views(session, ev, [task.id], rater.id)[0]
        return _page(session, actor, ev, rater, shown, graded=shown, saved=saved,
                     refused=refused)

    return store.write(work)
