"""An LLM judge as one more grader: attached by a curator, run against a scripted
OpenAI-compatible server on 127.0.0.1, its grades kept apart until the curator lets
them count, and compared with the people's on the agreement page."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from tests.llm_judge.conftest import Reply, ScriptedServer

from rankscope.errors import ConfigError, ForbiddenError, OptionError
from rankscope.outbound.hosts import HostPolicy
from rankscope.services import (
    adjudication,
    assignment,
    exchange,
    grading,
    grading_progress,
    llm_judges,
)
from rankscope.services.boundary import Boundary
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Rater

from .conftest import PASSWORD, boundary_for

LOCAL = Boundary(files_dir=Path.cwd(), hosts=HostPolicy.parse(["127.0.0.1"]))
"""The scripted server is on 127.0.0.1: these tests' server allows that address."""


@pytest.fixture
def llm():
    server = ScriptedServer()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    yield server
    server.stop()


def _grades_csv(store, actor, ev_id) -> list[dict[str, str]]:
    import csv
    import io

    body, _ = exchange.export(store, actor, ev_id, "grades.csv")
    lines = [ln for ln in body.decode().splitlines(keepends=True) if not ln.startswith("#")]
    return list(csv.DictReader(io.StringIO("".join(lines))))


def test_the_llm_judge_grades_the_open_tasks_apart_then_counts(store, world, llm):
    ev_id = world.evaluation.id
    first = assignment.next_task(store, world.judge, ev_id)
    grading.submit_grade(store, world.judge, GradeInput(first.task_id, 3))
    before = grading_progress.progress(store, world.curator, ev_id)
    results = before["results"]
    assert before["filled"] == 1

    with pytest.raises(ForbiddenError):  # a judge may not attach one
        llm_judges.attach_judge(store, world.judge, ev_id, llm_judges.JudgeSpec(llm.url, "m"),
                                boundary=LOCAL)
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(llm.url, "tiny-model", max_calls=500),
                                    boundary=LOCAL)
    assert judge["rater"] == "llm:tiny-model" and judge["counts"] is False
    with store.read() as session:
        assert session.scalar(select(Rater.kind).where(Rater.id == judge["rater_id"])) == "llm"

    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    # every result still wants grades and the judge graded none: one request each
    assert summary["items"] == results and llm.count == results
    assert summary["accepted"] == results and summary["statuses"] == {"graded": results}
    prompts = ["\n".join(m["content"] for m in b["messages"]) for b in llm.bodies]
    assert all("is the answer" in p for p in prompts)  # the evaluation's guidelines
    assert llm_judges.get_judge(store, world.curator, judge["id"])["status"] == "done"

    # not counting: no grades-wanted slot filled; in the exports, flagged advisory (issue 26
    # §5: a complete record), so that nothing reads them as grades
    assert grading_progress.progress(store, world.curator, ev_id)["filled"] == 1
    rows = _grades_csv(store, world.curator, ev_id)
    assert {r["rater"] for r in rows if r["grade_status"] == "counted"} == {world.judge.name}
    assert {r["grade_status"] for r in rows if r["rater"] == "llm:tiny-model"} == {"advisory"}
    report = adjudication.agreement_report(store, world.curator, ev_id)
    assert report["raters"]["llm:tiny-model"] == "llm"
    mine = [r for r in report["vs_consensus"] if r["rater"] == "llm:tiny-model"]
    assert len(mine) == 1 and mine[0]["counts"] is False
    assert len(report["llm_vs_people"]) == 1

    # counting: each result gets the LLM's grade (2 wanted, at most 1 person's so far)
    llm_judges.set_counts(store, world.curator, judge["id"], True)
    assert grading_progress.progress(store, world.curator, ev_id)["filled"] == 1 + results
    rows = _grades_csv(store, world.curator, ev_id)
    assert sorted(float(r["grade"]) for r in rows if r["rater"] == "llm:tiny-model"
                  and r["grade_status"] == "counted") == [2.0] * results

    # a second run finds nothing left for it: no request
    again = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert again["items"] == 0 and llm.count == results


def test_a_missing_api_key_fails_the_run_and_says_which_variable(store, world, llm,
                                                                  monkeypatch):
    monkeypatch.delenv("RS_TEST_NO_SUCH_KEY", raising=False)
    allowed = boundary_for(world.data, hosts=["127.0.0.1"], env=["RS_TEST_NO_SUCH_KEY"])
    judge = llm_judges.attach_judge(store, world.curator, world.evaluation.id,
                                    llm_judges.JudgeSpec(llm.url, "m",
                                                         api_key_env="RS_TEST_NO_SUCH_KEY"),
                                    boundary=allowed)
    with pytest.raises(OptionError, match="RS_TEST_NO_SUCH_KEY"):
        llm_judges.run_judge(store, world.curator, judge["id"], boundary=allowed)
    after = llm_judges.get_judge(store, world.curator, judge["id"])
    assert after["status"] == "failed" and "RS_TEST_NO_SUCH_KEY" in after["error"]
    assert llm.count == 0


@pytest.mark.parametrize("spec", [
    llm_judges.JudgeSpec("ftp://x", "m"), llm_judges.JudgeSpec("http://127.0.0.1:1/v1", " "),
    llm_judges.JudgeSpec("http://127.0.0.1:1/v1", "m", api_key_env="sk-abc-123"),
    llm_judges.JudgeSpec("http://127.0.0.1:1/v1", "m", max_calls=0),
    llm_judges.JudgeSpec("http://user:sk-abc@127.0.0.1:1/v1", "m"),
    llm_judges.JudgeSpec("https://x.example/v1/chat/completions?api_key=sk-abc", "m")])
def test_bad_settings_are_refused(store, world, spec):
    with pytest.raises((OptionError, ConfigError)) as caught:
        llm_judges.attach_judge(store, world.curator, world.evaluation.id, spec, boundary=LOCAL)
    assert "sk-abc" not in str(caught.value)  # a key pasted by mistake is never repeated


# --- the LLM page shows what a run did, failures as failures (issue 26) and re-asking the
# --- unrateable (issue 25 section 2) --------------------------------------------------------

@pytest.fixture
def curator_client(store, world, collection):
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    # the scripted LLM server is on 127.0.0.1: this server allows that address
    client = TestClient(create_app(store, collection,
                                   boundary=boundary_for(collection, hosts=["127.0.0.1"])),
                        follow_redirects=False)
    answer = client.post("/login", data={"name": world.curator.name, "password": PASSWORD})
    assert answer.status_code == 303
    return client


def _card(client, ev_id: int, judge_id: int) -> str:
    page = client.get(f"/evaluations/{ev_id}/llm")
    assert page.status_code == 200
    html = page.text
    start = html.index(f'id="judge-{judge_id}"')
    return html[start:html.index("</section>", start)]


async def _no_wait(seconds: float) -> None:
    """An injectable sleep: retries happen at once."""


def test_the_card_shows_the_run_in_numbers(store, world, llm, curator_client):
    """Before: "0 grades saved of <built-in method items of dict object ...>"."""
    ev_id = world.evaluation.id
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(llm.url, "tiny", max_calls=500),
                                    boundary=LOCAL)
    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    card = _card(curator_client, ev_id, judge["id"])
    assert "built-in method" not in card
    n = summary["items"]
    assert n == llm.count > 1
    assert f'<strong data-accepted="{n}">{n}</strong> grades saved of {n} results asked' in card
    assert 'data-outcome="done"' in card and 'class="status ready"' in card
    assert f"<li>{n} graded</li>" in card and "unrateable" not in card


def test_an_unreachable_endpoint_is_shown_failed(store, world, curator_client):
    """Before: a green "done" (every result "failed", the run "succeeded")."""
    import socket

    from rankscope.errors import JudgeError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    ev_id = world.evaluation.id
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(dead, "tiny", max_calls=500),
                                    boundary=LOCAL)
    with pytest.raises(JudgeError, match="cannot use the endpoint"):
        llm_judges.run_judge(store, world.curator, judge["id"], sleep=_no_wait,
                             boundary=LOCAL)
    after = llm_judges.get_judge(store, world.curator, judge["id"])
    assert (after["status"], after["outcome"]) == ("failed", "failed")
    card = _card(curator_client, ev_id, judge["id"])
    assert 'data-outcome="failed"' in card and 'class="status failed"' in card
    assert 'class="error"' in card and "cannot use the endpoint" in card
    assert "ready" not in card and ">done<" not in card


def test_failed_results_make_the_run_incomplete(store, world, llm, curator_client):
    """Before: a green "done" whatever failed."""
    llm.script = lambda doc, n, body: Reply(status=503) if "json pretty print" in body[
        "messages"][-1]["content"] else Reply('{"grade": 2}')
    ev_id = world.evaluation.id
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(llm.url, "tiny", max_calls=500),
                                    boundary=LOCAL)
    summary = llm_judges.run_judge(store, world.curator, judge["id"], sleep=_no_wait,
                                   boundary=LOCAL)
    asked = ["json pretty print" in b["messages"][-1]["content"] for b in llm.bodies]
    failing = sum(asked) // 6  # each failing result: its request and 5 retries
    assert failing > 0 and summary["statuses"] == {"graded": summary["items"] - failing,
                                                   "failed": failing}
    assert "503" in summary["failure"]
    assert llm_judges.get_judge(store, world.curator, judge["id"])["outcome"] == "incomplete"
    card = _card(curator_client, ev_id, judge["id"])
    assert 'data-outcome="incomplete"' in card and 'class="status incomplete"' in card
    assert f'data-failed="{failing}"' in card and "503" in card


def test_unrateable_results_are_counted_and_asked_again(store, world, llm, curator_client,
                                                        collection):
    """Before: no count, no way to ask again (the cached answer came back every run)."""
    import time

    def broken(doc, n, body):
        text = body["messages"][-1]["content"]
        return Reply("I am not sure." if "json pretty print" in text else '{"grade": 1}')

    llm.script = broken
    ev_id = world.evaluation.id
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(llm.url, "tiny", max_calls=500),
                                    boundary=LOCAL)

    def run_from_the_page(**form) -> dict:
        answer = curator_client.post(f"/llm-judges/{judge['id']}/run", data=form)
        assert answer.status_code == 303
        for _ in range(1000):  # the run is on a thread of the server: wait for its end
            now = llm_judges.get_judge(store, world.curator, judge["id"])
            if now["status"] != "running":
                return now
            time.sleep(0.01)
        raise AssertionError("the run did not end")

    first = run_from_the_page()
    unrateable = sum("json pretty print" in b["messages"][-1]["content"] for b in llm.bodies)
    assert unrateable > 0 and first["unrateable"] == unrateable
    assert first["outcome"] == "done"  # the model answered: nothing failed
    card = _card(curator_client, ev_id, judge["id"])
    assert f'data-unrateable="{unrateable}"' in card
    assert f"{unrateable} unrateable: no grade could be read" in card
    assert f"Ask the {unrateable} unrateable again" in card
    # the server is fixed; a plain run answers from the cache: the same unrateable answers
    llm.script = lambda doc, n, body: Reply('{"grade": 3}')
    llm.reset()
    again = run_from_the_page()
    assert llm.count == 0 and again["unrateable"] == unrateable
    # the button asks exactly those, past the cache
    fixed = run_from_the_page(retry_unrateable="1")
    assert llm.count == unrateable and fixed["unrateable"] == 0
    assert fixed["last_run"]["accepted"] == unrateable
    card = _card(curator_client, ev_id, judge["id"])
    assert "unrateable again" not in card and "again (unrateable ones, past the cache)" in card


def test_a_run_over_more_results_than_a_batch_holds_sends_several(store, world, llm,
                                                                   monkeypatch):
    # before: one batch of every graded result, refused whole past MAX_BATCH (500); with
    # the batch size at 2 the world's results need several batches, every grade accepted
    from rankscope.services.assignment import MAX_BATCH

    assert llm_judges.BATCH <= MAX_BATCH  # what a batch may hold (GradeBatchSpec)
    monkeypatch.setattr(llm_judges, "BATCH", 2)
    ev_id = world.evaluation.id
    results = grading_progress.progress(store, world.curator, ev_id)["results"]
    assert results > 2
    judge = llm_judges.attach_judge(store, world.curator, ev_id,
                                    llm_judges.JudgeSpec(llm.url, "tiny-model", max_calls=500),
                                    boundary=LOCAL)
    sent: list[int] = []
    real = grading.submit_batch

    def counting(*args, **kwargs):
        sent.append(len(args[4]))
        return real(*args, **kwargs)

    monkeypatch.setattr(grading, "submit_batch", counting)
    summary = llm_judges.run_judge(store, world.curator, judge["id"], boundary=LOCAL)
    assert summary["accepted"] == results and summary["refused"] == 0
    assert sent == [2] * (results // 2) + ([results % 2] if results % 2 else [])
