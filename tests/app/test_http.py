"""Every route over HTTP: signed out (401 / the sign-in page), a role too low (403), another
project's user (404), the role it needs (success); CSRF, cookies, the sign-in limit, sizes.
What a successful grading form or API call stores is checked in ``test_http_stored.py``."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from tests.llm_judge.conftest import ScriptedServer

from rankscope.services import (
    assignment,
    campaign_runs,
    campaigns,
    grading,
    llm_judges,
    sessions,
)
from rankscope.services.grading import GradeInput

from .conftest import PASSWORD, STANDIN, boundary_for, make_world, module_store

RANK = {"anyone": 0, "judge": 1, "curator": 2, "admin": 3}


@dataclass
class Site:
    app: Any
    store: Any
    w: SimpleNamespace
    second: Any
    tokens: dict[str, str]
    cookies: dict[str, dict[str, str]]
    llm: ScriptedServer

    def judge(self) -> int:
        """A fresh LLM judge on the first evaluation (asks the scripted local server)."""
        made = llm_judges.attach_judge(self.store, self.w.curator, self.w.evaluation.id,
                                       llm_judges.JudgeSpec(self.llm.url, "m", max_calls=2),
                                       boundary=_unwrap(self.app).state.settings.boundary)
        return int(made["id"])

    def client(self, who: str | None, api: bool, *, raise_errors: bool = True) -> TestClient:
        """Signed in as ``who`` (by token for the API, else by cookie); with
        ``raise_errors=False`` a server error is an answer (a 500), not an exception."""
        client = TestClient(self.app, base_url="http://testserver", follow_redirects=False,
                            raise_server_exceptions=raise_errors)
        if who is not None:
            if api:
                client.headers["Authorization"] = f"Bearer {self.tokens[who]}"
            else:
                client.cookies.update(self.cookies[who])
        return client

    def task(self, evaluation_id: int | None = None) -> int:
        found = assignment.next_task(self.store, self.w.admin,
                                     evaluation_id or self.w.evaluation.id)
        return found.task_id

    def try_number(self, scope: str = "query") -> int:
        """A fresh try of the first evaluation (one query, or the whole set)."""
        from rankscope.services import tries

        made = tries.run_try(self.store, self.w.curator, self.w.evaluation.id,
                             ["weights.title=2"], boundary=self.w.boundary,
                             query_id="q01" if scope == "query" else None)
        return made.number

    def dispute(self) -> dict[str, Any]:
        """A result two judges grade differently: something to adjudicate."""
        t = assignment.next_task(self.store, self.w.judge, self.w.evaluation.id)
        grading.submit_grade(self.store, self.w.judge, GradeInput(t.task_id, 0))
        grading.submit_grade(self.store, self.w.judge2, GradeInput(t.task_id, 3))
        return {"query_id": t.query_id, "doc_id": t.doc_id, "value": 2}


def _unwrap(app: Any) -> Any:
    while not hasattr(app, "routes"):
        app = app.app
    return app


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request, tmp_path_factory):
    for store, data in module_store(request, tmp_path_factory, "site"):
        yield from _site(store, data)


def _site(store, data):
    from rankscope.app.factory import create_app

    llm = ScriptedServer()
    try:
        w = make_world(store, data)
        second = campaigns.create_evaluation(
            store, w.curator, w.project.id, campaigns.EvaluationSpec(
                name="tuned", query_set_id=w.query_set.id, endpoint_id=w.tuned.id, depth=5,
                metrics=["nDCG@5"], baseline_id=w.evaluation.id))
        campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
        # the scripted LLM server is on 127.0.0.1: this server allows that address
        app = create_app(store, data, boundary=boundary_for(data, hosts=["127.0.0.1"]))
        tokens = {who: sessions.create_token(store, getattr(w, who).name)
                  for who in ("admin", "curator", "judge", "outsider")}
        cookies = {}
        for who in ("admin", "curator", "judge", "outsider"):
            client = TestClient(app, follow_redirects=False)
            answer = client.post("/login", data={"name": getattr(w, who).name,
                                                 "password": PASSWORD})
            assert answer.status_code == 303
            cookies[who] = dict(client.cookies)
        yield Site(app, store, w, second, tokens, cookies, llm)
    finally:
        llm.stop()


@dataclass
class Route:
    method: str
    path: str
    role: str  # the least role that may call it ("anyone": no sign-in needed)
    project: bool  # an object of project A: a user of another project gets 404
    make: Callable[[Site], dict[str, Any]]  # the request: url and httpx arguments
    ok: int = 200
    refused: int = 403  # the answer to a role too low


def _fresh(s: Site) -> int:
    """A new evaluation of project A, run (each freeze request freezes another one)."""
    w = s.w
    ev = campaigns.create_evaluation(s.store, w.curator, w.project.id,
                                       campaigns.EvaluationSpec(
                                           name="to freeze", query_set_id=w.query_set.id,
                                           endpoint_id=w.endpoint.id, depth=5,
                                           metrics=["nDCG@5"]))
    campaign_runs.run_evaluation(s.store, w.curator, ev.id, boundary=w.boundary)
    return ev.id


def _r(method, path, role, project, make, ok=None, refused=403) -> Route:
    if ok is None:
        ok = 303 if method == "POST" and not path.startswith("/api/") else 200
    return Route(method, path, role, project, make, ok, refused)


def E(s: Site) -> int:  # short for the table below
    return s.w.evaluation.id


def _pair(s: Site) -> str:
    """Two snapshots of project A: the two evaluations' runs (``a=...&b=...``)."""
    first = campaigns.get_evaluation(s.store, s.w.curator, s.w.evaluation.id).snapshot_id
    second = campaigns.get_evaluation(s.store, s.w.curator, s.second.id).snapshot_id
    return f"a={first}&b={second}"


def P(s: Site) -> int:
    return s.w.project.id


GRADES = b"query_id,doc_id,rater,grade\nq01,shutil.copytree,imported,3\n"
TOML = (STANDIN / "tuned.toml").read_text().replace('name = "demo-tuned"', 'name = "again"')

_HAND = itertools.count()
ROUTES = [
    _r("GET", "/login", "anyone", False, lambda s: {"url": "/login"}),
    _r("POST", "/login", "anyone", False, lambda s: {"url": "/login", "data": {
        "name": "cora", "password": PASSWORD}}),
    _r("POST", "/logout", "anyone", False, lambda s: {"url": "/logout"}),
    _r("GET", "/", "judge", False, lambda s: {"url": "/"}, ok=303),
    _r("GET", "/projects", "judge", False, lambda s: {"url": "/projects"}),
    _r("POST", "/projects", "curator", False, lambda s: {"url": "/projects", "data": {
        "name": f"p{id(s)}{len(s.cookies)}x"}}),
    _r("GET", "/projects/{project_id}", "judge", True, lambda s: {"url": f"/projects/{P(s)}"}),
    _r("POST", "/projects/{project_id}/members", "curator", True, lambda s: {
        "url": f"/projects/{P(s)}/members", "data": {"name": "lee", "role": "judge"}}),
    _r("POST", "/projects/{project_id}/query-sets", "curator", True, lambda s: {
        "url": f"/projects/{P(s)}/query-sets", "data": {"name": "more",
                                                        "text": "z1\tjson print\n"}}),
    _r("GET", "/query-sets/{query_set_id}", "judge", True, lambda s: {
        "url": f"/query-sets/{s.w.query_set.id}"}),
    _r("POST", "/projects/{project_id}/endpoints", "curator", True, lambda s: {
        "url": f"/projects/{P(s)}/endpoints", "data": {"toml": TOML}}),
    _r("GET", "/endpoints/{endpoint_id}", "judge", True, lambda s: {
        "url": f"/endpoints/{s.w.endpoint.id}"}),
    _r("GET", "/projects/{project_id}/evaluations/new", "curator", True, lambda s: {
        "url": f"/projects/{P(s)}/evaluations/new"}),
    _r("POST", "/projects/{project_id}/evaluations", "curator", True, lambda s: {
        "url": f"/projects/{P(s)}/evaluations", "data": {
            "name": "web", "query_set_id": s.w.query_set.id, "endpoint_id": s.w.endpoint.id,
            "metrics": "nDCG@5, P@5", "null_rules": "1"}}),
    _r("GET", "/admin/users", "admin", False, lambda s: {"url": "/admin/users"}),
    _r("POST", "/admin/users", "admin", False, lambda s: {"url": "/admin/users", "data": {
        "name": "newbie", "role": "judge", "password": PASSWORD}}),
    _r("POST", "/admin/users/{user_id}", "admin", False, lambda s: {
        "url": f"/admin/users/{s.w.judge3.user_id}", "data": {"role": "judge"}}),
    _r("POST", "/admin/tokens", "admin", False, lambda s: {"url": "/admin/tokens", "data": {
        "user": "lee"}}, ok=200),
    _r("POST", "/admin/tokens/{token_id}/revoke", "admin", False, lambda s: {
        "url": f"/admin/tokens/{_token_id(s)}/revoke"}, refused=404),
    _r("GET", "/evaluations/{evaluation_id}/grade", "judge", True, lambda s: {
        "url": f"/evaluations/{E(s)}/grade"}),
    _r("GET", "/tasks/{task_id}", "judge", True, lambda s: {"url": f"/tasks/{s.task()}"}),
    _r("POST", "/tasks/{task_id}/grade", "judge", True, lambda s: {
        "url": f"/tasks/{s.task()}/grade", "data": {"evaluation_id": E(s), "value": "1"}}),
    _r("POST", "/tasks/{task_id}/later", "judge", True, lambda s: {
        "url": f"/tasks/{s.task()}/later", "data": {"evaluation_id": E(s)}}),
    _r("POST", "/evaluations/{evaluation_id}/undo", "judge", True, lambda s: {
        "url": f"/evaluations/{E(s)}/undo"}),
    _r("GET", "/evaluations/{evaluation_id}/queries/{query_id}", "judge", True, lambda s: {
        "url": f"/evaluations/{E(s)}/queries/q01"}),
    _r("GET", "/evaluations/{evaluation_id}", "judge", True, lambda s: {
        "url": f"/evaluations/{E(s)}"}),
    _r("GET", "/evaluations/{evaluation_id}/status", "judge", True, lambda s: {
        "url": f"/evaluations/{E(s)}/status"}),
    _r("POST", "/evaluations/{evaluation_id}/run", "curator", True, lambda s: {
        "url": f"/evaluations/{s.second.id}/run"}),
    _r("POST", "/evaluations/{evaluation_id}/settings", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/settings", "data": {"annotation": "v1"}}),
    *[_r("GET", f"/evaluations/{{evaluation_id}}/{page}", "curator", True,
         lambda s, page=page: {"url": f"/evaluations/{E(s)}/{page}"})
      for page in ("metrics", "coverage", "agreement", "disagreements", "history",
                   "agreement/project", "disagreements/project")],
    _r("POST", "/evaluations/{evaluation_id}/freeze", "curator", True, lambda s: {
        "url": f"/evaluations/{_fresh(s)}/freeze"}),
    _r("GET", "/evaluations/{evaluation_id}/snapshot/{query_id}", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/snapshot/q01"}),
    _r("GET", "/evaluations/{evaluation_id}/compare", "curator", True, lambda s: {
        "url": f"/evaluations/{s.second.id}/compare"}),
    _r("GET", "/evaluations/{evaluation_id}/side", "curator", True, lambda s: {
        "url": f"/evaluations/{s.second.id}/side?baseline={E(s)}"}),
    _r("GET", "/evaluations/{evaluation_id}/snapshots/side", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/snapshots/side?{_pair(s)}"}),
    _r("GET", "/evaluations/{evaluation_id}/tries", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/tries"}),
    _r("POST", "/evaluations/{evaluation_id}/tries", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/tries", "data": {"changes": "weights.title=3",
                                                      "query_id": "q02"}}),
    _r("GET", "/evaluations/{evaluation_id}/tries/{number}", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/tries/{s.try_number()}"}),
    _r("GET", "/evaluations/{evaluation_id}/tries/{number}/status", "curator", True,
       lambda s: {"url": f"/evaluations/{E(s)}/tries/{s.try_number()}/status"}),
    _r("POST", "/evaluations/{evaluation_id}/tries/{number}/evaluation", "curator", True,
       lambda s: {"url": f"/evaluations/{E(s)}/tries/{s.try_number('all')}/evaluation"}),
    _r("POST", "/evaluations/{evaluation_id}/pool", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/pool", "data": {
            "query_id": "q01", "doc_id": f"hand-{next(_HAND)}"}}),
    _r("POST", "/evaluations/{evaluation_id}/adjudicate", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/adjudicate", "data": s.dispute()}),
    _r("GET", "/evaluations/{evaluation_id}/export/{name}", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/export/grades.csv"}),
    _r("POST", "/evaluations/{evaluation_id}/import", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/import", "files": {"file": ("g.csv", GRADES)},
        "data": {"format": "grades"}}, ok=200),
    _r("GET", "/account", "judge", False, lambda s: {"url": "/account"}),
    _r("POST", "/account/password", "judge", False, lambda s: {"url": "/account/password",
                                                               "data": {"current": PASSWORD,
                                                                        "new": PASSWORD}},
       ok=200),
    _r("GET", "/evaluations/{evaluation_id}/llm", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/llm"}),
    _r("POST", "/evaluations/{evaluation_id}/llm", "curator", True, lambda s: {
        "url": f"/evaluations/{E(s)}/llm", "data": {"endpoint": s.llm.url, "model": "m",
                                                     "max_calls": "2"}}),
    _r("POST", "/llm-judges/{judge_id}/run", "curator", True, lambda s: {
        "url": f"/llm-judges/{s.judge()}/run"}),
    _r("POST", "/llm-judges/{judge_id}/counts", "curator", True, lambda s: {
        "url": f"/llm-judges/{s.judge()}/counts", "data": {"counts": "no"}}),
    _r("GET", "/llm-judges/{judge_id}/status", "curator", True, lambda s: {
        "url": f"/llm-judges/{s.judge()}/status"}),
    _r("GET", "/api/docs", "anyone", False, lambda s: {"url": "/api/docs"}),
    # the API
    _r("GET", "/api/v1/me", "judge", False, lambda s: {"url": "/api/v1/me"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/snapshots", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/snapshots"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/snapshots/side", "curator", True,
       lambda s: {"url": f"/api/v1/evaluations/{E(s)}/snapshots/side?{_pair(s)}"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/tries", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/tries"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/tries", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/tries", "json": {"changes": ["weights.title=3"],
                                                             "query_id": "q03"}}, ok=201),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/tries/{number}", "curator", True,
       lambda s: {"url": f"/api/v1/evaluations/{E(s)}/tries/{s.try_number()}"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/tries/{number}/evaluation", "curator",
       True, lambda s: {"url": f"/api/v1/evaluations/{E(s)}/tries/{s.try_number('all')}/"
                               "evaluation"}, ok=201),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/pool", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/pool", "json": {
            "query_id": "q01", "doc_id": f"hand-api-{next(_HAND)}"}}, ok=201),
    _r("GET", "/api/v1/projects", "judge", False, lambda s: {"url": "/api/v1/projects"}),
    _r("POST", "/api/v1/projects", "curator", False, lambda s: {
        "url": "/api/v1/projects", "json": {"name": f"api{len(s.tokens)}-{id(s)}"}}, ok=201),
    _r("POST", "/api/v1/projects/{project_id}/members", "curator", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/members", "json": {"name": "lee"}}, ok=204),
    _r("GET", "/api/v1/projects/{project_id}/query-sets", "judge", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/query-sets"}),
    _r("POST", "/api/v1/projects/{project_id}/query-sets", "curator", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/query-sets", "json": {
            "name": "api", "text": "a1\tcopy files\n"}}, ok=201),
    _r("GET", "/api/v1/query-sets/{query_set_id}/queries", "judge", True, lambda s: {
        "url": f"/api/v1/query-sets/{s.w.query_set.id}/queries"}),
    _r("GET", "/api/v1/projects/{project_id}/endpoints", "judge", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/endpoints"}),
    _r("POST", "/api/v1/projects/{project_id}/endpoints", "curator", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/endpoints", "json": {"toml": TOML}}, ok=201),
    _r("GET", "/api/v1/projects/{project_id}/evaluations", "judge", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/evaluations"}),
    _r("POST", "/api/v1/projects/{project_id}/evaluations", "curator", True, lambda s: {
        "url": f"/api/v1/projects/{P(s)}/evaluations", "json": {
            "name": "api", "query_set_id": s.w.query_set.id,
            "endpoint_id": s.w.endpoint.id}}, ok=201),
    _r("GET", "/api/v1/evaluations/{evaluation_id}", "judge", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/settings", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/settings", "json": {"annotation": "v1"}}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/run", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/run"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/tasks/next", "judge", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/tasks/next?n=2"}),
    _r("GET", "/api/v1/tasks/{task_id}", "judge", True, lambda s: {
        "url": f"/api/v1/tasks/{s.task()}"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/grades", "judge", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/grades", "json": {
            "batch_id": f"b{id(s)}", "grades": [{"task_id": s.task(), "value": 1}]}}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/undo", "judge", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/undo"}),
    _r("POST", "/api/v1/tasks/{task_id}/later", "judge", True, lambda s: {
        "url": f"/api/v1/tasks/{s.task()}/later"}, ok=204),
    *[_r("GET", f"/api/v1/evaluations/{{evaluation_id}}/{page}", "curator", True,
         lambda s, page=page: {"url": f"/api/v1/evaluations/{E(s)}/{page}"})
      for page in ("metrics", "coverage", "agreement", "disagreements", "history")],
    _r("POST", "/api/v1/evaluations/{evaluation_id}/freeze", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{_fresh(s)}/freeze"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/compare", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{s.second.id}/compare"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/adjudications", "curator", True,
       lambda s: {"url": f"/api/v1/evaluations/{E(s)}/adjudications", "json": s.dispute()},
       ok=201),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/exports/{name}", "curator", True,
       lambda s: {"url": f"/api/v1/evaluations/{E(s)}/exports/run.txt"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/imports", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/imports?filename=g.csv", "content": GRADES}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/progress", "judge", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/progress"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/exports", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/exports"}),
    _r("GET", "/api/v1/evaluations/{evaluation_id}/llm-judges", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/llm-judges"}),
    _r("POST", "/api/v1/evaluations/{evaluation_id}/llm-judges", "curator", True, lambda s: {
        "url": f"/api/v1/evaluations/{E(s)}/llm-judges", "json": {
            "endpoint": s.llm.url, "model": "m", "max_calls": 2}}, ok=201),
    _r("POST", "/api/v1/llm-judges/{judge_id}/run", "curator", True, lambda s: {
        "url": f"/api/v1/llm-judges/{s.judge()}/run"}),
    _r("POST", "/api/v1/llm-judges/{judge_id}/counts", "curator", True, lambda s: {
        "url": f"/api/v1/llm-judges/{s.judge()}/counts?counts=false"}),
    _r("GET", "/api/v1/users", "admin", False, lambda s: {"url": "/api/v1/users"}),
    _r("POST", "/api/v1/users", "admin", False, lambda s: {"url": "/api/v1/users", "json": {
        "name": "apinew", "role": "judge", "password": PASSWORD}}, ok=201),
    _r("POST", "/api/v1/users/{user_id}", "admin", False, lambda s: {
        "url": f"/api/v1/users/{s.w.judge3.user_id}", "json": {"role": "judge"}}),
    _r("POST", "/api/v1/users/{name}/tokens", "admin", False, lambda s: {
        "url": "/api/v1/users/lee/tokens"}, ok=201),
]


def _token_id(s: Site) -> int:
    sessions.create_token(s.store, "lee", "to revoke")
    return sessions.list_tokens(s.store)[0].id


def _routes(routes) -> set[tuple[str, str]]:
    out = set()
    for r in routes:
        if isinstance(r, APIRoute):
            out |= {(m, r.path) for m in r.methods}
        elif hasattr(r, "original_router"):  # an included router (FastAPI >= 0.16x)
            prefix = getattr(r.original_router, "prefix", "")
            out |= {(m, p if p.startswith(prefix) else prefix + p)
                    for m, p in _routes(r.original_router.routes)}
    return out


def test_the_table_covers_every_route(site):
    served = _routes(_unwrap(site.app).routes)
    served.discard(("GET", "/api/openapi.json"))
    assert served == {(r.method, r.path) for r in ROUTES}


def _send(site: Site, route: Route, who: str | None) -> Any:
    api = route.path.startswith("/api/")
    request = route.make(site)
    url = request.pop("url")
    return site.client(who, api).request(route.method, url, **request)


def _id(route: Route) -> str:
    return f"{route.method} {route.path}"


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_each_route_for_each_kind_of_user(site, route):
    api = route.path.startswith("/api/")
    if route.role != "anyone":
        answer = _send(site, route, None)
        if api:
            assert answer.status_code == 401, answer.text
            assert "error" in answer.json()
        else:
            assert answer.status_code == 303
            assert answer.headers["location"].startswith("/login?next=")
    lower = [who for who in ("judge", "curator") if RANK[who] < RANK[route.role]]
    for who in lower:
        answer = _send(site, route, who)
        assert answer.status_code == route.refused, (who, answer.text[:300])
    if route.project:
        answer = _send(site, route, "outsider")
        assert answer.status_code == 404, answer.text[:300]
    allowed = route.role if route.role in ("judge", "curator", "admin") else None
    answer = _send(site, route, allowed)
    assert answer.status_code == route.ok, answer.text[:500]


def test_a_cross_origin_post_is_refused_and_a_same_origin_one_passes(site):
    client = site.client("judge", api=False)
    url, form = f"/tasks/{site.task()}/grade", {"evaluation_id": site.w.evaluation.id,
                                                "value": "2"}
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}, {"Origin": "http://testserver:8080"},
                    {"Origin": "null"}):
        answer = client.post(url, data=form, headers=headers)
        assert answer.status_code == 403, headers
        assert "cross-origin" in answer.text
    assert client.post(url, data=form, headers={"Sec-Fetch-Site": "same-origin"}).status_code \
        == 303
    assert client.post(f"/tasks/{site.task()}/grade", data=form,
                       headers={"Origin": "http://testserver"}).status_code == 303
    # a bearer token without a cookie is not an ambient credential: not a CSRF target
    api = site.client("judge", api=True)
    answer = api.post(f"/api/v1/tasks/{site.task()}/later", headers={"Origin": "http://x.y"})
    assert answer.status_code == 204


def test_the_session_cookie_and_signing_out(site):
    client = TestClient(site.app, base_url="https://testserver", follow_redirects=False)
    answer = client.post("/login", data={"name": "jay", "password": PASSWORD,
                                         "next": "//evil.example/"})
    assert answer.headers["location"] == "/"  # never off the site
    cookie = answer.headers["set-cookie"]
    assert re.search(r"HttpOnly", cookie) and re.search(r"SameSite=lax", cookie, re.I)
    assert "Secure" in cookie  # over https
    plain = TestClient(site.app, follow_redirects=False).post(
        "/login", data={"name": "jay", "password": PASSWORD})
    assert "Secure" not in plain.headers["set-cookie"]
    assert client.get("/projects").status_code == 200
    client.post("/logout")
    client.cookies.clear()
    assert client.get("/projects").status_code == 303


def test_sign_in_attempts_are_limited(site):
    client = TestClient(site.app, follow_redirects=False)
    statuses = [client.post("/login", data={"name": "kim", "password": "nope nope"}).status_code
                for _ in range(6)]
    assert statuses == [401] * 5 + [429]
    right = client.post("/login", data={"name": "kim", "password": PASSWORD})
    assert right.status_code == 429  # locked for a while even with the right password


def test_oversized_bodies_are_refused(site):
    client = site.client("curator", api=True)
    big = b"x" * (22 * 1024 * 1024)
    answer = client.post(f"/api/v1/evaluations/{site.w.evaluation.id}/imports", content=big)
    assert answer.status_code == 413

    def chunks():
        for _ in range(22):
            yield b"y" * (1024 * 1024)

    answer = client.post(f"/api/v1/evaluations/{site.w.evaluation.id}/imports",
                         content=chunks())
    assert answer.status_code == 413


def test_the_grading_page_is_keyboard_first(site):
    page = site.client("judge", api=False).get(f"/evaluations/{site.w.evaluation.id}/grade")
    assert page.status_code == 200
    html = page.text
    for key in "0123":
        assert f'data-key="{key}"' in html
    for element in ('id="next-link"', 'id="undo-form"', 'id="later-form"', 'id="reason"',
                    'id="explanation"', 'id="help"', 'src="/static/app.js"',
                    'src="/static/htmx.min.js"'):
        assert element in html
    script = site.client(None, api=False).get("/static/app.js")
    assert script.status_code == 200 and len(script.content) < 10_000  # "a few kB" of own JS
    assert site.client(None, api=False).get("/static/htmx.min.js").status_code == 200
    assert site.client(None, api=False).get("/static/htmx.LICENSE.txt").status_code == 200


def test_api_errors_are_json_with_the_right_status(site):
    api = site.client("curator", api=True)
    answer = api.post(f"/api/v1/projects/{site.w.project.id}/evaluations", json={
        "name": "bad", "query_set_id": site.w.query_set.id, "endpoint_id": site.w.endpoint.id,
        "metrics": ["nDGC@10"]})
    assert answer.status_code == 400 and "did you mean" in answer.json()["error"]
    answer = api.post(f"/api/v1/evaluations/{site.w.evaluation.id}/imports?filename=b.csv",
                      content=b"query_id,doc_id,rater,grade\nq01,a,x,9\n")
    assert answer.status_code == 400 and "b.csv, line 2" in answer.json()["error"]
    assert site.client("judge", api=True).get("/api/v1/evaluations/999999").status_code == 404
