"""``rankscope.judgments`` loads agreement and coverage on first use, and its names stay
what they were: a comparison plans its metrics through ``judgments.evaluation`` before
it reads its first run file, and needs neither module."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_planning_a_comparison_loads_neither_agreement_nor_coverage() -> None:
    got = _run("""
        import sys
        from rankscope.judgments.evaluation import plan_seed_metrics
        plan_seed_metrics(["map", "P_10"], None)
        print(sorted(m for m in ("rankscope.judgments.agreement", "rankscope.judgments.coverage")
                     if m in sys.modules))
    """)
    assert got == "[]"


def test_agreement_and_coverage_stay_the_functions_whichever_loads_first() -> None:
    # importing a submodule binds it on the package under its own name; the package's
    # `agreement` and `coverage` are the functions, as when the package loaded them itself
    got = _run("""
        import types
        import rankscope.judgments as j
        import rankscope.judgments.coverage
        from rankscope.judgments import Agreement
        from rankscope.judgments import agreement, coverage, aggregate, transform
        from rankscope.judgments.agreement import agreement as the_agreement
        from rankscope.judgments.coverage import coverage as the_coverage
        print(agreement is the_agreement, coverage is the_coverage, j.coverage is the_coverage,
              Agreement.__module__, type(aggregate).__name__, type(transform).__name__)
    """)
    assert got == "True True True rankscope.judgments.agreement function function"
