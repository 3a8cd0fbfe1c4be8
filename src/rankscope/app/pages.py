"""Pages: signing in, projects, query sets, endpoints, new evaluations, users (thin routes)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import Id, PageActor, form_id, render, settings_of, status_of
from rankscope.app.security import COOKIE
from rankscope.errors import AuthError, ForbiddenError, InputError, RankscopeError
from rankscope.services import accounts, campaigns, catalog, overview, projects, sessions
from rankscope.services.exchange import MAX_UPLOAD

__all__ = ["router"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


def _safe_next(target: str | None) -> str:
    """Only a path of this site (never ``//elsewhere`` or a full address)."""
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return "/"


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> Response:
    return render(request, "login.html", {"next": _safe_next(next), "error": None})


@router.post("/login")
def login(request: Request, name: Annotated[str, Form()], password: Annotated[str, Form()],
          next: Annotated[str, Form()] = "/") -> Response:
    settings = settings_of(request)
    address = request.client.host if request.client else "?"
    if not settings.limiter.allowed(name, address):
        return render(request, "login.html", {
            "next": _safe_next(next),
            "error": "too many failed attempts: wait a few minutes"}, 429)
    try:
        actor = sessions.authenticate(settings.store, name, password)
    except AuthError as exc:
        settings.limiter.failed(name, address)
        return render(request, "login.html", {"next": _safe_next(next), "error": str(exc)}, 401)
    settings.limiter.succeeded(name, address)
    token = sessions.create_session(settings.store, actor)
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(COOKIE, token, max_age=int(sessions.SESSION_LIFETIME.total_seconds()),
                        httponly=True, samesite="lax", secure=request.url.scheme == "https",
                        path="/")
    return response


@router.post("/logout")
def logout(request: Request) -> Response:
    sessions.end_session(settings_of(request).store, request.cookies.get(COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/", response_class=HTMLResponse)
def home(request: Request, actor: PageActor) -> Response:
    return RedirectResponse("/projects", status_code=303)


@router.get("/projects", response_class=HTMLResponse)
def project_list(request: Request, actor: PageActor) -> Response:
    found = projects.list_projects(settings_of(request).store, actor)
    return render(request, "projects.html", {"projects": found}, actor=actor)


@router.post("/projects")
def project_create(request: Request, actor: PageActor,
                   name: Annotated[str, Form()]) -> Response:
    view = projects.create_project(settings_of(request).store, actor, name)
    return RedirectResponse(f"/projects/{view.id}", status_code=303)


@router.get("/projects/{project_id}", response_class=HTMLResponse)
def project_page(request: Request, actor: PageActor, project_id: Id) -> Response:
    return render(request, "project.html", _project_context(request, actor, project_id),
                  actor=actor)


def _project_context(request: Request, actor: accounts.Actor,
                     project_id: int) -> dict[str, object]:
    store = settings_of(request).store
    project = projects.get_project(store, actor, project_id)
    return {
        "project": project,
        "query_sets": catalog.list_query_sets(store, actor, project_id),
        "endpoints": catalog.list_endpoints(store, actor, project_id),
        "overview": overview.project_overview(store, actor, project_id),
        "members": projects.list_members(store, actor, project_id),
        "can_curate": projects.RANK[project.role] >= projects.RANK["curator"],
        "irds": settings_of(request).irds,
        "boundary": settings_of(request).boundary,
        "form": {},
    }


def _form_refused(request: Request, actor: accounts.Actor, project_id: int, which: str,
                  exc: RankscopeError, values: dict[str, str]) -> Response:
    """The project page again, the refused form keeping what was typed or pasted and the
    error beside it (never a separate page that loses the text)."""
    if isinstance(exc, AuthError) or status_of(exc) not in (400, 403, 409):
        raise exc
    context = _project_context(request, actor, project_id)
    context["form"] = {"which": which, "error": str(exc), **values}
    return render(request, "project.html", context, status_of(exc), actor=actor)


@router.post("/projects/{project_id}/members")
def member_add(request: Request, actor: PageActor, project_id: Id,
               name: Annotated[str, Form()], role: Annotated[str, Form()]) -> Response:
    projects.add_member(settings_of(request).store, actor, project_id, name, role)
    return RedirectResponse(f"/projects/{project_id}", status_code=303)


async def _upload_text(upload: UploadFile | None, text: str) -> tuple[str, str | None]:
    if upload is not None and upload.filename:
        data = await upload.read(MAX_UPLOAD + 1)
        if len(data) > MAX_UPLOAD:
            raise InputError("the file is too large", source=upload.filename)
        try:
            return data.decode("utf-8-sig"), upload.filename
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", source=upload.filename) from None
    return text, None


@router.post("/projects/{project_id}/query-sets")
async def query_set_create(request: Request, actor: PageActor, project_id: Id,
                           name: Annotated[str, Form()],
                           text: Annotated[str, Form()] = "",
                           file: Annotated[UploadFile | None, File()] = None,
                           collection: Annotated[str, Form()] = "") -> Response:
    from starlette.concurrency import run_in_threadpool

    settings = settings_of(request)
    try:
        content, filename = await _upload_text(file, text)
        if collection.strip() and not content.strip():
            view = await run_in_threadpool(catalog.import_query_set_from_collection,
                                           settings.store, actor, project_id, name,
                                           collection, settings.irds)
        else:
            view = await run_in_threadpool(catalog.import_query_set, settings.store, actor,
                                           project_id, name, content, filename)
    except RankscopeError as exc:
        return await run_in_threadpool(_form_refused, request, actor, project_id, "query_set",
                                       exc, {"name": name, "text": text,
                                             "collection": collection})
    return RedirectResponse(f"/query-sets/{view.id}", status_code=303)


@router.get("/query-sets/{query_set_id}", response_class=HTMLResponse)
def query_set_page(request: Request, actor: PageActor, query_set_id: Id) -> Response:
    store = settings_of(request).store
    view = catalog.get_query_set(store, actor, query_set_id)
    queries = catalog.query_set_queries(store, actor, query_set_id)
    return render(request, "query_set.html", {"query_set": view, "queries": queries},
                  actor=actor)


@router.post("/projects/{project_id}/endpoints")
def endpoint_save(request: Request, actor: PageActor, project_id: Id,
                  toml: Annotated[str, Form()], name: Annotated[str, Form()] = "") -> Response:
    settings = settings_of(request)
    try:
        catalog.save_endpoint(settings.store, actor, project_id, toml,
                              name=name.strip() or None, boundary=settings.boundary)
    except RankscopeError as exc:
        return _form_refused(request, actor, project_id, "endpoint", exc,
                             {"toml": toml, "name": name})
    return RedirectResponse(f"/projects/{project_id}", status_code=303)


@router.get("/endpoints/{endpoint_id}", response_class=HTMLResponse)
def endpoint_page(request: Request, actor: PageActor, endpoint_id: Id) -> Response:
    view = catalog.get_endpoint(settings_of(request).store, actor, endpoint_id)
    return render(request, "endpoint.html", {"endpoint": view}, actor=actor)


@router.get("/projects/{project_id}/evaluations/new", response_class=HTMLResponse)
def evaluation_form(request: Request, actor: PageActor, project_id: Id) -> Response:
    store = settings_of(request).store
    project = projects.get_project(store, actor, project_id)
    if projects.RANK[project.role] < projects.RANK["curator"]:
        raise ForbiddenError("only curators set up evaluations")
    context = {"project": project,
               "query_sets": catalog.list_query_sets(store, actor, project_id),
               "endpoints": catalog.list_endpoints(store, actor, project_id),
               "evaluations": campaigns.list_evaluations(store, actor, project_id)}
    return render(request, "evaluation_new.html", context, actor=actor)


@router.post("/projects/{project_id}/evaluations")
def evaluation_create(
    request: Request, actor: PageActor, project_id: Id,
    name: Annotated[str, Form()], query_set_id: Annotated[Id, Form()],
    endpoint_id: Annotated[Id, Form()], scale: Annotated[str, Form()] = "graded",
    grades_wanted: Annotated[int, Form()] = 1, strategy: Annotated[str, Form()] = "",
    metrics: Annotated[str, Form()] = "nDCG@10, P@10", transforms: Annotated[str, Form()] = "",
    null_rules: Annotated[str, Form()] = "", depth: Annotated[int, Form()] = 10,
    guidelines: Annotated[str, Form()] = "", baseline_id: Annotated[str, Form()] = "",
    annotation: Annotated[str, Form()] = "", explain: Annotated[str, Form()] = "",
) -> Response:
    rules = {}
    for line in transforms.splitlines():
        if line.strip():
            key, _, value = line.partition(":")
            rules[key.strip()] = value.strip()
    spec = campaigns.EvaluationSpec(
        name=name, query_set_id=query_set_id, endpoint_id=endpoint_id, scale=scale,
        grades_wanted=grades_wanted, strategy=strategy or None,
        metrics=[m.strip() for m in metrics.replace("\n", ",").split(",") if m.strip()],
        transforms=rules, null_rules=bool(null_rules), depth=depth, guidelines=guidelines,
        baseline_id=form_id(baseline_id, "the baseline"), annotation=annotation,
        explain=bool(explain))
    view = campaigns.create_evaluation(settings_of(request).store, actor, project_id, spec)
    return RedirectResponse(f"/evaluations/{view.id}", status_code=303)


def _users_context(request: Request, actor: accounts.Actor,
                   new_token: str | None = None, token_for: str | None = None) -> dict[str, object]:
    store = settings_of(request).store
    tokens = sessions.list_tokens(store, None if actor.is_admin else actor.user_id)
    by_user: dict[str, list[sessions.TokenInfo]] = {}
    for t in tokens:
        by_user.setdefault(t.user, []).append(t)
    return {"users": accounts.list_users(store) if actor.is_admin else [],
            "tokens": tokens, "by_user": by_user, "new_token": new_token,
            "token_for": token_for}


@router.get("/admin/users", response_class=HTMLResponse)
def users_page(request: Request, actor: PageActor) -> Response:
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    return render(request, "users.html", _users_context(request, actor), actor=actor)


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, actor: PageActor) -> Response:
    return render(request, "account.html", _users_context(request, actor), actor=actor)


@router.post("/admin/users")
def user_create(request: Request, actor: PageActor, name: Annotated[str, Form()],
                role: Annotated[str, Form()], password: Annotated[str, Form()]) -> Response:
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    accounts.create_user(settings_of(request).store, name, role, password)
    return RedirectResponse("/admin/users", status_code=303)


@router.post("/admin/users/{user_id}")
def user_update(request: Request, actor: PageActor, user_id: Id,
                role: Annotated[str, Form()] = "", active: Annotated[str, Form()] = "",
                password: Annotated[str, Form()] = "",
                revoke_tokens: Annotated[str, Form()] = "") -> Response:
    if not actor.is_admin:
        raise ForbiddenError("only admins manage users")
    if user_id == actor.user_id and (active == "no" or role not in ("", "admin")):
        raise ForbiddenError("an admin cannot deactivate or demote themselves")
    accounts.update_user(settings_of(request).store, user_id, role=role or None,
                         active={"yes": True, "no": False}.get(active),
                         password=password or None, revoke_tokens=bool(revoke_tokens))
    return RedirectResponse("/admin/users", status_code=303)


@router.post("/account/password", response_class=HTMLResponse)
def password_change(request: Request, actor: PageActor, current: Annotated[str, Form()],
                    new: Annotated[str, Form()],
                    revoke_tokens: Annotated[str, Form()] = "") -> Response:
    settings = settings_of(request)
    address = request.client.host if request.client else "?"
    if not settings.limiter.allowed(actor.name, address):
        raise ForbiddenError("too many failed attempts: wait a few minutes")
    try:
        ended = accounts.change_password(settings.store, actor, current, new,
                                         keep_session=request.cookies.get(COOKIE),
                                         revoke_tokens=bool(revoke_tokens))
    except AuthError as exc:
        settings.limiter.failed(actor.name, address)
        raise ForbiddenError(str(exc)) from None
    context = _users_context(request, actor)
    context["message"] = (f"Password changed; {ended} other session(s) ended"
                          + ("; your API tokens are revoked" if revoke_tokens else "") + ".")
    return render(request, "account.html", context, actor=actor)


@router.post("/admin/tokens", response_class=HTMLResponse)
def token_create(request: Request, actor: PageActor, user: Annotated[str, Form()] = "",
                 name: Annotated[str, Form()] = "api") -> Response:
    user = user.strip() or actor.name
    if not actor.is_admin and user != actor.name:
        raise ForbiddenError("only admins make tokens for others")
    secret = sessions.create_token(settings_of(request).store, user, name.strip() or "api")
    template = "users.html" if actor.is_admin and user != actor.name else "account.html"
    return render(request, template, _users_context(request, actor, secret, user), actor=actor)


@router.post("/admin/tokens/{token_id}/revoke")
def token_revoke(request: Request, actor: PageActor, token_id: Id,
                 back: Annotated[str, Form()] = "") -> Response:
    sessions.revoke_token(settings_of(request).store, token_id, actor)
    target = "/admin/users" if actor.is_admin and back != "/account" else "/account"
    return RedirectResponse(target, status_code=303)
