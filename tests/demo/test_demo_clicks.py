"""The demo collection's click log: what it shows, that it regenerates, and the path it opens.

``clicks.csv.gz`` is simulated by ``scripts/make_demo_clicks.py`` (seeded) from
the shipped human grades; the pages must be what the two demo endpoints
return (checked against this directory's own rendering of the engine's
contract, ``test_demo_data.rankings``), and ``rankscope demo init`` must
lead from it to implicit judgments and their agreement with the grades,
offline.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import polars as pl
import pytest
from test_demo_data import DATA, ROOT, rankings

from rankscope.cli.main import main

CLICKS = DATA / "clicks.csv.gz"


def _log() -> pl.DataFrame:
    return pl.read_csv(CLICKS, schema_overrides={"session_id": pl.String,
                                                 "query_id": pl.String, "doc_id": pl.String})


def test_every_page_is_an_endpoints_top_10_in_order_or_shuffled():
    tops = [{q: [d for d, _ in hits[:10]] for q, hits in rankings(name).items()}
            for name in ("baseline", "tuned")]
    pages = _log().sort("session_id", "position").group_by("session_id", maintain_order=True) \
        .agg(pl.col("query_id").first(), pl.col("doc_id"), pl.col("position"))
    shuffled = 0
    for _, qid, docs, positions in pages.iter_rows():
        assert positions == list(range(1, len(docs) + 1))
        exact = [docs == top[qid] for top in tops]
        if not any(exact):
            assert any(sorted(docs) == sorted(top[qid]) for top in tops), (qid, docs)
            shuffled += 1
    # the script shuffles 10% of the pages: about 230 of 2,300; a fixed page equal to a
    # shuffle is possible but rare, so the count is near 10% (4 standard deviations)
    share = shuffled / pages.height
    assert abs(share - 0.1) < 4 * (0.1 * 0.9 / pages.height) ** 0.5, share


def test_the_script_regenerates_the_shipped_log():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_demo_clicks.py"),
                           "--check"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith("unchanged"), \
        done.stdout + done.stderr


def test_demo_init_leads_to_implicit_judgments_and_their_agreement(tmp_path, capsys):
    pytest.importorskip("krippendorff")
    demo = tmp_path / "demo"
    assert main(["demo", "init", str(demo)]) == 0
    out = capsys.readouterr().out
    assert "clicks.csv" in out and "rankscope judgments implicit" in out
    assert (demo / "clicks.csv").read_bytes() == gzip.decompress(CLICKS.read_bytes())
    implicit = demo / "implicit.csv"
    assert main(["judgments", "implicit", str(demo / "clicks.csv"), "--model", "sdbn",
                 "-o", str(implicit)]) == 0
    assert main(["judgments", "agreement", str(demo / "qrels.txt"), str(implicit),
                 "--scale", "graded", "-f", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_raters"] == 2
    # clicks drawn from the grades agree with them beyond chance (alpha 0 = chance)
    alpha = report["krippendorff_alpha"]
    assert alpha["ordinal"] > 0.2, alpha
