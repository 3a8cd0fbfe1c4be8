"""Killed snapshots resume; answers are recorded off the event loop; progress in CI logs.

(Issue 24, section 4.)
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rankscope.errors import StoreError
from search.engine_server import EngineServer, Reply

from .conftest import run_cli

N = 12


def answer_for(seen) -> bytes:
    """Each query gets its own ranking (a function of its text): results to compare."""
    text = seen.body["query"]["multi_match"]["query"]
    docs = sorted((f"d{i}" for i in range(8)),
                  key=lambda d: hashlib.sha256(f"{text}/{d}".encode()).hexdigest())[:5]
    return json.dumps({"hits": {"total": {"value": 5, "relation": "eq"},
                                "hits": [{"_id": d, "_score": 1.0} for d in docs]}}).encode()


def asked(server) -> list[str]:
    return [r.body["query"]["multi_match"]["query"] for r in server.seen("/p/_search")]




@pytest.fixture
def setup(tmp_path):
    server = EngineServer()
    (tmp_path / "e.toml").write_text(f'kind = "elasticsearch"\nname = "e"\nurl = '
                                     f'"{server.url}"\nindex = "p"\n')
    (tmp_path / "q.tsv").write_text("".join(f"q{i:02d}\tquery {i}\n" for i in range(N)))
    try:
        yield server, tmp_path
    finally:
        server.close()


def export(db, ref, fmt="trec"):
    code, out, err = run_cli(["snapshots", "export", ref, "--store", db, "-o", "-", "-f", fmt])
    assert code == 0, err
    return out


def wait_for(condition, what, limit=60.0):
    """Poll ``condition`` (bounded): the test waits for a state, it asserts nothing on time."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_snapshot_resumes_with_only_the_missing_queries(setup):
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import find_snapshot

    server, d = setup
    done_before = 5
    held = threading.Event()
    server.route("POST", "/p/_search", *[Reply(body_for=answer_for)] * done_before,
                 Reply(body_for=answer_for, hold=held))
    db = d / "s.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "rankscope", "snapshot", str(d / "e.toml"),
                             str(d / "q.tsv"), "--store", str(db), "--concurrency", "1",
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def committed() -> bool:
            if not db.exists() or len(server.seen("/p/_search")) <= done_before:
                return False
            with open_store(db) as store:
                try:
                    return find_snapshot(store, "1").n_done == done_before
                except StoreError:  # not started yet: the recorder starts it
                    return False

        wait_for(committed, "the first answers to be committed")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        held.set()
    with open_store(db) as store:
        info = find_snapshot(store, "1")
    assert (info.status, info.n_done) == ("incomplete", done_before)
    first_asked = asked(server)[:done_before]

    server.requests.clear()
    server.route("POST", "/p/_search", Reply(body_for=answer_for))
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--resume", "1", "-o", d / "resumed.txt"])
    assert code == 0, err
    assert f"snapshot 'e' #1 complete: {N} queries (resumed: {done_before} answered before, " \
           f"{N - done_before} now)" in err
    missing = [f"query {i}" for i in range(N) if f"query {i}" not in first_asked]
    assert sorted(asked(server)) == sorted(missing)  # only what was not recorded

    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db])
    assert code == 0, err  # the same snapshot, uninterrupted: #2
    assert export(db, "1") == export(db, "2") == (d / "resumed.txt").read_text()
    hits = [[h["doc_id"] for h in json.loads(line)["hits"]]
            for line in export(db, "1", "jsonl").splitlines()]
    assert hits == [[h["doc_id"] for h in json.loads(line)["hits"]]
                    for line in export(db, "2", "jsonl").splitlines()]


def test_a_failed_snapshot_resumes_from_its_failed_query(setup):
    server, d = setup
    server.route("POST", "/p/_search", Reply(body_for=answer_for), Reply(body_for=answer_for),
                 Reply("es_400_parsing.json", status=400), Reply(body_for=answer_for))
    db = d / "s.sqlite"
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--concurrency", "1"])
    assert code == 3 and "--resume 1 asks the rest" in err  # incomplete, kept
    server.requests.clear()
    server.route("POST", "/p/_search", Reply(body_for=answer_for))
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--resume", "1"])
    assert code == 0, err
    assert sorted(asked(server)) == sorted(f"query {i}" for i in range(2, N))
    code, out, _ = run_cli(["snapshots", "list", "--store", db, "-f", "json"])
    (info,) = json.loads(out)
    assert (info["status"], info["n_done"], info["n_failed"]) == ("complete", N, 0)


def test_resume_refuses_what_it_cannot_complete_as_asked(setup):
    server, d = setup
    server.route("POST", "/p/_search", Reply(body_for=answer_for))
    db = d / "s.sqlite"
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db])
    assert code == 0, err
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--resume", "1"])
    assert code == 2 and "is complete: nothing to resume" in err
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--resume", "1", "-o",
                            d / "x.txt"])
    assert code == 2 and "--resume needs the --store" in err
    from rankscope.store.db import open_store
    from rankscope.store.snapshot_writes import finish_snapshot

    with open_store(db) as store:
        finish_snapshot(store, 1, "incomplete")
    (d / "other.tsv").write_text("q00\tsomething else\n")
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "other.tsv", "--store", db,
                            "--resume", "1"])
    assert code == 2 and "taken over another query set" in err
    (d / "e2.toml").write_text((d / "e.toml").read_text() + 'id_field = "_id"\n')
    code, _, err = run_cli(["snapshot", d / "e2.toml", d / "q.tsv", "--store", db,
                            "--resume", "1"])
    assert code == 2 and "another endpoint configuration" in err
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--resume", "1", "--depth", "20"])
    assert code == 2 and "was taken at depth 10" in err


def test_answers_are_recorded_without_waiting_for_the_database(tmp_path):
    """put() returns while the database is busy; what arrived meanwhile is one transaction."""
    from rankscope.search.types import Hit, QueryItem
    from rankscope.store.db import open_store
    from rankscope.store.recorder import AnswerRecorder
    from rankscope.store.snapshot_writes import start_snapshot
    from rankscope.store.snapshots import Answer, snapshot_hits

    release = threading.Event()

    class HeldWriter:
        """Runs writes on the caller's thread, the first one only once released."""

        def __init__(self) -> None:
            self.jobs = 0

        def run(self, job):
            self.jobs += 1
            if self.jobs == 2:  # the recorder's first transaction (1: start_snapshot)
                release.wait(30)
            return job()

        def close(self) -> None:
            pass

    store = open_store(tmp_path / "s.sqlite", writer=HeldWriter())
    try:
        sid, rows = start_snapshot(
            store, name="s", endpoint_name="e", kind="http", config={}, config_hash="0" * 64,
            query_set_name="q", query_set_source=None, depth=3, engine_version=None,
            queries=[QueryItem(f"q{i:03d}", "t") for i in range(100)])
        recorder = AnswerRecorder(store, sid)
        for i in range(100):  # all of them while the first transaction is held
            recorder.put(Answer(rows[f"q{i:03d}"], {}, 1.0, "0" * 64, None, 1,
                                [Hit(f"d{i}")]))
        assert recorder.recorded == 0  # nothing committed yet, and put() never waited
        release.set()
        recorder.close()
        assert recorder.recorded == 100 and recorder.transactions <= 2
        assert [h["doc_id"] for h in snapshot_hits(store, sid)] == [f"d{i}" for i in range(100)]
    finally:
        release.set()
        store.close()


def test_progress_lines_when_stderr_is_not_a_terminal(setup, monkeypatch):
    server, d = setup
    server.route("POST", "/p/_search", Reply(body_for=answer_for))
    from rankscope import progress

    monkeypatch.setenv("RANKSCOPE_PROGRESS_SECONDS", "0")  # a line at every query
    monkeypatch.setattr(progress, "_setting", None)
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "-o", d / "r.txt",
                            "--concurrency", "1"])
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("snapshot e: ")]
    assert [line.split(",")[0] for line in lines] == [
        f"snapshot e: {i}/{N} {'query' if i == 1 else 'queries'} ({100 * i // N}%)"
        for i in range(1, N + 1)]
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "-o", d / "r.txt",
                            "--quiet"])
    assert code == 0 and err == ""


def test_progress_lines_come_once_a_period(capsys, monkeypatch):
    from rankscope import progress

    monkeypatch.delenv("RANKSCOPE_PROGRESS_SECONDS", raising=False)
    monkeypatch.setattr(progress, "_setting", None)  # automatic (a --quiet run set it off)
    now = [0.0]
    with progress.step_bar(100, "work", unit="query", lines=True,
                           clock=lambda: now[0]) as advance:
        for t in (1.0, 9.9, 10.0, 15.0, 20.5, 21.0):
            now[0] = t
            advance(1)
    lines = capsys.readouterr().err.splitlines()
    # 10 s apart at least: at t = 10.0 (3 done) and t = 20.5 (5 done)
    assert lines == ["work: 3/100 queries (3%), 10 s", "work: 5/100 queries (5%), 20 s"]


def test_no_progress_lines_on_a_terminal_or_when_quiet(monkeypatch, capsys):
    from rankscope import progress

    monkeypatch.setenv("RANKSCOPE_PROGRESS_SECONDS", "0")
    progress.set_enabled(False)
    try:
        with progress.step_bar(3, "work", lines=True) as advance:
            advance(3)
    finally:
        progress.set_enabled(None)
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(progress, "_tqdm", lambda: None)
    with progress.step_bar(3, "work", lines=True) as advance:
        advance(3)
    assert capsys.readouterr().err == ""
    assert os.environ["RANKSCOPE_PROGRESS_SECONDS"] == "0"


def test_an_interruption_exits_3_keeping_what_was_answered(setup, monkeypatch):
    """Ctrl-C during a snapshot: exit 3 (incomplete), the answers kept, --resume finishes it."""
    from rankscope.search.remote import RemoteEndpoint

    server, d = setup
    server.route("POST", "/p/_search", Reply(body_for=answer_for))
    real = RemoteEndpoint.search
    calls = {"n": 0}

    async def interrupted(self, query, depth):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return await real(self, query, depth)

    monkeypatch.setattr(RemoteEndpoint, "search", interrupted)
    db = d / "s.sqlite"
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--concurrency", "1"])
    assert code == 3
    assert "interrupted: snapshot #1 kept as incomplete with 3 of 12 queries" in err
    monkeypatch.setattr(RemoteEndpoint, "search", real)
    server.requests.clear()
    code, _, err = run_cli(["snapshot", d / "e.toml", d / "q.tsv", "--store", db,
                            "--resume", "1"])
    assert code == 0, err
    assert len(asked(server)) == N - 3
