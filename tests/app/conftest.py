"""Fixtures of the judging app's tests: a store (SQLite, and PostgreSQL when
RANKSCOPE_TEST_PG_URL is set), a tiny collection with an embedded endpoint, and a
world of users, two projects and a run evaluation."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

PG_URL = os.environ.get("RANKSCOPE_TEST_PG_URL")
STANDIN = Path(__file__).resolve().parents[1] / "services" / "standin"
PASSWORD = "correct horse battery"


def fresh_pg_database() -> tuple[str, str]:
    """A new empty PostgreSQL database on the test server: (its URL, its name)."""
    import psycopg

    from rankscope.store.db import store_url

    url = store_url(PG_URL or "")
    name = "rsapp_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"),
                         autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name, name


def drop_pg_database(name: str) -> None:
    import psycopg

    admin = (PG_URL or "").replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def app_store(kind: str, root: Path) -> Iterator[tuple[Any, Path]]:
    """An app store on ``kind`` ("sqlite", or "postgresql": a fresh database, dropped after)
    and ``root / "data"`` holding the stand-in collection; for module-scoped fixtures."""
    from rankscope.app.server import open_app_store

    name = None
    if kind == "sqlite":
        url = str(root / "app.sqlite")
    else:
        if not PG_URL:
            pytest.skip("RANKSCOPE_TEST_PG_URL is not set (no PostgreSQL server for this run)")
        url, name = fresh_pg_database()
    data = root / "data"
    data.mkdir()
    for f in ("corpus.jsonl", "baseline.toml", "tuned.toml", "queries.tsv"):
        shutil.copy(STANDIN / f, data / f)
    store = open_app_store(url)
    try:
        yield store, data
    finally:
        store.close()
        if name:
            drop_pg_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "app.sqlite")
        return
    if not PG_URL:
        pytest.skip("RANKSCOPE_TEST_PG_URL is not set (no PostgreSQL server for this run)")
    url, name = fresh_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(name)


@pytest.fixture
def store(db_url):
    from rankscope.app.server import open_app_store

    opened = open_app_store(db_url)
    yield opened
    opened.close()


@pytest.fixture
def collection(tmp_path) -> Path:
    """A directory with the stand-in corpus and its two embedded endpoint files."""
    data = tmp_path / "data"
    data.mkdir()
    for name in ("corpus.jsonl", "baseline.toml", "tuned.toml", "queries.tsv", "qrels.txt"):
        shutil.copy(STANDIN / name, data / name)
    return data


def boundary_for(data: Path, *, hosts=(), env=()):
    """The server's boundary over the collection: strict unless a test allows more."""
    from rankscope.outbound.hosts import HostPolicy
    from rankscope.services.boundary import Boundary

    return Boundary(files_dir=data.resolve(), allowed_env=frozenset(env),
                    hosts=HostPolicy.parse(hosts))


def make_world(store, data: Path, *, grades_wanted: int = 2, scale: str = "graded",
               metrics=("nDCG@5", "P@5", "RR@5"), depth: int = 5, null_rules: bool = True,
               strategy: str | None = None) -> SimpleNamespace:
    """Users, project A (query set, two endpoints, one evaluation run) and project B."""
    from rankscope.services import accounts, campaign_runs, campaigns, catalog, projects

    boundary = boundary_for(data)
    admin = accounts.create_user(store, "admin", "admin", PASSWORD)
    curator = accounts.create_user(store, "cora", "curator", PASSWORD)
    judge = accounts.create_user(store, "jay", "judge", PASSWORD)
    judge2 = accounts.create_user(store, "kim", "judge", PASSWORD)
    judge3 = accounts.create_user(store, "lee", "judge", PASSWORD)
    outsider = accounts.create_user(store, "otto", "curator", PASSWORD)
    project = projects.create_project(store, curator, "shop")
    for who in (judge, judge2, judge3):
        projects.add_member(store, curator, project.id, who.name, "judge")
    qs = catalog.import_query_set(store, curator, project.id, "queries",
                                  (data / "queries.tsv").read_text(), source="queries.tsv")
    base = catalog.save_endpoint(store, curator, project.id, (data / "baseline.toml").read_text(),
                                 boundary=boundary)
    tuned = catalog.save_endpoint(store, curator, project.id, (data / "tuned.toml").read_text(),
                                  boundary=boundary)
    spec = campaigns.EvaluationSpec(
        name="first", query_set_id=qs.id, endpoint_id=base.id, scale=scale,
        grades_wanted=grades_wanted, strategy=strategy, metrics=list(metrics), depth=depth,
        null_rules=null_rules, guidelines="# Grade\n\n**3** is the answer.", annotation="v1")
    ev = campaigns.create_evaluation(store, curator, project.id, spec)
    run = campaign_runs.run_evaluation(store, curator, ev.id, boundary=boundary)
    other = projects.create_project(store, outsider, "elsewhere")
    other_qs = catalog.import_query_set(store, outsider, other.id, "theirs",
                                        "x1\tsecret json print\n")
    other_ep = catalog.save_endpoint(store, outsider, other.id,
                                     (data / "baseline.toml").read_text(), boundary=boundary)
    other_ev = campaigns.create_evaluation(store, outsider, other.id, campaigns.EvaluationSpec(
        name="theirs", query_set_id=other_qs.id, endpoint_id=other_ep.id))
    campaign_runs.run_evaluation(store, outsider, other_ev.id, boundary=boundary)
    return SimpleNamespace(admin=admin, curator=curator, judge=judge, judge2=judge2,
                           judge3=judge3, outsider=outsider, project=project, query_set=qs,
                           endpoint=base, tuned=tuned, evaluation=ev, run=run, other=other,
                           other_query_set=other_qs, other_endpoint=other_ep,
                           other_evaluation=other_ev, data=data, boundary=boundary)


@pytest.fixture
def world(store, collection) -> SimpleNamespace:
    return make_world(store, collection)


def signed_in(app: Any, name: str) -> Any:
    """A test client of ``app`` signed in as ``name`` through the sign-in form."""
    from fastapi.testclient import TestClient

    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert client.post("/login", data={"name": name, "password": PASSWORD}).status_code == 303
    return client


def module_store(request, tmp_path_factory, label: str):
    """A store (``request.param``: sqlite or postgresql) and a copy of the stand-in
    collection, for a module-scoped fixture: yields ``(store, data)``, then cleans up
    (:func:`app_store` in a directory of its own)."""
    with app_store(request.param, tmp_path_factory.mktemp(f"{label}-{request.param}")) as pair:
        yield pair


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def shared_world(request, tmp_path_factory):
    """(store, world) made once per module and database (a world takes seconds to make), for
    tests that only add to it; each makes its own app over it."""
    for store, data in module_store(request, tmp_path_factory, "shared"):
        yield store, make_world(store, data)
