"""Seeded random qrels, runs and trec_eval option sets for differential tests.

The data has what trips evaluation code: score ties (scores are multiples of
1/64, so they are also exact in float32 for pytrec_eval), -0.0, graded and
negative labels, large labels, ids whose byte order differs from their
numeric or case-folded order, queries missing on either side, empty and short
rankings. Option sets avoid the combinations where trec_eval 10.0 reads
uninitialised memory (see docs/trec_eval.md): gain parameters on more than
one of dcg/ideal_dcg/ndcg, and rbp after a measure other than those of
all_trec.
"""

from __future__ import annotations

import random

QIDS = ["1", "2", "10", "9", "q1", "Q1", "a", "ab", "b", "301", "30"]
LEVEL_SETS = [[0, 1], [0, 1, 2], [-1, 0, 1, 2, 3], [0, 1, 2, 3, 4, 12], [-2, 0, 2]]
MEASURES = [
    "all_trec", "official", "set", "ndcg.1=3,2=9", "ndcg.1=2.5", "ndcg", "ndcg_rel",
    "Rndcg.2=0.5", "G.0=1,2=0.5", "Rndcg.2=1,1=2", "11pt_avg..25,.5,.75", "11pt_avg..5,.25",
    "iprec_at_recall..1,.25,0,1.5", "Rprec_mult.0.5,1.5", "utility.2,-1,1,0.5", "relstring.3",
    "dcg", "ideal_dcg", "ndcg_rel.1=0,2=1", "G", "Rndcg", "ndcg_cut.1,3,7", "map_cut.2,4",
    "P.1,2,50", "unj.1,3", "set_F.0.25", "ndcg.0=-1,3=2", "binG", "infAP", "bpref",
    "gm_bpref", "success.1,2", "yaap",
]
RBP = ["rbp.p=0.5", "rbp.1=-1", "rbp.1=2,2=0.5,p=0.7", "rbp", "rbp.0=-1"]


def qrels_and_run(rng: random.Random, n_docs: int = 30) -> tuple[str, str]:
    """A qrels file and a run file (as text) for a few random queries."""
    qids = rng.sample(QIDS, rng.randint(1, 6))
    pool = [f"d{i}" for i in range(rng.randint(3, n_docs))] + ["D1", "a", "B", "b", "Ab", "d1x"]
    levels = rng.choice(LEVEL_SETS)
    qrels: list[str] = []
    run: list[str] = []
    for q in qids:
        in_qrels, in_run = rng.random() < 0.9, rng.random() < 0.9
        if in_qrels or not in_run:
            docs = rng.sample(pool, rng.randint(1, len(pool)))
            grades = [rng.choice(levels) for _ in docs]
            if max(grades) < 0 and not (max(grades) == -1 and rng.random() < 0.3):
                grades[0] = 0  # trec_eval crashes on some all-negative queries
            qrels += [f"{q} 0 {d} {g}" for d, g in zip(docs, grades, strict=True)]
        if in_run:
            for i, d in enumerate(rng.sample(pool, rng.randint(0, len(pool)))):
                s = rng.choice([rng.randint(-3, 10) / 4, rng.randint(0, 64) / 64, 1.0, -0.0])
                run.append(f"{q} Q0 {d} {i} {s} run{rng.randint(1, 3)}")
    if not run:
        run.append(f"{qids[0]} Q0 zz 1 1 runX")
    if not qrels:
        qrels.append(f"{qids[0]} 0 zz 1")
    rng.shuffle(run)
    rng.shuffle(qrels)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def options(rng: random.Random) -> list[str]:
    """A random, well-defined set of trec_eval options."""
    args: list[str] = []
    if rng.random() < 0.15:
        args += ["-m", rng.choice(RBP)]
        if rng.random() < 0.5:
            args += ["-m", "all_trec"]
    else:
        chosen = [rng.choice(MEASURES) for _ in range(rng.randint(1, 3))]
        family = [m for m in chosen if m.split(".")[0] in ("dcg", "ideal_dcg", "ndcg")]
        if len(family) > 1 and any("." in m for m in family):
            chosen = [m for m in chosen if m not in family] + [family[0]]
        if "all_trec" in chosen and "yaap" in chosen:
            chosen.remove("yaap")  # rbp right after yaap is undefined in trec_eval
        for m in chosen:
            args += ["-m", m]
    for flag, chance in (("-q", 0.5), ("-c", 0.4), ("-J", 0.3), ("-n", 0.1)):
        if rng.random() < chance:
            args.append(flag)
    if rng.random() < 0.3:
        args.append(f"-l{rng.choice([0, 1, 2, 3, -1])}")
    if rng.random() < 0.3:
        args.append(f"-M{rng.choice([0, 1, 2, 5, 10])}")
    if rng.random() < 0.2:
        args += ["-N", str(rng.choice([0, 100]))]
    return args


def prefs_file(rng: random.Random, qids: list[str], docs: list[str], qrels_prefs: bool) -> str:
    """A random prefs (or qrels_prefs) file over ``qids`` and ``docs``."""
    lines: list[str] = []
    for q in qids:
        for jg in rng.sample(["A", "B", "c"], rng.randint(1, 3)):
            jsgs = ["0"] if qrels_prefs else rng.sample(["1", "2", "x"], rng.randint(1, 3))
            # mostly one level per document in a JG: sub-groups then agree
            fixed = {d: rng.choice([0, 0, 1, 2, 0.5, 3]) for d in docs}
            for jsg in jsgs:
                for d in rng.sample(docs, rng.randint(1, min(6, len(docs)))):
                    level = fixed[d] if rng.random() < 0.9 else rng.choice([0, 1, 2, 0.5, 3])
                    if qrels_prefs:
                        lines.append(f"{q} {jg} {d} {level}")
                    else:
                        lines.append(f"{q} {jg} {jsg} {d} {level}")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def run_for(rng: random.Random, qids: list[str], docs: list[str]) -> str:
    """A run ranking a random subset of ``docs`` for each of ``qids`` (scores tie often)."""
    lines = [f"{q} Q0 {d} {i} {rng.randint(0, 16) / 8} r"
             for q in qids for i, d in enumerate(rng.sample(docs, rng.randint(1, len(docs))))]
    return "\n".join(lines) + "\n"


def qrels_jg_file(rng: random.Random, qids: list[str], docs: list[str]) -> str:
    """A random qrels_jg file: several judgment groups per query."""
    lines: list[str] = []
    for q in qids:
        for jg in rng.sample(["u1", "u2", "U3"], rng.randint(1, 3)):
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                lines.append(f"{q} {jg} {d} {rng.choice([0, 1, 2, -1])}")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def as_dicts(qrels: str, run: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The generated files as ``{query: {doc: grade}}`` and ``{query: {doc: score}}``."""
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    ranked: dict[str, dict[str, float]] = {}
    for line in run.splitlines():
        q, _, d, _, s, _ = line.split()
        ranked.setdefault(q, {})[d] = float(s)
    return judged, ranked
