"""`rankscope serve` as a real process: several grader processes at once through the API,
a SIGKILL in the middle of batches, `--demo`, and `rankscope user add|token`."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from rankscope.services import accounts, sessions

from .conftest import make_world

HERE = Path(__file__).parent
MAIN = "import sys; from rankscope.cli.main import main; sys.exit(main())"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: str, data: Path, port: int, *extra: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", MAIN, "serve", "--db", db, "--port", str(port),
         "--data-dir", str(data), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("the server stopped: " + (process.stdout.read() or ""))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not start within 60 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _prepare(db_url: str, data: Path, n_graders: int) -> tuple[int, list[str], int]:
    from rankscope.app.server import open_app_store
    from rankscope.services import projects

    store = open_app_store(db_url)
    try:
        w = make_world(store, data)
        tokens = []
        for i in range(n_graders):
            user = accounts.create_user(store, f"g{i}", "judge", "p" * 8)
            projects.add_member(store, w.curator, w.project.id, user.name, "judge")
            tokens.append(sessions.create_token(store, user.name))
        return w.evaluation.id, tokens, w.run["tasks"]
    finally:
        store.close()


def _counts(db_url: str) -> dict[int, int]:
    from rankscope.app.server import open_app_store
    from rankscope.store.models_app import Grade

    store = open_app_store(db_url)
    try:
        with store.read() as s:
            rows = s.execute(select(Grade.item_id, func.count(Grade.id)).where(Grade.active)
                             .group_by(Grade.item_id)).all()
            return {int(i): int(n) for i, n in rows}
    finally:
        store.close()


@pytest.mark.slow
def test_grader_processes_at_once_lose_nothing_and_never_exceed_the_limit(db_url, collection,
                                                                          tmp_path):
    evaluation, tokens, n_tasks = _prepare(db_url, collection, 4)
    port = free_port()
    server = start_server(db_url, collection, port)
    try:
        logs = [tmp_path / f"g{i}.jsonl" for i in range(len(tokens))]
        graders = [subprocess.Popen([sys.executable, str(HERE / "grader_client.py"),
                                     f"http://127.0.0.1:{port}", token, str(evaluation),
                                     str(log), f"g{i}", "3"])
                   for i, (token, log) in enumerate(zip(tokens, logs, strict=True))]
        for g in graders:
            assert g.wait(timeout=240) == 0
    finally:
        stop(server)
    acknowledged = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    accepted = sum(a["accepted"] for a in acknowledged)
    counts = _counts(db_url)
    assert sum(counts.values()) == accepted  # every acknowledged grade is there, no other
    assert max(counts.values()) <= 2  # never more than wanted
    assert len(counts) == n_tasks and set(counts.values()) == {2}  # and all work was done


@pytest.mark.slow
def test_a_server_killed_mid_batch_loses_nothing_acknowledged(db_url, collection, tmp_path):
    from rankscope.app.server import open_app_store
    from rankscope.store.models_app import Grade, GradeBatch

    evaluation, tokens, _ = _prepare(db_url, collection, 2)
    port = free_port()
    server = start_server(db_url, collection, port)
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    graders = [subprocess.Popen([sys.executable, str(HERE / "grader_client.py"),
                                 f"http://127.0.0.1:{port}", token, str(evaluation), str(log),
                                 f"k{i}", "2"], stderr=subprocess.DEVNULL)
               for i, (token, log) in enumerate(zip(tokens, logs, strict=True))]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # let some batches through, then kill mid-stream
        done = sum(len(p.read_text().splitlines()) for p in logs if p.exists())
        if done >= 4:
            break
        time.sleep(0.02)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=20)
    for g in graders:
        g.wait(timeout=60)
    acknowledged = [json.loads(line) for p in logs if p.exists()
                    for line in p.read_text().splitlines()]
    assert len(acknowledged) >= 4
    grade_ids = {r["grade_id"] for a in acknowledged for r in a["results"] if r["ok"]}
    store = open_app_store(db_url)
    try:
        with store.read() as s:
            kept = set(s.scalars(select(Grade.id).where(Grade.id.in_(grade_ids))))
            batches = {b.batch_key: b.response for b in s.scalars(select(GradeBatch))}
            stored = set(s.scalars(select(Grade.id)))
        assert kept == grade_ids  # nothing acknowledged is lost
        for a in acknowledged:
            assert batches[a["batch_id"]]["accepted"] == a["accepted"]
        # a batch is whole or absent: every grade a stored batch lists is there, no orphan
        listed = {r["grade_id"] for b in batches.values() for r in b["results"] if r["ok"]}
        assert listed == stored
    finally:
        store.close()
    # the server starts again on the same database and answers
    server = start_server(db_url, collection, port)
    stop(server)


@pytest.mark.slow
def test_serve_demo_prints_a_login_that_works(tmp_path):
    import httpx

    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", MAIN, "serve", "--demo", "--port",
                                str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path)
    try:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if "rankscope serving" in line or process.poll() is not None:
                break
        found = re.search(r"as admin / (\S+) \(admin\) or judge / (\S+) \(judge\); "
                          r"evaluation #(\d+)", "".join(lines))
        assert found, "".join(lines)
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(base + "/login", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, timeout=10) as client:
            signed = client.post("/login", data={"name": "judge", "password": found[2]})
            assert signed.status_code == 303
            page = client.get(f"/evaluations/{found[3]}/grade")
            assert page.status_code == 200 and 'data-key="3"' in page.text
    finally:
        stop(process)


def test_user_add_and_token_commands(tmp_path, monkeypatch, capsys):
    from rankscope.cli.main import main
    from rankscope.store.db import open_store

    db = str(tmp_path / "u.sqlite")
    monkeypatch.setattr(sys, "stdin", io.StringIO("a fine password\n"))
    assert main(["user", "add", "ann", "--role", "curator", "--db", db]) == 0
    assert "added curator ann" in capsys.readouterr().out
    assert main(["user", "token", "ann", "--db", db]) == 0
    token = capsys.readouterr().out.strip()
    store = open_store(db)
    try:
        assert sessions.resolve_token(store, token).name == "ann"
        assert sessions.authenticate(store, "ann", "a fine password").role == "curator"
    finally:
        store.close()
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert main(["user", "add", "bob", "--role", "judge", "--db", db]) == 2
    assert "at least 8" in capsys.readouterr().err
    assert main(["user", "token", "nobody", "--db", db]) == 2


def test_serve_sets_its_start_up_objects_aside_before_it_serves(tmp_path, monkeypatch):
    """The server's long-lived start-up objects (imports, store, app) are frozen out of the
    collector's generations before it serves: no full collection walks them under load."""
    import gc

    import uvicorn

    from rankscope.app.server import ServerSettings, serve

    seen: dict[str, object] = {}

    def run(app: object, **options: object) -> None:  # uvicorn.run: what serving finds
        seen["frozen"] = gc.get_freeze_count()
        seen["app_collected_over"] = any(o is app for o in gc.get_objects())

    monkeypatch.setattr(uvicorn, "run", run)
    gc.unfreeze()  # whatever this test process froze before: counted from nothing
    try:
        serve(ServerSettings(db=str(tmp_path / "app.sqlite"), port=free_port(),
                             data_dir=str(tmp_path)), say=lambda _: None, warn=lambda _: None)
    finally:
        gc.unfreeze()  # the test process's objects back to the collector
    assert seen["frozen"] > 100_000  # the imports' objects, not a handful
    assert seen["app_collected_over"] is False


@pytest.mark.skipif(sys.platform in ("win32", "cygwin")
                    or sys.implementation.name != "cpython",
                    reason="uvloop is left out of the app extra there (no wheels)")
def test_serve_runs_on_uvloop_and_httptools(tmp_path, monkeypatch):
    """`rankscope serve` as installed with the ``app`` extra runs uvicorn on uvloop's event
    loop and parses HTTP with httptools (uvicorn's C parts, chosen by its "auto"), not on
    asyncio's loop with h11: what the running server's config and loop are."""
    import asyncio
    import gc

    import uvicorn

    from rankscope.app.server import ServerSettings, serve

    seen: dict[str, object] = {}

    async def serve_once(self: uvicorn.Server, sockets: object = None) -> None:
        self.config.load()  # what uvicorn's own serve does first
        seen["protocol"] = self.config.http_protocol_class
        seen["loop"] = type(asyncio.get_running_loop())
        self.started = True  # as if it served and was stopped

    monkeypatch.setattr(uvicorn.Server, "serve", serve_once)
    try:
        serve(ServerSettings(db=str(tmp_path / "app.sqlite"), port=free_port(),
                             data_dir=str(tmp_path)), say=lambda _: None, warn=lambda _: None)
    finally:
        gc.unfreeze()  # what serve() froze: this test process's objects back to the collector
    protocol, loop = seen["protocol"], seen["loop"]
    assert isinstance(protocol, type) and isinstance(loop, type)
    assert (protocol.__module__, protocol.__name__) == (
        "uvicorn.protocols.http.httptools_impl", "HttpToolsProtocol")
    assert loop.__module__.startswith("uvloop")
