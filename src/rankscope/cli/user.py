"""``rankscope user add NAME --role ROLE`` and ``rankscope user token NAME``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``user`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description="Manage the judging app's users (needs the app "
        "extra).",
        examples=["printf 'secret-pass\\n' | rankscope user add ann --role admin --db "
                  "team.sqlite",
                  "rankscope user token ann --db team.sqlite --label ci"])
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add", help="add a user; the password is read from standard input (one line) or "
        "asked for on a terminal",
        description="Add a user of the judging app with a role (admin, curator or judge). "
        "The password is read from standard input (one line) or asked twice on a terminal. "
        "The database is created if it does not exist (the first admin).",
        examples=["printf 'secret-pass\\n' | rankscope user add ann --role admin --db "
                  "team.sqlite"])
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=("admin", "curator", "judge"))
    add.add_argument("--db", default="rankscope.sqlite", help="database file or URL")
    add.set_defaults(handler=run)
    token = actions.add_parser(
        "token", help="print a new API token for a user (send it as Authorization: Bearer "
        "TOKEN)",
        description="Print a new API token for an existing user of the database (which must "
        "exist: it is never created here). Send it as Authorization: Bearer TOKEN.",
        examples=["rankscope user token ann --db team.sqlite --label ci"])
    token.add_argument("name")
    token.add_argument("--label", default="api", help="what the token is for (listed in the "
                                                      "users page)")
    token.add_argument("--db", default="rankscope.sqlite", help="database file or URL")
    token.set_defaults(handler=run)


def _password() -> str:
    from rankscope.errors import OptionError

    if not sys.stdin.isatty():
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise OptionError("no password on standard input")
        return line
    import getpass

    first = getpass.getpass("password: ")
    if first != getpass.getpass("again: "):
        raise OptionError("the two passwords differ")
    return first


def run(args: argparse.Namespace) -> int:
    """Add a user or make a token; returns the exit code."""
    from rankscope.services import accounts, sessions
    from rankscope.services.database import open_database

    try:
        import argon2  # noqa: F401
    except ImportError:
        from rankscope.errors import DependencyError

        raise DependencyError("argon2-cffi", "app", "rankscope user") from None
    password = _password() if args.action == "add" else None  # before the database
    store = open_database(args.db, create=args.action == "add")
    try:
        if args.action == "add":
            actor = accounts.create_user(store, args.name, args.role, str(password))
            sys.stdout.write(f"added {actor.role} {actor.name}\n")
        else:
            sys.stdout.write(sessions.create_token(store, args.name, args.label) + "\n")
    finally:
        store.close()
    return 0
