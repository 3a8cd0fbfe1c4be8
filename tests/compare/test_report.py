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


@pytest.mark.filterwarnings("ignore:too few paired queries")
def test_report_says_each_warning_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves evaluate the runs the comparison evaluated: what a run lacks is said once,
    not once more for each curve."""
    from rankscope.cli.main import main

    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    Path("r1.txt").write_text("q1 Q0 a 1 2 r1\nq9 Q0 b 1 1 r1\n")  # q9 not judged
    Path("r2.txt").write_text("q1 Q0 a 1 2 r2\nq2 Q0 b 1 1 r2\n")
    for extra in ([], ["--no-plots"]):
        code = main(["report", "qrels.txt", "r1.txt", "r2.txt", "-m", "P@1", "-o", "r.html",
                     *extra])
        assert code == 0
        err = capsys.readouterr().err
        assert err.count("queries of r1.txt are in qrels.txt") == 1, err
        assert err.count("queries of r2.txt are in qrels.txt") == 1, err
