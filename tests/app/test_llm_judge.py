"""An LLM judge as one more grader: attached by a curator, run against a scripted
OpenAI-compatible server on 127.0.0.1, its grades kept apart until the curator lets
them count, and compared with the people's on the agreement page."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from tests.judge.conftest import Reply, ScriptedServer

from rankscope.errors import ConfigError, ForbiddenError, OptionError
from rankscope.outbound import HostPolicy
from rankscope.services import adjudication, assignment, exchange, grading, llm_judges
from rankscope.services.boundary import Boundary
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Rater

from .conftest import boundary_for

LOCAL = Boundary(files_dir=Path.cwd(), hosts=HostPolicy.parse(["127.0.0.1"]))
"""The scripted server is on 127.0.0.1: these tests' server allows that address."""


@pytest.fixture
def llm():
    server = ScriptedServer()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    yield server
    server.stop()


def _grades_csv(store, actor, ev_id) -> list[list[str]]:
    body, _ = exchange.export(store, actor, ev_id, "grades.csv")
    lines = [ln for ln in body.decode().splitlines() if ln and not ln.startswith("#")]
    return [ln.split(",") for ln in lines[1:]]


def test_the_llm_judge_grades_the_open_tasks_apart_then_counts(store, world, llm):
    ev_id = world.evaluation.id
    first = assignment.next_task(store, world.judge, ev_id)
    grading.submit_grade(store, world.judge, GradeInput(first.task_id, 3))
    before = assignment.progress(store, world.curator, ev_id)
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

    # not counting: no grades-wanted slot filled, nothing in the exports
    assert assignment.progress(store, world.curator, ev_id)["filled"] == 1
    assert {row[2] for row in _grades_csv(store, world.curator, ev_id)} == {world.judge.name}
    report = adjudication.agreement_report(store, world.curator, ev_id)
    assert report["raters"]["llm:tiny-model"] == "llm"
    mine = [r for r in report["vs_consensus"] if r["rater"] == "llm:tiny-model"]
    assert len(mine) == 1 and mine[0]["counts"] is False
    assert len(report["llm_vs_people"]) == 1

    # counting: each result gets the LLM's grade (2 wanted, at most 1 person's so far)
    llm_judges.set_counts(store, world.curator, judge["id"], True)
    assert assignment.progress(store, world.curator, ev_id)["filled"] == 1 + results
    rows = _grades_csv(store, world.curator, ev_id)
    assert sorted(float(r[3]) for r in rows if r[2] == "llm:tiny-model") == [2.0] * results

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
