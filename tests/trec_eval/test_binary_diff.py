"""Differential tests against the trec_eval 10.0 binary (the cases of ``cases.py``).

Runs when a trec_eval binary is found (``TREC_EVAL_BIN``, or
``/work/tools/bin/trec_eval``, or ``trec_eval`` on the PATH); skipped
otherwise, and the test summary line then counts them ("N need
TREC_EVAL_BIN", see ``tests/conftest.py``). The same cases run without the
binary on the committed golden outputs (``test_golden.py``, which checks that
every case here is in them). Every case must give the same stdout, exit
status and first stderr line (all of stderr for ``-h``; the first two after
an ``abort()``, which loses trec_eval's stdout).
"""

from __future__ import annotations

import pytest

from .cases import Case, binary_cases
from .util import assert_same, case_folder, ours, reference_binary, theirs

BINARY = reference_binary()
NEEDS_BINARY = "no trec_eval binary (set TREC_EVAL_BIN)"
pytestmark = pytest.mark.skipif(BINARY is None, reason=NEEDS_BINARY)

CASES = binary_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}-{i}" for i, c in enumerate(CASES)])
def test_same_as_the_binary(tmp_path, case: Case) -> None:
    assert BINARY is not None
    cwd = case_folder(case.files, case.cwd, tmp_path)
    want = theirs(BINARY, list(case.args), cwd=cwd)
    got = ours(list(case.args), cwd=cwd)
    assert_same(got, want, case.stderr_lines, case.args)

