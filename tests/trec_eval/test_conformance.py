"""The 14 rows of trec_eval's own test folder: output identical, byte for byte.

Each row of ``tests/trec_eval/conformance/README.md`` names trec_eval
arguments and the file holding trec_eval 10.0's output for them. The data is
part of the tests: a missing file fails, it never skips.
"""

from __future__ import annotations

import re
import shlex

import pytest

from .util import CONFORMANCE, ours


def _rows() -> list[tuple[str, list[str]]]:
    readme = CONFORMANCE / "README.md"
    rows = []
    for line in readme.read_text().splitlines():
        m = re.match(r"^\| (out\.[\w.]+) \| `(.+)` \|$", line)
        if m:
            rows.append((m.group(1), shlex.split(m.group(2))))
    return rows


ROWS = _rows()


def test_all_fourteen_rows_are_read():
    assert len(ROWS) == 14


@pytest.mark.parametrize(("expected", "args"), ROWS, ids=[" ".join(a) for _, a in ROWS])
def test_output_is_identical(expected, args):
    got = ours(args, cwd=CONFORMANCE)
    assert got.stderr == ""
    assert got.status == 0
    assert got.stdout == (CONFORMANCE / expected).read_text()
