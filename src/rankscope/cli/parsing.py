"""What every subcommand shares: "did you mean", one-line warnings, stdin rules, output.

:class:`Parser` is :class:`argparse.ArgumentParser` with a suggestion for a
mistyped option, subcommand or choice (``--per-qeury``: did you mean
``--per-query``?), its error first (``rankscope evaluate: error: ...``, then
the usage), and runnable examples at the end of its help (``examples=``).
Subparsers inherit the class. :func:`one_line_warnings` prints each
:class:`~rankscope.errors.RankscopeWarning` as one line on stderr
(``rankscope evaluate: warning: ...``) instead of Python's two-line form.
:func:`check_outputs` refuses an output that is one of the inputs, before
anything is read; :func:`write_text` writes a result (atomically).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, TextIO

__all__ = ["TIE_CHOICES", "Parser", "add_overlap_option", "add_ties_option", "check_outputs",
           "deprecated_alias", "one_line_warnings", "refuse_double_stdin", "write_text"]

TIE_CHOICES = ("trec", "input", "docid_asc")
"""The tie rules, as :data:`rankscope.data.ranking_order.TIE_RULES` (a test keeps them equal:
importing that module here would load numpy and polars for ``--help``)."""

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)$")
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_BAD_VALUE = re.compile(r"^argument [^:]+: (?!expected )")
"""A value the option does not take: the line says all (no usage after it)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors come first and suggest the closest option or value.

    ``examples``: command lines shown at the end of ``--help`` under
    "examples:" (a test runs them on the sample data).
    """

    _argv: list[str]

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def format_help(self) -> str:
        text = super().format_help()
        if self.examples:
            text += "\nexamples:\n" + "".join(f"  {line}\n" for line in self.examples)
        return text

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        found, extra = super().parse_known_args(args, namespace)
        if not hasattr(found, "_parser"):  # the innermost (sub)command's parser
            found._parser = self
        return found, extra

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        found, extra = self.parse_known_args(args, namespace)
        if extra:  # said by the subcommand that was given them, with its own usage
            where: Parser = getattr(found, "_parser", self)
            where.error(f"unrecognized arguments: {' '.join(extra)}")
        return found

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
        import difflib  # only for a usage error: not on every start-up

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
        if _BAD_VALUE.search(message):
            self.exit(2, f"{self.prog}: error: {message}{hint}\n")
        self.exit(2, f"{self.prog}: error: {message}{hint}\n{self.format_usage()}"
                     f"(see {self.prog} --help)\n")


def deprecated_alias(old: str, new: str, *, append: bool = False) -> type[argparse.Action]:
    """An action storing (``append``: appending) like ``new``'s, warning that ``old`` is
    deprecated."""
    base: type[argparse._StoreAction] | type[argparse._AppendAction] = (
        argparse._AppendAction if append else argparse._StoreAction)

    class Alias(base):  # type: ignore[valid-type,misc]
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
    """Write a command's output to a file (atomically: the whole text or nothing), or stdout
    for ``-``. A write the system refuses is an :class:`~rankscope.errors.OutputWriteError`
    (exit code 4)."""
    if path == "-":
        sys.stdout.write(text)
        return
    from rankscope.data._io import write_bytes

    write_bytes(path, text.encode("utf-8"))


def _paths(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output that would replace one of the inputs, or another output.

    The outputs are the options registered by
    :func:`rankscope.cli.options.add_output`; the inputs are every other value
    on the command line that names an existing file (standard input too,
    when an input is ``-`` and stdin is a file). The same file means the same
    file on disk, whatever the spelling: after links (symbolic or hard) are
    followed. Checked before anything is read or written (exit code 2), with
    an output whose directory does not exist (exit code 4, as when the write
    fails, but before the work).
    """
    import os

    from rankscope.errors import OptionError

    outputs: list[tuple[str, str, str]] = list(getattr(args, "_outputs", ()) or ())
    if not outputs:
        return
    given = [(flag, getattr(args, dest), kind) for dest, flag, kind in outputs
             if getattr(args, dest, None) not in (None, "-")]
    output_dests = {dest for dest, _, _ in outputs}
    inputs: list[str] = []
    for dest, value in vars(args).items():
        if dest.startswith("_") or dest in output_dests:
            continue
        inputs += _paths(value)
    seen: list[tuple[str, str, os.stat_result]] = []
    for flag, path, kind in given:
        try:
            mine = os.stat(path)
        except OSError:
            mine = None
        if mine is not None and kind == "file" and os.path.isdir(path):
            raise OptionError(f"{flag} {path}: is a directory; name a file")
        if mine is not None and kind == "dir" and not os.path.isdir(path):
            raise OptionError(f"{flag} {path}: exists and is not a directory")
        if mine is None:
            parent = os.path.dirname(os.path.abspath(path))
            if kind == "file" and not os.path.isdir(parent):  # said now, not after the work
                from rankscope.errors import OutputWriteError

                raise OutputWriteError(f"no such directory: {parent}", target=path)
            continue
        for other_flag, other, stat in seen:
            if os.path.samestat(mine, stat):
                raise OptionError(f"{flag} and {other_flag} name the same file ({path}, "
                                  f"{other}): give each output its own")
        seen.append((flag, path, mine))
        for source in inputs:
            if source == "-":
                try:
                    same = os.path.samestat(mine, os.fstat(sys.stdin.fileno()))
                except (OSError, ValueError, AttributeError):
                    same = False
                where = " (standard input)"
            else:
                try:
                    same = os.path.samefile(path, source)
                except (OSError, ValueError):
                    same = False
                where = "" if source == path else f" ({source}, the same file)"
            if same:
                raise OptionError(f"{flag} {path} is an input{where}: it would be "
                                  "overwritten; write the result to another file")
