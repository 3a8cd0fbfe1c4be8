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
from rankscope.services.assignment import show_task, take_tasks
from rankscope.services.campaigns import EvaluationView, evaluation_row, evaluation_view
from rankscope.services.grading import GradeInput, Undone, grade_task, later_in, undo_outcome_in
from rankscope.services.grading_progress import progress_in
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
    whose grade was taken back (None: nothing to undo), and ``undo``, what it
    removed and what earlier grade it restored.
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
    undo: Undone | None = None


@dataclass(frozen=True)
class _Frame:
    """What the page shows besides the task: read before a new task is leased, so the
    lock that serialises taking tasks is held for the lease alone."""

    evaluation: EvaluationView
    walk: WalkPlace
    progress: dict[str, int]
    role: str

    def page(self, task: TaskView | None, *, walking: bool = False,
             **kw: Any) -> GradingPage:
        return GradingPage(evaluation=self.evaluation, task=task, walk=self.walk,
                           walking=walking and self.walk.at is not None,
                           progress=self.progress, role=self.role, **kw)


def _frame(session: Session, actor: Actor, ev: Evaluation, rater: Rater,
           task_id: int | None) -> _Frame:
    """The frame of a page showing ``task_id`` (None: a new result, never one of the
    grader's walk: the results they may take are those they have no grade of)."""
    place = walk_place(session, ev, rater.id, task_id)
    _, role = project_role(session, actor, ev.project_id)
    progress = progress_in(session, ev, rater.id, place.length)
    return _Frame(evaluation_view(session, ev, progress["results"]), place, progress, role)


def _grade(session: Session, rater: Rater, task: Task, ev: Evaluation,
           given: GradeInput) -> tuple[dict[str, Any] | None, str | None]:
    """Grade in a savepoint: (what was saved, None) or (None, why the result refused it)."""
    try:
        with session.begin_nested():
            return grade_task(session, rater, task, ev, given, "app"), None
    except ConflictError as exc:
        return None, str(exc)


def _new_page(session: Session, actor: Actor, ev: Evaluation, rater: Rater, *,
              after: int | None, also: tuple[int, ...] = (), **kw: Any) -> GradingPage:
    """The page with the next new result (leased last); ``also``: the task graded, whose
    view is read with it (``graded``)."""
    frame = _frame(session, actor, ev, rater, None)
    if ev.status != "ready":
        graded = task_views(session, ev, also, rater.id)
        return frame.page(None, after=after, graded=graded[0] if graded else None, **kw)
    shown = take_tasks(session, ev, rater, 1, after=after, also=also)
    task = shown[0] if len(shown) > len(also) else None
    return frame.page(task, after=after, graded=shown[-1] if also else None, **kw)


def open_page(store: Store, actor: Actor, evaluation_id: int, *, skip: int | None = None,
              after: int | None = None) -> GradingPage:
    """The page with the next result; ``skip``: move on from that one (its lease is given
    back; the walk goes on after it); ``after``: go on after that one without a skip."""

    def work(session: Session) -> GradingPage:
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        if skip:
            session.execute(delete(Lease).where(Lease.task_id == skip,
                                                Lease.rater_id == rater.id))
        return _new_page(session, actor, ev, rater, after=skip or after)

    return store.write(work)


def task_page(store: Store, actor: Actor, task_id: int, *, walking: bool = False) -> GradingPage:
    """The page showing one result (leased to the grader when it still wants their grade)."""

    def work(session: Session) -> GradingPage:
        task, ev = task_row(session, actor, task_id)
        rater = rater_for(session, actor)
        shown = show_task(session, task, ev, rater)
        return _frame(session, actor, ev, rater, task.id).page(shown, walking=walking)

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
                shown = show_task(session, following, ev, rater)
                return _frame(session, actor, ev, rater, following.id).page(
                    shown, walking=True, graded=task_views(session, ev, [task.id], rater.id)[0],
                    saved=saved, refused=refused)
        return _new_page(session, actor, ev, rater, after=after, also=(task.id,), saved=saved,
                         refused=refused)

    return store.write(work)


def later_and_next(store: Store, actor: Actor, task_id: int, *,
                   after: int | None = None) -> GradingPage:
    """Put a result off ("judge later"), then the page with the next one."""

    def work(session: Session) -> GradingPage:
        ev = later_in(session, actor, task_id)
        return _new_page(session, actor, ev, rater_for(session, actor), after=after)

    return store.write(work)


def undo_and_show(store: Store, actor: Actor, evaluation_id: int) -> GradingPage:
    """Take back the grader's latest grade here; the page shows that result again."""

    def work(session: Session) -> GradingPage:
        undo = undo_outcome_in(session, actor, evaluation_id)
        undone = undo.task_id if undo is not None else None
        ev = evaluation_row(session, actor, evaluation_id, "judge")
        rater = rater_for(session, actor)
        again = session.get(Task, undone) if undone is not None else None
        if again is None:
            return _new_page(session, actor, ev, rater, after=None, undone=undone, undo=undo)
        shown = show_task(session, again, ev, rater)
        return _frame(session, actor, ev, rater, again.id).page(shown, undone=undone,
                                                                undo=undo)

    return store.write(work)


def grade_row(store: Store, actor: Actor, given: GradeInput) -> GradingPage:
    """Grade a row of a query's result list; the page holds that row (``task``) again."""

    def work(session: Session) -> GradingPage:
        task, ev = task_row(session, actor, given.task_id)
        rater = rater_for(session, actor)
        saved, refused = _grade(session, rater, task, ev, given)
        shown = task_views(session, ev, [task.id], rater.id)[0]
        return _frame(session, actor, ev, rater, task.id).page(shown, graded=shown,
                                                                saved=saved, refused=refused)

    return store.write(work)
