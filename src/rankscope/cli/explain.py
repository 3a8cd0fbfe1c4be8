"""``rankscope explain-differences QRELS RUN -m METRIC --conventions TOOL``."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``explain-differences`` subcommand."""
    from rankscope.cli.conventions import CONVENTIONS
    from rankscope.cli.parsing import add_overlap_option

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Evaluate RUN twice, with rankscope's defaults and with a tool's "
        "conventions, and list the metrics whose numbers differ (means, per-query values, "
        "queries averaged), each with the reasons: what a team moving from the tool to "
        "the defaults would see change.",
        examples=["rankscope explain-differences rankscope-sample/qrels.txt "
                  "rankscope-sample/run_a.txt -m ndcg_cut_10 -m P_5 --conventions trec_eval",
                  "rankscope explain-differences rankscope-sample/qrels.txt "
                  "rankscope-sample/run_a.txt -m 'nDCG@10' --conventions ranx -f json"])
    p.add_argument("qrels", help="qrels file (TREC, JSON, JSONL, CSV, TSV, Parquet; - = stdin), "
                                 "or irds:NAME (an ir_datasets collection)")
    p.add_argument("run", help="run file; - = stdin")
    p.add_argument("-m", "--metric", action="append", required=True, dest="metrics",
                   help="metric, spelled as the tool spells it (repeatable)")
    p.add_argument("--conventions", required=True, choices=CONVENTIONS, metavar="TOOL",
                   help=f"the tool: {', '.join(CONVENTIONS)}")
    from rankscope.cli.options import add_format, add_input_formats, add_output

    add_format(p, ("table", "json"))
    add_output(p)
    add_input_formats(p)
    add_overlap_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the differences; returns the exit code (0 whether or not anything differs)."""
    from rankscope.cli.parsing import refuse_double_stdin, write_text
    from rankscope.data.tables import Qrels, Run
    from rankscope.engine.differences import explain_differences, plan_differences
    from rankscope.render.differences import render_differences

    refuse_double_stdin(args.qrels, args.run)
    # the names read once each way, before any file (a bad name fails fast)
    plans = plan_differences(args.metrics, args.conventions)
    qrels = Qrels.read(args.qrels, format=args.qrels_format)
    ranking = Run.read(args.run, format=args.run_format)
    report = explain_differences(qrels, ranking, plans, args.conventions,
                                 allow_no_overlap=args.allow_no_overlap)
    if args.format == "json":
        text = json.dumps(report.to_dict(), indent=2)
    else:
        text = render_differences(report)
    write_text(args.output, text + "\n")
    return 0
