"""Asking unrateable pairs again, resuming only the run a file holds, repairing a cut-off
row, row order and progress (issue 25 sections 2, 4 and 6), against the scripted server."""

from __future__ import annotations

import json
import threading

import pytest

from rankscope.cli.main import main
from rankscope.errors import OptionError
from rankscope.judgments import Judgments

from .conftest import Reply, csv_rows, judge_collection

_rows = csv_rows


_run = judge_collection


# --- section 2: unrateable answers can be asked again -------------------------------------

def test_retry_unrateable_asks_those_pairs_again_past_the_cache(server, collection,
                                                               fast_sleep, tmp_path):
    """Before: an unrateable answer was cached for good: after the server was fixed, a
    rerun (even with --retry-failed, even into a new file) made 0 requests."""
    broken = {"d2", "d6"}
    server.script = lambda doc, n, body: Reply("Sorry, I cannot help with that." if doc in
                                               broken else '{"grade": 1}')
    out, cache = tmp_path / "g.csv", tmp_path / "c.sqlite"
    first = _run(server, collection, fast_sleep, output=out, cache=cache)
    assert first.usage.unrateable == 2 and first.usage.unrateable_left == 2
    assert first.incomplete() is None  # the model answered: done, if not graded
    server.script = lambda doc, n, body: Reply('{"grade": 3}')  # the server is fixed
    server.reset()
    for again in (dict(output=out), dict(output=out, retry_failed=True),
                  dict(output=tmp_path / "new.csv")):
        _run(server, collection, fast_sleep, cache=cache, **again)
        assert server.count == 0, again
    fixed = _run(server, collection, fast_sleep, output=out, cache=cache,
                 retry_unrateable=True)
    asked = {b["messages"][-1]["content"].split("[[")[1][:2] for b in server.bodies}
    assert server.count == 2 and asked == broken
    assert fixed.usage.unrateable_left == 0 and fixed.usage.graded == 2
    rows = {r["doc_id"]: r for r in _rows(out)}
    assert len(_rows(out)) == 7 and rows["d2"]["grade"] == "3" and rows["d6"]["grade"] == "3"
    # the new answers replaced the unrateable ones in the cache: a new file costs nothing
    server.reset()
    again = _run(server, collection, fast_sleep, output=tmp_path / "other.csv", cache=cache,
                 retry_unrateable=True)
    assert server.count == 0 and again.usage.graded == 7


def test_the_summary_says_how_many_are_unrateable_and_how_to_ask_again(
        server, collection, tmp_path, capsys):
    server.script = lambda doc, n, body: Reply("no idea" if doc == "d4" else '{"grade": 0}')
    argv = ["judge", "--endpoint", server.url, "--model", "m", "--queries",
            str(collection["queries"]), "--docs", str(collection["docs"]), "--run",
            str(collection["run"]), "-o", str(tmp_path / "g.csv"), "--cache",
            str(tmp_path / "c.sqlite")]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "1 pair(s) unrateable" in text and "--retry-unrateable asks them again" in text
    server.script = lambda doc, n, body: Reply('{"grade": 0}')
    assert main([*argv, "--retry-unrateable"]) == 0
    assert "unrateable (no grade" not in capsys.readouterr().out
    assert server.count == 8


# --- section 4: a resume matches the run it resumes ----------------------------------------

def _first_run(server, collection, fast_sleep, out, **kw):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    _run(server, collection, fast_sleep, output=out, depth=2, **kw)
    server.reset()


@pytest.mark.parametrize(("change", "named"), [
    (dict(guidelines="Recipes count as answers."), "other messages"),
    (dict(needs={"q1": "Wants dry food only."}), "other messages"),
    (dict(endpoint_host="localhost"), "another endpoint"),
    (dict(parse="lenient"), "another answer reader"),
])
def test_a_resume_with_another_configuration_is_refused(server, collection, fast_sleep,
                                                        tmp_path, change, named):
    """Before: other guidelines, needs or endpoint said "already done" and kept the grades
    made otherwise."""
    out = tmp_path / "g.csv"
    _first_run(server, collection, fast_sleep, out)
    before = out.read_bytes()
    change = dict(change)
    if "endpoint_host" in change:
        change["endpoint"] = server.url.replace("127.0.0.1", change.pop("endpoint_host"))
    with pytest.raises(OptionError, match=named) as caught:
        _run(server, collection, fast_sleep, output=out, depth=2, **change)
    assert "new file" in str(caught.value) and "--rater" in str(caught.value)
    assert server.count == 0 and out.read_bytes() == before


def test_a_resume_with_another_scale_and_the_same_template_is_refused(
        server, collection, fast_sleep, tmp_path):
    """A template of one's own used with two scales: the template hash is the same, the
    messages too when it does not print the scale. Before: "already done"."""
    template = tmp_path / "mine.j2"
    template.write_text('Grade {{ query }} / {{ document }} as {"grade": N}')
    out = tmp_path / "g.csv"
    _first_run(server, collection, fast_sleep, out, prompt=template)
    with pytest.raises(OptionError, match=r"another scale .*graded.*1-5"):
        _run(server, collection, fast_sleep, output=out, depth=2, prompt=template,
             scale="1-5")
    # the same configuration resumes (nothing to do)
    again = _run(server, collection, fast_sleep, output=out, depth=2, prompt=template)
    assert again.usage.already_done == 4 and server.count == 0


def test_the_configuration_is_recorded_on_every_row(server, collection, fast_sleep, tmp_path):
    import hashlib

    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    out = tmp_path / "g.csv"
    _run(server, collection, fast_sleep, output=out, depth=2)
    rows = _rows(out)
    for row in rows:
        assert row["scale"] == "graded (0-3)" and row["parse"] == "strict"
        assert row["endpoint"] == server.url + "/chat/completions"
        assert row["settings"] == '{"temperature":0.0}' and row["samples"] == "1"
    # each row's hash is the SHA-256 of the canonical JSON of the messages sent for it
    sent = {}
    for body in server.bodies:
        text = body["messages"][-1]["content"]
        key = ("q1" if "what do cats eat" in text else "q2", text.split("[[")[1][:2])
        canonical = json.dumps(body["messages"], sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        sent[key] = hashlib.sha256(canonical.encode()).hexdigest()
    assert {(r["query_id"], r["doc_id"]): r["messages_sha256"] for r in rows} == sent


@pytest.mark.parametrize("name", ["g.csv", "g.jsonl"])
def test_a_cut_off_last_row_is_repaired_before_appending(server, collection, fast_sleep,
                                                         tmp_path, name):
    """Before: the next row was glued to the partial one (CSV: a broken row; JSONL: the
    file could not be read at all)."""
    out = tmp_path / name
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    _run(server, collection, fast_sleep, output=out, depth=2)
    text = out.read_text()
    last = text.rstrip("\n").splitlines()[-1]
    out.write_text(text[: len(text) - 1 - len(last) // 2])  # the last row, half written
    server.reset()
    result = _run(server, collection, fast_sleep, output=out)
    assert result.usage.repaired and "cut off" in result.usage.repaired
    assert server.count == 7 - 4 + 1  # the cut-off pair is asked again
    j = Judgments.read(out)
    assert j.n_items == 7 and j.frame.get_column("grade").to_list() == [1.0] * 7


# --- section 6: order, done counts, progress -------------------------------------------------

def test_row_order_does_not_depend_on_concurrency(server, collection, fast_sleep, tmp_path):
    """The second pair's answer (the first goes alone: the endpoint is not known to answer
    yet) is held until every other pair is answered, so it arrives last. Before: rows were
    in arrival order (the second pair last)."""
    others_done = threading.Event()
    answered = []

    def script(doc, n, body):
        if doc == "d3":
            others_done.wait(10)  # bounded: a failure, not a hang, if never set
        else:
            answered.append(doc)
            if len(answered) == 6:
                others_done.set()
        return Reply('{"grade": 1}')

    server.script = script
    out = tmp_path / "g.csv"
    pairs = [("q1", "d1"), ("q1", "d3"), ("q1", "d2"), ("q1", "d4"), ("q2", "d5"),
             ("q2", "d1"), ("q2", "d6")]
    result = _run(server, collection, fast_sleep, output=out, runs=[], pairs=pairs,
                  concurrency=4)
    assert others_done.is_set() and result.usage.graded == 7
    assert [(r["query_id"], r["doc_id"]) for r in _rows(out)] == pairs
    assert [(r["query_id"], r["doc_id"]) for r in result.rows.to_dicts()] == pairs


def test_progress_reports_counts_and_cost_as_pairs_finish(server, collection, fast_sleep):
    server.script = lambda doc, n, body: Reply("??" if doc == "d4" else '{"grade": 2}',
                                               prompt_tokens=100, completion_tokens=5)
    seen = []
    _run(server, collection, fast_sleep, concurrency=1,
         progress=lambda u: seen.append((u.to_grade, u.finished, u.graded, u.unrateable,
                                         u.prompt_tokens + u.completion_tokens)))
    assert seen[0] == (7, 0, 0, 0, 0)  # at the start, before any answer
    assert [s[1] for s in seen] == list(range(8))
    assert seen[-1] == (7, 7, 6, 1, 7 * 105)
    assert [s[4] for s in seen] == [105 * i for i in range(8)]


def test_the_terminal_shows_a_progress_bar(server, collection, tmp_path, capsys):
    from rankscope import progress

    pytest.importorskip("tqdm")
    server.script = lambda doc, n, body: Reply('{"grade": 2}', prompt_tokens=100,
                                               completion_tokens=5)
    progress.set_enabled(True)
    try:
        assert main(["judge", "--endpoint", server.url, "--model", "m", "--queries",
                     str(collection["queries"]), "--docs", str(collection["docs"]), "--run",
                     str(collection["run"]), "-o", str(tmp_path / "g.csv"),
                     "--concurrency", "1"]) == 0
    finally:
        progress.set_enabled(None)
    err = capsys.readouterr().err
    assert "judge:" in err and "7/7" in err and "graded 7" in err and "735 tokens" in err
