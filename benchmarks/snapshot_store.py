"""Snapshots at engine speed (issue 30, section 2): `rankscope snapshot` with and without a store.

    python benchmarks/snapshot_store.py                         # SQLite, 1,000 queries, 3 rounds
    python benchmarks/snapshot_store.py --pg postgresql://u@127.0.0.1:5432/postgres
    python benchmarks/snapshot_store.py --previous /tmp/rankscope-main/src --pg URL

A fake Elasticsearch runs in a process of its own on 127.0.0.1 (stdlib HTTP
server, a thread per connection, TCP_NODELAY) and answers every search after
``--delay`` seconds (default 0.020) with ten hits. Each round runs, in turn,
``rankscope snapshot ENDPOINT QUERIES -o RUN --concurrency 16 --quiet``
without a store, with ``--store`` on a new SQLite file and, with ``--pg``,
with ``--store`` on a new PostgreSQL database (created and dropped through
the URL given). Each store is created and migrated before the timed run
(untimed: a store is made once and reused; creating one costs about 0.9 s
on SQLite, once). Wall time from the parent, process start to exit; each
variant's rounds are summed up as the fastest and the median wall time, the
median CPU time (user + system of the command and of the processes it
waited for: its recording process) and the median *own* CPU time of the
command's process alone (what shares a core with its requests; read at its
exit), and the median CPU of the recording process (the difference of the
two). Printed: each with its ratio to the no-store run's (target: at most
1.3 for the wall time, best and median). On a loaded machine the wall times are noise and the
own CPU is the figure to read: the no-store process is CPU-bound, so its
wall time grows with every CPU second the store adds to it.

The store's contents are checked after each run: every query answered, its
hits (rank, document id, score, title) equal to what the engine sent (the
no-store run file holds the same ranking). With ``--previous SRC`` the same
variants also run on another checkout's ``src`` directory (the code before
the change), the two in turn within each round (both see the same load),
with the store's hits compared between the two.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

ENGINE = textwrap.dedent('''
    import json, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    delay = float(sys.argv[1])
    def body(text):
        hits = [{"_index": "p", "_id": f"{text}-{i}", "_score": 10.0 - i,
                 "_source": {"title": f"Title {i} of {text}", "url": f"https://x.test/{i}"}}
                for i in range(10)]
        return json.dumps({"took": 1, "timed_out": False,
                           "_shards": {"total": 1, "successful": 1, "failed": 0},
                           "hits": {"total": {"value": 10, "relation": "eq"},
                                    "hits": hits}}).encode()
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        def log_message(self, *a): pass
        def do_GET(self):
            data = b'{"version": {"number": "8.13.4"}}'
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data))); self.end_headers()
            self.wfile.write(data)
        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            text = json.loads(raw)["query"]["multi_match"]["query"].replace(" ", "_")
            time.sleep(delay)
            data = body(text)
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data))); self.end_headers()
            self.wfile.write(data)
    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
''')


def start_engine(delay: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", ENGINE, str(delay)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}"


def fresh_pg(admin: str) -> tuple[str, str]:
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(admin.replace("postgresql+psycopg://", "postgresql://"),
                         autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    base = admin if "+psycopg" in admin else admin.replace("postgresql://",
                                                           "postgresql+psycopg://")
    return base.rsplit("/", 1)[0] + "/" + name, name


def drop_pg(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin.replace("postgresql+psycopg://", "postgresql://"),
                         autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


OWN_CPU = textwrap.dedent('''
    import atexit, os, resource, runpy, sys
    def own():  # this process alone: not the processes it started and waited for
        r = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.environ["RS_BENCH_OWN_CPU"], "w") as out:
            out.write(str(r.ru_utime + r.ru_stime))
    atexit.register(own)
    sys.argv = ["rankscope"] + sys.argv[1:]
    runpy.run_module("rankscope", run_name="__main__", alter_sys=True)
''')


def snapshot(src: str | None, work: Path, store: str | None,
             run: Path) -> tuple[float, float, float]:
    """Wall time, CPU time (the command and every process it waited for) and the
    command's own CPU time (without them: what shares a core with its requests)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    env["RS_BENCH_OWN_CPU"] = str(work / "own-cpu.txt")
    cmd = [sys.executable, "-c", OWN_CPU, "snapshot", str(work / "endpoint.toml"),
           str(work / "queries.tsv"), "-o", str(run), "--concurrency", "16", "--quiet"]
    if store:
        cmd += ["--store", store]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu, float((work / "own-cpu.txt").read_text())


def create_store(store: str, src: str | None) -> None:
    """Create and migrate the store (this checkout's schema), as its first use would."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    subprocess.run([sys.executable, "-c", "import sys; from rankscope.store.db import "
                    "open_store; open_store(sys.argv[1]).close()", store], env=env,
                   check=True)


def stored_hits(store: str, src: str | None) -> list[tuple[str, int, str, float, str]]:
    """Every stored hit (query, rank, document, score, title), read by this checkout's code."""
    code = textwrap.dedent(f'''
        import json
        from rankscope.store.db import open_store
        from rankscope.store.snapshots import find_snapshot, snapshot_hits, snapshot_queries
        with open_store({store!r}) as s:
            info = find_snapshot(s, "1")
            answered = sum(r.status == "ok" for r in snapshot_queries(s, info.id))
            hits = [[h["query_id"], h["rank"], h["doc_id"], h["score"], h["title"]]
                    for h in snapshot_hits(s, info.id)]
        print(json.dumps({{"status": info.status, "answered": answered, "hits": hits}}))
    ''')
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    data = json.loads(out)
    if data["status"] != "complete":
        raise SystemExit(f"the snapshot in {store} is {data['status']}")
    return [tuple(h) for h in data["hits"]]  # type: ignore[misc]


def run_hits(run: Path) -> list[tuple[str, int, str]]:
    rows = (line.split() for line in run.read_text().splitlines())
    return [(p[0], int(p[3]), p[2]) for p in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.020, help="engine seconds per answer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pg", help="PostgreSQL admin URL: a new database per run")
    parser.add_argument("--previous", metavar="SRC",
                        help="also run another checkout's src directory (the code before)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    engine, url = start_engine(args.delay)
    versions: dict[str, str | None] = {"this": None}
    if args.previous:
        versions["previous"] = args.previous
    results: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    contents: dict[str, list[Any]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="rs-bench-snap-") as tmp:
            work = Path(tmp)
            (work / "endpoint.toml").write_text(
                f'kind = "elasticsearch"\nname = "bench"\nurl = "{url}"\nindex = "p"\n')
            (work / "queries.tsv").write_text(
                "".join(f"q{i:05d}\tquery number {i}\n" for i in range(args.queries)))
            stores = ["none", "sqlite"] + (["postgresql"] if args.pg else [])
            for _ in range(args.rounds):  # the versions in turn in each round: same load
                for version, src in versions.items():
                    for kind in stores:
                        run = work / f"{version}-{kind}.txt"
                        pg_name = None
                        if kind == "sqlite":
                            db = work / f"{version}-{uuid.uuid4().hex[:6]}.sqlite"
                            store: str | None = str(db)
                        elif kind == "postgresql":
                            store, pg_name = fresh_pg(args.pg)
                        else:
                            store = None
                        if store is not None:
                            create_store(store, src)  # untimed: a store is made once, reused
                        try:
                            took, cpu, own = snapshot(src, work, store, run)
                            if store is not None:
                                hits = stored_hits(store, src)
                                contents[f"{version}/{kind}"] = hits
                                ranked = [(q, r, d) for q, r, d, _, _ in hits]
                                expected = run_hits(work / f"{version}-none.txt")
                                if ranked != expected or len(hits) != 10 * args.queries:
                                    raise SystemExit(f"{version}/{kind}: the store's hits "
                                                     "differ from the engine's answers")
                        finally:
                            if pg_name and args.pg:
                                drop_pg(args.pg, pg_name)
                        results.setdefault(version, {}).setdefault(kind, []).append(
                            (took, cpu, own))
    finally:
        engine.terminate()
        engine.wait(10)
    if args.previous:
        for kind in ("sqlite", "postgresql"):
            a, b = contents.get(f"this/{kind}"), contents.get(f"previous/{kind}")
            if a is not None and b is not None and a != b:
                raise SystemExit(f"{kind}: the store holds other hits than before the change")
    print(f"{args.queries} queries, engine {args.delay * 1000:g} ms per answer, concurrency 16, "
          f"{args.rounds} rounds, versions and stores in turn in each round "
          f"({socket.gethostname()}, {os.cpu_count()} CPUs, load {load_before:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end)")
    print(f"{'code':<10} {'store':<11} {'best s':>7} {'x':>5} {'median s':>9} {'x':>5} "
          f"{'CPU s':>6} {'x':>5} {'own CPU s':>9} {'x':>5} {'rec CPU s':>9}")

    def summary(runs: list[tuple[float, float, float]]) -> tuple[float, ...]:
        walls = sorted(w for w, _, _ in runs)
        return (walls[0], statistics.median(walls), statistics.median(c for _, c, _ in runs),
                statistics.median(o for _, _, o in runs),
                statistics.median(c - o for _, c, o in runs))

    for version, kinds in results.items():
        base = summary(kinds["none"])
        for kind, runs in kinds.items():
            best, median, cpu, own, rec = summary(runs)
            print(f"{version:<10} {kind:<11} {best:7.2f} {best / base[0]:5.2f} {median:9.2f} "
                  f"{median / base[1]:5.2f} {cpu:6.2f} {cpu / base[2]:5.2f} {own:9.2f} "
                  f"{own / base[3]:5.2f} {rec:9.2f}")
    print("x: against the no-store run of the same code; rec CPU: CPU - own CPU, the "
          "recording process (target: best and median wall time at most 1.3 x)")
    if args.previous:
        for kind in results["this"]:
            if kind != "none":
                ours, theirs = summary(results["this"][kind]), summary(results["previous"][kind])
                print(f"{kind}: this / previous = {ours[0] / theirs[0]:.2f} (best), "
                      f"{ours[1] / theirs[1]:.2f} (median), recording CPU {ours[4]:.2f} s "
                      f"against {theirs[4]:.2f} s")
    print("store contents: every query answered, hits equal to the engine's answers"
          + (", and equal before and after the change" if args.previous else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
