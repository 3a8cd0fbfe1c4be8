"""How long a curator waits for the project page and an evaluation's metrics page.

Builds (once per database) a project with ``--evaluations`` evaluations (default 5) of
``--results`` results each (default 12,000: 1,200 synthetic queries x depth 10, the
embedded engine of :mod:`grading_load`), all on the same query set and engine, so the
results (and grades) are shared; half the results are graded (one grade each, seeded)
through :func:`rankscope.services.grading.submit_batch`; the second evaluation is then
frozen and a few hundred more results graded, so its metrics page shows frozen and
today's numbers side by side (the heaviest page). Then times, in the same process:

* ``project``: ``GET /projects/ID`` (every evaluation's progress and headline metric);
* ``project_after_grade``: the same page right after one more grade (given untimed through
  :func:`rankscope.services.grading.submit_batch`): what a curator waits for while graders
  work (every provisional headline's data changed);
* ``metrics``: ``GET /evaluations/ID/metrics`` of a provisional evaluation;
* ``metrics_frozen``: the same page of the frozen one;
* ``load``: :func:`rankscope.services.dashboards.load` of one evaluation (its data);

over HTTP through the app's test client (the whole request: routing, services,
templates), signed in as the curator. Prints the median and fastest of ``--rounds``
views of each (the first view apart: caches are cold then) and ``uptime``.

``--profile N`` times nothing: it profiles (cProfile, CPU) ``N`` project views right
after one more grade each, calling the service the page calls
(:func:`rankscope.services.overview.project_overview`), and prints the project's functions
by cumulative time: where a view's time goes. ``--profile-page metrics_frozen`` profiles
the frozen evaluation's metrics page instead (its two services, as its route calls them).

``--before SRC`` times a second source tree (e.g. ``git archive main | tar -x -C
/tmp/before``) on the same database, the two alternating round by round in child
processes, and prints after/before ratios (median and fastest): the machine's other
load weighs on both alike.

Run (figures in benchmarks/README.md, "App pages")::

    python benchmarks/app_pages.py                                  # SQLite
    python benchmarks/app_pages.py --pg "$RANKSCOPE_TEST_PG_URL"    # PostgreSQL
    python benchmarks/app_pages.py --before /tmp/before --rounds 5
    python benchmarks/app_pages.py --profile 5                      # where the time goes
    python benchmarks/app_pages.py --profile 5 --profile-page metrics_frozen
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grading_load

PAGES = ("project", "project_after_grade", "metrics", "metrics_frozen", "load")


def build(url: str, work: Path, n_evaluations: int, results: int) -> dict[str, int]:
    """The project and its evaluations (see the module's docstring); their ids."""
    from rankscope.app.server import open_app_store
    from rankscope.outbound.hosts import HostPolicy
    from rankscope.services import (
        accounts,
        assignment,
        campaign_runs,
        campaigns,
        freezing,
        grading,
    )
    from rankscope.services.boundary import Boundary
    from rankscope.services.grading import GradeInput

    prep = grading_load.prepare(url, work, 1, results, 1)
    boundary = Boundary(files_dir=work.resolve(), allowed_env=frozenset(),
                        hosts=HostPolicy.parse(()))
    store = open_app_store(url)
    try:
        curator = accounts.get_user(store, "curator")
        grader = accounts.get_user(store, "g00")
        first = campaigns.get_evaluation(store, curator, prep.evaluation_id)
        ids = [first.id]
        for i in range(1, n_evaluations):
            ev = campaigns.create_evaluation(
                store, curator, first.project_id, campaigns.EvaluationSpec(
                    name=f"load {i}", query_set_id=first.query_set_id,
                    endpoint_id=first.endpoint_id, grades_wanted=1, depth=first.depth,
                    metrics=["nDCG@10", "P@10", "RR@10"]))
            campaign_runs.run_evaluation(store, curator, ev.id, boundary=boundary)
            ids.append(ev.id)
        rng = random.Random(1)

        def grade(n: int, label: str) -> None:
            for b in range(-(-n // 500)):
                tasks = assignment.next_tasks(store, grader, ids[0], n=min(500, n - 500 * b))
                grading.submit_batch(store, grader, ids[0], f"{label}{b}", [
                    GradeInput(t.task_id, rng.randint(0, 3)) for t in tasks])

        grade(results // 2, "half")
        freezing.freeze_evaluation(store, curator, ids[1])
        grade(500, "after")
        return {"project": first.project_id, "provisional": ids[0], "frozen": ids[1]}
    finally:
        store.close()


def measure(url: str, ids: dict[str, int], rounds: int) -> dict[str, list[float]]:
    """Seconds of each view, first view first."""
    import tempfile as tf

    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app
    from rankscope.app.server import open_app_store
    from rankscope.services import accounts, assignment, dashboards, grading
    from rankscope.services.grading import GradeInput

    store = open_app_store(url)
    out: dict[str, list[float]] = {page: [] for page in PAGES}
    try:
        app = create_app(store, tf.mkdtemp(prefix="rs-pages-"))
        client = TestClient(app, base_url="http://testserver", follow_redirects=False)
        signed = client.post("/login", data={"name": "curator",
                                             "password": grading_load.PASSWORD})
        if signed.status_code != 303:
            raise SystemExit(f"sign-in failed: {signed.status_code}")
        curator = accounts.get_user(store, "curator")
        grader = accounts.get_user(store, "g00")
        paths = {"project": f"/projects/{ids['project']}",
                 "metrics": f"/evaluations/{ids['provisional']}/metrics",
                 "metrics_frozen": f"/evaluations/{ids['frozen']}/metrics"}
        for _ in range(rounds + 1):
            for page, path in paths.items():
                t = time.perf_counter()
                answer = client.get(path)
                out[page].append(time.perf_counter() - t)
                if answer.status_code != 200:
                    raise SystemExit(f"{path}: {answer.status_code}")
            task = assignment.next_tasks(store, grader, ids["provisional"], n=1)
            if not task:
                raise SystemExit("no result left to grade: fewer --rounds or more --results")
            grading.submit_batch(store, grader, ids["provisional"], f"b{time.time_ns()}",
                                 [GradeInput(task[0].task_id, 2)])
            t = time.perf_counter()
            answer = client.get(paths["project"])
            out["project_after_grade"].append(time.perf_counter() - t)
            t = time.perf_counter()
            dashboards.load(store, curator, ids["provisional"])
            out["load"].append(time.perf_counter() - t)
        client.close()
    finally:
        store.close()
    return out


def profile(url: str, ids: dict[str, int], views: int, page: str) -> None:
    """Print where ``views`` views of ``page`` spend their CPU: ``project_after_grade`` (the
    project page's service right after one more grade each) or ``metrics_frozen`` (the frozen
    evaluation's metrics page's two services, as its route calls them)."""
    import cProfile
    import pstats

    from rankscope.app.server import open_app_store
    from rankscope.services import accounts, assignment, dashboards, grading, overview
    from rankscope.services.grading import GradeInput

    store = open_app_store(url)
    try:
        curator = accounts.get_user(store, "curator")
        grader = accounts.get_user(store, "g00")
        overview.project_overview(store, curator, ids["project"])  # frozen headlines kept
        dashboards.metrics_report(store, curator, ids["frozen"])  # frozen data kept
        prof = cProfile.Profile()
        for i in range(views):
            if page == "metrics_frozen":
                prof.enable()
                loaded = dashboards.Loaded()
                dashboards.metrics_report(store, curator, ids["frozen"], loaded=loaded)
                dashboards.coverage_report(store, curator, ids["frozen"], loaded=loaded)
                prof.disable()
                continue
            task = assignment.next_tasks(store, grader, ids["provisional"], n=1)
            if not task:
                raise SystemExit("no result left to grade: fewer views or more --results")
            grading.submit_batch(store, grader, ids["provisional"], f"p{i}",
                                 [GradeInput(task[0].task_id, 2)])
            prof.enable()
            overview.project_overview(store, curator, ids["project"])
            prof.disable()
        what = ("frozen metrics page views (its services)" if page == "metrics_frozen"
                else "project views, each right after one more grade")
        print(f"{views} {what} (cumulative seconds over all {views}; divide by {views} for "
              "one view):")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(
            r"rankscope/(services|judgments|engine/evaluate)", 50)
    finally:
        store.close()


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return "(uptime unavailable)"


def _child(src: Path | None, url: str, ids: dict[str, int], rounds: int) -> dict[str, Any]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src / "src")
    args = [sys.executable, __file__, "--child", json.dumps({"url": url, "ids": ids}),
            "--rounds", str(rounds)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"child ({src or 'this tree'}) failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _report(label: str, rest: dict[str, list[float]],
            first: dict[str, list[float]]) -> dict[str, float]:
    """Print the median and fastest of the views after the first, and of the first views
    (one per process: nothing kept in it yet)."""
    medians = {}
    for page in PAGES:
        medians[page] = statistics.median(rest[page])
        print(f"  {label:7} {page:20} median {medians[page] * 1000:7.1f} ms  fastest "
              f"{min(rest[page]) * 1000:7.1f} ms  ({len(rest[page])} views);  first view "
              f"median {statistics.median(first[page]) * 1000:7.1f} ms  fastest "
              f"{min(first[page]) * 1000:7.1f} ms ({len(first[page])})")
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", metavar="URL", help="PostgreSQL server (a new database, "
                        "dropped after); SQLite by default")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="a second source tree to time against this one")
    parser.add_argument("--rounds", type=int, default=5, help="views of each page (default 5)")
    parser.add_argument("--evaluations", type=int, default=5)
    parser.add_argument("--results", type=int, default=12_000)
    parser.add_argument("--alternations", type=int, default=3,
                        help="with --before: child processes of each tree, alternating")
    parser.add_argument("--profile", type=int, metavar="N",
                        help="profile N views of --profile-page instead of timing")
    parser.add_argument("--profile-page", choices=("project_after_grade", "metrics_frozen"),
                        default="project_after_grade",
                        help="the page --profile profiles (default project_after_grade)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print(json.dumps(measure(spec["url"], spec["ids"], args.rounds)))
        return 0
    with tempfile.TemporaryDirectory(prefix="rs-app-pages-") as tmp:
        work = Path(tmp)
        (work / "data").mkdir()
        with grading_load.database("postgresql" if args.pg else "sqlite", args.pg,
                                   work) as url:
            t = time.perf_counter()
            ids = build(url, work / "data", args.evaluations, args.results)
            print(f"built {args.evaluations} evaluations x {args.results} results "
                  f"({'PostgreSQL' if args.pg else 'SQLite'}) in {time.perf_counter() - t:.0f} s")
            print(_uptime())
            if args.profile:
                profile(url, ids, args.profile, args.profile_page)
            elif args.before is None:
                times = measure(url, ids, args.rounds)
                _report("this", {p: v[1:] for p, v in times.items()},
                        {p: v[:1] for p, v in times.items()})
            else:
                both: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
                for _ in range(args.alternations):
                    for label, src in (("before", args.before), ("after", None)):
                        times = _child(src, url, ids, args.rounds)
                        for page in PAGES:  # the first view of each child apart
                            both[label].setdefault(page, []).append(times[page][0])
                            both[label].setdefault(page + "+", []).extend(times[page][1:])
                rows = {}
                for label in ("before", "after"):
                    rows[label] = _report(label, {p: both[label][p + "+"] for p in PAGES},
                                          {p: both[label][p] for p in PAGES})
                for page in PAGES:
                    a, b = both["after"][page + "+"], both["before"][page + "+"]
                    ratio = rows["after"][page] / rows["before"][page]
                    print(f"  after/before {page:20} median {ratio:.3f} x"
                          f"  fastest {min(a) / min(b):.3f} x")
            print(_uptime())
    return 0


if __name__ == "__main__":
    sys.exit(main())
