"""``rankscope evaluate QRELS RUN... -m METRIC ...``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run_names"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``evaluate`` subcommand."""
    from rankscope.cli.options import add_digits, add_format, add_input_formats, add_output

    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description="Evaluate one or more runs against qrels. Metric names may be written "
        "the way trec_eval, ranx or ir_measures write them (nDCG@10, ndcg_cut_10, P(rel=2)@5).",
        examples=["rankscope evaluate rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "-m nDCG@10 -m P@5",
                  "rankscope evaluate rankscope-sample/qrels.txt rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt -m AP -q -f csv -o scores.csv"],
    )
    p.add_argument("qrels", help="qrels or judgments file (TREC, JSON, JSONL, CSV, TSV, "
                                 "Parquet; - = stdin, read as TREC unless --qrels-format "
                                 "says), or irds:NAME (an ir_datasets collection, from its "
                                 "local cache)")
    p.add_argument("runs", nargs="+", metavar="run", help="run file(s); - = stdin")
    p.add_argument("-m", "--metric", action="append", required=True, dest="metrics",
                   help="metric to compute (repeatable)")
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    add_format(p, ("table", "json", "csv", "tsv", "markdown"),
               help="the output's form (JSON: {\"runs\": {name: ...}}, plus the run's own keys "
                    "at the top for one run; CSV/TSV: a run column first, and per query a "
                    "statistic column: value, or mean, n_queries, std, ci_low, ci_high on the "
                    "summary rows)")
    add_output(p)
    add_digits(p)
    from rankscope.cli.interval_option import add_interval_option

    add_interval_option(p)
    add_input_formats(p)
    from rankscope.cli.conventions import add_evaluation_conventions

    add_evaluation_conventions(p)
    p.add_argument("--on-duplicate", choices=("error", "first", "max"), default="error",
                   help="a document twice in one ranking")
    from rankscope.cli.parsing import add_overlap_option

    add_overlap_option(p)
    e = p.add_argument_group("engine")
    e.add_argument("--engine", choices=("local", "streaming", "spark"), default="local",
                   help="local: in memory (default); streaming: bounded memory, for runs larger "
                   "than memory (a TREC run grouped by query); spark: distributed by query on "
                   "Spark (the spark extra; TREC or Parquet paths)")
    e.add_argument("--memory", metavar="SIZE",
                   help="memory budget of --engine streaming, e.g. 512M or 4G (default 2G)")
    e.add_argument("--quiet", action="store_true",
                   help="no progress bars (they show only on a terminal anyway)")
    from rankscope.cli.qrels_argument import add_judgments_group

    add_judgments_group(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; returns the exit code."""
    from rankscope.cli.conventions import option_fields
    from rankscope.cli.parsing import refuse_double_stdin, write_text
    from rankscope.cli.qrels_argument import evaluate_with_judgments, may_hold_judgments
    from rankscope.data.read_ahead import ReadAhead
    from rankscope.data.tables import Run
    from rankscope.engine.conventions import plan_metrics
    from rankscope.engine.options import EvalOptions

    refuse_double_stdin(args.qrels, *args.runs)
    if args.quiet:
        from rankscope.progress import set_enabled

        set_enabled(False)
    if args.memory is not None and args.engine != "streaming":
        import warnings

        from rankscope.errors import RankscopeWarning

        warnings.warn(f"--memory is the budget of --engine streaming; ignored with --engine "
                      f"{args.engine}", RankscopeWarning, stacklevel=1)
    if args.engine != "local":
        results = _other_engine(args)
    else:
        fields = option_fields(args)
        options = EvalOptions.merged(None, fields)  # type: ignore[arg-type]
        # the names are read once (a bad name or option fails before any file is read):
        # with the judging platform's spellings too when the file may hold judgments
        asked: Any = None
        if may_hold_judgments(args):
            from rankscope.judgments.evaluation import plan_seed_metrics

            asked = plan_seed_metrics(args.metrics, options.conventions)
            metrics = [found.metric for found, _ in asked.entries]
        else:
            plan = plan_metrics(args.metrics, options)
            metrics = plan.metrics
        def read_run(path: str) -> Run:
            # a document ranked twice is looked for beside the kernels, as in
            # rankscope.evaluate (the ranking step raises the reader's error)
            return Run.read(path, format=args.run_format, on_duplicate=args.on_duplicate,
                            _defer_duplicates="error")

        # the runs are read one ahead, on a thread, while the qrels and the run before
        # are worked on: the first beside the qrels (a judgments file reads its runs itself)
        ahead = None if asked is not None else ReadAhead(args.runs, read_run)
        try:
            # the engine's modules load while the first run is read (0.05-0.1 s)
            from rankscope.data.tables import Qrels
            from rankscope.engine.evaluate import evaluate
            from rankscope.engine.qrels_index import qrels_index

            qrels: Any = _read_qrels(args, metrics)
        except BaseException:
            if ahead is not None:
                ahead.close()
            raise
        judged = False
        if asked is not None:
            from rankscope.judgments.table import Judgments

            judged = isinstance(qrels, Judgments)
        if judged:
            results = evaluate_with_judgments(args, qrels, asked)
        else:
            if asked is not None:
                plan = asked.for_qrels(options)
            results = []
            held = [qrels]  # the last run's evaluation is handed the only reference
            del qrels
            with ahead or ReadAhead(args.runs, read_run) as runs:
                i = -1  # not enumerate(): its reused result tuple holds the last item
                for run_t in runs:
                    i += 1
                    last = i == len(args.runs) - 1
                    if last and isinstance(held[0], Qrels):
                        # the last run: the keyed judgments go with its ranking
                        qrels_index(held[0]).last_ranking()
                    run_t.hand_over()  # its scores may go once its rows are ordered
                    held_run = [run_t]
                    del run_t  # one run in memory, and the next being read
                    # the last run's qrels (frame and index), and every run, handed over:
                    # they go once ranked, not held beside the measures (200 MB of qrels
                    # at 7 M judgments, 700 MB of run ids at 10^7 lines); a call without
                    # ``**`` unpacking, whose argument tuple would hold them
                    results.append(
                        evaluate(held.pop() if last else held[0], held_run.pop(), plan,
                                 per_query=args.per_query,
                                 allow_no_overlap=args.allow_no_overlap, options=options)
                    )
    from rankscope.render.tabular import render_evaluations

    names = run_names(results, args.runs)
    for result in results:
        result.show_interval = args.ci
    text = render_evaluations(list(zip(names, results, strict=True)), args.format,
                              per_query=args.per_query, digits=args.digits, describe=False)
    write_text(args.output, text + "\n")
    if args.format == "table":  # which queries were evaluated: for people, beside the numbers
        import sys

        for result in results:
            sys.stderr.write(f"rankscope {args.command}: {result.info.describe()}\n")
    from rankscope.cli.interval_option import say_skipped_intervals

    say_skipped_intervals(args.command, list(zip(names, results, strict=True)))
    return 0


def _read_qrels(args: argparse.Namespace, metrics: list[Any]) -> Any:
    """The qrels argument, read once: subtopic qrels (ndeval's format) when an intent-aware
    measure is asked, else qrels or raters' judgments, as the file and options say."""
    from rankscope.cli.qrels_argument import read_qrels_argument
    from rankscope.metrics.intent_aware import INTENT_FAMILIES

    if any(m.family in INTENT_FAMILIES for m in metrics):
        from rankscope.data.subtopics import SubtopicQrels

        return SubtopicQrels.read(args.qrels)
    return read_qrels_argument(args)


def run_names(results: list[Any], paths: list[str]) -> list[str]:
    """One distinct name per run: its tag, else its file name, else its path."""
    import os

    from rankscope.data.runs import unique_names

    return unique_names([[r.info.run_name, os.path.basename(p), p]
                         for r, p in zip(results, paths, strict=True)])


def _size(text: str) -> int:
    """Bytes in a size like ``512M``, ``4G`` or ``1000000``."""
    from rankscope.errors import OptionError

    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("B")
    scale = units.get(raw[-1:], 1)
    try:
        value = float(raw[:-1] if raw[-1:] in units else raw)
    except ValueError:
        value = -1.0
    if not (value > 0 and value * scale < 1 << 60):  # NaN and inf fail too
        raise OptionError(f"--memory must be a size like 512M or 4G, not {text!r}")
    return int(value * scale)


def _other_engine(args: argparse.Namespace) -> list[Any]:
    """``--engine streaming`` / ``--engine spark``: one result per run file."""
    from rankscope.cli.qrels_argument import judgment_options_given
    from rankscope.errors import OptionError

    given = judgment_options_given(args)
    if given:
        raise OptionError(f"--engine {args.engine} evaluates qrels, not raters' judgments: "
                          f"{', '.join(given)} cannot apply (use --engine local)")
    from rankscope.data.formats import guess_format

    readable = ("trec",) if args.engine == "streaming" else ("trec", "parquet")
    for path, fmt, flag in [(args.qrels, args.qrels_format, "--qrels-format"),
                            *[(r, args.run_format, "--run-format") for r in args.runs]]:
        if path.startswith("irds:") and path is args.qrels:
            continue
        found = (fmt or ("trec" if path == "-" else guess_format(path))).lower()
        if found not in readable:
            what = " or ".join(f.upper() if f == "trec" else f.capitalize() for f in readable)
            raise OptionError(f"--engine {args.engine} reads {what} files; {path} is {found} "
                              f"(from {'its name' if fmt is None else flag}): convert it, or "
                              "evaluate it with --engine local")
    from rankscope.cli.conventions import option_fields
    from rankscope.engine.evaluate import plan_metrics
    from rankscope.engine.options import EvalOptions

    fields = option_fields(args)
    # the names are read once (a bad name fails before any file is read)
    plan = plan_metrics(args.metrics, EvalOptions.merged(None, fields))  # type: ignore[arg-type]
    options = {"per_query": args.per_query, **fields}
    if args.engine == "streaming":
        from rankscope.data.tables import Qrels
        from rankscope.engine.streaming import evaluate_streaming

        qrels = Qrels.read(args.qrels, format=args.qrels_format)
        memory = _size(args.memory or "2G")
        results = [evaluate_streaming(qrels, path, plan, memory=memory, **options)
                   for path in args.runs]
    else:
        from rankscope.spark import evaluate_paths

        results = [evaluate_paths(args.qrels, path, plan, qrels_format=args.qrels_format,
                                  run_format=args.run_format, **options) for path in args.runs]
    for result, path in zip(results, args.runs, strict=True):
        _check_overlap(result.info, path, args)
    return results


def _check_overlap(info: Any, path: str, args: argparse.Namespace) -> None:
    """The overlap rule for engines that learn the run's queries only while reading it."""
    from rankscope.data.overlap import check_overlap

    check_overlap(path, info.n_run_queries, info.run_only, args.qrels, info.n_qrels_queries,
                  info.missing_from_run, allow=args.allow_no_overlap)
