"""The grading API's answers, written down: a fixed list of requests, one at a time.

The gate of a change to the graders' requests (issue 30, section 1): every
answer must stay byte for byte what it was. The script prepares a small
evaluation as ``grading_load.py`` does (its ``prepare``: a seeded collection,
the embedded engine, users and API tokens), plus an outsider (a user of no
project) and a second project's evaluation; starts ``rankscope serve``; then
sends a fixed list of requests in a fixed order, one grader at a time (next
tasks of one, two and three, grades, replays, a full result refused, a
regrade, batches, "can't tell", values off the scale, 401 / 404 / 422 answers
including the 401-before-422 cases, an outsider, an undo, "judge later" and
more rounds, the API's OpenAPI document), and writes each one's status, content type and body to
``--out``, with what differs from run to run (timestamps) masked.

Compare two versions with ``cmp``::

    PYTHONPATH=/tmp/before/src python benchmarks/api_transcript.py --db sqlite --out a.txt
    PYTHONPATH=src python benchmarks/api_transcript.py --db sqlite --out b.txt
    cmp a.txt b.txt
    python benchmarks/api_transcript.py --db postgresql --out c.txt   # RANKSCOPE_TEST_PG_URL
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

# run as a script: its folder is on sys.path (the benchmarks are not a package)
from grading_load import (
    PASSWORD,
    database,
    prepare,
    run_evaluation,
    server,
)

# an ISO date and time, as answers carry them (a lease's end, a grade's time)
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
RESULTS = 60  # 6 queries x depth 10
WANTED = 2


def setup(url: str, data: Path) -> dict[str, Any]:
    """The graders (g00, g01, g02), an outsider, and an evaluation in a second project
    that g00 grades too."""
    from rankscope.app.server import open_app_store
    from rankscope.services import accounts, projects, sessions

    prep = prepare(url, data, 3, RESULTS, WANTED)
    store = open_app_store(url)
    try:
        accounts.create_user(store, "outsider", "judge", PASSWORD)
        outsider = sessions.create_token(store, "outsider", "load")
        curator = accounts.get_user(store, "curator")
        other = projects.create_project(store, curator, "other")
        projects.add_member(store, curator, other.id, "g00", "judge")
        other_evaluation, _ = run_evaluation(store, curator, other.id, data, WANTED)
    finally:
        store.close()
    return {"evaluation": prep.evaluation_id, "other": other_evaluation,
            "tokens": dict(prep.graders), "outsider": outsider}


class Transcript:
    """Sends requests and writes down their answers."""

    def __init__(self, base: str, out: Any) -> None:
        self.client = httpx.Client(base_url=base, timeout=60)
        self.out = out
        self.count = 0

    def send(self, label: str, method: str, path: str, token: str | None = None,
             **kw: Any) -> Any:
        """One request; its JSON (or None) after writing its answer down."""
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        answer = self.client.request(method, path, headers=headers, **kw)
        self.count += 1
        body = STAMP.sub("<time>", answer.text)
        self.out.write(f"### {self.count} {label}: {method} {path}\n{answer.status_code} "
                       f"{answer.headers.get('content-type', '')}\n{body}\n")
        try:
            return answer.json()
        except ValueError:
            return None

    def close(self) -> None:
        self.client.close()


def task_ids(answer: Any) -> list[int]:
    """The task ids of a next-tasks answer (none when it is not a list)."""
    return [int(t["task_id"]) for t in answer] if isinstance(answer, list) else []


def requests(t: Transcript, ids: dict[str, Any]) -> None:
    """The fixed list, in its order."""
    ev, other = ids["evaluation"], ids["other"]
    g0, g1, g2 = (ids["tokens"][n] for n in ("g00", "g01", "g02"))
    nxt, grades = f"/api/v1/evaluations/{ev}/tasks/next", f"/api/v1/evaluations/{ev}/grades"

    def grade(label: str, token: str, batch: str, *given: dict[str, Any],
              path: str = grades) -> Any:
        return t.send(label, "POST", path, token, json={"batch_id": batch,
                                                        "grades": list(given)})

    t.send("next task of one", "GET", nxt, g0)
    t.send("next tasks of two", "GET", nxt, g0, params={"n": 2})
    t.send("next tasks of three", "GET", nxt, g0, params={"n": 3})
    # the three leased again first, then three more: six distinct tasks
    mine = task_ids(t.send("next tasks of six", "GET", nxt, g0, params={"n": 6}))
    first = mine[0]
    grade("a grade", g0, "b-1", {"task_id": first, "value": 1})
    grade("its replay", g0, "b-1", {"task_id": first, "value": 1})
    # a result filled by two others, then graded by g00: refused (two wanted)
    full = task_ids(t.send("g01's next task", "GET", nxt, g1))[0]
    grade("g01 grades it", g1, "b1-1", {"task_id": full, "value": 2})
    t.send("g02's next task", "GET", nxt, g2)
    grade("g02 grades the same result", g2, "b2-1", {"task_id": full, "value": 0})
    grade("a full result refused", g0, "b-2", {"task_id": full, "value": 1})
    grade("a regrade", g0, "b-3", {"task_id": first, "value": 3})
    grade("a batch of two", g0, "b-4", {"task_id": mine[1], "value": 0},
          {"task_id": mine[2], "value": 2})
    grade("its replay", g0, "b-4", {"task_id": mine[1], "value": 0},
          {"task_id": mine[2], "value": 2})
    grade("a replay sent to another project's evaluation", g0, "b-4",
          {"task_id": mine[1], "value": 0}, {"task_id": mine[2], "value": 2},
          path=f"/api/v1/evaluations/{other}/grades")
    grade("can't tell with a reason", g0, "b-5",
          {"task_id": mine[3], "value": None, "reason": "the page did not load"})
    grade("can't tell without a reason", g0, "b-6", {"task_id": mine[4], "value": None})
    grade("off the scale", g0, "b-7", {"task_id": mine[4], "value": 7})
    grade("true as a value", g0, "b-8", {"task_id": mine[4], "value": True})
    grade("an unknown task", g0, "b-9", {"task_id": 999_999, "value": 1})
    grade("the same task twice, an off-scale grade between", g0, "b-10",
          {"task_id": mine[4], "value": 1}, {"task_id": mine[5], "value": 9},
          {"task_id": mine[4], "value": 2})
    grade("an empty batch id", g0, "", {"task_id": mine[5], "value": 1})
    grade("an empty batch", g0, "b-11")
    grade("a batch id too long", g0, "b" * 5000, {"task_id": mine[5], "value": 1})
    # 401, and 401 before 422 (a request with both faults)
    t.send("no token", "GET", nxt)
    t.send("a bad token", "GET", nxt, "not-a-token")
    t.send("a bad token, a good body", "POST", grades, "not-a-token",
           json={"batch_id": "x-1", "grades": [{"task_id": mine[5], "value": 1}]})
    t.send("a bad token, a bad body", "POST", grades, "not-a-token",
           json={"batch_id": 5, "grades": "none"})
    t.send("a bad token, bad JSON", "POST", grades, "not-a-token", content=b"{not json",
           headers={"Content-Type": "application/json"})
    t.send("no token, bad JSON", "POST", grades, content=b"{not json",
           headers={"Content-Type": "application/json"})
    # 422
    t.send("n of 0", "GET", nxt, g0, params={"n": 0})
    t.send("n of a million", "GET", nxt, g0, params={"n": 1_000_000})
    t.send("an evaluation id of 0", "GET", "/api/v1/evaluations/0/tasks/next", g0)
    t.send("no grades field", "POST", grades, g0, json={"batch_id": "b-12"})
    t.send("bad JSON", "POST", grades, g0, content=b"{not json",
           headers={"Content-Type": "application/json"})
    # 404
    t.send("an unknown evaluation's next task", "GET",
           "/api/v1/evaluations/999999/tasks/next", g0)
    grade("an unknown evaluation's grade", g0, "b-13", {"task_id": mine[5], "value": 1},
          path="/api/v1/evaluations/999999/grades")
    t.send("an unknown task's view", "GET", "/api/v1/tasks/999999", g0)
    t.send("an unknown task put off", "POST", "/api/v1/tasks/999999/later", g0)
    # an outsider (a user of no project)
    t.send("an outsider's next task", "GET", nxt, ids["outsider"])
    grade("an outsider's grade", ids["outsider"], "o-1", {"task_id": mine[5], "value": 1})
    t.send("an outsider's view of a task", "GET", f"/api/v1/tasks/{mine[5]}", ids["outsider"])
    # undo, judge later, a task's view
    t.send("undo", "POST", f"/api/v1/evaluations/{ev}/undo", g0)
    t.send("judge later", "POST", f"/api/v1/tasks/{mine[5]}/later", g0)
    t.send("that task's view", "GET", f"/api/v1/tasks/{mine[5]}", g0)
    t.send("a task's view", "GET", f"/api/v1/tasks/{first}", g0)
    # more rounds, each grader in turn
    for round_ in range(6):
        for name, token in (("g00", g0), ("g01", g1), ("g02", g2)):
            got = task_ids(t.send(f"round {round_}: {name}'s next task", "GET", nxt, token))
            for task in got:
                grade(f"round {round_}: {name}'s grade", token, f"{name}-r{round_}",
                      {"task_id": task, "value": task % 4})
    three = task_ids(t.send("next tasks of three again", "GET", nxt, g1, params={"n": 3}))
    grade("a batch of three", g1, "b1-3", *({"task_id": x, "value": x % 4} for x in three))
    t.send("the evaluation's progress", "GET", f"/api/v1/evaluations/{ev}/progress", g0)
    t.send("the API's description", "GET", "/api/openapi.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("RANKSCOPE_TEST_PG_URL"))
    parser.add_argument("--out", required=True, help="the file the answers are written to")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rankscope-transcript-"))
    try:
        data = work / "data"
        data.mkdir()
        with database(args.db, args.pg_url, work) as url:
            ids = setup(url, data)
            with server(url, data, work / "server.log") as (base, _pid), \
                    open(args.out, "w", encoding="utf-8") as out:
                transcript = Transcript(base, out)
                try:
                    requests(transcript, ids)
                finally:
                    transcript.close()
                print(f"{transcript.count} requests written to {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
