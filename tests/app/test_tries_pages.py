"""The Tries pages over HTTP: thin over services/tries, every bad input a 4xx naming the
problem, only curators, explanations on demand, a document added to a pool by hand, a whole
set's try made an evaluation with one POST."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from .conftest import PASSWORD
from .trust import app_for


def _ended(client: TestClient, evaluation_id: int, number: int) -> None:
    """Wait until a try sent in the background has ended (bounded: 600 polls)."""
    import time

    for _ in range(600):
        answer = client.get(f"/evaluations/{evaluation_id}/tries/{number}/status")
        assert answer.status_code == 200
        if answer.headers.get("hx-refresh") == "true":
            return
        time.sleep(0.1)
    raise AssertionError(f"try #{number} did not end")


def _signed_in(app, name: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": name, "password": PASSWORD}).status_code == 303
    return client


def test_a_try_from_the_form_to_an_evaluation(store, world):
    app = app_for(store, world, world.boundary)
    cora = _signed_in(app, world.curator.name)
    ev = world.evaluation.id
    page = cora.get(f"/evaluations/{ev}/tries")
    assert page.status_code == 200 and "No try yet" in page.text
    sent = cora.post(f"/evaluations/{ev}/tries", data={"changes": "weights.title=8\n",
                                                        "query_id": "q01"})
    assert sent.status_code == 303 and sent.headers["location"].endswith("/tries/1")
    _ended(cora, ev, 1)
    shown = cora.get(f"/evaluations/{ev}/tries/1")
    assert shown.status_code == 200
    text = html.unescape(shown.text)
    assert "weights.title=8" in text and "query 1 of 1" in text
    # the embedded engine explains: a "why" per result of the try, folded until opened
    rows = len(re.findall(r"data-row ", shown.text))
    assert rows >= 1 and text.count("<summary>why</summary>") == rows
    # the whole set, then an evaluation in one POST; the history lists both tries
    assert cora.post(f"/evaluations/{ev}/tries", data={"changes": "weights.title=8"}
                     ).headers["location"].endswith("/tries/2")
    _ended(cora, ev, 2)
    assert "Make it an evaluation" in cora.get(f"/evaluations/{ev}/tries/2").text
    made = cora.post(f"/evaluations/{ev}/tries/2/evaluation")
    assert made.status_code == 303
    new_id = int(made.headers["location"].rsplit("/", 1)[1])
    assert new_id != ev and cora.get(made.headers["location"]).status_code == 200
    listed = html.unescape(cora.get(f"/evaluations/{ev}/tries").text)
    assert "#1" in listed and "#2" in listed and f"evaluation #{new_id}" in listed
    assert cora.post(f"/evaluations/{ev}/tries/2/evaluation").status_code == 409


def test_bad_input_is_a_4xx_and_only_curators_try(store, world):
    app = app_for(store, world, world.boundary)
    cora = _signed_in(app, world.curator.name)
    jay = _signed_in(app, world.judge.name)
    ev = world.evaluation.id
    assert jay.get(f"/evaluations/{ev}/tries").status_code == 403
    assert jay.post(f"/evaluations/{ev}/tries", data={"changes": "k1=1"}).status_code in (
        403, 404)
    for changes, said in (("wieghts.title=2", "weights"), ("k1=1,2", "one value per key"),
                          ('corpus="/etc/passwd"', "files directory")):
        answer = cora.post(f"/evaluations/{ev}/tries", data={"changes": changes,
                                                              "query_id": "q01"})
        assert 400 <= answer.status_code < 500 and said in html.unescape(answer.text), changes
    assert cora.post(f"/evaluations/{ev}/tries", data={"changes": "k1=1", "query_id": "q99"}
                     ).status_code == 404
    assert cora.get(f"/evaluations/{ev}/tries/7").status_code == 404
    bad = cora.post(f"/evaluations/{ev}/pool", data={"query_id": "q01", "doc_id": "x",
                                                     "url": "javascript:alert(1)"})
    assert bad.status_code == 400


def test_search_with_other_words_and_add_a_document_by_hand(store, world):
    app = app_for(store, world, world.boundary)
    cora = _signed_in(app, world.curator.name)
    ev = world.evaluation.id
    cora.post(f"/evaluations/{ev}/tries", data={"changes": "", "query_id": "q01"})
    _ended(cora, ev, 1)
    page = cora.get(f"/evaluations/{ev}/tries/1", params={"q": "q01", "words": "sleep"})
    assert page.status_code == 200
    found = re.findall(r'name="doc_id" value="([^"]+)"', page.text)
    assert "time.sleep" in found
    added = cora.post(f"/evaluations/{ev}/pool", data={
        "query_id": "q01", "doc_id": "time.sleep", "title": "time.sleep(secs)",
        "back": f"/evaluations/{ev}/tries/1?q=q01"})
    assert added.status_code == 303 and "Added%20time.sleep" in added.headers["location"]
    task = int(re.search(r"task%20%23(\d+)", added.headers["location"])[1])
    graded = cora.get(f"/tasks/{task}")
    assert graded.status_code == 200 and "added by hand" in graded.text
    again = cora.post(f"/evaluations/{ev}/pool", data={"query_id": "q01",
                                                       "doc_id": "time.sleep"})
    assert again.status_code == 409


def test_two_evaluations_side_by_side_a_query_at_a_time(store, world):
    from rankscope.services import campaign_runs, campaigns, comparison

    from .test_tries import _snapshot_docs

    tuned = campaigns.create_evaluation(store, world.curator, world.project.id,
                                          campaigns.EvaluationSpec(
                                              name="tuned", query_set_id=world.query_set.id,
                                              endpoint_id=world.tuned.id, depth=5))
    run = campaign_runs.run_evaluation(store, world.curator, tuned.id, boundary=world.boundary)
    found = comparison.side_by_side(store, world.curator, tuned.id, world.evaluation.id)
    a = _snapshot_docs(store, world.run["snapshot_id"])
    b = _snapshot_docs(store, run["snapshot_id"])
    assert {v["query_id"] for v in found["queries"]} >= set(a) | set(b)
    for view in found["queries"]:
        base, other = a.get(view["query_id"], []), b.get(view["query_id"], [])
        assert [r["b"]["doc_id"] for r in view["rows"] if r["b"]] == other
        for i, row in enumerate(r for r in view["rows"] if r["b"]):
            doc = row["b"]["doc_id"]
            # the move by hand: the baseline's rank against this one's
            want = ("new" if doc not in base else "same" if base.index(doc) == i
                    else f"up {base.index(doc) - i}" if base.index(doc) > i
                    else f"down {i - base.index(doc)}")
            assert row["b"]["move"] == want and row["b"]["task_id"] is not None
    app = app_for(store, world, world.boundary)
    cora = _signed_in(app, world.curator.name)
    page = cora.get(f"/evaluations/{tuned.id}/side", params={"baseline": world.evaluation.id})
    assert page.status_code == 200 and 'data-key="n"' in page.text
    first = found["queries"][0]
    assert f'data-query="{first["query_id"]}"' in page.text
    assert all(f'data-doc="{r["b"]["doc_id"]}"' in page.text for r in first["rows"] if r["b"])
    link = cora.get(f"/evaluations/{tuned.id}/compare", params={"baseline": world.evaluation.id})
    assert f"/evaluations/{tuned.id}/side?baseline={world.evaluation.id}" in link.text
    assert cora.get(f"/evaluations/{tuned.id}/side",
                    params={"baseline": world.other_evaluation.id}).status_code == 404


def test_the_api_runs_a_try_and_refuses_bad_changes_with_a_4xx(store, world):
    from rankscope.services import sessions

    app = app_for(store, world, world.boundary)
    api = TestClient(app, follow_redirects=False)
    api.headers["Authorization"] = f"Bearer {sessions.create_token(store, world.curator.name)}"
    ev = world.evaluation.id
    made = api.post(f"/api/v1/evaluations/{ev}/tries",
                    json={"changes": ["weights.title=8"], "query_id": "q01"})
    assert made.status_code == 201 and made.json()["number"] == 1
    assert made.json()["changes"] == [["weights.title", 8]]
    shown = api.get(f"/api/v1/evaluations/{ev}/tries/1").json()
    assert [q["query_id"] for q in shown["queries"]] == ["q01"]
    assert all(r["b"]["task_id"] for r in shown["queries"][0]["rows"] if r["b"])
    bad = api.post(f"/api/v1/evaluations/{ev}/tries", json={"changes": ["k1=1,2"]})
    assert bad.status_code == 400 and "one value per key" in bad.json()["error"]
    extra = api.post(f"/api/v1/evaluations/{ev}/tries", json={"changes": [], "boost": 2})
    assert extra.status_code == 422
    added = api.post(f"/api/v1/evaluations/{ev}/pool",
                     json={"query_id": "q02", "doc_id": "time.sleep"})
    assert added.status_code == 201 and added.json()["task_id"] >= 1
    assert [t["number"] for t in api.get(f"/api/v1/evaluations/{ev}/tries").json()] == [1]
