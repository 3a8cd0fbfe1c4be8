"""``rankscope judgments aggregate|agreement|transform|implicit``: raters' judgments."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import TYPE_CHECKING, Any

from rankscope.cli.parsing import write_text

if TYPE_CHECKING:
    from rankscope.judgments.table import Judgments

__all__ = ["register"]


_J = "rankscope-sample/qrels.txt"


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``judgments`` command and its subcommands."""
    from rankscope.cli.options import add_data_format, add_format, add_output
    from rankscope.cli.parsing import deprecated_alias
    from rankscope.cli.qrels_argument import add_judgment_options

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Work with raters' judgments: CSV/TSV with a header (query_id, doc_id, "
        "rater, grade[, time]; an empty grade = not graded), JSONL, JSON, Parquet, TREC "
        "qrels files (one rater each) or irds:NAME (an ir_datasets collection's qrels, one "
        "rater); 'implicit' makes judgments from a click log.",
        examples=["rankscope judgments aggregate grades.csv --scale graded -o qrels.txt",
                  "rankscope judgments agreement ann.txt bob.txt --scale graded"],
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    agg = actions.add_parser(
        "aggregate", help="one grade per result (qrels, null = ungraded)",
        description="Aggregate the raters' grades of each result into one grade (qrels; an "
        "empty grade where no rater graded it, or a vote tied). With -m, on the scale that "
        "metric is computed on, as `rankscope evaluate` does over the raters' file.",
        examples=[f"rankscope judgments aggregate {_J} --scale trec --strategy max -f csv",
                  f"rankscope judgments aggregate {_J} --scale trec -m P@5 -o binary.txt"])
    agg.add_argument("files", nargs="+", metavar="judgments",
                     help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(agg)
    _input_format_options(agg)
    agg.add_argument("-m", "--metric", action="append", dest="metrics",
                     help="aggregate on the scale this metric is computed on, as `rankscope "
                          "evaluate` over the raters' file does (transform, then the scale's "
                          "strategy), so evaluating the output gives its numbers (repeatable; "
                          "the metrics must share a scale)")
    add_output(agg)
    add_data_format(agg, "csv, tsv, jsonl, json, parquet or trec (which drops the ungraded)")
    agg.add_argument("--details", action="store_true",
                     help="also write n_grades, n_raters and tie per result")
    agg.set_defaults(handler=_aggregate)

    agr = actions.add_parser(
        "agreement", help="agreement between raters (kappas, alpha)",
        description="How much the raters agree, on the results at least two graded: percent "
        "agreement, Cohen's kappa per pair of raters and their mean, Fleiss' kappa, "
        "Krippendorff's alpha, and the majority vote's tie rate. Needs two raters or more "
        "who graded common results.",
        examples=["rankscope judgments agreement ann.txt bob.txt --scale graded -q",
                  "rankscope judgments agreement grades.csv --scale graded -f json -o a.json"])
    agr.add_argument("files", nargs="+", metavar="judgments",
                     help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(agr, transforms=False)
    _input_format_options(agr)
    agr.add_argument("--weights", choices=("auto", "none", "linear", "quadratic"),
                     default="auto", help="Cohen's kappa weights (auto: quadratic if ordinal)")
    agr.add_argument("-q", "--per-query", action="store_true", help="also per query")
    add_format(agr, ("table", "json"))
    agr.add_argument("--output-format", dest="format", choices=("table", "json"),
                     action=deprecated_alias("--output-format", "--format"),
                     help=argparse.SUPPRESS)
    add_output(agr)
    agr.set_defaults(handler=_agreement)

    tr = actions.add_parser(
        "transform", help="map grades to another scale",
        description="Map every grade to another scale (graded to binary, detail to graded, "
        "...) by the platform's default rules or by --rules; raters and ungraded rows stay.",
        examples=[f"rankscope judgments transform {_J} --scale trec --to binary "
                  "--rules '0=0,1..4=1' -o binary.csv"])
    tr.add_argument("files", nargs="+", metavar="judgments",
                    help="judgments files, or irds:NAME (a collection's qrels)")
    add_judgment_options(tr, transforms=False)
    _input_format_options(tr)
    tr.add_argument("--to", required=True, help="target scale")
    tr.add_argument("--rules", help="rules like '0=0,1..3=1' (override the defaults)")
    add_output(tr)
    add_data_format(tr, "csv, tsv, jsonl, json, parquet or trec")
    tr.set_defaults(handler=_transform)

    from rankscope.cli.implicit import add_implicit_parser

    add_implicit_parser(actions)


def _input_format_options(p: argparse.ArgumentParser) -> None:
    """``--input-format``."""
    from rankscope.cli.options import add_input_formats

    add_input_formats(p, qrels=False, runs=False, inputs="judgments files")


def _read(args: argparse.Namespace) -> Judgments:
    """The judgments files of the command line; a file without any grade is an error."""
    from rankscope.cli.qrels_argument import read_judgments

    j = read_judgments(args.files, args, args.input_format)
    if j.frame.height == 0:
        from rankscope.errors import InputError

        raise InputError("no judgments in the file(s): nothing to work on",
                         source=", ".join(args.files))
    return j


def _output_format(args: argparse.Namespace) -> str | None:
    fmt: str | None = args.format
    if fmt is None and args.output == "-":
        return "csv"
    return fmt


def _aggregate(args: argparse.Namespace) -> int:
    from rankscope.data.tables import Qrels
    from rankscope.judgments.aggregate import aggregate_frame
    from rankscope.judgments.io import write_judgments_frame

    j = _read(args)
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
    from rankscope.cli.qrels_argument import strategy_arg

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
    from rankscope.cli.qrels_argument import strategy_arg, transforms_arg
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

    j = _read(args)
    transform(j, args.to, args.rules).write(args.output, format=_output_format(args))
    return 0


def _num(value: float | None) -> str:
    from rankscope.render.tabular import format_value

    return format_value(value)


def _agreement(args: argparse.Namespace) -> int:
    from rankscope.judgments.agreement import agreement

    j = _read(args)
    raters = j.frame.get_column("rater").unique().sort().to_list()
    if len(raters) < 2:
        from rankscope.errors import InputError

        named = f" ({raters[0]})" if raters else ""
        raise InputError(f"agreement needs two raters or more; the judgments have "
                         f"{len(raters)}{named}: give one file per rater, or a file with a "
                         "rater column", source=", ".join(args.files))
    weights = None if args.weights == "none" else args.weights
    result = agreement(j, weights=weights, by_query=args.per_query)
    if result.n_items == 0:
        from rankscope.errors import NoOverlapError

        raise NoOverlapError(f"no result was graded by two raters ({', '.join(raters)}): "
                             "there is nothing to agree on (are the query and document ids "
                             "written alike in every file?)", source=", ".join(args.files))
    if args.format == "json":
        write_text(args.output, json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
        return 0
    out = io.StringIO()
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
    write_text(args.output, out.getvalue())
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
