"""Grading pages: one result at a time, or a query's result list; keyboard first.

Every action is a plain form (it works without JavaScript and without a
mouse: Tab and Enter); ``static/app.js`` binds the keys (digits grade, ``j``
/ ``k`` next / previous, ``u`` undo, ``l`` judge later, ``?`` can't tell,
``e`` explanation, ``h`` the list of keys) to those forms.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import PageActor, render, settings_of
from rankscope.errors import ConflictError
from rankscope.services import evaluations, grading
from rankscope.services.accounts import Actor

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


def _keys(scale: dict[str, Any]) -> list[tuple[str, float]]:
    """The digit that gives each grade: the grade itself; ``0`` is 10 on a 1-10 scale."""
    out = []
    for value in scale["values"]:
        if value == 10 and scale["min"] >= 1:
            out.append(("0", value))
        elif 0 <= value <= 9:
            out.append((f"{value:g}", value))
    return out


def _page(request: Request, actor: Actor, evaluation_id: int,
          task: grading.TaskView | None, message: str | None = None) -> Response:
    store = settings_of(request).store
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    mine = grading.my_grades(store, actor, evaluation_id)
    ids = [g["task_id"] for g in mine]
    previous = None
    if task is not None and task.task_id in ids:
        at = ids.index(task.task_id)
        previous = ids[at - 1] if at > 0 else None
    elif ids:
        previous = ids[-1]
    context = {"evaluation": ev, "task": task, "previous": previous, "n_mine": len(mine),
               "keys": _keys(task.scale) if task else [], "message": message}
    return render(request, "grade.html", context, actor=actor)


@router.get("/evaluations/{evaluation_id}/grade", response_class=HTMLResponse)
def grade_next(request: Request, actor: PageActor, evaluation_id: int,
               skip: int | None = None, message: str | None = None) -> Response:
    if skip:  # moving on without grading: the skipped result goes back to the pool
        grading.release(settings_of(request).store, actor, skip)
    task = grading.next_task(settings_of(request).store, actor, evaluation_id,
                             exclude=[skip] if skip else ())
    if task is None and skip:  # nothing else: the skipped one is still the one to grade
        task = grading.next_task(settings_of(request).store, actor, evaluation_id)
    return _page(request, actor, evaluation_id, task, message)


@router.get("/tasks/{task_id}", response_class=HTMLResponse)
def grade_task(request: Request, actor: PageActor, task_id: int) -> Response:
    task = grading.task_view(settings_of(request).store, actor, task_id)
    return _page(request, actor, task.evaluation_id, task)


@router.post("/tasks/{task_id}/grade")
def grade_submit(request: Request, actor: PageActor, task_id: int,
                 evaluation_id: Annotated[int, Form()], value: Annotated[str, Form()] = "",
                 reason: Annotated[str, Form()] = "", explanation: Annotated[str, Form()] = "",
                 back: Annotated[str, Form()] = "") -> Response:
    store = settings_of(request).store
    given = grading.GradeInput(task_id, float(value) if value.strip() else None,
                               reason or None, explanation or None)
    message = ""
    try:
        grading.submit_grade(store, actor, given)
    except ConflictError as exc:
        message = f"?message={exc}"
    target = back if back.startswith("/evaluations/") else \
        f"/evaluations/{evaluation_id}/grade"
    return RedirectResponse(target + message.replace(" ", "+"), status_code=303)


@router.post("/tasks/{task_id}/later")
def grade_later(request: Request, actor: PageActor, task_id: int,
                evaluation_id: Annotated[int, Form()]) -> Response:
    grading.judge_later(settings_of(request).store, actor, task_id)
    return RedirectResponse(f"/evaluations/{evaluation_id}/grade?skip={task_id}",
                            status_code=303)


@router.post("/evaluations/{evaluation_id}/undo")
def grade_undo(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    task_id = grading.undo_last(settings_of(request).store, actor, evaluation_id)
    target = f"/tasks/{task_id}" if task_id else f"/evaluations/{evaluation_id}/grade"
    return RedirectResponse(target, status_code=303)


@router.get("/evaluations/{evaluation_id}/queries/{query_id}", response_class=HTMLResponse)
def grade_list(request: Request, actor: PageActor, evaluation_id: int,
               query_id: str) -> Response:
    store = settings_of(request).store
    tasks = grading.query_results(store, actor, evaluation_id, query_id)
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    return render(request, "grade_list.html", {
        "evaluation": ev, "tasks": tasks, "query_id": query_id,
        "keys": _keys(tasks[0].scale) if tasks else []}, actor=actor)
