"""``rankscope sample-data [DIR]``: copy the bundled sample qrels and runs, to try commands on."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]

FILES = ("qrels.txt", "run_a.txt", "run_b.txt")


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``sample-data`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Copy the sample data shipped with rankscope (50 TREC-style topics with "
        "graded judgments, a BM25 run and a re-ranked run) into DIR, to try every command on. "
        "Existing files are never overwritten.",
        examples=["rankscope sample-data",
                  "rankscope sample-data my-sample && rankscope evaluate my-sample/qrels.txt "
                  "my-sample/run_a.txt -m nDCG@10"],
    )
    p.add_argument("directory", nargs="?", default="rankscope-sample",
                   help="where to put qrels.txt, run_a.txt and run_b.txt (rankscope-sample)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Copy the files; refuse to overwrite any. Returns the exit code."""
    from importlib.resources import files
    from pathlib import Path

    from rankscope.data._io import write_bytes
    from rankscope.errors import FileAccessError, OutputWriteError

    target = Path(args.directory)
    for name in FILES:
        if (target / name).exists() or (target / name).is_symlink():
            raise FileAccessError("exists already; not overwritten", source=str(target / name))
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(f"cannot create the directory: {exc.strerror or exc}",
                               target=str(target)) from None
    source = files("rankscope") / "sample_data"
    for name in FILES:
        write_bytes(target / name, (source / name).read_bytes())
    sys.stdout.write(f"wrote {', '.join(str(target / n) for n in FILES)}\n")
    return 0
