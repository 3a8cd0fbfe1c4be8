"""A snapshot process killed with SIGKILL: what was committed stays, the snapshot is incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from rankscope.cli.main import main
from rankscope.store.db import open_store
from rankscope.store.snapshots import (
    find_snapshot,
    list_snapshots,
    snapshot_hits,
    snapshot_queries,
)
from search.engine_server import EngineServer, Reply

N_QUERIES = 40


def _body(i: int) -> bytes:
    return json.dumps({"results": [{"id": f"doc-{i}-a", "score": 2.0, "name": f"A {i}"},
                                   {"id": f"doc-{i}-b", "score": 1.0, "name": f"B {i}"}]}
                      ).encode()


def _done(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            row = con.execute("SELECT n_done FROM snapshots ORDER BY id DESC").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row else 0


HELD = 5  # queries q00-q04 are answered; q05 waits for the server to close


@pytest.mark.slow
def test_killed_mid_snapshot(tmp_path, capsys):
    """SIGKILL while a query is in flight: the five committed before it stay, nothing else.
    The sixth answer is held until the server closes, so where the kill lands does not
    depend on how fast the machine is. Mutation: a query counted twice in n_done: this
    fails (the old test's ">= 5" passed it)."""
    server = EngineServer()
    try:
        held = Reply(_body(HELD), delay=600)  # waits on server.release: set by close()
        server.route("GET", "/search", *[Reply(_body(i)) for i in range(HELD)], held)
        (tmp_path / "ep.toml").write_text(
            f'kind = "http"\nname = "slow"\nurl = "{server.url}/search"\n'
            'params = { q = "{{query}}" }\nhits = "results[*]"\nscore_field = "score"\n'
            'title_field = "name"\nconcurrency = 1\ntimeout = 600\n')
        (tmp_path / "q.tsv").write_text("".join(f"q{i:02d}\tquery {i}\n"
                                                for i in range(N_QUERIES)))
        db = tmp_path / "s.sqlite"
        run = tmp_path / "run.txt"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        child = subprocess.Popen(
            [sys.executable, "-m", "rankscope", "snapshot", str(tmp_path / "ep.toml"),
             str(tmp_path / "q.tsv"), "--store", str(db), "-o", str(run), "--quiet"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120  # a bound on waiting, not part of what is checked
        while ((_done(db) < HELD or len(server.requests) <= HELD)
               and time.monotonic() < deadline and child.poll() is None):
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()
        assert len(server.requests) == HELD + 1  # q05 asked, and held
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        server.close()

    assert not run.exists()  # the run file is written whole at the end, or not at all
    assert not list(tmp_path.glob(".run.txt.*"))
    store = open_store(db)
    try:
        info = find_snapshot(store, "slow")
        assert info.status == "incomplete"
        assert [i.status for i in list_snapshots(store)] == ["incomplete"]
        records = snapshot_queries(store, info.id)
        done = [r for r in records if r.status == "ok"]
        assert len(done) == info.n_done == HELD
        # the committed queries are intact: in order, each with the hits the server sent
        assert [r.query_id for r in done] == [f"q{i:02d}" for i in range(len(done))]
        hits = snapshot_hits(store, info.id)
        assert [(h["query_id"], h["rank"], h["doc_id"], h["score"], h["title"]) for h in hits] \
            == [(f"q{i:02d}", rank, f"doc-{i}-{s}", score, f"{s.upper()} {i}")
                for i in range(len(done)) for rank, s, score in ((1, "a", 2.0), (2, "b", 1.0))]
    finally:
        store.close()

    # never exported or compared as if whole
    assert main(["snapshots", "export", "slow", "--store", str(db), "-o",
                 str(tmp_path / "x.txt")]) == 2
    assert "is incomplete" in capsys.readouterr().err
    assert main(["snapshots", "diff", "slow", "slow", "--store", str(db)]) == 2
    assert "is incomplete" in capsys.readouterr().err
    assert main(["snapshots", "export", "slow", "--store", str(db), "-o",
                 str(tmp_path / "x.txt"), "--partial"]) == 0
    assert len((tmp_path / "x.txt").read_text().splitlines()) == 2 * len(done)
