"""Grading pages: one result at a time, or a query's result list; keyboard first.

Every action is a plain form or link (it works without JavaScript and
without a mouse: Tab and Enter; the server then answers with a redirect to
the next page). With htmx the same forms swap only the task area (one
result at a time) or the row (the list): the server sees ``HX-Request`` and
answers with the fragment. ``static/app.js`` binds the keys declared on the
elements (``data-key``): digits grade, ``j`` / ``k`` next / previous, ``u``
undo, ``l`` judge later, ``?`` can't tell, ``e`` explanation, ``g`` the
guidelines, ``h`` the list of keys.

``k`` walks back through the results this grader graded in the evaluation
(:func:`rankscope.services.assignment.graded_walk`), ``j`` forward again
and then on to new results; grading a result seen that way replaces the
grade and moves on along the walk.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import Id, PageActor, render, settings_of
from rankscope.errors import ConflictError, OptionError
from rankscope.services import assignment, evaluations, grading, projects
from rankscope.services.accounts import Actor

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


def grade_keys(scale: dict[str, Any]) -> list[tuple[str, float]]:
    """The digit that gives each grade: the grade itself; ``0`` is 10 on a 1-10 scale.

    Examples
    --------
    >>> grade_keys({"values": [0.0, 1.0], "min": 0})
    [('0', 0.0), ('1', 1.0)]
    >>> [k for k, _ in grade_keys({"values": [float(v) for v in range(1, 11)], "min": 1})]
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0']
    """
    out = []
    for value in scale["values"]:
        if value == 10 and scale["min"] >= 1:
            out.append(("0", value))
        elif 0 <= value <= 9:
            out.append((f"{value:g}", value))
    return out


def _scale_keys(ev: evaluations.EvaluationView) -> list[tuple[str, float]]:
    from rankscope.judgments.scales import get_scale

    scale = get_scale(ev.scale)
    return grade_keys(assignment.scale_info(scale)) if scale is not None else []


def _hx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def _label(task: assignment.TaskView, value: float | None) -> str:
    if value is None:
        return "can't tell"
    label = task.scale.get("labels", {}).get(f"{value:g}", "")
    return f"{value:g} {label}".strip()


def _context(request: Request, actor: Actor, evaluation_id: Id,
             task: assignment.TaskView | None, message: str | None,
             walking: bool) -> dict[str, Any]:
    store = settings_of(request).store
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    walk = assignment.graded_walk(store, actor, evaluation_id)
    previous = following = None
    at = walk.index(task.task_id) if task is not None and task.task_id in walk else None
    if at is not None:
        previous = walk[at - 1] if at > 0 else None
        following = walk[at + 1] if at + 1 < len(walk) else None
    elif walk:
        previous = walk[-1]
    project = projects.get_project(store, actor, ev.project_id)
    return {"evaluation": ev, "task": task, "previous": previous, "following": following,
            "walking": walking and at is not None, "walk_at": (at + 1) if at is not None else None,
            "walk_len": len(walk), "progress": assignment.progress(store, actor, evaluation_id),
            "keys": _scale_keys(ev), "message": message, "partial": _hx(request),
            "can_curate": projects.RANK[project.role] >= projects.RANK["curator"]}


def _answer(request: Request, actor: Actor, evaluation_id: Id,
            task: assignment.TaskView | None, message: str | None = None,
            walking: bool = False) -> Response:
    context = _context(request, actor, evaluation_id, task, message, walking)
    return render(request, "_task.html" if _hx(request) else "grade.html", context, actor=actor)


def _redirect(evaluation_id: Id, task_id: Id | None, message: str | None,
              walking: bool) -> Response:
    """Where a form posted without htmx goes next (a GET that shows the same thing)."""
    target = (f"/tasks/{task_id}?walk=1" if walking and task_id
              else f"/evaluations/{evaluation_id}/grade")
    if message:
        target += ("&" if "?" in target else "?") + "message=" + quote(message)
    return RedirectResponse(target, status_code=303)


@router.get("/evaluations/{evaluation_id}/grade", response_class=HTMLResponse)
def grade_next(request: Request, actor: PageActor, evaluation_id: Id,
               skip: Id | None = None, message: str | None = None) -> Response:
    store = settings_of(request).store
    if skip:  # moving on without grading: the skipped result goes back to the pool
        assignment.release(store, actor, skip)
    task = assignment.next_task(store, actor, evaluation_id, exclude=[skip] if skip else ())
    if task is None and skip:  # nothing else: the skipped one is still the one to grade
        task = assignment.next_task(store, actor, evaluation_id)
    return _answer(request, actor, evaluation_id, task, message)


@router.get("/tasks/{task_id}", response_class=HTMLResponse)
def grade_task(request: Request, actor: PageActor, task_id: Id, walk: int = 0,
               message: str | None = None) -> Response:
    task = assignment.task_view(settings_of(request).store, actor, task_id)
    return _answer(request, actor, task.evaluation_id, task, message, walking=bool(walk))


def _after(request: Request, actor: Actor, evaluation_id: Id, task_id: Id,
           walking: bool) -> tuple[assignment.TaskView | None, bool]:
    """What comes after ``task_id``: the next graded result along the walk, or a new one."""
    store = settings_of(request).store
    if walking:
        walk = assignment.graded_walk(store, actor, evaluation_id)
        if task_id in walk and walk.index(task_id) + 1 < len(walk):
            following = walk[walk.index(task_id) + 1]
            return assignment.task_view(store, actor, following), True
    return assignment.next_task(store, actor, evaluation_id, exclude=[task_id]), False


@router.post("/tasks/{task_id}/grade")
def grade_submit(request: Request, actor: PageActor, task_id: Id,
                 evaluation_id: Annotated[Id, Form()], value: Annotated[str, Form()] = "",
                 reason: Annotated[str, Form()] = "", explanation: Annotated[str, Form()] = "",
                 walk: Annotated[str, Form()] = "", mode: Annotated[str, Form()] = "",
                 back: Annotated[str, Form()] = "") -> Response:
    store = settings_of(request).store
    try:
        number = float(value) if value.strip() else None
    except ValueError:
        raise OptionError(f"a grade is a number, not {value!r}") from None
    given = grading.GradeInput(task_id, number, reason or None, explanation or None)
    try:
        saved = grading.submit_grade(store, actor, given)
        shown = assignment.task_view(store, actor, task_id, hold=False)
        message = (f"Saved {_label(shown, saved['value'])} for {shown.title or shown.doc_id}"
                   + (" (replacing your earlier grade)" if saved["regrade"] else ""))
    except ConflictError as exc:
        message = f"Not saved: {exc}"
    if mode == "list":
        return _list_row(request, actor, evaluation_id, task_id, message, back)
    walking = walk == "1"
    task, walking = _after(request, actor, evaluation_id, task_id, walking)
    if not _hx(request):
        return _redirect(evaluation_id, task.task_id if task else None, message, walking)
    return _answer(request, actor, evaluation_id, task, message, walking)


@router.post("/tasks/{task_id}/later")
def grade_later(request: Request, actor: PageActor, task_id: Id,
                evaluation_id: Annotated[Id, Form()]) -> Response:
    store = settings_of(request).store
    grading.judge_later(store, actor, task_id)
    message = "Put off: it comes back after the others"
    if not _hx(request):
        return RedirectResponse(f"/evaluations/{evaluation_id}/grade?skip={task_id}&message="
                                + quote(message), status_code=303)
    task = assignment.next_task(store, actor, evaluation_id, exclude=[task_id])
    if task is None:
        task = assignment.next_task(store, actor, evaluation_id)
    return _answer(request, actor, evaluation_id, task, message)


@router.post("/evaluations/{evaluation_id}/undo")
def grade_undo(request: Request, actor: PageActor, evaluation_id: Id,
               mode: Annotated[str, Form()] = "", back: Annotated[str, Form()] = "") -> Response:
    store = settings_of(request).store
    task_id = grading.undo_last(store, actor, evaluation_id)
    message = "Nothing to undo" if task_id is None else "Undone: grade it again"
    if mode == "list" and back.startswith(f"/evaluations/{evaluation_id}/queries/"):
        return RedirectResponse(back + "?message=" + quote(message), status_code=303)
    if not _hx(request):
        target = f"/tasks/{task_id}" if task_id else f"/evaluations/{evaluation_id}/grade"
        return RedirectResponse(target + "?message=" + quote(message), status_code=303)
    task = assignment.task_view(store, actor, task_id) if task_id else assignment.next_task(
        store, actor, evaluation_id)
    return _answer(request, actor, evaluation_id, task, message)


# -- the result-list mode -------------------------------------------------------------


def _list_context(request: Request, actor: Actor, evaluation_id: Id,
                  query_id: str) -> dict[str, Any]:
    store = settings_of(request).store
    tasks = assignment.query_results(store, actor, evaluation_id, query_id)
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    order = assignment.query_ids(store, actor, evaluation_id)
    at = order.index(query_id) if query_id in order else 0
    return {"evaluation": ev, "tasks": tasks, "query_id": query_id,
            "keys": _scale_keys(ev),
            "previous_query": order[at - 1] if at > 0 else None,
            "next_query": order[at + 1] if at + 1 < len(order) else None,
            "query_at": at + 1, "n_queries": len(order),
            "can_curate": projects.RANK[projects.get_project(store, actor, ev.project_id).role]
            >= projects.RANK["curator"],
            "progress": assignment.progress(store, actor, evaluation_id)}


@router.get("/evaluations/{evaluation_id}/queries/{query_id}", response_class=HTMLResponse)
def grade_list(request: Request, actor: PageActor, evaluation_id: Id, query_id: str,
               message: str | None = None) -> Response:
    context = _list_context(request, actor, evaluation_id, query_id)
    return render(request, "grade_list.html", {**context, "message": message}, actor=actor)


def _list_row(request: Request, actor: Actor, evaluation_id: Id, task_id: Id,
              message: str, back: str) -> Response:
    store = settings_of(request).store
    task = assignment.task_view(store, actor, task_id, hold=False)
    if not _hx(request):
        target = back if back.startswith((f"/evaluations/{evaluation_id}/queries/",
                                          f"/evaluations/{evaluation_id}/tries/")) else \
            f"/evaluations/{evaluation_id}/queries/{quote(task.query_id)}"
        joint = "&" if "?" in target else "?"
        return RedirectResponse(f"{target}{joint}message={quote(message)}#t{task_id}",
                                status_code=303)
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    return render(request, "_row.html", {
        "evaluation": ev, "t": task, "keys": _scale_keys(ev), "message": message,
        "progress": assignment.progress(store, actor, evaluation_id), "oob": True},
        actor=actor)
