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
    e = p.add_argument_group("engine")
    e.add_argument("--engine", choices=("local", "streaming", "spark"), default="local",
                   help="local: in memory (default); streaming: bounded memory, for runs larger "
                   "than memory (a TREC run grouped by query); spark: distributed by query on "
                   "Spark (the spark extra; TREC or Parquet paths)")
    e.add_argument("--memory", default="2G", metavar="SIZE",
                   help="memory budget of --engine streaming, e.g. 512M or 4G (default 2G)")
    e.add_argument("--quiet", action="store_true",
                   help="no progress bars (they show only on a terminal anyway)")
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

    if args.quiet:
        from rankscope.progress import set_enabled

        set_enabled(False)
    if args.engine != "local":
        results = _other_engine(args)
    elif wants_judgments(args):
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


def _size(text: str) -> int:
    """Bytes in a size like ``512M``, ``4G`` or ``1000000``."""
    from rankscope.errors import OptionError

    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("B")
    scale = units.get(raw[-1:], 1)
    try:
        value = float(raw[:-1] if raw[-1:] in units else raw)
    except ValueError:
        raise OptionError(f"--memory must be a size like 512M or 4G, not {text!r}") from None
    return int(value * scale)


def _other_engine(args: argparse.Namespace) -> list[Any]:
    """``--engine streaming`` / ``--engine spark``: one result per run file."""
    from rankscope.errors import OptionError

    if getattr(args, "judgments", False):
        raise OptionError(f"--engine {args.engine} evaluates qrels, not raters' judgments")
    options = {"per_query": args.per_query, "ties": args.ties, "unjudged": args.unjudged,
               "queries": args.queries, "on_duplicate": args.on_duplicate}
    if args.engine == "streaming":
        from rankscope.data.tables import Qrels
        from rankscope.engine.evaluate import resolve_metrics
        from rankscope.engine.streaming import evaluate_streaming

        resolve_metrics(args.metrics)
        qrels = Qrels.read(args.qrels, format=args.qrels_format)
        memory = _size(args.memory)
        return [evaluate_streaming(qrels, path, args.metrics, memory=memory, **options)
                for path in args.runs]
    from rankscope.spark import evaluate_paths

    return [evaluate_paths(args.qrels, path, args.metrics, qrels_format=args.qrels_format,
                           run_format=args.run_format, **options) for path in args.runs]
