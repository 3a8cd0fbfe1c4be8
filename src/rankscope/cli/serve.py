"""``rankscope serve [--db URL] [--host H] [--port P] [--demo]``: the judging web app.

The options of the trust boundary (see docs/web_app.md, "Security model")
say what a web user may make the server do: ``--files-dir`` (where the files
endpoints name must be), ``--allow-env`` / ``RANKSCOPE_ALLOW_ENV`` (the
environment variables endpoints and judges may name), ``--allow-hosts`` /
``RANKSCOPE_ALLOW_HOSTS`` (the non-public hosts they may reach), ``--irds``
(the ir_datasets collections curators may name as query sets and embedded
corpora) and ``--forwarded-allow-ips`` (the proxies whose ``X-Forwarded-For``
is believed).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["boundary_of", "open_app_store", "register", "run", "uvicorn_options"]

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
    p.add_argument("--data-dir", help="the app's own files (the LLM answer cache, the demo); "
                                      "default: the database file's directory")
    p.add_argument("--demo", action="store_true",
                   help="start with the demo collection: two embedded endpoints and one "
                        "evaluation ready to grade (no network); prints a login")
    boundary = p.add_argument_group(
        "what web users may make the server do",
        "A curator writes endpoints and attaches LLM judges; these options bound what the server "
        "then reads, sends and reaches (docs/web_app.md, \"Security model\"). The command line "
        "itself is not bound by them.")
    boundary.add_argument(
        "--files-dir", metavar="DIR",
        help="the only directory whose files an endpoint may name (a corpus, a template, the "
             "index it writes), as relative paths; never the database or the cache "
             "(default: --data-dir)")
    boundary.add_argument(
        "--allow-env", metavar="NAME[,NAME...]", action="append", default=[],
        help="environment variables endpoints (headers_env, params_env, auth) and LLM judges "
             "(api_key_env) may name; also RANKSCOPE_ALLOW_ENV (default: none)")
    boundary.add_argument(
        "--allow-hosts", metavar="HOST[,HOST...]", action="append", default=[],
        help="hosts, addresses and CIDR ranges endpoints, version URLs and LLM judges may "
             "reach besides public addresses, e.g. 10.0.0.0/8,es.internal,127.0.0.1 (allowing "
             "127.0.0.1 allows that address only); also RANKSCOPE_ALLOW_HOSTS (default: "
             "loopback, link-local, private, unique-local and metadata addresses are refused)")
    boundary.add_argument(
        "--irds", action="append", default=[], metavar="PATTERN",
        help="let curators use these ir_datasets collections (irds:NAME, read from this "
             "machine's ir_datasets cache, never downloaded) as query sets and embedded "
             "corpora; a name or a pattern such as 'beir/*' (repeatable; default none)")
    boundary.add_argument(
        "--forwarded-allow-ips", metavar="IP[,IP...]",
        default=os.environ.get("RANKSCOPE_FORWARDED_ALLOW_IPS"),
        help="proxies in front of the app whose X-Forwarded-For and X-Forwarded-Proto are "
             "believed (addresses or ranges, * for any); also RANKSCOPE_FORWARDED_ALLOW_IPS "
             "(default: none, the client is the connection's peer)")
    p.set_defaults(handler=run)


def open_app_store(db: str) -> Any:
    """The store for the app: SQLite through one writer thread, PostgreSQL inline.

    Text with a NUL and integers past 64 bits are refused (a 400) the same on
    both backends (:func:`rankscope.store.db.refuse_unstorable`).
    """
    from rankscope.store.db import (
        InlineWriter,
        ThreadWriter,
        open_store,
        refuse_unstorable,
        store_url,
    )

    url = store_url(db)
    writer = ThreadWriter() if url.startswith("sqlite") else InlineWriter()
    store = open_store(db, writer=writer)
    refuse_unstorable(store.engine)
    return store


def boundary_of(args: argparse.Namespace, store: Any, data_dir: Path) -> Any:
    """The server's :class:`~rankscope.services.boundary.Boundary` from its options and
    environment (``RANKSCOPE_ALLOW_ENV``, ``RANKSCOPE_ALLOW_HOSTS`` add to the options)."""
    from rankscope.services.boundary import Boundary

    return Boundary.for_server(
        store, data_dir, files_dir=args.files_dir,
        allow_env=[*args.allow_env, os.environ.get("RANKSCOPE_ALLOW_ENV")],
        allow_hosts=[*args.allow_hosts, os.environ.get("RANKSCOPE_ALLOW_HOSTS")],
        irds=args.irds)


def uvicorn_options(args: argparse.Namespace) -> dict[str, Any]:
    """What ``uvicorn.run`` is given: uvicorn's own proxy-header trust is off (by default it
    believes X-Forwarded-For from 127.0.0.1); the app trusts ``--forwarded-allow-ips`` only."""
    return {"host": args.host, "port": args.port, "log_level": "warning", "access_log": False,
            "proxy_headers": False, "server_header": False}


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code."""
    from rankscope.errors import OptionError

    try:
        import uvicorn

        from rankscope.app.factory import create_app
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
        boundary = boundary_of(args, store, data_dir)
        from rankscope.services.campaigns import recover_interrupted_runs

        for evaluation_id in recover_interrupted_runs(store):
            sys.stderr.write(f"note: evaluation #{evaluation_id} was running when the server "
                             "stopped; marked failed (run it again)\n")
        from rankscope.services.tries import recover_interrupted_tries

        for evaluation_id, number in recover_interrupted_tries(store):
            sys.stderr.write(f"note: try #{number} of evaluation #{evaluation_id} was running "
                             "when the server stopped; marked failed (run it again)\n")
        address = f"http://{args.host}:{args.port}/"
        if args.demo:
            from rankscope.services.accounts import list_users
            from rankscope.services.app_demo import setup_demo

            if list_users(store):
                raise OptionError(f"--demo needs a new database; {db} has users already")
            sys.stdout.write("setting up the demo (building the search index)...\n")
            sys.stdout.flush()
            login = setup_demo(store, boundary.files_dir / "demo", boundary=boundary)
            sys.stdout.write(
                f"demo ready: sign in at {address}login as {login.admin} / "
                f"{login.admin_password} (admin) or {login.judge} / {login.judge_password} "
                f"(judge); evaluation #{login.evaluation_id} is ready to grade\n"
                f"  #{login.baseline_id}: the baseline, graded by the shipped judgments; "
                f"#{login.tuned_id}: the tuned endpoint at depth 20, compared with it "
                "(its holes are to grade)\n")
        sys.stdout.write(f"rankscope serving {address} (database {db}; Ctrl-C stops)\n")
        sys.stdout.flush()
        for warning in _exposure_warnings(args, boundary):
            sys.stderr.write(f"warning: {warning}\n")
        app = create_app(store, data_dir, boundary=boundary,
                         forwarded_allow_ips=args.forwarded_allow_ips)
        uvicorn.run(app, **uvicorn_options(args))
    finally:
        store.close()
    return 0


def _exposure_warnings(args: argparse.Namespace, boundary: Any) -> list[str]:
    """What an operator should know about the boundary they set (printed, never fatal)."""
    out = []
    for net in boundary.hosts.networks:
        if net.prefixlen == 0:
            out.append(f"--allow-hosts {net} lets web users reach every address of its family, "
                       "this machine's included")
    if args.forwarded_allow_ips and args.forwarded_allow_ips.strip() == "*":
        out.append("--forwarded-allow-ips '*' believes X-Forwarded-For from any client: use it "
                   "only when the app is reachable through the proxy alone")
    return out
