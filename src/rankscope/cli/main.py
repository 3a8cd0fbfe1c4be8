"""Entry point of the ``rankscope`` command.

Each subcommand lives in its own module exposing ``register(subparsers)``;
modules are imported lazily so ``rankscope --help`` answers fast. Every
failure becomes one line on stderr and an exit code of the one scheme in
:mod:`rankscope.cli.exit_codes` (2 for bad input, 3 for incomplete work, 4 for
an output that could not be written, 70 for an internal error, whose
traceback only ``--debug`` prints).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["COMMANDS", "ONE_SHOT", "main"]

ONE_SHOT = frozenset({"trec_eval", "evaluate", "compare", "report"})
"""Commands that evaluate once and end: their process runs without the cycle collector,
and, run from the real command line, exits without the interpreter's teardown once its
output is written (:func:`_leave`). ``report`` among them: its page and figure files are
written and closed before it returns (the collector's passes and the teardown were 0.15 s
of the 1.1 s of CPU of a report on 17 TREC runs)."""

# subcommand -> (module, one-line help). Add a line here to add a command.
COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("rankscope.cli.evaluate", "evaluate runs against qrels"),
    "metrics": ("rankscope.cli.metrics_list", "list every metric, its aliases and formula"),
    "explain-differences": ("rankscope.cli.explain", "which numbers a tool's conventions "
                            "change, and why"),
    "trec_eval": ("rankscope.cli.trec_eval", "drop-in replacement for trec_eval 10.0"),
    "compare": ("rankscope.cli.compare", "compare runs with significance tests"),
    "similarity": ("rankscope.cli.similarity", "rank similarity between two runs (RBO, ...)"),
    "fuse": ("rankscope.cli.fuse", "fuse several runs into one (RRF, CombSUM, ...)"),
    "report": ("rankscope.cli.report", "write a self-contained HTML report"),
    "judgments": ("rankscope.cli.judgments", "aggregate, transform, check agreement of judgments; "
                  "judgments from clicks"),
    "coverage": ("rankscope.cli.coverage", "share of top-k results that are graded"),
    "judge": ("rankscope.cli.judge", "grade results with an LLM; its agreement with humans"),
    "snapshot": ("rankscope.cli.snapshot", "run a query set against a search endpoint, keep "
                 "the results"),
    "snapshots": ("rankscope.cli.snapshots", "list, show, export, diff, compare snapshots; "
                  "find holes"),
    "sweep": ("rankscope.cli.sweep", "run an endpoint over a grid of settings, rank the "
              "configurations"),
    "check": ("rankscope.cli.check", "CI regression check: is a run worse than its baseline?"),
    "demo": ("rankscope.cli.demo", "write the bundled demo collection to a directory"),
    "sample-data": ("rankscope.cli.sample_data", "copy the bundled sample qrels and runs"),
    "serve": ("rankscope.cli.serve", "serve the judging web app (grading, dashboards, API)"),
    "user": ("rankscope.cli.user", "add users of the judging app; make API tokens"),
    "completion": ("rankscope.cli.completion", "print a shell completion script (bash, zsh, "
                   "fish)"),
}

EXIT_USAGE = 2  # the same value as rankscope.cli.exit_codes.EXIT_USAGE, without importing it
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS,
                           errno.EBADF})
"""What a write to standard output fails with when it cannot be written (``> /dev/full``)."""


def _available() -> dict[str, tuple[str, str]]:
    from importlib.util import find_spec

    return {name: spec for name, spec in COMMANDS.items() if find_spec(spec[0]) is not None}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; with ``only``, import just that subcommand's module."""
    from rankscope._version import __version__
    from rankscope.cli.parsing import Parser

    parser = Parser(
        prog="rankscope",
        description="Measure the quality of search rankings.",
    )
    parser.add_argument("--version", action="version", version=f"rankscope {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in _available().items():
        if only is None or only == name:
            importlib.import_module(module).register(sub, name, help_text)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _typed_command(parser: argparse.ArgumentParser, words: Sequence[str]) -> str:
    """The subcommands named in ``words`` ("snapshots compare"), for messages given while
    parsing (before the parsed arguments can say it)."""
    path: list[str] = []
    for word in words:
        if word.startswith("-"):
            continue
        sub = next((a for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or word not in sub.choices:
            break
        path.append(word)
        parser = sub.choices[word]
    return " ".join(path)


def _leave(status: int) -> NoReturn:
    """Exit at once, output flushed, skipping the interpreter's teardown.

    Freeing a large evaluation's arrays object by object, and unloading
    numpy, polars and scipy, takes 0.1-0.2 s of CPU (``compare`` on 17 TREC
    runs: 0.1 s of its 1.1 s) that a drop-in for a C program should not
    spend; the system reclaims the memory anyway. Only for commands that
    hold no resource needing cleanup (:data:`ONE_SHOT`: their outputs are
    written and closed, their reading threads joined, before they return).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: no complaint, as C
            stream.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from rankscope.errors import RankscopeError

    args_list = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args_list and not args_list[0].startswith("-"):
        from rankscope.cli.process import prepare_process

        prepare_process(args_list)  # a command runs in this process (rankscope.cli.process)
        if args_list[0] in ONE_SHOT:
            # importing and evaluating allocate hundreds of thousands of objects and make
            # no reference cycles worth collecting before the process ends: the collector's
            # passes over them (a hundred while importing alone) are wasted
            gc.disable()
    if args_list and args_list[0] == "trec_eval" and "trec_eval" in _available():
        # trec_eval has its own option syntax (-mndcg_cut.10 -q ...): hand it the rest.
        module = importlib.import_module(COMMANDS["trec_eval"][0])
        status = int(module.run(args_list[1:]))
        if argv is None:  # the real command line: nothing is left to clean up
            _leave(status)
        return status
    command = next((a for a in args_list if not a.startswith("-")), None)
    # Without a known command only the one-line help texts are needed: import no command's
    # module ("" matches none), so `rankscope --help` stays fast.
    parser = build_parser(command if command in COMMANDS else "")
    from rankscope.cli.parsing import one_line_warnings

    try:  # a deprecated option warns here, under the (sub)command as typed
        with one_line_warnings(_typed_command(parser, args_list) or command or "rankscope"):
            args = parser.parse_args(args_list)
    except SystemExit as stop:  # a usage error (2, said already), --help or --version (0)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from rankscope.errors import command_line_spelling

    # the (sub)command as typed, for messages: "judgments agreement", not "judgments"
    name = getattr(args, "_parser", parser).prog.removeprefix("rankscope ") or args.command
    try:
        with one_line_warnings(name), command_line_spelling():
            from rankscope.cli.parsing import check_outputs

            check_outputs(args)  # no output may replace an input: before anything is read
            status = int(args.handler(args))
            sys.stdout.flush()  # a full disk is said here, not at exit
            if (argv is None and args.command in ONE_SHOT
                    and getattr(args, "engine", "local") == "local"):  # Spark: its session
                _leave(status)  # the output is written; nothing else is left to clean up
            return status
    except RankscopeError as exc:
        from rankscope.cli.exit_codes import code_for

        sys.stderr.write(f"rankscope {name}: error: {exc}\n")
        return code_for(exc)
    except BrokenPipeError:
        if argv is None:
            _drop_stdout()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except OSError as exc:
        if exc.filename is None and exc.errno in _WRITE_ERRNOS:  # standard output refused
            from rankscope.cli.exit_codes import EXIT_OUTPUT

            if argv is None:
                _drop_stdout()
            sys.stderr.write(f"rankscope {name}: error: cannot write <stdout>: "
                             f"{exc.strerror or exc}\n")
            return EXIT_OUTPUT
        return _internal(name, args, exc)
    except Exception as exc:  # a defect of rankscope's, not the user's: say so in one line
        return _internal(name, args, exc)


def _internal(name: str, args: argparse.Namespace, exc: BaseException) -> int:
    """An internal error: one line (and the traceback with --debug); exit code 70."""
    from rankscope.cli.exit_codes import EXIT_INTERNAL

    sys.stderr.write(f"rankscope {name}: internal error: "
                     f"{type(exc).__name__}: {exc} (run with --debug for the traceback)\n")
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exception(exc)
    return EXIT_INTERNAL


def _drop_stdout() -> None:
    """Point the real stdout at /dev/null (what it buffers cannot be written), so that the
    interpreter's own flush at exit does not fail again with a second message."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

if __name__ == "__main__":
    sys.exit(main())
