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
        "store (--store; every query committed as it arrives, the snapshot marked complete "
        "after the last one). QUERIES "
        "is a TSV file query_id<TAB>text (header optional; more named columns are template "
        "parameters) or TREC topics. Re-running records a new snapshot, never overwrites "
        "one. Exit 2 with one line naming the query when a query fails for good.",
    )
    p.add_argument("endpoint", help="endpoint TOML file")
    p.add_argument("queries", help="queries: TSV (query_id<TAB>text) or TREC topics")
    p.add_argument("-o", "--output", metavar="RUN", help="write a TREC run here (- = stdout)")
    p.add_argument("--store", metavar="DB",
                   help="record the snapshot in this store (a SQLite file or a database URL)")
    p.add_argument("--name", help="snapshot name and run tag (default: the endpoint's name)")
    p.add_argument("--depth", type=int, default=10,
                   help="results kept per query (default 10, a first page; use 100 or "
                        "1000 for TREC-style runs)")
    p.add_argument("--run-scores", choices=("rank", "engine"), default="rank",
                   help="the score column of -o: rank (default: depth - rank + 1, strictly "
                        "decreasing in the engine's order, so every tool scores the order "
                        "the engine returned) or engine (the engine's own scores; a warning "
                        "counts the queries where they tie)")
    p.add_argument("--keep-raw", action="store_true",
                   help="also store each raw response body (its SHA-256 is always stored)")
    p.add_argument("--concurrency", type=int, help="queries in flight (default: the file's, "
                   "else 4)")
    p.add_argument("--rps", type=float, help="requests started per second at most")
    p.add_argument("--timeout", type=float, help="seconds per request (default: the file's, "
                   "else 10)")
    p.add_argument("--retries", type=int, help="retries of a failed request (default 4)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the first query's rendered request and send nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    p.set_defaults(handler=run)


async def _take(args: argparse.Namespace, config: Any, queries: list[Any], store: Any) -> Any:
    from rankscope import progress
    from rankscope.search.config import open_endpoint
    from rankscope.services.snapshots import take_snapshot

    options = {"timeout": args.timeout, "concurrency": args.concurrency, "rps": args.rps,
               "max_retries": args.retries, "keep_raw": args.keep_raw}
    endpoint = open_endpoint(config, **options)
    try:
        if args.dry_run:
            return endpoint.preview(queries[0], args.depth)
        name = args.name or config.name
        with progress.step_bar(len(queries), f"snapshot {name}", unit="query") as advance:
            return await take_snapshot(
                endpoint, queries, depth=args.depth, name=name, store=store,
                query_set_name=Path(args.queries).stem, query_set_source=args.queries,
                keep_raw=args.keep_raw,
                concurrency=args.concurrency or int(config.settings.get("concurrency", 4)),
                advance=advance)
    finally:
        await endpoint.aclose()


def run(args: argparse.Namespace) -> int:
    """Take the snapshot; returns the exit code."""
    from rankscope import progress
    from rankscope.errors import OptionError
    from rankscope.search.config import load_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.snapshots import write_run

    if args.quiet:
        progress.set_enabled(False)
    if args.depth < 1:
        raise OptionError(f"--depth must be >= 1, not {args.depth}")
    if not (args.output or args.store or args.dry_run):
        raise OptionError("say where to keep the snapshot: -o RUN (a TREC run) and/or "
                          "--store DB")
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
        outcome = asyncio.run(_take(args, config, queries, store))
    finally:
        if store is not None:
            store.close()
    wrote = ""
    if args.output:
        if args.output == "-":
            from rankscope.services.snapshots import run_lines

            sys.stdout.writelines(run_lines(outcome.responses, outcome.depth, outcome.name,
                                            scores=args.run_scores))
        else:
            lines = write_run(args.output, outcome.responses, outcome.depth, outcome.name,
                              scores=args.run_scores)
            wrote = f"; wrote {args.output} ({lines} lines)"
    if not args.quiet:
        where = f" #{outcome.snapshot_id}" if outcome.snapshot_id is not None else ""
        empty = sum(1 for r in outcome.responses if not r.hits)
        sys.stderr.write(
            f"snapshot {outcome.name!r}{where} {outcome.status}: {len(outcome.responses)} "
            f"queries ({empty} without results), {outcome.n_hits} hits, depth {outcome.depth}, "
            f"engine {outcome.engine_version or 'version unknown'}{wrote}\n")
    return 0
