"""Evaluation pages: overview and run, dashboards, adjudication, imports and exports."""

from __future__ import annotations

import contextlib
import threading
from typing import Annotated

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup

from rankscope.app.core import PageActor, render, settings_of
from rankscope.app.svg import line_chart
from rankscope.errors import InputError
from rankscope.services import dashboards, evaluations, exchange, projects
from rankscope.services.accounts import Actor

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


def _can_curate(request: Request, actor: Actor, project_id: int) -> bool:
    view = projects.get_project(settings_of(request).store, actor, project_id)
    return projects.RANK[view.role] >= projects.RANK["curator"]


@router.get("/evaluations/{evaluation_id}", response_class=HTMLResponse)
def evaluation_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    store = settings_of(request).store
    ev = evaluations.get_evaluation(store, actor, evaluation_id)
    curate = _can_curate(request, actor, ev.project_id)
    others = [e for e in evaluations.list_evaluations(store, actor, ev.project_id)
              if e.id != ev.id] if curate else []
    return render(request, "evaluation.html", {
        "evaluation": ev, "can_curate": curate, "others": others,
        "exports": list(exchange.EXPORTS), "imports": exchange.IMPORTS}, actor=actor)


@router.get("/evaluations/{evaluation_id}/status", response_class=HTMLResponse)
def evaluation_status(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    ev = evaluations.get_evaluation(settings_of(request).store, actor, evaluation_id)
    return render(request, "_status.html", {"evaluation": ev}, actor=actor)


@router.post("/evaluations/{evaluation_id}/run")
def evaluation_run(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    settings = settings_of(request)
    ev = evaluations.get_evaluation(settings.store, actor, evaluation_id)
    if not _can_curate(request, actor, ev.project_id):
        from rankscope.errors import ForbiddenError

        raise ForbiddenError("only curators run evaluations")
    running = settings.runs.get(evaluation_id)
    if running is None or not running.is_alive():
        def work() -> None:
            # the outcome (ready, or failed with its error) is recorded on the evaluation,
            # which the page polls; nothing is left to report from this thread
            with contextlib.suppress(Exception):
                evaluations.run_evaluation(settings.store, actor, evaluation_id)

        thread = threading.Thread(target=work, name=f"run-{evaluation_id}", daemon=True)
        settings.runs[evaluation_id] = thread
        thread.start()
    return RedirectResponse(f"/evaluations/{evaluation_id}", status_code=303)


@router.post("/evaluations/{evaluation_id}/settings")
def evaluation_settings(request: Request, actor: PageActor, evaluation_id: int,
                        baseline_id: Annotated[str, Form()] = "",
                        annotation: Annotated[str, Form()] = "",
                        guidelines: Annotated[str | None, Form()] = None) -> Response:
    evaluations.update_evaluation(
        settings_of(request).store, actor, evaluation_id,
        baseline_id=int(baseline_id) if baseline_id.strip() else None,
        annotation=annotation, guidelines=guidelines)
    return RedirectResponse(f"/evaluations/{evaluation_id}", status_code=303)


def _dashboard(request: Request, actor: Actor, evaluation_id: int, name: str,
               **context: object) -> Response:
    ev = evaluations.get_evaluation(settings_of(request).store, actor, evaluation_id)
    return render(request, name, {"evaluation": ev, **context}, actor=actor)


@router.get("/evaluations/{evaluation_id}/metrics", response_class=HTMLResponse)
def metrics_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    store = settings_of(request).store
    report = dashboards.metrics_report(store, actor, evaluation_id)
    coverage = dashboards.coverage_report(store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "metrics.html", report=report,
                      coverage=coverage)


@router.get("/evaluations/{evaluation_id}/snapshot/{query_id}", response_class=HTMLResponse)
def drill_page(request: Request, actor: PageActor, evaluation_id: int,
               query_id: str) -> Response:
    found = dashboards.drill_down(settings_of(request).store, actor, evaluation_id, query_id)
    return _dashboard(request, actor, evaluation_id, "drill.html", drill=found)


@router.get("/evaluations/{evaluation_id}/coverage", response_class=HTMLResponse)
def coverage_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    report = dashboards.coverage_report(settings_of(request).store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "coverage.html", coverage=report)


@router.get("/evaluations/{evaluation_id}/agreement", response_class=HTMLResponse)
def agreement_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    report = dashboards.agreement_report(settings_of(request).store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "agreement.html", agreement=report)


@router.get("/evaluations/{evaluation_id}/disagreements", response_class=HTMLResponse)
def disagreements_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    found = dashboards.disagreements(settings_of(request).store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "disagreements.html", items=found)


@router.post("/evaluations/{evaluation_id}/adjudicate")
def adjudicate(request: Request, actor: PageActor, evaluation_id: int,
               query_id: Annotated[str, Form()], doc_id: Annotated[str, Form()],
               value: Annotated[float, Form()], note: Annotated[str, Form()] = "") -> Response:
    dashboards.adjudicate(settings_of(request).store, actor, evaluation_id, query_id, doc_id,
                          value, note or None)
    return RedirectResponse(f"/evaluations/{evaluation_id}/disagreements", status_code=303)


@router.get("/evaluations/{evaluation_id}/history", response_class=HTMLResponse)
def history_page(request: Request, actor: PageActor, evaluation_id: int) -> Response:
    rows = dashboards.history(settings_of(request).store, actor, evaluation_id)
    metrics = list(rows[-1]["mean"]) if rows else []
    chart = line_chart([f"#{r['evaluation_id']}" for r in rows],
                       {m: [r["mean"].get(m) for r in rows] for m in metrics},
                       [r["annotation"] for r in rows])
    return _dashboard(request, actor, evaluation_id, "history.html", rows=rows,
                      metrics=metrics, chart=Markup(chart))


@router.get("/evaluations/{evaluation_id}/compare", response_class=HTMLResponse)
def compare_page(request: Request, actor: PageActor, evaluation_id: int,
                 baseline: int | None = None) -> Response:
    report = dashboards.compare_with_baseline(settings_of(request).store, actor, evaluation_id,
                                              baseline)
    return _dashboard(request, actor, evaluation_id, "compare.html", report=report)


@router.get("/evaluations/{evaluation_id}/export/{name}")
def export_file(request: Request, actor: PageActor, evaluation_id: int, name: str) -> Response:
    body, media = exchange.export(settings_of(request).store, actor, evaluation_id, name)
    return Response(body, media_type=media, headers={
        "Content-Disposition": f'attachment; filename="evaluation{evaluation_id}-{name}"'})


@router.post("/evaluations/{evaluation_id}/import", response_class=HTMLResponse)
async def import_file(request: Request, actor: PageActor, evaluation_id: int,
                      file: Annotated[UploadFile, File()],
                      format: Annotated[str, Form()] = "grades",
                      rater: Annotated[str, Form()] = "") -> Response:
    from starlette.concurrency import run_in_threadpool

    data = await file.read(exchange.MAX_UPLOAD + 1)
    if len(data) > exchange.MAX_UPLOAD:
        raise InputError("larger than an import accepts", source=file.filename)
    summary = await run_in_threadpool(
        exchange.import_grades, settings_of(request).store, actor, evaluation_id, data,
        filename=file.filename or "upload", fmt=format, rater=rater or None)
    return _dashboard(request, actor, evaluation_id, "imported.html", summary=summary)
