"""Judging runs against a real local chat-completions server: grades, failures, retries,
resume, cache, budget and dry run."""

from __future__ import annotations

import asyncio
import json

import pytest

from rankscope.errors import JudgeError
from rankscope.judgments import Judgments
from rankscope.llm_judge.api import judge, judge_async

from .conftest import Reply, csv_rows, grades_script, judge_collection

ALL_PAIRS = {("q1", "d3"), ("q1", "d1"), ("q1", "d2"), ("q1", "d4"),
             ("q2", "d5"), ("q2", "d1"), ("q2", "d6")}


_run = judge_collection


_rows = csv_rows


def test_grades_parsed_and_written_in_the_judgments_format(server, collection, fast_sleep):
    answers = {
        "d3": '{"grade": 3}',
        "d1": '```json\n{"grade": 1}\n```',
        "d2": '{"why": "names the food", "grade": 2}',
        "d4": '{"grade": 0}',
        "d5": '<think>The passage says 12-16 hours: grade 3? maybe 2.</think>{"grade": 3}',
        "d6": ' {"grade": "0"}\n',
    }
    server.script = grades_script(answers)
    out = collection["dir"] / "grades.csv"
    result = _run(server, collection, fast_sleep, output=out)
    assert server.count == 7
    got = {(r["query_id"], r["doc_id"]): r for r in _rows(out)}
    assert set(got) == ALL_PAIRS
    expected = {"d3": "3", "d1": "1", "d2": "2", "d4": "0", "d5": "3", "d6": "0"}
    for (_, d), row in got.items():
        assert row["grade"] == expected[d]
        assert row["status"] == "graded"
        assert row["rater"] == "llm:tiny-judge"
        assert row["model"] == "tiny-judge"
        assert row["template_sha256"] == result.template_sha256
        assert row["prompt_tokens"] == "120" and row["completion_tokens"] == "6"
    # the judgments reader takes the file as it is
    j = Judgments.read(out, scale="graded")
    assert j.raters == ["llm:tiny-judge"]
    assert j.aggregate().to_dict()["q1"] == {"d3": 3.0, "d1": 1.0, "d2": 2.0, "d4": 0.0}
    # each request carried the model, temperature 0 and the prompt with query and passage
    body = next(b for b in server.bodies if "[[d3]]" in b["messages"][-1]["content"])
    assert body["model"] == "tiny-judge" and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "what do cats eat" in body["messages"][1]["content"]
    assert server.paths[0] == "/v1/chat/completions"
    assert result.usage.graded == 7 and result.usage.requests == 7
    assert result.usage.prompt_tokens == 7 * 120 and result.usage.completion_tokens == 7 * 6


def test_unrateable_answers_are_recorded_with_their_raw_text(server, collection, fast_sleep):
    raw_text = 'This passage is "quite" relevant\nto the query.'
    answers = {"d3": '{"grade": }', "d1": raw_text, "d2": '{"grade": 7}',
               "d4": "grade 1 or grade 2", "d5": '{"grade": 2}', "d6": ""}
    server.script = grades_script(answers)
    out = collection["dir"] / "grades.csv"
    result = _run(server, collection, fast_sleep, output=out)
    rows = {(r["query_id"], r["doc_id"]): r for r in _rows(out)}
    assert rows[("q2", "d5")]["grade"] == "2"
    for key in [("q1", "d3"), ("q1", "d1"), ("q2", "d1"), ("q1", "d2"), ("q1", "d4"),
                ("q2", "d6")]:
        assert rows[key]["grade"] == "" and rows[key]["status"] == "unrateable"
        assert rows[key]["reason"]
    # the raw answer is kept, JSON-escaped on one line
    assert json.loads('"' + rows[("q1", "d1")]["raw"] + '"') == raw_text
    assert "outside" in rows[("q1", "d2")]["reason"]
    assert result.usage.unrateable == 6 and result.usage.graded == 1
    j = Judgments.read(out, scale="graded")
    assert j.frame.get_column("grade").null_count() == 6  # seen, not graded


def test_429_with_retry_after_500s_and_slow_answers_are_retried(server, collection, fast_sleep):
    def script(doc, n, body):
        if doc == "d3" and n == 0:
            return Reply(status=429, headers={"Retry-After": "7"})
        if doc == "d1" and n < 2:
            return Reply(status=500)
        if doc == "d2" and n == 0:
            # no answer until the test ends: only the client's timeout ends this request
            return Reply('{"grade": 0}', delay=60.0)
        return Reply('{"grade": 2}')

    server.script = script
    # a timeout generous enough for a busy machine's local answers (the others must not
    # time out: the counts below would change)
    result = _run(server, collection, fast_sleep, timeout=3.0, concurrency=1, depth=3)
    # q1: d3 d1 d2; q2: d5 d1 d6 -> 6 pairs; 1 + 2 + 1 retries
    assert result.usage.retries == 4
    assert server.count == 6 + 4
    assert result.usage.graded == 6 and result.usage.failed == 0
    assert 7.0 in fast_sleep.delays  # Retry-After honoured exactly
    assert result.usage.statuses == {"200": 6, "429": 1, "500": 2, "timeout": 1}
    grades = {(r["query_id"], r["doc_id"]): r["grade"] for r in result.rows.to_dicts()}
    assert grades[("q1", "d2")] == 2.0  # the answer after the timeout, not the late one


def test_failures_are_recorded_and_retry_failed_asks_only_them(server, collection, fast_sleep):
    server.script = lambda doc, n, body: Reply(status=503) if doc == "d4" else Reply(
        '{"grade": 1}')
    out = collection["dir"] / "grades.csv"
    first = _run(server, collection, fast_sleep, output=out, max_retries=2)
    assert first.usage.failed == 1 and server.count == 6 + 3
    row = next(r for r in _rows(out) if r["doc_id"] == "d4")
    assert row["status"] == "failed" and "503" in row["reason"] and row["grade"] == ""
    server.reset()
    again = _run(server, collection, fast_sleep, output=out)
    assert server.count == 0  # failed is not asked again without --retry-failed
    # ... nor counted as done (before: "7 already done")
    assert again.usage.already_done == 6 and again.usage.failed_earlier == 1
    assert again.usage.failed_left == 1 and "--retry-failed" in again.incomplete()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    _run(server, collection, fast_sleep, output=out, retry_failed=True)
    assert server.count == 1 and "[[d4]]" in server.bodies[0]["messages"][-1]["content"]
    rows = _rows(out)
    assert len(rows) == 7
    assert next(r for r in rows if r["doc_id"] == "d4")["grade"] == "2"
    Judgments.read(out)  # one row per pair: readable without duplicates


def test_an_interrupted_run_resumes_where_it_stopped(server, collection, fast_sleep):
    stall_after = 3

    def script(doc, n, body):
        if server.count > stall_after:
            return Reply('{"grade": 3}', delay=10.0)  # hangs until released
        return Reply('{"grade": 1}')

    server.script = script
    out = collection["dir"] / "grades.jsonl"

    async def interrupted() -> None:
        task = asyncio.create_task(judge_async(
            endpoint=server.url, model="tiny-judge", queries=collection["queries"],
            docs=collection["docs"], runs=[collection["run"]], output=out, concurrency=1,
            sleep=fast_sleep, timeout=30.0))
        for _ in range(500):
            if server.count > stall_after:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    server.release.set()
    done = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(done) == stall_after
    asked_before = {(b["messages"][-1]["content"]) for b in server.bodies[:stall_after]}
    server.reset()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    result = _run(server, collection, fast_sleep, output=out)
    assert server.count == 7 - stall_after
    assert not asked_before & {b["messages"][-1]["content"] for b in server.bodies}
    assert result.usage.already_done == stall_after
    assert len(out.read_text().splitlines()) == 7
    assert Judgments.read(out).n_items == 7


def test_a_repeated_run_costs_zero_requests_and_any_change_misses(
        server, collection, fast_sleep, tmp_path):
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    cache = tmp_path / "answers.sqlite"
    base = dict(cache=cache, depth=2)  # 4 pairs
    first = _run(server, collection, fast_sleep, output=tmp_path / "a.csv", **base)
    assert server.count == 4 and first.usage.cache_hits == 0
    server.reset()
    second = _run(server, collection, fast_sleep, output=tmp_path / "b.csv", **base)
    assert server.count == 0
    assert second.usage.cache_hits == 4 and second.usage.saved_tokens == 4 * 126
    assert (second.rows.get_column("grade").to_list()
            == first.rows.get_column("grade").to_list())
    assert second.rows.get_column("cached").to_list() == [True] * 4

    template = tmp_path / "p.j2"
    from rankscope.judgments import GRADED
    from rankscope.llm_judge.prompts import load_template

    source = load_template(None, GRADED).source
    template.write_text(source)
    changes = [
        dict(model="other-judge"),
        dict(temperature=0.1),
        dict(settings={"seed": 1}),
        dict(settings={"top_p": 0.9}),
        dict(prompt=template),  # the same text as the built-in: a hit
        dict(endpoint=server.url.replace("127.0.0.1", "localhost")),
    ]
    expected_requests = [4, 4, 4, 4, 0, 4]
    for i, (change, want) in enumerate(zip(changes, expected_requests, strict=True)):
        server.reset()
        _run(server, collection, fast_sleep, output=tmp_path / f"c{i}.csv", **{**base, **change})
        assert server.count == want, change
    # one character of the prompt
    changed = source.replace("no other text.", "no other text!")
    assert len(changed) == len(source) and sum(
        a != b for a, b in zip(changed, source, strict=True)) == 1
    template.write_text(changed)
    server.reset()
    _run(server, collection, fast_sleep, output=tmp_path / "d.csv", prompt=template, **base)
    assert server.count == 4
    server.reset()
    _run(server, collection, fast_sleep, output=tmp_path / "e.csv", prompt=template, **base)
    assert server.count == 0


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_call_budget_stops_at_exactly_the_limit(server, collection, fast_sleep,
                                                    concurrency):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    out = collection["dir"] / "grades.csv"
    result = _run(server, collection, fast_sleep, output=out, max_calls=5,
                  concurrency=concurrency)
    assert server.count == 5
    assert len(_rows(out)) == 5
    assert result.usage.stopped and "call budget" in result.usage.stopped
    assert result.usage.not_reached == 2
    server.reset()
    _run(server, collection, fast_sleep, output=out)
    assert server.count == 2 and len(_rows(out)) == 7


def test_retries_count_against_the_call_budget(server, collection, fast_sleep):
    server.script = lambda doc, n, body: Reply(status=500) if n == 0 else Reply('{"grade": 1}')
    result = _run(server, collection, fast_sleep, max_calls=4, concurrency=1)
    assert server.count == 4
    assert result.usage.graded == 2  # two pairs, each a 500 then an answer


def _estimates(bodies, answer_tokens):
    """The token estimate of each request as documented: four characters a token plus four
    a message, plus the answer's tokens (``max_tokens``)."""
    import math

    return [sum(math.ceil(len(m["content"]) / 4) + 4 for m in b["messages"]) + answer_tokens
            for b in bodies]


def test_the_token_budget(server, collection, fast_sleep):
    server.script = lambda doc, n, body: Reply('{"grade": 1}', prompt_tokens=100,
                                               completion_tokens=5)
    none = _run(server, collection, fast_sleep, max_tokens=0)
    assert server.count == 0 and none.usage.stopped and "token budget" in none.usage.stopped
    # every request's estimate, in the order a run asks them (one at a time)
    _run(server, collection, fast_sleep, concurrency=1, settings={"max_tokens": 10})
    estimates = _estimates(server.bodies, 10)
    server.reset()
    # one at a time, a request starts while the tokens used (105 an answer) plus its
    # estimate stay within the limit; the first that would pass it ends the run
    limit = 800
    expected, used = 0, 0
    for estimate in estimates:
        if used + estimate > limit:
            break
        expected, used = expected + 1, used + 105
    assert 1 < expected < 7  # the limit stops the run part way (a check of the setup)
    out = collection["dir"] / "grades.csv"
    result = _run(server, collection, fast_sleep, max_tokens=limit, concurrency=1,
                  settings={"max_tokens": 10}, output=out)
    assert server.count == expected and len(_rows(out)) == expected
    assert result.usage.prompt_tokens + result.usage.completion_tokens == expected * 105
    assert "token budget (800)" in result.usage.stopped
    server.reset()
    _run(server, collection, fast_sleep, output=out, settings={"max_tokens": 10})
    assert server.count == 7 - expected


def test_the_token_budget_with_requests_in_flight(server, collection, fast_sleep):
    """Several requests in flight: how many start depends on when answers settle, so the
    test holds what the budget promises whatever the order: the tokens reported never pass
    the limit, and the run stopped only when the next request could not fit."""
    server.script = lambda doc, n, body: Reply('{"grade": 1}', prompt_tokens=100,
                                               completion_tokens=5)
    _run(server, collection, fast_sleep, concurrency=1, settings={"max_tokens": 10})
    estimate_of = dict(zip((b["messages"][-1]["content"] for b in server.bodies),
                           _estimates(server.bodies, 10), strict=True))
    server.reset()
    limit = 800
    out = collection["dir"] / "grades.csv"
    result = _run(server, collection, fast_sleep, max_tokens=limit, concurrency=3,
                  settings={"max_tokens": 10}, output=out)
    sent = {b["messages"][-1]["content"] for b in server.bodies}
    used = result.usage.prompt_tokens + result.usage.completion_tokens
    assert used == server.count * 105 <= limit and len(_rows(out)) == server.count
    assert "token budget (800)" in result.usage.stopped
    assert max(e for text, e in estimate_of.items() if text not in sent) > limit - used
    asked = server.count
    server.reset()
    _run(server, collection, fast_sleep, output=out, settings={"max_tokens": 10})
    assert server.count == 7 - asked


def test_dry_run_sends_nothing_and_counts(server, collection, fast_sleep, tmp_path, capsys):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    cache = tmp_path / "answers.sqlite"
    _run(server, collection, fast_sleep, cache=cache, output=tmp_path / "x.csv", depth=1)
    server.reset()
    dry = _run(server, collection, fast_sleep, cache=cache, dry_run=True)
    assert server.count == 0 and dry.usage is None
    assert dry.plan.pairs == 7 and dry.plan.cache_hits == 2 and dry.plan.calls == 5
    assert dry.plan.prompt_tokens > 5 * 100  # the prompts are a few hundred characters each
    # the command line prints the plan and sends nothing either
    from rankscope.cli.main import main

    code = main(["judge", "--endpoint", server.url, "--model", "tiny-judge",
                 "--queries", str(collection["queries"]), "--docs", str(collection["docs"]),
                 "--run", str(collection["run"]), "--cache", str(cache), "--dry-run"])
    assert code == 0 and server.count == 0
    text = capsys.readouterr().out
    assert "pairs 7" in text and "2 in the cache, 5 calls" in text and "no request" in text


def test_samples_majority_vote_and_self_consistency(server, collection, fast_sleep, tmp_path):
    votes = {"d3": ["2", "2", "3"], "d1": ["1", "2", "3"], "d2": ["0", "0", "0"],
             "d4": ["1", "x", "1"]}
    server.script = lambda doc, n, body: Reply(
        f'{{"grade": {votes[doc][n]}}}' if votes[doc][n] != "x" else "no idea")
    cache = tmp_path / "c.sqlite"
    result = _run(server, collection, fast_sleep, pairs=[("q1", d) for d in votes],
                  runs=[], samples=3, temperature=0.7, cache=cache, concurrency=1)
    assert server.count == 12
    rows = {r["doc_id"]: r for r in result.rows.to_dicts()}
    assert rows["d3"]["grade"] == 2.0 and rows["d3"]["votes"] == "2,2,3"
    assert rows["d3"]["consistency"] == pytest.approx(2 / 3)
    assert rows["d1"]["grade"] is None and rows["d1"]["status"] == "no_majority"
    assert rows["d2"]["grade"] == 0.0 and rows["d2"]["consistency"] == 1.0
    assert rows["d4"]["grade"] == 1.0 and rows["d4"]["votes"] == "1,?,1"
    assert result.usage.self_consistency == pytest.approx((2 / 3 + 1 / 3 + 1 + 2 / 3) / 4)
    server.reset()
    _run(server, collection, fast_sleep, pairs=[("q1", d) for d in votes], runs=[],
         samples=3, temperature=0.7, cache=cache)
    assert server.count == 0


def test_holes_and_pairs_files(server, collection, fast_sleep, tmp_path):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d3 2\nq1 0 d1 0\nq2 0 d5 3\n")
    result = _run(server, collection, fast_sleep, holes_of=qrels)
    assert {(r["query_id"], r["doc_id"]) for r in result.rows.to_dicts()} == ALL_PAIRS - {
        ("q1", "d3"), ("q1", "d1"), ("q2", "d5")}
    server.reset()
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("qid,docid,rank,grade\nq2,d6,3,\nq1,d4,4,\n")
    again = _run(server, collection, fast_sleep, pairs=pairs, runs=[])
    assert server.count == 2
    assert sorted((r["query_id"], r["doc_id"]) for r in again.rows.to_dicts()) == [
        ("q1", "d4"), ("q2", "d6")]


def test_an_endpoint_that_refuses_stops_the_run(server, collection, fast_sleep, tmp_path):
    server.script = lambda doc, n, body: Reply(status=401)
    with pytest.raises(JudgeError, match="401"):
        _run(server, collection, fast_sleep, concurrency=1, output=tmp_path / "g.csv")
    assert server.count == 1


def test_the_api_key_comes_from_the_named_variable(server, collection, fast_sleep, monkeypatch):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-local-123")
    _run(server, collection, fast_sleep, api_key_env="JUDGE_TEST_KEY", depth=1)
    assert {h["Authorization"] for h in server.headers} == {"Bearer sk-local-123"}
    monkeypatch.delenv("JUDGE_TEST_KEY")
    from rankscope.errors import OptionError

    with pytest.raises(OptionError, match="JUDGE_TEST_KEY"):
        _run(server, collection, fast_sleep, api_key_env="JUDGE_TEST_KEY", depth=1)


def test_resuming_refuses_to_mix_prompts_or_settings(server, collection, fast_sleep, tmp_path):
    from rankscope.errors import OptionError

    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    out = tmp_path / "grades.csv"
    _run(server, collection, fast_sleep, output=out, depth=1)
    assert _rows(out)[0]["settings"] == '{"temperature":0.0}'
    server.reset()
    template = tmp_path / "p.j2"
    template.write_text("Grade {{ query }} / {{ document }} as {\"grade\": N}")
    for change in (dict(temperature=0.5), dict(prompt=template), dict(settings={"seed": 3})):
        with pytest.raises(OptionError, match="made with another"):
            _run(server, collection, fast_sleep, output=out, **change)
    assert server.count == 0
    # another rater name keeps both in one file
    _run(server, collection, fast_sleep, output=out, depth=1, temperature=0.5, rater="llm:hot")
    assert server.count == 2
    assert sorted(Judgments.read(out).raters) == ["llm:hot", "llm:tiny-judge"]


def test_connection_errors_are_retried_then_recorded_as_failed(server, collection, fast_sleep,
                                                                tmp_path):
    """Once the endpoint has answered, a pair whose requests get no answer (the connection
    closed) is retried, then recorded as failed; the run goes on."""
    server.script = lambda doc, n, body: Reply(reset=True) if doc == "d5" else Reply(
        '{"grade": 1}')
    out = tmp_path / "g.csv"
    result = judge(endpoint=server.url, model="m", queries=collection["queries"],
                   docs=collection["docs"], pairs=[("q1", "d3"), ("q2", "d5"), ("q2", "d6")],
                   max_retries=2, concurrency=1, output=out, sleep=fast_sleep, timeout=2.0)
    assert result.usage.failed == 1 and result.usage.graded == 2
    assert result.usage.requests == 1 + 3 + 1
    assert result.usage.statuses == {"200": 2, "connection error": 3}
    assert len(fast_sleep.delays) == 2  # two waits between the three tries of d5
    rows = {r["doc_id"]: r for r in _rows(out)}
    assert rows["d5"]["status"] == "failed" and "connection error" in rows["d5"]["reason"]


def test_a_killed_process_resumes_where_it_stopped(server, collection, tmp_path):
    """SIGKILL in the middle of a run of the command: the grades written survive, and the
    same command asks only what is left."""
    import os
    import signal
    import subprocess
    import sys

    from .conftest import wait_until

    done_before_kill = 3
    server.script = lambda doc, n, body: (Reply('{"grade": 1}') if server.count
                                          <= done_before_kill else Reply(delay=30.0))
    out = tmp_path / "grades.csv"
    argv = ["judge", "--endpoint", server.url, "--model", "tiny", "--queries",
            str(collection["queries"]), "--docs", str(collection["docs"]), "--run",
            str(collection["run"]), "--concurrency", "1", "-o", str(out), "--cache",
            str(tmp_path / "c.sqlite")]
    proc = subprocess.Popen([sys.executable, "-m", "rankscope", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: server.count > done_before_kill, timeout=30.0)
        wait_until(lambda: out.exists() and len(_rows(out)) == done_before_kill, timeout=10.0)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    server.release.set()
    kept = _rows(out)
    assert len(kept) == done_before_kill and all(r["grade"] == "1" for r in kept)
    server.reset()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    from rankscope.cli.main import main

    assert main(argv) == 0
    assert server.count == len(ALL_PAIRS) - done_before_kill
    rows = _rows(out)
    assert {(r["query_id"], r["doc_id"]) for r in rows} == ALL_PAIRS and len(rows) == 7


@pytest.mark.parametrize("concurrency", [1, 3, 6])
def test_no_more_requests_in_flight_than_the_concurrency(server, collection, fast_sleep,
                                                        concurrency):
    """Exactly ``concurrency`` requests in flight at once, never more.

    The first request goes alone (the endpoint is not known to answer yet); the next
    ``concurrency`` ones are held at a barrier until all of them have arrived, so the run
    must have that many in flight (with fewer, the barrier breaks after its bounded
    wait). The server counts the requests it holds at once, and the client exposes its
    own count of requests in flight: neither passes the concurrency."""
    import threading

    lock = threading.Lock()
    barrier = threading.Barrier(concurrency, timeout=20)
    in_flight, peak, broken = [0], [0], []

    def script(doc, n, body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            arrived = server.count
        try:
            if 2 <= arrived <= 1 + concurrency:
                barrier.wait()
        except threading.BrokenBarrierError:
            broken.append(arrived)
        finally:
            with lock:
                in_flight[0] -= 1
        return Reply('{"grade": 1}')

    server.script = script
    result = _run(server, collection, fast_sleep, concurrency=concurrency)
    assert broken == [] and result.usage.graded == 7
    assert peak[0] == concurrency and result.usage.peak_in_flight == concurrency
