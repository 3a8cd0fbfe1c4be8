"""Small calls: the 10^4-line ``objects`` cells timed over many calls in one process.

    python benchmarks/small_calls.py                      # every 10^4 objects cell
    python benchmarks/small_calls.py --only 'j10-|num' --calls 100
    PYTHONPATH=/tmp/main/src python benchmarks/small_calls.py   # another rankscope
    python benchmarks/small_calls.py --ab /tmp/main/src --rounds 6 --calls 50 \
        --tools rankscope,pytrec_eval        # this rankscope against another, A/B

An ML engineer evaluates a validation set after every epoch in one process
(issue 30, section 4). ``run.py`` times one call per process, after one
warm-up call, which on Python 3.11 still runs code the interpreter has not
yet specialised (it does so after about eight calls); this script times what
that engineer waits for: each tool's data is loaded as ``workers.py`` loads
it (``objects`` mode: each tool's own objects), each tool makes ``--warm``
calls, then the tools take turns, call by call, ``--calls`` times (A B C,
B C A, C A B, ...: a busy machine slows them alike, and no tool always runs
right after the same other tool, whose call may leave the caches cold).
Printed per cell and tool: the second call of the process (what ``run.py``
times), the fastest and the median wall and CPU time
(``time.process_time``: every thread) in ms, and rankscope's median CPU
against each other tool's. The load average is printed at the start and
the end; the means of every tool are checked to agree with rankscope's
(ranx differs wherever there are ties: see "Why ranx differs" in
README.md).

``--ab SRC`` compares two versions of rankscope: this checkout's ``src``
("after") and ``SRC`` ("before", e.g. ``git archive main src | tar -x -C
/tmp/main``), each round one fresh process per version, back to back, the
order turning every round (after, before; before, after; ...). Printed per
cell over the rounds: each version's fastest call and the median of its
per-process median CPU, the median of after / before (the two processes of
a round: the same machine load), and each version's median CPU against
pytrec_eval's in its own process (the ratio the issue's target is about,
which the machine's load moves less than the times). Every round's means of
the two versions are checked to be the same numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix  # noqa: E402
from datagen import ensure_data  # noqa: E402
from workers import LOADERS  # noqa: E402

TOLERANCE = 1e-9


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Timing:
    """One tool's calls on one cell: its means, the second call, every timed call."""

    means: dict[str, float]
    second: tuple[float, float]  # wall, CPU seconds of the process's second call
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def measure(tools: list[str], metric_set: str, qrels: str, run: str, warm: int,
            calls: int) -> dict[str, Timing]:
    """Each tool's timing on one cell, its calls interleaved with the others'."""
    gos = {tool: LOADERS[tool]("objects", metric_set, qrels, run) for tool in tools}
    out: dict[str, Timing] = {}
    for tool, go in gos.items():
        go()  # the first call: lazy imports, numba's compilation, the qrels' index
        wall, cpu = time.perf_counter(), time.process_time()
        means = go()
        out[tool] = Timing(means, (time.perf_counter() - wall, time.process_time() - cpu))
        for _ in range(max(warm - 2, 0)):
            go()
    turns = list(gos.items())
    for i in range(calls):
        # the order turns every round: no tool always follows the same one (a heavy call
        # leaves the caches cold for whichever call comes next)
        for tool, go in turns[i % len(turns):] + turns[:i % len(turns)]:
            wall, cpu = time.perf_counter(), time.process_time()
            go()
            out[tool].wall.append(time.perf_counter() - wall)
            out[tool].cpu.append(time.process_time() - cpu)
    return out


def _child(args: argparse.Namespace, src: Path) -> dict[str, dict[str, object]]:
    """One process of ``--ab``: rankscope from ``src``, its cells as JSON by key."""
    command = [sys.executable, str(Path(__file__).resolve()), "--json", "--tools", args.tools,
               "--calls", str(args.calls), "--warm", str(args.warm), "--seed", str(args.seed)]
    if args.only:
        command += ["--only", args.only]
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True,
                          timeout=3600)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {str(row["key"]): row for row in rows}


def ab(args: argparse.Namespace) -> int:
    """``--ab``: this checkout's rankscope against ``args.ab``'s, rounds of fresh processes."""
    after_src, before_src = HERE.parent / "src", Path(args.ab).resolve()
    tools = args.tools.split(",")
    yardstick = tools[1] if len(tools) > 1 else None
    print(f"after = {after_src}, before = {before_src}; {args.rounds} rounds of one process "
          f"each, {args.calls} calls per tool after {args.warm} warm-up calls")
    print(f"load average at start: {_load()}")
    rounds: list[dict[str, dict[str, dict[str, object]]]] = []
    for i in range(args.rounds):
        order = [("after", after_src), ("before", before_src)]
        if i % 2:
            order.reverse()
        found = {name: _child(args, src) for name, src in order}
        rounds.append(found)
        print(f"  round {i + 1} done, load average {_load()}", flush=True)
    print("median CPU ms per call (fastest call): median over rounds; after / before: median "
          "of each round's ratio" + (f"; x {yardstick}: median of each process's rankscope / "
                                    f"{yardstick} median CPU" if yardstick else ""))
    header = "| cell | before | after | after / before |"
    if yardstick:
        header += f" before x {yardstick} | after x {yardstick} |"
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    same = True
    for key, first in rounds[0]["after"].items():
        cells = [(r["before"][key], r["after"][key]) for r in rounds]

        def cpu(row: dict[str, object], tool: str, what: str) -> float:
            return float(row["tools"][tool][what])  # type: ignore[index]

        line = f"| {first['label']} |"
        for version in (0, 1):
            medians = [cpu(c[version], tools[0], "median_cpu") for c in cells]
            fastest = min(cpu(c[version], tools[0], "min_cpu") for c in cells)
            line += f" {statistics.median(medians):.2f} ({fastest:.2f}) |"
        ratio = statistics.median(cpu(a, tools[0], "median_cpu") / cpu(b, tools[0], "median_cpu")
                                  for b, a in cells)
        line += f" {ratio:.2f} |"
        if yardstick:
            for version in (0, 1):
                line += " " + f"{statistics.median(cpu(c[version], tools[0], 'median_cpu') / cpu(c[version], yardstick, 'median_cpu') for c in cells):.2f}" + " |"  # noqa: E501
        print(line)
        for b, a in cells:
            means_b, means_a = b["means"], a["means"]
            assert isinstance(means_b, dict) and isinstance(means_a, dict)
            if any(abs(means_a[k] - v) > TOLERANCE for k, v in means_b.items()):
                same = False
                print(f"  {key}: the two versions' means differ: {means_b} / {means_a}")
    print(f"load average at end: {_load()}; the two versions' means "
          f"{'the same in every round' if same else 'DIFFER'}")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tools", default="rankscope,pytrec_eval,ranx",
                        help="comma-separated; rankscope first (the ratios are against it)")
    parser.add_argument("--only", default=None, help="regex on the cell key")
    parser.add_argument("--calls", type=int, default=50, help="timed calls per tool")
    parser.add_argument("--warm", type=int, default=5, help="calls per tool before timing")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--ab", default=None, metavar="SRC",
                        help="compare with the rankscope in SRC (a src directory), A/B")
    parser.add_argument("--rounds", type=int, default=6, help="--ab: processes per version")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ab:
        return ab(args)
    tools = args.tools.split(",")
    import rankscope

    if not args.json:
        print(f"rankscope from {Path(rankscope.__file__).parent}")
        print(f"load average at start: {_load()}; {args.calls} calls per tool after "
              f"{args.warm} warm-up calls; ms: 2nd call wall / CPU | fastest / median wall | "
              "fastest / median CPU")
    n_queries, depth = matrix.SIZES["1e4"]
    cells = [c for c in matrix.full() if c.size == "1e4" and c.mode == "objects"]
    for cell in cells:
        if args.only and not re.search(args.only, cell.key):
            continue
        qrels, run = ensure_data(HERE / "data", n_queries, depth, args.seed, cell.shape)
        found = measure(tools, cell.metric_set, str(qrels), str(run), args.warm, args.calls)
        if args.json:
            print(json.dumps({
                "key": cell.key, "label": f"{cell.shape.differs()} ({cell.metric_set})",
                "means": found[tools[0]].means,
                "tools": {tool: {"median_cpu": statistics.median(t.cpu) * 1e3,
                                 "min_cpu": min(t.cpu) * 1e3} for tool, t in found.items()}}))
            continue
        print(f"{cell.shape.differs()} ({cell.metric_set})  [{cell.key}]")
        ref = found[tools[0]]
        ref_cpu = statistics.median(ref.cpu)
        for tool in tools:
            row = found[tool]
            agree = all(abs(row.means[k] - v) <= TOLERANCE for k, v in ref.means.items())
            ratio = "" if tool == tools[0] else \
                f"  {tools[0]} / {tool} median CPU {ref_cpu / statistics.median(row.cpu):.2f}"
            print(f"  {tool:12s} {row.second[0] * 1e3:6.2f} / {row.second[1] * 1e3:5.2f} | "
                  f"{min(row.wall) * 1e3:5.2f} / {statistics.median(row.wall) * 1e3:5.2f} | "
                  f"{min(row.cpu) * 1e3:5.2f} / {statistics.median(row.cpu) * 1e3:5.2f}"
                  f"{'' if agree else '  means differ'}{ratio}")
    if not args.json:
        print(f"load average at end: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
