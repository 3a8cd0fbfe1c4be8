"""A real browser: sign in, grade one result with a digit key, see it counted."""

from __future__ import annotations

import pytest

from rankscope.services import dashboards

from .browser_harness import browser_page, require_browser, sign_in
from .conftest import PASSWORD, make_world
from .test_serve import free_port, start_server, stop


@pytest.mark.slow
def test_grade_one_result_with_a_digit_key(tmp_path, collection):
    require_browser()
    from rankscope.app.server import open_app_store

    db = str(tmp_path / "browser.sqlite")
    store = open_app_store(db)
    try:
        w = make_world(store, collection)
    finally:
        store.close()
    port = free_port()
    server = start_server(db, collection, port)
    try:
        with browser_page(f"http://127.0.0.1:{port}") as page:
            sign_in(page, w.judge.name, PASSWORD)
            page.goto(f"/evaluations/{w.evaluation.id}/grade")
            first = page.locator("#task").get_attribute("data-task")
            assert page.locator("#n-mine").inner_text() == "0"
            page.keyboard.press("3")
            page.wait_for_function(
                "t => !document.body.hasAttribute('aria-busy') && "  # the swap has settled
                "document.querySelector('#task') && "
                "document.querySelector('#task').dataset.task !== t", arg=first)
            assert page.locator("#n-mine").inner_text() == "1"
            page.keyboard.press("h")  # the list of keys
            assert page.locator("#help").is_visible()
    finally:
        stop(server)
    store = open_app_store(db)
    try:
        drill = dashboards.drill_down(store, w.curator, w.evaluation.id, "q01")
        graded = [h for h in drill["hits"] if h["n_grades"]]
        assert [(h["rank"], h["grade"]) for h in graded] == [(1, 3.0)]
    finally:
        store.close()
