"""``rankscope snapshots list|show|export|diff|holes|compare``: what the store keeps, compared."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["register"]


def _store_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="DB", default=os.environ.get("RANKSCOPE_STORE"),
                   help="the snapshot store (a SQLite file or a database URL; default: "
                        "$RANKSCOPE_STORE)")


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``snapshots`` subcommand and its actions."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Snapshots kept by `rankscope snapshot --store DB`: list them, show one, "
        "export one as a run or JSONL, compare several (diff), show two side by side query by "
        "query (compare) and find the unjudged results in their top k (holes). A snapshot is "
        "named by its id (3 or #3) or its name (the newest of that name); diff, compare and "
        "holes also take run files.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help="every snapshot of the store")
    _store_option(ls)
    ls.add_argument("-f", "--format", choices=("table", "json"), default="table")
    ls.set_defaults(handler=_list)

    show = actions.add_parser("show", help="one snapshot: its settings and results")
    show.add_argument("snapshot", help="id or name")
    _store_option(show)
    show.add_argument("-q", "--query", action="append", dest="queries", metavar="QUERY_ID",
                      help="show this query's results in full (repeatable)")
    show.add_argument("-f", "--format", choices=("table", "json"), default="table")
    show.set_defaults(handler=_show)

    export = actions.add_parser(
        "export", help="write a snapshot as a TREC run or JSONL (with display fields)")
    export.add_argument("snapshot", help="id or name")
    _store_option(export)
    export.add_argument("-o", "--output", required=True, help="the file to write (- = stdout)")
    export.add_argument("-f", "--format", choices=("trec", "jsonl"), default=None,
                        help="trec (a run) or jsonl (one object per query, with its request, "
                             "latency and hits); default from the file name, else trec")
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
        "query and overall, RBO (extrapolated, seed 000's RBO_EXT, over whole lists), "
        "Jaccard@k, churn (documents entering and leaving the top k) and rank moves. With "
        "--qrels, also metric deltas with a paired test and the holes (unjudged documents in "
        "each top k).")
    diff.add_argument("snapshots", nargs="+", metavar="SNAPSHOT",
                      help="ids, names or run files; the first is the baseline")
    _store_option(diff)
    diff.add_argument("-k", type=int, default=10, help="cut-off of Jaccard, churn, moves "
                      "(default 10)")
    diff.add_argument("--p", type=float, default=0.9, help="RBO persistence (default 0.9)")
    diff.add_argument("--qrels", help="judgments (a file or irds:NAME): add metric deltas "
                                            "and holes")
    diff.add_argument("-m", "--metric", action="append", dest="metrics",
                      help="with --qrels: metric (repeatable; default nDCG@10 and P@5)")
    diff.add_argument("--test", default="t", choices=("t", "wilcoxon", "permutation",
                                                       "bootstrap"),
                      help="paired test of the metric deltas (default t)")
    diff.add_argument("-q", "--per-query", action="store_true", help="print every query")
    from rankscope.cli.parsing import add_ties_option

    add_ties_option(diff, what="run files: ")
    diff.add_argument("--allow-mismatch", action="store_true",
                      help="compare snapshots of different depths or query sets anyway: "
                           "at the smallest depth, on the queries all answer (by default "
                           "refused, as every difference would count as a change)")
    diff.add_argument("-f", "--format", choices=("table", "json"), default="table")
    from rankscope.cli.conventions import add_conventions_option

    add_conventions_option(diff)
    diff.set_defaults(handler=_diff)

    holes = actions.add_parser(
        "holes", help="unjudged documents in each snapshot's top k: the next batch to grade")
    holes.add_argument("snapshots", nargs="+", metavar="SNAPSHOT",
                       help="ids, names or run files")
    _store_option(holes)
    holes.add_argument("--qrels", required=True,
                       help="the judgments so far (a file or irds:NAME)")
    holes.add_argument("-k", type=int, default=10, help="cut-off (default 10)")
    holes.add_argument("-o", "--output", metavar="FILE",
                       help="write the batch to grade (CSV, TSV, JSONL, JSON; - = CSV on "
                            "stdout): query_id, doc_id, rank, query_text, title, url, "
                            "found_in, grade (empty)")
    holes.add_argument("-f", "--format", choices=("table", "json"), default="table")
    holes.set_defaults(handler=_holes)

    from rankscope.cli.snapshots_compare import add_parser

    add_parser(actions, _store_option, _compare)


def _open(args: argparse.Namespace, needed: bool = True) -> Any:
    from rankscope.errors import OptionError

    if not args.store:
        if needed:
            raise OptionError("give --store DB (or set RANKSCOPE_STORE)")
        return None
    from rankscope.store.db import open_store

    return open_store(args.store)


def _table(rows: Sequence[tuple[str, ...]], right: set[int] | None = None) -> str:
    right = right or set()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                   + "\n" for row in rows)


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _list(args: argparse.Namespace) -> int:
    from rankscope.store.snapshots import list_snapshots

    with _open(args) as store:
        infos = list_snapshots(store)
    if args.format == "json":
        sys.stdout.write(json.dumps([i.to_dict() for i in infos], indent=2) + "\n")
        return 0
    if not infos:
        sys.stdout.write("no snapshot in the store yet\n")
        return 0
    rows = [("id", "name", "endpoint", "kind", "status", "queries", "hits", "depth",
             "partial", "short", "started (UTC)", "config")]
    rows += [(f"#{i.id}", i.name, i.endpoint, i.kind, i.status, f"{i.n_done}/{i.n_queries}",
              str(i.n_hits), str(i.depth), str(i.n_partial), str(i.n_short),
              _when(i.started_at), i.config_hash[:12])
             for i in infos]
    sys.stdout.write(_table(rows, right={5, 6, 7, 8, 9}))
    return 0


def _show(args: argparse.Namespace) -> int:
    from rankscope.errors import OptionError
    from rankscope.store.snapshots import read_snapshot

    with _open(args) as store:
        contents = read_snapshot(store, args.snapshot)
    info, records, by_query = contents.info, contents.queries, contents.hits
    known = {r.query_id for r in records}
    for q in args.queries or []:
        if q not in known:
            raise OptionError(f"snapshot #{info.id} has no query {q!r}")
    if args.format == "json":
        out = info.to_dict()
        out["queries"] = [{**r.__dict__, "hits": by_query.get(r.query_id, [])}
                          for r in records if not args.queries or r.query_id in args.queries]
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n")
        return 0
    w = sys.stdout.write
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
    if args.queries:
        for record in records:
            if record.query_id not in args.queries:
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
        return 0
    rows = [("query", "status", "hits", "ms", "notes", "first result")]
    for record in records:
        first = by_query.get(record.query_id, [{}])[0]
        rows.append((record.query_id, record.status or "-", str(record.n_hits),
                     "-" if record.latency_ms is None else f"{record.latency_ms:.0f}",
                     _notes(record) or "-",
                     str(first.get("title") or first.get("doc_id") or "")[:60]))
    w(_table(rows, right={2, 3}))
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
    from rankscope.errors import StoreError
    from rankscope.services.snapshots import trec_lines, write_lines
    from rankscope.store.snapshots import read_snapshot

    fmt = args.format
    if fmt is None:
        fmt = "jsonl" if args.output != "-" and guess_format(args.output) == "jsonl" else "trec"
    with _open(args) as store:
        contents = read_snapshot(store, args.snapshot)
    info, records, by_query = contents.info, contents.queries, contents.hits
    if not contents.whole and not args.partial:
        raise StoreError(
            f"snapshot #{info.id} ({info.name}) is {info.status} ({info.n_done} of "
            f"{info.n_queries} queries): not exported as if whole (add --partial to "
            "export what it has)")
    if fmt == "trec":
        lines = trec_lines(((r.query_id, [(h["doc_id"], h["score"])
                                          for h in by_query.get(r.query_id, [])])
                            for r in records if r.status == "ok"), info.depth, info.name,
                           scores=args.run_scores)
    else:
        lines = [json.dumps({"query_id": r.query_id, "query": r.text, "need": r.need,
                             "params": dict(r.params), "status": r.status,
                             "latency_ms": r.latency_ms, "total_hits": r.total_hits,
                             "raw_sha256": r.raw_sha256, "request": r.request,
                             "error": r.error, "partial": r.partial, "short": r.short,
                             "duplicates": r.duplicates, "pages": r.pages,
                             "retries": r.retries, "retry_reasons": r.retry_reasons,
                             "hits": [{k: v for k, v in h.items() if k != "query_id"}
                                      for h in by_query.get(r.query_id, [])]},
                            ensure_ascii=False) + "\n" for r in records]
    if args.output == "-":
        sys.stdout.writelines(lines)
    elif fmt == "trec":
        write_lines(args.output, lines)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            out.writelines(lines)
    if info.status != "complete":
        sys.stderr.write(f"note: snapshot #{info.id} is {info.status}: exported "
                         f"{info.n_done} of {info.n_queries} queries\n")
    return 0


def _rankings(args: argparse.Namespace) -> list[Any]:
    from pathlib import Path

    from rankscope.services.snapshot_diff import load_ranking

    needs_store = any(not Path(ref).is_file() for ref in args.snapshots)
    store = _open(args, needed=False) if (args.store or needs_store) else None
    try:
        rankings = [load_ranking(ref, store, ties=getattr(args, "ties", "trec"))
                    for ref in args.snapshots]
    finally:
        if store is not None:
            store.close()
    return rankings


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
    diffs = diff_rankings(rankings, k=args.k, p=args.p)
    compared = None
    coverages = None
    if args.qrels:
        from rankscope import compare

        qrels = Qrels.read(args.qrels)
        metrics = args.metrics or ["nDCG@10", "P@5"]
        compared = compare(qrels, {r.label: r.ordered_run() for r in rankings}, metrics,
                           baseline=rankings[0].label, test=args.test, progress=False,
                           conventions=args.conventions)
        coverages, _ = holes(rankings, qrels, args.k)
    if args.format == "json":
        out: dict[str, Any] = {"baseline": rankings[0].label, "k": args.k, "p": args.p,
                               "warnings": said + [n for r in rankings for n in r.notes],
                               "diffs": [d.to_dict() for d in diffs]}
        if compared is not None and coverages is not None:
            out["metrics"] = compared.to_dict()
            out["holes"] = {r.label: {"positions": c.positions, "ungraded": c.ungraded.height,
                                      "coverage": c.overall}
                            for r, c in zip(rankings, coverages, strict=True)}
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return 0
    w = sys.stdout.write
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
    return 0


def _compare(args: argparse.Namespace) -> int:
    from rankscope.cli.snapshots_compare import show

    return show(args, _rankings, _table)


def _holes(args: argparse.Namespace) -> int:
    from rankscope.data.tables import Qrels
    from rankscope.services.snapshot_diff import holes

    rankings = _rankings(args)
    qrels = Qrels.read(args.qrels)
    coverages, batch = holes(rankings, qrels, args.k)
    if args.output:
        from rankscope.judgments.io import write_judgments_frame

        if args.output == "-":
            sys.stdout.write(batch.write_csv())
        else:
            write_judgments_frame(batch, args.output)
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
