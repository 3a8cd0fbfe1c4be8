"""The web app's call: grade results given as values, against the local server."""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources

import pytest

from rankscope.errors import InputError, JudgeError
from rankscope.llm_judge.grading import GradeItem, JudgeConfig, grade_items
from rankscope.llm_judge.prompts import PromptTemplate

from .conftest import DOCS, QUERIES, Reply


def _items(*pairs: tuple[str, str]) -> list[GradeItem]:
    return [GradeItem(q, d, QUERIES[q], {"title": DOCS[d][0], "text": f"{DOCS[d][1]} [[{d}]]"})
            for q, d in pairs]


def test_grades_come_back_per_item_with_the_rater_prompt_hash_and_settings(server, tmp_path,
                                                                           fast_sleep):
    answers = {"d3": '{"grade": 3}', "d1": "Fairly relevant, I think.", "d5": '{"grade": 2}'}
    server.script = lambda doc, n, body: Reply(answers[doc], prompt_tokens=80,
                                               completion_tokens=4)
    judge = JudgeConfig(endpoint=server.url, model="tiny", settings={"seed": 5},
                        api_key="sk-test")
    items = _items(("q1", "d3"), ("q1", "d1"), ("q2", "d5"))
    result = grade_items(items, judge, cache=tmp_path / "c.sqlite", sleep=fast_sleep)
    source = (resources.files("rankscope.llm_judge") / "templates" / "graded.j2").read_text()
    assert result.template_name == "graded"
    assert result.template_sha256 == hashlib.sha256(source.encode()).hexdigest()
    assert result.rater == "llm:tiny" and result.model == "tiny"
    assert result.settings == {"temperature": 0.0, "seed": 5}
    assert [(g.query_id, g.doc_id, g.grade, g.status) for g in result.grades] == [
        ("q1", "d3", 3.0, "graded"), ("q1", "d1", None, "unrateable"),
        ("q2", "d5", 2.0, "graded")]
    assert result.grades[1].answer == "Fairly relevant, I think."
    assert result.grades[0].prompt_tokens == 80 and not result.grades[0].cached
    assert all(b["seed"] == 5 and b["temperature"] == 0.0 for b in server.bodies)
    assert "sk-test" not in repr(judge)
    assert {h["Authorization"] for h in server.headers} == {"Bearer sk-test"}
    # asked again: every answer from the cache, nothing sent
    server.reset()
    again = grade_items(items, judge, cache=tmp_path / "c.sqlite", sleep=fast_sleep)
    assert server.count == 0 and all(g.cached for g in again.grades)
    assert [g.grade for g in again.grades] == [g.grade for g in result.grades]


def test_the_cache_is_shared_with_the_command_line(server, collection, tmp_path, fast_sleep):
    from rankscope.cli.main import main

    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    cache = tmp_path / "answers.sqlite"
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("q1 d3\nq2 d5\n")
    assert main(["judge", "--endpoint", server.url, "--model", "tiny", "--queries",
                 str(collection["queries"]), "--docs", str(collection["docs"]), "--pairs",
                 str(pairs), "--cache", str(cache), "-o", str(tmp_path / "g.csv")]) == 0
    assert server.count == 2
    server.reset()
    result = grade_items(_items(("q1", "d3"), ("q2", "d5")),
                         JudgeConfig(endpoint=server.url, model="tiny"), cache=cache)
    assert server.count == 0 and [g.grade for g in result.grades] == [1.0, 1.0]
    # another model, or a changed prompt, asks again
    grade_items(_items(("q1", "d3")), JudgeConfig(endpoint=server.url, model="other"),
                cache=cache)
    assert server.count == 1
    own = PromptTemplate.from_text("Grade {{ query }} / {{ document }} as {\"grade\": N}")
    mine = grade_items(_items(("q1", "d3")),
                       JudgeConfig(endpoint=server.url, model="tiny", prompt=own), cache=cache)
    assert server.count == 2 and mine.template_sha256 == hashlib.sha256(
        own.source.encode()).hexdigest()


def test_needs_failures_budget_and_samples(server, fast_sleep):
    server.script = lambda doc, n, body: (Reply(status=503) if doc == "d4"
                                          else Reply('{"grade": 2}'))
    items = _items(("q1", "d4"), ("q1", "d3"), ("q1", "d2"), ("q2", "d5"))
    items[1] = GradeItem("q1", "d3", QUERIES["q1"], items[1].fields, need="Cat diet basics.")
    judge = JudgeConfig(endpoint=server.url, model="tiny", max_retries=1, concurrency=1)
    result = grade_items(items, judge, max_calls=4, sleep=fast_sleep)
    # d4: 503 twice (failed); d3 and d2 graded; the budget of 4 calls is then spent
    assert [g.status for g in result.grades] == ["failed", "graded", "graded", "not_reached"]
    assert "503" in result.grades[0].reason and server.count == 4
    assert result.usage.stopped and "call budget" in result.usage.stopped
    d3 = next(b for b in server.bodies if "[[d3]]" in b["messages"][-1]["content"])
    assert "What the searcher wants: Cat diet basics." in d3["messages"][-1]["content"]
    # repeated sampling: majority and consistency per item
    server.reset()
    votes = ["1", "1", "3"]
    server.script = lambda doc, n, body: Reply(f'{{"grade": {votes[n]}}}')
    sampled = grade_items(_items(("q1", "d3")),
                          JudgeConfig(endpoint=server.url, model="tiny", samples=3,
                                      temperature=0.8), sleep=fast_sleep)
    g = sampled.grades[0]
    assert (g.grade, g.votes, g.consistency) == (1.0, "1,1,3", pytest.approx(2 / 3))
    assert sampled.samples == 3 and sampled.usage.self_consistency == pytest.approx(2 / 3)


def test_inside_a_running_loop_and_bad_items(server, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from rankscope.llm_judge.cache import AnswerCache

    server.script = lambda doc, n, body: Reply('{"grade": 0}')
    judge = JudgeConfig(endpoint=server.url, model="tiny")
    shared = AnswerCache(tmp_path / "shared.sqlite")  # opened here, used from other threads

    async def from_a_handler() -> float | None:
        return grade_items(_items(("q2", "d6")), judge, cache=shared).grades[0].grade

    assert asyncio.run(from_a_handler()) == 0.0  # graded in a thread of its own
    with ThreadPoolExecutor(max_workers=4) as pool:  # four web workers, one cache
        cached = list(pool.map(lambda _: grade_items(_items(("q2", "d6")), judge,
                                                     cache=shared).grades[0].cached, range(4)))
    assert cached == [True] * 4 and server.count == 1 and len(shared) == 1
    shared.close()
    server.reset()
    with pytest.raises(InputError, match="item 2"):
        grade_items([*_items(("q1", "d3")), GradeItem("q1", "d1", "another text", {})], judge)
    with pytest.raises(InputError, match="other fields"):
        grade_items([*_items(("q1", "d3")), GradeItem("q1", "d3", QUERIES["q1"], {"t": "x"})],
                    judge)
    assert [g.doc_id for g in grade_items(_items(("q1", "d3"), ("q1", "d3")), judge).grades] \
        == ["d3", "d3"]  # a repeated item is asked once, answered twice
    assert server.count == 1
    server.script = lambda doc, n, body: Reply(status=401)
    with pytest.raises(JudgeError, match="401"):
        grade_items(_items(("q1", "d1")), judge)
    assert grade_items([], judge).grades == []
