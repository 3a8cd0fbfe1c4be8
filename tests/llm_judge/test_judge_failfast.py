"""Exit codes and failing fast (issue 25 section 3), against the scripted server or a port
where nothing listens: 0 done, 2 an endpoint that cannot be used at all (or a bad URL),
3 incomplete (failed pairs, a budget, an endpoint that stopped answering)."""

from __future__ import annotations

import socket

import pytest

from rankscope.cli.main import main
from rankscope.errors import JudgeError, OptionError
from rankscope.llm_judge.api import judge

from .conftest import Reply, csv_rows


def _dead_port() -> int:
    with socket.socket() as s:  # bound, then closed: nobody listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _args(url, collection, *more):
    return ["judge", "--endpoint", url, "--model", "tiny", "--queries",
            str(collection["queries"]), "--docs", str(collection["docs"]), "--run",
            str(collection["run"]), *more]


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_dead_endpoint_stops_at_the_first_request(collection, fast_sleep, tmp_path):
    """Before: every pair was retried (6 requests a pair, with waits) and recorded as
    failed; the run "succeeded"."""
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    out = tmp_path / "g.csv"
    with pytest.raises(JudgeError, match=r"cannot use the endpoint .* no answer"):
        judge(endpoint=url, model="m", queries=collection["queries"], docs=collection["docs"],
              runs=[collection["run"]], output=out, sleep=fast_sleep, concurrency=4)
    assert fast_sleep.delays == []  # no retry, no wait: one request, then the error
    assert not out.exists()


def test_a_dead_endpoint_exits_2_with_one_line(collection, tmp_path, capsys):
    """Before: exit 0 after retrying every pair."""
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    out = tmp_path / "g.csv"
    code = main(_args(url, collection, "-o", str(out), "--max-retries", "1"))
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and "cannot use the endpoint" in err and "is the server running" in err
    assert not out.exists()


def test_an_endpoint_that_stops_answering_stops_the_run(server, collection, fast_sleep,
                                                       tmp_path):
    """Before: every pair left was retried six times and recorded as failed."""
    server.script = lambda doc, n, body: (Reply('{"grade": 1}') if server.count <= 2
                                          else Reply(reset=True))
    out = tmp_path / "g.csv"
    result = judge(endpoint=server.url, model="m", queries=collection["queries"],
                   docs=collection["docs"], runs=[collection["run"]], output=out,
                   sleep=fast_sleep, concurrency=1)
    u = result.usage
    # two answers; the third pair's 6 requests fail (it is recorded failed), the fourth
    # pair's 2 more make 8 in a row without an answer: the run stops there
    assert server.count == 2 + 6 + 2 == u.requests
    assert (u.graded, u.failed, u.not_reached) == (2, 1, 4)
    assert "stopped answering" in u.stopped and "8 requests in a row" in u.stopped
    left = result.incomplete()
    assert "4 pair(s) not reached" in left and "run the same command again" in left
    assert "--retry-failed" in left


def test_an_endpoint_that_stops_answering_exits_3(server, collection, tmp_path, capsys):
    server.script = lambda doc, n, body: (Reply('{"grade": 1}') if server.count <= 1
                                          else Reply(reset=True))
    out = tmp_path / "g.csv"
    code = main(_args(server.url, collection, "-o", str(out), "--max-retries", "1",
                      "--concurrency", "6"))
    captured = capsys.readouterr()
    err = _one_line(captured.err)
    assert code == 3 and "not reached" in err and "run the same command again" in err
    assert "stopped: the endpoint" in captured.out


def test_failed_pairs_exit_3_and_name_the_option(server, collection, tmp_path, capsys):
    """Before: exit 0 with failed pairs."""
    server.script = lambda doc, n, body: Reply(status=503) if doc == "d4" else Reply(
        '{"grade": 1}')
    out = tmp_path / "g.csv"
    code = main(_args(server.url, collection, "-o", str(out), "--max-retries", "0"))
    err = _one_line(capsys.readouterr().err)
    assert code == 3 and "1 pair(s) failed: --retry-failed asks them again" in err
    # a rerun without the option asks nothing and is still incomplete
    assert main(_args(server.url, collection, "-o", str(out))) == 3
    capsys.readouterr()
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    assert main(_args(server.url, collection, "-o", str(out), "--retry-failed")) == 0


def test_a_budget_stop_exits_3_and_says_how_to_continue(server, collection, tmp_path, capsys):
    """Before: exit 0 with pairs not reached."""
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    out = tmp_path / "g.csv"
    code = main(_args(server.url, collection, "-o", str(out), "--max-calls", "3"))
    captured = capsys.readouterr()
    err = _one_line(captured.err)
    assert code == 3 and "4 pair(s) not reached (the call budget (3) is spent)" in err
    assert "--max-calls" in err and "graded 3" in captured.out
    assert main(_args(server.url, collection, "-o", str(out))) == 0
    assert server.count == 7


def test_an_endpoint_that_answers_no_request_usably_exits_2(server, collection, tmp_path,
                                                            capsys):
    """A 400 for every request (a setting the server refuses): the first 3 requests fail,
    none gave a completion, the run stops. Before: exit 0 after failing every pair."""
    server.script = lambda doc, n, body: Reply(status=400)
    out = tmp_path / "g.csv"
    code = main(_args(server.url, collection, "-o", str(out), "--setting", "logit_bias=1"))
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and "cannot use the endpoint" in err and "HTTP 400" in err
    assert "first 3 requests failed" in err
    assert server.count == 3  # a 400 is not retried; one at a time until a completion
    assert [r["status"] for r in csv_rows(out)] == ["failed", "failed"]


def test_a_server_failing_every_request_stops_after_three_pairs(server, collection,
                                                               fast_sleep):
    """500 to everything: three pairs' retries, then the run stops (before: every pair's)."""
    server.script = lambda doc, n, body: Reply(status=500)
    with pytest.raises(JudgeError, match="first 3 requests failed"):
        judge(endpoint=server.url, model="m", queries=collection["queries"],
              docs=collection["docs"], runs=[collection["run"]], sleep=fast_sleep,
              max_retries=2, concurrency=4)
    assert server.count == 3 * 3


def test_one_failing_pair_first_does_not_stop_the_run(server, collection, fast_sleep):
    server.script = lambda doc, n, body: Reply(status=500) if doc == "d3" else Reply(
        '{"grade": 1}')
    result = judge(endpoint=server.url, model="m", queries=collection["queries"],
                   docs=collection["docs"], runs=[collection["run"]], sleep=fast_sleep,
                   max_retries=1)
    assert (result.usage.failed, result.usage.graded) == (1, 6)
    assert "--retry-failed" in result.incomplete()


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/v1", "http://", "http:/x/v1",
                                 "http://host name/v1"])
def test_a_bad_endpoint_url_is_refused_at_once(url, collection, fast_sleep, tmp_path, capsys):
    """Before: ``notaurl`` was tried six times a pair (connection errors), exit 0."""
    out = tmp_path / "g.csv"
    code = main(_args(url, collection, "-o", str(out), "--max-retries", "0"))
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and "http(s) URL" in err and not out.exists()
    with pytest.raises(OptionError, match="http"):
        judge([("q1", "d3")], endpoint=url, model="m", queries=collection["queries"],
              docs=collection["docs"], sleep=fast_sleep)
    assert fast_sleep.delays == []


def test_a_200_whose_body_is_not_json_is_retried_like_a_5xx(server, collection, fast_sleep):
    """Before: the pair failed at once ("malformed response body")."""
    server.script = lambda doc, n, body: Reply(body="<html>502 Bad Gateway</html>") if n == 0 \
        else Reply('{"grade": 2}')
    result = judge([("q1", "d3")], endpoint=server.url, model="m",
                   queries=collection["queries"], docs=collection["docs"], sleep=fast_sleep)
    assert result.rows.get_column("grade").to_list() == [2.0]
    assert result.usage.retries == 1 and len(fast_sleep.delays) == 1
    assert result.usage.statuses == {"200 not JSON": 1, "200": 1}


def test_dry_run_respects_the_budget_and_creates_no_file(server, collection, tmp_path,
                                                         capsys):
    """Before: the dry run counted 7 calls past --max-calls 3 and created the cache file."""
    cache, out = tmp_path / "c.sqlite", tmp_path / "g.csv"
    code = main(_args(server.url, collection, "--cache", str(cache), "-o", str(out),
                      "--max-calls", "3", "--dry-run", "-f", "json"))
    import json

    plan = json.loads(capsys.readouterr().out)["plan"]
    assert code == 0 and server.count == 0
    assert (plan["calls"], plan["to_grade"], plan["not_reached"]) == (3, 7, 4)
    assert "call budget (3)" in plan["stopped_by"]
    assert not cache.exists() and not out.exists()
    # a token budget: the estimates of the calls counted stay within it
    code = main(_args(server.url, collection, "--max-tokens", "1000", "--dry-run", "-f",
                      "json"))
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["prompt_tokens"] + plan["completion_tokens"] <= 1000
    assert plan["calls"] + plan["not_reached"] == 7 and plan["not_reached"] > 0


def test_a_dry_run_leaves_existing_files_as_they_are(server, collection, tmp_path):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    cache, out = tmp_path / "c.sqlite", tmp_path / "g.csv"
    assert main(_args(server.url, collection, "--cache", str(cache), "-o", str(out),
                      "--depth", "1")) == 0
    text = out.read_text()
    out.write_text(text + text.splitlines()[-1][:20])  # a cut-off last row
    before = out.read_bytes(), cache.read_bytes()
    assert main(_args(server.url, collection, "--cache", str(cache), "-o", str(out),
                      "--dry-run")) == 0
    assert (out.read_bytes(), cache.read_bytes()) == before
