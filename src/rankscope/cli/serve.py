"""``rankscope serve [--db URL] [--host H] [--port P] [--demo]``: the judging web app."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["open_app_store", "register", "run"]

DEFAULT_DB = "rankscope.sqlite"


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``serve`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Serve the judging web app: a team grades search results together and "
        "watches the metrics move (pages at /, a JSON API at /api/v1, its description at "
        "/api/docs). SQLite by default (one file; every write through one writer thread), "
        "PostgreSQL with --db postgresql+psycopg://USER@HOST/DB. Needs the app extra.")
    p.add_argument("--db", help=f"database file or URL (default {DEFAULT_DB}; with --demo a "
                                "new one in a temporary directory)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                                                       "127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--data-dir", help="where endpoints' relative paths start (an embedded "
                                      "corpus); default: the database file's directory")
    p.add_argument("--irds", action="append", default=[], metavar="PATTERN",
                   help="let curators use these ir_datasets collections (irds:NAME, read from "
                        "this machine's ir_datasets cache, never downloaded) as query sets and "
                        "embedded corpora; a name or a pattern such as 'beir/*' (repeatable; "
                        "default none)")
    p.add_argument("--demo", action="store_true",
                   help="start with the demo collection: two embedded endpoints and one "
                        "evaluation ready to grade (no network); prints a login")
    p.set_defaults(handler=run)


def open_app_store(db: str) -> Any:
    """The store for the app: SQLite through one writer thread, PostgreSQL inline."""
    from rankscope.store.db import InlineWriter, ThreadWriter, open_store, store_url

    url = store_url(db)
    writer = ThreadWriter() if url.startswith("sqlite") else InlineWriter()
    return open_store(db, writer=writer)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code."""
    from rankscope.errors import OptionError

    try:
        import uvicorn

        from rankscope.app.core import create_app
    except ImportError as exc:
        from rankscope.errors import DependencyError

        raise DependencyError(exc.name or "fastapi", "app", "rankscope serve") from None
    if not 0 < args.port < 65536:
        raise OptionError(f"--port must be 1 to 65535, not {args.port}")
    db = args.db
    if args.demo and db is None:
        import tempfile

        db = str(Path(tempfile.mkdtemp(prefix="rankscope-demo-")) / "demo.sqlite")
    db = db or DEFAULT_DB
    if "://" not in db:
        data_dir = Path(args.data_dir or Path(db).resolve().parent)
    else:
        data_dir = Path(args.data_dir or Path.cwd())
    store = open_app_store(db)
    try:
        from rankscope.services.evaluations import recover_interrupted_runs

        for evaluation_id in recover_interrupted_runs(store):
            sys.stderr.write(f"note: evaluation #{evaluation_id} was running when the server "
                             "stopped; marked failed (run it again)\n")
        address = f"http://{args.host}:{args.port}/"
        if args.demo:
            from rankscope.services.accounts import list_users
            from rankscope.services.app_demo import setup_demo

            if list_users(store):
                raise OptionError(f"--demo needs a new database; {db} has users already")
            sys.stdout.write("setting up the demo (building the search index)...\n")
            sys.stdout.flush()
            login = setup_demo(store, data_dir / "demo")
            sys.stdout.write(
                f"demo ready: sign in at {address}login as {login.admin} / "
                f"{login.admin_password} (admin) or {login.judge} / {login.judge_password} "
                f"(judge); evaluation #{login.evaluation_id} is ready to grade\n"
                f"  #{login.baseline_id}: the baseline, graded by the shipped judgments; "
                f"#{login.tuned_id}: the tuned endpoint at depth 20, compared with it "
                "(its holes are to grade)\n")
        sys.stdout.write(f"rankscope serving {address} (database {db}; Ctrl-C stops)\n")
        sys.stdout.flush()
        uvicorn.run(create_app(store, data_dir, irds=args.irds), host=args.host, port=args.port,
                    log_level="warning", access_log=False)
    finally:
        store.close()
    return 0
