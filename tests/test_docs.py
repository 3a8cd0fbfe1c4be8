"""The generated metric reference under docs/metrics is current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_metric_pages_match_the_definitions():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_metric_docs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for group, text in gen.render().items():
        page = ROOT / "docs" / "metrics" / f"{group}.md"
        assert page.exists(), f"run scripts/gen_metric_docs.py: {page} is missing"
        assert page.read_text() == text, f"run scripts/gen_metric_docs.py: {page} is stale"
