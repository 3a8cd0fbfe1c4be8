"""``rankscope judgments aggregate|agreement|transform|implicit``; judgments for ``evaluate``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.data.tables import Qrels
    from rankscope.judgments.evaluation import SeedPlan
    from rankscope.judgments.table import Judgments, OnDuplicateGrade
    from rankscope.result import EvaluationResult

__all__ = [
    "add_judgment_options",
    "add_judgments_group",
    "asks_for_judgments",
    "evaluate_with_judgments",
    "may_hold_judgments",
    "read_judgments",
    "read_qrels_argument",
    "register",
    "strategy_arg",
    "transforms_arg",
]

_SCALE_HELP = "grading scale: binary, graded (0-3), trec (0-4), detail (1-10) or MIN-MAX"
_STRATEGY_HELP = ("aggregation of several raters' grades: majority, mean, median, min, max, "
                  "latest, top3; or SCALE=STRATEGY (repeatable); default: majority on binary, "
                  "mean otherwise")


def add_judgment_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, *, transforms: bool = True
) -> None:
    """The options every command reading raters' judgments shares."""
    p.add_argument("--scale", help=_SCALE_HELP)
    p.add_argument("--strategy", action="append", help=_STRATEGY_HELP)
    if transforms:
        p.add_argument("--transform", action="append", metavar="FROM->TO:RULES",
                       help="transformer rules, e.g. 'detail->binary:1..3=0,4..10=1' "
                            "(override the platform's defaults grade by grade; repeatable)")
    p.add_argument("--rater", help="rater name for files without a rater column "
                                   "(default: the file's name)")
    p.add_argument("--on-duplicate-grade", choices=("error", "first", "last", "latest"),
                   default="error", help="a rater grading one result twice")


def add_judgments_group(p: argparse.ArgumentParser) -> None:
    """The "raters' judgments" option group of evaluate, compare and report."""
    j = p.add_argument_group(
        "raters' judgments",
        "The qrels argument may be raters' judgments (a file with a rater column, e.g. CSV "
        "query_id,doc_id,rater,grade; an empty grade = not graded): they are mapped to the "
        "scale each metric needs and aggregated first (seed 004's two stages).",
    )
    j.add_argument("--judgments", action="store_true",
                   help="read the qrels argument as judgments (detected from a rater column)")
    add_judgment_options(j)


def strategy_arg(values: Sequence[str] | None) -> str | dict[str, str] | None:
    """``--strategy mean`` or ``--strategy binary=majority --strategy graded=median``."""
    if not values:
        return None
    plain = [v for v in values if "=" not in v]
    per_scale = dict(v.split("=", 1) for v in values if "=" in v)
    if not per_scale and len(plain) == 1:
        return plain[0]
    from rankscope.errors import OptionError

    if len(plain) > 1:
        raise OptionError("give one --strategy for all scales, or SCALE=STRATEGY per scale")
    out = {k.strip().lower(): v.strip() for k, v in per_scale.items()}
    if plain:
        out["*"] = plain[0]
    return out


def transforms_arg(values: Sequence[str] | None) -> dict[str, str]:
    """``--transform FROM->TO:RULES`` options as a mapping."""
    from rankscope.errors import OptionError

    out: dict[str, str] = {}
    for value in values or []:
        key, sep, rules = value.partition(":")
        if not sep or not rules.strip():
            raise OptionError(f"--transform wants FROM->TO:RULES, not {value!r}")
        out[key.strip()] = rules
    return out


def read_judgments(
    paths: Sequence[str], args: argparse.Namespace, fmt: str | None = None
) -> Judgments:
    """Read one or more judgments files (each TREC qrels file is one rater)."""
    from rankscope.judgments.scales import get_scale
    from rankscope.judgments.table import Judgments

    scale = get_scale(getattr(args, "scale", None))
    policy: OnDuplicateGrade = getattr(args, "on_duplicate_grade", "error")
    rater = getattr(args, "rater", None)
    if rater is not None and len(paths) > 1:
        from rankscope.errors import OptionError

        raise OptionError("--rater names the rater of one file; several files are named by file")
    parts = [
        Judgments.read(p, format=fmt, scale=scale, rater=rater, on_duplicate=policy)
        for p in paths
    ]
    if len(parts) == 1:
        return parts[0]
    return Judgments.concat(parts, scale=scale, on_duplicate=policy)


def asks_for_judgments(args: argparse.Namespace) -> bool:
    """Whether the options ask for raters' judgments whatever the file holds.

    ``--judgments``, a scale, a strategy or a transformer (``coverage``: a
    ``--min-grades`` other than 1).
    """
    return bool(getattr(args, "judgments", False) or args.scale or args.strategy
                or getattr(args, "transform", None) or getattr(args, "min_grades", 1) != 1)


def may_hold_judgments(args: argparse.Namespace) -> bool:
    """Whether the qrels argument may be raters' judgments: asked for, or a format with
    named columns (a TREC file never has a rater column)."""
    if asks_for_judgments(args):
        return True
    from rankscope.data.formats import guess_format

    return (args.qrels_format or guess_format(args.qrels)).lower() != "trec"


def read_qrels_argument(args: argparse.Namespace) -> Qrels | Judgments:
    """The qrels argument, read once: raters' judgments when asked or when the file has a
    rater column, else qrels (:func:`rankscope.judgments.relevance.read_relevance`).

    A TREC file, when judgments are not asked for, is qrels without loading the
    judgments package (the common case of ``rankscope evaluate``).
    """
    if not may_hold_judgments(args):
        from rankscope.data.tables import Qrels

        return Qrels.read(args.qrels, format=args.qrels_format)
    from rankscope.judgments.relevance import read_relevance
    from rankscope.judgments.scales import get_scale

    return read_relevance(args.qrels, args.qrels_format, judgments=asks_for_judgments(args),
                          scale=get_scale(getattr(args, "scale", None)),
                          rater=getattr(args, "rater", None),
                          on_duplicate=getattr(args, "on_duplicate_grade", "error"))


def evaluate_with_judgments(args: argparse.Namespace, judgments: Judgments,
                            names: SeedPlan) -> list[EvaluationResult]:
    """``rankscope evaluate`` over judgments: aggregate once, evaluate every run."""
    from rankscope.cli.conventions import option_fields
    from rankscope.data.tables import Run
    from rankscope.judgments.evaluation import plan_evaluation

    fields = option_fields(args)
    conventions = fields.get("conventions")
    plan = plan_evaluation(
        judgments, names, strategy=strategy_arg(args.strategy),
        transforms=transforms_arg(args.transform), conventions=conventions,
    )
    results = []
    for path in args.runs:
        run_t = Run.read(path, format=args.run_format, on_duplicate=args.on_duplicate)
        results.append(plan.evaluate(run_t, per_query=args.per_query,
                                     allow_no_overlap=args.allow_no_overlap, **fields))
    return results


# -- rankscope judgments ... ----------------------------------------------------


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``judgments`` command and its subcommands."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Work with raters' judgments: CSV/TSV with a header (query_id, doc_id, "
        "rater, grade[, time]; an empty grade = not graded), JSONL, JSON, Parquet, TREC "
        "qrels files (one rater each) or irds:NAME (an ir_datasets collection's qrels, one "
        "rater); 'implicit' makes judgments from a click log.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    agg = actions.add_parser("aggregate", help="one grade per result (qrels, null = ungraded)")
    agg.add_argument("files", nargs="+", metavar="judgments",
                     help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(agg)
    _input_format_options(agg)
    agg.add_argument("-m", "--metric", action="append", dest="metrics",
                     help="aggregate on the scale this metric is computed on, as `rankscope "
                          "evaluate` over the raters' file does (transform, then the scale's "
                          "strategy), so evaluating the output gives its numbers (repeatable; "
                          "the metrics must share a scale)")
    agg.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    agg.add_argument("-f", "--output-format", help="csv, tsv, jsonl, json, parquet, trec (drops "
                                                   "ungraded); default: from the name, CSV on "
                                                   "stdout")
    agg.add_argument("--details", action="store_true",
                     help="also write n_grades, n_raters and tie per result")
    agg.set_defaults(handler=_aggregate)

    agr = actions.add_parser("agreement", help="agreement between raters (kappas, alpha)")
    agr.add_argument("files", nargs="+", metavar="judgments",
                     help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(agr, transforms=False)
    _input_format_options(agr)
    agr.add_argument("--weights", choices=("auto", "none", "linear", "quadratic"),
                     default="auto", help="Cohen's kappa weights (auto: quadratic if ordinal)")
    agr.add_argument("-q", "--per-query", action="store_true", help="also per query")
    agr.add_argument("-f", "--output-format", dest="fmt", choices=("table", "json"),
                     default="table")
    agr.set_defaults(handler=_agreement)

    tr = actions.add_parser("transform", help="map grades to another scale")
    tr.add_argument("files", nargs="+", metavar="judgments",
                     help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(tr, transforms=False)
    _input_format_options(tr)
    tr.add_argument("--to", required=True, help="target scale")
    tr.add_argument("--rules", help="rules like '0=0,1..3=1' (override the defaults)")
    tr.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    tr.add_argument("-f", "--output-format", help="default: from the name, CSV on stdout")
    tr.set_defaults(handler=_transform)

    from rankscope.cli.implicit import add_implicit_parser

    add_implicit_parser(actions)


def _input_format_options(p: argparse.ArgumentParser) -> None:
    """``--input-format``, and ``--format``: its deprecated name (the output format elsewhere)."""
    from rankscope.cli.parsing import deprecated_alias

    p.add_argument("--input-format", dest="input_format",
                   help="format of the judgments files (default: from their names)")
    p.add_argument("--format", dest="input_format", metavar="INPUT_FORMAT",
                   action=deprecated_alias("--format", "--input-format"),
                   help="deprecated: use --input-format (--format is the output format in "
                        "every other command)")


def _output_format(args: argparse.Namespace) -> str | None:
    fmt: str | None = args.output_format
    if fmt is None and args.output == "-":
        return "csv"
    return fmt


def _aggregate(args: argparse.Namespace) -> int:
    from rankscope.data.tables import Qrels
    from rankscope.judgments.aggregate import aggregate_frame
    from rankscope.judgments.io import write_judgments_frame

    j = read_judgments(args.files, args, args.input_format)
    fmt = _output_format(args)
    if args.metrics:
        qrels, note = _aggregate_for_metrics(j, args)
        if args.details:
            from rankscope.errors import OptionError

            raise OptionError("--details describes one scale's votes; leave out -m for it")
        _note_ungraded(qrels.frame, fmt, args.output)
        qrels.write(args.output, format=fmt)
        sys.stderr.write(f"rankscope judgments aggregate: note: {note}\n")
        return 0
    if getattr(args, "transform", None):
        from rankscope.errors import OptionError

        raise OptionError("--transform applies with -m (aggregating for a metric's scale)")
    details = aggregate_frame(j, strategy_arg(args.strategy))
    _note_ungraded(details, fmt, args.output)
    if args.details:
        if fmt == "trec":
            from rankscope.errors import OptionError

            raise OptionError("--details needs a format with columns (csv, tsv, jsonl, ...)")
        write_judgments_frame(details, args.output, fmt)
    else:
        Qrels(details.select("query_id", "doc_id", "grade"), source=j.source).write(
            args.output, format=fmt
        )
    return 0


def _aggregate_for_metrics(j: Judgments, args: argparse.Namespace) -> tuple[Any, str]:
    """The qrels ``rankscope evaluate`` builds from raters' grades for these metrics."""
    from rankscope.errors import OptionError
    from rankscope.judgments.evaluation import plan_evaluation

    plan = plan_evaluation(j, args.metrics, strategy=strategy_arg(args.strategy),
                           transforms=transforms_arg(args.transform))
    if len(plan.groups) > 1:
        by_scale = "; ".join(
            f"{g.scale}: {', '.join(plan.labels[i] for i in g.columns)}" for g in plan.groups
        )
        raise OptionError(f"these metrics are computed on different scales ({by_scale}); "
                          "aggregate once per scale")
    group = plan.groups[0]
    scale = f"the {group.scale} scale" if group.scale is not None else "the judgments' grades"
    note = (f"aggregated on {scale}, as `rankscope evaluate` does for "
            f"{', '.join(plan.labels)}: evaluating this file with the same --unjudged gives "
            "the same numbers")
    bound = [m for m in plan.metrics if any(p == "max_grade" for p, _ in m.params)]
    if bound:
        note += "; name the top grade as it did: " + ", ".join(m.name for m in bound)
    return group.qrels, note


def _note_ungraded(frame: Any, fmt: str | None, output: str) -> None:
    """Say what TREC output leaves out: results without an aggregated grade."""
    from rankscope.data.formats import guess_format

    if (fmt or (guess_format(output) if output != "-" else "csv")) != "trec":
        return
    empty = int(frame.get_column("grade").null_count())
    if empty:
        sys.stderr.write(
            f"rankscope judgments aggregate: note: {empty} results without a grade (ungraded, or "
            "a tied vote) left out: a TREC file cannot hold an empty grade; rankscope counts an "
            "absent result exactly as an empty grade (unjudged, or null under --unjudged null)\n"
        )


def _transform(args: argparse.Namespace) -> int:
    from rankscope.judgments.transform import transform

    j = read_judgments(args.files, args, args.input_format)
    transform(j, args.to, args.rules).write(args.output, format=_output_format(args))
    return 0


def _num(value: float | None) -> str:
    from rankscope.render.tabular import format_value

    return format_value(value)


def _agreement(args: argparse.Namespace) -> int:
    from rankscope.judgments.agreement import agreement

    j = read_judgments(args.files, args, args.input_format)
    weights = None if args.weights == "none" else args.weights
    result = agreement(j, weights=weights, by_query=args.per_query)
    out = sys.stdout
    if args.fmt == "json":
        out.write(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
        return 0
    scale = f" on the {j.scale.describe()} scale" if j.scale else ""
    out.write(f"{result.n_items} graded results, {result.n_raters} raters{scale}\n\n")
    w = result.cohen_weights or "unweighted"
    pairs = result.cohen.height
    lines = [
        ("percent agreement", result.percent),
        (f"Cohen's kappa ({w}, mean of {pairs} pairs)", result.cohen_mean),
        (f"Fleiss' kappa ({result.fleiss.n_items} results x {result.fleiss.n_raters} grades)",
         result.fleiss.value),
        *[(f"Krippendorff's alpha, {lv}", v) for lv, v in result.alpha.items()],
        ("majority-vote tie rate", result.tie_rate),
    ]
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        out.write(f"{label.ljust(width)}  {_num(value)}\n")
    if pairs:
        out.write("\nCohen's kappa per pair\n")
        for a, b, n, kappa in result.cohen.iter_rows():
            out.write(f"  {a} / {b}: {_num(kappa)} ({n} results)\n")
    if result.per_query is not None:
        out.write("\n" + _table(result.per_query) + "\n")
    return 0


def _table(frame: Any) -> str:
    header = list(frame.columns)
    rows = [[str(v) if isinstance(v, str | int) else _num(v) for v in row]
            for row in frame.iter_rows()]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    for row in rows:
        lines.append("  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip())
    return "\n".join(lines)
