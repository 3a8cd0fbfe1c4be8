"""A real browser, keyboard first: a curator runs a try of the whole query set, pages
through the queries side by side with the evaluation's snapshot, and grades one of the
try's new results with the keyboard; the grade is kept (seen again after a reload and in
the store). The pages are photographed for docs/tuning.md: into docs/images only when
RANKSCOPE_DOCS_IMAGES=1 is set (a test run leaves the repository as it found it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .browser_harness import browser_page, sign_in
from .conftest import PASSWORD
from .test_browser_grading import IDLE, served  # noqa: F401  (the served app, reused)

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def _pictures(tmp_path: Path) -> Path:
    """Where the pictures go: the guide's directory when asked for, else the test's own."""
    return IMAGES if os.environ.get("RANKSCOPE_DOCS_IMAGES") == "1" else tmp_path


@pytest.mark.slow
def test_a_try_and_one_of_its_new_results_graded_with_the_keyboard(served,  # noqa: F811
                                                                   tmp_path):
    w, base, _ = served
    pictures = _pictures(tmp_path)
    ev = w.evaluation.id
    with browser_page(base) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        sign_in(page, w.curator.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/tries")
        page.locator("#changes").fill("weights.title=8")
        page.screenshot(path=pictures / "tuning_tries.png")
        page.locator("#run-try").click()
        page.wait_for_url(re.compile(rf".*/evaluations/{ev}/tries/1$"))
        # sent in the background: the page polls, then shows the try once it has ended
        page.wait_for_selector("#side-by-side", timeout=120_000)
        assert "weights.title=8" in page.locator(".eyebrow").inner_text()

        # page through the queries with the keyboard (n) until one has a new result
        n_queries = int(re.search(r"of (\d+)", page.locator(".eyebrow").inner_text())[1])
        new_doc = None
        for _ in range(n_queries):
            news = page.locator("[data-move='new']")
            if news.count():
                rows = page.locator("[data-row]")
                docs = [rows.nth(i).get_attribute("data-doc") for i in range(rows.count())]
                moves = [m.get_attribute("data-move") for m in
                         page.locator("[data-move]").all()]
                new_doc = docs[moves.index("new")]
                break
            if not page.locator("#next-query").count():
                break
            before = page.url
            page.keyboard.press("n")
            page.wait_for_function("u => document.location.href !== u", arg=before)
            page.wait_for_load_state()
        assert new_doc is not None, "no query has a new result at title 8"
        query_id = page.locator("#side-by-side").get_attribute("data-query")
        page.screenshot(path=pictures / "tuning_try.png")

        # the new result: j down to it, a digit grades it, the row says so
        rows = page.locator("[data-row]")
        docs = [rows.nth(i).get_attribute("data-doc") for i in range(rows.count())]
        assert page.evaluate("document.activeElement.dataset.doc") in (docs[0], None)
        if page.evaluate("document.activeElement.dataset.doc") is None:
            page.keyboard.press("j")  # the first row selected
        for _ in range(docs.index(new_doc)):
            page.keyboard.press("j")
        assert page.evaluate("document.activeElement.dataset.doc") == new_doc
        page.keyboard.press("2")
        page.wait_for_function(
            "d => " + IDLE + "document.querySelector(`[data-row][data-doc='${d}']`)"
            ".classList.contains('graded')", arg=new_doc)
        page.reload()
        row = page.locator(f"[data-row][data-doc='{new_doc}']")
        assert row.locator(".mine strong").inner_text() == "2"
        task_id = int(row.get_attribute("id")[1:])
    # in the store: the curator's grade of that (query, document), on the evaluation's scale
    from rankscope.app.server import open_app_store
    from rankscope.services import assignment

    store = open_app_store(str(Path(w.data).parent / "browser.sqlite"))
    try:
        task = assignment.task_view(store, w.curator, task_id, hold=False)
    finally:
        store.close()
    assert task.my_grade is not None and task.my_grade["value"] == 2  # the curator's own
    assert (task.query_id, task.doc_id, task.origin) == (query_id, new_doc, "try")


def test_the_tuning_guide_shows_the_pictures_the_browser_test_takes():
    guide = (IMAGES.parent / "tuning.md").read_text()
    for name in ("tuning_tries.png", "tuning_try.png"):
        assert f"(images/{name})" in guide
        assert (IMAGES / name).is_file()
