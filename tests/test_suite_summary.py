"""What the test run says about itself: the tests that wait for a trec_eval binary.

The differential tests against trec_eval 10.0 skip on every machine without
``TREC_EVAL_BIN``; the summary line counts them apart ("N need
TREC_EVAL_BIN", ``tests/conftest.py``) and README gives the same N.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "TREC_EVAL_BIN"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_summary_line_counts_the_tests_that_need_the_binary(tmp_path: Path) -> None:
    """Mutation: without conftest's pytest_report_teststatus they are counted among the
    other skips ("4 skipped"), and nothing says a binary was missing: this fails."""
    (tmp_path / "test_three.py").write_text(
        "import pytest\n"
        "@pytest.mark.skipif(True, reason='no trec_eval binary (set TREC_EVAL_BIN)')\n"
        "@pytest.mark.parametrize('i', range(3))\n"
        "def test_needs(i): pass\n"
        "@pytest.mark.skip(reason='something else')\n"
        "def test_other(): pass\n"
        "def test_fine(): pass\n")
    out = _pytest("-p", "tests.conftest", "-q", "test_three.py", cwd=tmp_path)
    lines = out.strip().splitlines()
    assert lines[-1].startswith("1 passed, 1 skipped, 3 need TREC_EVAL_BIN in "), lines[-1]
    assert lines[-2].startswith("3 tests need TREC_EVAL_BIN (a trec_eval 10.0 binary)")


def test_readme_says_how_many_tests_need_the_binary() -> None:
    """Mutation: a case added to tests/trec_eval/cases.py (README's 616 then stale)."""
    out = _pytest("--collect-only", "-q", "tests/trec_eval/test_binary_diff.py", cwd=ROOT)
    found = re.search(r"^(\d+) tests collected", out, re.M)
    assert found, out[-500:]
    n = int(found[1])
    readme = (ROOT / "README.md").read_text()
    assert f"{n} tests need TREC_EVAL_BIN" in readme
    assert f'"{n} need TREC_EVAL_BIN"' in readme
    assert f'"{n} need TREC_EVAL_BIN"' in (ROOT / "docs" / "trec_eval.md").read_text()
