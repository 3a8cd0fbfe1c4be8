"""``rankscope serve [--db URL] [--host H] [--port P] [--demo]``: the judging web app.

The options of the trust boundary (see docs/web_app.md, "Security model")
say what a web user may make the server do: ``--files-dir`` (where the files
endpoints name must be), ``--allow-env`` / ``RANKSCOPE_ALLOW_ENV`` (the
environment variables endpoints and judges may name), ``--allow-hosts`` /
``RANKSCOPE_ALLOW_HOSTS`` (the non-public hosts they may reach), ``--irds``
(the ir_datasets collections curators may name as query sets and embedded
corpora) and ``--forwarded-allow-ips`` (the proxies whose ``X-Forwarded-For``
is believed). The command only reads them: the app server module
(:mod:`rankscope.app.server`) owns what a server does with them.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["register", "run", "settings_of"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``serve`` subcommand."""
    from rankscope.cli.options import integer

    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Serve the judging web app: a team grades search results together and "
        "watches the metrics move (pages at /, a JSON API at /api/v1, its description at "
        "/api/docs). SQLite by default (one file; every write through one writer thread), "
        "PostgreSQL with --db postgresql+psycopg://USER@HOST/DB. Needs the app extra.",
        examples=["rankscope serve --demo",
                  "rankscope serve --db team.sqlite --host 0.0.0.0 --port 8080 --files-dir "
                  "collections"])
    p.add_argument("--db", help="database file or URL (default rankscope.sqlite; with --demo "
                                "a new one in a temporary directory)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                                                       "127.0.0.1: this machine only)")
    p.add_argument("--port", type=integer(1, 65535), default=8000, help="port (default 8000)")
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


def settings_of(args: argparse.Namespace) -> Any:
    """The :class:`~rankscope.app.server.ServerSettings` the options say."""
    from rankscope.app.server import ServerSettings

    return ServerSettings(db=args.db, host=args.host, port=args.port, data_dir=args.data_dir,
                          demo=args.demo, files_dir=args.files_dir,
                          allow_env=tuple(args.allow_env), allow_hosts=tuple(args.allow_hosts),
                          irds=tuple(args.irds), forwarded_allow_ips=args.forwarded_allow_ips)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (:func:`rankscope.app.server.serve`); returns the exit code."""
    try:
        from rankscope.app.server import serve
    except ImportError as exc:
        from rankscope.errors import DependencyError

        raise DependencyError(exc.name or "fastapi", "app", "rankscope serve") from None

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def warn(text: str) -> None:
        sys.stderr.write(text + "\n")

    serve(settings_of(args), say=say, warn=warn)
    return 0
