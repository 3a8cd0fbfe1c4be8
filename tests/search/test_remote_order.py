"""Every remote kind keeps the engine's order, whatever its scores say (issue 32).

The recorded answers list hits in an order their scores do not give: a sort
by a field (scores rising and falling), equal scores, and no scores at all.
Each test takes a snapshot of one such answer into a store and checks the
order at every place it can be lost: the mapped hits, the stored ranks, the
TREC run a snapshot writes, the export of the stored snapshot and the
ranking a diff or check compares.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

import rankscope
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.types import QueryItem
from rankscope.services.snapshots import run_lines, take_snapshot, trec_lines

from .engine_server import EngineServer, Reply, recorded


def _es(kind: str, engine: EngineServer) -> tuple[dict[str, Any], str, str]:
    return ({"kind": kind, "url": engine.url, "index": "products"}, "POST",
            "/products/_search")


def _solr(engine: EngineServer) -> tuple[dict[str, Any], str, str]:
    return ({"kind": "solr", "url": f"{engine.url}/solr", "collection": "products"}, "GET",
            "/solr/products/select")


def _http(engine: EngineServer) -> tuple[dict[str, Any], str, str]:
    return ({"kind": "http", "url": f"{engine.url}/api", "params": {"q": "{{query}}"},
             "hits": "data.items[*]", "id_field": "sku", "score_field": "relevance"},
            "GET", "/api")


def _recorded_ids(body: str) -> list[str]:
    """The document ids of a recorded answer, in the order its file lists them."""
    data = json.loads(recorded(body))
    if "hits" in data:
        return [h["_id"] for h in data["hits"]["hits"]]
    if "response" in data:
        return [d["id"] for d in data["response"]["docs"]]
    return [item["sku"] for item in data["data"]["items"]]


CASES = [
    ("elasticsearch", "es8_sorted_by_field.json"),
    ("elasticsearch", "es8_equal_scores.json"),
    ("elasticsearch", "es8_no_scores.json"),
    ("opensearch", "opensearch2_sorted_by_field.json"),
    ("opensearch", "opensearch2_equal_scores.json"),
    ("opensearch", "opensearch2_no_scores.json"),
    ("solr", "solr9_sorted_by_field.json"),
    ("solr", "solr9_equal_scores.json"),
    ("solr", "solr9_no_scores.json"),
    ("http", "api_sorted_by_field.json"),
    ("http", "api_equal_scores.json"),
    ("http", "api_no_scores.json"),
]


@pytest.mark.parametrize("kind, body", CASES)
def test_a_snapshot_keeps_the_engines_order_not_the_scores(engine, tmp_path, kind, body):
    """Catches re-sorting hits by score anywhere between the answer and a metric.

    Mutation caught: re-sorting hits by score, in ``map_hits`` (the search
    layer), in the stored ranks, in the run writer's score column (the
    engine's tied or rising scores written as they are) or in the ranking a
    diff or check builds from the store. A stable sort by score alone changes
    the field-sorted answers; a sort by score that breaks ties by document id
    (either way, as evaluation tools do) changes every answer here.
    """
    from rankscope.services.snapshot_diff import ranking_from_store
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import snapshot_hits

    if kind == "solr":
        settings, method, path = _solr(engine)
    elif kind == "http":
        settings, method, path = _http(engine)
    else:
        settings, method, path = _es(kind, engine)
    engine.route(method, path, Reply(body))
    expected = _recorded_ids(body)
    store = open_store(tmp_path / "s.sqlite")
    try:
        async def go() -> Any:
            endpoint = open_endpoint(endpoint_from_dict(settings, source="order.toml"))
            try:
                return await take_snapshot(endpoint, [QueryItem("q1", "hiking")], depth=10,
                                           store=store, name="order")
            finally:
                await endpoint.aclose()

        outcome = asyncio.run(go())
        (response,) = outcome.responses
        assert [h.doc_id for h in response.hits] == expected  # the search layer
        stored = snapshot_hits(store, outcome.snapshot_id)
        assert [(h["rank"], h["doc_id"]) for h in stored] == list(enumerate(expected, 1))
        ranking = ranking_from_store(store, str(outcome.snapshot_id))
        ordered = ranking.ordered_run().frame.sort("score", descending=True)
        assert ordered.get_column("doc_id").to_list() == expected  # what diff and check score
        exported = trec_lines([("q1", [(h["doc_id"], h["score"]) for h in stored])], 10, "t")
    finally:
        store.close()
    lines = run_lines(outcome.responses, 10, "order")
    assert lines == [line.replace(" t\n", " order\n") for line in exported]
    run_file = tmp_path / "run.txt"
    run_file.write_text("".join(lines))
    # Scored by any tool (by score, its own tie rule): the engine's first document is at
    # rank 1 (P@1 = 1 when only it is relevant) and its last at rank n (RR = 1/n).
    first = rankscope.evaluate({"q1": {expected[0]: 1}}, str(run_file), "P@1")["P@1"]
    last = rankscope.evaluate({"q1": {expected[-1]: 1}}, str(run_file), "RR")["RR"]
    assert (first, last) == (1.0, pytest.approx(1 / len(expected)))


def test_the_recorded_answers_really_disagree_with_their_scores():
    """Each file's order differs from its scores' order (or it has none) and from id order.

    Otherwise a mutation re-sorting by score (ties by document id) could not be seen.
    """
    for _, body in CASES:
        data = json.loads(recorded(body))
        if "hits" in data:
            scores = [h["_score"] for h in data["hits"]["hits"]]
        elif "response" in data:
            scores = [d.get("score") for d in data["response"]["docs"]]
        else:
            scores = [item.get("relevance") for item in data["data"]["items"]]
        present = [s for s in scores if s is not None]
        tied = len(set(present)) < len(present)
        rising = any(a < b for a, b in itertools.pairwise(present))
        assert tied or rising or len(present) < len(scores), body
        ids = _recorded_ids(body)
        assert ids not in (sorted(ids), sorted(ids, reverse=True)), body
