"""The 14 rows of trec_eval's own test folder: output identical, byte for byte.

Each row of ``shared/conformance/trec_eval/README.md`` names trec_eval
arguments and the file holding trec_eval 10.0's output for them.
"""

from __future__ import annotations

import re
import shlex

import pytest

from .util import CONFORMANCE, ours


def _rows() -> list[tuple[str, list[str]]]:
    readme = CONFORMANCE / "README.md"
    if not readme.is_file():
        return []
    rows = []
    for line in readme.read_text().splitlines():
        m = re.match(r"^\| (out\.[\w.]+) \| `(.+)` \|$", line)
        if m:
            rows.append((m.group(1), shlex.split(m.group(2))))
    return rows


ROWS = _rows()
pytestmark = pytest.mark.skipif(
    not ROWS, reason=f"trec_eval conformance data not found at {CONFORMANCE}"
)


def test_all_fourteen_rows_are_read():
    assert len(ROWS) == 14


@pytest.mark.parametrize(("expected", "args"), ROWS, ids=[" ".join(a) for _, a in ROWS])
def test_output_is_identical(expected, args):
    got = ours(args, cwd=CONFORMANCE)
    assert got.stderr == ""
    assert got.status == 0
    assert got.stdout == (CONFORMANCE / expected).read_text()
