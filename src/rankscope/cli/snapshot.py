"""``rankscope snapshot ENDPOINT.toml QUERIES -o RUN [--store DB]``: run a query set."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``snapshot`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Send every query of QUERIES to the endpoint ENDPOINT.toml (Elasticsearch, "
        "OpenSearch, Solr, any JSON search API, or the embedded engine) and keep what comes "
        "back: as a TREC run (-o; score = depth - rank + 1 in the engine's order, or the "
        "engine's own with --run-scores engine; run tag = --name) and/or in a snapshot "
        "store (--store; answers committed as they arrive, the snapshot marked complete "
        "after the last one). QUERIES is a TSV file query_id<TAB>text (header optional; "
        "more named columns are template parameters) or TREC topics. Re-running records a "
        "new snapshot, never overwrites one; --resume ID completes an unfinished one. The "
        "summary line counts partial answers, answers short of the depth, duplicate ids "
        "dropped and retried requests. Exit 3 (incomplete) with one line naming the query "
        "when a query fails for good, or on an interruption (the answers so far stay in the "
        "store: --resume completes it), and with --strict when an answer is partial or "
        "short; exit 2 for bad input.",
    )
    p.add_argument("endpoint", help="endpoint TOML file")
    p.add_argument("queries", help="queries: TSV (query_id<TAB>text), TREC topics, or "
                                   "irds:NAME (an ir_datasets collection's queries)")
    p.add_argument("-o", "--output", metavar="RUN", help="write a TREC run here (- = stdout)")
    p.add_argument("--store", metavar="DB",
                   help="record the snapshot in this store (a SQLite file or a database URL)")
    p.add_argument("--name", help="snapshot name and run tag (default: the endpoint's name)")
    p.add_argument("--depth", type=int,
                   help="results kept per query (default 10, a first page; use 100 or "
                        "1000 for TREC-style runs)")
    p.add_argument("--run-scores", choices=("rank", "engine"), default="rank",
                   help="the score column of -o: rank (default: depth - rank + 1, strictly "
                        "decreasing in the engine's order, so every tool scores the order "
                        "the engine returned) or engine (the engine's own scores; a warning "
                        "counts the queries where they tie)")
    p.add_argument("--resume", metavar="ID",
                   help="complete the unfinished snapshot ID (or name) of --store: ask only "
                        "the queries it has no answer for (same endpoint file and queries)")
    p.add_argument("--strict", action="store_true",
                   help="exit 3 when any answer is partial (the engine timed out, shards "
                        "failed) or short of the depth although the engine matched more "
                        "(the snapshot and the run are kept): for CI")
    p.add_argument("--keep-raw", action="store_true",
                   help="also store each raw response body (its SHA-256 is always stored)")
    p.add_argument("--explain", action="store_true",
                   help="record why each result is there: Elasticsearch/OpenSearch explain, "
                        "Solr debugQuery, the embedded engine's BM25 terms (with --store; "
                        "`snapshots show -q QUERY` prints them; the http kind cannot explain)")
    p.add_argument("--concurrency", type=int, help="queries in flight (default: the file's, "
                   "else 4)")
    p.add_argument("--rps", type=float, help="requests started per second at most")
    p.add_argument("--timeout", type=float, help="seconds per request (default: the file's, "
                   "else 10)")
    p.add_argument("--retries", type=int, help="retries of a failed request (default 4)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the first query's rendered request and send nothing")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (bar on a terminal, a line every 10 s otherwise), no "
                        "summary line")
    p.set_defaults(handler=run)


async def _take(args: argparse.Namespace, config: Any, queries: list[Any], store: Any) -> Any:
    from rankscope import progress
    from rankscope.search.config import open_endpoint
    from rankscope.services.snapshots import DEFAULT_DEPTH, take_snapshot

    options = {"timeout": args.timeout, "concurrency": args.concurrency, "rps": args.rps,
               "max_retries": args.retries, "keep_raw": args.keep_raw, "explain": args.explain}
    endpoint = open_endpoint(config, **options)
    depth = args.depth or DEFAULT_DEPTH
    try:
        if args.dry_run:
            return endpoint.preview(queries[0], depth)
        name = args.name or config.name
        with progress.step_bar(len(queries), f"snapshot {name}", unit="query",
                               lines=True) as advance:
            return await take_snapshot(
                endpoint, queries, depth=depth, name=name, store=store,
                query_set_name=(args.queries if args.queries.startswith("irds:")
                                else Path(args.queries).stem),
                query_set_source=args.queries,
                keep_raw=args.keep_raw,
                concurrency=args.concurrency or int(config.settings.get("concurrency", 4)),
                advance=advance, resume=args.resume)
    finally:
        await endpoint.aclose()


def _check_resume(args: argparse.Namespace, store: Any) -> None:
    """Refuse --resume options that contradict the snapshot being resumed."""
    from rankscope.errors import OptionError
    from rankscope.store.snapshots import find_snapshot

    info = find_snapshot(store, args.resume)
    if args.depth is not None and args.depth != info.depth:
        raise OptionError(f"snapshot #{info.id} was taken at depth {info.depth}: resume it "
                          f"without --depth (not {args.depth})")
    if args.name is not None and args.name != info.name:
        raise OptionError(f"snapshot #{info.id} is named {info.name!r}: resume it without "
                          "--name")
    if args.keep_raw:
        raise OptionError("--keep-raw is the snapshot's own setting: resume without it")


def _taken(args: argparse.Namespace, config: Any, queries: list[Any], store: Any) -> Any:
    """The snapshot's outcome; a query that failed for good or an interruption is exit 3.

    What was answered before stays in the store (the snapshot is ``failed`` or
    ``incomplete``, and ``--resume`` completes it); no run file is written.
    """
    from rankscope.errors import IncompleteError, SearchRequestError

    try:
        return asyncio.run(_take(args, config, queries, store))
    except SearchRequestError as exc:
        raise IncompleteError(str(exc)) from None
    except KeyboardInterrupt:
        where = ""
        if store is not None:
            from rankscope.store.snapshots import list_snapshots, owner_tag

            mine = [i for i in list_snapshots(store)
                    if i.owner == owner_tag() and i.status != "complete"]
            if mine:
                last = mine[-1]
                where = (f": snapshot #{last.id} kept as {last.status} with {last.n_done} of "
                         f"{last.n_queries} queries (--resume {last.id} asks the rest)")
        raise IncompleteError("interrupted" + where) from None


def _stored_lines(store: Any, snapshot_id: int, depth: int, tag: str, scores: str) -> list[str]:
    """The whole snapshot's run, read back from the store (a resumed one's earlier answers)."""
    from rankscope.services.snapshots import trec_lines
    from rankscope.store.snapshots import read_snapshot

    contents = read_snapshot(store, str(snapshot_id))
    answered = [r.query_id for r in contents.queries if r.status == "ok"]
    return trec_lines(((q, [(h["doc_id"], h["score"]) for h in contents.hits.get(q, [])])
                       for q in answered), depth, tag, scores=scores)


def _counts(store: Any, snapshot_id: int) -> Any:
    """The counts of a stored snapshot's answers (all of them, a resumed one's too)."""
    from rankscope.services.snapshots import AnswerCounts
    from rankscope.store.snapshots import answer_counts, find_snapshot

    info = find_snapshot(store, str(snapshot_id))
    counted = answer_counts(store, snapshot_id)
    return AnswerCounts(queries=counted["answered"], empty=counted["empty"], hits=info.n_hits,
                        partial=info.n_partial, short=info.n_short,
                        duplicates=info.n_duplicates, retries=info.n_retries,
                        retry_reasons=counted["retry_reasons"])


def run(args: argparse.Namespace) -> int:
    """Take the snapshot; returns the exit code."""
    from rankscope import progress
    from rankscope.errors import IncompleteError, OptionError
    from rankscope.search.config import load_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.snapshots import run_lines, write_lines

    if args.quiet:
        progress.set_enabled(False)
    if args.depth is not None and args.depth < 1:
        raise OptionError(f"--depth must be >= 1, not {args.depth}")
    if not (args.output or args.store or args.dry_run):
        raise OptionError("say where to keep the snapshot: -o RUN (a TREC run) and/or "
                          "--store DB")
    if args.resume and not args.store:
        raise OptionError("--resume needs the --store the snapshot is in")
    if args.explain and not (args.store or args.dry_run):
        raise OptionError("--explain keeps the explanations in the store: give --store DB "
                          "(a run file has no place for them)")
    config = load_endpoint(args.endpoint)
    queries = read_queries(args.queries)
    if args.dry_run:
        preview = asyncio.run(_take(args, config, queries, None))
        sys.stdout.write(json.dumps(preview, indent=2, ensure_ascii=False) + "\n")
        return 0
    store = None
    if args.store:
        from rankscope.store.db import open_store

        store = open_store(args.store)
    try:
        if args.resume:
            _check_resume(args, store)
        outcome = _taken(args, config, queries, store)
        if store is not None and outcome.snapshot_id is not None:
            counts = _counts(store, outcome.snapshot_id)
            lines = (_stored_lines(store, outcome.snapshot_id, outcome.depth, outcome.name,
                                   args.run_scores) if args.output and outcome.resumed else None)
        else:
            counts = outcome.counts()
            lines = None
    finally:
        if store is not None:
            store.close()
    if args.output and lines is None:
        lines = run_lines(outcome.responses, outcome.depth, outcome.name,
                          scores=args.run_scores)
    wrote = ""
    if args.output and lines is not None:
        if args.output == "-":
            sys.stdout.writelines(lines)
        else:
            write_lines(args.output, lines)
            wrote = f"; wrote {args.output} ({len(lines)} lines)"
    where = f" #{outcome.snapshot_id}" if outcome.snapshot_id is not None else ""
    if not args.quiet:
        resumed = (f" (resumed: {outcome.resumed} answered before, {len(outcome.responses)} "
                   "now)" if args.resume else "")
        off = counts.describe()
        sys.stderr.write(
            f"snapshot {outcome.name!r}{where} {outcome.status}: {counts.queries} "
            f"queries{resumed} ({counts.empty} without results), {counts.hits} hits, depth "
            f"{outcome.depth}, engine {outcome.engine_version or 'version unknown'}"
            f"{'; ' + off if off else ''}{wrote}\n")
    if args.strict and counts.incomplete:
        raise IncompleteError(
            f"snapshot{where}: {counts.partial} partial and {counts.short} short answer(s) "
            "(--strict); `rankscope snapshots show` names the queries")
    return 0
