"""Where ``rankscope compare`` (or ``report``) spends its wall time on the track's 17 runs.

Issue 30, section 3: the command (``evaluate`` too) runs in this process, as ``rankscope`` would
run it, with timers around four of its steps, and prints its phases:

* ``start -> first run asked``: imports, the qrels, reading the first file
  (which begins while the modules load);
* ``waiting for the reader``: the main thread waiting for the next file,
  summed over the 17 runs (the reader, one file ahead on a thread, is the
  critical path only where this is large);
* ``measuring the runs``: ranking and the seven measures of the 17 runs on
  the main thread (beside the reader);
* ``after the last run``: aligning the values, the bootstrap intervals (on
  two threads), the tests, the output;
* how many cores the process kept busy while reading and measuring, and after
  (its CPU time over the wall time of the phase: 2 is both cores all along).

Each round is a fresh process (imports included). The figures say where the
time goes, not how fast: the timers wrap functions the command calls (no
change to what it computes), and the load of the machine moves every figure.

    python benchmarks/track_phases.py --rounds 5
    python benchmarks/track_phases.py --rounds 5 --command "report --no-plots"
    python benchmarks/track_phases.py --rounds 5 --realtime   # under `chrt -r 10` (track.py)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


_STARTED = time.perf_counter()  # this module's first line: before the command's imports


def _child(command: list[str], argv: list[str]) -> None:
    """Run the command in this process with the timers; print the phases as JSON."""
    start = _STARTED
    marks: dict[str, float] = {"waiting": 0.0, "measuring": 0.0, "runs": 0}
    # what `rankscope` does before it imports numpy (cli.main.main): the timers below import
    # numpy first, and numpy fixes its BLAS threads and huge pages when it is imported (two
    # OpenBLAS threads polling beside the command's cost it 0.1-0.3 s of wall time)
    import gc

    from rankscope.cli.process import prepare_process

    prepare_process([*command, *argv])
    gc.disable()  # as main() does for the one-shot commands
    import rankscope.cli.main as cli
    from rankscope.data.read_ahead import ReadAhead

    original_iter = ReadAhead.__iter__

    def timed(self: Any) -> Iterator[Any]:
        # every command's runs come through ReadAhead (evaluate's directly, compare's and
        # report's through RunInputs.tables)
        items = original_iter(self)
        while True:
            asked = time.perf_counter()
            if "first asked" not in marks:
                marks["first asked"] = asked - start
                marks["cpu at first asked"] = time.process_time()
            try:
                value = [next(items)]  # popped as yielded: this frame keeps no reference
            except StopIteration:
                return
            got = time.perf_counter()
            marks["waiting"] += got - asked
            yield value.pop()  # the caller measures the run before asking for the next
            marks["measuring"] += time.perf_counter() - got
            marks["runs"] += 1
            marks["last measured"] = time.perf_counter() - start
            marks["cpu at last measured"] = time.process_time()

    ReadAhead.__iter__ = timed  # type: ignore[method-assign]

    def leave(status: int) -> None:
        marks["end"] = time.perf_counter() - start
        marks["cpu"] = time.process_time()
        sys.stderr.flush()
        sys.__stdout__.write(json.dumps(marks) + "\n")
        sys.__stdout__.flush()
        os._exit(status)

    cli._leave = leave  # type: ignore[assignment]
    sys.argv = ["rankscope", *command, *argv]
    leave(cli.main())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--command", default="compare",
                        help='"compare" (default), "evaluate", "report --no-plots" or "report"')
    parser.add_argument("--realtime", action="store_true",
                        help="run each round under `chrt -r 10` (real-time round-robin "
                             "priority: the cores as on a quiet machine; see track.py)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    command = args.command.split()
    if args.child:  # nothing imported before the command's own imports
        _child(command, rest)
        return 0
    sys.path.insert(0, str(HERE))
    from track import LABELS, _bytecode, ensure_track, realtime_prefix  # as track.py runs

    qrels, runs = ensure_track(HERE / "data" / "track_s42")
    out = {"compare": ["-f", "json", "-o", os.devnull],
           # as track.py runs it: without the intervals (each run's, after the last run)
           "evaluate": ["-f", "json", "--quiet", "--ci", "never", "-o", os.devnull],
           }.get(command[0], ["-o", os.devnull])
    files = [str(qrels), *map(str, runs), *[a for m in LABELS for a in ("-m", m)], *out]
    # bytecode compiled by the warm-up into data/pycache and kept, as track.py has it (where
    # PYTHONDONTWRITEBYTECODE is set, the warm-up would otherwise cache nothing and every round
    # compile every module again: 0.7 s of a report's start in this sandbox)
    _bytecode("cached")
    env = dict(os.environ)
    me = [sys.executable, str(Path(__file__).resolve()), "--child", "--command", args.command]
    if args.realtime:
        me = [*realtime_prefix(), *me]
    subprocess.run([*me, *files], env=env, check=True, capture_output=True)  # warm-up
    rows = []
    print(f"rankscope {args.command}, 17 runs, {args.rounds} rounds; load average "
          f"{os.getloadavg()[0]:.2f} at start")
    for _ in range(args.rounds):
        done = subprocess.run([*me, *files], env=env, check=True, capture_output=True,
                              text=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    phases = {
        "start -> first run asked": [r["first asked"] for r in rows],
        "waiting for the reader (17 runs)": [r["waiting"] for r in rows],
        "measuring the runs (main thread)": [r["measuring"] for r in rows],
        "after the last run": [r["end"] - r["last measured"] for r in rows],
        "cores busy while the runs are read and measured (CPU / wall)": [
            (r["cpu at last measured"] - r["cpu at first asked"])
            / (r["last measured"] - r["first asked"]) for r in rows],
        "cores busy after the last run (CPU / wall)": [
            (r["cpu"] - r["cpu at last measured"]) / (r["end"] - r["last measured"])
            for r in rows],
        "total wall": [r["end"] for r in rows],
        "total CPU (all threads)": [r["cpu"] for r in rows],
    }
    print("| phase | fastest (s) | median (s) |\n| --- | --- | --- |")
    for name, values in phases.items():
        print(f"| {name} | {min(values):.3f} | {statistics.median(values):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
