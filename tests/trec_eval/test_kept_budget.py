"""trec_eval's output when a context keeps almost nothing for later kernels (issue 30 §5).

A context bounds the arrays it keeps for later kernels (``engine/kept.py``): past
its budget the values read least recently are let go and made again when next
read. Here every context is bounded (from the first row) to one byte, so nearly
every kept value is let go and made again, in the order all_trec's kernels ask
for them: each case must still print trec_eval 10.0's recorded output (the golden
file, see test_golden.py), and values must have been let go.
"""

from __future__ import annotations

from typing import Any

import pytest

from rankscope.engine import context, kept

from .test_golden import CASES
from .util import Outcome, assert_same, case_folder, ours

_KINDS = {"all_trec_flags", "random_long", "gain_params"}
_PICKED = [c for c in CASES if c["kind"] in _KINDS][::4]


@pytest.fixture
def tiny_budget(monkeypatch: pytest.MonkeyPatch) -> list[kept.Kept]:
    """Every context bounded to one byte; the budgets made, to count what they let go."""
    made: list[kept.Kept] = []

    class Counted(kept.Kept):
        def __init__(self, limit: int) -> None:
            super().__init__(limit)
            made.append(self)

    monkeypatch.setattr(context, "WATCHED_FROM", 0)
    monkeypatch.setattr(context, "BUDGET", 1)
    monkeypatch.setattr(context, "Kept", Counted)
    return made


def test_the_cases_ask_for_every_measure():
    """The cases picked run all_trec (every measure) with and without -q."""
    assert len(_PICKED) >= 20
    assert any("all_trec" in c["args"] and "-q" in c["args"] for c in _PICKED)


@pytest.mark.parametrize("case", _PICKED, ids=[f"{i}-{c['kind']}" for i, c in
                                               enumerate(_PICKED)])
def test_same_output_when_nearly_nothing_is_kept(tmp_path: Any, case: dict[str, Any],
                                                 tiny_budget: list[kept.Kept]) -> None:
    cwd = case_folder(case.get("files", {}), case.get("cwd"), tmp_path)
    want = Outcome(case["status"], case["stdout"], case["stderr"])
    assert_same(ours(case["args"], cwd=cwd), want, case["stderr_lines"], case["args"])
    if case["status"] == 0 and "all_trec" in case["args"]:
        assert sum(b.let_go for b in tiny_budget) > 10  # the rule ran: values were made again
