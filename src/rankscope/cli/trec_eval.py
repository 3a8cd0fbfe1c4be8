"""``rankscope trec_eval``: a drop-in replacement for trec_eval 10.0.

trec_eval has its own option syntax (``-mndcg_cut.10 -q -l2 ...``), so
:mod:`rankscope.cli.main` hands it the raw arguments and :func:`run` parses
them the way trec_eval does (see :mod:`rankscope.trec_eval.command`).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """List ``trec_eval`` among the subcommands (its arguments are trec_eval's own)."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, add_help=False,
        description="Run exactly like trec_eval 10.0: rankscope trec_eval [-q] [-m measure] "
        "... rel_info_file results_file (see rankscope trec_eval -h).",
    )
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(handler=_from_namespace)


def _from_namespace(args: argparse.Namespace) -> int:
    return run(list(args.args))


def run(argv: list[str]) -> int:
    """Run trec_eval's command line ``argv`` (without the program name)."""
    from rankscope.trec_eval.command import run as run_trec_eval

    return run_trec_eval(list(argv))
