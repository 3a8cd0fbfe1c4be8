"""Why a result is there in an evaluation's own snapshot (its ``explain`` setting), and any two
snapshots of a project side by side (services/side_views.py), as services and over HTTP.

The references are made apart: the explanations by snapshotting the endpoint file with
``explain`` outside the app (what ``rankscope snapshot --explain`` does), the moves from each
snapshot's own rows ranked by hand."""

from __future__ import annotations

import asyncio
import html
import json
import re

import pytest

from rankscope.errors import ConflictError, ForbiddenError, NotFoundError, OptionError

from .conftest import boundary_for, signed_in
from .test_tries import _snapshot_docs
from .trust import app_for


def _explained_apart(world, depth: int = 5) -> dict[tuple[str, str], object]:
    """Each (query, doc)'s explanation from the endpoint file snapshotted with explain,
    outside the app, as JSON reads it back."""
    from rankscope.search.config import load_endpoint, open_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.snapshots import take_snapshot

    queries = read_queries(str(world.data / "queries.tsv"))

    async def take():
        endpoint = open_endpoint(load_endpoint(world.data / "baseline.toml"), explain=True)
        try:
            return await take_snapshot(endpoint, queries, depth=depth)
        finally:
            await endpoint.aclose()

    return {(r.query.query_id, h.doc_id): json.loads(json.dumps(h.explanation))
            for r in asyncio.run(take()).responses for h in r.hits}


def _explaining(store, world, name: str = "explained"):
    """An evaluation of the world's endpoint with ``explain``, run."""
    from rankscope.services import campaign_runs, campaigns

    made = campaigns.create_evaluation(store, world.curator, world.project.id,
                                       campaigns.EvaluationSpec(
                                           name=name, query_set_id=world.query_set.id,
                                           endpoint_id=world.endpoint.id, depth=5,
                                           metrics=["nDCG@5"], explain=True))
    run = campaign_runs.run_evaluation(store, world.curator, made.id, boundary=world.boundary)
    return made, run


def _http_endpoint(store, world):
    """An endpoint of the http kind (it cannot explain); nothing is ever sent to it."""
    from rankscope.services import catalog

    toml = ('kind = "http"\nname = "plain"\nurl = "http://127.0.0.1:9/search"\n'
            'params = { q = "{{query}}" }\nhits = "results[*]"\n')
    return catalog.save_endpoint(store, world.curator, world.project.id, toml,
                                 boundary=boundary_for(world.data, hosts=["127.0.0.1"]))


# --- 1. an evaluation's own snapshot records why each result is there ---------------------


def test_an_evaluation_with_explain_records_the_engines_explanation_of_each_result(store,
                                                                                  world):
    from rankscope.services import dashboards
    from rankscope.services.side_views import explanations_of

    made, run = _explaining(store, world)
    assert made.explain is True
    want = _explained_apart(world)
    with store.read() as session:
        got = explanations_of(session, run["snapshot_id"])
    assert got and set(got) == set(want)  # every hit explained, none more
    assert all(got[k] == want[k] for k in want)
    # the drill-down shows them per hit, and says nothing is missing
    drill = dashboards.drill_down(store, world.curator, made.id, "q01")
    assert drill["hits"] and all(h["why"] == want[("q01", h["doc_id"])] for h in drill["hits"])
    # the world's evaluation was run without: no explanation, and the drill-down says why
    plain = dashboards.drill_down(store, world.curator, world.evaluation.id, "q01")
    assert all(h["why"] is None for h in plain["hits"])
    assert "without explain" in plain["why_missing"]


def test_explain_is_refused_for_an_endpoint_that_cannot_explain(store, world):
    from rankscope.services import campaigns

    ep = _http_endpoint(store, world)
    with pytest.raises(OptionError, match=r"cannot say why a result is there.*\(http\)|http"):
        campaigns.create_evaluation(store, world.curator, world.project.id,
                                    campaigns.EvaluationSpec(
                                        name="no", query_set_id=world.query_set.id,
                                        endpoint_id=ep.id, explain=True))
    assert [e.name for e in campaigns.list_evaluations(store, world.curator,
                                                       world.project.id)] == ["first"]
    with pytest.raises(OptionError, match="true or false"):
        campaigns.create_evaluation(store, world.curator, world.project.id,
                                    campaigns.EvaluationSpec(
                                        name="no", query_set_id=world.query_set.id,
                                        endpoint_id=world.endpoint.id,
                                        explain="yes"))  # type: ignore[arg-type]
    # without explain the same endpoint makes an evaluation
    kept = campaigns.create_evaluation(store, world.curator, world.project.id,
                                       campaigns.EvaluationSpec(
                                           name="plain", query_set_id=world.query_set.id,
                                           endpoint_id=ep.id))
    assert kept.explain is False


def test_side_by_side_views_show_each_sides_explanations(store, world):
    from rankscope.services import comparison, tries

    made, _ = _explaining(store, world)
    want = _explained_apart(world)
    # this evaluation (B, explained) against the world's (A, run without explain)
    found = comparison.side_by_side(store, world.curator, made.id, world.evaluation.id)
    b_rows = [(q["query_id"], r["b"]) for q in found["queries"] for r in q["rows"] if r["b"]]
    assert b_rows and all(b["explanation"] == want[(q, b["doc_id"])] for q, b in b_rows)
    assert all(r["a"]["explanation"] is None
               for q in found["queries"] for r in q["rows"] if r["a"])
    assert "without explain" in found["why"]["a"] and found["why"]["b"] == \
        "no explanation recorded"
    # turned round: A is the explained one
    back = comparison.side_by_side(store, world.curator, world.evaluation.id, made.id)
    a_rows = [(q["query_id"], r["a"]) for q in back["queries"] for r in q["rows"] if r["a"]]
    assert a_rows and all(a["explanation"] == want[(q, a["doc_id"])] for q, a in a_rows)
    # a try of the explained evaluation: its snapshot's side (A) is explained now too
    tries.run_try(store, world.curator, made.id, ["weights.title=1"], boundary=world.boundary,
                  query_id="q01")
    shown = tries.side_by_side(store, world.curator, made.id, 1)
    [query] = shown["queries"]
    assert all(r["a"]["explanation"] == want[("q01", r["a"]["doc_id"])]
               for r in query["rows"] if r["a"])
    # the try's own results: the same file at title 1 explains each result the same way
    assert all(r["b"]["explanation"] == want[("q01", r["b"]["doc_id"])]
               for r in query["rows"] if r["b"])


def test_the_explain_setting_over_http_and_the_pages_that_show_it(store, world):
    from rankscope.services import sessions

    app = app_for(store, world, world.boundary)
    cora = signed_in(app, world.curator.name)
    made = cora.post(f"/projects/{world.project.id}/evaluations", data={
        "name": "why", "query_set_id": world.query_set.id, "endpoint_id": world.endpoint.id,
        "metrics": "nDCG@5", "depth": 5, "explain": "1"})
    assert made.status_code == 303
    ev = int(made.headers["location"].rsplit("/", 1)[1])
    overview = html.unescape(cora.get(f"/evaluations/{ev}").text)
    assert "recorded: each result's explanation" in overview
    ep = _http_endpoint(store, world)
    refused = cora.post(f"/projects/{world.project.id}/evaluations", data={
        "name": "no", "query_set_id": world.query_set.id, "endpoint_id": ep.id, "explain": "1"})
    assert refused.status_code == 400 and "cannot say why" in html.unescape(refused.text)
    api = signed_in(app, world.curator.name)
    api.headers["Authorization"] = f"Bearer {sessions.create_token(store, world.curator.name)}"
    answer = api.post(f"/api/v1/projects/{world.project.id}/evaluations", json={
        "name": "no", "query_set_id": world.query_set.id, "endpoint_id": ep.id,
        "explain": True})
    assert answer.status_code == 400 and "cannot say why" in answer.json()["error"]
    assert api.post(f"/api/v1/projects/{world.project.id}/evaluations", json={
        "name": "no", "query_set_id": world.query_set.id, "endpoint_id": world.endpoint.id,
        "explain": "sometimes"}).status_code == 422
    from rankscope.services import campaign_runs

    campaign_runs.run_evaluation(store, world.curator, ev, boundary=world.boundary)
    # the drill-down: a "why" folded under each result; the world's says why there is none
    drill = cora.get(f"/evaluations/{ev}/snapshot/q01")
    n_hits = len(re.findall(r"<tr><td class=\"num\">", drill.text))
    assert drill.status_code == 200 and n_hits >= 1
    assert drill.text.count("<summary>why</summary>") == n_hits
    plain = html.unescape(cora.get(f"/evaluations/{world.evaluation.id}/snapshot/q01").text)
    assert "<summary>why</summary>" not in plain and "taken without explain" in plain
    # two evaluations side by side: B (this one) explained, per result
    side = cora.get(f"/evaluations/{ev}/side", params={"baseline": world.evaluation.id})
    rows = len(re.findall(r"data-row ", side.text))
    assert side.status_code == 200 and rows >= 1
    assert side.text.count("<summary>why</summary>") >= rows


# --- 2. any two snapshots of a project side by side --------------------------------------


def _two_tries(store, world):
    """Two tries of the whole set; returns their snapshot ids."""
    from rankscope.services import tries

    first = tries.run_try(store, world.curator, world.evaluation.id, ["weights.title=8"],
                          boundary=world.boundary)
    second = tries.run_try(store, world.curator, world.evaluation.id,
                           ['tokenizer="porter unicode61"'], boundary=world.boundary)
    assert first.status == second.status == "done", (first.error, second.error)
    return first.snapshot_id, second.snapshot_id


def _moves_by_hand(base: list[str], other: list[str]) -> list[str]:
    """B's moves against A, from the two lists: A's rank minus B's."""
    return ["new" if doc not in base else "same" if base.index(doc) == i
            else f"up {base.index(doc) - i}" if base.index(doc) > i
            else f"down {i - base.index(doc)}" for i, doc in enumerate(other)]


def test_the_projects_snapshots_are_listed_with_what_each_was_taken_for(store, world):
    from rankscope.services.side_views import project_snapshots

    one, two = _two_tries(store, world)
    listed = project_snapshots(store, world.curator, world.evaluation.id)
    by_id = {s["id"]: s for s in listed}
    assert set(by_id) == {world.run["snapshot_id"], one, two}  # not the other project's
    assert [s["id"] for s in listed] == sorted(by_id, reverse=True)
    assert by_id[world.run["snapshot_id"]]["of"] == f"evaluation #{world.evaluation.id} first"
    assert by_id[world.run["snapshot_id"]]["current"] is True
    assert by_id[one]["of"] == f"try #1 of evaluation #{world.evaluation.id} first"
    assert by_id[two]["of"] == f"try #2 of evaluation #{world.evaluation.id} first"
    with pytest.raises(NotFoundError):
        project_snapshots(store, world.outsider, world.evaluation.id)
    with pytest.raises(ForbiddenError):
        project_snapshots(store, world.judge, world.evaluation.id)


def test_two_tries_side_by_side_with_moves_grades_and_tasks(store, world):
    from rankscope.services import grading
    from rankscope.services.side_views import snapshots_side_by_side

    one, two = _two_tries(store, world)
    found = snapshots_side_by_side(store, world.curator, world.evaluation.id, one, two)
    a, b = _snapshot_docs(store, one), _snapshot_docs(store, two)
    assert found["warnings"] == []  # the same query set and depth
    assert {v["query_id"] for v in found["queries"]} >= set(a) | set(b)
    for view in found["queries"]:
        base, other = a.get(view["query_id"], []), b.get(view["query_id"], [])
        assert [r["a"]["doc_id"] for r in view["rows"] if r["a"]] == base
        assert [r["b"]["doc_id"] for r in view["rows"] if r["b"]] == other
        assert [r["b"]["move"] for r in view["rows"] if r["b"]] == _moves_by_hand(base, other)
        gone = {d for d in base if d not in other}
        assert {r["a"]["doc_id"] for r in view["rows"] if r["a"]
                and r["a"]["move"] == "gone"} == gone
        # every result of a try joined the evaluation's pool: each is graded in place
        assert all(r["b"]["task_id"] for r in view["rows"] if r["b"])
    assert found["a_of"].startswith("try #1") and found["b_of"].startswith("try #2")
    # a grade given on B's side is the grade both sides show for that document
    view = found["queries"][0]
    hit = next(r["b"] for r in view["rows"] if r["b"])
    grading.submit_grade(store, world.judge, grading.GradeInput(hit["task_id"], 2))
    again = snapshots_side_by_side(store, world.curator, world.evaluation.id, one, two)
    rows = next(v for v in again["queries"] if v["query_id"] == view["query_id"])["rows"]
    assert [r["b"]["grade"] for r in rows if r["b"] and r["b"]["doc_id"] == hit["doc_id"]] \
        == [2.0]
    assert all(r["a"]["grade"] == 2.0 for r in rows
               if r["a"] and r["a"]["doc_id"] == hit["doc_id"])


def test_a_snapshot_of_another_query_set_is_compared_on_what_both_have_without_grades(store,
                                                                                     world):
    from rankscope.services import campaign_runs, campaigns, catalog
    from rankscope.services.side_views import snapshots_side_by_side

    lines = (world.data / "queries.tsv").read_text().splitlines()
    few = catalog.import_query_set(store, world.curator, world.project.id, "few",
                                   "\n".join(lines[:4]) + "\n", source="few.tsv")
    small = campaigns.create_evaluation(store, world.curator, world.project.id,
                                        campaigns.EvaluationSpec(
                                            name="few", query_set_id=few.id,
                                            endpoint_id=world.tuned.id, depth=3))
    run = campaign_runs.run_evaluation(store, world.curator, small.id, boundary=world.boundary)
    found = snapshots_side_by_side(store, world.curator, world.evaluation.id,
                                   world.run["snapshot_id"], run["snapshot_id"])
    said = " | ".join(found["warnings"])
    # the depths and the query sets differ: compared at depth 3 on the 3 shared queries
    assert "depth 3" in said and "different queries" in said
    assert "compared at depth 3 on 3 queries" in said
    assert "shown without its grades" in said
    assert found["metric"] is None and len(found["queries"]) == 3
    assert all(len([r for r in v["rows"] if r["a"]]) <= 3 for v in found["queries"])
    assert all(r["b"].get("task_id") is None for v in found["queries"] for r in v["rows"]
               if r["b"])


def test_only_the_projects_snapshots_and_two_of_them(store, world):
    from rankscope.services import campaigns
    from rankscope.services.side_views import snapshots_side_by_side

    one, _ = _two_tries(store, world)
    theirs = campaigns.get_evaluation(store, world.outsider, world.other_evaluation.id)
    with pytest.raises(NotFoundError, match=f"no snapshot #{theirs.snapshot_id}"):
        snapshots_side_by_side(store, world.curator, world.evaluation.id, one,
                               theirs.snapshot_id)
    with pytest.raises(NotFoundError):
        snapshots_side_by_side(store, world.curator, world.evaluation.id, one, 99999)
    with pytest.raises(NotFoundError):  # the outsider cannot see this evaluation
        snapshots_side_by_side(store, world.outsider, world.evaluation.id, one, one + 1)
    with pytest.raises(NotFoundError):  # nor through their own evaluation
        snapshots_side_by_side(store, world.outsider, world.other_evaluation.id,
                               theirs.snapshot_id, one)
    with pytest.raises(ConflictError, match="two different"):
        snapshots_side_by_side(store, world.curator, world.evaluation.id, one, one)


def test_two_snapshots_side_by_side_over_http(store, world):
    from rankscope.services import campaigns, sessions
    from rankscope.services.side_views import snapshots_side_by_side

    one, two = _two_tries(store, world)
    app = app_for(store, world, world.boundary)
    cora = signed_in(app, world.curator.name)
    ev = world.evaluation.id
    form = cora.get(f"/evaluations/{ev}/snapshots/side")
    assert form.status_code == 200
    options = re.findall(r'<option value="(\d+)"', form.text)
    assert sorted(set(map(int, options))) == sorted({world.run["snapshot_id"], one, two})
    assert f"/evaluations/{ev}/snapshots/side" in cora.get(f"/evaluations/{ev}/compare").text
    page = cora.get(f"/evaluations/{ev}/snapshots/side", params={"a": one, "b": two})
    assert page.status_code == 200
    found = snapshots_side_by_side(store, world.curator, ev, one, two)
    first = found["queries"][0]
    assert f'data-query="{first["query_id"]}"' in page.text
    # B's results are grading rows (the digits grade them), n pages on with both snapshots
    assert len(re.findall(r"data-row ", page.text)) == len([r for r in first["rows"] if r["b"]])
    assert 'data-key="n"' in page.text and f"snapshots/side?a={one}&b={two}&q=" in page.text
    second = found["queries"][1]["query_id"]
    later = cora.get(f"/evaluations/{ev}/snapshots/side",
                     params={"a": one, "b": two, "q": second})
    assert f'data-query="{second}"' in later.text and 'data-key="p"' in later.text
    # the embedded engine explained the tries' results: a "why" per B result
    assert page.text.count("<summary>why</summary>") >= len(
        [r for r in first["rows"] if r["b"]])
    # another project's snapshot, a snapshot that is not there, bad ids: 4xx, never a 500
    theirs = campaigns.get_evaluation(store, world.outsider, world.other_evaluation.id)
    for params, status in (({"a": one, "b": theirs.snapshot_id}, 404),
                           ({"a": one, "b": 99999}, 404), ({"a": one, "b": one}, 409),
                           ({"a": "x", "b": two}, 422), ({"a": 0, "b": two}, 422)):
        assert cora.get(f"/evaluations/{ev}/snapshots/side", params=params).status_code \
            == status, params
    jay = signed_in(app, world.judge.name)
    assert jay.get(f"/evaluations/{ev}/snapshots/side").status_code == 403
    otto = signed_in(app, world.outsider.name)
    assert otto.get(f"/evaluations/{ev}/snapshots/side",
                    params={"a": one, "b": two}).status_code == 404
    assert otto.get(f"/evaluations/{world.other_evaluation.id}/snapshots/side",
                    params={"a": theirs.snapshot_id, "b": one}).status_code == 404
    # the same through the API
    api = signed_in(app, world.curator.name)
    api.headers["Authorization"] = f"Bearer {sessions.create_token(store, world.curator.name)}"
    listed = api.get(f"/api/v1/evaluations/{ev}/snapshots")
    assert listed.status_code == 200
    assert {s["id"] for s in listed.json()} == {world.run["snapshot_id"], one, two}
    got = api.get(f"/api/v1/evaluations/{ev}/snapshots/side", params={"a": one, "b": two})
    assert got.status_code == 200 and got.json()["queries"] == json.loads(
        json.dumps(found["queries"]))
    assert api.get(f"/api/v1/evaluations/{ev}/snapshots/side",
                   params={"a": one, "b": theirs.snapshot_id}).status_code == 404
