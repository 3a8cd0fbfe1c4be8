"""A track's worth of runs: one qrels, seventeen runs, every tool evaluating all of them.

TREC organisers and researchers evaluate many runs against one qrels (issue
30, section 3: the 17 TREC 2003 Robust submissions, 1.5 million lines, seven
measures). Those files are not redistributable, so :func:`ensure_track` writes
a seeded stand-in of the same size and texture:

* 250 topics numbered as Robust's (301-450, 601-700: unpadded numbers, byte
  order not numeric order);
* document ids in the formats of TREC disks 4 and 5 (``FBIS3-10082``,
  ``FT921-4712``, ``LA010189-0001``, ``FR940104-0-00001``), drawn per topic
  from a pool of 3,000 candidates with a hidden grade (0, 1 or 2);
* 17 runs of different quality and depth (1,000 documents a topic for some,
  50-500 for others, fewer on some topics: about 350 a topic on average, 1.5
  million lines in all), each written as a different system writes: scores
  with four or two decimals, whole numbers (many ties), scientific notation,
  negative log-probabilities, ``1000 - rank``; the rank column right, all
  ``0`` or all ``1``; ``Q0`` or ``0``; tabs in one run; one run ordered by
  document id within a topic instead of by score;
* one qrels of about 100 judgments a topic: the pool of the runs' first
  ranks (deepened per topic until it holds about 90 documents) plus a few
  documents no run retrieved, graded with the hidden grades.

``python benchmarks/track.py`` measures the scenario: the trec_eval binary run
once per file (a shell loop, as organisers script it), one ``rankscope
evaluate`` over the 17 runs (and ``rankscope compare`` and ``rankscope
report`` on them), and pytrec_eval, ranx and ir_measures each evaluating the
17 runs in one process (reading the qrels once); every tool's means are
checked against the binary's, run by run. See benchmarks/README.md.

The Python commands run with their bytecode compiled once and kept (in
``data/pycache``, by an untimed warm-up run of each), as an installed package
has it: where ``PYTHONDONTWRITEBYTECODE`` is set (this sandbox sets it) an
editable checkout would otherwise compile every rankscope module again in
every run, 0.1-0.15 s of CPU a command that no installed copy spends.
``--bytecode environment`` measures as the environment has it.

``--realtime`` runs every measured command (the binary's loop too) under
``chrt -r 10``: round-robin real-time priority, so on a machine shared with
other work the commands take both cores as on a quiet machine (the kernel
keeps 5 % of each second for the rest; it needs the right to set it, root
here). Under a load of 5-8 the rounds then spread by about 0.05 s instead of
0.5 s; the figures are a quiet machine's approximation, not a replacement.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent

TOPICS = np.concatenate([np.arange(301, 451), np.arange(601, 701)])
CANDIDATES = 3000  # documents per topic a system may retrieve
POOL_TARGET = 90  # pooled documents per topic (plus a few never retrieved: ~100 judged)

# the seven measures, in each tool's spelling (the same order)
MEASURES: dict[str, list[str]] = {
    "trec_eval": ["map", "P.10", "ndcg_cut.20", "recip_rank", "bpref", "Rprec", "recall.1000"],
    "rankscope": ["map", "P_10", "ndcg_cut_20", "recip_rank", "bpref", "Rprec", "recall_1000"],
    "ranx": ["map", "precision@10", "ndcg@20", "mrr", "bpref", "r-precision", "recall@1000"],
    "ir_measures": ["AP", "P@10", "nDCG@20", "RR", "Bpref", "Rprec", "R@1000"],
}
LABELS = MEASURES["rankscope"]
TREC_KEYS = [m.replace(".", "_") for m in MEASURES["trec_eval"]]


@dataclass(frozen=True)
class System:
    """How one run is made and written."""

    quality: float  # weight of the hidden grade in the score (noise has weight 1)
    depth: int  # documents per topic at most
    short: float  # share of topics answered with fewer documents
    score: str  # "4dp", "2dp", "int", "sci", "logp", "rank"
    rank: str  # "right", "zero", "one"
    q0: str = "Q0"
    sep: str = " "
    by_doc: bool = False  # lines of a topic ordered by document id, not by score


SYSTEMS = [
    System(1.10, 1000, 0.00, "4dp", "right"),
    System(0.95, 500, 0.10, "4dp", "right"),
    System(0.80, 1000, 0.00, "sci", "right"),
    System(1.25, 500, 0.05, "logp", "right", q0="0"),
    System(0.60, 200, 0.20, "2dp", "zero"),
    System(1.00, 500, 0.10, "4dp", "right", sep="\t"),
    System(0.90, 200, 0.00, "rank", "right"),
    System(0.70, 300, 0.30, "4dp", "one"),
    System(1.05, 300, 0.00, "2dp", "right"),
    System(0.50, 200, 0.10, "int", "right"),
    System(0.85, 200, 0.20, "4dp", "right", by_doc=True),
    System(1.15, 100, 0.00, "4dp", "right"),
    System(0.75, 100, 0.30, "sci", "zero", q0="0"),
    System(0.65, 100, 0.00, "2dp", "right"),
    System(0.95, 100, 0.10, "logp", "right"),
    System(0.40, 50, 0.00, "int", "right"),
    System(1.20, 1000, 0.05, "4dp", "right"),
]

_COLLECTIONS = ("fbis", "ft", "la", "fr")


def _doc_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` distinct document ids in the formats of TREC disks 4 and 5."""
    out: set[str] = set()
    while len(out) < n:
        kind = _COLLECTIONS[int(rng.integers(len(_COLLECTIONS)))]
        a, b, c = (int(x) for x in rng.integers(1, 10_000, size=3))
        if kind == "fbis":
            out.add(f"FBIS{3 + a % 2}-{a * 7 % 60_000 + b % 10}")
        elif kind == "ft":
            out.add(f"FT9{1 + a % 4}{1 + b % 2}-{c * 3 + a % 3}")
        elif kind == "la":
            out.add(f"LA{1 + a % 12:02d}{1 + b % 28:02d}{89 + c % 2}-{c:04d}")
        else:
            out.add(f"FR94{1 + a % 12:02d}{1 + b % 28:02d}-{c % 3}-{a:05d}")
    return np.array(sorted(out), dtype=object)[rng.permutation(n)]


def _score_text(system: System, scores: np.ndarray, ranks: np.ndarray) -> list[str]:
    if system.score == "4dp":
        return [f"{s:.4f}" for s in scores]
    if system.score == "2dp":
        return [f"{s:.2f}" for s in scores]
    if system.score == "int":
        return [str(int(np.floor(s))) for s in scores]
    if system.score == "sci":
        return [f"{s / 10:.6e}" for s in scores]
    if system.score == "logp":
        return [f"{s - 30:.5f}" for s in scores]
    return [str(1000 - int(r)) for r in ranks]


def _write_run(path: Path, tag: str, system: System, topics: list[tuple[str, np.ndarray,
                                                                        np.ndarray]]) -> int:
    lines = []
    for topic, docs, scores in topics:
        ranks = np.arange(1, docs.size + 1)
        if system.score == "int":  # ties: whole numbers, as a boolean or count-based system
            scores = np.floor(scores * 2)
        texts = _score_text(system, scores, ranks)
        rank_text = ([str(r) for r in ranks] if system.rank == "right" else
                     ["0" if system.rank == "zero" else "1"] * docs.size)
        order = np.argsort(docs, kind="stable") if system.by_doc else np.arange(docs.size)
        sep = system.sep
        lines.extend(sep.join((topic, system.q0, docs[i], rank_text[i], texts[i], tag))
                     for i in order)
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def track_paths(root: Path, seed: int) -> tuple[Path, list[Path]]:
    base = root / f"track_s{seed}"
    return base / "qrels.txt", [base / f"run{i + 1:02d}.txt" for i in range(len(SYSTEMS))]


def ensure_track(root: Path, seed: int = 42) -> tuple[Path, list[Path]]:
    """Write (once) and return the qrels and the 17 run files of the track."""
    qrels_path, run_paths = track_paths(root, seed)
    if qrels_path.exists() and all(p.exists() for p in run_paths):
        return qrels_path, run_paths
    qrels_path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    per_topic = []
    for _ in TOPICS:
        docs = _doc_ids(rng, CANDIDATES)
        grade = rng.choice(3, size=CANDIDATES, p=[0.94, 0.045, 0.015])
        per_topic.append((docs, grade, rng.normal(size=CANDIDATES) * 0.3))
    runs: list[list[tuple[str, np.ndarray, np.ndarray]]] = []
    for s, system in enumerate(SYSTEMS):
        srng = np.random.default_rng(seed * 1000 + s)
        topics = []
        for t, topic in enumerate(TOPICS):
            docs, grade, ease = per_topic[t]
            depth = system.depth
            if srng.random() < system.short:
                depth = int(srng.integers(1, depth + 1))
            score = system.quality * (grade + ease) + srng.normal(size=CANDIDATES)
            top = np.argsort(-score, kind="stable")[:depth]
            value = np.round(10 + 3 * score[top], 6)
            topics.append((str(topic), top, value))
        runs.append(topics)
    # the pool: every run's first ranks, deepened per topic to about POOL_TARGET documents
    qlines = []
    for t, topic in enumerate(TOPICS):
        docs, grade, _ = per_topic[t]
        pooled: set[int] = set()
        depth = 1
        while len(pooled) < POOL_TARGET and depth <= 1000:
            for topics in runs:
                pooled.update(int(i) for i in topics[t][1][:depth])
            depth += 1
        extra = rng.choice(CANDIDATES, size=12, replace=False)
        judged = sorted(pooled | {int(i) for i in extra}, key=lambda i: docs[i])
        qlines.extend(f"{topic} 0 {docs[i]} {grade[i]}" for i in judged)
    qrels_path.write_text("\n".join(qlines) + "\n")
    for s, (system, topics) in enumerate(zip(SYSTEMS, runs, strict=True)):
        named = [(topic, per_topic[t][0][top], value)
                 for t, (topic, top, value) in enumerate(topics)]
        _write_run(run_paths[s], f"sys{s + 1:02d}", system, named)
    return qrels_path, run_paths


# -- the tools ------------------------------------------------------------------------------

sys.path.insert(0, str(HERE))
from run import rankscope_cmd, run_timed, warm_page_cache  # noqa: E402

TOLERANCE = 1e-4  # trec_eval prints four decimals


def _worker(tool: str, qrels: str, runs: list[str]) -> None:
    """One Python library evaluating every run in one process, the qrels read once; prints
    ``{run file: {measure: mean}}`` as JSON (each tool's own readers)."""
    out: dict[str, dict[str, float]] = {}
    if tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as f:
            q = pytrec_eval.parse_qrel(f)
        evaluator = pytrec_eval.RelevanceEvaluator(q, set(MEASURES["trec_eval"]))
        for path in runs:
            with open(path) as f:
                per_query = evaluator.evaluate(pytrec_eval.parse_run(f))
            n = len(per_query)
            out[path] = {label: sum(v[key] for v in per_query.values()) / n
                         for label, key in zip(LABELS, TREC_KEYS, strict=True)}
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        rq = Qrels.from_file(qrels, kind="trec")
        for path in runs:
            got = evaluate(rq, Run.from_file(path, kind="trec"), MEASURES["ranx"])
            out[path] = {label: float(got[name])
                         for label, name in zip(LABELS, MEASURES["ranx"], strict=True)}
    elif tool == "ir_measures":
        import ir_measures

        iq = list(ir_measures.read_trec_qrels(qrels))
        measures = [ir_measures.parse_measure(m) for m in MEASURES["ir_measures"]]
        for path in runs:
            got = ir_measures.calc_aggregate(measures, iq, ir_measures.read_trec_run(path))
            out[path] = {label: float(got[m]) for label, m in zip(LABELS, measures, strict=True)}
    else:
        raise SystemExit(f"unknown tool {tool}")
    print(json.dumps(out))


def commands(qrels: Path, runs: list[Path], trec_eval: str, tmp: Path,
             tools: list[str]) -> dict[str, list[str]]:
    """Each variant's command line."""
    te_metrics = " ".join(f"-m {m}" for m in MEASURES["trec_eval"])
    loop = (f'for f in {" ".join(str(r) for r in runs)}; do echo "== $f"; '
            f'{trec_eval} {te_metrics} {qrels} "$f" || exit 1; done')
    ms = [a for m in LABELS for a in ("-m", m)]
    files = [str(r) for r in runs]
    rs = rankscope_cmd()
    out: dict[str, list[str]] = {
        "trec_eval loop": ["sh", "-c", loop],
        "rankscope evaluate": [*rs, "evaluate", str(qrels), *files, *ms, "-f", "json",
                               "--quiet", "--ci", "never"],
        "rankscope evaluate (largest run alone)": [
            *rs, "evaluate", str(qrels), str(max(runs, key=lambda p: p.stat().st_size)), *ms,
            "-f", "json", "--quiet", "--ci", "never"],
        "rankscope compare": [*rs, "compare", str(qrels), *files, *ms, "-f", "json"],
        "rankscope report --no-plots": [*rs, "report", str(qrels), *files, *ms, "--no-plots",
                                        "-o", str(tmp / "report.html")],
        "rankscope report": [*rs, "report", str(qrels), *files, *ms,
                             "-o", str(tmp / "report_plots.html")],
    }
    for tool in tools:
        out[tool] = [sys.executable, str(Path(__file__).resolve()), "--worker", tool,
                     str(qrels), *files]
    return out


def _trec_means(stdout: str, runs: list[Path]) -> dict[str, dict[str, float]]:
    means: dict[str, dict[str, float]] = {}
    current = ""
    for line in stdout.splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            means[current] = {}
            continue
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all" and parts[0] in TREC_KEYS:
            means[current][LABELS[TREC_KEYS.index(parts[0])]] = float(parts[2])
    return means


def means_of(variant: str, stdout: str, runs: list[Path]) -> dict[str, dict[str, float]] | None:
    """Every run's means (keyed by file) from a variant's output; None where none are printed."""
    if variant == "trec_eval loop":
        return _trec_means(stdout, runs)
    if variant.removesuffix(" (before)") in ("rankscope evaluate", "rankscope compare"):
        got = json.loads(stdout)["runs"]
        names = list(got)  # in the order of the files
        return {str(p): got[n]["mean"] for p, n in zip(runs, names, strict=True)}
    if variant in ("pytrec_eval", "ranx", "ir_measures"):
        parsed: dict[str, dict[str, float]] = json.loads(stdout)
        return parsed
    return None


def agreement(reference: dict[str, dict[str, float]],
              other: dict[str, dict[str, float]] | None) -> str:
    """The largest difference to the binary's means over every run and measure."""
    if other is None:
        return "-"
    worst, where = 0.0, ""
    for path, ref in reference.items():
        for label, value in ref.items():
            got = other.get(path, {}).get(label)
            if got is None:
                return f"missing {label} of {Path(path).name}"
            if abs(got - value) > worst:
                worst, where = abs(got - value), f"{label} of {Path(path).name}"
    return "same" if worst <= TOLERANCE else f"differs by {worst:.4f} ({where})"


def _bytecode(choice: str) -> str:
    """Set how the measured Python commands find their bytecode; returns what to print."""
    if choice == "environment":
        off = os.environ.get("PYTHONDONTWRITEBYTECODE")
        return ("compiled again in every run (PYTHONDONTWRITEBYTECODE set)" if off else
                "as the environment has it")
    # a cache of its own under data/ (never written into the source tree): compiled once by
    # the warm-up run, then read, as from an installed package's __pycache__
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(HERE / "data" / "pycache")
    return "cached (compiled by an untimed warm-up run, as an installed package has it)"


def realtime_prefix() -> list[str]:
    """``chrt -r 10``: a command run with it gets the cores as on a quiet machine (--realtime)."""
    chrt = shutil.which("chrt")
    if chrt is None or subprocess.run([chrt, "-r", "10", "true"], check=False).returncode != 0:
        raise SystemExit("--realtime: `chrt -r 10` cannot be run here (not installed, "
                         "or no right to set a real-time priority)")
    return [chrt, "-r", "10"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    p.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL_BIN")
                   or shutil.which("trec_eval") or "/tmp/tests-te/src/trec_eval")
    p.add_argument("--repeat", type=int, default=3, help="rounds (each variant in turn)")
    p.add_argument("--tools", default="pytrec_eval,ranx,ir_measures",
                   help="Python libraries beside rankscope ('' for none)")
    p.add_argument("--only", default="", help="comma-separated variants (default: all)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", type=Path, default=HERE / "data" / "track.json")
    p.add_argument("--bytecode", choices=("cached", "environment"), default="cached",
                   help="cached (default): the Python commands run with their bytecode "
                        "compiled once and kept, as an installed package has it (pip "
                        "compiles it at install), even where PYTHONDONTWRITEBYTECODE is set; "
                        "environment: as this environment says (with that variable set, "
                        "every rankscope module is compiled again in every run)")
    p.add_argument("--before", metavar="SRC",
                   help="also run each rankscope variant on the code in SRC (a src/ "
                        "directory, e.g. `git archive main src | tar -x -C /tmp/base`: "
                        "PYTHONPATH=SRC), in the same rounds, as '<variant> (before)'")
    p.add_argument("--realtime", action="store_true",
                   help="run every measured command under `chrt -r 10` (round-robin "
                        "real-time priority: the cores as on a quiet machine, where other "
                        "work shares them; needs the right to set it)")
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.worker[2:])
        return 0
    qrels, runs = ensure_track(HERE / "data", args.seed)
    lines = sum(r.read_bytes().count(b"\n") for r in runs)
    tmp = HERE / "data" / "track_out"
    tmp.mkdir(exist_ok=True)
    tools = [t for t in args.tools.split(",") if t]
    variants = commands(qrels, runs, args.trec_eval, tmp, tools)
    if args.only:
        keep = {v.strip() for v in args.only.split(",")} | {"trec_eval loop"}
        variants = {k: v for k, v in variants.items() if k in keep}
    if args.before:
        src = str(Path(args.before).resolve())
        paired: dict[str, list[str]] = {}
        for k, v in variants.items():  # each beside its own "before", in every round
            paired[k] = v
            if k.startswith("rankscope"):
                paired[f"{k} (before)"] = ["env", f"PYTHONPATH={src}", *v]
        variants = paired
    if args.realtime:
        prefix = realtime_prefix()
        variants = {k: [*prefix, *v] for k, v in variants.items()}
    bytecode = _bytecode(args.bytecode)
    if args.bytecode == "cached":  # untimed: compile and cache every module the commands use
        for name, cmd in variants.items():
            if name != "trec_eval loop":
                run_timed(cmd, timeout=1800)
    load_start = os.getloadavg()
    print(f"track: {len(runs)} runs, {lines:,} lines, {len(TOPICS)} topics; "
          f"load {load_start[0]:.2f}; bytecode: {bytecode}"
          f"{'; real-time round-robin (chrt -r 10)' if args.realtime else ''}", flush=True)
    timings: dict[str, list[dict[str, Any]]] = {k: [] for k in variants}
    means: dict[str, dict[str, dict[str, float]] | None] = {}
    for r in range(args.repeat):
        for name, cmd in variants.items():
            warm_page_cache(qrels, *runs)
            got = run_timed(cmd, timeout=1800)
            if "error" in got or got["returncode"] != 0:
                print(f"{name}: failed: {got.get('error') or got['stderr']}", file=sys.stderr)
                return 1
            timings[name].append(got)
            if r == 0:
                means[name] = means_of(name, got["stdout"], runs)
            print(f"  round {r + 1} {name}: {got['wall']:.2f} s, {got['peak_mb']:.0f} MB",
                  flush=True)
    reference = means["trec_eval loop"]
    if reference is None:
        raise SystemExit("the binary printed no means")
    base = min(t["wall"] for t in timings["trec_eval loop"])
    base_median = statistics.median(t["wall"] for t in timings["trec_eval loop"])
    rows = []
    for name, runs_t in timings.items():
        fastest = min(t["wall"] for t in runs_t)
        row = {"variant": name, "fastest_s": fastest,
               "median_s": statistics.median(t["wall"] for t in runs_t),
               "cpu_s": statistics.median(t["cpu"] for t in runs_t),
               "peak_mb": max(t["peak_mb"] for t in runs_t),
               "ratio": fastest / base,
               "ratio_median": statistics.median(t["wall"] for t in runs_t) / base_median,
               "numbers": agreement(reference, means.get(name))}
        rows.append(row)
    load_end = os.getloadavg()
    print(f"\nload average at start {load_start[0]:.2f}, at end {load_end[0]:.2f} "
          f"(1 min); {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| variant | fastest (s) | median (s) | CPU (s) | peak (MB) | / binary loop "
          "(fastest, median) | numbers vs binary |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['variant']} | {row['fastest_s']:.2f} | {row['median_s']:.2f} | "
              f"{row['cpu_s']:.2f} | {row['peak_mb']:.0f} | {row['ratio']:.2f} x, "
              f"{row['ratio_median']:.2f} x | {row['numbers']} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"lines": lines, "runs": len(runs),
                                     "load": [load_start, load_end], "bytecode": bytecode,
                                     "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
