"""Every case compared with the trec_eval 10.0 binary, in one list.

``test_binary_diff.py`` runs each case through the binary and through
``rankscope trec_eval`` when a binary is installed (``TREC_EVAL_BIN``);
``golden/make_golden.py`` records the binary's answers to the same cases (and
more), so ``test_golden.py`` compares them on every machine and checks that
no case here is missing from the golden file.

A case is its input files, its arguments and which part of stderr must agree:
the first line (errors), the first two (an ``abort()``, which also loses
trec_eval's buffered stdout), or all of it (``-h``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .generate import options, prefs_file, qrels_and_run, qrels_jg_file, run_for


@dataclass(frozen=True)
class Case:
    """One trec_eval invocation to compare."""

    kind: str
    args: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None  # "conformance": run in trec_eval's own test folder
    stderr_lines: int | None = 1  # how many stderr lines must agree (None: all)

    @property
    def key(self) -> str:
        """What identifies the invocation: files, arguments and folder."""
        return repr((sorted(self.files.items()), list(self.args), self.cwd))


QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 d 0\n"
RUN = "q1 Q0 a 1 0.9 r1\nq1 Q0 b 2 0.8 r1\nq2 Q0 d 1 0.7 r1\nq2 Q0 a 2 0.5 r1\n"

# trec_eval's common errors: (description, files, args, status, first stderr line), the
# expected texts recorded from the binary (test_errors.py checks them without it)
ERROR_CASES = [
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

# -h with measures of every kind: its whole stdout and stderr must agree
HELP_COMBOS = [
    ["-h"],
    ["-h", "-m", "all_trec"],
    ["-h", "-m", "official"],
    ["-h", "-m", "set"],
    ["-h", "-m", "all_prefs", "-R", "prefs"],
    ["-h", "-m", "prefs", "-R", "qrels_prefs"],
    ["-h", "-m", "qrels_jg", "-R", "qrels_jg"],
    ["-h", "-m", "all_trec", "-m", "all_prefs", "-m", "qrels_jg", "-m", "yaap", "-m", "dcg",
     "-m", "ideal_dcg"],
    ["-m", "P.5", "--help", "-T", "nope"],
    ["-h", "-R", "nope", "-m", "map"],
]

ZSCORES = "1 map 0.1 0.2\n1 P_5 0.2 0\n1 num_ret 1 1\n2 map 0.3 0.1\n2 P_10 0.05 0.5\n" \
          "3 P_5 0.2 0\n3 recip_rank 0.5 0.25\n"
SMALL_QRELS = "1 0 a 1\n1 0 b 0\n2 0 a 2\n2 0 c 1\n3 0 d 1\n4 0 e 1\n"
SMALL_RUN = "1 Q0 a 1 0.5 r\n1 Q0 c 2 0.4 r\n2 Q0 c 1 0.9 r\n2 Q0 b 2 0.3 r\n3 Q0 a 1 0.1 r\n"
QUIRKS_QRELS = "q1\t0\ta\t1.9\r\nq1 0 b  0\n#c\nq1 0 c +2\nq2 0 a 1x\n"
QUIRKS_RUN = (" q1 Q0 a 1 0.5 tag extra fields\n\n# comment\nq1\tQ0\tb\t2\t0.5abc\tt\n"
              "q1 Q0 c 3 1e-1 t\nq2 Q0 a 1 inf t\nq2 Q0 z 2 -inf t\n")


def _generated(kind: str, args: list[str], qrels: str, run: str) -> Case:
    return Case(kind, (*args, "qrels", "run"), {"qrels": qrels, "run": run})


def random_cases(kind: str, seeds: range, n_docs: int = 30) -> list[Case]:
    """Generated qrels and run with a random option set, one case per seed."""
    out = []
    for seed in seeds:
        rng = random.Random(seed)
        qrels, run = qrels_and_run(rng, n_docs=n_docs)
        out.append(_generated(kind, options(rng), qrels, run))
    return out


def all_trec_flags(seeds: range, *, with_n: bool = False) -> list[Case]:
    """-m all_trec -q -c with -M, -l, -J on odd seeds (and -N on every third, ``with_n``)."""
    out = []
    for seed in seeds:
        rng = random.Random(seed)
        qrels, run = qrels_and_run(rng, n_docs=80)
        args = ["-m", "all_trec", "-q", "-c", f"-M{rng.randint(1, 40)}", f"-l{rng.randint(0, 3)}"]
        if seed % 2:
            args.append("-J")
        if with_n and seed % 3 == 0:
            args += ["-N", str(rng.choice([50, 1000]))]
        out.append(_generated("all_trec_flags", args, qrels, run))
    return out


def _preferences() -> list[Case]:
    out = []
    for seed in range(40):
        rng = random.Random(seed)
        qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
        docs = [f"d{i}" for i in range(rng.randint(2, 9))]
        qrels_prefs = seed % 3 == 0
        files = {"prefs": prefs_file(rng, qids, docs, qrels_prefs),
                 "run": run_for(rng, qids, docs)}
        fmt = "qrels_prefs" if qrels_prefs else "prefs"
        args = ("-m", "all_prefs", "-q", "-R", fmt, *(["-M3"] if seed % 4 == 1 else []),
                "prefs", "run")
        out.append(Case("prefs", args, files))
    # sub-group 1 prefers a to b, sub-group 2 b to a: trec_eval abort()s (status 134)
    out.append(Case("prefs_abort", ("-m", "all_prefs", "-R", "prefs", "prefs", "run"),
                    {"prefs": "q A 1 a 2\nq A 1 b 1\nq A 2 b 2\nq A 2 a 1\n",
                     "run": "q Q0 a 1 2 r\nq Q0 b 2 1 r\n"}, stderr_lines=2))
    return out


def _judgment_groups() -> list[Case]:
    out = []
    for seed in range(40):
        rng = random.Random(seed)
        qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
        docs = [f"d{i}" for i in range(rng.randint(2, 12))]
        files = {"qrels": qrels_jg_file(rng, qids, docs), "run": run_for(rng, qids, docs)}
        args = ("-m", "qrels_jg", "-q", "-R", "qrels_jg",
                *rng.choice([[], ["-J"], ["-M4"], ["-l2"]]), "qrels", "run")
        out.append(Case("qrels_jg", args, files))
    return out


CONFORMANCE_FLAGS = [
    ["-m", "all_trec", "-q", "-J"], ["-m", "all_trec", "-l3", "-M5"],
    ["-m", "all_trec", "-q", "-c", "-J", "-M50"], ["-m", "yaap", "-m", "dcg", "-q"],
    ["-m", "all_trec", "-N", "100000", "-n", "-q"],
]
ZSCORE_ARGS = [
    ["-q", "-Z", "z", "-m", "map", "-m", "P.5,10", "-m", "num_ret", "-m", "recip_rank",
     "-m", "gm_map"],
    ["-q", "-Z", "z", "-m", "official"],
    ["-q", "-D", "0.2", "-m", "map", "-m", "num_q", "-m", "gm_map"],
    ["-c", "-D", "0.2", "-m", "map", "-m", "num_q", "-m", "gm_map", "-m", "num_rel"],
    ["-q", "-c", "-D", "0.4", "-m", "all_trec"],
]


def binary_cases() -> list[Case]:
    """Every case ``test_binary_diff.py`` compares with the binary."""
    cases = [*random_cases("random_small", range(120)),
             *random_cases("random_long", range(1000, 1030), n_docs=300),
             *all_trec_flags(range(2000, 2020)),
             Case("file_quirks", ("-q", "-m", "all_trec", "qrels", "run"),
                  {"qrels": QUIRKS_QRELS, "run": QUIRKS_RUN})]
    for args in CONFORMANCE_FLAGS:
        for qrels, run in (("qrels.test", "results.test"), ("qrels.rel_level", "results.trunc")):
            cases.append(Case("conformance_flags", (*args, qrels, run), cwd="conformance"))
    cases += _preferences() + _judgment_groups()
    files = {"qrels": SMALL_QRELS, "run": SMALL_RUN, "z": ZSCORES}
    cases += [Case("zscores", (*args, "qrels", "run"), files) for args in ZSCORE_ARGS]
    cases += [Case("errors", tuple(args), files) for _, files, args, _, _ in ERROR_CASES]
    cases += [Case("help", tuple(args), stderr_lines=None) for args in HELP_COMBOS]
    return cases
