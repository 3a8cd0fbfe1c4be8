"""docs/conventions.md: its explain-differences example is what the command prints on the
files the page shows, and every test it cites exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rankscope.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "conventions.md").read_text()


def _blocks() -> list[str]:
    """The page's fenced blocks, in order."""
    blocks, current = [], None
    for line in PAGE.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current = ""
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current += line
    return blocks


def test_explain_differences_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks()
    qrels = next(b for b in blocks if b.startswith("1 0 a 3"))
    run = next(b for b in blocks if b.startswith("1 Q0 a 1"))
    shown = next(b for b in blocks if b.startswith("$ rankscope explain-differences"))
    command, expected = shown.split("\n", 1)
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "run.txt").write_text(run)
    monkeypatch.chdir(tmp_path)
    assert main(command.split()[2:]) == 0
    assert capsys.readouterr().out.strip() == expected.strip()


def test_cited_tests_exist() -> None:
    here = Path(__file__).resolve().parent
    cited = set(re.findall(r"`(test_[a-z_]+\.py)(?:::([a-z_0-9*]+))?", PAGE))
    assert len(cited) >= 8
    for module, test in cited:
        found = list(ROOT.joinpath("tests").rglob(module))
        assert found, module
        if test:
            text = found[0].read_text()
            prefix = test.rstrip("*")
            assert f"def {prefix}" in text, (module, test)
    assert (here / "test_claims.py").exists()
