"""``rankscope snapshots compare A B``: two rankings side by side, query by query."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Callable
from typing import Any

from rankscope.cli.parsing import write_text

__all__ = ["add_parser", "show"]

EXAMPLES = ["rankscope snapshots compare 1 2 --store demo/store.sqlite --qrels demo/qrels.txt "
            "-m nDCG@10",
            "rankscope snapshots compare rankscope-sample/run_a.txt rankscope-sample/run_b.txt "
            "--query 401 --qrels rankscope-sample/qrels.txt"]


def add_parser(actions: Any, store_option: Callable[[argparse.ArgumentParser], None],
               handler: Callable[[argparse.Namespace], int]) -> None:
    """Add the ``compare`` action to ``rankscope snapshots`` (``handler`` loads and calls
    :func:`show`)."""
    from rankscope.cli.options import add_format, add_output, integer
    from rankscope.cli.parsing import add_ties_option, deprecated_alias

    p: argparse.ArgumentParser = actions.add_parser(
        "compare", help="two snapshots or runs side by side, query by query",
        examples=EXAMPLES,
        description="Print, per query, A's and B's ranked lists next to each other: each "
        "document with its grade (or 'unjudged'), B's documents with their move against A "
        "(up N, down N, new, same) and A's documents B no longer returns marked gone; with "
        "--qrels, each side's per-query metric. Without --query the queries are sorted by how much "
        "their metric changed (without --qrels, by how much their list changed: lowest RBO "
        "first). The moves and the checks (different depths or query sets refused unless "
        "--allow-mismatch) are those of `snapshots diff`.")
    p.add_argument("snapshots", nargs=2, metavar="SNAPSHOT",
                   help="A (the baseline) and B: ids, names or run files")
    store_option(p)
    p.add_argument("--query", action="append", dest="queries", metavar="QUERY_ID",
                   help="only this query (repeatable)")
    # -q is --per-query everywhere else; its first meaning here stays a release, warned
    p.add_argument("-q", action=deprecated_alias("-q", "--query", append=True),
                   dest="queries_old", metavar="QUERY_ID", help=argparse.SUPPRESS)
    p.add_argument("--qrels", help="judgments (a file or irds:NAME): grades and the "
                                   "per-query metric")
    p.add_argument("-m", "--metric", help="with --qrels: the per-query metric (default "
                                          "nDCG@10)")
    p.add_argument("--top", type=integer(1), default=None, metavar="N",
                   help="without --query: show the N queries that changed most (default all)")
    add_ties_option(p, what="run files: ")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="compare snapshots of different depths or query sets anyway, at what "
                        "they share")
    add_format(p, ("table", "json"))
    add_output(p)
    p.set_defaults(handler=handler)


def _grade(value: float | None, doc: str | None) -> str:
    if doc is None:
        return ""
    return "unjudged" if value is None else f"{value:g}"


def _num(value: float | None) -> str:
    from rankscope.render.tabular import format_value

    return format_value(value, 4)


def show(args: argparse.Namespace, load: Callable[[argparse.Namespace], list[Any]],
         table: Callable[[list[tuple[str, ...]], set[int]], str]) -> int:
    """Print the two rankings (``load(args)``) side by side; returns the exit code."""
    import warnings

    from rankscope.errors import OptionError, RankscopeWarning
    from rankscope.services.snapshot_compare import side_by_side

    if args.metric and not args.qrels:
        raise OptionError("-m needs --qrels (a per-query metric needs judgments)")
    if args.top is not None and args.top < 1:
        raise OptionError(f"--top must be >= 1, not {args.top}")
    a, b = load(args)
    qrels = None
    if args.qrels:
        from rankscope.data.tables import Qrels

        qrels = Qrels.read(args.qrels)
    plan = None
    if args.metric:
        from rankscope.engine.evaluate import plan_metrics
        from rankscope.engine.options import EvalOptions

        # a bad name: exit 2; the name read here only, for both sides
        plan = plan_metrics([args.metric], EvalOptions.merged(None, {}))
    asked = [*(args.queries or []), *(args.queries_old or [])] or None
    found = side_by_side(a, b, qrels=qrels, metric=plan, query_ids=asked,
                         allow_mismatch=args.allow_mismatch)
    for message in found.warnings:
        warnings.warn(message, RankscopeWarning, stacklevel=1)
    views = found.queries if args.top is None else found.queries[:args.top]
    if args.format == "json":
        out: dict[str, Any] = found.to_dict()
        out["queries"] = [v.to_dict() for v in views]
        write_text(args.output, json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return 0
    buffer = io.StringIO()
    w = buffer.write
    w(f"A = {found.a}, B = {found.b}")
    if found.metric is not None:
        change = ("" if found.mean_a is None or found.mean_b is None
                  else f" ({found.mean_b - found.mean_a:+.4f})")
        w(f"; mean {found.metric}: {_num(found.mean_a)} -> {_num(found.mean_b)}{change}")
    w("\n")
    for view in views:
        head = f"\n{view.query_id}" + (f" {view.text!r}" if view.text else "") + ":"
        if found.metric is not None:
            delta = "" if view.delta is None else f" ({view.delta:+.4f})"
            head += f" {found.metric} {_num(view.metric_a)} -> {_num(view.metric_b)}{delta};"
        head += (f" {view.new} new, {view.gone} gone, {view.moved} moved"
                 + (f", {view.unjudged_b} unjudged in B" if qrels is not None else ""))
        w(head + "\n")
        if not view.rows:
            w("  (neither returns anything)\n")
            continue
        rows: list[tuple[str, ...]] = [("rank", "A", "grade", "", "B", "grade", "move")]
        for r in view.rows:
            rows.append((str(r.rank), r.base_doc or "", _grade(r.base_grade, r.base_doc),
                         r.base_move or "", r.doc or "", _grade(r.grade, r.doc), r.move or ""))
        if qrels is None:
            rows = [(r[0], r[1], r[3], r[4], r[6]) for r in rows]
        w("".join("  " + line for line in table(rows, {0}).splitlines(True)))
    write_text(args.output, buffer.getvalue())
    return 0
