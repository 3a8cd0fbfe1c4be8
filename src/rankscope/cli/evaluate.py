"""``rankscope evaluate QRELS RUN... -m METRIC ...``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``evaluate`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Evaluate one or more runs against qrels. Metric names may be written "
        "the way trec_eval, ranx or ir_measures write them (nDCG@10, ndcg_cut_10, P(rel=2)@5).",
    )
    p.add_argument("qrels", help="qrels or judgments file (TREC, JSON, JSONL, CSV, TSV, "
                                 "Parquet; - = stdin)")
    p.add_argument("runs", nargs="+", metavar="run", help="run file(s); - = stdin")
    p.add_argument("-m", "--metric", action="append", required=True, dest="metrics",
                   help="metric to compute (repeatable)")
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    p.add_argument("-f", "--format", default="table",
                   choices=("table", "json", "csv", "tsv", "markdown"))
    p.add_argument("--qrels-format", help="format of the qrels file (default: from its name)")
    p.add_argument("--run-format", help="format of the run files (default: from their names)")
    p.add_argument("--ties", choices=("trec", "input"), default="trec",
                   help="score ties: document id descending (trec_eval) or input order")
    p.add_argument("--unjudged", choices=("nonrelevant", "condensed", "null"),
                   default="nonrelevant", help="how unjudged documents count")
    p.add_argument("--queries", choices=("qrels", "intersection", "nonnull"), default="qrels",
                   help="which queries are averaged")
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    j = p.add_argument_group(
        "raters' judgments",
        "The qrels argument may be raters' judgments (a file with a rater column, e.g. CSV "
        "query_id,doc_id,rater,grade; an empty grade = not graded): they are mapped to the "
        "scale each metric needs and aggregated first (seed 004's two stages).",
    )
    j.add_argument("--judgments", action="store_true",
                   help="read the qrels argument as judgments (detected from a rater column)")
    from rankscope.cli.judgments import add_judgment_options

    add_judgment_options(j)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; returns the exit code."""
    from rankscope.cli.judgments import evaluate_with_judgments, wants_judgments
    from rankscope.data.tables import Qrels, Run
    from rankscope.engine.evaluate import evaluate, resolve_metrics

    if wants_judgments(args):
        results = evaluate_with_judgments(args)
    else:
        resolve_metrics(args.metrics)  # fail fast on a bad name, before reading any file
        qrels = Qrels.read(args.qrels, format=args.qrels_format)
        results = []
        for path in args.runs:
            run_t = Run.read(path, format=args.run_format, on_duplicate=args.on_duplicate)
            results.append(
                evaluate(qrels, run_t, args.metrics, per_query=args.per_query, ties=args.ties,
                         unjudged=args.unjudged, queries=args.queries)
            )
    out = sys.stdout
    if args.format == "json":
        if len(results) == 1:
            payload: Any = results[0].to_dict()
        else:
            payload = {"runs": {r.info.run_name: r.to_dict() for r in results}}
        out.write(json.dumps(payload, indent=2, allow_nan=False) + "\n")
        return 0
    for i, result in enumerate(results):
        if len(results) > 1 and args.format in ("table", "markdown"):
            out.write(("\n" if i else "") + f"# {result.info.run_name}\n")
        out.write(result.render(args.format) + "\n")
    return 0
