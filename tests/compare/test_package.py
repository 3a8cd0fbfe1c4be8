"""The rankscope.compare package: its names resolve, and it is callable as compare()."""

from __future__ import annotations

import json

import pytest

import rankscope.compare as rc
from rankscope.errors import RankscopeWarning

pytest.importorskip("scipy")


def test_every_exported_name_resolves() -> None:
    for name in rc.__all__:
        assert getattr(rc, name) is not None
    assert sorted(dir(rc)) == sorted(rc.__all__)


def test_the_package_calls_compare() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    a = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"x": 2.0, "d3": 1.0}}
    b = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 2.0, "x": 1.0}, "q3": {"d3": 2.0, "x": 1.0}}
    with pytest.warns(RankscopeWarning, match=r"too few paired queries .*\(P@1: 3;"):
        via_package = rc(qrels, {"a": a, "b": b}, ["P@1"])
    with pytest.warns(RankscopeWarning, match="too few"):
        via_function = rc.compare(qrels, {"a": a, "b": b}, ["P@1"])
    assert json.loads(via_package.render("json")) == json.loads(via_function.render("json"))
    # a: P@1 = 1, 0, 0; b: 1, 1, 1 -> delta 2/3, won on q2 and q3
    c = via_function.comparison("P@1", "b")
    assert c.delta == pytest.approx(2 / 3) and (c.wins, c.ties, c.losses) == (2, 1, 0)
