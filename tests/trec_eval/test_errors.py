"""trec_eval's common errors: same exit status, same first stderr line.

The expected texts are trec_eval 10.0's (recorded from the binary in the
behaviour spec, see docs/trec_eval.md). The same cases run through the binary
in ``test_binary_diff.py`` (and its recorded answers, stdout included, in
``test_golden.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cases import ERROR_CASES, QRELS, RUN
from .util import ours


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return name


@pytest.mark.parametrize(("files", "args", "status", "first"), [c[1:] for c in ERROR_CASES],
                         ids=[c[0] for c in ERROR_CASES])
def test_status_and_first_stderr_line(tmp_path, files, args, status, first):
    for name, text in files.items():
        _write(tmp_path, name, text)
    got = ours(args, cwd=tmp_path)
    assert (got.status, got.first_error) == (status, first)


def test_earlier_queries_stay_printed_before_a_failing_query(tmp_path):
    # q1 is fine; q2 lists document d twice, so trec_eval prints q1 and stops at q2.
    _write(tmp_path, "qrels", QRELS)
    _write(tmp_path, "run", RUN + "q2 Q0 d 3 0.1 r1\n")
    got = ours(["-q", "-m", "num_ret", "qrels", "run"], cwd=tmp_path)
    assert got.status == 4
    assert got.stdout == "num_ret               \tq1\t2\n"
    assert got.first_error.startswith("trec_eval.form_res_qrels: duplicate docs d")


def test_duplicate_below_the_max_is_ignored(tmp_path):
    # -M1 keeps one document per query, so the repeated 'a' of q1 is never ranked twice
    _write(tmp_path, "qrels", QRELS)
    _write(tmp_path, "run", RUN + "q1 Q0 a 3 0.1 r1\n")
    got = ours(["-M1", "-m", "num_ret", "qrels", "run"], cwd=tmp_path)
    assert (got.status, got.stdout) == (0, "num_ret               \tall\t2\n")


def test_run_on_stdin(tmp_path):
    _write(tmp_path, "qrels", QRELS)
    got = ours(["-m", "num_ret", "qrels", "-"], cwd=tmp_path, stdin=RUN.encode())
    assert (got.status, got.stdout) == (0, "num_ret               \tall\t4\n")
