"""``rankscope check QRELS RUN --baseline RUN_B -m nDCG@10``: a regression gate for CI."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from rankscope.cli.exit_codes import EXIT_CHECK_FAILED as EXIT_REGRESSION
from rankscope.cli.parsing import write_text

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``check`` subcommand."""
    from rankscope.cli.options import add_format, add_input_formats, add_output, add_store, number

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Fail (exit 1) when RUN is significantly worse than the baseline by more "
        "than the allowed drop on any metric; pass (exit 0) otherwise; exit 2 for bad input. "
        "Rule, per metric, with d = run - baseline per query (every query with judgments): "
        "a one-sided paired test of H0: mean(d) >= -MAX_DROP against H1: mean(d) < -MAX_DROP; "
        "a regression when H0 is rejected at level ALPHA. RUN and RUN_B are run files or, "
        "with --store, snapshots (id or name), scored in the engine's order. Each delta is "
        "printed with its 1 - 2 ALPHA interval; a warning says when the queries are too few "
        "to detect the margin asked for.",
        examples=["rankscope check rankscope-sample/qrels.txt rankscope-sample/run_b.txt "
                  "--baseline rankscope-sample/run_a.txt -m nDCG@10",
                  "rankscope check rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "--baseline rankscope-sample/run_b.txt -m AP --max-drop 0.01 --junit "
                  "check.xml"])
    p.add_argument("qrels", help="qrels file, or irds:NAME (an ir_datasets collection)")
    p.add_argument("run", help="the run to check: a run file, or a snapshot id or name")
    p.add_argument("--baseline", required=True, metavar="RUN_B",
                   help="the baseline: a run file, or a snapshot id or name")
    add_store(p, required=False,
              help="the snapshot store RUN and RUN_B are read from when they are not files")
    p.add_argument("-m", "--metric", action="append", dest="metrics", required=True,
                   help="metric (repeatable)")
    p.add_argument("--max-drop", type=number(0), default=0.0,
                   help="allowed drop of the mean, in the metric's units (>= 0; default 0)")
    p.add_argument("--alpha", type=number(0, 0.5, open_low=True, open_high=True), default=0.05,
                   help="level of the test (default 0.05; below 0.5, as the interval printed "
                        "is 1 - 2 ALPHA)")
    p.add_argument("--test", choices=("t", "wilcoxon"), default="t",
                   help="one-sided paired t-test (default) or Wilcoxon signed-rank")
    from rankscope.cli.parsing import add_overlap_option, add_ties_option

    add_ties_option(p, default=None,
                    what="run files (snapshots are always scored in the engine's order): ")
    add_overlap_option(p)
    add_input_formats(p)
    add_format(p, ("table", "json"))
    add_output(p)
    add_output(p, "--junit", dest="junit", default=None,
               help="also write the verdict as JUnit XML (one test case per metric), for CI "
                    "systems that show test reports")
    from rankscope.cli.conventions import add_conventions_option

    add_conventions_option(p)
    p.set_defaults(handler=run)


def _inputs(args: argparse.Namespace) -> tuple[Any, Any, list[str]]:
    """The run and the baseline: file paths as given, snapshots as runs in engine order."""
    from pathlib import Path

    from rankscope.data.tables import Run

    refs = [args.run, args.baseline]
    from rankscope.cli.parsing import refuse_double_stdin

    refuse_double_stdin(args.qrels, *refs)
    if all(ref == "-" or Path(ref).is_file() for ref in refs):
        return (Run.read(args.run, format=args.run_format),
                Run.read(args.baseline, format=args.run_format), [])
    from rankscope.errors import OptionError
    from rankscope.services.snapshot_diff import snapshot_run
    from rankscope.services.snapshot_store import open_snapshot_store

    if not args.store:
        missing = next(ref for ref in refs if not Path(ref).is_file())
        raise OptionError(f"{missing!r} is not a file; to name a snapshot, give --store DB "
                          "(or set RANKSCOPE_STORE)")
    notes: list[str] = []
    loaded: list[Any] = []
    with open_snapshot_store(args.store) as store:
        for ref in refs:
            if ref == "-" or Path(ref).is_file():
                loaded.append(Run.read(ref, format=args.run_format))
            else:
                run_t, said = snapshot_run(store, ref)
                loaded.append(run_t)
                notes.extend(said)
    return loaded[0], loaded[1], notes


def run(args: argparse.Namespace) -> int:
    """Run the check; 0 pass, 1 regression (2 for bad input, raised as an error)."""
    from rankscope.data.tables import Qrels
    from rankscope.render.tabular import format_value
    from rankscope.services.regression import check_regression

    run_in, base_in, notes = _inputs(args)
    qrels = Qrels.read(args.qrels, format=args.qrels_format)
    result = check_regression(qrels, run_in, base_in, args.metrics,
                              max_drop=args.max_drop, alpha=args.alpha, test=args.test,
                              conventions=args.conventions, ties=args.ties,
                              allow_no_overlap=args.allow_no_overlap, notes=notes)
    for note in notes:
        sys.stderr.write(f"rankscope check: warning: {note}\n")
    if args.junit:
        write_text(args.junit, result.to_junit())
    out = io.StringIO()
    if args.format == "json":
        write_text(args.output, json.dumps(result.to_dict(), indent=2) + "\n")
        return EXIT_REGRESSION if result.regression else 0
    test = "paired t-test" if result.test == "t" else "Wilcoxon signed-rank test"
    out.write(f"{result.run!r} vs baseline {result.baseline!r}: one-sided {test}, "
              f"alpha {result.alpha:g}, allowed drop {result.max_drop:g}\n")
    level = f"{result.confidence * 100:g}% interval"
    header = ("metric", "queries", "baseline", "run", "delta", level, "p", "detects",
              "verdict")

    def interval(low: float, high: float) -> str:
        if low != low or high != high:  # NaN: fewer than two values
            return "-"
        return f"[{low:+.4f}, {high:+.4f}]"

    rows = [(c.metric, str(c.n_queries), format_value(c.mean_baseline), format_value(c.mean_run),
             f"{c.delta:+.4f}", interval(c.ci_low, c.ci_high), f"{c.p_value:.4g}",
             "-" if c.detectable is None else f"> {c.detectable:.4f}",
             "REGRESSION" if c.regression else "ok")
            for c in result.checks]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        out.write("  ".join(c.ljust(w) if i in (0, 8) else c.rjust(w)
                            for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                  + "\n")
    out.write("(detects: the drop caught with probability 0.8 at these queries' spread)\n")
    failed = sum(c.regression for c in result.checks)
    if failed:
        out.write(f"FAIL: {failed} of {len(result.checks)} metric(s) significantly worse than "
                  "the baseline by more than the allowed drop\n")
    else:
        out.write(f"PASS: no metric significantly worse than the baseline by more than "
                  f"{result.max_drop:g}\n")
    write_text(args.output, out.getvalue())
    return EXIT_REGRESSION if failed else 0
