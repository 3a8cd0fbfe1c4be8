"""The qrels argument of ``evaluate``, ``compare``, ``report`` and ``coverage``: qrels or
raters' judgments, read once, and the options that say how judgments become qrels.

The options the ``judgments`` commands share with them (``--scale``,
``--strategy``, ``--transform``, ``--rater``, ``--on-duplicate-grade``) are
defined here once. An option that only applies to raters' judgments, given
with a file read as qrels, is an error rather than ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
    "judgment_options_given",
    "may_hold_judgments",
    "read_judgments",
    "read_qrels_argument",
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
        "scale each metric needs, then aggregated to one grade per result by the scale's "
        "strategy (the judging platform's two stages).",
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


def judgment_options_given(args: argparse.Namespace) -> list[str]:
    """The options given that only apply to raters' judgments, as typed (``--rater x``)."""
    given = [("--judgments", getattr(args, "judgments", False)),
             ("--scale", getattr(args, "scale", None)),
             ("--strategy", getattr(args, "strategy", None)),
             ("--transform", getattr(args, "transform", None)),
             ("--rater", getattr(args, "rater", None)),
             ("--on-duplicate-grade", getattr(args, "on_duplicate_grade", "error") != "error"
              and args.on_duplicate_grade),
             ("--min-grades", getattr(args, "min_grades", 1) != 1 and args.min_grades)]
    out = []
    for flag, value in given:
        if value is True:
            out.append(flag)
        elif isinstance(value, list):
            out += [f"{flag} {v}" for v in value]
        elif value:
            out.append(f"{flag} {value}")
    return out


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

        qrels: Qrels | Judgments = Qrels.read(args.qrels, format=args.qrels_format)
    else:
        from rankscope.judgments.relevance import read_relevance
        from rankscope.judgments.scales import get_scale

        qrels = read_relevance(args.qrels, args.qrels_format,
                               judgments=asks_for_judgments(args),
                               scale=get_scale(getattr(args, "scale", None)),
                               rater=getattr(args, "rater", None),
                               on_duplicate=getattr(args, "on_duplicate_grade", "error"))
    from rankscope.judgments.table import Judgments

    ignored = [flag for flag in judgment_options_given(args)
               if flag.startswith(("--rater", "--on-duplicate-grade"))]
    if ignored and not isinstance(qrels, Judgments):
        from rankscope.errors import OptionError

        verb = "apply" if len(ignored) > 1 else "applies"
        raise OptionError(f"{' and '.join(ignored)} {verb} to raters' judgments; {args.qrels} "
                          "was read as qrels (it has no rater column): leave them out, or "
                          "add --judgments to read it as one rater's judgments")
    if isinstance(qrels, Judgments) and getattr(args, "strategy", None) and \
            qrels.frame.get_column("rater").n_unique() <= 1:
        import warnings

        from rankscope.errors import RankscopeWarning

        warnings.warn(f"--strategy changes nothing: {args.qrels} holds one rater's grades",
                      RankscopeWarning, stacklevel=1)
    return qrels


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
