"""The strict answer reader: only what the model clearly said becomes a grade.

The reproductions of issue 25 section 1 run against the scripted server (each failed
before the strict reader: the answer became a grade); the reader's rules, ``--parse
lenient`` and the ``<think>`` handling (issue 32) are checked on the parser itself.
"""

from __future__ import annotations

import csv
import json

import pytest

from rankscope.judgments import BINARY, DETAIL, GRADED
from rankscope.llm_judge.api import judge
from rankscope.llm_judge.parse import parse_grade

from .conftest import Reply


def _rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {(r["query_id"], r["doc_id"]): r for r in csv.DictReader(handle)}


def _judge(server, collection, fast_sleep, pairs, **kw):
    options = dict(endpoint=server.url, model="tiny-judge", queries=collection["queries"],
                   docs=collection["docs"], sleep=fast_sleep, timeout=5.0,
                   output=collection["dir"] / "grades.csv")
    options.update(kw)
    return judge(pairs, **options)


# --- issue 25 section 1, against the server -------------------------------------------------

def test_negated_hedged_and_doubled_grades_are_unrateable(server, collection, fast_sleep):
    """Before: the first two became grade 3 (the pattern found "score of 3", "grade 3"),
    the third grade 2 (the first JSON object won)."""
    answers = {
        "d3": "I would not give this a score of 3; it is barely related.",
        "d1": "Not a grade 3 answer.",
        "d2": '{"grade": 2} {"grade": 3}',
        "d4": '{"grade": 1}',
    }
    server.script = lambda doc, n, body: Reply(answers[doc])
    result = _judge(server, collection, fast_sleep, [("q1", d) for d in answers])
    rows = _rows(collection["dir"] / "grades.csv")
    for doc in ("d3", "d1", "d2"):
        row = rows[("q1", doc)]
        assert (row["grade"], row["status"]) == ("", "unrateable"), row
        assert row["reason"]
    assert "JSON object" in rows[("q1", "d3")]["reason"]
    assert "several" in rows[("q1", "d2")]["reason"]
    assert rows[("q1", "d4")]["grade"] == "1"
    assert result.usage.unrateable == 3 and result.usage.graded == 1


def test_answers_cut_off_or_still_reasoning_are_unrateable(server, collection, fast_sleep):
    """Before: a digit in an answer cut off by the token limit, or inside reasoning that
    never closed, became the grade."""
    answers = {
        "d3": Reply('{"grade": 2', finish_reason="length"),
        "d1": Reply('{"grade": 2}', finish_reason="length"),
        "d2": Reply("<think>The passage answers it; grade 3 seems right, but"),
        "d4": Reply('{"grade": 0}'),
    }
    server.script = lambda doc, n, body: answers[doc]
    _judge(server, collection, fast_sleep, [("q1", d) for d in answers])
    rows = _rows(collection["dir"] / "grades.csv")
    for doc in ("d3", "d1"):
        assert rows[("q1", doc)]["status"] == "unrateable"
        assert "cut off" in rows[("q1", doc)]["reason"]
        assert rows[("q1", doc)]["finish_reason"] == "length"
    assert rows[("q1", "d2")]["status"] == "unrateable"
    assert "<think>" in rows[("q1", "d2")]["reason"]
    assert rows[("q1", "d4")]["grade"] == "0"


def test_the_raw_answer_and_the_reasoning_are_kept_for_every_row(server, collection,
                                                                 fast_sleep):
    """Before: only rows without a grade kept the answer; ``reasoning_content`` was dropped."""
    server.script = lambda doc, n, body: Reply(
        '{"grade": 3}', reasoning="The need is cat food; this passage is about it.")
    _judge(server, collection, fast_sleep, [("q1", "d3")])
    row = _rows(collection["dir"] / "grades.csv")[("q1", "d3")]
    assert row["grade"] == "3"
    assert json.loads('"' + row["raw"] + '"') == '{"grade": 3}'
    assert json.loads('"' + row["reasoning"] + '"') == (
        "The need is cat food; this passage is about it.")


def test_reasoning_content_is_read_apart_from_the_answer(server, collection, fast_sleep):
    """The server's ``reasoning_content`` holds a grade line of its own; the answer holds
    the final one.

    Mutation caught: reading ``reasoning_content`` as part of the answer (two final
    lines with different grades: unrateable instead of 1)."""
    server.script = lambda doc, n, body: Reply(
        "Intent: cat food.\nMatch: 1\nTrust: 1\nFinal grade: 1",
        reasoning="Is it perfect?\nFinal grade: 3\nNo: it only names the food.")
    result = _judge(server, collection, fast_sleep, [("q1", "d3")], prompt="assessor")
    assert result.rows.get_column("grade").to_list() == [1.0]


def test_lenient_parsing_keeps_the_tolerant_reader(server, collection, fast_sleep):
    answers = {"d3": "I'd say it's highly relevant, grade 2", "d1": "Grade: 1",
               "d2": 'Sure! ```json\n{"grade": 0}\n```'}
    server.script = lambda doc, n, body: Reply(answers[doc])
    cache = collection["dir"] / "c.sqlite"
    strict = _judge(server, collection, fast_sleep, [("q1", d) for d in answers], cache=cache)
    assert strict.usage.unrateable == 3
    lenient = _judge(server, collection, fast_sleep, [("q1", d) for d in answers],
                     parse="lenient", output=collection["dir"] / "lenient.csv", cache=cache)
    rows = {r["doc_id"]: r["grade"] for r in lenient.rows.to_dicts()}
    assert rows == {"d3": 2.0, "d1": 1.0, "d2": 0.0}
    assert server.count == 3  # the lenient reading of the cached answers costs nothing


# --- the reader's rules ---------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    '{"grade": 2}',
    '  {"grade": 2}\n',
    '```json\n{"grade": 2}\n```',
    '{"reasoning": "on topic {not json}", "grade": 2}',
    '{"Grade": 2}',
    '{"grade": "2"}',
    '<think>grade 0? no, grade 3</think>\n{"grade": 2}',
])
def test_strict_json_answers_that_give_a_grade(answer):
    parsed = parse_grade(answer, GRADED)
    assert (parsed.grade, parsed.how) == (2.0, "json")


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty answer"),
    ("Highly relevant!", "no JSON object"),
    ("I'd say it's highly relevant, grade 2", "no JSON object"),
    ("2", "no JSON object"),
    ('Sure! {"grade": 2}', "text before the JSON object"),
    ('{"grade": 2} Hope this helps.', "text after the JSON object"),
    ('{"grade": 2}\n{"grade": 2}', "several JSON objects"),
    ('{"grade": 2, "grade": 3}', "several grades"),
    ('{"grade": 2', "not valid JSON"),
    ('{"score": 2}', 'no "grade"'),
    ('{"grade": 5}', "outside"),
    ('{"grade": 2.5}', "outside"),
    ('{"grade": true}', "boolean"),
    ('{"grade": "perfect"}', "not a number"),
    ('{"grade": NaN}', "not a finite number"),
    ('[{"grade": 2}]', "not a JSON object"),
    ("<think>It is about cats, so grade 2", "<think>"),
])
def test_strict_json_answers_that_are_unrateable(answer, reason):
    parsed = parse_grade(answer, GRADED)
    assert parsed.grade is None and parsed.how == "unrateable"
    assert reason in parsed.reason, parsed.reason


def test_a_cut_off_answer_is_never_a_grade_in_either_mode():
    for mode in ("strict", "lenient"):
        parsed = parse_grade('{"grade": 2}', GRADED, mode=mode, finish_reason="length")
        assert parsed.grade is None and "cut off" in parsed.reason
        assert parse_grade('{"grade": 2}', GRADED, mode=mode, finish_reason="stop").grade == 2


MARKER = "Final grade:"


@pytest.mark.parametrize("answer", [
    "Intent: cat food.\nMatch: 2\nTrust: 1\nFinal grade: 2",
    "Final grade: 2",
    "Intent: x\n\n**Final grade: 2**\n",
    "Intent: x\nFINAL GRADE: 2.",
    "Intent: x\n## Final grade: **2**",
])
def test_final_line_answers_that_give_a_grade(answer):
    parsed = parse_grade(answer, GRADED, marker=MARKER)
    assert (parsed.grade, parsed.how) == (2.0, "line")


@pytest.mark.parametrize(("answer", "reason"), [
    ("Intent: x\nMatch: 2\nTrust: 1", "no final line"),
    ("Final grade: 2\nBut on reflection it is weaker.", "text after the final line"),
    ("Final grade: 2\nFinal grade: 3", "several final lines"),
    ("Intent: x\nFinal grade: not 3", "one number"),
    ("Intent: x\nFinal grade: 2 or 3", "one number"),
    ("Intent: x\nFinal grade: 4", "outside"),
    ('{"grade": 2}', "no final line"),
])
def test_final_line_answers_that_are_unrateable(answer, reason):
    parsed = parse_grade(answer, GRADED, marker=MARKER)
    assert parsed.grade is None and parsed.how == "unrateable"
    assert reason in parsed.reason, parsed.reason


@pytest.mark.parametrize(("answer", "grade", "how"), [
    ("I'd say it's highly relevant, grade 2", 2.0, "pattern"),
    ('Sure! ```json\n{"grade": 1}\n```', 1.0, "json"),
    ('{"relevance": "poor"}', 0.0, "json"),
    ("Grade: 1", 1.0, "pattern"),
    ("3", 3.0, "pattern"),
])
def test_lenient_answers(answer, grade, how):
    parsed = parse_grade(answer, GRADED, mode="lenient")
    assert (parsed.grade, parsed.how) == (grade, how)
    assert parse_grade(answer, GRADED).grade is None  # strict: not the format asked for


def test_lenient_reads_the_last_final_line_of_a_stepwise_answer():
    answer = "Intent: cats\nMatch score: 2\nTrust score: 1\nFinal grade: 2\nThanks!"
    assert parse_grade(answer, GRADED, mode="lenient", marker=MARKER).grade == 2.0
    assert parse_grade(answer, GRADED, marker=MARKER).grade is None


def test_the_scale_decides_what_is_on_it():
    assert parse_grade('{"grade": 7}', DETAIL).grade == 7.0
    assert parse_grade('{"grade": 0}', DETAIL).grade is None
    assert parse_grade('{"grade": 1}', BINARY).grade == 1.0
    assert parse_grade('{"grade": 2}', BINARY).grade is None


def test_an_unknown_mode_is_refused():
    from rankscope.errors import OptionError

    with pytest.raises(OptionError, match="strict or lenient"):
        parse_grade('{"grade": 1}', GRADED, mode="loose")


# --- the <think> handling (issue 32) --------------------------------------------------------

def test_think_is_set_aside_by_the_lenient_reader():
    """Mutation caught: not setting ``<think>...</think>`` aside (the pattern then finds
    "grade 3" in the reasoning and reads 3, or two grades)."""
    parsed = parse_grade("<think>Is this grade 3? No...</think> 1", GRADED, mode="lenient")
    assert (parsed.grade, parsed.how) == (1.0, "pattern")


def test_think_is_set_aside_by_the_strict_json_reader():
    """Mutation caught: not setting ``<think>...</think>`` aside (the answer is then text
    around a JSON object: unrateable instead of 1)."""
    answer = '<think>Maybe {"grade": 3}? No, it only names the food.</think>\n{"grade": 1}'
    assert parse_grade(answer, GRADED).grade == 1.0


def test_think_is_set_aside_by_the_final_line_reader():
    """Mutation caught: not setting ``<think>...</think>`` aside (two final lines: 3 in the
    reasoning, 1 in the answer, so unrateable instead of 1)."""
    answer = "<think>\nFinal grade: 3?\nNo: the passage only names the food.\n</think>\n" \
             "Intent: cat food\nFinal grade: 1"
    assert parse_grade(answer, GRADED, marker=MARKER).grade == 1.0


def test_a_closing_think_without_its_opening_ends_the_reasoning():
    """Some servers put ``<think>`` in the prompt, so the answer starts inside the reasoning.

    Mutation caught: treating only complete ``<think>...</think>`` pairs as reasoning
    (the lenient pattern then reads "grade 3" from the reasoning)."""
    answer = "The passage is about cats; grade 3? Too generous.</think>\n1"
    assert parse_grade(answer, GRADED, mode="lenient").grade == 1.0
    assert parse_grade('It helps.</think>{"grade": 2}', GRADED).grade == 2.0


def test_an_unclosed_think_is_unrateable_in_both_modes():
    """Mutation caught: reading an unclosed ``<think>`` as an answer (lenient finds
    "grade 3")."""
    for mode in ("strict", "lenient"):
        parsed = parse_grade("<think>I would say grade 3 because", GRADED, mode=mode)
        assert parsed.grade is None and "<think>" in parsed.reason
