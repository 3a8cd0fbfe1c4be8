"""Public collections in the judging app: only those the operator allows (``serve --irds``).

A curator may name ``irds:NAME`` as a query set or as an embedded endpoint's
corpus; the server reads it from ir_datasets' cache, never downloads, and
refuses (403) a collection the operator did not allow, so a web user cannot
make the server build arbitrary collections' files.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from fastapi.testclient import TestClient

from rankscope.errors import ForbiddenError, InputError
from rankscope.services import campaign_runs, campaigns, catalog, exchange

from .conftest import PASSWORD

irds = pytest.importorskip("ir_datasets")

NAME = f"rankscope-app-{uuid.uuid4().hex[:8]}/test"


@pytest.fixture(scope="module")
def collection_name(tmp_path_factory) -> str:
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    d = tmp_path_factory.mktemp("irds-app")
    (d / "queries.tsv").write_text("1\tcopy a directory tree\n2\tjson pretty print\n")
    (d / "docs.tsv").write_text("d1\tshutil copytree copies a directory tree\n"
                                "d2\tjson dumps indent pretty print\n")
    irds.registry.register(NAME, Dataset(TsvQueries(LocalDownload(d / "queries.tsv")),
                                         TsvDocs(LocalDownload(d / "docs.tsv"))))
    return f"irds:{NAME}"


def test_a_collection_as_a_query_set_only_where_allowed(store, world, collection_name):
    view = catalog.import_query_set_from_collection(
        store, world.curator, world.project.id, "", collection_name, [NAME.split("/")[0] + "/*"])
    assert view.n_queries == 2 and view.name == collection_name
    queries = catalog.query_set_queries(store, world.curator, view.id)
    assert [(q["query_id"], q["text"]) for q in queries] == [
        ("1", "copy a directory tree"), ("2", "json pretty print")]
    with pytest.raises(ForbiddenError, match="not enabled on this server"):
        catalog.import_query_set_from_collection(store, world.curator, world.project.id,
                                                 "x", collection_name, [])
    with pytest.raises(ForbiddenError, match="not among those this server allows"):
        catalog.import_query_set_from_collection(store, world.curator, world.project.id,
                                                 "x", collection_name, ["beir/*"])
    with pytest.raises(InputError, match="irds:NAME"):
        catalog.import_query_set_from_collection(store, world.curator, world.project.id,
                                                 "x", "/etc/passwd", ["*"])


def test_an_embedded_corpus_from_a_collection_only_where_allowed(store, world, collection_name):
    toml = f'kind = "embedded"\nname = "irds"\ncorpus = "{collection_name}"\nfields = ["text"]\n'
    with pytest.raises(ForbiddenError):
        catalog.save_endpoint(store, world.curator, world.project.id, toml,
                              boundary=world.boundary)
    allowed = dataclasses.replace(world.boundary, irds=(NAME,))
    view = catalog.save_endpoint(store, world.curator, world.project.id, toml,
                                 boundary=allowed)
    assert view.kind == "embedded"


def test_a_corpus_not_in_the_cache_is_refused_when_saved_not_at_the_first_run(
        store, world, tmp_path):
    """An allowed collection whose documents are a download not in ir_datasets' cache: saving
    the endpoint says which file is missing (it saved, and the first run failed, before);
    nothing is saved and nothing is fetched."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util import Download, RequestsDownload

    from rankscope.errors import FileAccessError

    name = f"rankscope-app-{uuid.uuid4().hex[:8]}/remote"
    cache = tmp_path / "home" / "docs.tsv"
    irds.registry.register(name, Dataset(TsvDocs(Download(
        [RequestsDownload("https://example.invalid/docs.tsv")], cache_path=str(cache)))))
    toml = f'kind = "embedded"\nname = "far"\ncorpus = "irds:{name}"\nfields = ["text"]\n'
    allowed = dataclasses.replace(world.boundary, irds=(name,))
    with pytest.raises(FileAccessError, match="docs are not in ir_datasets' cache") as info:
        catalog.save_endpoint(store, world.curator, world.project.id, toml, boundary=allowed)
    assert "https://example.invalid/docs.tsv" in str(info.value) and str(cache) in str(info.value)
    assert all(e.name != "far" for e in catalog.list_endpoints(store, world.curator,
                                                                world.project.id))
    assert not cache.exists()


def test_an_evaluation_runs_on_a_collection_while_the_operator_allows_it(store, world,
                                                                        collection_name):
    """The corpus is read from the collection (not taken for a file of the files directory),
    the index is written inside that directory, and the collection is checked again at each
    run: once the operator no longer allows it, the run is refused. Fails if FileScope
    confines ``irds:NAME`` like a path, or if only the save checks the collection."""
    toml = f'kind = "embedded"\nname = "irds"\ncorpus = "{collection_name}"\nfields = ["text"]\n'
    allowed = dataclasses.replace(world.boundary, irds=(NAME,))
    view = catalog.save_endpoint(store, world.curator, world.project.id, toml, boundary=allowed)
    spec = campaigns.EvaluationSpec(name="on irds", query_set_id=world.query_set.id,
                                      endpoint_id=view.id, depth=5, metrics=["P@5"])
    made = campaigns.create_evaluation(store, world.curator, world.project.id, spec)
    run = campaign_runs.run_evaluation(store, world.curator, made.id, boundary=allowed)
    assert campaigns.get_evaluation(store, world.curator, made.id).status == "ready", run
    assert (world.data / "irds.index.sqlite").is_file()
    snapshot_docs = {r["doc_id"] for r in exchange_rows(store, world, made.id)}
    assert snapshot_docs and snapshot_docs <= {"d1", "d2"}

    again = campaigns.create_evaluation(store, world.curator, world.project.id,
                                          dataclasses.replace(spec, name="closed"))
    with pytest.raises(ForbiddenError, match="not enabled on this server"):
        campaign_runs.run_evaluation(store, world.curator, again.id, boundary=world.boundary)


def exchange_rows(store, world, evaluation_id: int) -> list[dict[str, str]]:
    """The evaluation's snapshot as its run.txt export: query, doc per row."""
    body, _ = exchange.export(store, world.curator, evaluation_id, "run.txt")
    return [{"query_id": line.split()[0], "doc_id": line.split()[2]}
            for line in body.decode().splitlines() if line.strip()]


def _signed_in(app, name: str) -> TestClient:
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert client.post("/login", data={"name": name, "password": PASSWORD}).status_code == 303
    return client


def test_the_pages_and_the_api_follow_the_operators_list(store, world, collection_name):
    from rankscope.app.factory import create_app
    from rankscope.services import sessions

    closed = _signed_in(create_app(store, world.data), world.curator.name)
    page = closed.get(f"/projects/{world.project.id}")
    assert page.status_code == 200 and 'name="collection"' not in page.text
    refused = closed.post(f"/projects/{world.project.id}/query-sets",
                          data={"name": "c", "collection": collection_name})
    assert refused.status_code == 403 and "not enabled on this server" in refused.text

    app = create_app(store, world.data, irds=[NAME])
    open_ = _signed_in(app, world.curator.name)
    assert 'name="collection"' in open_.get(f"/projects/{world.project.id}").text
    made = open_.post(f"/projects/{world.project.id}/query-sets",
                      data={"name": "from irds", "collection": collection_name})
    assert made.status_code == 303 and made.headers["location"].startswith("/query-sets/")

    api = TestClient(app, base_url="http://testserver")
    api.headers["Authorization"] = f"Bearer {sessions.create_token(store, world.curator.name)}"
    answer = api.post(f"/api/v1/projects/{world.project.id}/query-sets",
                      json={"name": "api", "collection": collection_name})
    assert answer.status_code == 201 and answer.json()["n_queries"] == 2
    other = api.post(f"/api/v1/projects/{world.project.id}/query-sets",
                     json={"name": "api", "collection": "irds:msmarco-passage/dev"})
    assert other.status_code == 403 and "not among those" in other.json()["error"]


def test_serve_hands_its_irds_patterns_to_the_app(tmp_path, monkeypatch):
    import sys
    import types

    from rankscope.app import factory
    from rankscope.cli.main import main

    seen: dict[str, object] = {}
    real = factory.create_app

    def spy(store, data_dir, **kwargs):
        seen.update(kwargs)
        return real(store, data_dir, **kwargs)

    monkeypatch.setattr(factory, "create_app", spy)
    monkeypatch.setitem(sys.modules, "uvicorn", types.SimpleNamespace(run=lambda *a, **k: None))
    assert main(["serve", "--db", str(tmp_path / "s.sqlite"), "--irds", "beir/*",
                 "--irds", NAME]) == 0
    assert seen["boundary"].irds == ("beir/*", NAME)
