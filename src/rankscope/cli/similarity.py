"""``rankscope similarity RUN_A RUN_B -m "rbo(p=0.9)" -m jaccard@10 ...``."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``similarity`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="How alike two runs' rankings are, per query and averaged: rank-biased "
        "overlap (RBO(p=0.9) extrapolated, RBO(p=0.9,form=min), rbo_res(p=0.9)), "
        "jaccard@k, overlap@k, kendall_tau. Useful when results should not change "
        "(engine migrations, performance work).",
        examples=["rankscope similarity rankscope-sample/run_a.txt rankscope-sample/run_b.txt",
                  "rankscope similarity rankscope-sample/run_a.txt rankscope-sample/run_b.txt "
                  "-m 'RBO(p=0.8)' -m jaccard@10 -q -f csv -o similarity.csv"],
    )
    p.add_argument("run_a", help="the first run file")
    p.add_argument("run_b", help="the second run file")
    p.add_argument("-m", "--metric", action="append", dest="metrics",
                   help="similarity measure (repeatable; default RBO(p=0.9))")
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    from rankscope.cli.options import add_digits, add_format, add_input_formats, add_output

    add_format(p, ("table", "json", "csv", "tsv", "markdown"))
    add_output(p)
    add_digits(p)
    p.add_argument("--queries", choices=("union", "intersection"), default="union",
                   help="compare every query either run has (a missing one is an empty "
                        "ranking) or only queries both have")
    from rankscope.cli.parsing import add_ties_option

    add_ties_option(p)
    add_input_formats(p, qrels=False)
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    p.add_argument("--name", action="append", dest="names", metavar="NAME",
                   help="names of the two runs (give it twice)")
    from rankscope.cli.parsing import add_overlap_option

    add_overlap_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print; returns the exit code."""
    from rankscope.cli.parsing import write_text
    from rankscope.compare.rank_similarity import similarity
    from rankscope.data.tables import Run
    from rankscope.engine.evaluate import plan_metrics
    from rankscope.errors import OptionError
    from rankscope.render.tabular import render_evaluation

    # the names are read once (a bad name fails before any file is read)
    metrics = plan_metrics(args.metrics or ["RBO(p=0.9)"])
    if args.names is not None and len(args.names) != 2:
        raise OptionError("give --name twice, once per run")
    if args.run_a == "-" and args.run_b == "-":
        raise OptionError("only one run can come from stdin (-)")
    a = Run.read(args.run_a, format=args.run_format, on_duplicate=args.on_duplicate)
    b = Run.read(args.run_b, format=args.run_format, on_duplicate=args.on_duplicate)
    names = (args.names[0], args.names[1]) if args.names else None
    result = similarity(a, b, metrics, per_query=args.per_query, queries=args.queries,
                        ties=args.ties, names=names, allow_no_overlap=args.allow_no_overlap)
    if args.format == "json":
        from rankscope.render.tabular import rounded

        text = json.dumps(rounded(result.to_dict(), args.digits), indent=2, allow_nan=False)
    else:
        text = render_evaluation(result, args.format, per_query=result.show_per_query,
                                 digits=args.digits, describe=False)
    write_text(args.output, text + "\n")
    if args.format == "table":
        import sys

        sys.stderr.write(f"rankscope {args.command}: {result.info.describe()}\n")
    return 0
