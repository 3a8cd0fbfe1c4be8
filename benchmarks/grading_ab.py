"""Two versions of ``rankscope serve`` at once: each one's server CPU a request, one grader each.

Each run prepares one new database (``grading_load.prepare``: ``--results`` results
wanting 3 grades, two graders), starts two servers on it, A (``--a SRC``) and B
(``--b SRC``), each through its own ``PYTHONPATH``, and sends one grader's rounds
(next task, then grade) to A and B in turn, request by request: ``--warm`` rounds
each, then ``--rounds`` rounds each, over which each server's CPU (``/proc``) is
divided by its requests. Served in turn, the two see the same moments of a loaded
machine: one server after the other, minutes apart, saw this host's state move more
than the changes measured (benchmarks/README.md, branch ``srv7``). ``--hide-a`` /
``--hide-b`` make modules unimportable for that side (a directory of packages that
raise ImportError, put first on its ``PYTHONPATH``): the same code with and without
an optional dependency. Give the same tree to both for an A/A control.

Run (figures in benchmarks/README.md, "Graders at once")::

    python benchmarks/grading_ab.py --db sqlite --a /tmp/before/src --b src
    python benchmarks/grading_ab.py --db postgresql --a src --b src --hide-a uvloop,httptools
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

# run as a script: its folder is on sys.path (the benchmarks are not a package)
import grading_load as gl


def hiding(modules: str, into: Path) -> str:
    """A directory whose packages ``modules`` (comma-separated) raise ImportError."""
    for name in filter(None, (m.strip() for m in modules.split(","))):
        (into / name).mkdir(parents=True)
        (into / name / "__init__.py").write_text(
            f"raise ImportError('{name} hidden by grading_ab.py')\n", encoding="utf-8")
    return str(into)


async def in_turn(bases: dict[str, str], prep: gl.Prepared,
                  rounds: int) -> dict[str, gl.Tally]:
    """One grader a server (``g00`` on A, ``g01`` on B), their rounds sent in turn."""
    tallies = {side: gl.Tally() for side in bases}
    graders = {side: gl.Grader(bases[side], *prep.graders[i], prep.evaluation_id, "api",
                               tallies[side]) for i, side in enumerate(sorted(bases))}
    try:
        for _ in range(rounds):
            for side in sorted(graders):
                await graders[side].loop(float("inf"), 1)
    finally:
        for grader in graders.values():
            await grader.close()
    return tallies


def one_run(args: argparse.Namespace, paths: dict[str, str]) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="rankscope-ab-"))
    try:
        data = work / "data"
        data.mkdir()
        with gl.database(args.db, args.pg_url, work) as url:
            prep = gl.prepare(url, data, 2, args.results, 3)
            gc.collect()
            gc.freeze()  # the preparation's objects: no full pass over them while timing
            with contextlib.ExitStack() as stack:
                bases, pids = {}, {}
                for side in ("A", "B"):
                    os.environ["PYTHONPATH"] = paths[side]
                    bases[side], pids[side] = stack.enter_context(
                        gl.server(url, data, work / f"server-{side}.log"))
                asyncio.run(in_turn(bases, prep, args.warm))
                before = {side: gl.cpu_seconds(pid) for side, pid in pids.items()}
                tallies = asyncio.run(in_turn(bases, prep, args.rounds))
                after = {side: gl.cpu_seconds(pid) for side, pid in pids.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    row: dict[str, float] = {"load_average": os.getloadavg()[0]}
    for side, tally in tallies.items():
        requests = len(tally.next_s) + len(tally.grade_s)
        row[f"{side}_ms"] = 1000 * (after[side] - before[side]) / max(1, requests)
        row[f"{side}_requests"] = requests
        row[f"{side}_errors"] = len(tally.errors)
    row["B_over_A"] = row["B_ms"] / row["A_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("RANKSCOPE_TEST_PG_URL"))
    parser.add_argument("--a", required=True, help="side A's source tree (its src)")
    parser.add_argument("--b", required=True, help="side B's source tree (its src)")
    parser.add_argument("--hide-a", default="", help="modules A may not import (a,b)")
    parser.add_argument("--hide-b", default="", help="modules B may not import (a,b)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--results", type=int, default=3000)
    parser.add_argument("--json", help="also write each run's figures to this file")
    args = parser.parse_args(argv)
    if args.warm + args.rounds > args.results:  # a grader grades a result once
        parser.error("--results must be at least --warm + --rounds")
    hidden = Path(tempfile.mkdtemp(prefix="rankscope-hide-"))
    try:
        paths = {}
        for side, src, hide in (("A", args.a, args.hide_a), ("B", args.b, args.hide_b)):
            first = [hiding(hide, hidden / side)] if hide else []
            paths[side] = os.pathsep.join([*first, str(Path(src).resolve())])
        rows = []
        for run in range(1, args.runs + 1):
            row = one_run(args, paths)
            rows.append(row)
            print(f"run {run}: A {row['A_ms']:.2f} ms, B {row['B_ms']:.2f} ms a request, "
                  f"B/A {row['B_over_A']:.3f} ({row['A_requests']:.0f} + "
                  f"{row['B_requests']:.0f} requests, errors {row['A_errors']:.0f} + "
                  f"{row['B_errors']:.0f}); load average {row['load_average']:.1f}",
                  flush=True)
    finally:
        shutil.rmtree(hidden, ignore_errors=True)
    ratios = [row["B_over_A"] for row in rows]
    print(f"B/A median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-"
          f"{max(ratios):.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 1 if any(row["A_errors"] or row["B_errors"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
