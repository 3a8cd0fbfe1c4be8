"""Issue 26 §4 in a real browser (Debian's Chromium through Playwright, never a download):
a run's progress and its switch to ready without a reload by the user; a grade sent after
signing out in another tab; every page at 375 px; the guidelines drawer and the keys
overlay. What the server stores is checked over HTTP in ``test_grader_day.py``."""

from __future__ import annotations

import json
import re
import threading

import pytest
from tests.search.engine_server import EngineServer, Reply

from rankscope.services import assignment, campaign_runs, campaigns, catalog, sessions

from .browser_harness import browser_page, require_browser, sign_in
from .conftest import PASSWORD, boundary_for, make_world
from .test_serve import free_port, start_server, stop

GUIDELINES = """# How to grade

| Grade | When | Example |
|-------|------|---------|
| perfect | the result answers the query completely and precisely | the exact function |
| poor | the result is about something else entirely | an unrelated module |
"""


def _prepared(tmp_path, collection, server: EngineServer | None = None):
    """A database with the usual world, a second evaluation comparing to the first, and
    (given a fake engine) a draft evaluation over it; the ids the tests need."""
    from rankscope.app.server import open_app_store

    db = str(tmp_path / "day.sqlite")
    store = open_app_store(db)
    try:
        w = make_world(store, collection, grades_wanted=1, metrics=("nDCG@5", "P@5"))
        campaigns.update_evaluation(store, w.curator, w.evaluation.id,
                                    campaigns.EvaluationSettingsSpec(guidelines=GUIDELINES))
        second = campaigns.create_evaluation(store, w.curator, w.project.id,
                                               campaigns.EvaluationSpec(
                                                   name="tuned", query_set_id=w.query_set.id,
                                                   endpoint_id=w.tuned.id, grades_wanted=1,
                                                   metrics=["nDCG@5", "P@5"], depth=5,
                                                   baseline_id=w.evaluation.id))
        campaign_runs.run_evaluation(store, w.curator, second.id, boundary=w.boundary)
        draft = None
        if server is not None:
            toml = (f'kind = "http"\nname = "slow"\nurl = "{server.url}/search"\n'
                    'params = { q = "{{query}}" }\nhits = "results[*]"\n'
                    'score_field = "score"\ntitle_field = "name"\nconcurrency = 1\n')
            ep = catalog.save_endpoint(store, w.curator, w.project.id, toml,
                                       boundary=boundary_for(collection, hosts=["127.0.0.1"]))
            draft = campaigns.create_evaluation(store, w.curator, w.project.id,
                                                  campaigns.EvaluationSpec(
                                                      name="slow engine",
                                                      query_set_id=w.query_set.id,
                                                      endpoint_id=ep.id, depth=3))
    finally:
        store.close()
    return db, w, second, draft


@pytest.fixture
def browser_ready():
    require_browser()


def _answer(n: int) -> Reply:
    hits = [{"id": f"doc{n}-{i}", "score": 10.0 - i, "name": f"result {i}"} for i in range(3)]
    return Reply(json.dumps({"results": hits}))


@pytest.mark.slow
def test_a_run_shows_its_progress_and_turns_ready_by_itself(browser_ready, tmp_path,
                                                             collection):
    server = EngineServer()
    held = threading.Event()
    # three queries answered, the fourth held until the test has seen the progress
    server.route("GET", "/search", _answer(1), _answer(2), _answer(3),
                 Reply(_answer(4).body, hold=held), _answer(5))
    process = None
    try:
        db, w, _, draft = _prepared(tmp_path, collection, server)
        port = free_port()
        process = start_server(db, collection, port, "--allow-hosts", "127.0.0.1")
        with browser_page(f"http://127.0.0.1:{port}") as page:
            sign_in(page, w.curator.name, PASSWORD)
            page.goto(f"/evaluations/{draft.id}")
            assert page.locator("#status").inner_text().strip() == "draft"
            page.get_by_role("button", name="Run (take the snapshot)").click()
            # the page polls: "running: 3 of 8 queries answered" shows without a reload
            page.wait_for_function(
                "() => document.querySelector('#status') && document.querySelector('#status')"
                ".textContent.includes('3 of 8 queries answered')")
            assert page.locator("#status progress").get_attribute("value") == "3"
            assert page.locator("#start-grading").count() == 0
            held.set()
            # then the page turns ready by itself: the status and the grading button
            page.wait_for_selector("#start-grading", timeout=30_000)
            assert page.locator("#status").inner_text().strip() == "ready"
            assert page.locator("#status[hx-get]").count() == 0  # the polling has stopped
    finally:
        held.set()
        if process is not None:
            stop(process)
        server.close()


@pytest.fixture
def served(browser_ready, tmp_path, collection):
    db, w, second, _ = _prepared(tmp_path, collection)
    port = free_port()
    process = start_server(db, collection, port)
    try:
        yield w, second, f"http://127.0.0.1:{port}", db
    finally:
        stop(process)


def _my_grade(db: str, who, task_id: int):
    from rankscope.app.server import open_app_store

    store = open_app_store(db)
    try:
        return assignment.task_view(store, who, task_id, hold=False).my_grade
    finally:
        store.close()


@pytest.mark.slow
def test_a_grade_sent_after_signing_out_elsewhere_is_kept_and_comes_back(served):
    w, _, base, db = served
    ev = w.evaluation.id
    with browser_page(base) as page:
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/grade")
        task_id = int(page.locator("#task").get_attribute("data-task"))
        other = page.context.new_page()  # another tab: sign out there
        other.goto("/account")
        other.get_by_role("button", name="Sign out").click()
        other.wait_for_url("**/login")
        other.close()
        page.bring_to_front()
        page.keyboard.press("2")  # a grade, sent after the session ended
        page.wait_for_url(re.compile(r".*/login\?next=.*"))
        assert "not saved" in page.locator("#not-saved").inner_text()
        assert _my_grade(db, w.judge, task_id) is None
        page.fill("input[name=name]", w.judge.name)
        page.fill("input[name=password]", PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf".*/tasks/{task_id}\?unsaved=2.*"))
        assert page.locator("#task").get_attribute("data-task") == str(task_id)
        assert "Not saved" in page.locator("#saved").inner_text()
        kept = page.locator("button.grade[data-kept='true']")
        assert kept.count() == 1 and kept.get_attribute("value") == "2"
        page.keyboard.press("2")  # sent again: saved this time
        page.wait_for_function("() => document.querySelector('#saved').textContent"
                               ".startsWith('Saved 2 good')")
    assert _my_grade(db, w.judge, task_id)["value"] == 2


WIDTH = "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"


@pytest.mark.slow
def test_every_page_fits_a_phone_and_grading_needs_no_scrolling(served):
    w, second, base, _ = served
    with browser_page(base) as page:
        page.set_viewport_size({"width": 375, "height": 667})
        sign_in(page, w.curator.name, PASSWORD)
        for path in (f"/projects/{w.project.id}", f"/evaluations/{second.id}/compare",
                     f"/evaluations/{w.evaluation.id}/agreement",
                     f"/evaluations/{w.evaluation.id}/metrics",
                     f"/evaluations/{w.evaluation.id}", f"/evaluations/{w.evaluation.id}/grade",
                     f"/evaluations/{w.evaluation.id}/coverage",
                     f"/evaluations/{w.evaluation.id}/disagreements",
                     f"/evaluations/{w.evaluation.id}/history",
                     f"/evaluations/{w.evaluation.id}/llm",
                     f"/evaluations/{w.evaluation.id}/queries/q01",
                     f"/projects/{w.project.id}/evaluations/new",
                     f"/query-sets/{w.query_set.id}", f"/endpoints/{w.endpoint.id}",
                     "/projects", "/account", "/api/docs"):
            page.goto(path)
            width, viewport = page.evaluate(f"[{WIDTH}, window.innerWidth]")
            assert width <= viewport, f"{path} is {width} px wide at {viewport} px"
    with browser_page(base) as page:
        page.set_viewport_size({"width": 375, "height": 667})
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/projects/{w.project.id}")
        grade = page.locator(f"tr[data-evaluation='{w.evaluation.id}'] a", has_text="Grade")
        box = grade.bounding_box()  # the judge's Grade link is on the screen
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
        page.goto(f"/evaluations/{w.evaluation.id}/grade")
        assert page.evaluate(f"{WIDTH} <= window.innerWidth")
        height = page.evaluate("window.innerHeight")
        assert page.evaluate("window.scrollY") == 0
        title = page.locator("#doc-title").bounding_box()
        assert title is not None and title["y"] + title["height"] <= height
        buttons = page.locator("button.grade")
        assert buttons.count() == 4
        for i in range(buttons.count()):
            b = buttons.nth(i).bounding_box()
            assert b is not None and b["y"] >= 0 and b["y"] + b["height"] <= height, (i, b)
            assert b["x"] >= 0 and b["x"] + b["width"] <= 375


# every cell's words on as few lines as it has words: a word broken letter by letter makes
# more lines than words (the squeezed table of the issue: columns one or two letters wide)
BROKEN_CELLS = """sel => Array.from(document.querySelectorAll(sel)).map(cell => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const tops = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) { if (r.width > 0) { tops.push(r.top); } }
  }
  tops.sort((a, b) => a - b);
  let lines = 0, last = -1e9;
  for (const top of tops) { if (top - last > 8) { lines += 1; last = top; } }
  const words = cell.textContent.trim().split(/\\s+/).filter(Boolean).length;
  return {text: cell.textContent.trim(), lines: lines, words: words,
          width: cell.getBoundingClientRect().width};
}).filter(c => c.words > 0 && c.lines > c.words)"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 375])
def test_guidelines_drawer_is_readable_and_names_the_scales_labels(served, width):
    w, _, base, _ = served
    with browser_page(base) as page:
        page.set_viewport_size({"width": width, "height": 800})
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/evaluations/{w.evaluation.id}/grade")
        page.keyboard.press("g")
        page.wait_for_selector("#guide:not([hidden])")
        cells = "#guide td, #guide th"
        assert page.locator(cells).count() >= 4 * 3 + 3 * 3  # the scale's and the text's
        assert page.evaluate(BROKEN_CELLS, cells) == []
        scale = page.locator("#guide-scale tbody tr")
        assert [scale.nth(i).inner_text().split() for i in range(scale.count())] == [
            ["0", "0", "poor"], ["1", "1", "fair"], ["2", "2", "good"], ["3", "3", "perfect"]]
        page.keyboard.press("g")
        page.keyboard.press("h")  # the keys overlay names the same labels
        overlay = page.locator("#help")
        overlay.wait_for(state="visible")
        text = overlay.inner_text()
        for pair in ("0 = poor", "1 = fair", "2 = good", "3 = perfect"):
            assert pair in text
        labels = [page.locator("button.grade .gl").nth(i).inner_text() for i in range(4)]
        assert labels == ["poor", "fair", "good", "perfect"]


def test_prepared_world_has_the_judge_as_a_member(tmp_path, collection):
    """The browser tests' world: the judge grades in the project (else nothing to show)."""
    from rankscope.app.server import open_app_store

    db, w, second, _ = _prepared(tmp_path, collection)
    store = open_app_store(db)
    try:
        assert sessions.authenticate(store, w.judge.name, PASSWORD).name == w.judge.name
        assert second.baseline_id == w.evaluation.id
        assert assignment.next_task(store, w.judge, w.evaluation.id) is not None
    finally:
        store.close()
