"""The worked comparison in docs/compare.md is what the commands print today."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rankscope.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "compare.md"
SAMPLE = ROOT / "src" / "rankscope" / "sample_data"

BLOCKS = re.findall(r"```console\n\$ (.+?)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_worked_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize(("command", "expected"), BLOCKS, ids=[b[0][:60] for b in BLOCKS])
def test_console_blocks_are_current(command: str, expected: str, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scipy")
    pytest.importorskip("statsmodels")
    argv = shlex.split(command)
    assert argv[0] == "rankscope"
    monkeypatch.chdir(SAMPLE)
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out == expected
