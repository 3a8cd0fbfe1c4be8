"""Graders at once against a real ``rankscope serve``: how long they wait, how much gets done.

Prepares an evaluation of ``--results`` results (default 12,000: 1,200
synthetic queries x depth 10 over a seeded synthetic corpus, the embedded
engine) wanting ``--wanted`` grades each (default 3), with its own users,
passwords and API tokens, in a new database (a SQLite file, or a fresh
PostgreSQL database on ``--pg-url`` / ``$RANKSCOPE_TEST_PG_URL``, dropped
afterwards); starts ``rankscope serve`` on 127.0.0.1 on a free port; then

* **idle**: one grader alone, ``--idle`` rounds of "next task" then "grade"
  (after a first round, reported apart: the server's caches are cold then);
* **load**: ``--graders`` graders at once for ``--seconds`` (or until nothing
  is left), each in a loop over its own connection, as fast as answered or,
  with ``--think S``, spending 0.5 to 1.5 x S seconds on each result.

``--path api`` (default): ``GET /api/v1/evaluations/ID/tasks/next`` then
``POST /api/v1/evaluations/ID/grades`` (one grade, a batch id of its own).
``--path html``: the browser's way (htmx): the grading page's task area once,
then each grade is the form's POST, whose answer is the next task; the two
figures are then "first task" and "grade + next task".

Prints p50 / p95 / max of each, grades/s, and the checks: every acknowledged
grade is in the database (``lost`` counts those missing), no result has more
counted grades than wanted (``over_limit``) nor more grades plus leases live at
the end (``over_leased``), no grader graded a result twice, none was given a
result twice (``shown_twice``), and ``errors`` (an answer other than 2xx, a
timeout, a refused grade); then the server process's CPU during the load, per
request (a figure the machine's other load does not change, unlike the
latencies). Everything is bounded in time (server start 120 s, each request
60 s, the load ``--seconds``).

Run (figures and the machine's load in benchmarks/README.md, "Graders at once")::

    python benchmarks/grading_load.py --db sqlite --graders 8
    python benchmarks/grading_load.py --db postgresql --graders 8     # needs a server
    python benchmarks/grading_load.py --db postgresql --graders 50 --think 2
    python benchmarks/grading_load.py --path html
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

MAIN = "import sys; from rankscope.cli.main import main; sys.exit(main())"
PASSWORD = "load-test-password"
SEED = 30
TASK = re.compile(r'id="task" class="task" data-task="(\d+)"')


# -- the data ---------------------------------------------------------------------------


def _words(rng: random.Random, n: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "po", "da", "fi"]
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(seen)


def write_collection(directory: Path, n_queries: int) -> None:
    """A seeded corpus (8 x n_queries documents), its queries and an embedded endpoint."""
    rng = random.Random(SEED)
    vocabulary = _words(rng, 3000)
    weights = [1 / (i + 1) ** 0.9 for i in range(len(vocabulary))]
    with open(directory / "corpus.jsonl", "w", encoding="utf-8") as out:
        for i in range(8 * n_queries):
            title = " ".join(rng.choices(vocabulary, weights, k=5))
            text = " ".join(rng.choices(vocabulary, weights, k=40))
            out.write(json.dumps({"id": f"d{i}", "title": title, "text": text,
                                  "url": f"https://example.org/d{i}"}) + "\n")
    lines = ["query_id\ttext\tneed"]
    seen: set[str] = set()
    while len(lines) <= n_queries:  # distinct texts: one item per (query, document)
        # one frequent word (every query finds depth results) and two rarer ones
        text = " ".join([rng.choice(vocabulary[:40]), *rng.sample(vocabulary[40:1500], 2)])
        if text not in seen:
            seen.add(text)
            lines.append(f"q{len(lines)}\t{text}\tfind pages about {text}")
    (directory / "queries.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (directory / "endpoint.toml").write_text(
        'kind = "embedded"\nname = "load"\ncorpus = "corpus.jsonl"\n'
        'index = "load.index.sqlite"\nfields = ["title", "text"]\n', encoding="utf-8")


@dataclass
class Prepared:
    """What the graders need: the evaluation, its size, who grades."""

    evaluation_id: int
    tasks: int
    graders: list[tuple[str, str]]  # (name, API token)


DEPTH = 10


def run_evaluation(store: Any, curator: Any, project_id: int, data: Path,
                   wanted: int) -> tuple[int, int]:
    """In a project: the query set, the embedded endpoint and an evaluation of ``data``'s
    collection (:func:`write_collection`), run; its id and its number of tasks."""
    from rankscope.outbound.hosts import HostPolicy
    from rankscope.services import campaign_runs, campaigns, catalog
    from rankscope.services.boundary import Boundary

    # what `rankscope serve --data-dir DATA` allows by default: the files inside DATA only
    boundary = Boundary(files_dir=data.resolve(), allowed_env=frozenset(),
                        hosts=HostPolicy.parse(()))
    qs = catalog.import_query_set(store, curator, project_id, "load",
                                  (data / "queries.tsv").read_text(encoding="utf-8"))
    ep = catalog.save_endpoint(store, curator, project_id,
                               (data / "endpoint.toml").read_text(encoding="utf-8"),
                               boundary=boundary, base_dir=data)
    ev = campaigns.create_evaluation(store, curator, project_id, campaigns.EvaluationSpec(
        name="load", query_set_id=qs.id, endpoint_id=ep.id, grades_wanted=wanted,
        depth=DEPTH, metrics=["nDCG@10"]))
    run = campaign_runs.run_evaluation(store, curator, ev.id, boundary=boundary)
    return ev.id, int(run["tasks"])


def prepare(url: str, data: Path, n_graders: int, results: int, wanted: int) -> Prepared:
    """Users, tokens, a project, a query set, an endpoint and a run evaluation."""
    from rankscope.app.server import open_app_store
    from rankscope.services import accounts, projects, sessions

    write_collection(data, -(-results // DEPTH))
    store = open_app_store(url)
    try:
        curator = accounts.create_user(store, "curator", "curator", PASSWORD)
        project = projects.create_project(store, curator, "load")
        graders = []
        for i in range(n_graders):
            name = f"g{i:02d}"
            accounts.create_user(store, name, "judge", PASSWORD)
            projects.add_member(store, curator, project.id, name, "judge")
            graders.append((name, sessions.create_token(store, name, "load")))
        evaluation_id, tasks = run_evaluation(store, curator, project.id, data, wanted)
        return Prepared(evaluation_id, tasks, graders)
    finally:
        store.close()


@contextlib.contextmanager
def database(kind: str, pg_url: str | None, work: Path) -> Iterator[str]:
    """A new database's URL: a SQLite file in ``work``, or a PostgreSQL database (dropped)."""
    if kind == "sqlite":
        yield str(work / "load.sqlite")
        return
    import psycopg

    from rankscope.store.db import store_url

    if not pg_url:
        raise SystemExit("--db postgresql needs --pg-url or RANKSCOPE_TEST_PG_URL")
    admin = store_url(pg_url).replace("postgresql+psycopg://", "postgresql://")
    name = "rsload_" + uuid.uuid4().hex[:10]
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    try:
        yield store_url(pg_url).rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- the server -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(url: str, data: Path, log: Path) -> Iterator[tuple[str, int]]:
    """``rankscope serve`` on 127.0.0.1 (started within 120 s, stopped on exit): its base
    URL and process id."""
    port = free_port()
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", MAIN, "serve", "--db", url, "--host", "127.0.0.1",
             "--port", str(port), "--data-dir", str(data)], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise SystemExit("the server stopped: " + log.read_text(encoding="utf-8"))
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start within 120 s") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


# -- the graders ------------------------------------------------------------------------


@dataclass
class Tally:
    """What graders saw: latencies (seconds) and outcomes."""

    next_s: list[float] = field(default_factory=list)
    first_next_s: list[float] = field(default_factory=list)  # each grader's first (a herd)
    grade_s: list[float] = field(default_factory=list)
    acknowledged: dict[str, list[int]] = field(default_factory=dict)  # grader -> grade ids
    saved: dict[str, int] = field(default_factory=dict)  # grader -> acknowledged grades
    shown: dict[str, list[int]] = field(default_factory=dict)  # grader -> tasks given them
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    graders_done: int = 0


class Grader:
    """One grader over one connection: the API's way or the grading page's."""

    def __init__(self, base: str, name: str, token: str, evaluation: int, path: str,
                 tally: Tally) -> None:
        self.name, self.evaluation, self.path, self.tally = name, evaluation, path, tally
        headers = {"Authorization": f"Bearer {token}"} if path == "api" else {}
        self.client = httpx.AsyncClient(base_url=base, headers=headers, timeout=60)
        self.batches = 0
        self.batch_prefix = f"{name}-{uuid.uuid4().hex[:8]}"
        self.task: int | None = None
        tally.acknowledged.setdefault(name, [])
        tally.saved.setdefault(name, 0)
        tally.shown.setdefault(name, [])

    async def sign_in(self) -> None:
        if self.path == "html":
            answer = await self.client.post("/login", data={"name": self.name,
                                                            "password": PASSWORD})
            if answer.status_code != 303:
                raise SystemExit(f"{self.name} could not sign in: {answer.status_code}")

    async def _timed(self, into: list[float], method: str, url: str,
                     **kw: Any) -> httpx.Response | None:
        start = time.perf_counter()
        try:
            answer = await self.client.request(method, url, **kw)
        except httpx.HTTPError as exc:
            self.tally.errors.append(f"{method} {url}: {type(exc).__name__} {exc}")
            return None
        into.append(time.perf_counter() - start)
        if not answer.is_success:
            self.tally.errors.append(f"{method} {url}: {answer.status_code} {answer.text[:200]}")
            return None
        return answer

    async def next_task(self) -> int | None:
        """Ask for the next task (API) or open the grading page's task area (html)."""
        if self.path == "api":
            answer = await self._timed(self.tally.next_s, "GET",
                                       f"/api/v1/evaluations/{self.evaluation}/tasks/next")
            if answer is None or not answer.json():
                return None
            task = int(answer.json()[0]["task_id"])
            self.tally.shown[self.name].append(task)
            return task
        answer = await self._timed(self.tally.next_s, "GET",
                                   f"/evaluations/{self.evaluation}/grade",
                                   headers={"HX-Request": "true"})
        return self._task_in(answer)

    def _task_in(self, answer: httpx.Response | None) -> int | None:
        if answer is None:
            return None
        found = TASK.search(answer.text)
        if not found:
            return None
        self.tally.shown[self.name].append(int(found[1]))
        return int(found[1])

    async def grade(self, task_id: int) -> int | None:
        """Grade a task; the next task (html) or None (api: ask for it next)."""
        value = task_id % 4
        if self.path == "api":
            self.batches += 1
            body = {"batch_id": f"{self.batch_prefix}-{self.batches}",
                    "grades": [{"task_id": task_id, "value": value}]}
            answer = await self._timed(self.tally.grade_s, "POST",
                                       f"/api/v1/evaluations/{self.evaluation}/grades", json=body)
            if answer is not None:
                for result in answer.json()["results"]:
                    if result["ok"]:
                        self.tally.acknowledged[self.name].append(int(result["grade_id"]))
                        self.tally.saved[self.name] += 1
                    else:
                        self.tally.refused += 1
                        self.tally.errors.append(f"refused: {result['error']}")
            return None
        answer = await self._timed(self.tally.grade_s, "POST", f"/tasks/{task_id}/grade",
                                   data={"evaluation_id": str(self.evaluation),
                                         "value": str(value)},
                                   headers={"HX-Request": "true"})
        if answer is not None:
            status = re.search(r'id="saved"[^>]*>([^<]*)<', answer.text)
            said = status[1] if status else ""
            if said.startswith("Saved"):
                self.tally.saved[self.name] += 1
            else:
                self.tally.refused += 1
                self.tally.errors.append(f"not saved: {said!r}")
        return self._task_in(answer)

    async def loop(self, until: float, rounds: int | None = None, think: float = 0.0) -> None:
        """Grade until ``until`` (monotonic), ``rounds`` grades, or nothing is left;
        ``think``: seconds spent on a result before grading it (0.5 to 1.5 times, seeded)."""
        done = 0
        task = None
        pace = random.Random(self.name)
        while time.monotonic() < until and (rounds is None or done < rounds):
            if task is None:
                asked = len(self.tally.next_s)
                task = await self.next_task()
                if not done and len(self.tally.next_s) > asked:  # no await since: it is ours
                    self.tally.first_next_s.append(self.tally.next_s[-1])
                if task is None:
                    break
            if think:
                await asyncio.sleep(think * pace.uniform(0.5, 1.5))
            task = await self.grade(task)
            done += 1
        self.tally.graders_done += 1

    async def close(self) -> None:
        await self.client.aclose()


async def drive(base: str, prep: Prepared, path: str, graders: int, seconds: float,
                rounds: int | None = None, think: float = 0.0) -> tuple[Tally, float]:
    """``graders`` graders at once; the tally and the seconds the load lasted."""
    tally = Tally()
    crowd = [Grader(base, name, token, prep.evaluation_id, path, tally)
             for name, token in prep.graders[:graders]]
    try:
        await asyncio.gather(*(g.sign_in() for g in crowd))
        start = time.monotonic()
        await asyncio.gather(*(g.loop(start + seconds, rounds, think) for g in crowd))
        return tally, time.monotonic() - start
    finally:
        await asyncio.gather(*(g.close() for g in crowd))


# -- checks and the report --------------------------------------------------------------


def check(url: str, prep: Prepared, tallies: list[Tally], wanted: int) -> dict[str, int]:
    """Lost acknowledged grades, results over the limit (grades, and grades plus the
    leases live at the end), double grades by one grader, a result given twice to one."""
    from sqlalchemy import func, select

    from rankscope.app.server import open_app_store
    from rankscope.store.models import utcnow
    from rankscope.store.models_app import Grade, Lease, Rater, Task

    store = open_app_store(url)
    try:
        with store.read() as s:
            active = set(s.scalars(select(Grade.id).where(Grade.active)))
            ids = [i for t in tallies for ids in t.acknowledged.values() for i in ids]
            lost = sum(1 for i in ids if i not in active)
            per_rater = dict(s.execute(
                select(Rater.name, func.count(Grade.id)).join(Grade, Grade.rater_id == Rater.id)
                .where(Grade.active).group_by(Rater.name)).all())
            saved: dict[str, int] = {}
            for t in tallies:
                for name, n in t.saved.items():
                    saved[name] = saved.get(name, 0) + n
            # html: no grade ids come back; each grader's acknowledged count against the rows
            lost_by_count = sum(max(0, n - int(per_rater.get(name, 0)))
                                for name, n in saved.items())
            extra = sum(max(0, int(per_rater.get(name, 0)) - n) for name, n in saved.items())
            per_item = s.execute(select(Grade.item_id, func.count(Grade.id))
                                 .join(Task, Task.item_id == Grade.item_id)
                                 .where(Task.evaluation_id == prep.evaluation_id, Grade.active)
                                 .group_by(Grade.item_id)).all()
            over = sum(1 for _, n in per_item if n > wanted)
            leased = dict(s.execute(
                select(Task.item_id, func.count(Lease.id)).join(Lease, Lease.task_id == Task.id)
                .where(Task.evaluation_id == prep.evaluation_id, Lease.expires_at > utcnow())
                .group_by(Task.item_id)).all())
            graded = {item: int(n) for item, n in per_item}
            over_leased = sum(1 for item, n in leased.items()
                              if graded.get(item, 0) + int(n) > wanted)
            # the graders of one phase are distinct users: count repeats within a grader
            shown_twice = sum(len(tasks) - len(set(tasks))
                              for t in tallies for tasks in t.shown.values())
            twice = int(s.scalar(select(func.count()).select_from(
                select(Grade.item_id, Grade.rater_id).where(Grade.active)
                .group_by(Grade.item_id, Grade.rater_id).having(func.count() > 1).subquery()))
                or 0)
        return {"lost": max(lost, lost_by_count), "unacknowledged_rows": extra,
                "over_limit": over, "over_leased": over_leased, "graded_twice": twice,
                "shown_twice": shown_twice,
                "grades_in_db": sum(int(n) for n in per_rater.values())}
    finally:
        store.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux ``/proc``; NaN elsewhere): the
    server's CPU per request does not depend on what else loads the machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ms(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _without(values: list[float], some: list[float]) -> list[float]:
    left = list(values)
    for v in some:
        if v in left:  # (the idle phase's first one is popped as the cold round)
            left.remove(v)
    return left


def summary(tally: Tally, seconds: float) -> dict[str, Any]:
    grades = sum(tally.saved.values())
    return {"next_p50_ms": _ms(tally.next_s, 0.5), "next_p95_ms": _ms(tally.next_s, 0.95),
            "next_max_ms": _ms(tally.next_s, 1.0), "next_n": len(tally.next_s),
            # without each grader's first next task (all graders start at the same instant)
            "next_p95_after_first_ms": _ms(_without(tally.next_s, tally.first_next_s), 0.95),
            "first_next_p50_ms": _ms(tally.first_next_s, 0.5),
            "first_next_max_ms": _ms(tally.first_next_s, 1.0),
            "grade_p50_ms": _ms(tally.grade_s, 0.5), "grade_p95_ms": _ms(tally.grade_s, 0.95),
            "grade_max_ms": _ms(tally.grade_s, 1.0), "grades": grades,
            "seconds": round(seconds, 2), "grades_per_s": grades / seconds if seconds else 0.0,
            "errors": len(tally.errors), "refused": tally.refused,
            "first_errors": tally.errors[:5]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("RANKSCOPE_TEST_PG_URL"))
    parser.add_argument("--graders", type=int, default=8)
    parser.add_argument("--results", type=int, default=12_000)
    parser.add_argument("--wanted", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load lasts")
    parser.add_argument("--idle", type=int, default=30, help="rounds of the grader alone")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds a grader spends on a result (0: as fast as answered)")
    parser.add_argument("--path", choices=("api", "html"), default="api")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not 1 <= args.graders <= 500 or args.results < 10 or args.wanted < 1:
        parser.error("--graders 1-500, --results >= 10, --wanted >= 1")

    work = Path(tempfile.mkdtemp(prefix="rankscope-load-"))
    try:
        data = work / "data"
        data.mkdir()
        with database(args.db, args.pg_url, work) as url:
            t0 = time.monotonic()
            prep = prepare(url, data, args.graders, args.results, args.wanted)
            print(f"prepared evaluation #{prep.evaluation_id}: {prep.tasks} results x "
                  f"{args.wanted} grades wanted, {args.graders} graders "
                  f"({time.monotonic() - t0:.0f} s); load average {os.getloadavg()[0]:.2f}")
            # the preparation's objects live to the end: frozen, the collector's full passes
            # (0.1 s each over them) no longer pause this driver inside the timed phases
            gc.collect()
            gc.freeze()
            with server(url, data, work / "server.log") as (base, pid):
                idle, idle_s = asyncio.run(drive(base, prep, args.path, 1, 600, args.idle + 1))
                # the first round after the start (caches cold) is reported apart
                cold = {"next_ms": 1000 * idle.next_s.pop(0),
                        "grade_ms": 1000 * idle.grade_s.pop(0)}
                cpu_before = cpu_seconds(pid)
                load, load_s = asyncio.run(drive(base, prep, args.path, args.graders,
                                                 args.seconds, think=args.think))
                server_cpu = cpu_seconds(pid) - cpu_before
            checks = check(url, prep, [idle, load], args.wanted)
        figures = {"db": args.db, "path": args.path, "graders": args.graders,
                   "think": args.think, "results": prep.tasks, "wanted": args.wanted,
                   "cold": cold,
                   "load_average": os.getloadavg()[0], "idle": summary(idle, idle_s),
                   "load": summary(load, load_s), "checks": checks,
                   "server_cpu_s": server_cpu,
                   "server_cpu_ms_per_request": 1000 * server_cpu / max(
                       1, len(load.next_s) + len(load.grade_s))}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    first, then = ("first task", "grade+next") if args.path == "html" else ("next task", "grade")
    print(f"{'':6} {first + ' p50/p95/max ms':>28} {then + ' p50/p95/max ms':>28} "
          f"{'grades':>7} {'grades/s':>9} {'errors':>7}")
    for phase in ("idle", "load"):
        f = figures[phase]
        print(f"{phase:6} {f['next_p50_ms']:10.1f} {f['next_p95_ms']:8.1f} {f['next_max_ms']:8.1f} "
              f"{f['grade_p50_ms']:10.1f} {f['grade_p95_ms']:8.1f} {f['grade_max_ms']:8.1f} "
              f"{f['grades']:7d} {f['grades_per_s']:9.1f} {f['errors']:7d}")
        for line in f["first_errors"]:
            print(f"  {line}")
    print(f"first round after the start: {first} {cold['next_ms']:.1f} ms, {then} "
          f"{cold['grade_ms']:.1f} ms (not in idle)")
    f = figures["load"]
    print(f"load without each grader's first next task (all start at once): next task p95 "
          f"{f['next_p95_after_first_ms']:.1f} ms; those first ones p50 "
          f"{f['first_next_p50_ms']:.1f} / max {f['first_next_max_ms']:.1f} ms")
    print(f"server CPU during the load: {figures['server_cpu_s']:.2f} s, "
          f"{figures['server_cpu_ms_per_request']:.1f} ms per request "
          f"({figures['load']['next_n']} next + {len(load.grade_s)} grade requests)")
    print("checks: " + ", ".join(f"{k} {v}" for k, v in checks.items())
          + f"; load average after {figures['load_average']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    bad = (checks["lost"] or checks["over_limit"] or checks["over_leased"]
           or checks["graded_twice"] or checks["shown_twice"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
