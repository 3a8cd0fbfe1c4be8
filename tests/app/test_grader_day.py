"""Issue 26 §4, the grader's day, over HTTP: the app's 404 page, the API's description,
undo saying what it did, a grade sent after the session ended, forms that keep what was
pasted, an endpoint whose corpus is missing, the project page's progress and headline,
the keys overlay's labels, plurals and wording, the focus ring's contrast.

The browser's side (polling, the stale session in a real tab, the 375 px layout, the
guidelines drawer) is in ``test_browser_grader_day.py``."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from rankscope.services import (
    accounts,
    assignment,
    catalog,
    grading,
    grading_progress,
    sessions,
)
from rankscope.services.grading import GradeInput

from .conftest import PASSWORD, make_world

CSS = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "app" / "static" / "app.css"


@pytest.fixture
def site(tmp_path, collection):
    from rankscope.app.factory import create_app
    from rankscope.app.server import open_app_store

    store = open_app_store(str(tmp_path / "day.sqlite"))
    try:
        w = make_world(store, collection, grades_wanted=1, metrics=("P@5", "nDCG@5"))
        app = create_app(store, tmp_path / "appdata", boundary=w.boundary)
        yield store, w, app
    finally:
        store.close()


def _client(app, store=None, who=None) -> TestClient:
    client = TestClient(app, base_url="http://testserver", follow_redirects=False)
    if who is not None:
        client.cookies.set("rankscope_session", sessions.create_session(store, who))
    return client


def _text(html: str) -> str:
    """The words of a page (tags dropped, spaces folded)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_cookie_name_is_the_apps():
    from rankscope.app.security import COOKIE

    assert COOKIE == "rankscope_session"  # the helper above sets this cookie


# -- small things ---------------------------------------------------------------------


def test_an_unknown_page_is_the_apps_404_page_and_json_under_the_api(site):
    _, _, app = site
    client = _client(app)
    page = client.get("/nope", headers={"accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page.text and "/nope" in page.text
    assert 'href="/static/app.css"' in page.text  # the app's own page, not a bare body
    # no javascript: link (the Content-Security-Policy would refuse it: a dead "Back")
    assert "javascript:" not in page.text
    api = client.get("/api/v1/nope", headers={"accept": "text/html"})
    assert api.status_code == 404 and api.json() == {"error": "Not Found"}
    # a client asking for JSON (no text/html) gets JSON anywhere
    assert client.get("/nope", headers={"accept": "application/json"}).json() == {
        "error": "Not Found"}


def test_api_docs_render_their_markup_and_have_sections(site):
    _, _, app = site
    page = _client(app).get("/api/docs")
    assert page.status_code == 200
    assert "``" not in page.text  # no raw reStructuredText literal
    # the grades route's description: ``batch_id`` rendered as code
    assert "the same <code>batch_id</code> again replays the answer" in page.text
    nav = re.search(r'<nav aria-label="API sections".*?</nav>', page.text, re.S)
    assert nav is not None
    targets = re.findall(r'href="#([^"]+)"', nav.group(0))
    assert {"g-evaluations", "g-projects", "g-tasks"} <= set(targets)
    for target in targets:  # every link of the navigation lands on a section
        assert f'<section id="{target}"' in page.text


def _luminance(hex_colour: str) -> float:
    """WCAG 2.x relative luminance of #rrggbb."""
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_focus_ring_contrast_on_white_is_at_least_3_to_1():
    css = CSS.read_text()
    variables = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", css))
    rings = re.findall(r"focus-visible\s*\{[^}]*outline:\s*\d+px solid ([^;]+);", css)
    assert rings, "no focus ring found"
    for ring in rings:
        colour = ring.strip()
        if colour.startswith("var("):
            colour = variables[colour[6:-1]]
        assert re.fullmatch(r"#[0-9a-fA-F]{6}", colour), colour
        # WCAG 1.4.11: a focus indicator needs 3:1 against what surrounds it (white)
        assert _contrast(colour, "#ffffff") >= 3.0, (colour, _contrast(colour, "#ffffff"))
    # the formula itself, on known pairs: black on white is 21:1, the old ring 2.03:1
    assert _contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert _contrast("#f5a623", "#ffffff") == pytest.approx(2.03, abs=0.01)


def test_no_internal_wording_and_plurals_right(site):
    store, w, app = site
    curator = _client(app, store, w.curator)
    catalog.import_query_set(store, w.curator, w.project.id, "single", "only\tone query\n")
    pages = [curator.get(f"/evaluations/{w.evaluation.id}").text,
             curator.get(f"/projects/{w.project.id}/evaluations/new").text,
             curator.get(f"/projects/{w.project.id}").text]
    for html in pages:
        assert not re.search(r"\bseed\s*0\d\d", html, re.I), "internal wording on a page"
    project = _text(pages[2])
    assert "1 query" in project and "1 queries" not in project
    assert "8 queries" in project  # the stand-in query set
    # the grading page's counts: one result graded of one wanted per result
    judge = _client(app, store, w.judge)
    task = assignment.next_task(store, w.judge, w.evaluation.id)
    grading.submit_grade(store, w.judge, GradeInput(task.task_id, 2))
    progress = _text(judge.get(f"/evaluations/{w.evaluation.id}/grade").text)
    n = grading_progress.progress(store, w.judge, w.evaluation.id)["results"]
    assert f"1 / {n} results complete" in progress and "1 graded by you" in progress


def test_keys_overlay_and_guidelines_name_the_scales_labels(site):
    store, w, app = site
    html = _client(app, store, w.judge).get(f"/evaluations/{w.evaluation.id}/grade").text
    overlay = _text(re.search(r'<div id="help".*?</div>', html, re.S).group(0))
    # the built-in graded scale: 0 poor, 1 fair, 2 good, 3 perfect
    for pair in ("0 = poor", "1 = fair", "2 = good", "3 = perfect"):
        assert pair in overlay
    assert "0 = 0" not in overlay
    drawer = re.search(r'<aside id="guide".*?</aside>', html, re.S).group(0)
    rows = re.findall(r"<tr><td><kbd>(\d)</kbd></td><td>(\d)</td><td>(\w+)</td></tr>", drawer)
    assert rows == [("0", "0", "poor"), ("1", "1", "fair"), ("2", "2", "good"),
                    ("3", "3", "perfect")]
    buttons = re.findall(r'<span class="gv">(\d)</span> <span class="gl">(\w+)</span>', html)
    assert buttons == [(v, label) for _, v, label in rows]  # the buttons say the same


# -- undo says what it did -------------------------------------------------------------


def test_undo_says_what_it_restored_then_what_it_removed(site):
    store, w, app = site
    judge = _client(app, store, w.judge)
    ev = w.evaluation.id
    task = assignment.next_task(store, w.judge, ev)
    grading.submit_grade(store, w.judge, GradeInput(task.task_id, 1))
    grading.submit_grade(store, w.judge, GradeInput(task.task_id, 3))  # a changed grade
    hx = {"hx-request": "true"}
    first = _text(judge.post(f"/evaluations/{ev}/undo", headers=hx).text)
    assert "3 perfect" in first and "withdrawn" in first
    assert "earlier grade 1 fair is restored" in first
    mine = assignment.task_view(store, w.judge, task.task_id, hold=False).my_grade
    assert mine is not None and mine["value"] == 1  # what the message says is what is stored
    second = _text(judge.post(f"/evaluations/{ev}/undo", headers=hx).text)
    assert "your grade 1 fair" in second and "is removed" in second
    assert assignment.task_view(store, w.judge, task.task_id, hold=False).my_grade is None
    third = _text(judge.post(f"/evaluations/{ev}/undo", headers=hx).text)
    assert "Nothing to undo" in third
    # without htmx: the same words travel in the redirect
    grading.submit_grade(store, w.judge, GradeInput(task.task_id, 0))
    plain = judge.post(f"/evaluations/{ev}/undo")
    assert plain.status_code == 303
    assert "your grade 0 poor" in unquote(plain.headers["location"])


# -- a grade sent after the session ended -----------------------------------------------


def _grades_of(store, who, task_id):
    return assignment.task_view(store, who, task_id, hold=False).my_grade


def test_a_grade_sent_after_the_session_ended_is_kept_for_sending_again(site):
    store, w, app = site
    ev = w.evaluation.id
    task = assignment.next_task(store, w.judge, ev)
    judge = _client(app, store, w.judge)
    judge.cookies.clear()  # signed out in another tab: the cookie is gone
    form = {"evaluation_id": str(ev), "value": "2", "explanation": "exact match"}
    sent = judge.post(f"/tasks/{task.task_id}/grade", data=form)
    assert sent.status_code == 303
    login = urlsplit(sent.headers["location"])
    assert login.path == "/login"
    back = parse_qs(login.query)["next"][0]
    assert back.startswith(f"/tasks/{task.task_id}?")
    assert parse_qs(urlsplit(back).query) == {"unsaved": ["2"], "explanation": ["exact match"]}
    assert _grades_of(store, w.judge, task.task_id) is None  # nothing was saved
    # the sign-in page says so
    page = judge.get(sent.headers["location"])
    assert "not saved" in _text(page.text)
    # signing in comes back to the same task, the grade kept there
    signed = judge.post("/login", data={"name": w.judge.name, "password": PASSWORD,
                                        "next": back})
    assert signed.status_code == 303 and signed.headers["location"] == back
    html = judge.get(back).text
    assert f'data-task="{task.task_id}"' in html
    assert "Not saved: your session had ended before your grade 2 good" in _text(html)
    kept = re.findall(r'<button type="submit" name="value" value="(\d)"[^>]*data-kept="true"',
                      html)
    assert kept == ["2"]
    assert ">exact match</textarea>" in html
    # sending it again saves it
    again = judge.post(f"/tasks/{task.task_id}/grade", data=form)
    assert again.status_code == 303
    saved = _grades_of(store, w.judge, task.task_id)
    assert saved["value"] == 2 and saved["explanation"] == "exact match"


def test_htmx_and_other_forms_after_the_session_ended_come_back_to_their_page(site):
    store, w, app = site
    ev = w.evaluation.id
    task = assignment.next_task(store, w.judge, ev)
    client = _client(app)
    # htmx: a 401 whose HX-Redirect is the sign-in page, then the task with the grade kept
    answer = client.post(f"/tasks/{task.task_id}/grade", headers={
        "hx-request": "true", "hx-current-url": f"http://testserver/evaluations/{ev}/grade"},
        data={"evaluation_id": str(ev), "value": "", "reason": "the page does not load"})
    assert answer.status_code == 401
    back = parse_qs(urlsplit(answer.headers["hx-redirect"]).query)["next"][0]
    assert parse_qs(urlsplit(back).query) == {"unsaved": ["cant-tell"],
                                              "reason": ["the page does not load"]}
    # another form (undo) without htmx: back to the page it was sent from, not to the form's
    # address (a POST-only route a browser cannot open after signing in)
    undo = client.post(f"/evaluations/{ev}/undo",
                       headers={"referer": f"http://testserver/evaluations/{ev}/grade"})
    assert parse_qs(urlsplit(undo.headers["location"]).query)["next"] == [
        f"/evaluations/{ev}/grade"]
    # a Referer of another site is never a destination
    elsewhere = client.post(f"/evaluations/{ev}/undo",
                            headers={"referer": "https://evil.example/x"})
    assert parse_qs(urlsplit(elsewhere.headers["location"]).query)["next"] == ["/"]
    # an htmx GET (skip): back to the page shown, not to the fragment's address
    skip = client.get(f"/evaluations/{ev}/grade?skip={task.task_id}", headers={
        "hx-request": "true", "hx-current-url": f"http://testserver/tasks/{task.task_id}"})
    assert parse_qs(urlsplit(skip.headers["hx-redirect"]).query)["next"] == [
        f"/tasks/{task.task_id}"]


# -- forms keep what was pasted ----------------------------------------------------------


def test_a_bad_query_set_keeps_the_form_the_text_and_the_error_beside_it(site):
    store, w, app = site
    curator = _client(app, store, w.curator)
    pasted = "a\tfirst query\nb\tsecond\na\tthird <b>bold</b>\n"
    answer = curator.post(f"/projects/{w.project.id}/query-sets",
                          data={"name": "mine", "text": pasted})
    assert answer.status_code == 400
    html = answer.text
    error = re.search(r'<p class="field-error" role="alert" id="query-set-error">(.*?)</p>',
                      html, re.S)
    assert error is not None and "line 3" in error.group(1)
    # the error sits right before the field it is about, which keeps the text (escaped)
    field = re.search(r'<textarea name="text" id="query-set-text"[^>]*>(.*?)</textarea>',
                      html, re.S)
    assert field is not None and html.index(error.group(0)) < html.index(field.group(0))
    assert field.group(1) == str(escape(pasted))
    assert 'aria-describedby="query-set-error"' in field.group(0)
    assert 'name="name" required value="mine"' in html
    assert [q.name for q in catalog.list_query_sets(store, w.curator, w.project.id)] == [
        "queries"]  # nothing saved


def test_a_bad_endpoint_keeps_its_text_and_a_missing_corpus_is_refused_when_saved(site):
    store, w, app = site
    curator = _client(app, store, w.curator)
    before = catalog.list_endpoints(store, w.curator, w.project.id)
    bad = 'kind = "embedded"\nname = "broken"\ncorpus = "corpus.jsonl"\nfields = [\n'
    answer = curator.post(f"/projects/{w.project.id}/endpoints", data={"toml": bad})
    assert answer.status_code == 400
    assert "not valid TOML" in answer.text and 'id="endpoint-error"' in answer.text
    assert f'id="endpoint-toml" rows="8" required aria-invalid="true" ' \
           f'aria-describedby="endpoint-error">{escape(bad)}</textarea>' in answer.text
    missing = ('kind = "embedded"\nname = "gone"\ncorpus = "missing.jsonl"\n'
               'fields = ["title"]\n')
    refused = curator.post(f"/projects/{w.project.id}/endpoints",
                           data={"toml": missing, "name": "gone"})
    assert refused.status_code == 400
    assert "corpus: no such file" in refused.text and "missing.jsonl" in refused.text
    assert catalog.list_endpoints(store, w.curator, w.project.id) == before
    # the service refuses it too (the API and every other caller)
    from rankscope.errors import ConfigError

    with pytest.raises(ConfigError, match="corpus: no such file"):
        catalog.save_endpoint(store, w.curator, w.project.id, missing, boundary=w.boundary)


# -- the first screen and the project page ----------------------------------------------


def test_the_first_screen_tells_a_newcomer_what_to_do(site):
    store, w, app = site
    newcomer = accounts.create_user(store, "nina", "judge", PASSWORD)
    alone = _text(_client(app, store, newcomer).get("/projects").text)
    assert "ask a curator to add you" in alone and "nina" in alone
    judge = _text(_client(app, store, w.judge).get("/projects").text)
    assert "press Grade next to an evaluation" in judge
    fresh = accounts.create_user(store, "cleo", "curator", PASSWORD)
    curator = _text(_client(app, store, fresh).get("/projects").text)
    assert "create a project" in curator and "add a query set" in curator and "Run" in curator


def test_the_project_page_shows_progress_headline_and_frozen_state(site):
    store, w, app = site
    ev = w.evaluation.id
    n = grading_progress.progress(store, w.curator, ev)["results"]
    # every result graded 2 (relevant on P's binary reading, grade >= 1): with the null
    # rules P@5 = relevant / graded = 1 for every query, so the mean is exactly 1
    graded = 0
    while (task := assignment.next_task(store, w.judge, ev)) is not None:
        grading.submit_grade(store, w.judge, GradeInput(task.task_id, 2))
        graded += 1
        if graded == 2:  # part-way: the page counts two of n
            row = _row(_client(app, store, w.curator).get(f"/projects/{w.project.id}").text,
                       ev)
            assert f"2 / {n} grades" in row
            assert "provisional" in row  # grading not complete: its numbers may move
    assert graded == n  # one grade wanted per result
    html = _client(app, store, w.curator).get(f"/projects/{w.project.id}").text
    row = _row(html, ev)
    assert f"{n} / {n} grades" in row
    assert "P@5 1.0000" in row
    # complete grading freezes the evaluation (docs/web_app.md, the freeze rule)
    assert "frozen" in row and "provisional" not in row
    # a judge sees the progress but no metric
    judge_row = _row(_client(app, store, w.judge).get(f"/projects/{w.project.id}").text, ev)
    assert f"{n} / {n} grades" in judge_row and "P@5" not in judge_row


def _row(html: str, evaluation_id: int) -> str:
    found = re.search(rf'<tr data-evaluation="{evaluation_id}">.*?</tr>', html, re.S)
    assert found is not None
    return _text(found.group(0))
