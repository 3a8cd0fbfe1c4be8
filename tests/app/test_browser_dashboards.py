"""A real browser on the curator's pages: the history chart and the comparison with a
baseline draw the expected number of points and bars, a disagreement is settled, and an
LLM judge (a scripted OpenAI-compatible server on 127.0.0.1) is attached and run."""

from __future__ import annotations

import pytest
from tests.llm_judge.conftest import Reply, ScriptedServer

from rankscope.services import (
    assignment,
    campaign_runs,
    campaigns,
    dashboards,
    grading,
    task_views,
)
from rankscope.services.grading import GradeInput

from .browser_harness import browser_page, require_browser, sign_in
from .conftest import PASSWORD, make_world
from .test_serve import free_port, start_server, stop

METRICS = ("nDCG@5", "P@5", "RR@5")


def _grade_all(store, who, evaluation_id: int) -> int:
    n = 0
    while (task := assignment.next_task(store, who, evaluation_id)) is not None:
        grading.submit_grade(store, who, GradeInput(task.task_id,
                                                    sum(map(ord, task.doc_id)) % 4))
        n += 1
    return n


@pytest.mark.slow
def test_history_comparison_adjudication_and_an_llm_judge(tmp_path, collection):
    require_browser()
    from rankscope.app.server import open_app_store

    db = str(tmp_path / "browser.sqlite")
    store = open_app_store(db)
    try:
        w = make_world(store, collection, grades_wanted=2, metrics=METRICS)
        ev = w.evaluation.id
        again = campaigns.create_evaluation(store, w.curator, w.project.id,
                                              campaigns.EvaluationSpec(
            name="again", query_set_id=w.query_set.id, endpoint_id=w.endpoint.id,
            grades_wanted=2, metrics=list(METRICS), depth=5, annotation="v2: same engine"))
        campaign_runs.run_evaluation(store, w.curator, again.id, boundary=w.boundary)
        tuned = campaigns.create_evaluation(store, w.curator, w.project.id,
                                              campaigns.EvaluationSpec(
            name="tuned", query_set_id=w.query_set.id, endpoint_id=w.tuned.id, grades_wanted=1,
            metrics=list(METRICS), depth=5, baseline_id=ev, annotation="tuned"))
        campaign_runs.run_evaluation(store, w.curator, tuned.id, boundary=w.boundary)
        results = _grade_all(store, w.judge, ev)
        _grade_all(store, w.judge, tuned.id)
        # one disagreement: a second judge grades one result differently, and says why
        task = assignment.next_task(store, w.judge2, ev)
        mine = assignment.task_view(store, w.judge, task.task_id, hold=False).my_grade
        other = (int(mine["value"]) + 2) % 4
        grading.submit_grade(store, w.judge2, GradeInput(
            task.task_id, other, explanation="the snippet answers it"))
        n_queries = len(task_views.query_ids(store, w.curator, ev))
    finally:
        store.close()

    llm = ScriptedServer()
    llm.script = lambda doc, n, body: Reply('{"grade": 1}')
    port = free_port()
    # the scripted LLM server is on 127.0.0.1: the app is told to allow that address
    server = start_server(db, collection, port, "--allow-hosts", "127.0.0.1")
    try:
        with browser_page(f"http://127.0.0.1:{port}") as page:
            sign_in(page, w.curator.name, PASSWORD)
            # history: two evaluations of the same query set and endpoint, three metrics
            page.goto(f"/evaluations/{ev}/history")
            assert page.locator("#history-chart svg circle.point").count() == 2 * len(METRICS)
            assert "v2: same engine" in page.locator("#history-chart").inner_text()
            # comparison: P@5 is defined for every query (all results graded): one bar each
            page.goto(f"/evaluations/{tuned.id}/compare?metric=P@5")
            assert page.locator("#delta-chart svg rect.delta").count() == n_queries

            # the disagreement queue: both grades, the explanation; settle at 1
            page.goto(f"/evaluations/{ev}/disagreements")
            card = page.locator("section.disagreement")
            assert card.count() == 1
            assert "the snippet answers it" in card.inner_text()
            card.locator("input[name=note]").fill("the guidelines: partly useful")
            card.get_by_role("button", name="Settle at 1").click()
            page.wait_for_selector("#no-disagreement")

            # an LLM judge: attach, run on the open tasks, watch it finish
            page.goto(f"/evaluations/{ev}/llm")
            page.get_by_label("Endpoint (the API base)").fill(llm.url)
            page.get_by_label("Model", exact=True).fill("tiny")
            page.get_by_role("button", name="Attach").click()
            page.get_by_role("button", name="Run on the open tasks").click()
            page.wait_for_selector("[data-status=done], [data-status=failed]", timeout=30_000)
            card = page.locator("section.judge")
            assert card.locator("[data-status=done]").count() == 1, card.inner_text()
            accepted = int(page.locator("[data-accepted]").get_attribute("data-accepted"))
            # every result still wants its second grade, but the settled one
            assert accepted == results - 1 == llm.count
            page.goto(f"/evaluations/{ev}/agreement")
            assert "llm:tiny" in page.locator("#llm-vs-people").inner_text()
            per_query = page.locator("#agreement-per-query tbody tr")
            assert per_query.count() == n_queries
            assert any(text.startswith(task.query_id) for text in per_query.all_inner_texts())
    finally:
        stop(server)
        llm.stop()
    store = open_app_store(db)
    try:
        drill = dashboards.drill_down(store, w.curator, ev, task.query_id)
        (hit,) = [h for h in drill["hits"] if h["doc_id"] == task.doc_id]
        assert hit["grade"] == 1.0  # the curator's settlement
    finally:
        store.close()
