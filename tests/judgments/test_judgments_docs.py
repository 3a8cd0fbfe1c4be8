"""docs/judgments.md: every ``console`` block's command prints exactly what the page shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rankscope.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "judgments.md"


def _blocks() -> list[tuple[str, str]]:
    text = DOC.read_text()
    out = []
    for body in re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL):
        command, _, expected = body.partition("\n")
        assert command.startswith("$ rankscope "), command
        out.append((command[2:], expected))
    return out


BLOCKS = _blocks()


def test_the_page_has_the_end_to_end_example():
    commands = " ".join(c for c, _ in BLOCKS)
    for step in ("judgments agreement", "judgments aggregate", "coverage", "evaluate"):
        assert step in commands


@pytest.mark.parametrize(("command", "expected"), BLOCKS, ids=[c[:60] for c, _ in BLOCKS])
def test_console_block(command, expected, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    pytest.importorskip("krippendorff")
    code = main(shlex.split(command)[1:])
    out = capsys.readouterr().out
    assert code == 0
    assert out == expected
