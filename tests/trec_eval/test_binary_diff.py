"""Differential tests against the trec_eval 10.0 binary, on random data.

Runs when a trec_eval binary is found (``TREC_EVAL_BIN``, or
``/work/tools/bin/trec_eval``, or ``trec_eval`` on the PATH); skipped
otherwise. The same comparison runs without the binary on the committed
golden outputs (``test_golden.py``). Every case must give the same stdout,
exit status and first stderr line.
"""

from __future__ import annotations

import random

import pytest

from .generate import options, qrels_and_run
from .util import CONFORMANCE, ours, reference_binary, theirs

BINARY = reference_binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="no trec_eval binary (set TREC_EVAL_BIN)")


def _compare(tmp_path, qrels: str, run: str, args: list[str]) -> None:
    assert BINARY is not None
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    full = [*args, "qrels", "run"]
    want = theirs(BINARY, full, cwd=tmp_path)
    got = ours(full, cwd=tmp_path)
    assert (got.status, got.first_error) == (want.status, want.first_error), full
    assert got.stdout == want.stdout, full


@pytest.mark.parametrize("seed", range(120))
def test_random_small(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = qrels_and_run(rng)
    _compare(tmp_path, qrels, run, options(rng))


@pytest.mark.parametrize("seed", range(1000, 1030))
def test_random_long_rankings(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = qrels_and_run(rng, n_docs=300)
    _compare(tmp_path, qrels, run, options(rng))


@pytest.mark.parametrize("seed", range(2000, 2020))
def test_random_all_trec_with_every_flag(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = qrels_and_run(rng, n_docs=80)
    args = ["-m", "all_trec", "-q", "-c", f"-M{rng.randint(1, 40)}", f"-l{rng.randint(0, 3)}"]
    if seed % 2:
        args.append("-J")
    _compare(tmp_path, qrels, run, args)


def test_file_format_quirks(tmp_path):
    # tabs, CRLF, extra run fields, blank and comment lines, atol/atof prefixes
    qrels = "q1\t0\ta\t1.9\r\nq1 0 b  0\n#c\nq1 0 c +2\nq2 0 a 1x\n"
    run = (" q1 Q0 a 1 0.5 tag extra fields\n\n# comment\nq1\tQ0\tb\t2\t0.5abc\tt\n"
           "q1 Q0 c 3 1e-1 t\nq2 Q0 a 1 inf t\nq2 Q0 z 2 -inf t\n")
    _compare(tmp_path, qrels, run, ["-q", "-m", "all_trec"])


@pytest.mark.parametrize("args", [
    ["-m", "all_trec", "-q", "-J"], ["-m", "all_trec", "-l3", "-M5"],
    ["-m", "all_trec", "-q", "-c", "-J", "-M50"], ["-m", "yaap", "-m", "dcg", "-q"],
    ["-m", "all_trec", "-N", "100000", "-n", "-q"],
])
def test_conformance_data_with_other_flags(tmp_path, args):
    assert BINARY is not None
    for name, rel in (("qrels.test", "results.test"), ("qrels.rel_level", "results.trunc")):
        full = [*args, name, rel]
        want = theirs(BINARY, full, cwd=CONFORMANCE)
        got = ours(full, cwd=CONFORMANCE)
        assert (got.status, got.stdout) == (want.status, want.stdout), full


def _run_for(rng: random.Random, qids: list[str], docs: list[str]) -> str:
    lines = [f"{q} Q0 {d} {i} {rng.randint(0, 16) / 8} r"
             for q in qids for i, d in enumerate(rng.sample(docs, rng.randint(1, len(docs))))]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_random_preferences(tmp_path, seed):
    from .generate import prefs_file

    rng = random.Random(seed)
    qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
    docs = [f"d{i}" for i in range(rng.randint(2, 9))]
    qrels_prefs = seed % 3 == 0
    (tmp_path / "prefs").write_text(prefs_file(rng, qids, docs, qrels_prefs))
    (tmp_path / "run").write_text(_run_for(rng, qids, docs))
    fmt = "qrels_prefs" if qrels_prefs else "prefs"
    args = ["-m", "all_prefs", "-q", "-R", fmt, *(["-M3"] if seed % 4 == 1 else []),
            "prefs", "run"]
    assert BINARY is not None
    want = theirs(BINARY, args, cwd=tmp_path)
    got = ours(args, cwd=tmp_path)
    assert (got.status, got.first_error) == (want.status, want.first_error)
    if want.status != 134:  # abort() loses trec_eval's buffered stdout
        assert got.stdout == want.stdout


@pytest.mark.parametrize("seed", range(40))
def test_random_judgment_groups(tmp_path, seed):
    from .generate import qrels_jg_file

    rng = random.Random(seed)
    qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
    docs = [f"d{i}" for i in range(rng.randint(2, 12))]
    (tmp_path / "qrels").write_text(qrels_jg_file(rng, qids, docs))
    (tmp_path / "run").write_text(_run_for(rng, qids, docs))
    args = ["-m", "qrels_jg", "-q", "-R", "qrels_jg", *rng.choice([[], ["-J"], ["-M4"], ["-l2"]]),
            "qrels", "run"]
    assert BINARY is not None
    want = theirs(BINARY, args, cwd=tmp_path)
    got = ours(args, cwd=tmp_path)
    assert (got.status, got.first_error, got.stdout) == (want.status, want.first_error,
                                                         want.stdout)


def test_preference_conflict_aborts(tmp_path):
    # sub-group 1 prefers a to b, sub-group 2 b to a: trec_eval abort()s (status 134)
    (tmp_path / "prefs").write_text("q A 1 a 2\nq A 1 b 1\nq A 2 b 2\nq A 2 a 1\n")
    (tmp_path / "run").write_text("q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    args = ["-m", "all_prefs", "-R", "prefs", "prefs", "run"]
    assert BINARY is not None
    want = theirs(BINARY, args, cwd=tmp_path)
    got = ours(args, cwd=tmp_path)
    assert want.status in (134, -6)  # abort: 128 + SIGABRT, or -6 from subprocess
    assert got.status == 134
    assert got.stderr.splitlines()[:2] == want.stderr.splitlines()[:2]


ZSCORES = "1 map 0.1 0.2\n1 P_5 0.2 0\n1 num_ret 1 1\n2 map 0.3 0.1\n2 P_10 0.05 0.5\n" \
          "3 P_5 0.2 0\n3 recip_rank 0.5 0.25\n"


@pytest.mark.parametrize("args", [
    ["-q", "-Z", "z", "-m", "map", "-m", "P.5,10", "-m", "num_ret", "-m", "recip_rank",
     "-m", "gm_map"],
    ["-q", "-Z", "z", "-m", "official"],
    ["-q", "-D", "0.2", "-m", "map", "-m", "num_q", "-m", "gm_map"],
    ["-c", "-D", "0.2", "-m", "map", "-m", "num_q", "-m", "gm_map", "-m", "num_rel"],
    ["-q", "-c", "-D", "0.4", "-m", "all_trec"],
])
def test_zscores_and_query_filter(tmp_path, args):
    (tmp_path / "z").write_text(ZSCORES)
    _compare(tmp_path, "1 0 a 1\n1 0 b 0\n2 0 a 2\n2 0 c 1\n3 0 d 1\n4 0 e 1\n",
             "1 Q0 a 1 0.5 r\n1 Q0 c 2 0.4 r\n2 Q0 c 1 0.9 r\n2 Q0 b 2 0.3 r\n3 Q0 a 1 0.1 r\n",
             args)
