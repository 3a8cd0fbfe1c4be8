"""What every subcommand shares: "did you mean", one-line warnings, stdin rules, output.

:class:`Parser` is :class:`argparse.ArgumentParser` with a suggestion for a
mistyped option, subcommand or choice (``--per-qeury``: did you mean
``--per-query``?). Subparsers inherit the class. :func:`one_line_warnings`
prints each :class:`~rankscope.errors.RankscopeWarning` as one line on stderr
(``rankscope evaluate: warning: ...``) instead of Python's two-line form.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, TextIO

__all__ = ["TIE_CHOICES", "Parser", "add_overlap_option", "add_ties_option", "deprecated_alias",
           "one_line_warnings", "refuse_double_stdin", "write_text"]

TIE_CHOICES = ("trec", "input", "docid_asc")
"""The tie rules, as :data:`rankscope.data.ranking_order.TIE_RULES` (a test keeps them equal:
importing that module here would load numpy and polars for ``--help``)."""

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)$")
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors suggest the closest known option or value."""

    _argv: list[str]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _option_strings(self) -> list[str]:
        """Every option of this parser and of the subcommand named on the command line."""
        found: list[str] = []
        argv = getattr(self, "_argv", [])
        for action in self._actions:
            found += [s for s in action.option_strings if s.startswith("--")]
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if name in argv and isinstance(sub, Parser):
                        sub._argv = argv
                        found += sub._option_strings()
        return found

    def error(self, message: str) -> NoReturn:
        """Print usage and the error, with a "did you mean" where one is close."""
        hint = ""
        unknown = _UNRECOGNIZED.search(message)
        if unknown:
            options = self._option_strings()
            for word in unknown.group(1).split():
                name = word.split("=", 1)[0]
                if name.startswith("-"):
                    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
                    if close:
                        hint = f"; did you mean {close[0]}?"
                        break
        choice = _INVALID_CHOICE.search(message)
        if choice:
            allowed = [c.strip().strip("'") for c in choice.group(2).split(",")]
            close = difflib.get_close_matches(choice.group(1), allowed, n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {close[0]!r}?"
        super().error(message + hint)


def deprecated_alias(old: str, new: str) -> type[argparse.Action]:
    """An action storing like ``new``'s and warning that ``old`` is deprecated."""

    class Alias(argparse._StoreAction):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                     values: Any, option_string: str | None = None) -> None:
            from rankscope.errors import RankscopeWarning

            warnings.warn(f"{old} is deprecated here, use {new}", RankscopeWarning,
                          stacklevel=2)
            super().__call__(parser, namespace, values, option_string)

    return Alias


@contextlib.contextmanager
def one_line_warnings(command: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show RankscopeWarnings as ``rankscope COMMAND: warning: ...`` lines (each once)."""
    from rankscope.errors import RankscopeWarning

    original = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        if issubclass(category, RankscopeWarning):
            (stream or sys.stderr).write(f"rankscope {command}: warning: {message}\n")
        else:
            original(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("default", RankscopeWarning)
        warnings.showwarning = show
        yield


def refuse_double_stdin(*paths: str | None) -> None:
    """Only one input can be read from stdin (``-``)."""
    from rankscope.errors import OptionError

    if sum(1 for p in paths if p == "-") > 1:
        raise OptionError("only one input can come from stdin (-); give the others as files")


def add_overlap_option(p: Any) -> None:
    """``--allow-no-overlap``: go on when the inputs share no query."""
    p.add_argument("--allow-no-overlap", action="store_true",
                   help="go on when the inputs share no query (Q1 vs q1, an empty file; by "
                        "default an error, as every score would be a meaningless 0)")


def add_ties_option(p: Any, *, default: str | None = "trec", what: str = "") -> None:
    """``--ties``: how equal scores are ordered, the same rule in every command."""
    shown = " (the default)" if default == "trec" else ""
    p.add_argument("--ties", choices=TIE_CHOICES, default=default,
                   help=f"{what}score ties: document id descending (trec{shown}, as trec_eval), "
                        "input order, or document id ascending")


def write_text(path: str, text: str) -> None:
    """Write a command's output to a file, or stdout for ``-``."""
    if path == "-":
        sys.stdout.write(text)
        return
    from rankscope.data._io import write_bytes

    write_bytes(path, text.encode("utf-8"))
