"""trec_eval's input rules, checked on small files worked out by hand."""

from __future__ import annotations

import subprocess
import sys

from .util import ours


def _files(tmp_path, qrels: bytes, run: bytes) -> None:
    (tmp_path / "qrels").write_bytes(qrels)
    (tmp_path / "run").write_bytes(run)


def _summary(out: str) -> dict[str, str]:
    return {n.strip(): v for n, q, v in (line.split("\t") for line in out.splitlines())
            if q == "all"}


def test_relevance_is_read_with_atol(tmp_path):
    # "1.9" is level 1 and "2x" level 2: relevant at -l1, only the second at -l2
    _files(tmp_path, b"q 0 a 1.9\nq 0 b 2x\n", b"q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    assert _summary(ours(["-m", "num_rel", "qrels", "run"], cwd=tmp_path).stdout) == {
        "num_rel": "2"}
    assert _summary(ours(["-l2", "-m", "num_rel", "qrels", "run"], cwd=tmp_path).stdout) == {
        "num_rel": "1"}


def test_scores_are_read_with_atof_and_ties_go_to_the_larger_id(tmp_path):
    # "0.5abc" is 0.5, tying with b's 0.5: b ranks first (ids descending), so the
    # relevant a is at rank 2: P_1 = 0, recip_rank = 1/2
    _files(tmp_path, b"q 0 a 1\nq 0 b 0\n", b"q Q0 a 1 0.5abc r\nq Q0 b 2 0.5 r\n")
    out = _summary(ours(["-m", "P.1", "-m", "recip_rank", "qrels", "run"], cwd=tmp_path).stdout)
    assert out == {"P_1": "0.0000", "recip_rank": "0.5000"}


def test_run_comments_blank_lines_crlf_and_extra_fields(tmp_path):
    _files(tmp_path, b"q 0 a 1\r\n", b"\n  # note\nq Q0 a 1 3 first extra\r\n\nq Q0 b 2 1 last\n")
    got = ours(["-m", "runid", "-m", "num_ret", "qrels", "run"], cwd=tmp_path)
    # runid is the tag of the last data line; both data lines count
    assert got.stdout == "runid                 \tall\tlast\nnum_ret               \tall\t2\n"


def test_ids_are_bytes(tmp_path):
    # Latin-1 bytes that are not UTF-8 print back unchanged
    _files(tmp_path, b"q\xe9 0 a 1\n", b"q\xe9 Q0 a 1 1 r\xff\n")
    done = subprocess.run(
        [sys.executable, "-m", "rankscope", "trec_eval", "-q", "-m", "runid", "-m", "num_ret",
         "qrels", "run"], cwd=tmp_path, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (b"num_ret               \tq\xe9\t1\n"
                           b"runid                 \tall\tr\xff\n"
                           b"num_ret               \tall\t1\n")
