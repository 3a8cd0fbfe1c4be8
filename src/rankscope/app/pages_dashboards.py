"""Evaluation pages: overview and run, dashboards, adjudication, imports and exports."""

from __future__ import annotations

import contextlib
import threading
from typing import Annotated

from fastapi import APIRouter, File, Form, Request
from fastapi import UploadFile as Upload
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup

from rankscope.app.core import Id, PageActor, form_id, render, settings_of
from rankscope.app.svg import delta_bars, line_chart
from rankscope.errors import ForbiddenError, InputError, OptionError, RankscopeError
from rankscope.services import (
    adjudication,
    campaign_runs,
    campaigns,
    comparison,
    dashboards,
    exchange,
    freezing,
    grading_progress,
    projects,
)
from rankscope.services.accounts import Actor

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


def _can_curate(request: Request, actor: Actor, project_id: Id) -> bool:
    view = projects.get_project(settings_of(request).store, actor, project_id)
    return projects.RANK[view.role] >= projects.RANK["curator"]


@router.get("/evaluations/{evaluation_id}", response_class=HTMLResponse)
def evaluation_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    store = settings_of(request).store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    curate = _can_curate(request, actor, ev.project_id)
    others = [e for e in campaigns.list_evaluations(store, actor, ev.project_id)
              if e.id != ev.id] if curate else []
    return render(request, "evaluation.html", {
        "evaluation": ev, "can_curate": curate, "others": others, "tab": "overview",
        **_run_state(request, evaluation_id),
        "progress": grading_progress.progress(store, actor, evaluation_id),
        "exports": exchange.exports_of(store, actor, evaluation_id) if curate else [],
        "imports": exchange.IMPORTS}, actor=actor)


def _run_state(request: Request, evaluation_id: int) -> dict[str, object]:
    """What the status line needs of a background run: started (the thread alive) and
    its progress (queries answered, queries)."""
    settings = settings_of(request)
    thread = settings.runs.get(evaluation_id)
    return {"run_alive": thread is not None and thread.is_alive(),
            "run_progress": settings.run_progress.get(evaluation_id)}


@router.get("/evaluations/{evaluation_id}/status", response_class=HTMLResponse)
def evaluation_status(request: Request, actor: PageActor, evaluation_id: Id,
                      was: str = "") -> Response:
    ev = campaigns.get_evaluation(settings_of(request).store, actor, evaluation_id)
    state = _run_state(request, evaluation_id)
    response = render(request, "_status.html", {"evaluation": ev, **state}, actor=actor)
    if was in ("draft", "running") and ev.status not in ("draft", "running"):
        # the run ended: the whole page changes (progress, "Start grading"), not only the line
        response.headers["HX-Refresh"] = "true"
    return response


@router.post("/evaluations/{evaluation_id}/run")
def evaluation_run(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    settings = settings_of(request)
    ev = campaigns.get_evaluation(settings.store, actor, evaluation_id)
    if not _can_curate(request, actor, ev.project_id):
        raise ForbiddenError("only curators run evaluations")
    running = settings.runs.get(evaluation_id)
    if running is None or not running.is_alive():
        def progress(done: int, total: int) -> None:
            settings.run_progress[evaluation_id] = (done, total)

        def work() -> None:
            # the outcome (ready, or failed with its error) is recorded on the evaluation,
            # which the page polls; nothing is left to report from this thread
            with contextlib.suppress(Exception):
                campaign_runs.run_evaluation(settings.store, actor, evaluation_id,
                                             boundary=settings.boundary, progress=progress)
            settings.run_progress.pop(evaluation_id, None)

        settings.run_progress.pop(evaluation_id, None)
        thread = threading.Thread(target=work, name=f"run-{evaluation_id}", daemon=True)
        settings.runs[evaluation_id] = thread
        thread.start()
    return RedirectResponse(f"/evaluations/{evaluation_id}", status_code=303)


@router.post("/evaluations/{evaluation_id}/settings")
def evaluation_settings(request: Request, actor: PageActor, evaluation_id: Id,
                        baseline_id: Annotated[str, Form()] = "",
                        annotation: Annotated[str, Form()] = "",
                        guidelines: Annotated[str | None, Form()] = None) -> Response:
    # the form always says the baseline: none chosen clears it
    baseline = form_id(baseline_id, "the baseline")
    campaigns.update_evaluation(
        settings_of(request).store, actor, evaluation_id, campaigns.EvaluationSettingsSpec(
            baseline_id=baseline, clear_baseline=baseline is None, annotation=annotation,
            guidelines=guidelines))
    return RedirectResponse(f"/evaluations/{evaluation_id}", status_code=303)


def _dashboard(request: Request, actor: Actor, evaluation_id: Id, name: str, tab: str,
               **context: object) -> Response:
    ev = campaigns.get_evaluation(settings_of(request).store, actor, evaluation_id)
    return render(request, name, {"evaluation": ev, "tab": tab, "can_curate": True, **context},
                  actor=actor)


@router.get("/evaluations/{evaluation_id}/metrics", response_class=HTMLResponse)
def metrics_page(request: Request, actor: PageActor, evaluation_id: Id,
                 today: bool = False) -> Response:
    store = settings_of(request).store
    loaded = dashboards.Loaded()  # the page's views of the evaluation share one read of it
    report = dashboards.metrics_report(store, actor, evaluation_id, loaded=loaded)
    coverage = dashboards.coverage_report(store, actor, evaluation_id, loaded=loaded)
    return _dashboard(request, actor, evaluation_id, "metrics.html", "metrics", report=report,
                      coverage=coverage, show_today=today)


@router.post("/evaluations/{evaluation_id}/freeze")
def freeze_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    freezing.freeze_evaluation(settings_of(request).store, actor, evaluation_id)
    return RedirectResponse(f"/evaluations/{evaluation_id}/metrics", status_code=303)


@router.get("/evaluations/{evaluation_id}/snapshot/{query_id}", response_class=HTMLResponse)
def drill_page(request: Request, actor: PageActor, evaluation_id: Id,
               query_id: str) -> Response:
    found = dashboards.drill_down(settings_of(request).store, actor, evaluation_id, query_id)
    return _dashboard(request, actor, evaluation_id, "drill.html", "metrics", drill=found)


@router.get("/evaluations/{evaluation_id}/coverage", response_class=HTMLResponse)
def coverage_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    report = dashboards.coverage_report(settings_of(request).store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "coverage.html", "coverage",
                      coverage=report)


@router.get("/evaluations/{evaluation_id}/agreement", response_class=HTMLResponse)
def agreement_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    report = adjudication.agreement_report(settings_of(request).store, actor, evaluation_id)
    return _dashboard(request, actor, evaluation_id, "agreement.html", "agreement",
                      agreement=report)


@router.get("/evaluations/{evaluation_id}/agreement/project", response_class=HTMLResponse)
def project_agreement_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    report = adjudication.agreement_report(settings_of(request).store, actor, evaluation_id,
                                           "project")
    return _dashboard(request, actor, evaluation_id, "agreement.html", "agreement",
                      agreement=report)


@router.get("/evaluations/{evaluation_id}/disagreements/project", response_class=HTMLResponse)
def project_disagreements_page(request: Request, actor: PageActor, evaluation_id: Id,
                               message: str | None = None) -> Response:
    return disagreements_page(request, actor, evaluation_id, message, scope="project")


@router.get("/evaluations/{evaluation_id}/disagreements", response_class=HTMLResponse)
def disagreements_page(request: Request, actor: PageActor, evaluation_id: Id,
                       message: str | None = None, scope: str = "evaluation") -> Response:
    store = settings_of(request).store
    found = adjudication.disagreements(store, actor, evaluation_id, scope=scope)
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    from rankscope.judgments.scales import get_scale

    scale = get_scale(ev.scale)
    values = list(scale.values) if scale is not None else []
    return _dashboard(request, actor, evaluation_id, "disagreements.html", "disagreements",
                      items=found, values=values, message=message, scope=scope,
                      labels={f"{g:g}": label for g, label in scale.labels} if scale else {})


@router.post("/evaluations/{evaluation_id}/adjudicate")
def adjudicate(request: Request, actor: PageActor, evaluation_id: Id,
               query_id: Annotated[str, Form()], doc_id: Annotated[str, Form()],
               value: Annotated[str, Form()], note: Annotated[str, Form()] = "") -> Response:
    from urllib.parse import quote

    try:
        number = float(value)
    except ValueError:
        raise OptionError(f"a grade is a number, not {value!r}") from None
    adjudication.adjudicate(settings_of(request).store, actor, evaluation_id, query_id, doc_id,
                            number, note or None)
    message = f"Settled {query_id} / {doc_id} at {number:g}"
    return RedirectResponse(f"/evaluations/{evaluation_id}/disagreements?message="
                            + quote(message), status_code=303)


@router.get("/evaluations/{evaluation_id}/history", response_class=HTMLResponse)
def history_page(request: Request, actor: PageActor, evaluation_id: Id,
                 scope: str = "endpoint") -> Response:
    rows = comparison.history(settings_of(request).store, actor, evaluation_id, scope)
    metrics = list(rows[-1]["mean"]) if rows else []
    for row in rows:
        metrics += [m for m in row["mean"] if m not in metrics]
    chart = line_chart([f"#{r['evaluation_id']}" for r in rows],
                       {m: [r["mean"].get(m) for r in rows] for m in metrics},
                       [r["annotation"] for r in rows], width=880, height=300,
                       provisional=[r["provisional"] for r in rows])
    return _dashboard(request, actor, evaluation_id, "history.html", "history", rows=rows,
                      metrics=metrics, chart=Markup(chart), scope=scope)


@router.get("/evaluations/{evaluation_id}/compare", response_class=HTMLResponse)
def compare_page(request: Request, actor: PageActor, evaluation_id: Id,
                 baseline: Id | None = None, test: str = "t", correction: str = "holm",
                 metric: str | None = None) -> Response:
    store = settings_of(request).store
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    others = [e for e in campaigns.list_evaluations(store, actor, ev.project_id)
              if e.id != ev.id]
    chosen = baseline if baseline is not None else ev.baseline_id
    report, error = None, None
    if chosen is not None:
        try:
            report = comparison.compare_with_baseline(store, actor, evaluation_id, chosen,
                                                      test=test, correction=correction)
        except RankscopeError as exc:
            if isinstance(exc, ForbiddenError):
                raise
            error = str(exc)
    chart = None
    shown_metric = None
    if report and report["metrics"]:
        labels = [r["metric"] for r in report["metrics"]]
        shown_metric = metric if metric in labels else labels[0]
        chart = Markup(delta_bars([q["query_id"] for q in report["per_query"]],
                                  [q["metrics"][shown_metric]["delta"]
                                   for q in report["per_query"]],
                                  title=f"{shown_metric}, this minus the baseline", width=880))
    return _dashboard(request, actor, evaluation_id, "compare.html", "compare", report=report,
                      others=others, chosen=chosen, error=error, chart=chart,
                      shown_metric=shown_metric, test=test, correction=correction,
                      tests=comparison.TESTS, corrections=comparison.CORRECTIONS)


@router.get("/evaluations/{evaluation_id}/export/{name}")
def export_file(request: Request, actor: PageActor, evaluation_id: Id, name: str,
                limit: Id | None = None) -> Response:
    body, media = exchange.export(settings_of(request).store, actor, evaluation_id, name,
                                  limit=limit)
    return Response(body, media_type=media, headers={
        "Content-Disposition": f'attachment; filename="evaluation{evaluation_id}-{name}"'})


@router.post("/evaluations/{evaluation_id}/import", response_class=HTMLResponse)
async def import_file(request: Request, actor: PageActor, evaluation_id: Id,
                      file: Annotated[Upload, File()],
                      format: Annotated[str, Form()] = "grades",
                      rater: Annotated[str, Form()] = "") -> Response:
    from starlette.concurrency import run_in_threadpool

    data = await file.read(exchange.MAX_UPLOAD + 1)
    if len(data) > exchange.MAX_UPLOAD:
        raise InputError("larger than an import accepts", source=file.filename)
    summary = await run_in_threadpool(
        exchange.import_grades, settings_of(request).store, actor, evaluation_id, data,
        filename=file.filename or "upload", fmt=format, rater=rater or None)
    return _dashboard(request, actor, evaluation_id, "imported.html", "overview",
                      summary=summary)
