"""Many writers at once on one store (issue 24, section 4).

The reproduction: three `rankscope snapshot ... --store same.sqlite` processes
started together on a new store. Two of them failed ("database is locked" while
migrating, or an internal error inserting the project), because a transaction
that read first and wrote later cannot wait for SQLite's write lock, and on
PostgreSQL two processes both created the same project. All must succeed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from search.engine_server import EngineServer, Reply

N_QUERIES = 60


@pytest.mark.slow
def test_three_snapshot_processes_on_one_new_store_all_succeed(db_url, tmp_path):
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import list_snapshots, snapshot_hits

    server = EngineServer()
    try:
        hits = [{"_id": f"d{i}", "_score": 1.0} for i in range(3)]
        server.route("POST", "/p/_search", Reply(json.dumps(
            {"hits": {"total": {"value": 3, "relation": "eq"}, "hits": hits}}).encode()))
        endpoint = tmp_path / "e.toml"
        endpoint.write_text(f'kind = "elasticsearch"\nname = "e"\nurl = "{server.url}"\n'
                            'index = "p"\n')
        queries = tmp_path / "q.tsv"
        queries.write_text("".join(f"q{i}\tquery {i}\n" for i in range(N_QUERIES)))
        argv = [sys.executable, "-m", "rankscope", "snapshot", str(endpoint), str(queries),
                "--store", db_url, "--quiet", "--concurrency", "8"]
        procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(3)]
        outcomes = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        for p in procs:
            assert p.stdout is not None and p.stderr is not None
            p.stdout.close()
            p.stderr.close()
    finally:
        server.close()
    assert [code for code, _ in outcomes] == [0, 0, 0], outcomes
    with open_store(db_url) as store:
        infos = list_snapshots(store)
        assert [(i.status, i.n_done, i.n_hits) for i in infos] == [
            ("complete", N_QUERIES, 3 * N_QUERIES)] * 3
        for info in infos:
            assert len(snapshot_hits(store, info.id)) == 3 * N_QUERIES
