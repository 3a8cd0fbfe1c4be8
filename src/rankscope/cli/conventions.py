"""The evaluation options every evaluating subcommand shares, ``--conventions`` among them.

``--ties``, ``--unjudged``, ``--queries`` and ``--scores`` default to "not
given": rankscope's defaults (trec_eval's), or those of the profile named by
``--conventions``; given explicitly, they win over the profile.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["CONVENTIONS", "add_conventions_option", "add_evaluation_conventions",
           "option_fields"]

CONVENTIONS = ("trec_eval", "pytrec_eval", "ir_measures", "ranx", "sklearn", "quepid")
"""The profiles' names (kept here so that ``--help`` imports nothing; a test checks them)."""

_CONVENTIONS_HELP = ("read metric names, tie rules, score precision and the query policy as "
                     "this tool does, to get its numbers (docs/conventions.md); --ties, "
                     "--unjudged, --queries, --scores given too win")


def add_conventions_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--conventions TOOL``."""
    p.add_argument("--conventions", choices=CONVENTIONS, metavar="TOOL",
                   help=f"{{{','.join(CONVENTIONS)}}}: {_CONVENTIONS_HELP}")


def add_evaluation_conventions(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, *, queries_help: str = ""
) -> None:
    """``--ties``, ``--unjudged``, ``--queries``, ``--scores`` and ``--conventions``."""
    from rankscope.cli.parsing import add_ties_option

    add_ties_option(p, default=None)
    p.add_argument("--unjudged", choices=("nonrelevant", "condensed", "null"),
                   help="how unjudged documents count (default nonrelevant)")
    p.add_argument("--queries", choices=("qrels", "intersection", "nonnull", "zero"),
                   help="which queries are averaged (default qrels: every query with "
                        "judgments, a missing one as an empty ranking; zero: a missing one "
                        "scores 0)" + (f"; {queries_help}" if queries_help else ""))
    p.add_argument("--scores", choices=("float64", "float32"),
                   help="precision scores are read at (float32 as pytrec_eval; default "
                        "float64)")
    add_conventions_option(p)


def option_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation option fields given on the command line (the others stay unset)."""
    names = ("ties", "unjudged", "queries", "scores", "conventions", "on_duplicate")
    return {name: getattr(args, name) for name in names
            if getattr(args, name, None) is not None}
