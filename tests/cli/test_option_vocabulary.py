"""One language: a short option means one thing in every subcommand.

docs/command_line.md's shared options give each short spelling one meaning
(``-q`` is ``--per-query``, ``-o`` ``--output``, ``-f`` ``--format``...). This
builds the command line's own parser and checks every subcommand against
that: a short option stands for the same long option (or, without one, the
same destination) wherever it appears. ``rankscope trec_eval`` mirrors the C
program's flags and is left out; a deprecated spelling kept for a release
(hidden from the help) is allowed only where docs/command_line.md lists it.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

from rankscope.cli.completion import command_tree
from rankscope.cli.main import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "command_line.md"


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                 ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append(((*path, name), child))
                found.extend(_subcommands(child, (*path, name)))
    return found


def _is_short(flag: str) -> bool:
    return re.fullmatch(r"-[A-Za-z0-9]", flag) is not None


def _meaning(action: argparse.Action) -> str:
    longs = sorted(f for f in action.option_strings if f.startswith("--"))
    return " ".join(longs) if longs else f"dest={action.dest}"


def _short_options() -> tuple[dict[str, dict[str, list[str]]], list[tuple[str, str]]]:
    """{short: {meaning: [subcommands]}} of the shown options; the hidden ones apart."""
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    hidden: list[tuple[str, str]] = []
    for path, parser in _subcommands(build_parser()):
        if path[0] == "trec_eval":  # trec_eval's own flags, as the C program has them
            continue
        for action in parser._actions:
            for flag in action.option_strings:
                if not _is_short(flag) or flag == "-h":
                    continue
                if action.help == argparse.SUPPRESS:
                    hidden.append((" ".join(path), flag))
                else:
                    meanings[flag][_meaning(action)].append(" ".join(path))
    return meanings, hidden


def test_each_short_option_has_one_meaning_across_subcommands() -> None:
    meanings, _ = _short_options()
    assert meanings["-q"] and meanings["-o"]  # the walk found the subcommands
    clashes = {flag: dict(by) for flag, by in meanings.items() if len(by) > 1}
    assert clashes == {}


def test_the_shared_short_options_mean_what_the_docs_say() -> None:
    # docs/command_line.md's table of options shared by every subcommand
    documented = dict(re.findall(r"^\| `(-[a-z])(?: [A-Z]+)?`, `(--[a-z-]+)",
                           DOCS.read_text(), re.M))
    assert documented == {"-o": "--output", "-f": "--format", "-m": "--metric",
                          "-q": "--per-query"}
    meanings, _ = _short_options()
    for flag, long in documented.items():
        assert set(meanings[flag]) == {long}, (flag, dict(meanings[flag]))


def test_a_hidden_short_spelling_is_a_documented_deprecation() -> None:
    _, hidden = _short_options()
    text = DOCS.read_text()
    deprecated = set(re.findall(r"^\| `([a-z ]+?) (-[a-z]) [A-Z_]+` \|", text, re.M))
    assert ("snapshots compare", "-q") in hidden
    assert set(hidden) <= deprecated, set(hidden) - deprecated


def test_completion_offers_query_not_q_in_snapshots_compare() -> None:
    tree = command_tree(build_parser())
    snapshots = next(c for c in tree.children if c.path[-1] == "snapshots")
    compare = next(c for c in snapshots.children if c.path[-1] == "compare")
    assert "--query" in compare.options and "-q" not in compare.options
