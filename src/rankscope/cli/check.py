"""``rankscope check QRELS RUN --baseline RUN_B -m nDCG@10``: a regression gate for CI."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rankscope.cli.exit_codes import EXIT_CHECK_FAILED as EXIT_REGRESSION

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``check`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Fail (exit 1) when RUN is significantly worse than the baseline by more "
        "than the allowed drop on any metric; pass (exit 0) otherwise; exit 2 for bad input. "
        "Rule, per metric, with d = run - baseline per query (every query with judgments): "
        "a one-sided paired test of H0: mean(d) >= -MAX_DROP against H1: mean(d) < -MAX_DROP; "
        "a regression when H0 is rejected at level ALPHA.")
    p.add_argument("qrels", help="qrels file, or irds:NAME (an ir_datasets collection)")
    p.add_argument("run", help="the run to check")
    p.add_argument("--baseline", required=True, metavar="RUN_B", help="the baseline run")
    p.add_argument("-m", "--metric", action="append", dest="metrics", required=True,
                   help="metric (repeatable)")
    p.add_argument("--max-drop", type=float, default=0.0,
                   help="allowed drop of the mean, in the metric's units (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="level of the test (default 0.05)")
    p.add_argument("--test", choices=("t", "wilcoxon"), default="t",
                   help="one-sided paired t-test (default) or Wilcoxon signed-rank")
    p.add_argument("-f", "--format", choices=("text", "json"), default="text")
    from rankscope.cli.conventions import add_conventions_option

    add_conventions_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the check; 0 pass, 1 regression (2 for bad input, raised as an error)."""
    from rankscope.render.tabular import format_value
    from rankscope.services.regression import check_regression

    result = check_regression(args.qrels, args.run, args.baseline, args.metrics,
                              max_drop=args.max_drop, alpha=args.alpha, test=args.test,
                              conventions=args.conventions)
    out = sys.stdout
    if args.format == "json":
        out.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return EXIT_REGRESSION if result.regression else 0
    test = "paired t-test" if result.test == "t" else "Wilcoxon signed-rank test"
    out.write(f"{result.run!r} vs baseline {result.baseline!r}: one-sided {test}, "
              f"alpha {result.alpha:g}, allowed drop {result.max_drop:g}\n")
    header = ("metric", "queries", "baseline", "run", "delta", "p", "verdict")
    rows = [(c.metric, str(c.n_queries), format_value(c.mean_baseline), format_value(c.mean_run),
             f"{c.delta:+.4f}", f"{c.p_value:.4g}", "REGRESSION" if c.regression else "ok")
            for c in result.checks]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        out.write("  ".join(c.ljust(w) if i in (0, 6) else c.rjust(w)
                            for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                  + "\n")
    failed = sum(c.regression for c in result.checks)
    if failed:
        out.write(f"FAIL: {failed} of {len(result.checks)} metric(s) significantly worse than "
                  "the baseline by more than the allowed drop\n")
        return EXIT_REGRESSION
    out.write(f"PASS: no metric significantly worse than the baseline by more than "
              f"{result.max_drop:g}\n")
    return 0
