"""A real browser, keyboard only: grade a whole small evaluation (with undo, judge
later, can't tell with a reason, an explanation and previous), read the metric on the
dashboard, export the qrels and check `rankscope evaluate` prints the same number; the
result-list mode."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rankscope.services import sessions

from .browser_harness import browser_page, require_browser, sign_in
from .conftest import PASSWORD, make_world
from .test_serve import MAIN, free_port, start_server, stop


def _grade_for(doc: str) -> int:
    """The grade the test gives a document: any fixed rule of its id will do."""
    return sum(map(ord, doc)) % 4


def _task(page) -> tuple[str, str, str]:
    task = page.locator("#task")
    return (task.get_attribute("data-task"), task.get_attribute("data-query"),
            task.get_attribute("data-doc"))


IDLE = "!document.body.hasAttribute('aria-busy') && "  # the swap has settled


def _press_and_wait(page, key: str, before: str | None) -> None:
    """Press a key that swaps the task area; wait until another task (or the end) shows."""
    page.keyboard.press(key)
    page.wait_for_function(
        "t => " + IDLE + "(document.querySelector('#done') || (document.querySelector('#task') "
        "&& document.querySelector('#task').dataset.task !== t))", arg=before)


def _wait_for_task(page, task_id: str) -> None:
    page.wait_for_function(
        "t => " + IDLE + "document.querySelector('#task').dataset.task === t", arg=task_id)


@pytest.fixture
def served(tmp_path, collection):
    require_browser()
    from rankscope.app.server import open_app_store

    db = str(tmp_path / "browser.sqlite")
    store = open_app_store(db)
    try:
        w = make_world(store, collection, grades_wanted=1, metrics=("nDCG@5", "P@5"))
        token = sessions.create_token(store, w.curator.name)
    finally:
        store.close()
    port = free_port()
    server = start_server(db, collection, port)
    try:
        yield w, f"http://127.0.0.1:{port}", token
    finally:
        stop(server)


@pytest.mark.slow
def test_grade_a_whole_evaluation_with_the_keyboard(served, tmp_path):
    w, base, token = served
    ev = w.evaluation.id
    given: dict[tuple[str, str], int | None] = {}
    with browser_page(base) as page:
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/grade")
        assert page.evaluate("document.activeElement.id") == "task"  # not in a field

        # a grade, then undo: the same result comes back to be graded again
        first, q, d = _task(page)
        _press_and_wait(page, "3", first)
        page.keyboard.press("u")
        _wait_for_task(page, first)
        assert "Undone" in page.locator("#saved").inner_text()
        _press_and_wait(page, str(_grade_for(d)), first)
        given[(q, d)] = _grade_for(d)

        # judge later: another result now, this one comes back at the end
        later, q_later, d_later = _task(page)
        _press_and_wait(page, "l", later)

        # can't tell, with a reason typed after `?` (Enter sends it)
        unsure, q, d = _task(page)
        page.keyboard.press("?")
        assert page.evaluate("document.activeElement.id") == "reason"
        page.keyboard.type("the page does not load")
        _press_and_wait(page, "Enter", unsure)
        given[(q, d)] = None

        # an explanation: `e` into the field, Escape out of it, a digit grades with it
        explained, q, d = _task(page)
        page.keyboard.press("e")
        page.keyboard.type("exactly the function asked for 3210")  # digits stay in the field
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement.id") == "task"
        _press_and_wait(page, "2", explained)

        # previous: back to that result, change its grade; the walk moves on
        page.keyboard.press("k")
        _wait_for_task(page, explained)
        assert "exactly the function" in page.locator("#explanation").input_value()
        _press_and_wait(page, str(_grade_for(d)), explained)
        given[(q, d)] = _grade_for(d)

        # the rest, one digit each, until nothing is left (the deferred one included)
        for _ in range(200):
            if page.locator("#done").count():
                break
            task_id, q, d = _task(page)
            if (q, d) in given:  # the walk's next step: a result graded already
                _press_and_wait(page, "j", task_id)
                continue
            _press_and_wait(page, str(_grade_for(d)), task_id)
            given[(q, d)] = _grade_for(d)
        assert page.locator("#done").count() == 1
        assert (q_later, d_later) in given
        assert page.locator("#n-left").inner_text() == "0"

    # the curator reads the metric on the dashboard
    with browser_page(base) as page:
        sign_in(page, w.curator.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/metrics")
        shown = float(page.locator('[data-metric="nDCG@5"]').inner_text())
        shown_p = float(page.locator('[data-metric="P@5"]').inner_text())
        # the command the page gives for the exported qrels (checked below by running it)
        qrels_item = page.locator("details li", has_text="qrels.txt")
        command = qrels_item.locator("code").text_content() or ""

    # the exports through the API, and rankscope evaluate on them
    import httpx

    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"},
                      timeout=30) as api:
        qrels = api.get(f"/api/v1/evaluations/{ev}/exports/qrels.txt")
        run = api.get(f"/api/v1/evaluations/{ev}/exports/run.txt")
        assert qrels.status_code == run.status_code == 200
    exported = {(q, d): int(float(g)) for q, _, d, g in (
        ln.split() for ln in qrels.text.splitlines() if ln.strip() and not ln.startswith("#"))}
    assert exported == {k: v for k, v in given.items() if v is not None}
    Path(tmp_path / "qrels.txt").write_text(qrels.text)
    Path(tmp_path / "run.txt").write_text(run.text)
    words = shlex.split(command)
    assert words[:4] == ["rankscope", "evaluate", "qrels.txt", "run.txt"], command
    out = subprocess.run([sys.executable, "-c", MAIN, *words[1:], "-f", "json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    means = json.loads(out.stdout)["mean"]
    assert shown == pytest.approx(means["nDCG@5"], abs=6e-4)  # the page shows 3 decimals
    if "P@5" in means:  # P@5 may need another scale's qrels (qrels-binary.txt)
        assert shown_p == pytest.approx(means["P@5"], abs=6e-4)


@pytest.mark.slow
def test_the_result_list_mode(served):
    w, base, _ = served
    ev = w.evaluation.id
    with browser_page(base) as page:
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/queries/q01")
        rows = page.locator("[data-row]")
        n = rows.count()
        assert n >= 3
        docs = [rows.nth(i).get_attribute("data-doc") for i in range(n)]
        assert page.evaluate("document.activeElement.dataset.doc") == docs[0]
        page.keyboard.press("j")  # the second row
        assert page.evaluate("document.activeElement.dataset.doc") == docs[1]
        page.keyboard.press("k")
        assert page.evaluate("document.activeElement.dataset.doc") == docs[0]
        for i, doc in enumerate(docs):  # each row graded; the selection moves on by itself
            page.keyboard.press(str(_grade_for(doc)))
            page.wait_for_function(
                "d => " + IDLE + "document.querySelector(`[data-row][data-doc='${d}']`)"
                ".classList.contains('graded')", arg=doc)
            assert "yours" in rows.nth(i).locator(".mine").inner_text()
        texts = [rows.nth(i).locator(".mine strong").inner_text() for i in range(n)]
        assert texts == [str(_grade_for(d)) for d in docs]


@pytest.mark.slow
def test_j_walks_through_every_result_then_comes_back_round(served, tmp_path):
    """Issue 26: `j` alternated between the same two results forever."""
    from sqlalchemy import select

    from rankscope.app.server import open_app_store
    from rankscope.store.models_app import Task

    w, base, _ = served
    ev = w.evaluation.id
    store = open_app_store(str(tmp_path / "browser.sqlite"))  # the served database
    try:
        with store.read() as s:  # nothing graded yet: by position, then task id
            order = [str(t) for t, _ in sorted(s.execute(select(Task.id, Task.position).where(
                Task.evaluation_id == ev)).all(), key=lambda r: (r[1], r[0]))]
    finally:
        store.close()
    with browser_page(base) as page:
        sign_in(page, w.judge.name, PASSWORD)
        page.goto(f"/evaluations/{ev}/grade")
        seen = [_task(page)[0]]
        for _ in range(len(order)):
            _press_and_wait(page, "j", seen[-1])
            seen.append(_task(page)[0])
    assert seen == [*order, order[0]]
