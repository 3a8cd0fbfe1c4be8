"""Every fusion method against ranx itself on seeded generated runs (CI installs ranx).

ranx compiles its numba kernels on first use (a minute or two in a fresh environment), so
this is one slow test that fuses every method once. The generated runs have distinct
scores (ranx's order of tied scores is not defined), queries every run holds (ranx
requires it) and rankings of different lengths; the qrels judge some retrieved and some
unretrieved documents.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.fusion.combine import fuse

ranx = pytest.importorskip("ranx")


def _generate(seed: int) -> tuple[list[dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    pool = [f"d{i:03d}" for i in range(60)]
    queries = [f"q{i}" for i in range(12)]
    runs = []
    for _ in range(3):
        run = {}
        for q in queries:
            depth = int(rng.integers(1, 40))
            docs = rng.choice(pool, size=depth, replace=False)
            scores = rng.permutation(depth) + rng.random() + 1.0  # distinct, positive
            run[q] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    qrels = {q: {str(d): int(rng.integers(0, 3))
                 for d in rng.choice(pool, size=25, replace=False)} for q in queries}
    return runs, qrels


@pytest.mark.slow
def test_every_method_equals_ranx_on_generated_runs() -> None:
    from ranx import Qrels as RQrels
    from ranx import Run as RRun
    from ranx import fuse as rfuse
    from ranx import fusion as rf

    runs, qrels = _generate(7)
    rq = RQrels(qrels)
    weights = [0.5, 0.2, 0.3]
    cases: list[tuple[str, str, dict[str, object], dict[str, object]]] = [
        # (rankscope method, ranx method, rankscope params, ranx params)
        ("rrf", "rrf", {"k": 10}, {"k": 10}),
        ("combsum", "sum", {}, {}), ("combmnz", "mnz", {}, {}), ("combmax", "max", {}, {}),
        ("combmin", "min", {}, {}), ("combmed", "med", {}, {}), ("combanz", "anz", {}, {}),
        ("wsum", "wsum", {"weights": weights}, {"weights": weights}),
        ("combgmnz", "gmnz", {"gamma": 0.3}, {"gamma": 0.3}),
        ("wmnz", "wmnz", {"weights": weights}, {"weights": weights}),
        ("mixed", "mixed", {"weights": weights}, {"weights": weights}),
        ("isr", "isr", {}, {}), ("log_isr", "log_isr", {}, {}),
        ("logn_isr", "logn_isr", {"sigma": 0.2}, {"sigma": 0.2}),
        ("bordafuse", "bordafuse", {}, {}),
        ("w_bordafuse", "w_bordafuse", {"weights": weights}, {"weights": weights}),
        ("rbc", "rbc", {"phi": 0.7}, {"phi": 0.7}),
    ]
    for norm in ("min-max", "zmuv", "sum", "max", "rank", "min-max-inverted"):
        for ours, theirs, params, their_params in cases:
            expected = rfuse([RRun(r) for r in runs], norm=norm, method=theirs,
                             params=their_params).to_dict()
            got = fuse(runs, method=ours, norm=norm, **params).to_dict()  # type: ignore[arg-type]
            assert set(got) == set(expected), (ours, norm)
            for q in expected:
                assert got[q] == pytest.approx(expected[q], rel=1e-9, abs=1e-12), (ours, norm, q)
    # Condorcet: ranx gives a document a run lacks rank 1,000,000 and, when a run lacks
    # both documents of a pair, its vote to the second one compared, so its order then
    # depends on its candidates' set order; rankscope's run abstains. On runs that rank
    # the same documents, with an odd number of runs (no tied votes), the orders agree
    # wherever the majority relation has no cycle (a cycle leaves any order possible).
    full = _permutations(11)
    odd = [0.45, 0.35, 0.2]  # no two sides of a vote weigh the same
    for ours, theirs, their_params in (("condorcet", "condorcet", {}),
                                       ("w_condorcet", "w_condorcet", {"weights": odd})):
        expected = rfuse([RRun(r) for r in full], norm=None, method=theirs,
                         params=their_params).to_dict()
        got = fuse(full, method=ours, norm="none",
                   **({"weights": odd} if their_params else {})).to_dict()
        compared = [q for q in expected if not _cyclic(full, q, odd if their_params
                                                        else [1.0, 1.0, 1.0])]
        assert len(compared) >= 3
        for q in compared:
            assert got[q] == expected[q], (ours, q)
    # Supervised methods: ranx trains on the same qrels, then fuses min-max scores.
    rr = [RRun(r) for r in runs]
    trained = {
        "mapfuse": {"map_scores": rf.mapfuse_train(rq, rr)},
        "posfuse": {"probs": rf.posfuse_train(rq, rr)},
        "probfuse": {"probs": rf.probfuse_train(rq, rr, 7)},
        "segfuse": {"probs": rf.segfuse_train(rq, rr)},
        "slidefuse": {"probs": rf.slidefuse_train(rq, rr), "w": 2},
        "bayesfuse": {"log_odds": rf.bayesfuse_train(rq, rr)},
    }
    ours_params = {"probfuse": {"segments": 7}, "slidefuse": {"window": 2}}
    for method, their_params in trained.items():
        expected = rfuse(rr, norm="min-max", method=method, params=their_params).to_dict()
        got = fuse(runs, method=method, norm="min-max", qrels=qrels,
                   **ours_params.get(method, {})).to_dict()  # type: ignore[arg-type]
        for q in expected:
            assert got[q] == pytest.approx(expected[q], rel=1e-9, abs=1e-12), (method, q)


def _permutations(seed: int) -> list[dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(6)]
    return [{f"q{j}": {d: float(s) for d, s in zip(docs, rng.permutation(6) + 1, strict=True)}
             for j in range(20)} for _ in range(3)]


def _cyclic(runs: list[dict[str, dict[str, float]]], q: str, weights: list[float]) -> bool:
    """Whether the (weighted) majority relation of a query has a cycle."""
    docs = sorted({d for r in runs for d in r[q]})

    def beats(x: str, y: str) -> bool:
        wins = sum(w for w, r in zip(weights, runs, strict=True) if r[q][x] > r[q][y])
        return wins > sum(weights) - wins

    return any(beats(a, b) and beats(b, c) and beats(c, a)
               for a in docs for b in docs for c in docs)


@pytest.mark.slow
def test_every_method_with_its_defaults_equals_ranx(tmp_path) -> None:
    """Nothing passed on either side where ranx has a default (the norm, RRF's k = 60,
    LogN ISR's sigma = 0.01); where ranx needs a value, what rankscope's default means by
    definition (gamma = 1 is CombMNZ; weights 1/n are the unweighted method over n) or the
    value its documentation states (RBC's phi 0.8, SlideFuse's w 1, ProbFuse's 10 segments).
    Mutation: logn_isr's default sigma 0.01 -> 0.1 (or RRF's k 60 -> 10): this fails."""
    from ranx import Qrels as RQrels
    from ranx import Run as RRun
    from ranx import fuse as rfuse
    from ranx import fusion as rf

    from rankscope.cli.main import main
    from rankscope.data.tables import Run
    from rankscope.fusion.methods import METHODS

    runs, qrels = _generate(11)
    rr = [RRun(r) for r in runs]
    n = len(runs)
    third = [1 / n] * n

    def ranx_scaled(method: str, params: dict[str, object], by: float = 1.0
                    ) -> dict[str, dict[str, float]]:
        fused = rfuse(rr, method=method, params=params).to_dict()  # ranx's default norm
        return {q: {d: s * by for d, s in docs.items()} for q, docs in fused.items()}

    # rankscope method -> ranx's fusion of the same runs under its defaults
    expected = {
        "rrf": ranx_scaled("rrf", {}), "logn_isr": ranx_scaled("logn_isr", {}),
        "combsum": ranx_scaled("sum", {}), "combmnz": ranx_scaled("mnz", {}),
        "combmax": ranx_scaled("max", {}), "combmin": ranx_scaled("min", {}),
        "combmed": ranx_scaled("med", {}), "combanz": ranx_scaled("anz", {}),
        "isr": ranx_scaled("isr", {}), "log_isr": ranx_scaled("log_isr", {}),
        "bordafuse": ranx_scaled("bordafuse", {}),
        "combgmnz": ranx_scaled("mnz", {}),  # n^1 * CombSUM
        "wsum": ranx_scaled("sum", {}, 1 / n), "wmnz": ranx_scaled("mnz", {}, 1 / n),
        "w_bordafuse": ranx_scaled("bordafuse", {}, 1 / n),
        "mixed": ranx_scaled("mixed", {"weights": third}),
        "rbc": ranx_scaled("rbc", {"phi": 0.8}),
        "probfuse": ranx_scaled("probfuse", {"probs": rf.probfuse_train(RQrels(qrels), rr, 10)}),
        "slidefuse": ranx_scaled("slidefuse", {"probs": rf.slidefuse_train(RQrels(qrels), rr),
                                               "w": 1}),
    }
    supervised = {"probfuse", "slidefuse"}
    # every method with a parameter, and every score-reading one (the norm), is here
    with_params = {name for name, spec in METHODS.items() if spec.params}
    assert with_params - {"w_condorcet"} <= set(expected), with_params - set(expected)
    for method, want in expected.items():
        got = fuse(runs, method=method, qrels=qrels if method in supervised else None).to_dict()
        assert set(got) == set(want), method
        for q in want:
            assert got[q] == pytest.approx(want[q], rel=1e-9, abs=1e-12), (method, q)
    # weighted Condorcet with equal weights is Condorcet (compared where no cycle, see above)
    full = _permutations(11)
    plain = fuse(full, method="condorcet", norm="none").to_dict()
    weighted = fuse(full, method="w_condorcet", norm="none").to_dict()
    assert weighted == plain

    # the command line's defaults: --method rrf, --norm min-max, no parameter
    paths = []
    for i, run in enumerate(runs):
        path = tmp_path / f"run{i}.txt"
        path.write_text("".join(f"{q} Q0 {d} 0 {s!r} r{i}\n" for q, docs in run.items()
                                for d, s in docs.items()))
        paths.append(str(path))
    for extra, method in (([], "rrf"), (["--method", "logn_isr"], "logn_isr")):
        out = tmp_path / f"{method}.json"
        assert main(["fuse", *paths, *extra, "-o", str(out)]) == 0
        got = Run.read(out).to_dict()
        for q in expected[method]:
            assert got[q] == pytest.approx(expected[method][q], rel=1e-9), (method, q)
