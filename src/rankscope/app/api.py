"""The JSON API under ``/api/v1`` (``Authorization: Bearer TOKEN``), described at ``/api/docs``.

Everything a script needs: projects, query sets, endpoints, evaluations and
their runs, the next tasks to grade, grades in batches (idempotent by the
client's ``batch_id``: a retried batch gets the first answer and counts
nothing twice), metrics, coverage, agreement, disagreements and
adjudication, history, the baseline comparison, imports and exports. An
answer is sent only after its transaction committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from rankscope.app.core import ApiActor, Id, render, settings_of
from rankscope.app.schemas import Schema, schema_of
from rankscope.errors import ForbiddenError
from rankscope.services import (
    accounts,
    adjudication,
    assignment,
    campaign_runs,
    campaigns,
    catalog,
    comparison,
    dashboards,
    exchange,
    freezing,
    grading,
    grading_progress,
    llm_judges,
    projects,
    sessions,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["api"])
docs_router = APIRouter()


if TYPE_CHECKING:
    ProjectIn = Schema
    MemberIn = Schema
    QuerySetIn = Schema
    EndpointIn = Schema
    EvaluationIn = Schema
    JudgeIn = Schema
    GradeIn = Schema
    AdjudicationIn = Schema
    UserIn = Schema
    UserUpdateIn = Schema
    SettingsIn = Schema
    BatchIn = Schema
else:
    # the request bodies a service's spec declares: the fields of the spec, each field's
    # limit and meaning written once, in the service
    ProjectIn = schema_of(projects.ProjectSpec, "ProjectIn")
    MemberIn = schema_of(projects.MemberSpec, "MemberIn")
    QuerySetIn = schema_of(catalog.QuerySetSpec, "QuerySetIn")
    EndpointIn = schema_of(catalog.EndpointSpec, "EndpointIn")
    EvaluationIn = schema_of(campaigns.EvaluationSpec, "EvaluationIn")
    JudgeIn = schema_of(llm_judges.JudgeSpec, "JudgeIn")
    GradeIn = schema_of(grading.GradeInput, "GradeIn")
    AdjudicationIn = schema_of(adjudication.AdjudicationSpec, "AdjudicationIn")
    UserIn = schema_of(accounts.UserSpec, "UserIn")
    UserUpdateIn = schema_of(accounts.UserUpdateSpec, "UserUpdateIn")
    SettingsIn = schema_of(campaigns.EvaluationSettingsSpec, "SettingsIn")
    BatchIn = schema_of(grading.GradeBatchSpec, "BatchIn")  # its grades: GradeIn


def _store(request: Request) -> Any:
    return settings_of(request).store


@router.get("/me")
def me(actor: ApiActor) -> dict[str, Any]:
    """Who the token belongs to."""
    return {"id": actor.user_id, "name": actor.name, "role": actor.role}


@router.get("/projects")
def project_list(request: Request, actor: ApiActor) -> list[dict[str, Any]]:
    """The projects the user sees."""
    return [p.__dict__ for p in projects.list_projects(_store(request), actor)]


@router.post("/projects", status_code=201)
def project_create(request: Request, actor: ApiActor, body: ProjectIn) -> dict[str, Any]:
    """Create a project (curators and admins); its creator becomes its curator."""
    spec = projects.ProjectSpec(**body.model_dump())
    return projects.create_project(_store(request), actor, spec.name).__dict__


@router.post("/projects/{project_id}/members", status_code=204)
def member_add(request: Request, actor: ApiActor, project_id: Id, body: MemberIn) -> Response:
    """Add a member to the project, or change their role."""
    spec = projects.MemberSpec(**body.model_dump())
    projects.add_member(_store(request), actor, project_id, spec.name, spec.role)
    return Response(status_code=204)


@router.get("/projects/{project_id}/query-sets")
def query_set_list(request: Request, actor: ApiActor, project_id: Id) -> list[dict[str, Any]]:
    """The project's query sets."""
    return [q.__dict__ for q in catalog.list_query_sets(_store(request), actor, project_id)]


@router.post("/projects/{project_id}/query-sets", status_code=201)
def query_set_create(request: Request, actor: ApiActor, project_id: Id,
                     body: QuerySetIn) -> dict[str, Any]:
    """Add a query set (a bad line is reported with its number), or a collection's queries."""
    spec = catalog.QuerySetSpec(**body.model_dump())
    if spec.collection and not spec.text.strip():
        return catalog.import_query_set_from_collection(
            _store(request), actor, project_id, spec.name, spec.collection,
            settings_of(request).irds).__dict__
    return catalog.import_query_set(_store(request), actor, project_id, spec.name, spec.text,
                                    spec.source).__dict__


@router.get("/query-sets/{query_set_id}/queries")
def query_set_queries(request: Request, actor: ApiActor,
                      query_set_id: Id) -> list[dict[str, Any]]:
    """The queries of a query set, in order."""
    return catalog.query_set_queries(_store(request), actor, query_set_id)


@router.get("/projects/{project_id}/endpoints")
def endpoint_list(request: Request, actor: ApiActor, project_id: Id) -> list[dict[str, Any]]:
    """The project's endpoints."""
    return [e.__dict__ for e in catalog.list_endpoints(_store(request), actor, project_id)]


@router.post("/projects/{project_id}/endpoints", status_code=201)
def endpoint_create(request: Request, actor: ApiActor, project_id: Id,
                    body: EndpointIn) -> dict[str, Any]:
    """Add an endpoint (or replace the one of the same name)."""
    settings = settings_of(request)
    spec = catalog.EndpointSpec(**body.model_dump())
    return catalog.save_endpoint(settings.store, actor, project_id, spec.toml, name=spec.name,
                                 boundary=settings.boundary).__dict__


@router.get("/projects/{project_id}/evaluations")
def evaluation_list(request: Request, actor: ApiActor,
                    project_id: Id) -> list[dict[str, Any]]:
    """The project's evaluations."""
    return [e.to_dict() for e in campaigns.list_evaluations(_store(request), actor,
                                                               project_id)]


@router.post("/projects/{project_id}/evaluations", status_code=201)
def evaluation_create(request: Request, actor: ApiActor, project_id: Id,
                      body: EvaluationIn) -> dict[str, Any]:
    """Create an evaluation (status ``draft``; run it next)."""
    spec = campaigns.EvaluationSpec(**body.model_dump())
    return campaigns.create_evaluation(_store(request), actor, project_id, spec).to_dict()


@router.get("/evaluations/{evaluation_id}")
def evaluation_get(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, Any]:
    """One evaluation."""
    return campaigns.get_evaluation(_store(request), actor, evaluation_id).to_dict()


@router.post("/evaluations/{evaluation_id}/settings")
def evaluation_settings(request: Request, actor: ApiActor, evaluation_id: Id,
                        body: SettingsIn) -> dict[str, Any]:
    """Change the baseline, the annotation ("what changed") or the guidelines."""
    spec = campaigns.EvaluationSettingsSpec(**body.model_dump())
    return campaigns.update_evaluation(_store(request), actor, evaluation_id, spec).to_dict()


@router.post("/evaluations/{evaluation_id}/run")
def evaluation_run(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, Any]:
    """Take the snapshot and create the tasks (answers when done)."""
    return campaign_runs.run_evaluation(_store(request), actor, evaluation_id,
                                        boundary=settings_of(request).boundary)


# The graders' two requests are `async def` that run their service in the thread pool: a
# sync route with a return annotation takes a pool thread twice, for its body and again
# for FastAPI's check of what it returns (run on the event loop for an async route). The
# caller's token stays a dependency of its own, resolved before the parameters and body
# are checked, so a request with a bad token and a bad body still answers 401.


def _next_tasks(request: Request, actor: accounts.Actor, evaluation_id: int,
                n: int) -> list[dict[str, Any]]:
    return [t.to_dict() for t in assignment.next_tasks(_store(request), actor, evaluation_id,
                                                       n)]


@router.get("/evaluations/{evaluation_id}/tasks/next")
async def tasks_next(request: Request, actor: ApiActor, evaluation_id: Id,
                     n: Annotated[int, Query(ge=1, le=assignment.MAX_BATCH)] = 1,
                     ) -> list[dict[str, Any]]:
    """Lease up to ``n`` tasks to the caller (an empty list: nothing left for them)."""
    return await run_in_threadpool(_next_tasks, request, actor, evaluation_id, n)


@router.get("/tasks/{task_id}")
def task_get(request: Request, actor: ApiActor, task_id: Id) -> dict[str, Any]:
    """One task as the caller sees it (never another grader's grade)."""
    return assignment.task_view(_store(request), actor, task_id, hold=False).to_dict()


def _submit(request: Request, actor: accounts.Actor, evaluation_id: int,
            body: Schema) -> dict[str, Any]:
    given = body.model_dump()
    spec = grading.GradeBatchSpec(given["batch_id"],
                                  [grading.GradeInput(**g) for g in given["grades"]])
    return grading.submit_batch(_store(request), actor, evaluation_id, spec.batch_id,
                                spec.grades)


@router.post("/evaluations/{evaluation_id}/grades")
async def grades_batch(request: Request, actor: ApiActor, evaluation_id: Id,
                       body: BatchIn) -> dict[str, Any]:
    """Submit grades in one transaction; the same ``batch_id`` again replays the answer."""
    return await run_in_threadpool(_submit, request, actor, evaluation_id, body)


@router.post("/evaluations/{evaluation_id}/undo")
def grade_undo(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, Any]:
    """Retract the caller's latest grade of the evaluation."""
    return {"task_id": grading.undo_last(_store(request), actor, evaluation_id)}


@router.post("/tasks/{task_id}/later", status_code=204)
def grade_later(request: Request, actor: ApiActor, task_id: Id) -> Response:
    """Put a task off ("judge later"; not a grade)."""
    grading.judge_later(_store(request), actor, task_id)
    return Response(status_code=204)


@router.get("/evaluations/{evaluation_id}/metrics")
def metrics(request: Request, actor: ApiActor, evaluation_id: Id,
            today: bool = False) -> dict[str, Any]:
    """Every metric's mean and per-query value (what ``rankscope evaluate`` prints).

    A frozen evaluation's numbers are those of its grades as of the freeze,
    today's beside them (``today=true`` puts today's first).
    """
    return dashboards.metrics_report(_store(request), actor, evaluation_id, today=today)


@router.post("/evaluations/{evaluation_id}/freeze")
def freeze(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, Any]:
    """Freeze the evaluation's numbers now (a curator; 409 when frozen already or not run)."""
    return freezing.freeze_evaluation(_store(request), actor, evaluation_id)


@router.get("/evaluations/{evaluation_id}/coverage")
def coverage(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, Any]:
    """Coverage of the top ``depth`` and the holes."""
    return dashboards.coverage_report(_store(request), actor, evaluation_id)


@router.get("/evaluations/{evaluation_id}/agreement")
def agreement(request: Request, actor: ApiActor, evaluation_id: Id,
              scope: str = "evaluation") -> dict[str, Any]:
    """Agreement between graders, per query, and each grader against the consensus.

    Over the evaluation's results within its depth (``scope=project``: every
    graded result of its queries in the project).
    """
    return adjudication.agreement_report(_store(request), actor, evaluation_id, scope)


@router.get("/evaluations/{evaluation_id}/disagreements")
def disagreements(request: Request, actor: ApiActor, evaluation_id: Id,
                  scope: str = "evaluation") -> list[dict[str, Any]]:
    """Results whose graders disagree, widest spread first (``scope`` as agreement's)."""
    return adjudication.disagreements(_store(request), actor, evaluation_id, scope=scope)


@router.post("/evaluations/{evaluation_id}/adjudications", status_code=201)
def adjudicate(request: Request, actor: ApiActor, evaluation_id: Id,
               body: AdjudicationIn) -> dict[str, Any]:
    """Settle a result's grade (the graders' grades stay, superseded)."""
    spec = adjudication.AdjudicationSpec(**body.model_dump())
    return adjudication.adjudicate(_store(request), actor, evaluation_id, spec.query_id,
                                   spec.doc_id, spec.value, spec.note)


@router.get("/evaluations/{evaluation_id}/history")
def history(request: Request, actor: ApiActor, evaluation_id: Id,
            scope: str = "endpoint") -> list[dict[str, Any]]:
    """Evaluations of the same query set and endpoint (``scope=query_set``: any endpoint)."""
    return comparison.history(_store(request), actor, evaluation_id, scope)


@router.get("/evaluations/{evaluation_id}/compare")
def compare(request: Request, actor: ApiActor, evaluation_id: Id,
            baseline: Id | None = None, test: str = "t",
            correction: str = "holm") -> dict[str, Any]:
    """Against the baseline: deltas, a paired test with a correction, RBO, per-query deltas."""
    return comparison.compare_with_baseline(_store(request), actor, evaluation_id, baseline,
                                            test=test, correction=correction)


@router.get("/evaluations/{evaluation_id}/progress")
def progress(request: Request, actor: ApiActor, evaluation_id: Id) -> dict[str, int]:
    """What is done and left, for the caller and for the evaluation."""
    return grading_progress.progress(_store(request), actor, evaluation_id)


@router.get("/evaluations/{evaluation_id}/exports")
def export_list(request: Request, actor: ApiActor, evaluation_id: Id) -> list[str]:
    """The names of the evaluation's exports (one qrels file per scale its metrics use)."""
    return exchange.exports_of(_store(request), actor, evaluation_id)


@router.get("/evaluations/{evaluation_id}/exports/{name}")
def export(request: Request, actor: ApiActor, evaluation_id: Id, name: str,
           limit: Id | None = None) -> Response:
    """An export: grades.csv|tsv|jsonl, qrels.txt, qrels-SCALE.txt, run.txt, quepid.csv,
    rre.json, queries.tsv, holes.csv (``limit``: the next N)."""
    body, media = exchange.export(_store(request), actor, evaluation_id, name, limit=limit)
    return Response(body, media_type=media)


@router.get("/evaluations/{evaluation_id}/llm-judges")
def judge_list(request: Request, actor: ApiActor, evaluation_id: Id) -> list[dict[str, Any]]:
    """The evaluation's LLM judges (curators)."""
    return llm_judges.list_judges(_store(request), actor, evaluation_id)


@router.post("/evaluations/{evaluation_id}/llm-judges", status_code=201)
def judge_attach(request: Request, actor: ApiActor, evaluation_id: Id,
                 body: JudgeIn) -> dict[str, Any]:
    """Attach an LLM judge (an OpenAI-compatible endpoint; the key by variable name)."""
    return llm_judges.attach_judge(_store(request), actor, evaluation_id,
                                   llm_judges.JudgeSpec(**body.model_dump()),
                                   boundary=settings_of(request).boundary)


@router.post("/llm-judges/{judge_id}/run")
def judge_run(request: Request, actor: ApiActor, judge_id: Id,
              retry_unrateable: bool = False) -> dict[str, Any]:
    """Run the judge on the open tasks (answers when done, with what the run did);
    ``retry_unrateable``: ask its last run's unrateable results again, past the cache."""
    from rankscope.services.boundary import CACHE_FILE

    settings = settings_of(request)
    return llm_judges.run_judge(settings.store, actor, judge_id,
                                cache=settings.data_dir / CACHE_FILE, boundary=settings.boundary,
                                retry_unrateable=retry_unrateable)


@router.post("/llm-judges/{judge_id}/counts")
def judge_counts(request: Request, actor: ApiActor, judge_id: Id,
                 counts: bool) -> dict[str, Any]:
    """Let the judge's grades count toward the grades wanted and the metrics, or not."""
    return llm_judges.set_counts(_store(request), actor, judge_id, counts)


@router.post("/evaluations/{evaluation_id}/imports")
def import_grades(request: Request, actor: ApiActor, evaluation_id: Id,
                  data: Annotated[bytes, Body(media_type="application/octet-stream")],
                  format: str = "grades", filename: str = "upload.csv",
                  rater: str | None = None) -> dict[str, Any]:
    """Import a file sent as the request body; all or nothing (a bad line names its number)."""
    return exchange.import_grades(_store(request), actor, evaluation_id, data,
                                  filename=filename, fmt=format, rater=rater)


@router.get("/users")
def user_list(request: Request, actor: ApiActor) -> list[dict[str, Any]]:
    """Every user (admins only)."""
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    return accounts.list_users(_store(request))


@router.post("/users", status_code=201)
def user_create(request: Request, actor: ApiActor, body: UserIn) -> dict[str, Any]:
    """Add a user (admins only)."""
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    spec = accounts.UserSpec(**body.model_dump())
    made = accounts.create_user(_store(request), spec.name, spec.role, spec.password)
    return {"id": made.user_id, "name": made.name, "role": made.role}


@router.post("/users/{user_id}")
def user_update(request: Request, actor: ApiActor, user_id: Id,
                body: UserUpdateIn) -> dict[str, Any]:
    """Change a user's role, activity or password (admins only); a new password ends their
    sessions, and ``revoke_tokens`` revokes their API tokens."""
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    spec = accounts.UserUpdateSpec(**body.model_dump())
    if user_id == actor.user_id and (spec.active is False or spec.role not in (None, "admin")):
        raise ForbiddenError("an admin cannot deactivate or demote themselves")
    made = accounts.update_user(_store(request), user_id, role=spec.role, active=spec.active,
                                password=spec.password, revoke_tokens=spec.revoke_tokens)
    return {"id": made.user_id, "name": made.name, "role": made.role}


@router.post("/users/{name}/tokens", status_code=201)
def token_create(request: Request, actor: ApiActor, name: str) -> dict[str, str]:
    """A new API token for a user (themselves, or anyone for an admin); shown once."""
    if not actor.is_admin and name != actor.name:
        raise ForbiddenError("only admins make tokens for others")
    return {"token": sessions.create_token(_store(request), name)}


@docs_router.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> Response:
    """The API's routes, read from its OpenAPI description (no script, works offline)."""
    from rankscope.app.apidocs import api_groups, inline_markup

    spec = request.app.openapi()
    return render(request, "api_docs.html", {
        "groups": api_groups(spec), "title": spec["info"]["title"],
        "intro": inline_markup(spec["info"].get("description", ""))})
