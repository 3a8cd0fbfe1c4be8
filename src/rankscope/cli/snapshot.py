"""``rankscope snapshot ENDPOINT.toml QUERIES -o RUN [--store DB]``: run a query set."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``snapshot`` subcommand."""
    from rankscope.cli.options import CUTOFF, add_output, add_store, integer, number

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        examples=["rankscope demo init demo && rankscope snapshot demo/endpoint.toml "
                  "demo/queries.tsv -o demo/run.txt",
                  "rankscope snapshot demo/endpoint_tuned.toml demo/queries.tsv --store "
                  "demo/store.sqlite --depth 20 --name tuned"],
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
    add_output(p, default=None, metavar="RUN", help="write a TREC run here (- = stdout)")
    add_store(p, required=False, help="record the snapshot in this store (created if needed)")
    p.add_argument("--name", help="snapshot name and run tag (default: the endpoint's name)")
    p.add_argument("--depth", type=CUTOFF,
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
                        "`snapshots show --query QUERY` prints them; the http kind cannot "
                        "explain)")
    p.add_argument("--concurrency", type=integer(1, 1000), help="queries in flight (default: "
                   "the file's, else 4)")
    p.add_argument("--rps", type=number(0, open_low=True),
                   help="requests started per second at most")
    p.add_argument("--timeout", type=number(0, 86400, open_low=True),
                   help="seconds per request (default: the file's, else 10)")
    p.add_argument("--retries", type=integer(0, 100),
                   help="retries of a failed request (default 4)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the first query's rendered request and send nothing")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (bar on a terminal, a line every 10 s otherwise), no "
                        "summary line")
    p.set_defaults(handler=run)


def _client(args: argparse.Namespace) -> Any:
    from rankscope.services.snapshot_take import ClientOptions

    return ClientOptions(timeout=args.timeout, concurrency=args.concurrency, rps=args.rps,
                         max_retries=args.retries, keep_raw=args.keep_raw,
                         explain=args.explain)


def _taken(args: argparse.Namespace, job: Any, store: Any) -> Any:
    """The snapshot's outcome; a query that failed for good or an interruption is exit 3.

    What was answered before stays in the store (the snapshot is ``failed`` or
    ``incomplete``, and ``--resume`` completes it); no run file is written.
    ``store``: the open store of a resumed snapshot; else a new snapshot is
    recorded by a process of its own into ``--store`` (this process never
    imports the store: its requests keep their core).
    """
    from rankscope.errors import IncompleteError, SearchRequestError
    from rankscope.services.snapshot_take import take

    try:
        return take(job, store=store if store is not None else args.store, name=args.name,
                    depth=args.depth, client=_client(args), resume=args.resume)
    except SearchRequestError as exc:
        raise IncompleteError(str(exc)) from None
    except KeyboardInterrupt:
        where = ""
        if args.store:
            from rankscope.services.snapshot_store import interrupted_note, open_snapshot_store

            if store is not None:
                where = interrupted_note(store)
            else:
                with open_snapshot_store(args.store) as opened:
                    where = interrupted_note(opened)
        raise IncompleteError("interrupted" + where) from None


def run(args: argparse.Namespace) -> int:
    """Take the snapshot; returns the exit code."""
    from rankscope import progress
    from rankscope.cli.parsing import write_text
    from rankscope.errors import IncompleteError, OptionError
    from rankscope.services.snapshot_take import load_job, preview
    from rankscope.services.snapshots import run_lines, write_lines

    if args.quiet:
        progress.set_enabled(False)
    if not (args.output or args.store or args.dry_run):
        raise OptionError("say where to keep the snapshot: -o RUN (a TREC run) and/or "
                          "--store DB")
    if args.resume and not args.store:
        raise OptionError("--resume needs the --store the snapshot is in")
    if args.explain and not (args.store or args.dry_run):
        raise OptionError("--explain keeps the explanations in the store: give --store DB "
                          "(a run file has no place for them)")
    job = load_job(args.endpoint, args.queries)
    if args.dry_run:
        shown = preview(job, depth=args.depth, client=_client(args))
        write_text(args.output or "-", json.dumps(shown, indent=2, ensure_ascii=False) + "\n")
        return 0
    store = None
    if args.resume:
        from rankscope.services.snapshot_store import open_snapshot_store

        store = open_snapshot_store(args.store)
    try:
        if args.resume and store is not None:
            from rankscope.services.snapshot_store import check_resume

            check_resume(store, args.resume, depth=args.depth, name=args.name,
                         keep_raw=args.keep_raw)
        outcome = _taken(args, job, store)
        if store is not None and outcome.snapshot_id is not None:
            from rankscope.services.snapshot_store import stored_counts, stored_run_lines

            counts = stored_counts(store, outcome.snapshot_id)
            lines = (stored_run_lines(store, outcome.snapshot_id, outcome.depth, outcome.name,
                                      args.run_scores)
                     if args.output and outcome.resumed else None)
        else:
            counts = outcome.stored or outcome.counts()
            lines = None
    finally:
        if store is not None:
            store.close()
    if args.output and lines is None:
        lines = run_lines(outcome.responses, outcome.depth, outcome.name,
                          scores=args.run_scores)
    wrote = ""
    if args.output and lines is not None:
        write_lines(args.output, lines)
        if args.output != "-":
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
