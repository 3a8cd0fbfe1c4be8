"""Every "same number as TOOL" claim is one the tests in this folder check against TOOL.

The claims are the metric families' ``agrees_with`` entries, shown by
``rankscope metrics`` and in ``docs/metrics/`` ("same number as: ..."). Each
reads "TOOL SPELLINGS (CONDITIONS)"; here every spelling must be among those
the tool's test compares (``k``, ``x``, ``r``, ``P``, ``N`` standing for
numbers), under the conventions the claim states. A claim under rankscope's
defaults for a tool other than trec_eval (the measures added with their own
tests: C/W/L, Compat, Accuracy, NumQ, intent-aware) must name a spelling that
a test module in ``tests/metrics`` running that tool asks rankscope for.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

import rankscope.metrics  # noqa: F401 - every family
from rankscope.metrics.base import CLAIM_CONDITIONS, DEFAULT_CONVENTIONS, FAMILIES
from rankscope.metrics.conventions import PROFILES

from . import test_ranx_profile, test_sklearn_profile, test_trec_eval_profile
from .data import SHAPES, dataset

METRIC_TESTS = Path(__file__).resolve().parents[1] / "metrics"
# the tests/metrics modules that run each tool beside rankscope, under the defaults
DEFAULT_TESTS = {"ir_measures": ("test_cwl.py", "test_intent_aware.py",
                                 "test_ir_measures_parity.py")}
CLAIM = re.compile(r"^(?P<tool>\S+) (?P<spellings>.+) \((?P<conditions>[^()]*)\)$")


def _pytrec_eval_names() -> set[str]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from .test_pytrec_eval_profile import MEASURES

    qrels, run = dataset(0, SHAPES[0])
    out = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    return {name for row in out.values() for name in row}


def _trec_eval_names() -> set[str]:
    names: set[str] = set()
    for output in ("out.test.aq", "out.test.aqc"):
        names.update(test_trec_eval_profile._names(test_trec_eval_profile._per_query(output)))
    return names | test_trec_eval_profile.by_name_only_tested()


@functools.cache
def _tested() -> dict[str, set[str]]:
    """Per tool, the spellings its test compares with the tool."""
    return {
        "trec_eval": _trec_eval_names(),
        "pytrec_eval": _pytrec_eval_names(),
        "ir_measures": set(PROFILES["ir_measures"].names),
        "ranx": set(test_ranx_profile.NAMES) | set(test_ranx_profile.ORDER_FREE),
        "scikit-learn": set(test_sklearn_profile.NAMES) | set(test_sklearn_profile.NO_TIES),
    }


def _pattern(spelling: str) -> re.Pattern[str]:
    text = re.escape(spelling)
    number = r"[0-9]+(?:\.[0-9]+)?"
    for placeholder, after in (("k", "@_=.l"), ("x", "@_=.l"), ("r", "@_=.l"), ("N", "@_=.l"),
                               ("P", "=.")):  # P_k, set_P: a P after "_" is a name
        text = re.sub(rf"(?<=[{after}]){placeholder}(?![A-Za-z_])", number, text)
    text = text.replace(r"\ ", r"\s*")
    return re.compile(rf"^{text}$")


CLAIMS = [(family.name, claim) for family in FAMILIES.values() for claim in family.agrees_with]


@pytest.mark.parametrize(("family", "claim"), CLAIMS, ids=[f"{f}: {c}" for f, c in CLAIMS])
def test_every_claim_is_tested_against_its_tool(family: str, claim: str) -> None:
    found = CLAIM.match(claim)
    assert found, f"{family}: {claim!r} does not read 'TOOL SPELLINGS (CONDITIONS)'"
    tool = found.group("tool")
    assert tool in CLAIM_CONDITIONS, tool
    conditions = found.group("conditions")
    if conditions.startswith(DEFAULT_CONVENTIONS) and tool != "trec_eval":
        _tested_under_defaults(family, tool, found.group("spellings"))
        return
    assert conditions == CLAIM_CONDITIONS[tool]
    names = _tested()[tool]
    for spelling in (s.strip() for s in _split(found.group("spellings"))):
        pattern = _pattern(spelling)
        assert any(pattern.match(name) for name in names), (
            f"{family}: {tool} {spelling!r} is claimed but no test compares it with {tool}")


def _tested_under_defaults(family: str, tool: str, spellings: str) -> None:
    """Each spelling is asked of rankscope in a tests/metrics module that runs ``tool``."""
    sources = [(METRIC_TESTS / name).read_text() for name in DEFAULT_TESTS.get(tool, ())]
    sources = [text for text in sources if f'importorskip("{tool}")' in text]
    assert sources, f"{family}: no test module runs {tool} under the default conventions"
    for spelling in (s.strip() for s in _split(spellings)):
        pattern = _pattern(spelling).pattern.strip("^$")
        quoted = re.compile(rf"""["'(]{pattern}[("'@]""")
        assert any(quoted.search(text) for text in sources), (
            f"{family}: {tool} {spelling!r} is claimed but no test running {tool} asks for it")


def _split(spellings: str) -> list[str]:
    """Split on commas outside parentheses."""
    out, depth, current = [], 0, ""
    for char in spellings:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += char
    return [*out, current]


def test_claimed_spellings_name_the_claimed_family() -> None:
    """A spelling claimed for a family parses to that family under the claim's conventions
    (e.g. ranx's bpref is claimed for ranx_bpref, read so under --conventions ranx)."""
    from rankscope.metrics.conventions import resolve_name

    profile_of = {"trec_eval": None, "pytrec_eval": "pytrec_eval", "ir_measures": "ir_measures",
                  "ranx": "ranx", "scikit-learn": "sklearn"}
    names = _tested()
    for family, claim in CLAIMS:
        found = CLAIM.match(claim)
        assert found
        tool = found.group("tool")
        if found.group("conditions").startswith(DEFAULT_CONVENTIONS) and tool != "trec_eval":
            continue
        for spelling in _split(found.group("spellings")):
            pattern = _pattern(spelling.strip())
            for name in (n for n in names[tool] if pattern.match(n)):
                families = {r.metric.family for r in resolve_name(name, profile_of[tool])}
                assert families == {family}, (family, tool, name, families)
