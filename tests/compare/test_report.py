"""The HTML report: tables and inline SVG figures, self-contained."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rankscope.render.html_report import report

from .data import make_qrels, make_run

pytest.importorskip("scipy")

QRELS = make_qrels(8, n_queries=12)
RUNS = {"base": make_run(QRELS, 1, 0.8), "new": make_run(QRELS, 2, 1.5),
        "other": make_run(QRELS, 3, 1.0)}


def test_report_has_tables_and_embedded_images(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    page = report(QRELS, RUNS, ["nDCG@10", "AP"], output=out, title="My <report>")
    assert out.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>My &lt;report&gt;</title>" in page
    assert page.count("<table class='rankscope-compare'>") == 1 and "baseline: base" in page
    assert page.count("<table class='sortable rankscope-per-query'>") == 1
    assert "nDCG@10" in page and "new" in page
    images = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    # curves: nDCG@k and precision-recall; per metric: distribution + 2 difference plots
    assert len(images) == 2 + 2 * 3
    for svg in images:  # each one well-formed XML, an accessible image
        root = ET.fromstring(svg)
        assert root.get("role") == "img" and root.get("aria-label")
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
    assert "<img" not in page
    # Self-contained: nothing is fetched from elsewhere.
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", page)
    # The one script is inline (the table sorter), no library is loaded.
    assert re.findall(r"<script[^>]*>", page) == ["<script>"] and "<link" not in page


def test_report_without_plots() -> None:
    page = report(QRELS, RUNS, ["AP"], plots=False, test="wilcoxon", baseline="new")
    assert "<svg" not in page and "baseline: new" in page and "Wilcoxon" in page
