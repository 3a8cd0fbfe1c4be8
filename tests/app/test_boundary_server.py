"""Issue 33, sections 1-3: what a curator can make the server do through an endpoint file or
an LLM judge: touch its files, send its environment variables, reach its network.

Each reproduction of the issue is driven through the API as a curator (a token), on SQLite
and PostgreSQL where the database takes part, followed by one more variant of the attack.
Fake engines and model servers run on 127.0.0.1; a test that needs the app to reach one
allows that address explicitly (``--allow-hosts 127.0.0.1``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.llm_judge.conftest import Reply as LLMReply
from tests.llm_judge.conftest import ScriptedServer
from tests.search.engine_server import Reply

from rankscope.outbound.hosts import HostPolicy
from rankscope.services.boundary import Boundary

from .conftest import boundary_for, make_world
from .trust import Curator, app_for, es_toml

SECRET = "s3cr3t-value-from-the-server"
ES8 = "es8_search.json"


@pytest.fixture
def curator(shared_world):
    store, w = shared_world
    return Curator(app_for(store, w), store, w)


def _link(path: Path, target: str | Path) -> None:
    if not path.is_symlink():
        path.symlink_to(target)


def _local(curator: Curator, **boundary: object) -> Curator:
    """The same world behind a server that allows 127.0.0.1 (and what else is given)."""
    allowed = boundary_for(curator.w.data, hosts=["127.0.0.1", *boundary.pop("hosts", [])],
                           **boundary)
    return Curator(app_for(curator.store, curator.w, allowed), curator.store, curator.w)


# -- 1. files --------------------------------------------------------------------------


@pytest.fixture
def db_in_data(collection):
    """The issue's setting: the app's SQLite database in its data directory."""
    from rankscope.app.server import open_app_store

    store = open_app_store(str(collection / "app.sqlite"))
    try:
        yield store, make_world(store, collection)
    finally:
        store.close()


def _users(db) -> list[str]:
    with sqlite3.connect(db) as con:
        return [name for (name,) in con.execute("SELECT name FROM users ORDER BY name")]


def test_an_endpoint_cannot_replace_the_apps_database(db_in_data):
    store, w = db_in_data
    db = w.data / "app.sqlite"
    (w.data / "innocent.sqlite").symlink_to(db)  # the variant: a link to the database
    before = _users(db)
    curator = Curator(app_for(store, w), store, w)
    for index in ("app.sqlite", "app.sqlite-wal", "innocent.sqlite"):
        answer = curator.endpoint(f'kind = "embedded"\nname = "x"\ncorpus = "corpus.jsonl"\n'
                                  f'index = "{index}"\n')
        assert answer.status_code == 400, answer.text
        assert "index" in answer.json()["error"] and "app itself" in answer.json()["error"]
    assert _users(db) == before  # the database is whole, and still opens


def test_an_index_is_never_written_over_a_file_the_engine_did_not_make(curator):
    # the variant for any other file of the directory: the query set, the corpus
    for index in ("queries.tsv", "corpus.jsonl", "."):
        answer = curator.endpoint(f'kind = "embedded"\nname = "y"\ncorpus = "corpus.jsonl"\n'
                                  f'index = "{index}"\n')
        assert answer.status_code == 400, answer.text
        assert "index" in answer.json()["error"]
    assert (curator.w.data / "queries.tsv").read_text().startswith("query_id\ttext")


@pytest.mark.parametrize("corpus", ["/etc/passwd", "/proc/self/environ", "../app.sqlite",
                                    "linked-passwd"])
def test_an_endpoint_reads_no_file_outside_the_directory(curator, corpus):
    _link(curator.w.data / "linked-passwd", "/etc/passwd")  # the variant: a link out
    answer = curator.endpoint(f'kind = "embedded"\nname = "z"\ncorpus = "{corpus}"\n')
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert "corpus" in error
    assert "root:" not in error and "PATH=" not in error  # never the file's content


def test_a_template_file_outside_the_directory_is_refused(curator):
    answer = curator.endpoint(es_toml("http://93.184.215.14", template_file='"/etc/hostname"'))
    assert answer.status_code == 400 and "template_file" in answer.json()["error"]


def test_a_corpus_that_does_not_parse_is_not_quoted(curator):
    (curator.w.data / "notes.txt").write_text(f"TOKEN={SECRET} and more\n")
    made = curator.endpoint('kind = "embedded"\nname = "notes"\ncorpus = "notes.txt"\n')
    assert made.status_code == 201, made.text
    run = curator.evaluate(made.json()["id"])
    assert run.status_code == 400
    assert "notes.txt" in run.json()["error"] and "line 1" in run.json()["error"]
    assert SECRET not in run.text
    failed = curator.http.get(f"/api/v1/projects/{curator.w.project.id}/evaluations").json()
    assert all(SECRET not in (e["error"] or "") for e in failed)


def test_the_demo_style_endpoint_in_the_directory_still_works(curator):
    # corpus.jsonl placed in the data directory keeps working (issue 33's own example)
    made = curator.endpoint('kind = "embedded"\nname = "fine"\ncorpus = "corpus.jsonl"\n'
                            'index = "indexes/fine.sqlite"\n')
    assert made.status_code == 201, made.text
    assert curator.evaluate(made.json()["id"]).status_code == 200
    assert (curator.w.data / "indexes" / "fine.sqlite").is_file()


# -- 2. secrets ------------------------------------------------------------------------


@pytest.mark.parametrize("credential", [
    'headers_env = { "X-Leak" = "RS_TEST_SOME_SECRET" }',
    'auth = { type = "bearer", token_env = "RS_TEST_SOME_SECRET" }',
    'params_env = { api_key = "RS_TEST_SOME_SECRET" }',
    'headers_env = { "X-Home" = "HOME" }',  # the variant: any variable of the server
])
def test_an_endpoint_names_only_the_variables_the_operator_allows(curator, engine, monkeypatch,
                                                                   credential):
    monkeypatch.setenv("RS_TEST_SOME_SECRET", SECRET)
    engine.route("POST", "/products/_search", Reply(ES8))
    local = _local(curator)
    answer = local.endpoint(es_toml(engine.url) + credential + "\n")
    assert answer.status_code == 400, answer.text
    assert "does not let endpoints read" in answer.json()["error"]
    assert engine.requests == []


def test_an_allowed_variable_is_sent_and_a_withdrawn_one_is_not(curator, engine, monkeypatch):
    monkeypatch.setenv("RS_TEST_SOME_SECRET", SECRET)
    engine.route("POST", "/products/_search", Reply(ES8))
    allowed = _local(curator, env=["RS_TEST_SOME_SECRET"])
    made = allowed.endpoint(es_toml(engine.url) + 'headers_env = { "X-Key" = '
                                                  '"RS_TEST_SOME_SECRET" }\n')
    assert made.status_code == 201, made.text
    assert allowed.evaluate(made.json()["id"]).status_code == 200
    assert {r.headers.get("X-Key") for r in engine.requests} == {SECRET}
    # the operator withdraws it: the stored endpoint is checked again before anything is sent
    seen = len(engine.requests)
    run = _local(curator).evaluate(made.json()["id"])
    assert run.status_code == 400 and "RS_TEST_SOME_SECRET" in run.json()["error"]
    assert len(engine.requests) == seen


def test_the_forms_say_which_variables_and_hosts_are_allowed(curator):
    from fastapi.testclient import TestClient

    from .conftest import PASSWORD

    app = app_for(curator.store, curator.w, boundary_for(
        curator.w.data, hosts=["10.0.0.0/8"], env=["ES_KEY", "OPENAI_API_KEY"]))
    browser = TestClient(app, follow_redirects=False)
    assert browser.post("/login", data={"name": curator.w.curator.name,
                                        "password": PASSWORD}).status_code == 303
    for page in (f"/projects/{curator.w.project.id}",
                 f"/evaluations/{curator.w.evaluation.id}/llm"):
        text = browser.get(page).text
        assert "<code>ES_KEY</code>, <code>OPENAI_API_KEY</code>" in text
        assert "<code>10.0.0.0/8</code>" in text


def test_a_judge_names_only_an_allowed_variable(curator, monkeypatch):
    monkeypatch.setenv("RS_TEST_SOME_SECRET", SECRET)
    llm = ScriptedServer()
    try:
        local = _local(curator)
        for name in ("RS_TEST_SOME_SECRET", "PATH"):
            answer = local.judge(llm.url, api_key_env=name)
            assert answer.status_code == 400, answer.text
            assert "does not let web users name" in answer.json()["error"]
        assert llm.count == 0
        allowed = _local(curator, env=["RS_TEST_SOME_SECRET"])
        made = allowed.judge(llm.url, api_key_env="RS_TEST_SOME_SECRET", max_calls=1)
        assert made.status_code == 201, made.text
        ran = allowed.http.post(f"/api/v1/llm-judges/{made.json()['id']}/run")
        assert ran.status_code == 200, ran.text
        assert llm.headers[0]["Authorization"] == f"Bearer {SECRET}"
        # withdrawn: the run is refused before any request
        again = local.http.post(f"/api/v1/llm-judges/{made.json()['id']}/run")
        assert again.status_code == 400 and llm.count == 1
    finally:
        llm.stop()


# -- 3. network ------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]", "localhost", "127.1", "169.254.169.254",
                                  "10.0.0.1", "[fd00:ec2::254]", "[::ffff:127.0.0.1]"])
def test_by_default_no_endpoint_points_at_a_non_public_address(curator, engine, host):
    port = engine.url.rsplit(":", 1)[1]
    answer = curator.endpoint(es_toml(f"http://{host}:{port}"))
    assert answer.status_code == 400, answer.text
    assert "--allow-hosts" in answer.json()["error"]
    assert engine.requests == []


def test_version_urls_and_judges_are_checked_too(curator, engine):
    http = ('kind = "http"\nname = "api"\nurl = "http://93.184.215.14/search"\nhits = "r"\n'
            f'version_url = "{engine.url}/version"\nversion_path = "v"\n')
    answer = curator.endpoint(http)
    assert answer.status_code == 400 and "version_url" in answer.json()["error"]
    for url in (f"{engine.url}/v1", "http://localhost:8080/v1", "http://169.254.169.254/v1"):
        answer = curator.judge(url)
        assert answer.status_code == 400, (url, answer.text)
    assert engine.requests == []


def test_allowing_an_address_allows_that_address_only(curator, engine):
    engine.route("POST", "/products/_search", Reply(ES8))
    local = _local(curator)
    made = local.endpoint(es_toml(engine.url))
    assert made.status_code == 201, made.text
    assert local.evaluate(made.json()["id"]).status_code == 200
    assert len(engine.seen("/products/_search")) == len(
        (curator.w.data / "queries.tsv").read_text().splitlines()) - 1
    port = engine.url.rsplit(":", 1)[1]
    other = local.endpoint(es_toml(f"http://127.0.0.2:{port}", name="other"))
    assert other.status_code == 400 and "127.0.0.2" in other.json()["error"]


def test_a_redirect_to_a_private_address_is_refused(curator, engine):
    port = engine.url.rsplit(":", 1)[1]
    engine.route("POST", "/products/_search", Reply(status=307, headers={
        "Location": f"http://127.0.0.2:{port}/products/_search"}))
    local = _local(curator)
    made = local.endpoint(es_toml(engine.url))
    run = local.evaluate(made.json()["id"])
    assert run.status_code == 400
    assert "127.0.0.2, a loopback address" in run.json()["error"]
    asked = [r.body["query"]["multi_match"]["query"] for r in engine.seen("/products/_search")]
    assert asked and len(asked) == len(set(asked))  # no query was tried twice


def test_a_name_is_checked_after_resolution_at_request_time(curator, engine):
    # shop.example resolved to a public address when the endpoint was saved, then to
    # 127.0.0.1 (DNS rebinding): the run is refused and nothing is sent
    answers = {"n": 0}

    def resolver(host: str, port: int) -> list[str]:
        answers["n"] += 1
        return ["93.184.215.14"] if answers["n"] == 1 else ["127.0.0.1"]

    boundary = Boundary(files_dir=curator.w.data, hosts=HostPolicy(resolver=resolver))
    rebinding = Curator(app_for(curator.store, curator.w, boundary), curator.store, curator.w)
    port = engine.url.rsplit(":", 1)[1]
    made = rebinding.endpoint(es_toml(f"http://shop.example:{port}"))
    assert made.status_code == 201, made.text
    run = rebinding.evaluate(made.json()["id"])
    assert run.status_code == 400
    assert "shop.example, which resolves to 127.0.0.1" in run.json()["error"]
    assert engine.requests == []


def test_a_judge_redirected_to_a_private_address_is_stopped(curator):
    llm = ScriptedServer()
    try:
        llm.script = lambda doc, n, body: LLMReply(
            status=307, headers={"Location": "http://10.1.2.3/v1/chat/completions"})
        local = _local(curator)
        made = local.judge(llm.url, max_calls=1)
        assert made.status_code == 201, made.text
        ran = local.http.post(f"/api/v1/llm-judges/{made.json()['id']}/run")
        assert ran.status_code == 400 and "10.1.2.3, a private address" in ran.json()["error"]
        assert llm.count == 1
    finally:
        llm.stop()
