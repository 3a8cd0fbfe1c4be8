"""Produce ``cases.jsonl.gz``: trec_eval 10.0's own output on generated cases.

The differential tests against the trec_eval binary need the binary; these
golden outputs let the same comparison run anywhere (``test_golden.py``).
How they were made, to remake them:

1. Build trec_eval 10.0 from its public source (github.com/usnistgov/trec_eval,
   the commit "Updating CHANGELOG for version 10.0", f4253652): ``make``.
2. ``TREC_EVAL_BIN=/path/to/trec_eval python tests/trec_eval/golden/make_golden.py``
   (from the repository root).

Each line of the file is one case: the input files (text), the arguments,
and what the binary printed (stdout, exit status as a shell reports it, so
an abort() is 134, and stderr), with how many stderr lines must agree. The
cases are first every one the differential tests compare with the binary
(``tests/trec_eval/cases.py``: ``test_golden.py`` fails when one is missing),
then more from the same seeded generators of ``tests/trec_eval/generate.py``
(ties, -0.0, graded and negative grades, queries missing on either side,
empty rankings, ids whose byte order differs from numeric order). Together
they cover -c, -J, -M, -l, -N, -n, -q, -R, -Z, -D, -h, -v, all_trec, official,
set, all_prefs, qrels_jg, ndcg gain parameters, relstring, z-scores, errors
and trec_eval's file-format quirks. Cases with ``"cwd": "conformance"`` run
on the conformance files instead. The outputs are NIST's trec_eval's (see
``README.md`` here for their licence).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.trec_eval.cases import (  # noqa: E402
    Case,
    all_trec_flags,
    binary_cases,
    random_cases,
)
from tests.trec_eval.generate import (  # noqa: E402
    prefs_file,
    qrels_and_run,
    qrels_jg_file,
    run_for,
)
from tests.trec_eval.util import case_folder, theirs  # noqa: E402

OUT = HERE / "cases.jsonl.gz"


def _bulk(rng: random.Random, complete: bool) -> tuple[str, str]:
    """Many queries: ties, -0.0, negative and graded grades, queries missing on either side."""
    docs = [f"d{i}" for i in range(300)] + ["D1", "a", "B", "b", "Ab", "d1x"]
    qrels: list[str] = []
    run: list[str] = []
    for q in [f"q{i}" for i in range(150)] + [str(i) for i in range(40)]:
        in_qrels, in_run = rng.random() < 0.93, complete or rng.random() < 0.9
        if in_qrels or not in_run:
            levels = rng.choice([[0, 1], [0, 1, 2], [-1, 0, 1, 2, 3], [0, 1, 2, 3, 4], [-2, 0, 2]])
            grades = [(d, rng.choice(levels)) for d in rng.sample(docs, rng.randint(1, 60))]
            if max(g for _, g in grades) < 0:
                grades[0] = (grades[0][0], 0)
            qrels += [f"{q} 0 {d} {g}" for d, g in grades]
        if in_run:
            ranked = rng.sample(docs, rng.choice([1, 3, 10, 50, 200]))
            run += [f"{q} Q0 {d} {i} {rng.choice([rng.randint(-3, 10) / 4, rng.random(), -0.0])} r"
                    for i, d in enumerate(ranked)]
    rng.shuffle(qrels)
    rng.shuffle(run)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _more_cases() -> list[Case]:
    """Cases beyond the differential tests': more seeds, gain parameters, bulk, errors."""
    cases: list[Case] = []

    def add(kind: str, files: dict[str, str], args: list[str]) -> None:
        cases.append(Case(kind, tuple(args), files))

    cases += random_cases("random_small", range(300))
    cases += random_cases("random_long", range(1000, 1060), n_docs=300)
    cases += all_trec_flags(range(2000, 2060), with_n=True)
    gains = ["ndcg.1=3,2=9", "ndcg.0=-1,3=2", "ndcg_rel.1=0,2=1", "Rndcg.2=0.5", "G.0=1,2=0.5",
             "rbp.1=2,2=0.5,p=0.7", "ndcg_cut.1,3,7", "ideal_dcg.2=5", "dcg.1=0.5"]
    for seed in range(3000, 3060):
        rng = random.Random(seed)
        qrels, run = qrels_and_run(rng, n_docs=60)
        args = ["-q", "-m", gains[seed % len(gains)], *rng.choice([[], ["-c"], ["-J"], ["-M5"]])]
        add("gain_params", {"qrels": qrels, "run": run}, [*args, "qrels", "run"])
    for seed in range(60):
        rng = random.Random(seed)
        qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
        docs = [f"d{i}" for i in range(rng.randint(2, 9))]
        qrels_prefs = seed % 3 == 0
        fmt = "qrels_prefs" if qrels_prefs else "prefs"
        files = {"prefs": prefs_file(rng, qids, docs, qrels_prefs),
                 "run": run_for(rng, qids, docs)}
        args = ["-m", "all_prefs", "-q", "-R", fmt, *(["-M3"] if seed % 4 == 1 else []),
                "prefs", "run"]
        add("prefs", files, args)
    for seed in range(60):
        rng = random.Random(seed)
        qids = rng.sample(["1", "2", "10", "x"], rng.randint(1, 3))
        docs = [f"d{i}" for i in range(rng.randint(2, 12))]
        files = {"qrels": qrels_jg_file(rng, qids, docs), "run": run_for(rng, qids, docs)}
        args = ["-m", "qrels_jg", "-q", "-R", "qrels_jg",
                *rng.choice([[], ["-J"], ["-M4"], ["-l2"], ["-c"]]), "qrels", "run"]
        add("qrels_jg", files, args)
    quirks_qrels = "q1\t0\ta\t1.9\r\nq1 0 b  0\n#c\nq1 0 c +2\nq2 0 a 1x\n"
    quirks_run = (" q1 Q0 a 1 0.5 tag extra fields\n\n# comment\nq1\tQ0\tb\t2\t0.5abc\tt\n"
                  "q1 Q0 c 3 1e-1 t\nq2 Q0 a 1 inf t\nq2 Q0 z 2 -inf t\n")
    for args in (["-q", "-m", "all_trec"], ["-q", "-c", "-J", "-m", "official"]):
        add("file_quirks", {"qrels": quirks_qrels, "run": quirks_run}, [*args, "qrels", "run"])
    errors = [
        ("q1 0 a 1\nq1 0 a 0\n", "q1 Q0 a 1 1 r\n"),  # duplicate judgment
        ("q1 0 a 1\nq2 0 b 1\n", "q1 Q0 a 1 1 r\nq1 Q0 a 2 0.5 r\nq2 Q0 b 1 1 r\n"),
        ("q1 0 a 1\nq2 0 b 1\n", "q2 Q0 b 1 1 r\n"),  # q1 missing, no -c: exit 4
        ("q1 0 a\n", "q1 Q0 a 1 1 r\n"),  # malformed qrels line
        ("q1 0 a 1\n", "q1 Q0 a 1 r\n"),  # malformed run line
    ]
    for i, (qrels, run) in enumerate(errors):
        add("errors", {"qrels": qrels, "run": run}, ["-q", "-m", "map", "qrels", "run"])
        add("errors", {"qrels": qrels, "run": run}, ["-c", "-m", "P.1", "qrels", "run"])
        del i
    zscores = ("1 map 0.1 0.2\n1 P_5 0.2 0\n1 num_ret 1 1\n2 map 0.3 0.1\n2 P_10 0.05 0.5\n"
               "3 P_5 0.2 0\n3 recip_rank 0.5 0.25\n")
    small = ("1 0 a 1\n1 0 b 0\n2 0 a 2\n2 0 c 1\n3 0 d 1\n4 0 e 1\n",
             "1 Q0 a 1 0.5 r\n1 Q0 c 2 0.4 r\n2 Q0 c 1 0.9 r\n2 Q0 b 2 0.3 r\n3 Q0 a 1 0.1 r\n")
    for args in (["-q", "-Z", "z", "-m", "map", "-m", "P.5,10", "-m", "num_ret", "-m", "gm_map"],
                 ["-q", "-Z", "z", "-m", "official"], ["-q", "-c", "-D", "0.4", "-m", "all_trec"],
                 ["-c", "-D", "0.2", "-m", "map", "-m", "num_q", "-m", "gm_map", "-m", "num_rel"]):
        add("zscores", {"qrels": small[0], "run": small[1], "z": zscores}, [*args, "qrels", "run"])
    bulk_flags = (["-c"], ["-c", "-J"], ["-c", "-M20", "-l2"], ["-c", "-l0", "-N", "900"],
                  ["-c", "-J", "-M7"], [])
    for seed, args in enumerate(bulk_flags):
        qrels, run = _bulk(random.Random(4000 + seed), complete=not args)
        add("bulk", {"qrels": qrels, "run": run}, ["-q", "-m", "all_trec", *args, "qrels", "run"])
    for args in (["-m", "all_trec", "-q", "-J"], ["-m", "all_trec", "-l3", "-M5"],
                 ["-m", "all_trec", "-q", "-c", "-J", "-M50"], ["-m", "yaap", "-m", "dcg", "-q"],
                 ["-m", "all_trec", "-N", "100000", "-n", "-q"], ["-m", "set", "-q", "-l0"]):
        for qrels, run in (("qrels.test", "results.test"), ("qrels.rel_level", "results.trunc")):
            cases.append(Case("conformance_flags", (*args, qrels, run), cwd="conformance"))
    return cases


def _cases() -> list[Case]:
    """Every case of the differential tests, then the others (each invocation once)."""
    seen: set[str] = set()
    out: list[Case] = []
    for case in [*binary_cases(), *_more_cases()]:
        if case.key not in seen:
            seen.add(case.key)
            out.append(case)
    return out


def main() -> None:
    binary = os.environ.get("TREC_EVAL_BIN")
    if not binary:
        raise SystemExit("set TREC_EVAL_BIN to a trec_eval 10.0 binary")
    out: list[str] = []
    for case in _cases():
        with tempfile.TemporaryDirectory() as tmp:
            answer = theirs(binary, list(case.args),
                            cwd=case_folder(case.files, case.cwd, Path(tmp)))
        record = {"kind": case.kind, "args": list(case.args), "files": case.files,
                  "stderr_lines": case.stderr_lines, "status": answer.status,
                  "stdout": answer.stdout, "stderr": answer.stderr}
        if case.cwd:
            record["cwd"] = case.cwd
        out.append(json.dumps(record, sort_keys=True))
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write(("\n".join(out) + "\n").encode())


if __name__ == "__main__":
    main()
