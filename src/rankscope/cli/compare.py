"""``rankscope compare QRELS RUN1 RUN2 [RUN...] -m METRIC ...``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.data.runs import RunInputs

__all__ = [
    "add_compare_options", "add_evaluation_options", "compare_kwargs", "judgments_kwargs",
    "read_qrels", "read_runs", "reading_runs", "register",
]

FORMATS = ("table", "markdown", "latex", "html", "csv", "tsv", "json")


def add_evaluation_options(p: argparse.ArgumentParser) -> None:
    """File formats and the evaluation conventions (as ``rankscope evaluate``)."""
    from rankscope.cli.options import add_input_formats

    add_input_formats(p)
    from rankscope.cli.conventions import add_evaluation_conventions

    add_evaluation_conventions(
        p, queries_help="the tests pair the queries every run has a value for")
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    from rankscope.cli.parsing import add_overlap_option
    from rankscope.cli.qrels_argument import add_judgments_group

    add_overlap_option(p)
    add_judgments_group(p)


def add_compare_options(p: argparse.ArgumentParser) -> None:
    """Baseline, test, correction and naming options shared with ``report``."""
    from rankscope.cli.options import SEED, integer, number

    who = p.add_mutually_exclusive_group()
    who.add_argument("--baseline", metavar="NAME",
                     help="the run the others are compared with (default: the first)")
    who.add_argument("--all-pairs", action="store_true", help="compare every pair of runs")
    p.add_argument("--test", choices=("t", "wilcoxon", "permutation", "bootstrap", "tukey"),
                   default="t", help="paired test (default: t)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"),
                   default="holm", help="multiple-comparison correction per metric "
                                        "(default: holm)")
    p.add_argument("--alpha", type=number(0, 1, open_low=True, open_high=True), default=0.05,
                   help="significance level (0.05)")
    p.add_argument("--confidence", type=number(0, 1, open_low=True, open_high=True),
                   help="level of the intervals (default: 1 - alpha)")
    p.add_argument("--rounds", type=integer(1, 10_000_000), default=10000,
                   help="rounds of the permutation / bootstrap tests (10000)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of those tests (0)")
    p.add_argument("--name", action="append", dest="names", metavar="NAME",
                   help="name of each run, in order (repeat once per run; default: run tag, "
                        "or file name when tags collide)")


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``compare`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Compare two or more runs: per-run means with confidence intervals, "
        "differences to the baseline (or all pairs), paired significance tests with "
        "adjusted p-values, effect sizes and per-query wins / ties / losses.",
        examples=["rankscope compare rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt -m nDCG@10 -m P@5",
                  "rankscope compare rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt -m AP --test permutation -f csv -o cmp.csv"],
    )
    p.add_argument("qrels", help="qrels or raters' judgments file (TREC, JSON, JSONL, CSV, "
                                 "TSV, Parquet; - = stdin), or irds:NAME (an ir_datasets "
                                 "collection)")
    p.add_argument("runs", nargs="+", metavar="run", help="two or more run files")
    p.add_argument("-m", "--metric", action="append", required=True, dest="metrics",
                   help="metric to compare on (repeatable)")
    add_compare_options(p)
    from rankscope.cli.options import add_digits, add_format, add_output

    add_format(p, FORMATS)
    add_output(p)
    add_digits(p, "decimals of the numbers of CSV and TSV (default: 15 significant digits, "
                  "without a float's last-bit noise)")
    add_evaluation_options(p)
    p.set_defaults(handler=run)


def read_runs(args: argparse.Namespace) -> list[Any]:
    """Read every run file named on the command line."""
    from rankscope.cli.parsing import refuse_double_stdin
    from rankscope.data.tables import Run

    refuse_double_stdin(*[getattr(args, name, None) for name in ("qrels", "optimize",
                                                                 "train_qrels")], *args.runs)
    return [Run.read(path, format=args.run_format, on_duplicate=args.on_duplicate)
            for path in args.runs]


def compare_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`rankscope.compare.compare` from the options."""
    return {
        "baseline": args.baseline, "all_pairs": args.all_pairs, "test": args.test,
        "correction": args.correction, "alpha": args.alpha, "confidence": args.confidence,
        "n_resamples": args.rounds, "seed": args.seed, "names": args.names,
        "ties": args.ties, "unjudged": args.unjudged, "queries": args.queries,
        "conventions": args.conventions, "allow_no_overlap": args.allow_no_overlap,
    }


def judgments_kwargs(args: argparse.Namespace, qrels: Any) -> dict[str, Any]:
    """``scale``, ``strategy`` and ``transforms`` for raters' judgments (empty for qrels)."""
    from rankscope.cli.qrels_argument import strategy_arg, transforms_arg
    from rankscope.judgments.table import Judgments

    if not isinstance(qrels, Judgments):
        return {}
    from rankscope.judgments.scales import get_scale

    return {"scale": get_scale(args.scale), "strategy": strategy_arg(args.strategy),
            "transforms": transforms_arg(args.transform)}


def read_qrels(args: argparse.Namespace) -> Any:
    """The qrels argument, read once: qrels, or raters' judgments (asked, or a rater column)."""
    from rankscope.cli.qrels_argument import read_qrels_argument

    return read_qrels_argument(args)


@contextmanager
def reading_runs(args: argparse.Namespace, names: list[str] | None,
                 load: Callable[[], object] = lambda: None,
                 ) -> Iterator[tuple[RunInputs, Any]]:
    """The run files of ``args`` read one at a time from now (the next one ahead), the
    first while ``load`` runs (the modules the caller needs) and the qrels are read;
    yields the inputs and the qrels. The reading is stopped on leaving, if unfinished.

    A document ranked twice is found beside the measures (``defer_duplicates``): the
    inputs are for a command that evaluates every run before anything else reads it.
    """
    from rankscope.data.runs import RunInputs

    inputs = RunInputs(args.runs, names=names, on_duplicate=args.on_duplicate,
                       run_format=args.run_format, defer_duplicates=True)
    with inputs.start():
        load()
        yield inputs, read_qrels(args)


def _load_compare() -> None:
    import rankscope.compare.comparison  # noqa: F401


def run(args: argparse.Namespace) -> int:
    """Compare and print; returns the exit code."""
    from rankscope.compare.t_helper import serving

    # the t-test's distribution from a second process, importing scipy while this one
    # imports and reads (rankscope.compare.t_helper)
    with serving(args.test == "t"):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from rankscope.cli.parsing import refuse_double_stdin, write_text
    from rankscope.errors import OptionError
    from rankscope.judgments.evaluation import plan_seed_metrics

    # the names are read once (a bad name fails before any file is read)
    names = plan_seed_metrics(args.metrics, args.conventions)
    if len(args.runs) < 2:
        raise OptionError("compare needs at least two runs")
    refuse_double_stdin(args.qrels, *args.runs)
    # the files themselves: compare reads them one at a time (the next one ahead), the
    # first while the qrels are read (a document ranked twice is found beside the measures)
    kwargs = compare_kwargs(args)
    # the comparison's modules load while the first run is read
    with reading_runs(args, kwargs.pop("names"), _load_compare) as (inputs, qrels):
        from rankscope.compare.comparison import compare

        result = compare(qrels, inputs, names, **kwargs, **judgments_kwargs(args, qrels))
    from rankscope.render.comparison import render_comparison

    write_text(args.output, render_comparison(result, args.format, digits=args.digits,
                                              describe=False) + "\n")
    if args.format == "table":  # which queries were evaluated: for people, beside the numbers
        import sys

        for info in result.infos:
            sys.stderr.write(f"rankscope {args.command}: {info.describe()}\n")
    return 0
