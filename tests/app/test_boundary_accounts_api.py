"""Issue 33, sections 5 and 6: signing in, sessions after a password change, the login limit
behind (or without) a proxy, and bad input to the API: always a 4xx, never a 500, storing
nothing. On SQLite and PostgreSQL (NUL and 32-bit ids are PostgreSQL's limits)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from rankscope.cli.parsing import Parser
from rankscope.services import accounts, assignment, exchange, llm_judges, sessions
from rankscope.store.models import Project
from rankscope.store.models_app import Grade, User

from .conftest import PASSWORD, boundary_for
from .trust import app_for


def _browser(app, **headers: str) -> TestClient:
    return TestClient(app, follow_redirects=False, raise_server_exceptions=False,
                      headers=headers)


def _sign_in(client: TestClient, name: str, password: str = PASSWORD) -> int:
    return client.post("/login", data={"name": name, "password": password}).status_code


# -- 5. authentication -----------------------------------------------------------------


def test_signing_in_costs_one_argon2_verification_whoever_asks(shared_world, monkeypatch):
    # the time a sign-in takes is one argon2 verification for a known user and for an
    # unknown one (2.5 ms against 625 ms let anyone list the user names); counted, not timed
    from argon2 import PasswordHasher

    store, w = shared_world
    accounts.create_user(store, "nopass", "judge", None)
    calls = []
    real = PasswordHasher.verify

    def counted(self, stored, password):
        calls.append(stored)
        return real(self, stored, password)

    monkeypatch.setattr(PasswordHasher, "verify", counted)
    for name, password in ((w.judge.name, PASSWORD), (w.judge.name, "wrong password"),
                           ("nobody-at-all", PASSWORD), ("nopass", PASSWORD),
                           ("n" * 300, PASSWORD), ("a\x00b", PASSWORD)):
        calls.clear()
        try:
            sessions.authenticate(store, name, password)
        except Exception as exc:  # every failure is the same AuthError, same words
            assert type(exc).__name__ == "AuthError" and str(exc) == "wrong name or password"
        assert len(calls) == 1, name


def test_a_password_reset_ends_the_users_sessions(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    judge, admin = _browser(app), _browser(app)
    assert _sign_in(judge, w.judge2.name) == 303 and _sign_in(admin, w.admin.name) == 303
    assert judge.get("/account").status_code == 200
    token = sessions.create_token(store, w.judge2.name, "script")
    answer = admin.post(f"/admin/users/{w.judge2.user_id}", data={"password": "a new password"})
    assert answer.status_code == 303
    assert judge.get("/account").status_code == 303  # the old session has ended
    bearer = _browser(app, Authorization=f"Bearer {token}")
    assert bearer.get("/api/v1/me").status_code == 200  # tokens stay unless asked...
    admin.post(f"/admin/users/{w.judge2.user_id}",
               data={"password": PASSWORD, "revoke_tokens": "1"})
    assert bearer.get("/api/v1/me").status_code == 401  # ...and then they are revoked
    assert _sign_in(_browser(app), w.judge2.name) == 303


def test_a_reset_through_the_api_ends_sessions_too(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    victim = _browser(app)
    assert _sign_in(victim, w.judge3.name) == 303
    admin = _browser(app, Authorization=f"Bearer {sessions.create_token(store, w.admin.name)}")
    answer = admin.post(f"/api/v1/users/{w.judge3.user_id}", json={"password": PASSWORD})
    assert answer.status_code == 200, answer.text
    assert victim.get("/account").status_code == 303


def test_changing_ones_own_password_ends_the_other_sessions(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    here, there = _browser(app), _browser(app)
    assert _sign_in(here, w.curator.name) == 303 and _sign_in(there, w.curator.name) == 303
    wrong = here.post("/account/password", data={"current": "not it", "new": "whatever 123"})
    assert wrong.status_code == 403 and there.get("/account").status_code == 200
    changed = here.post("/account/password", data={"current": PASSWORD, "new": PASSWORD})
    assert changed.status_code == 200 and "1 other session(s) ended" in changed.text
    assert here.get("/account").status_code == 200  # the session it was changed from goes on
    assert there.get("/account").status_code == 303


def test_x_forwarded_for_is_not_believed_unless_the_operator_says_so(shared_world):
    store, w = shared_world
    plain = _browser(app_for(store, w))
    rotating = [plain.post("/login", data={"name": w.outsider.name, "password": "nope nope"},
                           headers={"X-Forwarded-For": f"10.0.0.{i}"}).status_code
                for i in range(6)]
    assert rotating == [401] * 5 + [429]  # one client, whatever the header says
    behind = _browser(app_for(store, w, forwarded_allow_ips="testclient"))
    spread = [behind.post("/login", data={"name": w.outsider.name, "password": "nope nope"},
                          headers={"X-Forwarded-For": f"10.0.1.{i}"}).status_code
              for i in range(6)]
    assert spread == [401] * 6  # behind a trusted proxy: six clients


def test_failing_on_purpose_does_not_lock_the_owner_out(shared_world):
    store, w = shared_world
    proxy = _browser(app_for(store, w, forwarded_allow_ips="testclient"))
    attacker = {"X-Forwarded-For": "203.0.113.9"}
    tries = [proxy.post("/login", data={"name": w.judge.name, "password": "guess guess"},
                        headers=attacker).status_code for _ in range(6)]
    assert tries[-1] == 429
    owner = proxy.post("/login", data={"name": w.judge.name, "password": PASSWORD},
                       headers={"X-Forwarded-For": "198.51.100.7"})
    assert owner.status_code == 303


def test_serve_does_not_let_uvicorn_believe_forwarded_headers(monkeypatch, tmp_path):
    # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told not to; the server's peer
    # is the client, and proxies are trusted only through --forwarded-allow-ips
    import uvicorn

    from rankscope.cli import serve

    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    monkeypatch.delenv("RANKSCOPE_FORWARDED_ALLOW_IPS", raising=False)
    parser = Parser()  # the command line's own (its --help takes examples)
    serve.register(parser.add_subparsers(), "serve", "")
    args = parser.parse_args(["serve", "--db", str(tmp_path / "s.sqlite"), "--port", "8123"])
    assert serve.run(args) == 0
    assert seen["proxy_headers"] is False and seen["port"] == 8123


def test_serve_reads_its_allow_lists_from_options_and_environment(monkeypatch, tmp_path):
    from rankscope.cli import serve

    monkeypatch.setenv("RANKSCOPE_ALLOW_ENV", "ES_KEY")
    monkeypatch.setenv("RANKSCOPE_ALLOW_HOSTS", "10.0.0.0/8")
    parser = Parser()
    serve.register(parser.add_subparsers(), "serve", "")
    args = parser.parse_args(["serve", "--allow-env", "OPENAI_API_KEY,OTHER",
                              "--allow-hosts", "127.0.0.1", "--allow-hosts", "es.internal",
                              "--files-dir", str(tmp_path)])
    from rankscope.app.server import boundary_for

    boundary = boundary_for(serve.settings_of(args), None, tmp_path)
    assert boundary.allowed_env == {"ES_KEY", "OPENAI_API_KEY", "OTHER"}
    assert boundary.hosts.describe() == ["10.0.0.0/8", "127.0.0.1", "es.internal"]
    assert boundary.files_dir == tmp_path.resolve()
    bad = parser.parse_args(["serve", "--allow-env", "NOT-A-NAME"])
    from rankscope.errors import OptionError

    with pytest.raises(OptionError, match="--allow-env"):
        boundary_for(serve.settings_of(bad), None, tmp_path)


# -- 6. bad input to the API -----------------------------------------------------------


@pytest.fixture
def api(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    token = sessions.create_token(store, w.curator.name)
    return _browser(app, Authorization=f"Bearer {token}"), store, w


@pytest.fixture
def pages(shared_world):
    store, w = shared_world
    client = _browser(app_for(store, w))
    assert _sign_in(client, w.curator.name) == 303
    return client, store, w


@pytest.mark.parametrize("path", [
    "/api/v1/evaluations/9223372036854775808", "/api/v1/evaluations/2147483648",
    "/api/v1/evaluations/99999999999999999999999", "/api/v1/tasks/2147483648",
    "/api/v1/evaluations/1/compare?baseline=2147483648",
    "/api/v1/evaluations/1/exports/holes.csv?limit=9223372036854775808",
    "/evaluations/2147483648", "/evaluations/1/compare?baseline=9223372036854775808",
])
def test_ids_out_of_range_are_a_4xx(api, pages, path):
    client, _, w = api if path.startswith("/api/") else pages
    answer = client.get(path.replace("/1/", f"/{w.evaluation.id}/"))
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:200])


def test_a_baseline_typed_in_a_form_is_checked(pages):
    client, _, w = pages
    for value in ("2147483648", "abc", "-1"):
        answer = client.post(f"/evaluations/{w.evaluation.id}/settings",
                             data={"baseline_id": value})
        assert answer.status_code == 400, (value, answer.status_code)


@pytest.mark.parametrize("request_", [
    ("post", "/api/v1/projects", {"json": {"name": "a\x00b"}}),
    ("post", "/api/v1/projects/{p}/query-sets", {"json": {"name": "qs", "text": "q\tx\x00y\n"}}),
    ("post", "/api/v1/projects/{p}/endpoints", {"json": {"toml": 'kind = "embedded"\n'
                                                                 'corpus = "a\\u0000b"\n'}}),
    ("post", "/api/v1/evaluations/{e}/settings", {"json": {"annotation": "x\x00"}}),
    ("post", "/api/v1/projects/{p}/members", {"json": {"name": "lee\x00"}}),
    ("post", "/api/v1/evaluations/{e}/imports?filename=g.csv",
     {"content": b"query_id,doc_id,rater,grade\nq01,d\x00x,r,1\n"}),
])
def test_a_nul_in_any_text_is_a_4xx(api, request_):
    client, store, w = api
    method, path, kwargs = request_
    with store.read() as s:
        before = (s.scalar(select(func.count(Project.id))), s.scalar(select(func.count(Grade.id))))
    answer = getattr(client, method)(path.format(p=w.project.id, e=w.evaluation.id), **kwargs)
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:200])
    with store.read() as s:
        after = (s.scalar(select(func.count(Project.id))), s.scalar(select(func.count(Grade.id))))
    assert after == before


def test_a_nul_in_the_login_name_is_a_wrong_login(shared_world):
    store, w = shared_world
    client = _browser(app_for(store, w))
    assert _sign_in(client, "ad\x00min") == 401
    assert client.post("/login", data={"name": w.admin.name, "password": "x\x00"}).status_code \
        == 401


def test_a_user_cannot_take_the_name_of_an_imported_rater_or_an_llm_judge(api):
    client, store, w = api
    exchange.import_grades(store, w.curator, w.evaluation.id,
                           b"query_id,doc_id,rater,grade\nq01,shutil.copytree,ext-rater,1\n",
                           filename="g.csv")
    llm_judges.attach_judge(store, w.curator, w.evaluation.id,
                            llm_judges.JudgeSpec("https://api.example.org/v1", "mini"),
                            boundary=boundary_for(w.data))
    admin = _browser(client.app, Authorization=f"Bearer "
                     f"{sessions.create_token(store, w.admin.name)}")
    for name in ("ext-rater", "llm:mini"):
        answer = admin.post("/api/v1/users", json={"name": name, "role": "judge",
                                                   "password": PASSWORD})
        assert answer.status_code == 409, answer.text
        assert "taken by a rater" in answer.json()["error"]
    with store.read() as s:
        assert s.scalar(select(User.id).where(User.name == "ext-rater")) is None


def _grades(store) -> int:
    with store.read() as s:
        return int(s.scalar(select(func.count(Grade.id))))


@pytest.mark.parametrize("grade", [
    {"value": True}, {"value": "1"}, {"value": 1, "explanation": "x" * (10 * 1024 * 1024)},
    {"value": None, "reason": "r" * 2001}, {"value": 1, "unknown": "field"},
])
def test_a_batch_with_a_bad_grade_stores_nothing(shared_world, grade):
    store, w = shared_world
    judge = _browser(app_for(store, w),
                     Authorization=f"Bearer {sessions.create_token(store, w.judge.name)}")
    task = assignment.next_task(store, w.judge, w.evaluation.id)
    before = _grades(store)
    answer = judge.post(f"/api/v1/evaluations/{w.evaluation.id}/grades", json={
        "batch_id": f"bad-{len(str(grade))}-{before}",
        "grades": [{"task_id": task.task_id, "value": 2}, {"task_id": task.task_id, **grade}]})
    assert answer.status_code == 422, answer.text[:300]
    assert "error" in answer.json() and len(answer.text) < 2000  # the value is not echoed
    assert _grades(store) == before


def test_unknown_json_fields_are_refused(api):
    client, store, w = api
    answer = client.post("/api/v1/projects", json={"name": "typo", "nmae": "x"})
    assert answer.status_code == 422 and "nmae" in answer.json()["error"]
    answer = client.post(f"/api/v1/evaluations/{w.evaluation.id}/settings",
                         json={"annotaton": "v2"})
    assert answer.status_code == 422
    with store.read() as s:
        assert s.scalar(select(Project.id).where(Project.name == "typo")) is None


def test_a_page_form_grade_with_a_huge_explanation_is_refused(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    judge = _browser(app)
    assert _sign_in(judge, w.judge.name) == 303
    task = assignment.next_task(store, w.judge, w.evaluation.id)
    before = _grades(store)
    answer = judge.post(f"/tasks/{task.task_id}/grade", data={
        "evaluation_id": w.evaluation.id, "value": "1", "explanation": "e" * 20_000})
    assert answer.status_code == 400 and _grades(store) == before
