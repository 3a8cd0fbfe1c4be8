"""``rankscope coverage QRELS RUN -k K``: how much of the top k is graded."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``coverage`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="The share of each query's top-k positions that are graded, per query and "
        "overall, and the ungraded (query, document) pairs: the next batch to grade. QRELS "
        "may be qrels (an empty grade = ungraded) or raters' judgments.",
    )
    p.add_argument("qrels", help="qrels or judgments file, or irds:NAME (an ir_datasets "
                                 "collection)")
    p.add_argument("run", help="run file")
    p.add_argument("-k", type=int, required=True, help="cut-off (>= 1)")
    p.add_argument("--min-grades", type=int, default=1,
                   help="judgments: a result is graded with at least this many grades")
    from rankscope.cli.judgments import add_judgment_options

    add_judgment_options(p, transforms=False)
    p.add_argument("--qrels-format", help="format of the qrels file (default: from its name)")
    p.add_argument("--run-format", help="format of the run file (default: from its name)")
    from rankscope.cli.parsing import add_ties_option

    add_ties_option(p)
    p.add_argument("--unjudged", choices=("nonrelevant", "condensed", "null"),
                   default="nonrelevant",
                   help="judgments: with null, a result is graded when its aggregated grade is "
                        "not empty (a tied vote is ungraded), as the metrics count it")
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    p.add_argument("-q", "--per-query", action="store_true", help="print every query")
    p.add_argument("-f", "--format", choices=("table", "json", "csv", "tsv"), default="table")
    p.add_argument("--ungraded", metavar="FILE",
                   help="write the ungraded pairs here (CSV, TSV, JSONL, JSON, Parquet; - = "
                        "stdout as CSV), a judgments file with empty grades to fill in")
    p.add_argument("--ungraded-rater", metavar="NAME", help="rater column of that file")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print coverage; returns the exit code."""
    from rankscope.cli.judgments import read_qrels_argument, strategy_arg
    from rankscope.cli.parsing import refuse_double_stdin
    from rankscope.data.tables import Run
    from rankscope.judgments.coverage import coverage

    refuse_double_stdin(args.qrels, args.run)
    judged = read_qrels_argument(args)
    run_t = Run.read(args.run, format=args.run_format, on_duplicate=args.on_duplicate)
    result = coverage(judged, run_t, args.k, ties=args.ties, min_grades=args.min_grades,
                      strategy=strategy_arg(args.strategy), unjudged=args.unjudged)
    if args.ungraded:
        fmt = "csv" if args.ungraded == "-" else None
        result.write_ungraded(args.ungraded, format=fmt, rater=args.ungraded_rater)
        if args.ungraded == "-":
            return 0
    out = sys.stdout
    if args.format == "json":
        out.write(json.dumps(result.to_dict(per_query=args.per_query), indent=2) + "\n")
        return 0
    if args.format in ("csv", "tsv"):
        sep = "," if args.format == "csv" else "\t"
        frame = result.per_query if args.per_query else None
        out.write(sep.join(["query", "positions", "graded", "coverage"]) + "\n")
        for q, n, g, c in frame.iter_rows() if frame is not None else []:
            out.write(sep.join([q, str(n), str(g), "" if c is None else repr(c)]) + "\n")
        overall = result.overall
        out.write(sep.join(["all", str(result.positions), str(result.graded),
                            "" if overall is None else repr(overall)]) + "\n")
        return 0
    from rankscope.render.tabular import format_value

    rows = [(q, str(n), str(g), format_value(c)) for q, n, g, c in result.per_query.iter_rows()]
    shown = list(rows) if args.per_query else []
    shown.append(("all", str(result.positions), str(result.graded), format_value(result.overall)))
    header = ("query", "positions", "graded", f"coverage@{args.k}")
    widths = [max(len(r[i]) for r in [header, *shown]) for i in range(4)]
    out.write("  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                        for i, (h, w) in enumerate(zip(header, widths, strict=True))) + "\n")
    for row in shown:
        out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(row, widths, strict=True))) + "\n")
    out.write(f"\n{len(rows)} queries; mean per-query coverage {format_value(result.mean)}; "
              f"{result.ungraded.height} ungraded pairs in the top {args.k}\n")
    return 0
