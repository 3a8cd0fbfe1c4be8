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
(:func:`rankscope.services.assignment.walk_place`), ``j`` forward again
and then on to new results; grading a result seen that way replaces the
grade and moves on along the walk. ``j`` on a new result skips it: the next
one is the one after it in the order results are handed out, and the page
remembers where the walk is (``after``), so skipping again and again goes
through the whole pool. Each action is one call of
:mod:`rankscope.services.grading_page`: one transaction.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import Id, LoginRequired, MaybePageActor, PageActor, render, settings_of
from rankscope.errors import OptionError
from rankscope.services import (
    assignment,
    campaigns,
    grading,
    grading_page,
    grading_progress,
    projects,
    task_views,
)
from rankscope.services.accounts import Actor
from rankscope.services.limits import MAX_ID

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


def _scale_keys(ev: campaigns.EvaluationView) -> list[tuple[str, float]]:
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


def _context(request: Request, page: grading_page.GradingPage,
             message: str | None) -> dict[str, Any]:
    walk = page.walk
    return {"evaluation": page.evaluation, "task": page.task, "previous": walk.previous,
            "following": walk.following, "walking": page.walking, "walk_at": walk.at,
            "walk_len": walk.length, "progress": page.progress, "after": page.after,
            "keys": _scale_keys(page.evaluation), "message": message, "partial": _hx(request),
            "can_curate": projects.RANK[page.role] >= projects.RANK["curator"]}


def _answer(request: Request, actor: Actor, page: grading_page.GradingPage,
            message: str | None = None, kept: dict[str, str] | None = None) -> Response:
    context = _context(request, page, message)
    context["kept"] = kept
    return render(request, "_task.html" if _hx(request) else "grade.html", context, actor=actor)


def _redirect(page: grading_page.GradingPage, message: str | None) -> Response:
    """Where a form posted without htmx goes next (a GET that shows the same thing: the
    result leased to the grader comes first there)."""
    if page.walking and page.task is not None:
        target = f"/tasks/{page.task.task_id}?walk=1"
    else:
        target = f"/evaluations/{page.evaluation.id}/grade"
        if page.after:
            target += f"?after={page.after}"
    if message:
        target += ("&" if "?" in target else "?") + "message=" + quote(message)
    return RedirectResponse(target, status_code=303)


def _saved_message(page: grading_page.GradingPage) -> str:
    if page.refused is not None or page.saved is None or page.graded is None:
        return f"Not saved: {page.refused}"
    shown = page.graded
    return (f"Saved {_label(shown, page.saved['value'])} for {shown.title or shown.doc_id}"
            + (" (replacing your earlier grade)" if page.saved["regrade"] else ""))


@router.get("/evaluations/{evaluation_id}/grade", response_class=HTMLResponse)
def grade_next(request: Request, actor: PageActor, evaluation_id: Id,
               skip: Id | None = None, after: Id | None = None,
               message: str | None = None) -> Response:
    page = grading_page.open_page(settings_of(request).store, actor, evaluation_id, skip=skip,
                                  after=after)
    return _answer(request, actor, page, message)


@router.get("/tasks/{task_id}", response_class=HTMLResponse)
def grade_task(request: Request, actor: PageActor, task_id: Id, walk: int = 0,
               message: str | None = None, unsaved: str | None = None, reason: str = "",
               explanation: str = "") -> Response:
    page = grading_page.task_page(settings_of(request).store, actor, task_id,
                                  walking=bool(walk))
    kept = None
    if page.task is not None and (unsaved == "cant-tell" or (unsaved and _is_number(unsaved))):
        # a grade sent after the session ended: kept here, to be sent again
        value = "" if unsaved == "cant-tell" else unsaved[:20]
        shown = _label(page.task, float(value)) if value else "can't tell"
        kept = {"value": value, "reason": reason[:500], "explanation": explanation[:2000]}
        message = (f"Not saved: your session had ended before your grade {shown} reached "
                   "the server. It is kept below: press it again to save it.")
    return _answer(request, actor, page, message, kept=kept)


def _is_number(text: str) -> bool:
    """A finite number (a grade's value as a form sends it)."""
    import math

    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _kept_target(task_id: int, value: str, reason: str, explanation: str, walk: str) -> str:
    """The task's page with a grade that was not saved, kept for sending again."""
    from urllib.parse import urlencode

    kept = {"unsaved": value.strip()[:20] or "cant-tell", "reason": reason[:500],
            "explanation": explanation[:2000], "walk": "1" if walk == "1" else ""}
    return f"/tasks/{task_id}?" + urlencode({k: v for k, v in kept.items() if v})


def _number(value: str) -> float | None:
    try:
        return float(value) if value.strip() else None
    except ValueError:
        raise OptionError(f"a grade is a number, not {value!r}") from None


def _cursor(after: str) -> int | None:
    """The page's place in the pool (a hidden field): an id, else none (from the start)."""
    text = after.strip()
    return int(text) if text.isdigit() and 1 <= int(text) <= MAX_ID else None


@router.post("/tasks/{task_id}/grade")
def grade_submit(request: Request, actor: MaybePageActor, task_id: Id,
                 evaluation_id: Annotated[Id, Form()], value: Annotated[str, Form()] = "",
                 reason: Annotated[str, Form()] = "", explanation: Annotated[str, Form()] = "",
                 walk: Annotated[str, Form()] = "", mode: Annotated[str, Form()] = "",
                 back: Annotated[str, Form()] = "", after: Annotated[str, Form()] = "",
                 ) -> Response:
    if actor is None:  # the session ended (signed out elsewhere): nothing is saved
        raise LoginRequired(_kept_target(task_id, value, reason, explanation, walk), exact=True)
    store = settings_of(request).store
    given = grading.GradeInput(task_id, _number(value), reason or None, explanation or None)
    if mode == "list":
        page = grading_page.grade_row(store, actor, given)
        return _list_row(request, actor, page, _saved_message(page), back)
    page = grading_page.grade_and_next(store, actor, given, walking=walk == "1",
                                       after=_cursor(after))
    if not _hx(request):
        return _redirect(page, _saved_message(page))
    return _answer(request, actor, page, _saved_message(page))


@router.post("/tasks/{task_id}/later")
def grade_later(request: Request, actor: PageActor, task_id: Id,
                evaluation_id: Annotated[Id, Form()],
                after: Annotated[str, Form()] = "") -> Response:
    store = settings_of(request).store
    message = "Put off: it comes back after the others"
    if not _hx(request):  # put off (its lease given back): the page then shows another
        grading.judge_later(store, actor, task_id)
        cursor = f"after={_cursor(after)}&" if _cursor(after) else ""
        return RedirectResponse(f"/evaluations/{evaluation_id}/grade?{cursor}message="
                                + quote(message), status_code=303)
    page = grading_page.later_and_next(store, actor, task_id, after=_cursor(after))
    return _answer(request, actor, page, message)


def _undo_message(undo: grading.Undone | None, shown: assignment.TaskView | None) -> str:
    """What an undo did, in words: the grade removed, and the earlier one restored if any
    (``shown``: the result undone, as the grader sees it, for its title and labels)."""
    if undo is None or undo.task_id is None:
        return "Nothing to undo"
    if shown is None or shown.task_id != undo.task_id:  # not shown again: no labels to hand
        return "Undone" + (": your earlier grade is restored" if undo.restored else "")
    what = shown.title or shown.doc_id
    removed = _label(shown, undo.removed)
    if undo.restored:
        restored = _label(shown, undo.restored_value)
        return (f"Undone: your grade {removed} for {what} is withdrawn; your earlier grade "
                f"{restored} is restored (u again removes it)")
    return f"Undone: your grade {removed} for {what} is removed; grade it again"


@router.post("/evaluations/{evaluation_id}/undo")
def grade_undo(request: Request, actor: PageActor, evaluation_id: Id,
               mode: Annotated[str, Form()] = "", back: Annotated[str, Form()] = "") -> Response:
    store = settings_of(request).store
    if mode == "list" and back.startswith(f"/evaluations/{evaluation_id}/queries/"):
        undo = grading.undo_grade(store, actor, evaluation_id)
        shown = (assignment.task_view(store, actor, undo.task_id, hold=False)
                 if undo is not None and undo.task_id is not None else None)
        message = _undo_message(undo, shown)
        return RedirectResponse(back + "?message=" + quote(message), status_code=303)
    page = grading_page.undo_and_show(store, actor, evaluation_id)
    message = _undo_message(page.undo, page.task)
    if not _hx(request):
        target = (f"/tasks/{page.undone}" if page.undone
                  else f"/evaluations/{evaluation_id}/grade")
        return RedirectResponse(target + "?message=" + quote(message), status_code=303)
    return _answer(request, actor, page, message)


# -- the result-list mode -------------------------------------------------------------


def _list_context(request: Request, actor: Actor, evaluation_id: Id,
                  query_id: str) -> dict[str, Any]:
    store = settings_of(request).store
    tasks = task_views.query_results(store, actor, evaluation_id, query_id)
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    order = task_views.query_ids(store, actor, evaluation_id)
    at = order.index(query_id) if query_id in order else 0
    return {"evaluation": ev, "tasks": tasks, "query_id": query_id,
            "keys": _scale_keys(ev),
            "previous_query": order[at - 1] if at > 0 else None,
            "next_query": order[at + 1] if at + 1 < len(order) else None,
            "query_at": at + 1, "n_queries": len(order),
            "can_curate": projects.RANK[projects.get_project(store, actor, ev.project_id).role]
            >= projects.RANK["curator"],
            "progress": grading_progress.progress(store, actor, evaluation_id)}


@router.get("/evaluations/{evaluation_id}/queries/{query_id}", response_class=HTMLResponse)
def grade_list(request: Request, actor: PageActor, evaluation_id: Id, query_id: str,
               message: str | None = None) -> Response:
    context = _list_context(request, actor, evaluation_id, query_id)
    return render(request, "grade_list.html", {**context, "message": message}, actor=actor)


def _list_row(request: Request, actor: Actor, page: grading_page.GradingPage,
              message: str, back: str) -> Response:
    task = page.task
    if task is None:  # pragma: no cover - grade_row always shows the row it graded
        raise OptionError("no row to show")
    ev_id = page.evaluation.id
    if not _hx(request):
        target = back if back.startswith((f"/evaluations/{ev_id}/queries/",
                                          f"/evaluations/{ev_id}/tries/",
                                          f"/evaluations/{ev_id}/side")) else \
            f"/evaluations/{ev_id}/queries/{quote(task.query_id)}"
        joint = "&" if "?" in target else "?"
        return RedirectResponse(f"{target}{joint}message={quote(message)}#t{task.task_id}",
                                status_code=303)
    return render(request, "_row.html", {
        "evaluation": page.evaluation, "t": task, "keys": _scale_keys(page.evaluation),
        "message": message, "progress": page.progress, "oob": True}, actor=actor)
