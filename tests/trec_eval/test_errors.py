"""trec_eval's common errors: same exit status, same first stderr line.

The expected texts are trec_eval 10.0's (recorded from the binary in the
behaviour spec, see docs/trec_eval.md); when a trec_eval binary is available
each case is also run through it and must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .util import ours, reference_binary, theirs

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 d 0\n"
RUN = "q1 Q0 a 1 0.9 r1\nq1 Q0 b 2 0.8 r1\nq2 Q0 d 1 0.7 r1\nq2 Q0 a 2 0.5 r1\n"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return name


# (description, files {name: content}, args, status, first stderr line)
CASES = [
    ("unknown measure", {}, ["-m", "foo", "qrels", "run"], 1, "trec_eval: illegal measure 'foo'"),
    ("unknown measure with params", {}, ["-m", "foo.5", "qrels", "run"], 1,
     "trec_eval: illegal measure 'foo'"),
    ("empty parameters", {}, ["-m", "P.", "qrels", "run"], 1,
     "trec_eval: improper measure in parameter 'P'"),
    ("invalid option", {}, ["-a", "qrels", "run"], 1, "trec_eval: invalid option -- 'a'"),
    ("missing option value", {}, ["qrels", "run", "-m"], 1,
     "trec_eval: option requires an argument -- 'm'"),
    ("unrecognized long option", {}, ["--foo=3", "qrels", "run"], 1,
     "trec_eval: unrecognized option '--foo=3'"),
    ("ambiguous long option", {}, ["--R", "x", "qrels", "run"], 1,
     "trec_eval: option '--R' is ambiguous; possibilities: '--Rel_info_format' "
     "'--Results_format'"),
    ("flag given a value", {}, ["--help=3"], 1,
     "trec_eval: option '--help' doesn't allow an argument"),
    ("one file only", {"qrels": QRELS}, ["qrels"], 1,
     "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file"),
    ("missing qrels", {"run": RUN}, ["nope", "run"], 2,
     "trec_eval.get_qrels: Cannot read qrels file 'nope'"),
    ("empty qrels", {"qrels": "", "run": RUN}, ["qrels", "run"], 2,
     "trec_eval.get_qrels: Cannot read qrels file 'qrels'"),
    ("missing run", {"qrels": QRELS}, ["qrels", "nope"], 2,
     "trec_eval.get_results: Cannot read results file 'nope'"),
    ("malformed qrels line (3 fields)", {"qrels": "q1 0 a 1\nq1 0 b\n", "run": RUN},
     ["qrels", "run"], 2, "trec_eval.get_qrels: Malformed line 2"),
    ("malformed qrels line (5 fields)", {"qrels": "q1 0 a 1 x\n", "run": RUN},
     ["qrels", "run"], 2, "trec_eval.get_qrels: Malformed line 1"),
    ("blank qrels line", {"qrels": "q1 0 a 1\n\nq1 0 b 1\n", "run": RUN}, ["qrels", "run"], 2,
     "trec_eval.get_qrels: Malformed line 2"),
    # the second of two comment lines is parsed as data in trec_eval 10.0
    ("two comment lines in qrels", {"qrels": "# one\n# two\nq1 0 a 1\n", "run": RUN},
     ["qrels", "run"], 2, "trec_eval.get_qrels: Malformed line 1"),
    ("malformed run line", {"qrels": QRELS, "run": "\n# c\nq1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.8\n"},
     ["qrels", "run"], 2, "trec_eval.get_results: Malformed line 2"),
    ("duplicate document in run", {"qrels": QRELS, "run": RUN + "q1 Q0 a 3 0.1 r1\n"},
     ["qrels", "run"], 4,
     "trec_eval.form_res_qrels: duplicate docs atrec_eval: Can't calculate measure 'num_ret'"),
    ("duplicate document in qrels", {"qrels": QRELS + "q2 0 a 0\n", "run": RUN},
     ["qrels", "run"], 4, "trec_eval.form_res_rels: duplicate docs a"),
    ("qrels query missing from the run", {"qrels": QRELS + "q3 0 z 1\n", "run": RUN},
     ["qrels", "run"], 4, "trec_eval: result qid 'q3' not found in qrels"),
    ("negative cut-off", {"qrels": QRELS, "run": RUN}, ["-m", "P.0,5", "qrels", "run"], 2,
     "trec_eval: Negative cutoff detected"),
    ("repeated cut-off", {"qrels": QRELS, "run": RUN}, ["-m", "P.5,5", "qrels", "run"], 2,
     "trec_eval: duplicate cutoffs detected"),
    ("malformed pair parameters", {"qrels": QRELS, "run": RUN},
     ["-m", "ndcg.1=2,,3=4", "qrels", "run"], 2,
     "trec_eval: malformed pair parameters in '1=2,,3=4'"),
    ("utility needs four coefficients", {"qrels": QRELS, "run": RUN},
     ["-m", "utility.1,2", "qrels", "run"], 4,
     "trec_eval.calc_utility: improper number of coefficients"),
    ("bad rel_info format", {"qrels": QRELS, "run": RUN}, ["-R", "xyz", "qrels", "run"], 2,
     "trec_eval: Illegal rel_format 'xyz'"),
    ("bad results format", {"qrels": QRELS, "run": RUN}, ["-T", "xyz", "qrels", "run"], 2,
     "trec_eval: Illegal retrieval results format 'xyz'"),
    ("measure of another format", {"qrels": QRELS, "run": RUN},
     ["-m", "prefs_simp", "qrels", "run"], 4,
     "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results "
     "format not trec_results"),
    ("nothing evaluated", {"qrels": QRELS, "run": RUN}, ["-D", "0.zz", "qrels", "run"], 7,
     "trec_eval: No queries with both results and relevance info"),
    ("missing z-score file", {"qrels": QRELS, "run": RUN}, ["-Z", "nope", "qrels", "run"], 255,
     "trec_eval.get_zscores: Cannot read zscores file 'nope'"),
    ("first query judged only negatively", {"qrels": "q1 0 a -1\n", "run": RUN},
     ["qrels", "run"], 4, "trec_eval: Can't calculate measure 'num_ret'"),
    ("version", {}, ["-v"], 0, "trec_eval version 10.0-rc3"),
]


@pytest.mark.parametrize(("files", "args", "status", "first"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_status_and_first_stderr_line(tmp_path, files, args, status, first):
    for name, text in files.items():
        _write(tmp_path, name, text)
    got = ours(args, cwd=tmp_path)
    assert (got.status, got.first_error) == (status, first)
    binary = reference_binary()
    if binary is not None:
        want = theirs(binary, args, cwd=tmp_path)
        assert (got.status, got.first_error, got.stdout) == (
            want.status, want.first_error, want.stdout)


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
