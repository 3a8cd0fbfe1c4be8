"""Every input that reads qrels, queries or documents says it takes ``irds:NAME``.

The command line's help for each such argument names ``irds:``, and
docs/collections.md lists each command (issue 31: "docs/ names the irds:
inputs in every command that reads qrels, queries or documents").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from rankscope.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]

# (subcommand path, argument dest): every input that reads qrels, queries or documents
INPUTS = [
    (("evaluate",), "qrels"), (("compare",), "qrels"), (("report",), "qrels"),
    (("coverage",), "qrels"), (("explain-differences",), "qrels"), (("check",), "qrels"),
    (("fuse",), "optimize"), (("fuse",), "train_qrels"),
    (("snapshot",), "queries"),
    (("snapshots", "diff"), "qrels"), (("snapshots", "holes"), "qrels"),
    (("snapshots", "compare"), "qrels"), (("sweep",), "queries"), (("sweep",), "qrels"),
    (("judge",), "queries"), (("judge",), "docs"), (("judge",), "needs"),
    (("judge",), "holes_of"), (("judge",), "graded_in"), (("judge",), "human"),
    (("judge", "agreement"), "human"),
    (("judgments", "aggregate"), "files"), (("judgments", "agreement"), "files"),
    (("judgments", "transform"), "files"), (("judgments", "implicit"), "queries"),
    (("serve",), "irds"),
]


def _parser(path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser(path[0])
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


@pytest.mark.parametrize(("path", "dest"), INPUTS, ids=lambda x: str(x))
def test_the_help_of_each_input_names_irds(path, dest):
    action = next(a for a in _parser(path)._actions if a.dest == dest)
    assert "irds:" in (action.help or "") or dest == "irds", (path, dest, action.help)


def test_the_collections_page_names_every_command():
    text = (ROOT / "docs" / "collections.md").read_text()
    for path, _ in INPUTS:
        assert f"`rankscope {path[0]}" in text or f"`{' '.join(path)}`" in text or \
            f"`{path[-1]}`" in text, path
    for page in ("judgments.md", "compare.md", "snapshots.md", "llm_judges.md", "web_app.md",
                 "conventions.md", "trec_eval.md"):
        assert "irds:" in (ROOT / "docs" / page).read_text(), page
