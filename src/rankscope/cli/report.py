"""``rankscope report QRELS RUN... -o report.html``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``report`` subcommand."""
    from rankscope.cli.compare import add_compare_options, add_evaluation_options

    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Compare runs and write one self-contained HTML page (tables and plots "
        "inline, readable offline). Plots need the plot extra (matplotlib).",
    )
    p.add_argument("qrels", help="qrels file (TREC, JSON, JSONL, CSV, TSV, Parquet), or "
                                 "irds:NAME (an ir_datasets collection)")
    p.add_argument("runs", nargs="+", metavar="run", help="two or more run files")
    p.add_argument("-m", "--metric", action="append", dest="metrics",
                   help="metric of the tables (repeatable; default nDCG@10, AP, RR, P@10, "
                        "R@100)")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write (- = stdout)")
    p.add_argument("--title", default="rankscope report", help="page title")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument("--max-k", type=int, default=20,
                   help="largest cut-off of the metric@k curve (20)")
    p.add_argument("--figures", metavar="DIR",
                   help="also write every plot into DIR as PDF and SVG (for papers)")
    p.add_argument("--figure-formats", default="pdf,svg", metavar="FORMATS",
                   help="formats of --figures, comma separated: pdf, svg, png (pdf,svg)")
    add_compare_options(p)
    add_evaluation_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the report; returns the exit code."""
    from rankscope.cli.compare import compare_kwargs, judgments_kwargs, read_qrels
    from rankscope.cli.parsing import refuse_double_stdin
    from rankscope.errors import OptionError
    from rankscope.judgments.evaluation import plan_seed_metrics
    from rankscope.render.html_report import DEFAULT_METRICS, plots_available, report

    # the names are read once (a bad name fails before any file is read)
    metrics = plan_seed_metrics(args.metrics or list(DEFAULT_METRICS), args.conventions)
    if len(args.runs) < 2:
        raise OptionError("report needs at least two runs")
    if args.max_k < 1:
        raise OptionError(f"--max-k must be >= 1, not {args.max_k}")
    refuse_double_stdin(args.qrels, *args.runs)
    qrels = read_qrels(args)
    plots = False if args.no_plots else None
    formats = [f.strip().lower() for f in args.figure_formats.split(",") if f.strip()]
    # the files themselves: without plots, compare reads them one at a time
    report(qrels, args.runs, metrics, output=args.output, title=args.title, plots=plots,
           ks=range(1, args.max_k + 1), figures_dir=args.figures, figure_formats=formats,
           run_format=args.run_format, on_duplicate=args.on_duplicate,
           **compare_kwargs(args), **judgments_kwargs(args, qrels))
    if plots is None and not plots_available():
        sys.stderr.write("rankscope report: plots left out; install rankscope[plot]\n")
    return 0
