"""``rankscope metrics`` lists every measure and every fusion method, with formula and citation."""

from __future__ import annotations

import json

import pytest

from rankscope.cli.main import main
from rankscope.fusion.methods import METHODS
from rankscope.metrics.base import FAMILIES

NEW = ("BPM", "INSQ", "INST", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "Compat",
       "Accuracy", "NumQ", "ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP",
       "P_IA", "StRecall", "AP_IA", "AO", "RBO")


def test_listing_has_every_family_and_method(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "-f", "json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    names = [e["name"] for e in entries]
    assert set(FAMILIES) | set(METHODS) <= set(names)
    for entry in entries:
        if entry["name"] in NEW or entry.get("group") == "fusion":
            assert entry["formula"] and entry["references"], entry["name"]


def test_one_measure_or_method_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "NERR10(p=0.5)"]) == 0
    out = capsys.readouterr().out
    assert "C_i = p (1 - g_i)" in out and "Azzopardi" in out
    assert main(["metrics", "comb_gmnz"]) == 0  # ranx's spelling of a fusion method
    out = capsys.readouterr().out
    assert out.startswith("combgmnz  (fusion") and "Lee" in out
    assert main(["metrics", "no_such_thing"]) == 2
