"""``rankscope report QRELS RUN... -o report.html``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["MAX_CURVE_K", "register"]

MAX_CURVE_K = 1000
"""The deepest cut-off of a report's metric@k curves (TREC's usual depth)."""


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``report`` subcommand."""
    from rankscope.cli.compare import add_compare_options, add_evaluation_options
    from rankscope.cli.options import add_output, integer

    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Compare runs and write one self-contained HTML page (tables and plots "
        "inline as SVG, readable offline; hover a bar or a point for its query or cut-off). "
        "--figures needs the plot extra (matplotlib).",
        examples=["rankscope report rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt -o report.html",
                  "rankscope report rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt -m nDCG@10 --no-plots -o tables.html"],
    )
    p.add_argument("qrels", help="qrels file (TREC, JSON, JSONL, CSV, TSV, Parquet), or "
                                 "irds:NAME (an ir_datasets collection)")
    p.add_argument("runs", nargs="+", metavar="run", help="two or more run files")
    p.add_argument("-m", "--metric", action="append", dest="metrics",
                   help="metric of the tables (repeatable; default nDCG@10, AP, RR, P@10, "
                        "R@100)")
    add_output(p, default=None, required=True, help="the HTML file to write (- = stdout)")
    p.add_argument("--title", default="rankscope report", help="page title")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument("--max-k", type=integer(1, MAX_CURVE_K), default=20,
                   help=f"largest cut-off of the metric@k curves (20; at most {MAX_CURVE_K}: "
                        "each cut-off is one more evaluation of every run)")
    add_output(p, "--figures", dest="figures", default=None, metavar="DIR", directory=True,
               help="also write every plot into DIR as PDF and SVG (for papers; created if "
                    "needed)")
    p.add_argument("--figure-formats", default="pdf,svg", metavar="FORMATS",
                   help="formats of --figures, comma separated: pdf, svg, png (pdf,svg)")
    add_compare_options(p)
    add_evaluation_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the report; returns the exit code."""
    from rankscope.compare.t_helper import serving

    with serving(args.test == "t"):  # as compare: the t distribution from a second process
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from rankscope.cli.compare import compare_kwargs, judgments_kwargs, read_qrels, reading_runs
    from rankscope.cli.parsing import refuse_double_stdin
    from rankscope.errors import OptionError
    from rankscope.judgments.evaluation import plan_seed_metrics

    # the names are read once (a bad name fails before any file is read)
    metrics = plan_seed_metrics(args.metrics or list(_default_metrics()), args.conventions)
    if len(args.runs) < 2:
        raise OptionError("report needs at least two runs")
    formats = [f.strip().lower() for f in args.figure_formats.split(",") if f.strip()]
    unknown = [f for f in formats if f not in ("pdf", "svg", "png")]
    if unknown or not formats:
        raise OptionError(f"--figure-formats takes pdf, svg and png, comma separated; not "
                          f"{args.figure_formats!r}")
    if args.figures and args.no_plots:
        raise OptionError("--figures writes the plots that --no-plots leaves out: give one")
    refuse_double_stdin(args.qrels, *args.runs)
    options = {"output": args.output, "title": args.title, "plots": not args.no_plots,
               "ks": range(1, args.max_k + 1), "figures_dir": args.figures,
               "figure_formats": formats, **compare_kwargs(args)}
    if "-" in args.runs and not args.no_plots:
        # a run on stdin, read once for the comparison and for curves that might read
        # the runs again: the report reads the runs itself
        from rankscope.render.html_report import report

        qrels = read_qrels(args)
        report(qrels, args.runs, metrics, run_format=args.run_format,
               on_duplicate=args.on_duplicate, **options, **judgments_kwargs(args, qrels))
        return 0
    # the files one at a time (the next one ahead), the first while the report's modules
    # load and the qrels are read, as compare does
    load = _load_report if args.no_plots else _load_report_and_figures
    with reading_runs(args, options.pop("names"), load) as (inputs, qrels):
        from rankscope.render.html_report import report

        report(qrels, inputs, metrics, **options, **judgments_kwargs(args, qrels))
    return 0


def _default_metrics() -> tuple[str, ...]:
    # not from the page's module: that loads while the first run is read
    from rankscope.render.report_tables import DEFAULT_METRICS

    return DEFAULT_METRICS


def _load_report() -> None:
    import rankscope.render.html_report  # noqa: F401


def _load_report_and_figures() -> None:
    # the SVG writer too (the page loads it only to draw), beside the reading as the page
    import rankscope.render.html_report
    import rankscope.render.svg  # noqa: F401
