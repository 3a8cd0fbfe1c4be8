"""A snapshot with --store is recorded by a process of its own (issue 30 section 2, issue 24
section 4): the command's process never imports the store, the child's death is a clear
error, the command's death ends the child, and what either leaves is resumable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from rankscope.store.db import open_store
from rankscope.store.snapshots import find_snapshot, snapshot_hits, snapshot_queries
from search.engine_server import EngineServer, Reply
from store.test_crash import _done  # n_done of the newest snapshot, read without the store

N_QUERIES = 12
HELD = 5  # queries q00-q04 are answered; q05 waits for the server to close


def _body(i: int) -> bytes:
    return json.dumps({"results": [{"id": f"doc-{i}-a", "score": 2.0, "name": f"A {i}"},
                                   {"id": f"doc-{i}-b", "score": 1.0, "name": f"B {i}"}]}
                      ).encode()


def _by_query(seen) -> bytes:  # type: ignore[no-untyped-def]
    return _body(int(dict(seen.query)["q"].split()[1]))  # "query 7": query 7's hits


def _held(server: EngineServer) -> threading.Event:
    """Queries q00-q04 answered at once, q05 and after once the event is set."""
    hold = threading.Event()
    server.route("GET", "/search", *[Reply(body_for=_by_query) for _ in range(HELD)],
                 Reply(body_for=_by_query, hold=hold))
    return hold


def _expected(n: int) -> list[tuple[str, int, str, float, str]]:
    """The hits the server sent for queries 0..n-1 (two each, in its order)."""
    return [(f"q{i:02d}", rank, f"doc-{i}-{s}", score, f"{s.upper()} {i}")
            for i in range(n) for rank, s, score in ((1, "a", 2.0), (2, "b", 1.0))]


def _files(tmp_path: Path, url: str) -> tuple[Path, Path]:
    (tmp_path / "ep.toml").write_text(
        f'kind = "http"\nname = "slow"\nurl = "{url}/search"\n'
        'params = { q = "{{query}}" }\nhits = "results[*]"\nscore_field = "score"\n'
        'title_field = "name"\nconcurrency = 1\ntimeout = 600\n')
    (tmp_path / "q.tsv").write_text("".join(f"q{i:02d}\tquery {i}\n" for i in range(N_QUERIES)))
    return tmp_path / "ep.toml", tmp_path / "q.tsv"


def _hits(db: Path) -> tuple[str, list[tuple[str, int, str, float, str]]]:
    store = open_store(db)
    try:
        info = find_snapshot(store, "slow")
        return info.status, [(h["query_id"], h["rank"], h["doc_id"], h["score"], h["title"])
                             for h in snapshot_hits(store, info.id)]
    finally:
        store.close()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait(condition, seconds: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds  # a bound on waiting, not part of what is checked
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def _command(tmp_path: Path, endpoint: Path, queries: Path, db: Path,
             *more: str) -> list[str]:
    return [sys.executable, "-m", "rankscope", "snapshot", str(endpoint), str(queries),
            "--store", str(db), "-o", str(tmp_path / "run.txt"), "--quiet", *more]


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def test_the_command_imports_no_store_and_the_store_holds_every_answer(tmp_path):
    """The store's imports (SQLAlchemy, its models, the driver) and its work happen in
    another process: what made a snapshot with --store 1.3-1.5 x slower than without.
    Before the change the command's process imported SQLAlchemy: this failed."""
    server = EngineServer()
    try:
        server.route("GET", "/search", Reply(body_for=_by_query))
        endpoint, queries = _files(tmp_path, server.url)
        db = tmp_path / "s.sqlite"
        probe = ("import sys, json, runpy\n"
                 "sys.argv = ['rankscope'] + sys.argv[1:]\ncode = 0\n"
                 "try:\n    runpy.run_module('rankscope', run_name='__main__')\n"
                 "except SystemExit as exc:\n    code = exc.code\n"
                 "print(json.dumps([code, sorted(sys.modules)]))\n")
        done = subprocess.run([sys.executable, "-c", probe,
                               *_command(tmp_path, endpoint, queries, db)[3:]],
                              env=ENV, capture_output=True, text=True, timeout=300)
    finally:
        server.close()
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert code in (0, None), done.stderr
    assert [m for m in modules if m.split(".")[0] in ("sqlalchemy", "psycopg", "alembic")
            or m.startswith(("rankscope.store.snapshots", "rankscope.store.models"))] == []
    status, hits = _hits(db)
    assert status == "complete"
    assert hits == _expected(N_QUERIES)
    run = [line.split() for line in (tmp_path / "run.txt").read_text().splitlines()]
    assert [(q, int(r), d) for q, _, d, r, _, _ in run] == [(q, r, d) for q, r, d, _, _
                                                             in _expected(N_QUERIES)]


def test_a_killed_recorder_is_a_clear_error_and_the_snapshot_resumable(tmp_path):
    """The recording process dies mid-snapshot: the command stops with an error naming it
    (no traceback, no run file), what was committed stays, and --resume completes it
    with every answer (nothing asked twice that was recorded)."""
    server = EngineServer()
    try:
        hold = _held(server)
        endpoint, queries = _files(tmp_path, server.url)
        db = tmp_path / "s.sqlite"
        command = subprocess.Popen(_command(tmp_path, endpoint, queries, db), env=ENV,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait(lambda: (_done(db) >= HELD and len(server.requests) > HELD)
              or command.poll() is not None)
        assert command.poll() is None, command.communicate()
        recorders = _children(command.pid)
        assert len(recorders) == 1
        os.kill(recorders[0], signal.SIGKILL)
        _wait(lambda: not _alive(recorders[0]))
        hold.set()  # q05 answered now: the command finds its recorder gone
        _, err = command.communicate(timeout=120)
        assert command.returncode == 2, err
        assert "the process recording into the store" in err and "exit code -9" in err
        assert "Traceback" not in err
        assert not (tmp_path / "run.txt").exists()
        status, hits = _hits(db)
        assert status == "incomplete"  # left running by a dead process
        assert hits == _expected(HELD)

        server.requests.clear()
        done = subprocess.run(_command(tmp_path, endpoint, queries, db, "--resume", "slow"),
                              env=ENV, capture_output=True, text=True, timeout=300)
        asked = [dict(r.query)["q"] for r in server.requests]
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert asked == [f"query {i}" for i in range(HELD, N_QUERIES)]
    status, hits = _hits(db)
    assert (status, hits) == ("complete", _expected(N_QUERIES))


def test_a_killed_command_ends_its_recorder_keeping_what_it_sent(tmp_path):
    """SIGKILL of the command: its recorder sees its input end, commits what it had and
    exits (no orphan left writing); the snapshot is incomplete with those answers."""
    server = EngineServer()
    try:
        _held(server)
        endpoint, queries = _files(tmp_path, server.url)
        db = tmp_path / "s.sqlite"
        command = subprocess.Popen(_command(tmp_path, endpoint, queries, db), env=ENV,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _wait(lambda: (_done(db) >= HELD and len(server.requests) > HELD)
              or command.poll() is not None)
        assert command.poll() is None, command.communicate()
        recorders = _children(command.pid)
        assert len(recorders) == 1
        command.send_signal(signal.SIGKILL)
        command.wait(timeout=30)
        command.communicate()
        _wait(lambda: not _alive(recorders[0]), 60)
        assert not _alive(recorders[0])
    finally:
        server.close()
    store = open_store(db)
    try:
        info = find_snapshot(store, "slow")
        assert info.status == "incomplete"
        assert [r.query_id for r in snapshot_queries(store, info.id) if r.status == "ok"] \
            == [f"q{i:02d}" for i in range(HELD)]
    finally:
        store.close()
