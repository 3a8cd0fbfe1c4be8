"""``rankscope fuse RUN RUN [RUN...] --method rrf -o fused.txt``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]

# Kept in step with rankscope.fusion.combine (tests/compare/test_fusion_cli.py checks it);
# spelled out here so `rankscope --help` does not import polars.
METHODS = ("rrf", "combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "wsum",
           "combgmnz", "wmnz", "mixed", "isr", "log_isr", "logn_isr", "bordafuse",
           "w_bordafuse", "condorcet", "w_condorcet", "rbc", "mapfuse", "posfuse", "probfuse",
           "segfuse", "slidefuse", "bayesfuse")
NORMS = ("min-max", "min-max-inverted", "zscore", "sum", "max", "rank", "borda", "none")


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``fuse`` subcommand."""
    from rankscope.cli.parsing import deprecated_alias

    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Fuse two or more runs into one. With --optimize QRELS, try a small grid "
        "of the method's parameters (RRF's k, wsum's weights, or the normalization) and "
        "write the run that scores best on the metric given with -m.",
    )
    p.add_argument("runs", nargs="*", metavar="run", help="two or more run files")
    p.add_argument("--method", choices=METHODS, default="rrf", metavar="METHOD",
                   help="fusion method (rrf); --list-methods shows them all")
    p.add_argument("--list-methods", action="store_true",
                   help="list every method with its parameters, formula and citation")
    p.add_argument("--norm", choices=NORMS, default="min-max",
                   help="score normalization before combining (min-max; RRF ignores it)")
    p.add_argument("--rrf-k", dest="k", type=float, help="RRF's constant (60)")
    p.add_argument("--k", dest="k", type=float, metavar="RRF_K",
                   action=deprecated_alias("--k", "--rrf-k"),
                   help="deprecated: use --rrf-k (-k is a cut-off in other commands)")
    p.add_argument("--weights", help="weights of the weighted methods, comma separated, one "
                                     "per run")
    p.add_argument("--gamma", type=float, help="combgmnz's exponent (1)")
    p.add_argument("--sigma", type=float, help="logn_isr's sigma (0.01)")
    p.add_argument("--phi", type=float, help="rbc's persistence (0.8)")
    p.add_argument("--window", type=int, help="slidefuse's half-width (1)")
    p.add_argument("--segments", type=int, help="probfuse's number of segments (10)")
    p.add_argument("--train-qrels", metavar="QRELS",
                   help="training judgments of the supervised methods (mapfuse, posfuse, "
                        "probfuse, segfuse, slidefuse, bayesfuse); a file or irds:NAME")
    p.add_argument("--depth", type=int, help="use only each run's first DEPTH documents")
    p.add_argument("--name", help="run tag of the fused run (default: the method)")
    p.add_argument("-o", "--output", default="-", help="where to write the fused run (stdout)")
    p.add_argument("-f", "--format", choices=("trec", "json", "jsonl", "csv", "tsv", "parquet"),
                   help="format of the fused run (default: from the output name, else trec)")
    p.add_argument("--optimize", metavar="QRELS",
                   help="grid-search the method's parameters against these qrels (a file or "
                        "irds:NAME)")
    p.add_argument("-m", "--metric", default="nDCG@10",
                   help="metric maximised by --optimize (nDCG@10)")
    p.add_argument("--step", type=float, default=0.1, help="grid step of the weights (0.1)")
    p.add_argument("--folds", type=int,
                   help="with --optimize: cross-validate over this many folds of queries "
                        "(default: 5 for supervised methods, none otherwise)")
    from rankscope.cli.parsing import add_ties_option

    add_ties_option(p)
    p.add_argument("--run-format", help="format of the run files (default: from their names)")
    p.add_argument("--qrels-format", help="format of the qrels file (default: from its name)")
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    from rankscope.cli.parsing import add_overlap_option

    add_overlap_option(p)
    p.set_defaults(handler=run)


def _weights(text: str | None) -> list[float] | None:
    from rankscope.errors import OptionError

    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise OptionError(f"--weights must be numbers separated by commas, not {text!r}") from None


def run(args: argparse.Namespace) -> int:
    """Fuse (or tune and fuse) and write the run; returns the exit code."""
    from rankscope.cli.compare import read_runs
    from rankscope.data.runs import load_runs
    from rankscope.data.tables import Qrels
    from rankscope.errors import OptionError
    from rankscope.fusion.combine import fuse
    from rankscope.fusion.optimize import optimize_fusion

    if args.list_methods:
        sys.stdout.write(methods_text())
        return 0
    if len(args.runs) < 2:
        raise OptionError("fuse needs at least two runs")
    tables, names = load_runs(read_runs(args))
    named = dict(zip(names, tables, strict=True))
    given = {"k": args.k, "weights": _weights(args.weights), "gamma": args.gamma,
             "sigma": args.sigma, "phi": args.phi, "window": args.window,
             "segments": args.segments}
    if args.optimize:
        if args.train_qrels:
            raise OptionError("--optimize trains on its own qrels (in folds); drop --train-qrels")
        qrels = Qrels.read(args.optimize, format=args.qrels_format)
        search = optimize_fusion(qrels, named, method=args.method, metric=args.metric,
                                 norm=args.norm, params={k: v for k, v in given.items()
                                                         if v is not None},
                                 step=args.step, folds=args.folds, depth=args.depth,
                                 ties=args.ties, allow_no_overlap=args.allow_no_overlap)
        sys.stderr.write(_trials_text(search) + "\n")
        fused = search.best_run
        if args.name:
            fused.name = args.name
    else:
        train = (Qrels.read(args.train_qrels, format=args.qrels_format)
                 if args.train_qrels else None)
        fused = fuse(named, method=args.method, norm=args.norm, qrels=train, **given,
                     depth=args.depth, ties=args.ties, name=args.name,
                     allow_no_overlap=args.allow_no_overlap)
    fused.write(args.output, format=args.format)
    return 0


def _trials_text(search: Any) -> str:
    params = [c for c in search.trials.columns if c != "score"]
    lines = [f"{'  '.join(params)}  {search.metric}"]
    for row in search.trials.iter_rows(named=True):
        shown = "  ".join(str(row[p]) for p in params)
        score = "-" if row["score"] is None else f"{row['score']:.4f}"
        lines.append(f"{shown}  {score}")
    best = ", ".join(f"{k}={v}" for k, v in search.best_params.items()) or "no parameters"
    lines.append(f"best: {best} ({search.metric} = {search.best_score:.4f} on the queries it "
                 "was tuned on)")
    if search.cv_score is not None:
        lines.append(f"{search.folds}-fold cross-validated {search.metric}: "
                     f"{search.cv_score:.4f} (each query scored by parameters chosen without it)")
    return "\n".join(lines)


def methods_text() -> str:
    """Every fusion method with its parameters, formula and citation (for people)."""
    from rankscope.fusion.methods import METHODS as SPECS

    out = []
    for spec in SPECS.values():
        head = f"{spec.name}  ({spec.kind}"
        head += f"; also {', '.join(spec.aliases)})" if spec.aliases else ")"
        out += [head, f"    {spec.summary}", f"    fused score: {spec.formula}"]
        for p in spec.params:
            out.append(f"    {p.name}={p.default}: {p.doc}")
        out += [f"    {spec.citation}", ""]
    return "\n".join(out)
