"""The one exit-code scheme: errors map to codes in one place (rankscope.cli.exit_codes)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rankscope.cli import main as cli_main
from rankscope.cli.exit_codes import (
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_OUTPUT,
    EXIT_USAGE,
    code_for,
)
from rankscope.errors import IncompleteError, OutputWriteError, ParseError


@pytest.mark.parametrize(("exc", "code"), [
    (ParseError("x"), EXIT_USAGE),
    (IncompleteError("x"), EXIT_INCOMPLETE),
    (OutputWriteError("x"), EXIT_OUTPUT),
    (RuntimeError("x"), EXIT_INTERNAL),
])
def test_each_error_kind_has_its_code(exc, code):
    assert code_for(exc) == code


def _boom(args):
    raise ZeroDivisionError("a defect")


def test_an_internal_error_is_one_line_and_70(monkeypatch, capsys):
    # a handler that fails on a defect: one line naming it, no traceback unless --debug
    real = cli_main.build_parser

    def patched(only=None):
        parser = real(only)
        parse = parser.parse_args

        def parse_with_a_defect(argv):
            args = parse(argv)
            args.handler = _boom
            return args

        parser.parse_args = parse_with_a_defect
        return parser

    monkeypatch.setattr(cli_main, "build_parser", patched)
    assert cli_main.main(["metrics"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ZeroDivisionError: a defect" in err
    assert "Traceback" not in err
    assert cli_main.main(["--debug", "metrics"]) == EXIT_INTERNAL
    assert "Traceback" in capsys.readouterr().err


def test_debug_is_accepted_by_the_real_command():
    done = subprocess.run([sys.executable, "-m", "rankscope", "--debug", "metrics", "P"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
