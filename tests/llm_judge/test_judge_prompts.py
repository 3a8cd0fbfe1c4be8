"""The stepwise assessor prompt, a template's answer declaration, and few-shot examples
drawn from the judgments (issue 25 section 5), against the scripted server."""

from __future__ import annotations

import json

import pytest

from rankscope.errors import InputError, JudgeError, OptionError
from rankscope.judgments import BINARY, GRADED
from rankscope.llm_judge.cache import cache_key
from rankscope.llm_judge.prompts import PromptTemplate, load_template

from .conftest import DOCS, QUERIES, Reply, judge_collection


def test_the_assessor_prompt_asks_for_intent_match_trust_then_a_final_line(server, collection,
                                                                           fast_sleep):
    t = load_template("assessor", GRADED)
    assert t.marker == "Final grade:" and t.answer_tokens == 250
    user = t.render(query_id="q", query="cat food", doc_id="d", fields={"text": "Meat."},
                    scale=GRADED, need="What cats eat.", guidelines="Vets' pages win.")[-1]
    text = user["content"]
    for part in ("Intent:", "Match: 0, 1 or 2", "Trust: 0, 1 or 2", '"Final grade: G"',
                 "Query: cat food", "What the searcher wants: What cats eat.",
                 "Vets' pages win.", "3 (perfect)", "0 (poor)"):
        assert part in text, part
    # the fixed text comes first: the query and the result after the method
    assert text.index("Work in these steps") < text.index("Query: cat food")
    answers = {
        "d3": "Intent: what food cats need.\nMatch: 2\nTrust: 2\nFinal grade: 3",
        "d1": "Intent: cat diet.\nMatch: 1\nTrust: 1\n**Final grade: 1**",
        "d2": '{"grade": 2}',  # not the format this prompt asks for
        "d4": "Intent: cat food.\nMatch: 0\nTrust: 1\nFinal grade: 0\nHope this helps.",
    }
    server.script = lambda doc, n, body: Reply(answers[doc])
    result = judge_collection(server, collection, fast_sleep, runs=[],
                              pairs=[("q1", d) for d in answers], prompt="assessor")
    rows = {r["doc_id"]: r for r in result.rows.to_dicts()}
    assert (rows["d3"]["grade"], rows["d1"]["grade"]) == (3.0, 1.0)
    assert rows["d2"]["status"] == "unrateable" and "no final line" in rows["d2"]["reason"]
    assert rows["d4"]["status"] == "unrateable" and "text after" in rows["d4"]["reason"]
    assert all(b["temperature"] == 0.0 for b in server.bodies)


def test_the_assessor_prompt_is_for_the_graded_scale_only():
    with pytest.raises(JudgeError, match=r"assessor defines the grades 0-3.*binary"):
        load_template("assessor", BINARY)
    with pytest.raises(JudgeError, match="graded defines"):
        load_template("graded", BINARY)


def test_a_template_declares_its_answer_format():
    t = PromptTemplate.from_text('{# answer: line "Verdict:" tokens 40 #}\n[user]\n{{ query }}')
    assert (t.marker, t.answer_tokens, t.answer_for(2.0)) == ("Verdict:", 40, "Verdict: 2")
    plain = PromptTemplate.from_text("[user]\nGrade {{ query }}")
    assert (plain.marker, plain.answer_tokens, plain.answer_for(1.0)) == (None, 16,
                                                                         '{"grade": 1}')
    with pytest.raises(JudgeError, match="answer declaration"):
        PromptTemplate.from_text("{# answer: final line #}\n[user]\n{{ query }}")


def test_the_dry_run_estimates_the_answers_the_template_declares(server, collection,
                                                                fast_sleep):
    graded = judge_collection(server, collection, fast_sleep, dry_run=True)
    stepwise = judge_collection(server, collection, fast_sleep, dry_run=True,
                                prompt="assessor")
    assert graded.plan.completion_tokens == 7 * 16
    assert stepwise.plan.completion_tokens == 7 * 250
    assert server.count == 0


# --- few-shot examples ----------------------------------------------------------------------

def _grade(q: str, d: str) -> int:
    return (int(d[1]) + (q == "q2")) % 4


@pytest.fixture
def team_qrels(collection):
    """Every (query, document) of the collection graded 0-3 by the team."""
    path = collection["dir"] / "team.qrels"
    path.write_text("".join(f"{q} 0 {d} {_grade(q, d)}\n" for q in QUERIES for d in DOCS))
    return path


def _shots(body):
    """(query, doc, grade) of each few-shot turn of a request, from its messages."""
    out = []
    messages = body["messages"]
    for user, answer in zip(messages[1:-1:2], messages[2:-1:2], strict=True):
        assert (user["role"], answer["role"]) == ("user", "assistant")
        q = next(q for q, text in QUERIES.items() if f"Query: {text}" in user["content"])
        d = user["content"].split("[[")[1][:2]
        out.append((q, d, answer["content"]))
    return out


def test_few_shot_examples_come_from_the_judgments_one_per_grade(server, collection,
                                                                 fast_sleep, team_qrels):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    graded = [("q1", "d3"), ("q2", "d5")]
    result = judge_collection(server, collection, fast_sleep, runs=[], pairs=graded,
                              few_shot=4, few_shot_from=team_qrels, few_shot_seed=7)
    assert server.count == 2
    shots = [_shots(b) for b in server.bodies]
    assert shots[0] == shots[1]  # the same examples before every pair
    assert [m["role"] for m in server.bodies[0]["messages"]] == [
        "system", "user", "assistant", "user", "assistant", "user", "assistant", "user",
        "assistant", "user"]
    examples = shots[0]
    # each example is a graded pair with its grade, as the answer this prompt asks for
    for q, d, answer in examples:
        assert json.loads(answer) == {"grade": _grade(q, d)}
        assert (q, d) not in graded  # never a pair being graded
    assert sorted(json.loads(a)["grade"] for _, _, a in examples) == [0, 1, 2, 3]
    assert [(e.query_id, e.doc_id) for e in result.examples] == [(q, d) for q, d, _ in
                                                                 examples]


def test_few_shot_selection_is_fixed_by_its_seed_and_in_the_cache_key(
        server, collection, fast_sleep, team_qrels, tmp_path):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    options = dict(runs=[], pairs=[("q1", "d3")], few_shot=3, few_shot_from=team_qrels,
                   cache=tmp_path / "c.sqlite")
    first = judge_collection(server, collection, fast_sleep, few_shot_seed=1, **options)
    again = judge_collection(server, collection, fast_sleep, few_shot_seed=1, **options)
    assert again.examples == first.examples and server.count == 1  # the cache answered
    other = judge_collection(server, collection, fast_sleep, few_shot_seed=3, **options)
    assert other.examples != first.examples and server.count == 2
    # the key names the examples, beside the messages that show them
    messages = [{"role": "user", "content": "x"}]
    assert cache_key("http://h/v1", "m", messages, {}) != cache_key(
        "http://h/v1", "m", messages, {}, examples=[["q1", "d1", 2.0]])


def test_few_shot_answers_follow_the_template_format(server, collection, fast_sleep,
                                                     team_qrels):
    server.script = lambda doc, n, body: Reply("Intent: x\nMatch: 1\nTrust: 1\nFinal grade: 1")
    judge_collection(server, collection, fast_sleep, runs=[], pairs=[("q1", "d3")],
                     prompt="assessor", few_shot=2, few_shot_from=team_qrels)
    for q, d, answer in _shots(server.bodies[0]):
        assert answer == f"Final grade: {_grade(q, d)}"


def test_few_shot_needs_judgments_with_enough_pairs(server, collection, fast_sleep,
                                                   tmp_path):
    with pytest.raises(OptionError, match="few_shot_from"):
        judge_collection(server, collection, fast_sleep, few_shot=2)
    small = tmp_path / "small.qrels"
    small.write_text("q1 0 d3 2\nq1 0 d1 1\n")  # d3 is graded by the run: one candidate
    with pytest.raises(InputError, match="only 1 graded pair"):
        judge_collection(server, collection, fast_sleep, runs=[], pairs=[("q1", "d3")],
                         few_shot=2, few_shot_from=small)
    assert server.count == 0
