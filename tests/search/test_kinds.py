"""Search kinds are a registry: every kind is one module of rankscope/search/kinds/, and the
example of docs/extending.md, dropped in as one file, is a working kind."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import rankscope.search.kinds as kinds_package
from rankscope.errors import ConfigError
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.kinds import SearchKind, find_kind, kinds
from rankscope.search.types import QueryItem, SearchResponse

from .engine_server import Reply

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- a search kind: tests/search/test_kinds.py runs this file -->"


def test_the_built_in_kinds_are_the_modules_of_the_package():
    found = kinds()
    assert set(found) == {"elasticsearch", "opensearch", "solr", "http", "embedded"}
    assert all(isinstance(k, SearchKind) and k.name == name for name, k in found.items())
    assert [name for name, k in found.items() if not k.remote] == ["embedded"]


def test_the_endpoint_file_reader_names_no_kind():
    # no if-chain: config.py looks a kind up and never compares it with a name
    source = (ROOT / "src" / "rankscope" / "search" / "config.py").read_text()
    for name in kinds():
        assert f'"{name}"' not in source and f"'{name}'" not in source, name


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(ConfigError, match="kind must be one of elasticsearch, opensearch, "
                                          "embedded, http, solr") as info:
        find_kind("elastic", "e.toml")
    assert info.value.source == "e.toml" and info.value.value == "elastic"


@pytest.fixture
def with_example_kind(tmp_path, monkeypatch):
    """The docs' example saved as one more file of the kinds package (and nothing else)."""
    page = (ROOT / "docs" / "extending.md").read_text()
    code = page.split(MARKER, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "meili.py").write_text(code)
    monkeypatch.setattr(kinds_package, "__path__", [*kinds_package.__path__, str(tmp_path)])
    monkeypatch.setattr(kinds_package, "_FOUND", {})
    yield
    sys.modules.pop("rankscope.search.kinds.meili", None)
    importlib.invalidate_caches()


def _search(settings: dict[str, Any], query: QueryItem, depth: int) -> SearchResponse:
    async def go() -> SearchResponse:
        endpoint = open_endpoint(endpoint_from_dict(settings, source="m.toml"))
        try:
            return await endpoint.search(query, depth)
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


def test_a_kind_added_as_one_file_checks_its_keys_and_searches(with_example_kind, engine):
    assert "meili" in kinds()
    with pytest.raises(ConfigError, match='meili needs index = "NAME"'):
        endpoint_from_dict({"kind": "meili", "url": engine.url})
    with pytest.raises(ConfigError, match="unknown key 'idx' for kind 'meili'; did you mean "
                                          "'index'"):
        endpoint_from_dict({"kind": "meili", "url": engine.url, "index": "p", "idx": "p"})
    answer = {"hits": [{"id": "d2", "title": "Boots", "_rankingScore": 0.9},
                       {"id": "d7", "title": "Socks", "_rankingScore": 0.4}],
              "estimatedTotalHits": 2}
    engine.route("POST", "/indexes/products/search", Reply(json.dumps(answer)))
    response = _search({"kind": "meili", "url": engine.url, "index": "products",
                        "max_retries": 0}, QueryItem("q1", "hiking boots"), depth=5)
    sent = engine.seen("/indexes/products/search")[0]
    assert sent.body == {"q": "hiking boots", "limit": 5, "showRankingScore": True}
    assert [(h.doc_id, h.score, h.title) for h in response.hits] == [
        ("d2", 0.9, "Boots"), ("d7", 0.4, "Socks")]


def test_the_docs_list_every_kind_module():
    page = (ROOT / "docs" / "snapshots.md").read_text()
    for name in kinds():
        assert re.search(rf"\b{name}\b", page), f"docs/snapshots.md says nothing of {name}"
