"""``rankscope snapshots list|show|export|diff|holes|compare``: what the store keeps, compared.

Every action reads the store through :mod:`rankscope.services.snapshot_store`
(never creating one) and compares through
:mod:`rankscope.services.snapshot_diff`.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

from rankscope.cli.parsing import write_text

__all__ = ["register"]

_STORE = "demo/store.sqlite"


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``snapshots`` subcommand and its actions."""
    from rankscope.cli.options import (
        CUTOFF,
        add_format,
        add_input_formats,
        add_output,
        add_store,
        number,
    )
    from rankscope.cli.parsing import add_overlap_option, add_ties_option, deprecated_alias

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Snapshots kept by `rankscope snapshot --store DB`: list them, show one, "
        "export one as a run or JSONL, compare several (diff), show two side by side query by "
        "query (compare) and find the unjudged results in their top k (holes). A snapshot is "
        "named by its id (3 or #3) or its name (the newest of that name); diff, compare and "
        "holes also take run files. A store named here is read, never created.",
        examples=[f"rankscope snapshots list --store {_STORE}",
                  f"rankscope snapshots diff 1 2 --store {_STORE} --qrels demo/qrels.txt"])
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    ls = actions.add_parser(
        "list", help="every snapshot of the store",
        description="Every snapshot of the store, oldest first: id, name, endpoint, status, "
                    "queries answered, hits, depth, partial and short answers, start time.",
        examples=[f"rankscope snapshots list --store {_STORE}",
                  f"rankscope snapshots list --store {_STORE} -f json -o snapshots.json"])
    add_store(ls)
    add_format(ls, ("table", "json"))
    add_output(ls)
    ls.set_defaults(handler=_list)

    show = actions.add_parser(
        "show", help="one snapshot: its settings and results",
        description="One snapshot: endpoint, engine, counts, times, and a line per query "
                    "(status, hits, latency, what was off, first result); --query shows a "
                    "query's request and results in full.",
        examples=[f"rankscope snapshots show 1 --store {_STORE}",
                  f"rankscope snapshots show 1 --store {_STORE} --query q01"])
    show.add_argument("snapshot", help="id or name")
    add_store(show)
    show.add_argument("--query", action="append", dest="queries", metavar="QUERY_ID",
                      help="show this query's request and results in full (repeatable)")
    show.add_argument("-q", action=deprecated_alias("-q", "--query", append=True),
                      dest="queries_old",
                      metavar="QUERY_ID", help=argparse.SUPPRESS)
    add_format(show, ("table", "json"))
    add_output(show)
    show.set_defaults(handler=_show)

    export = actions.add_parser(
        "export", help="write a snapshot as a TREC run or JSONL (with display fields)",
        description="Write a snapshot as a TREC run (engine order) or as JSON Lines, one "
                    "object per query with its request, latency and hits.",
        examples=[f"rankscope snapshots export 1 --store {_STORE} -o baseline.txt",
                  f"rankscope snapshots export 1 --store {_STORE} -o baseline.jsonl"])
    export.add_argument("snapshot", help="id or name")
    add_store(export)
    add_output(export, default=None, required=True, help="the file to write (- = stdout)")
    add_format(export, ("trec", "jsonl"), default=None,
               help="trec (a run) or jsonl (one object per query, with its request, latency "
                    "and hits); default from the file name, else trec")
    export.add_argument("--run-scores", choices=("rank", "engine"), default="rank",
                        help="trec: the score column: rank (default: depth - rank + 1, "
                             "strictly decreasing in the engine's order) or engine (the "
                             "engine's own scores, a warning when they tie); JSONL always "
                             "has the engine's scores")
    export.add_argument("--partial", action="store_true",
                        help="export an incomplete or failed snapshot too (what it has)")
    export.set_defaults(handler=_export)

    diff = actions.add_parser(
        "diff", help="compare snapshots or runs with the first: RBO, Jaccard@k, churn, moves",
        description="Compare each snapshot (or run file) after the first with the first: per "
        "query and overall, RBO (extrapolated: Webber et al.'s RBO_EXT, over whole lists), "
        "Jaccard@k, churn (documents entering and leaving the top k) and rank moves. With "
        "--qrels, also metric deltas with a paired test and the holes (unjudged documents in "
        "each top k).",
        examples=[f"rankscope snapshots diff 1 2 --store {_STORE}",
                  "rankscope snapshots diff rankscope-sample/run_a.txt "
                  "rankscope-sample/run_b.txt --qrels rankscope-sample/qrels.txt -q"])
    diff.add_argument("snapshots", nargs="+", metavar="SNAPSHOT",
                      help="ids, names or run files; the first is the baseline")
    add_store(diff, required=False,
              help="the snapshot store (needed when a SNAPSHOT is not a file)")
    diff.add_argument("-k", type=CUTOFF, default=10,
                      help="cut-off of Jaccard, churn, moves (default 10)")
    diff.add_argument("--p", type=number(0, 1, open_low=True, open_high=True), default=0.9,
                      help="RBO persistence, in (0, 1) (default 0.9)")
    diff.add_argument("--qrels", help="judgments (a file or irds:NAME): add metric deltas "
                                      "and holes")
    add_input_formats(diff, runs=False)
    diff.add_argument("-m", "--metric", action="append", dest="metrics",
                      help="with --qrels: metric (repeatable; default nDCG@10 and P@5)")
    diff.add_argument("--test", default="t", choices=("t", "wilcoxon", "permutation",
                                                       "bootstrap"),
                      help="paired test of the metric deltas (default t)")
    diff.add_argument("-q", "--per-query", action="store_true", help="print every query")
    add_ties_option(diff, what="run files: ")
    diff.add_argument("--allow-mismatch", action="store_true",
                      help="compare snapshots of different depths or query sets anyway: "
                           "at the smallest depth, on the queries all answer (by default "
                           "refused, as every difference would count as a change)")
    add_overlap_option(diff)
    add_format(diff, ("table", "json"))
    add_output(diff)
    from rankscope.cli.conventions import add_conventions_option

    add_conventions_option(diff)
    diff.set_defaults(handler=_diff)

    holes = actions.add_parser(
        "holes", help="unjudged documents in each snapshot's top k: the next batch to grade",
        description="Each snapshot's (or run's) top k against the judgments so far: how "
                    "much is judged, and the unjudged (query, document) pairs of all of them "
                    "once: the next batch to grade (-o writes it, a judgments file with an "
                    "empty grade column). A snapshot sharing no query with the judgments is "
                    "an error (--allow-no-overlap: nothing judged yet).",
        examples=[f"rankscope snapshots holes 1 2 --store {_STORE} --qrels demo/qrels.txt",
                  f"rankscope snapshots holes 2 --store {_STORE} --qrels demo/qrels.txt -k 20 "
                  "-o to_grade.csv"])
    holes.add_argument("snapshots", nargs="+", metavar="SNAPSHOT",
                       help="ids, names or run files")
    add_store(holes, required=False,
              help="the snapshot store (needed when a SNAPSHOT is not a file)")
    holes.add_argument("--qrels", required=True,
                       help="the judgments so far (a file or irds:NAME)")
    add_input_formats(holes, runs=False)
    holes.add_argument("-k", type=CUTOFF, default=10, help="cut-off (default 10)")
    add_overlap_option(holes)
    add_output(holes, default=None,
               help="write the batch to grade (CSV, TSV, JSONL, JSON or Parquet, by the name; "
                    "- = CSV on stdout): query_id, doc_id, rank, query_text, title, url, "
                    "found_in, grade (empty); with -, no summary")
    add_format(holes, ("table", "json"), help="the summary's form")
    holes.set_defaults(handler=_holes)

    from rankscope.cli.snapshots_compare import add_parser

    add_parser(actions, lambda q: add_store(
        q, required=False, help="the snapshot store (needed when a SNAPSHOT is not a file)"),
        _compare)


def _open(args: argparse.Namespace) -> Any:
    """The store named by --store (read: it must exist)."""
    from rankscope.errors import OptionError
    from rankscope.services.snapshot_store import open_snapshot_store

    if not args.store:
        raise OptionError("give --store DB (or set RANKSCOPE_STORE)")
    return open_snapshot_store(args.store)


def _table(rows: Sequence[tuple[str, ...]], right: set[int] | None = None) -> str:
    right = right or set()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                   + "\n" for row in rows)


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _list(args: argparse.Namespace) -> int:
    from rankscope.services.snapshot_store import list_all

    with _open(args) as store:
        infos = list_all(store)
    if args.format == "json":
        write_text(args.output, json.dumps([i.to_dict() for i in infos], indent=2) + "\n")
        return 0
    if not infos:
        write_text(args.output, "no snapshot in the store yet\n")
        return 0
    rows = [("id", "name", "endpoint", "kind", "status", "queries", "hits", "depth",
             "partial", "short", "started (UTC)", "config")]
    rows += [(f"#{i.id}", i.name, i.endpoint, i.kind, i.status, f"{i.n_done}/{i.n_queries}",
              str(i.n_hits), str(i.depth), str(i.n_partial), str(i.n_short),
              _when(i.started_at), i.config_hash[:12])
             for i in infos]
    write_text(args.output, _table(rows, right={5, 6, 7, 8, 9}))
    return 0


def _show(args: argparse.Namespace) -> int:
    from rankscope.services.snapshot_store import show

    asked = [*(args.queries or []), *(args.queries_old or [])] or None
    with _open(args) as store:
        detail = show(store, args.snapshot, asked)
    info, records, by_query = detail.info, detail.records, detail.hits
    if args.format == "json":
        out = info.to_dict()
        out["queries"] = [{**r.__dict__, "hits": by_query.get(r.query_id, [])}
                          for r in records if not asked or r.query_id in asked]
        write_text(args.output,
                   json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n")
        return 0
    buffer = io.StringIO()
    w = buffer.write
    w(f"snapshot #{info.id} {info.name!r}: {info.status}\n")
    w(f"  endpoint   {info.endpoint} ({info.kind}), config sha256 {info.config_hash[:16]}\n")
    w(f"  engine     {info.engine_version or 'version unknown'}\n")
    w(f"  queries    {info.n_done} of {info.n_queries} answered, {info.n_failed} failed, "
      f"{info.n_hits} hits, depth {info.depth} (query set {info.query_set!r})\n")
    w(f"  answers    {info.n_partial} partial, {info.n_short} short of the depth, "
      f"{info.n_duplicates} duplicate ids dropped, {info.n_retries} requests retried\n")
    w(f"  time (UTC) {_when(info.started_at)} to {_when(info.finished_at)}\n")
    if info.error:
        w(f"  error      {info.error}\n")
    w("\n")
    if asked:
        for record in records:
            if record.query_id not in asked:
                continue
            matching = "?" if record.total_hits is None else str(record.total_hits)
            w(f"{record.query_id}  {record.text!r}  ({record.status or 'not reached'}, "
              f"{record.n_hits} hits of {matching} matching, {record.pages} "
              f"page{'s' if record.pages > 1 else ''})\n")
            for label, said in (("partial", record.partial), ("short", record.short)):
                if said:
                    w(f"  {label}: {said}\n")
            if record.duplicates:
                w(f"  duplicates: {record.duplicates} listed again, dropped (first kept)\n")
            if record.retry_reasons:
                w("  retried: " + ", ".join(f"{k} x{v}" for k, v in
                                           sorted(record.retry_reasons.items())) + "\n")
            if record.request is not None:
                w("  request: " + json.dumps(record.request, ensure_ascii=False) + "\n")
            for hit in by_query.get(record.query_id, []):
                score = "-" if hit["score"] is None else f"{hit['score']:.4f}"
                w(f"  {hit['rank']:>3}  {score:>9}  {hit['doc_id']}  {hit['title'] or ''}\n")
                if hit["url"]:
                    w(f"                  {hit['url']}\n")
                if hit.get("explanation"):
                    w(_explanation_lines(hit["explanation"], indent="                  "))
        write_text(args.output, buffer.getvalue())
        return 0
    rows = [("query", "status", "hits", "ms", "notes", "first result")]
    for record in records:
        first = by_query.get(record.query_id, [{}])[0]
        rows.append((record.query_id, record.status or "-", str(record.n_hits),
                     "-" if record.latency_ms is None else f"{record.latency_ms:.0f}",
                     _notes(record) or "-",
                     str(first.get("title") or first.get("doc_id") or "")[:60]))
    w(_table(rows, right={2, 3}))
    write_text(args.output, buffer.getvalue())
    return 0


def _explanation_lines(tree: Any, indent: str, depth: int = 0, limit: int = 3) -> str:
    """An explanation tree as indented lines ``value  description``, ``limit`` levels deep."""
    if not isinstance(tree, dict) or depth >= limit:
        return ""
    value = tree.get("value")
    shown = f"{value:.4f}" if isinstance(value, int | float) else "-"
    text = " ".join(str(tree.get("description", "")).split())
    out = f"{indent}{'  ' * depth}{'why: ' if depth == 0 else ''}{shown}  {text}\n"
    for child in tree.get("details") or []:
        out += _explanation_lines(child, indent, depth + 1, limit)
    return out


def _notes(record: Any) -> str:
    """``partial, short, 2 dup, 3 retried``: what was off about one answer."""
    notes = [label for label, flag in (("partial", record.partial), ("short", record.short))
             if flag]
    if record.duplicates:
        notes.append(f"{record.duplicates} dup")
    if record.retries:
        notes.append(f"{record.retries} retried")
    return ", ".join(notes)


def _export(args: argparse.Namespace) -> int:
    from rankscope.data.formats import guess_format
    from rankscope.services.snapshot_store import export_lines
    from rankscope.services.snapshots import write_lines

    fmt = args.format
    if fmt is None:
        fmt = "jsonl" if args.output != "-" and guess_format(args.output) == "jsonl" else "trec"
    with _open(args) as store:
        info, lines = export_lines(store, args.snapshot, fmt, scores=args.run_scores,
                                   partial=args.partial)
    if fmt == "trec" and args.output != "-":
        write_lines(args.output, lines)
    else:  # stdout as text (what came before on it stays in order)
        write_text(args.output, "".join(lines))
    if info.status != "complete":
        sys.stderr.write(f"rankscope snapshots export: note: snapshot #{info.id} is "
                         f"{info.status}: exported {info.n_done} of {info.n_queries} queries\n")
    return 0


def _rankings(args: argparse.Namespace) -> list[Any]:
    from pathlib import Path

    from rankscope.services.snapshot_diff import load_ranking

    needs_store = any(not Path(ref).is_file() for ref in args.snapshots)
    store = _open(args) if needs_store else None
    try:
        return [load_ranking(ref, store, ties=getattr(args, "ties", "trec"))
                for ref in args.snapshots]
    finally:
        if store is not None:
            store.close()


def _fmt(value: float | None) -> str:
    from rankscope.render.tabular import format_value

    return format_value(value, 3)


def _coverage_table(rankings: Sequence[Any], coverages: Sequence[Any]) -> str:
    rows = [("snapshot", "positions", "unjudged", "coverage")]
    for ranking, cov in zip(rankings, coverages, strict=True):
        rows.append((ranking.label, str(cov.positions), str(cov.ungraded.height),
                     _fmt(cov.overall)))
    return _table(rows, right={1, 2, 3})


def _diff(args: argparse.Namespace) -> int:
    from rankscope.data.tables import Qrels
    from rankscope.errors import OptionError
    from rankscope.services.snapshot_diff import diff_rankings, holes

    if len(args.snapshots) < 2:
        raise OptionError("diff needs two or more snapshots or runs (the first is the baseline)")
    if args.metrics and not args.qrels:
        raise OptionError("-m needs --qrels (metric deltas need judgments)")
    import warnings

    from rankscope.errors import RankscopeWarning
    from rankscope.services.snapshot_diff import align

    rankings, said = align(_rankings(args), allow=args.allow_mismatch)
    for message in said + [n for r in rankings for n in r.notes]:
        warnings.warn(message, RankscopeWarning, stacklevel=1)
    diffs = diff_rankings(rankings, k=args.k, p=args.p,
                          allow_no_overlap=args.allow_no_overlap)
    compared = None
    coverages = None
    if args.qrels:
        from rankscope.compare.comparison import compare

        qrels = Qrels.read(args.qrels, format=args.qrels_format)
        metrics = args.metrics or ["nDCG@10", "P@5"]
        compared = compare(qrels, {r.label: r.ordered_run() for r in rankings}, metrics,
                           baseline=rankings[0].label, test=args.test, progress=False,
                           conventions=args.conventions,
                           allow_no_overlap=args.allow_no_overlap)
        coverages, _ = holes(rankings, qrels, args.k, allow_no_overlap=args.allow_no_overlap)
    if args.format == "json":
        out: dict[str, Any] = {"baseline": rankings[0].label, "k": args.k, "p": args.p,
                               "warnings": said + [n for r in rankings for n in r.notes],
                               "diffs": [d.to_dict() for d in diffs]}
        if compared is not None and coverages is not None:
            out["metrics"] = compared.to_dict()
            out["holes"] = {r.label: {"positions": c.positions, "ungraded": c.ungraded.height,
                                      "coverage": c.overall}
                            for r, c in zip(rankings, coverages, strict=True)}
        write_text(args.output, json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return 0
    buffer = io.StringIO()
    w = buffer.write
    w(f"baseline {rankings[0].label}; top k = {args.k}; RBO extrapolated, p = {args.p:g}\n")
    for d in diffs:
        s = d.summary()
        w(f"\n{d.other} vs {d.baseline}: {s['queries']} queries, {s['queries_changed']} with "
          f"a different top {d.k}\n")
        w(_table([("RBO", f"Jaccard@{d.k}", "entered", "left", "moved"),
                  (_fmt(s["rbo"]), _fmt(s["jaccard"]), str(s["entered"]), str(s["left"]),
                   str(s["moved"]))], right={0, 1, 2, 3, 4}))
        if args.per_query:
            rows = [("query", "RBO", f"Jaccard@{d.k}", "entered", "left", "moved", "mean|move|")]
            for r in d.per_query.iter_rows(named=True):
                rows.append((r["query_id"], _fmt(r["rbo"]), _fmt(r["jaccard"]),
                             str(r["entered"]), str(r["left"]), str(r["moved"]),
                             _fmt(r["mean_abs_move"])))
            w(_table(rows, right={1, 2, 3, 4, 5, 6}))
    if compared is not None and coverages is not None:
        w(f"\nmetrics against {args.qrels} (each run vs the baseline, paired test):\n")
        w(compared.render("table").rstrip("\n") + "\n")
        w(f"\nholes (unjudged results in the top {args.k}; unjudged counts as not relevant):\n")
        w(_coverage_table(rankings, coverages))
    write_text(args.output, buffer.getvalue())
    return 0


def _compare(args: argparse.Namespace) -> int:
    from rankscope.cli.snapshots_compare import show

    return show(args, _rankings, _table)


def _holes(args: argparse.Namespace) -> int:
    from rankscope.data.tables import Qrels
    from rankscope.services.snapshot_diff import holes

    fmt = _batch_format(args.output)
    rankings = _rankings(args)
    qrels = Qrels.read(args.qrels, format=args.qrels_format)
    coverages, batch = holes(rankings, qrels, args.k, allow_no_overlap=args.allow_no_overlap)
    if args.output:
        from rankscope.judgments.io import write_judgments_frame

        write_judgments_frame(batch, args.output, fmt)
    if args.output == "-":
        return 0
    if args.format == "json":
        out = {r.label: {"positions": c.positions, "ungraded": c.ungraded.height,
                         "coverage": c.overall, "holes": c.ungraded.to_dicts()}
               for r, c in zip(rankings, coverages, strict=True)}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    sys.stdout.write(_coverage_table(rankings, coverages))
    where = f"; written to {args.output}" if args.output else ""
    sys.stdout.write(f"{batch.height} distinct (query, document) pairs to grade{where}\n")
    return 0


_BATCH_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")


def _batch_format(output: str | None) -> str | None:
    """The batch's format, from its name (CSV on stdout); a TREC name is refused."""
    if output is None:
        return None
    if output == "-":
        return "csv"
    from rankscope.data.formats import guess_format
    from rankscope.errors import OptionError

    fmt = guess_format(output)
    if fmt not in _BATCH_FORMATS:
        raise OptionError(f"-o {output}: the batch to grade is a table (query_id, doc_id, "
                          "rank, query_text, title, url, found_in, grade); name the file "
                          ".csv, .tsv, .jsonl, .json or .parquet")
    return fmt
