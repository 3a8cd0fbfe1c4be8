"""Taking snapshots: run files, the store, failures, re-runs, the demo collection."""

from __future__ import annotations

import asyncio
import json

import pytest

from rankscope.data.tables import Run
from rankscope.errors import ConfigError, OptionError, RankscopeWarning, SearchRequestError
from rankscope.search.config import endpoint_from_dict, load_endpoint, open_endpoint
from rankscope.search.queries import read_queries
from rankscope.search.types import QueryItem
from rankscope.services.demo import init_demo
from rankscope.services.snapshots import run_lines, take_snapshot, write_run
from search.engine_server import EngineServer, Reply, recorded


def snap(config, queries, **kwargs):
    async def go():
        endpoint = open_endpoint(config)
        try:
            return await take_snapshot(endpoint, queries, **kwargs)
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


def test_demo_init_writes_the_collection(tmp_path, standin):
    written = init_demo(tmp_path / "d", source=standin)
    names = sorted(p.name for p in written)
    assert names == ["README.md", "corpus.jsonl", "endpoint.toml", "endpoint_tuned.toml",
                     "qrels.txt", "queries.tsv"]
    from .conftest import STANDIN

    out = tmp_path / "d"
    assert (out / "corpus.jsonl").read_bytes() == (STANDIN / "corpus.jsonl").read_bytes()
    assert (out / "endpoint.toml").read_bytes() == (STANDIN / "baseline.toml").read_bytes()
    with pytest.raises(OptionError, match=r"already has corpus\.jsonl"):
        init_demo(tmp_path / "d", source=standin)
    init_demo(tmp_path / "d", source=standin, force=True)
    (standin / "qrels.txt").unlink()
    from rankscope.errors import FileAccessError

    with pytest.raises(FileAccessError, match=r"incomplete in this installation .*qrels\.txt"):
        init_demo(tmp_path / "e", source=standin)


def test_a_snapshot_of_the_demo_gives_a_run_in_the_engines_order(demo, tmp_path):
    config = load_endpoint(demo / "endpoint.toml")
    queries = read_queries(demo / "queries.tsv")
    outcome = snap(config, queries, depth=5)
    assert outcome.status == "complete" and outcome.snapshot_id is None
    assert [r.query.query_id for r in outcome.responses] == [q.query_id for q in queries]
    assert outcome.engine_version.startswith("sqlite ")
    lines = write_run(tmp_path / "run.txt", outcome.responses, 5, "demo-baseline")
    text = (tmp_path / "run.txt").read_text()
    assert lines == len(text.splitlines()) == sum(len(r.hits) for r in outcome.responses)
    for line in text.splitlines():
        qid, q0, doc, rank, score, tag = line.split()
        hit = next(r for r in outcome.responses if r.query.query_id == qid).hits[int(rank) - 1]
        # the score column: depth - rank + 1, strictly decreasing in the engine's order
        assert (q0, doc, float(score), tag) == ("Q0", hit.doc_id, 5 - int(rank) + 1,
                                                "demo-baseline")
    with pytest.warns(RankscopeWarning, match="1 query has tied engine scores"):
        write_run(tmp_path / "engine.txt", outcome.responses, 5, "demo-baseline",
                  scores="engine")
    for line in (tmp_path / "engine.txt").read_text().splitlines():
        qid, _, doc, rank, score, _ = line.split()
        hit = next(r for r in outcome.responses if r.query.query_id == qid).hits[int(rank) - 1]
        assert (doc, float(score)) == (hit.doc_id, hit.score)  # the engine's, ties included
    run = Run.read(tmp_path / "run.txt")
    assert run.name == "demo-baseline" and run.n_queries == len(queries)


def test_store_records_every_query_and_a_rerun_is_a_new_snapshot(demo):
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import list_snapshots, snapshot_hits, snapshot_queries

    config = load_endpoint(demo / "endpoint_tuned.toml")
    queries = read_queries(demo / "queries.tsv")
    store = open_store(demo / "snapshots.sqlite")
    try:
        first = snap(config, queries, depth=10, store=store, keep_raw=True,
                     query_set_source="queries.tsv")
        second = snap(config, queries, depth=10, store=store, name="again")
        infos = list_snapshots(store)
        assert [(i.id, i.name, i.status) for i in infos] == [
            (first.snapshot_id, "demo-tuned", "complete"), (second.snapshot_id, "again",
                                                            "complete")]
        assert infos[0].n_done == infos[0].n_queries == len(queries)
        assert infos[0].config_hash == config.config_hash
        assert infos[0].config["weights"] == {"title": 4.0, "text": 1.0}
        stored = snapshot_hits(store, first.snapshot_id)
        expected = [(r.query.query_id, i, h.doc_id, h.score, h.title, h.url)
                    for r in first.responses for i, h in enumerate(r.hits, 1)]
        assert [(h["query_id"], h["rank"], h["doc_id"], h["score"], h["title"], h["url"])
                for h in stored] == expected
        records = snapshot_queries(store, first.snapshot_id)
        assert all(r.status == "ok" and len(r.raw_sha256) == 64 for r in records)
        # the request as sent is kept: q01 "copy a directory tree", every term ORed
        assert records[0].request == {
            "method": "fts5", "index": "demo-tuned.index.sqlite", "text": "copy a directory tree",
            "match": '"copy" OR "a" OR "directory" OR "tree"', "limit": 10,
            "weights": [4.0, 1.0]}  # title, text
        assert [(r.query_id, r.request["text"]) for r in records] == [
            (q.query_id, q.text) for q in queries]
    finally:
        store.close()


@pytest.mark.parametrize("recorder", ["thread", "process"])
def test_a_failing_query_ends_the_snapshot_as_failed_keeping_what_came_before(tmp_path,
                                                                              recorder):
    """The same with an open store (a writer thread) and with its path (a recording
    process of its own: the failure and the end are sent to it, in order)."""
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import find_snapshot, snapshot_queries

    server = EngineServer()
    try:
        server.route("POST", "/products/_search", Reply("es8_search.json"),
                     Reply("es8_search.json"), Reply("es_400_parsing.json", status=400),
                     Reply("es8_search.json"))
        config = endpoint_from_dict({"kind": "elasticsearch", "url": server.url,
                                     "index": "products", "name": "shop"})
        queries = [QueryItem(f"q{i}", f"query {i}") for i in range(1, 5)]
        path = tmp_path / "s.sqlite"
        given = open_store(path) if recorder == "thread" else path
        with pytest.raises(SearchRequestError) as caught:
            snap(config, queries, store=given, concurrency=1)
        store = given if recorder == "thread" else open_store(path)
        assert str(caught.value).startswith("query q3: HTTP 400 from POST")
        assert "; snapshot #1 kept as failed with 2 of 4 queries (rankscope snapshot ... " \
            "--resume 1 asks the rest)" in str(caught.value)
        info = find_snapshot(store, "shop")
        assert (info.status, info.n_done, info.n_failed) == ("failed", 2, 1)
        assert [r.status for r in snapshot_queries(store, info.id)] == ["ok", "ok", "error",
                                                                        None]
        store.close()
    finally:
        server.close()


def test_missing_template_parameters_are_refused_before_sending(tmp_path):
    config = endpoint_from_dict({"kind": "http", "url": "http://127.0.0.1:9/x", "hits": "r",
                                 "params": {"q": "{{query}}", "brand": "{{brand}}",
                                            "site": "{{site}}"},
                                 "variables": {"site": "eu"}})
    queries = [QueryItem("q1", "a", {"brand": "x"}), QueryItem("q2", "b")]
    with pytest.raises(ConfigError, match=r"query q2 has no value for \{\{brand\}\}"):
        snap(config, queries)


def test_run_scores_fall_back_to_depth_minus_rank():
    server = EngineServer()
    try:
        body = json.loads(recorded("es8_search.json"))
        for hit in body["hits"]["hits"]:
            hit["_score"] = None  # sorted by a field: ES sends null scores
        server.route("POST", "/p/_search", Reply(json.dumps(body).encode()))
        config = endpoint_from_dict({"kind": "elasticsearch", "url": server.url, "index": "p"})
        outcome = snap(config, [QueryItem("q1", "x")], depth=10)
    finally:
        server.close()
    assert run_lines(outcome.responses, 10, "sorted by price") == [
        "q1 Q0 p-101 1 10.0 sorted_by_price\n", "q1 Q0 p-207 2 9.0 sorted_by_price\n",
        "q1 Q0 p-033 3 8.0 sorted_by_price\n"]


class Interrupted:
    """An endpoint whose third query is interrupted (Ctrl-C)."""

    def __init__(self, config):
        self.config = config

    def needed_params(self):
        return set()

    def preview(self, query, depth):
        return {}

    async def version(self):
        return "fake 1"

    async def search(self, query, depth):
        from rankscope.search.types import Hit, SearchResponse

        if query.query_id == "q3":
            raise KeyboardInterrupt
        return SearchResponse(query, (Hit("d1", 1.0),), {"q": query.text}, 1.0, "0" * 64)

    async def aclose(self):
        pass


def test_an_interrupted_snapshot_is_recorded_incomplete(tmp_path):
    from rankscope.store.db import open_store
    from rankscope.store.models import Snapshot

    config = endpoint_from_dict({"kind": "http", "url": "http://x", "hits": "r", "name": "i"})
    store = open_store(tmp_path / "s.sqlite")
    queries = [QueryItem(f"q{i}", "x") for i in range(1, 6)]
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(take_snapshot(Interrupted(config), queries, store=store, concurrency=1))
    with store.read() as session:
        snapshot = session.get(Snapshot, 1)
        assert (snapshot.status, snapshot.n_done) == ("incomplete", 2)  # stored, not inferred
    store.close()


def test_a_store_given_by_its_path_is_recorded_by_a_process_and_read_back(tmp_path):
    """take_snapshot(store=PATH): the outcome's counts are the store's, read back by the
    recording process, and equal those of the answers themselves; a resume needs the
    store opened (the recording process only starts new snapshots)."""
    from rankscope.errors import StoreError
    from rankscope.services.snapshots import AnswerCounts
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import find_snapshot

    server = EngineServer()
    try:
        server.route("POST", "/products/_search", Reply("es8_search.json"))
        config = endpoint_from_dict({"kind": "elasticsearch", "url": server.url,
                                     "index": "products", "name": "shop"})
        queries = [QueryItem(f"q{i}", f"query {i}") for i in range(1, 6)]
        path = tmp_path / "s.sqlite"
        outcome = snap(config, queries, store=path, concurrency=2)
        with pytest.raises(StoreError, match="needs its store opened"):
            snap(config, queries, store=path, resume="1")
    finally:
        server.close()
    assert outcome.status == "complete" and outcome.snapshot_id == 1
    assert outcome.recorder["answers"] == 5
    assert outcome.stored == AnswerCounts.of(outcome.responses)
    assert outcome.stored is not None and outcome.stored.hits == 5 * len(
        outcome.responses[0].hits) > 0
    with open_store(path) as store:
        info = find_snapshot(store, "shop")
        assert (info.status, info.n_done, info.n_hits) == ("complete", 5, outcome.stored.hits)
