"""The project's internal references ("seed 004", "seed 000") never reach a user.

Users read the command line's help, error messages, the metric parameters'
descriptions (``rankscope metrics``, docs/metrics), the web app's templates
docs/ and the web API's reference. Developer docstrings may keep the reference; every other string
in the source, every help page, Param description, template and doc page
says it in the user's words (the rule's name, its source).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
from pathlib import Path

import pytest

from rankscope.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "rankscope"
INTERNAL = re.compile(r"\bseed[ _-]?0\d\d\b", re.IGNORECASE)


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found.extend(_parsers(child))
    return found


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                      | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                      ast.Constant):
                ids.add(id(body[0].value))
        # an attribute's docstring: a string statement right after an assignment
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for before, stmt in itertools.pairwise(stmts):
                    if (isinstance(before, ast.Assign | ast.AnnAssign)
                            and isinstance(stmt, ast.Expr)
                            and isinstance(stmt.value, ast.Constant)):
                        ids.add(id(stmt.value))
    return ids


def test_no_help_page_names_a_seed() -> None:
    said = [p.prog for p in _parsers(build_parser()) if INTERNAL.search(p.format_help())]
    assert said == []


def test_no_metric_parameter_description_names_a_seed() -> None:
    from rankscope.metrics.base import FAMILIES

    said = [(fam.name, p.name) for fam in FAMILIES.values() for p in fam.params
            if INTERNAL.search(p.doc)]
    assert said == []


def test_no_string_a_user_can_see_in_the_source_names_a_seed() -> None:
    # every string constant (messages, help, descriptions, f-string parts) but docstrings
    said = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        docstrings = _docstring_ids(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docstrings and INTERNAL.search(node.value)):
                said.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert said == []


def test_no_template_static_file_or_doc_page_names_a_seed() -> None:
    pages = [p for p in (SRC / "app").rglob("*") if p.suffix in {".html", ".js", ".css",
                                                                 ".txt", ".md"}]
    pages += [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    assert len(pages) > 10
    said = [str(p.relative_to(ROOT)) for p in pages
            if INTERNAL.search(p.read_text(errors="replace"))]
    assert said == []


def test_the_web_api_s_reference_names_no_seed(tmp_path: Path) -> None:
    # /api/openapi.json (what /api/docs shows): routes' and models' descriptions
    pytest.importorskip("fastapi")
    pytest.importorskip("sqlalchemy")
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app
    from rankscope.store.db import open_store

    store = open_store(tmp_path / "store.sqlite")
    try:
        answer = TestClient(create_app(store, tmp_path)).get("/api/openapi.json")
        assert answer.status_code == 200 and '"paths"' in answer.text
        assert INTERNAL.findall(answer.text) == []
    finally:
        store.close()
