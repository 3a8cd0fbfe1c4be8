"""Tries of an evaluation's endpoint: numbered, side by side with its snapshot, graded in place.

Thin over :mod:`rankscope.services.tries`: a curator writes changes
(``KEY=VALUE``, one a line) and runs them on one query or the whole set; a
try's page shows one query at a time, the evaluation's list and the try's
next to each other (``n`` / ``p`` page through the queries, ``j`` / ``k``
move along the try's results and the digits grade the selected one, as in
the grading list), each result's explanation on demand, a search with other
words whose results can be added to the query's pool by hand, and, for a
try of the whole set, the button that makes it an evaluation. The same
side-by-side view pages through two evaluations of a project (``/side``) and
any two snapshots of the project, picked in a form (``/snapshots/side``: two
tries, a try and another evaluation's run, over
:mod:`rankscope.services.side_views`).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import Id, PageActor, render, settings_of
from rankscope.app.pages_grading import _scale_keys
from rankscope.errors import ForbiddenError, NotFoundError
from rankscope.services import (
    assignment,
    campaigns,
    catalog,
    comparison,
    pool,
    projects,
    side_views,
    task_views,
    tries,
)
from rankscope.services.accounts import Actor

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


def _curating(request: Request, actor: Actor, ev: campaigns.EvaluationView) -> bool:
    project = projects.get_project(settings_of(request).store, actor, ev.project_id)
    return projects.RANK[project.role] >= projects.RANK["curator"]


@router.get("/evaluations/{evaluation_id}/tries", response_class=HTMLResponse)
def tries_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    store = settings_of(request).store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    if not _curating(request, actor, ev):
        raise ForbiddenError("only curators try changes")
    queries = task_views.query_ids(store, actor, evaluation_id)
    endpoint = catalog.get_endpoint(store, actor, ev.endpoint_id)
    return render(request, "tries.html", {
        "evaluation": ev, "tries": tries.list_tries(store, actor, evaluation_id),
        "queries": queries, "endpoint": endpoint, "can_curate": True, "tab": "tries"},
        actor=actor)


@router.post("/evaluations/{evaluation_id}/tries")
def try_run(request: Request, actor: PageActor, evaluation_id: Id,
            changes: Annotated[str, Form()] = "",
            query_id: Annotated[str, Form()] = "") -> Response:
    settings = settings_of(request)
    lines = [line.strip() for line in changes.splitlines() if line.strip()]
    # checked and numbered now (a bad change is a 4xx here); sent in the background, as an
    # evaluation's run is: the try's page polls until it is done or failed
    started = tries.start_try(settings.store, actor, evaluation_id, lines,
                              boundary=settings.boundary, query_id=query_id.strip() or None)

    def work() -> None:
        # the outcome (done, or failed with its error) is recorded on the try
        with contextlib.suppress(Exception):
            tries.complete_try(settings.store, actor, started, boundary=settings.boundary)

    threading.Thread(target=work, name=f"try-{evaluation_id}-{started.view.number}",
                     daemon=True).start()
    return RedirectResponse(f"/evaluations/{evaluation_id}/tries/{started.view.number}",
                            status_code=303)


@router.get("/evaluations/{evaluation_id}/tries/{number}/status", response_class=HTMLResponse)
def try_status(request: Request, actor: PageActor, evaluation_id: Id, number: Id) -> Response:
    """The running try's status line; once it has ended, a refresh of its page (htmx)."""
    listed = {t.number: t for t in tries.list_tries(settings_of(request).store, actor,
                                                    evaluation_id)}
    view = listed.get(number)
    if view is None:
        raise NotFoundError(f"no try #{number} of evaluation #{evaluation_id}")
    if view.status != "running":
        return HTMLResponse(f"<span id=\"try-status\">{view.status}</span>",
                            headers={"HX-Refresh": "true"})
    return render(request, "_try_status.html", {"evaluation_id": evaluation_id, "try": view})


@router.get("/evaluations/{evaluation_id}/tries/{number}", response_class=HTMLResponse)
def try_page(request: Request, actor: PageActor, evaluation_id: Id, number: Id,
             q: str | None = None, words: str | None = None,
             message: str | None = None) -> Response:
    settings = settings_of(request)
    store = settings.store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    if not _curating(request, actor, ev):
        raise ForbiddenError("only curators see tries")
    listed = {t.number: t for t in tries.list_tries(store, actor, evaluation_id)}
    view = listed.get(number)
    context: dict[str, Any] = {"evaluation": ev, "try": view, "tries": list(listed.values()),
                               "can_curate": True, "message": message, "keys": _scale_keys(ev),
                               "tab": "tries"}
    if view is None or view.status != "done":
        return render(request, "try.html", context, actor=actor,
                      status=404 if view is None else 200)
    every = tries.side_by_side(store, actor, evaluation_id, number)
    context.update(_paged(store, actor, every, q))
    current = context["query_id"]
    found = None
    if words and current:
        found = pool.search_other_words(store, actor, evaluation_id, words,
                                        boundary=settings.boundary)
    context.update({
        "words": words or "", "found": found,
        "back": f"/evaluations/{evaluation_id}/tries/{number}?q={quote(current or '')}"})
    return render(request, "try.html", context, actor=actor)


def _paged(store: Any, actor: Actor, every: dict[str, Any], q: str | None) -> dict[str, Any]:
    """One query of a side-by-side comparison, its neighbours, and B's rows as tasks."""
    order = [v["query_id"] for v in every["queries"]]
    current = q if q in order else (order[0] if order else None)
    shown = next((v for v in every["queries"] if v["query_id"] == current), None)
    at = order.index(current) if current in order else 0
    rows = []
    for row in (shown or {}).get("rows", []):
        task = None
        if row["b"] and row["b"].get("task_id"):
            task = assignment.task_view(store, actor, row["b"]["task_id"], hold=False)
        rows.append({**row, "task": task})
    return {"compared": every, "query": shown, "rows": rows, "query_id": current,
            "previous_query": order[at - 1] if at > 0 else None,
            "next_query": order[at + 1] if at + 1 < len(order) else None,
            "query_at": at + 1, "n_queries": len(order)}


@router.get("/evaluations/{evaluation_id}/side", response_class=HTMLResponse)
def side_page(request: Request, actor: PageActor, evaluation_id: Id, baseline: Id,
              q: str | None = None, message: str | None = None) -> Response:
    """This evaluation next to another of the project, a query at a time (n / p)."""
    store = settings_of(request).store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    other = campaigns.get_evaluation(store, actor, baseline)
    every = comparison.side_by_side(store, actor, evaluation_id, baseline)
    context = {"evaluation": ev, "other": other, "can_curate": True, "message": message,
               "keys": _scale_keys(ev), "tab": "compare", **_paged(store, actor, every, q)}
    return render(request, "side.html", context, actor=actor)


@router.get("/evaluations/{evaluation_id}/snapshots/side", response_class=HTMLResponse)
def snapshots_side_page(request: Request, actor: PageActor, evaluation_id: Id,
                        a: Id | None = None, b: Id | None = None, q: str | None = None,
                        message: str | None = None) -> Response:
    """Any two snapshots of the project side by side on this evaluation's grades (the form
    picks them: evaluations' runs, tries), a query at a time (n / p), B's results graded
    with the digits."""
    store = settings_of(request).store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    if not _curating(request, actor, ev):
        raise ForbiddenError("only curators compare snapshots")
    listed = side_views.project_snapshots(store, actor, evaluation_id)
    context: dict[str, Any] = {"evaluation": ev, "snapshots": listed, "a": a, "b": b,
                               "can_curate": True, "message": message,
                               "keys": _scale_keys(ev), "tab": "compare", "compared": None}
    if a is not None and b is not None:
        every = side_views.snapshots_side_by_side(store, actor, evaluation_id, a, b)
        context.update(_paged(store, actor, every, q))
    return render(request, "snapshots_side.html", context, actor=actor)


@router.post("/evaluations/{evaluation_id}/tries/{number}/evaluation")
def try_to_evaluation(request: Request, actor: PageActor, evaluation_id: Id,
                      number: Id) -> Response:
    settings = settings_of(request)
    made = tries.make_evaluation(settings.store, actor, evaluation_id, number,
                                 boundary=settings.boundary)
    return RedirectResponse(f"/evaluations/{made}", status_code=303)


@router.post("/evaluations/{evaluation_id}/pool")
def pool_add(request: Request, actor: PageActor, evaluation_id: Id,
             query_id: Annotated[str, Form()], doc_id: Annotated[str, Form()],
             title: Annotated[str, Form()] = "", url: Annotated[str, Form()] = "",
             snippet: Annotated[str, Form()] = "", back: Annotated[str, Form()] = "") -> Response:
    task_id = pool.add_to_pool(settings_of(request).store, actor, evaluation_id, query_id,
                               doc_id, title=title or None, url=url or None,
                               snippet=snippet or None)
    message = quote(f"Added {doc_id} to {query_id}'s pool (task #{task_id}): grade it")
    if back.startswith(f"/evaluations/{evaluation_id}/tries/"):
        return RedirectResponse(f"{back}&message={message}", status_code=303)
    return RedirectResponse(f"/tasks/{task_id}?message={message}", status_code=303)
