"""Tries of an evaluation's endpoint (services/tries.py): numbered and kept with their
settings, checked by the server's boundary, the endpoint never changed; the new results
join the pool and are graded in place; a whole set's try becomes an evaluation; a document
added to a pool by hand is graded like any other."""

from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest

from rankscope.errors import ConfigError, ConflictError, NotFoundError, OptionError
from search.engine_server import Reply


def _by_hand(world, tmp_name: str, title: float, query_ids: list[str]) -> dict[str, list[str]]:
    """The changed endpoint written as a file by hand and snapshotted apart: the reference."""
    from rankscope.search.config import load_endpoint, open_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.snapshots import take_snapshot

    text = (world.data / "baseline.toml").read_text()
    text = re.sub(r"(?m)^weights = .*$", f"weights = {{ title = {title}, text = 1.0 }}", text)
    text = re.sub(r"(?m)^index = .*$", f'index = "{tmp_name}.index.sqlite"', text)
    path = world.data / f"{tmp_name}.toml"
    path.write_text(text)
    queries = [q for q in read_queries(str(world.data / "queries.tsv"))
               if q.query_id in query_ids]

    async def take():
        endpoint = open_endpoint(load_endpoint(path))
        try:
            return await take_snapshot(endpoint, queries, depth=5)
        finally:
            await endpoint.aclose()

    return {r.query.query_id: [h.doc_id for h in r.hits] for r in asyncio.run(take()).responses}


def _snapshot_docs(store, snapshot_id: int) -> dict[str, list[str]]:
    """Each query's documents of a snapshot of the app's store, read from its rows."""
    from rankscope.services.snapshot_hits import run_lines_of

    with store.read() as session:
        _, hits = run_lines_of(session, snapshot_id, "x")
    out: dict[str, list[str]] = {}
    for q, d in hits.sort("query_id", "rank").select("query_id", "doc_id").iter_rows():
        out.setdefault(q, []).append(d)
    return out


def test_a_try_of_one_query_is_the_changed_file_and_is_numbered(store, world):
    from rankscope.services import catalog, tries

    before = catalog.get_endpoint(store, world.curator, world.endpoint.id)
    first = tries.run_try(store, world.curator, world.evaluation.id, ["weights.title=8"],
                          boundary=world.boundary, query_id="q01")
    second = tries.run_try(store, world.curator, world.evaluation.id,
                           ['tokenizer="porter unicode61"'], boundary=world.boundary,
                           query_id="q02")
    assert (first.number, second.number) == (1, 2)
    assert first.status == "done" and first.scope == "query" and first.query_id == "q01"
    assert first.changes == [["weights.title", 8]]
    assert second.described == 'tokenizer="porter unicode61"'
    shown = tries.side_by_side(store, world.curator, world.evaluation.id, 1)
    [query] = shown["queries"]
    got = [r["b"]["doc_id"] for r in query["rows"] if r["b"]]
    assert got == _by_hand(world, "hand-title-8", 8.0, ["q01"])["q01"]
    # the endpoint is never changed; the tries are listed newest first with their settings
    after = catalog.get_endpoint(store, world.curator, world.endpoint.id)
    assert (after.toml, after.config_hash) == (before.toml, before.config_hash)
    listed = tries.list_tries(store, world.curator, world.evaluation.id)
    assert [(t.number, t.changes) for t in listed] == [
        (2, [["tokenizer", "porter unicode61"]]), (1, [["weights.title", 8]])]


def test_the_new_results_of_a_try_are_graded_in_place(store, world):
    from rankscope.services import assignment, grading, tries

    tries.run_try(store, world.curator, world.evaluation.id, ["weights.title=8"],
                  boundary=world.boundary)
    shown = tries.side_by_side(store, world.curator, world.evaluation.id, 1)
    rows = [(q["query_id"], r["b"]) for q in shown["queries"] for r in q["rows"] if r["b"]]
    assert rows and all(b["task_id"] is not None for _, b in rows)
    new = [(q, b) for q, b in rows if b["move"] == "new"]
    if not new:
        pytest.skip("the stand-in collection's order did not change at title 8")
    query_id, hit = new[0]
    task = assignment.task_view(store, world.judge, hit["task_id"])
    assert (task.query_id, task.doc_id, task.origin) == (query_id, hit["doc_id"], "try")
    assert task.title == hit["title"]  # what the try returned, kept for the grader
    grading.submit_grade(store, world.judge, grading.GradeInput(hit["task_id"], 2))
    again = tries.side_by_side(store, world.curator, world.evaluation.id, 1, query_id)
    row = next(r for r in again["queries"][0]["rows"]
               if r["b"] and r["b"]["doc_id"] == hit["doc_id"])
    assert row["b"]["task_id"] == hit["task_id"]


def test_a_whole_set_try_becomes_an_evaluation_in_one_step(store, world):
    from rankscope.services import campaigns, catalog, tries

    made = tries.run_try(store, world.curator, world.evaluation.id, ["weights.title=8"],
                         boundary=world.boundary)
    assert made.scope == "all" and made.snapshot_id is not None
    ids = [line.split("\t")[0] for line in
           (world.data / "queries.tsv").read_text().splitlines()[1:]]
    want = _by_hand(world, "hand-all", 8.0, ids)
    got = _snapshot_docs(store, made.snapshot_id)
    assert got == {q: d for q, d in want.items() if d}
    new_id = tries.make_evaluation(store, world.curator, world.evaluation.id, 1,
                                   boundary=world.boundary)
    ev = campaigns.get_evaluation(store, world.curator, new_id)
    assert ev.status == "ready"
    assert tries.list_tries(store, world.curator, world.evaluation.id)[0].made_evaluation_id \
        == new_id
    ep = catalog.get_endpoint(store, world.curator, ev.endpoint_id)
    assert ep.id != world.endpoint.id and "title = 8" in ep.toml
    with pytest.raises(ConflictError, match="already"):
        tries.make_evaluation(store, world.curator, world.evaluation.id, 1,
                              boundary=world.boundary)
    tries.run_try(store, world.curator, world.evaluation.id, ["weights.title=2"],
                  boundary=world.boundary, query_id="q01")
    with pytest.raises(ConflictError, match="one query"):
        tries.make_evaluation(store, world.curator, world.evaluation.id, 2,
                              boundary=world.boundary)


@pytest.mark.parametrize("change, error, said", [
    (["wieghts.title=2"], ConfigError, "weights"),
    (["weights.title=1,2"], OptionError, "one value per key"),
    (['corpus="/etc/passwd"'], Exception, "files directory"),
    (["k1=1", "k1=2"], OptionError, "twice"),
])
def test_a_change_the_boundary_or_the_file_refuses_records_nothing(store, world, change, error,
                                                                   said):
    from rankscope.services import tries

    with pytest.raises(error, match=said):
        tries.run_try(store, world.curator, world.evaluation.id, change,
                      boundary=world.boundary, query_id="q01")
    assert tries.list_tries(store, world.curator, world.evaluation.id) == []


def test_only_a_curator_of_the_project_tries(store, world):
    from rankscope.errors import ForbiddenError
    from rankscope.services import tries

    with pytest.raises((ForbiddenError, NotFoundError)):
        tries.run_try(store, world.judge, world.evaluation.id, ["weights.title=2"],
                      boundary=world.boundary)
    with pytest.raises(NotFoundError):
        tries.run_try(store, world.outsider, world.evaluation.id, ["weights.title=2"],
                      boundary=world.boundary)
    with pytest.raises(NotFoundError, match="q99"):
        tries.run_try(store, world.curator, world.evaluation.id, [],
                      boundary=world.boundary, query_id="q99")


def test_a_document_added_by_hand_is_graded_like_any_other(store, world):
    from rankscope.services import assignment, grading, pool

    task_id = pool.add_to_pool(store, world.curator, world.evaluation.id, "q01",
                               "time.sleep", title="time.sleep(secs)",
                               url="https://docs.python.org/3/library/shutil.html")
    task = assignment.task_view(store, world.judge, task_id)
    assert (task.query_id, task.doc_id, task.origin, task.title) == (
        "q01", "time.sleep", "hand", "time.sleep(secs)")
    done = grading.submit_grade(store, world.judge, grading.GradeInput(task_id, 3))
    assert done["task_id"] == task_id
    with pytest.raises(ConflictError, match="already"):
        pool.add_to_pool(store, world.curator, world.evaluation.id, "q01", "time.sleep")
    with pytest.raises(OptionError, match="http"):
        pool.add_to_pool(store, world.curator, world.evaluation.id, "q01", "x",
                         url="javascript:alert(1)")
    with pytest.raises(NotFoundError):
        pool.add_to_pool(store, world.curator, world.evaluation.id, "q99", "x")


def test_a_remote_try_keeps_the_operators_hosts_and_variables(store, world, engine,
                                                              monkeypatch):
    """A try of an Elasticsearch endpoint: the host and the environment variables its changes
    name are checked by the server's boundary as a saved endpoint's are; what is allowed runs,
    and sends the changed value."""
    from rankscope.errors import RankscopeError
    from rankscope.services import campaign_runs, campaigns, catalog, tries
    from search.engine_server import Reply

    from .conftest import boundary_for
    from .trust import es_toml

    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    engine.route("GET", "/", Reply("es8_root.json"))
    boundary = boundary_for(world.data, hosts=["127.0.0.1"], env=["RS_TEST_ALLOWED"])
    text = es_toml(engine.url, name="shop", template="'{\"query\": {\"match\": {\"title\": "
                   "\"{{query}}\"}}, \"min_score\": \"{{floor}}\"}'",
                   variables="{ floor = 0 }")
    ep = catalog.save_endpoint(store, world.curator, world.project.id, text, boundary=boundary)
    ev = campaigns.create_evaluation(store, world.curator, world.project.id,
                                       campaigns.EvaluationSpec(
                                           name="es", query_set_id=world.query_set.id,
                                           endpoint_id=ep.id, depth=3))
    campaign_runs.run_evaluation(store, world.curator, ev.id, boundary=boundary)
    before = len(engine.seen("/products/_search"))
    for change, said in (('url="http://10.1.2.3:9200"', "10.1.2.3"),
                         ('url="http://169.254.169.254"', "169.254.169.254"),
                         ('headers_env.X-Key="HOME"', "HOME")):
        with pytest.raises(RankscopeError, match=said):
            tries.run_try(store, world.curator, ev.id, [change], boundary=boundary,
                          query_id="q01")
    assert tries.list_tries(store, world.curator, ev.id) == []
    assert len(engine.seen("/products/_search")) == before  # nothing was sent
    monkeypatch.setenv("RS_TEST_ALLOWED", "k-123")
    made = tries.run_try(store, world.curator, ev.id,
                         ["floor=0.5", 'headers_env.X-Key="RS_TEST_ALLOWED"'],
                         boundary=boundary, query_id="q01")
    assert made.status == "done", made.error
    sent = engine.seen("/products/_search")[before:]
    assert sent and all(s.body["min_score"] == 0.5 for s in sent)
    assert all({k.lower(): v for k, v in s.headers.items()}["x-key"] == "k-123" for s in sent)


def test_a_try_a_stopped_server_left_running_is_marked_failed(store, world):
    from rankscope.services import tries

    started = tries.start_try(store, world.curator, world.evaluation.id, ["weights.title=3"],
                              boundary=world.boundary, query_id="q01")
    assert started.view.status == "running" and started.view.number == 1
    assert tries.recover_interrupted_tries(store) == [(world.evaluation.id, 1)]
    [kept] = tries.list_tries(store, world.curator, world.evaluation.id)
    assert kept.status == "failed" and "server stopped" in kept.error
    assert tries.recover_interrupted_tries(store) == []


def _release_at(engine, in_flight: int, seconds: float = 10.0) -> threading.Thread:
    """Hold the engine's answers until ``in_flight`` requests wait at once (or ``seconds``
    pass), so the most in flight is what the sender allows, not how fast the server is."""
    gate = threading.Event()
    engine.route("POST", "/products/_search", Reply("es8_search.json", hold=gate))

    def watch() -> None:
        deadline = time.monotonic() + seconds
        while engine.in_flight < in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        gate.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


@pytest.mark.parametrize(("asked", "cap", "expected"), [(5, 16, 5), (8, 6, 6)])
def test_the_app_sends_as_many_queries_at_once_as_the_file_says_within_the_servers_cap(
        store, world, engine, asked, cap, expected):
    """An evaluation's run and a whole set's try send ``concurrency`` queries at once (the
    file's), at most the server's ``max_in_flight``: 8 queries, so 5 of ``concurrency = 5``
    and 6 of ``concurrency = 8`` under a cap of 6 (both were 4, whatever the file said)."""
    import dataclasses

    from rankscope.services import campaign_runs, campaigns, catalog, tries

    from .conftest import boundary_for
    from .trust import es_toml

    engine.route("GET", "/", Reply("es8_root.json"))
    boundary = dataclasses.replace(boundary_for(world.data, hosts=["127.0.0.1"]),
                                   max_in_flight=cap)
    ep = catalog.save_endpoint(store, world.curator, world.project.id,
                               es_toml(engine.url, name="shop", concurrency=str(asked)),
                               boundary=boundary)
    ev = campaigns.create_evaluation(store, world.curator, world.project.id,
                                     campaigns.EvaluationSpec(
                                         name="es", query_set_id=world.query_set.id,
                                         endpoint_id=ep.id, depth=3))
    watcher = _release_at(engine, expected)
    campaign_runs.run_evaluation(store, world.curator, ev.id, boundary=boundary)
    watcher.join()
    assert engine.max_in_flight == expected
    engine.max_in_flight = 0
    watcher = _release_at(engine, expected)
    made = tries.run_try(store, world.curator, ev.id, ["timeout=9"], boundary=boundary)
    watcher.join()
    assert made.status == "done", made.error
    assert engine.max_in_flight == expected
