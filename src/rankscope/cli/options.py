"""The options every subcommand shares, spelled once, and the checks of their values.

One vocabulary (docs/command_line.md lists it):

==========================  ===================================================
``-o``, ``--output FILE``   where the result goes (``-`` = stdout); never one of
                            the inputs (:func:`rankscope.cli.parsing.check_outputs`)
``-f``, ``--format FORM``   the output's form: ``table`` for people (``text`` is
                            its deprecated spelling), ``json``, ``csv``, ``tsv``,
                            ``markdown``; a data file's format where the result
                            is a data file (``trec``, ``jsonl``, ``parquet``...)
``--qrels-format``,         the inputs' formats (default: from their names; a
``--run-format``,           stdin input is TREC unless named)
``--input-format``
``--qrels QRELS``           qrels where they are not the command's main input
                            (where they are, they come first, positional)
``--store DB``              the snapshot store (default ``$RANKSCOPE_STORE``)
==========================  ===================================================

Numbers are checked when the command line is read, before any file is:
:func:`integer`, :data:`CUTOFF`, :data:`SEED`, :func:`number`; URLs by
:func:`url`. A value out of range is a usage error (exit 2) naming the
option, the range and the value.

Every helper here imports nothing beyond the standard library, so that
``rankscope --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "CUTOFF",
    "DATA_FORMATS",
    "MAX_CUTOFF",
    "SEED",
    "add_data_format",
    "add_digits",
    "add_format",
    "add_input_formats",
    "add_output",
    "add_store",
    "integer",
    "number",
    "url",
]

DATA_FORMATS = ("trec", "csv", "tsv", "jsonl", "json", "parquet")
"""The forms of a data file (qrels, a run, judgments): ``--format`` where one is written."""

MAX_CUTOFF = 2**31 - 1
"""The largest cut-off or depth any command takes (as a metric's ``@k``)."""

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``[low, high]`` (either end open when None).

    Examples
    --------
    >>> integer(1)("3")
    3
    >>> integer(1)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a whole number >= 1, not '0'
    """
    if low is not None and high is not None:
        rule = f"from {low} to {high}"
    elif low is not None:
        rule = f">= {low}"
    elif high is not None:
        rule = f"<= {high}"
    else:
        rule = ""

    def check(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or (low is not None and value < low) or (
                high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"must be a whole number{' ' + rule if rule else ''}, not {text!r}")
        return value

    check.__name__ = "integer"
    return check


CUTOFF = integer(1, MAX_CUTOFF)
"""A cut-off or depth: 1 to 2^31 - 1, as a metric's ``@k``."""

SEED = integer(0, 2**32 - 1)
"""A random seed: 0 to 2^32 - 1 (what numpy's generators take)."""


def number(low: float | None = None, high: float | None = None, *, open_low: bool = False,
           open_high: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in a range (``open_*``: the end excluded).

    Examples
    --------
    >>> number(0, 1, open_low=True, open_high=True)("0.05")
    0.05
    >>> number(0, 1, open_low=True, open_high=True)("1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a number > 0 and < 1, not '1'
    """
    parts = []
    if low is not None:
        parts.append(f"{'>' if open_low else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if open_high else '<='} {high:g}")
    rule = " and ".join(parts)

    def check(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            value = math.nan
        bad = not math.isfinite(value)
        if low is not None and (value < low or (open_low and value == low)):
            bad = True
        if high is not None and (value > high or (open_high and value == high)):
            bad = True
        if bad:
            raise argparse.ArgumentTypeError(
                f"must be a {'finite ' if not rule else ''}number{' ' + rule if rule else ''}, "
                f"not {text!r}")
        return value

    check.__name__ = "number"
    return check


def url(text: str) -> str:
    """An argparse ``type``: an http(s) URL with a host.

    Examples
    --------
    >>> url("http://127.0.0.1:8080/v1")
    'http://127.0.0.1:8080/v1'
    >>> url("notaurl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an http(s) URL such as ..., not 'notaurl'
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # a port that is not a number raises
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(
            f"must be an http(s) URL such as http://127.0.0.1:8080/v1, not {text!r}")
    return text.strip()


def _register(p: Parser, key: str, item: tuple[str, ...]) -> None:
    """Remember an option's role on the (sub)command's parser (read by check_outputs)."""
    # an argument group shares its parser's defaults; a mutually exclusive group
    # names its container
    target: Any = p
    while isinstance(target, argparse._MutuallyExclusiveGroup):
        target = target._container
    known = tuple(target.get_default(key) or ())
    target.set_defaults(**{key: (*known, item)})


def add_output(p: Parser, *flags: str, dest: str = "output", default: str | None = "-",
               required: bool = False, help: str | None = None, metavar: str = "FILE",
               directory: bool = False) -> None:
    """``-o``/``--output FILE`` (or the ``flags`` given): an output, never one of the inputs.

    ``directory``: the option names a directory the command writes files into.
    """
    flags = flags or ("-o", "--output")
    text = help or ("write the result here (- = stdout, the default)" if default == "-"
                    else "write the result here (- = stdout)")
    p.add_argument(*flags, dest=dest, default=default, required=required, metavar=metavar,
                   help=text)
    _register(p, "_outputs", (dest, flags[-1], "dir" if directory else "file"))


class _Format(argparse.Action):
    """``-f``/``--format``: ``text``, where ``table`` is the name, warns and means ``table``."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if values == "text" and "table" in (self.choices or ()):
            import warnings

            from rankscope.errors import RankscopeWarning

            warnings.warn(f"{option_string} text is deprecated, use {option_string} table",
                          RankscopeWarning, stacklevel=2)
            values = "table"
        setattr(namespace, self.dest, values)


class _FormatChoices(tuple[str, ...]):
    """The choices of ``--format``, taking the deprecated ``text`` for ``table`` too."""

    def __contains__(self, value: object) -> bool:
        return super().__contains__(value) or (value == "text"
                                               and super().__contains__("table"))


def add_format(p: Parser, choices: Sequence[str] | None, default: str | None = "table",
               help: str | None = None, dest: str = "format") -> None:
    """``-f``/``--format FORM``: the output's form, from ``choices`` (None: any, checked later).

    ``table`` is the form for people in every command (``text``, its old name
    in some, still works and warns).
    """
    shown = f" (default {default})" if default else ""
    kwargs: dict[str, Any] = {"dest": dest, "default": default, "action": _Format,
                              "help": (help or "the output's form") + shown}
    if choices is not None:
        kwargs["choices"] = _FormatChoices(choices)
        kwargs["metavar"] = "{" + ",".join(choices) + "}"
    p.add_argument("-f", "--format", **kwargs)


def add_input_formats(p: Parser, *, qrels: bool = True, runs: bool = True,
                      inputs: str | None = None) -> None:
    """``--qrels-format``, ``--run-format`` (and ``--input-format`` naming ``inputs``)."""
    if qrels:
        p.add_argument("--qrels-format", metavar="FORMAT",
                       help="format of the qrels (trec, csv, tsv, json, jsonl, parquet; "
                            "default: from the name, TREC for stdin)")
    if runs:
        p.add_argument("--run-format", metavar="FORMAT",
                       help="format of the runs (trec, csv, tsv, json, jsonl, parquet; "
                            "default: from their names, TREC for stdin)")
    if inputs:
        p.add_argument("--input-format", metavar="FORMAT",
                       help=f"format of the {inputs} (default: from their names, TREC for "
                            "stdin)")


def add_store(p: Parser, *, required: bool = True, help: str | None = None) -> None:
    """``--store DB``: the snapshot store, a SQLite file or a database URL.

    Default ``$RANKSCOPE_STORE``; ``required``: the command needs one (given
    here or in the environment). A store a command only reads must exist
    (the services open it without creating it).
    """
    text = help or "the snapshot store: a SQLite file or a database URL"
    p.add_argument("--store", metavar="DB", default=os.environ.get("RANKSCOPE_STORE"),
                   required=required and not os.environ.get("RANKSCOPE_STORE"),
                   help=f"{text} (default: $RANKSCOPE_STORE)")


def add_digits(p: Parser, help: str | None = None) -> None:
    """``--digits N``: decimals of the numbers written (0 to 17)."""
    p.add_argument("--digits", type=integer(0, 17), metavar="N",
                   help=help or "decimals of every number written (default: 4 in tables; in "
                                "CSV and TSV 15 significant digits, without a float's last-bit "
                                "noise; JSON exact)")


def add_data_format(p: Parser, what: str, *, old: str | None = "--output-format") -> None:
    """``-f``/``--format`` of a data file written (``old``: its deprecated name, hidden)."""
    from rankscope.cli.parsing import deprecated_alias

    add_format(p, DATA_FORMATS, default=None,
               help=f"the output's format: {what}; default: from the output's name, CSV on "
                    "stdout")
    if old:
        p.add_argument(old, dest="format", choices=DATA_FORMATS,
                       action=deprecated_alias(old, "--format"), help=argparse.SUPPRESS)
