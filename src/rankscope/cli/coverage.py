"""``rankscope coverage QRELS RUN -k K``: how much of the top k is graded."""

from __future__ import annotations

import argparse
import csv
import io
import json
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``coverage`` subcommand."""
    from rankscope.cli.options import (
        CUTOFF,
        add_digits,
        add_format,
        add_input_formats,
        add_output,
        integer,
    )

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="The share of each query's top-k positions that are graded, per query and "
        "overall, and the ungraded (query, document) pairs: the next batch to grade. QRELS "
        "may be qrels (an empty grade = ungraded) or raters' judgments. A run sharing no "
        "query with the judgments is an error (--allow-no-overlap: nothing graded yet).",
        examples=["rankscope coverage rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "-k 10",
                  "rankscope coverage rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "-k 20 -q -f csv -o coverage.csv --ungraded to_grade.csv"],
    )
    p.add_argument("qrels", help="qrels or judgments file, or irds:NAME (an ir_datasets "
                                 "collection)")
    p.add_argument("run", help="run file")
    p.add_argument("-k", type=CUTOFF, required=True, help="cut-off (1 to 2147483647)")
    p.add_argument("--min-grades", type=integer(1), default=1,
                   help="judgments: a result is graded with at least this many grades")
    from rankscope.cli.qrels_argument import add_judgment_options

    add_judgment_options(p, transforms=False)
    add_input_formats(p)
    from rankscope.cli.parsing import add_overlap_option, add_ties_option

    add_ties_option(p)
    p.add_argument("--unjudged", choices=("nonrelevant", "condensed", "null"),
                   default="nonrelevant",
                   help="judgments: with null, a result is graded when its aggregated grade is "
                        "not empty (a tied vote is ungraded), as the metrics count it")
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    add_overlap_option(p)
    p.add_argument("-q", "--per-query", action="store_true", help="print every query")
    add_format(p, ("table", "json", "csv", "tsv"))
    add_output(p, default=None,
               help="write the coverage here (- = stdout, the default; with --ungraded - the "
                    "ungraded pairs are the output and the coverage is written only here)")
    add_digits(p)
    add_output(p, "--ungraded", dest="ungraded", default=None,
               help="also write the ungraded pairs here (CSV, TSV, JSONL, JSON, Parquet, by "
                    "the name; - = stdout as CSV), a judgments file with empty grades to fill "
                    "in")
    p.add_argument("--ungraded-rater", metavar="NAME", help="rater column of that file")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print coverage; returns the exit code."""
    from rankscope.cli.parsing import refuse_double_stdin, write_text
    from rankscope.cli.qrels_argument import read_qrels_argument, strategy_arg
    from rankscope.data.tables import Run
    from rankscope.errors import OptionError
    from rankscope.judgments.coverage import coverage

    refuse_double_stdin(args.qrels, args.run)
    if args.ungraded == "-" and args.output == "-":
        raise OptionError("--ungraded - and -o - both write to stdout: give -o FILE for the "
                          "coverage, or --ungraded FILE")
    output = args.output or (None if args.ungraded == "-" else "-")
    judged = read_qrels_argument(args)
    run_t = Run.read(args.run, format=args.run_format, on_duplicate=args.on_duplicate)
    result = coverage(judged, run_t, args.k, ties=args.ties, min_grades=args.min_grades,
                      strategy=strategy_arg(args.strategy), unjudged=args.unjudged,
                      allow_no_overlap=args.allow_no_overlap)
    if args.ungraded:
        fmt = "csv" if args.ungraded == "-" else None
        result.write_ungraded(args.ungraded, format=fmt, rater=args.ungraded_rater)
    if output is not None:
        write_text(output, _text(result, args))
    return 0


def _text(result: Any, args: argparse.Namespace) -> str:
    """The coverage in the form asked for."""
    if args.format == "json":
        from rankscope.render.tabular import rounded

        return json.dumps(rounded(result.to_dict(per_query=args.per_query), args.digits),
                          indent=2) + "\n"
    if args.format in ("csv", "tsv"):
        from rankscope.render.tabular import csv_number

        out = io.StringIO()
        writer = csv.writer(out, delimiter="," if args.format == "csv" else "\t",
                            lineterminator="\n")
        # as evaluate's: a query's rows say "value", the pooled row has no query
        writer.writerow(["query", "statistic", "positions", "graded", "coverage"])
        if args.per_query:
            for q, n, g, c in result.per_query.iter_rows():
                writer.writerow([q, "value", n, g, csv_number(c, args.digits)])
        writer.writerow(["", "overall", result.positions, result.graded,
                         csv_number(result.overall, args.digits)])
        return out.getvalue()
    from rankscope.render.tabular import format_value

    digits = 4 if args.digits is None else args.digits
    rows = [(q, str(n), str(g), format_value(c, digits))
            for q, n, g, c in result.per_query.iter_rows()]
    shown = list(rows) if args.per_query else []
    shown.append(("all", str(result.positions), str(result.graded),
                  format_value(result.overall, digits)))
    header = ("query", "positions", "graded", f"coverage@{args.k}")
    widths = [max(len(r[i]) for r in [header, *shown]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(header, widths, strict=True)))]
    for row in shown:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    lines.append(f"\n{len(rows)} queries; mean per-query coverage "
                 f"{format_value(result.mean, digits)}; {result.ungraded.height} ungraded pairs "
                 f"in the top {args.k}")
    return "\n".join(lines) + "\n"
