"""``rankscope demo init DIR``: the bundled demo collection, ready to snapshot."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``demo`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="The demo collection that ships with rankscope: a corpus, queries, graded "
        "judgments and two embedded endpoints over the corpus (no server, no network).",
        examples=["rankscope demo init demo"])
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser(
        "init", help="write the demo collection to DIR",
        description="Write DIR/corpus.jsonl, DIR/queries.tsv, DIR/qrels.txt, "
        "DIR/endpoint.toml (an embedded endpoint: the baseline) and DIR/endpoint_tuned.toml "
        "(the tuned configuration), and DIR/clicks.csv (a click log simulated from the "
        "judgments). Then: rankscope snapshot DIR/endpoint.toml DIR/queries.tsv -o DIR/run.txt "
        "&& rankscope evaluate DIR/qrels.txt DIR/run.txt -m nDCG@10 -m P@5; and from the "
        "clicks: rankscope judgments implicit DIR/clicks.csv --model sdbn -o DIR/implicit.csv "
        "&& rankscope judgments agreement DIR/qrels.txt DIR/implicit.csv --scale graded",
        examples=["rankscope demo init demo",
                  "rankscope demo init demo --force && rankscope snapshot demo/endpoint.toml "
                  "demo/queries.tsv -o demo/run.txt"])
    init.add_argument("dir", help="the directory to write (created if needed)")
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the demo; returns the exit code."""
    from rankscope.services.demo import init_demo

    written = init_demo(args.dir, force=args.force)
    sys.stdout.write(f"wrote {len(written)} files to {args.dir}: "
                     + ", ".join(p.name for p in written) + "\n")
    if any(p.name == "clicks.csv" for p in written):
        d = args.dir
        sys.stdout.write(f"judgments from the clicks: rankscope judgments implicit "
                         f"{d}/clicks.csv --model sdbn -o {d}/implicit.csv && rankscope "
                         f"judgments agreement {d}/qrels.txt {d}/implicit.csv --scale graded\n")
    return 0
