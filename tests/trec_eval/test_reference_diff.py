"""rankscope trec_eval against a slow independent implementation (tests/trec_eval/reference.py).

Covers what pytrec_eval cannot check without the 10.0 binary: the 10.0
rounding of iprec_at_recall and 11pt_avg, rbp, rbp_resid, unj, and the
``-c``, ``-M`` and ``-J`` options.
"""

from __future__ import annotations

import random

import pytest

from . import reference
from .generate import qrels_and_run
from .util import ours


def _tables(qrels: str, run: str) -> tuple[dict[str, dict[str, int]],
                                            dict[str, list[tuple[str, float]]]]:
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    ranked: dict[str, list[tuple[str, float]]] = {}
    for line in run.splitlines():
        q, _, d, _, s, _ = line.split()
        ranked.setdefault(q, []).append((d, float(s)))
    # keep queries with a judgment >= 0 (trec_eval cannot rank the others reliably)
    judged = {q: docs for q, docs in judged.items() if max(docs.values()) >= 0}
    return judged, ranked


def _printed(value: float, count: bool) -> str:
    if value != value:
        return "  -nan"
    return str(int(value)) if count else f"{value:6.4f}"


@pytest.mark.parametrize("seed", range(80))
def test_matches_reference(tmp_path, seed):
    rng = random.Random(seed)
    judged, ranked = _tables(*qrels_and_run(rng, n_docs=rng.choice([10, 40, 150])))
    if not judged:
        pytest.skip("no judged query")
    complete = rng.random() < 0.5
    if not complete:
        judged = {q: d for q, d in judged.items() if q in ranked}
        if not judged:
            pytest.skip("no query in both files")
    lvl = rng.choice([1, 1, 2, 3])
    max_ret = rng.choice([None, None, 1, 3, 10])
    judged_only = rng.random() < 0.3
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in judged.items() for d, g in docs.items()))
    (tmp_path / "run").write_text(
        "".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in ranked.items() for d, s in docs))
    args = ["-q", "-m", "all_trec", f"-l{lvl}"]
    args += ["-c"] if complete else []
    args += [f"-M{max_ret}"] if max_ret is not None else []
    args += ["-J"] if judged_only else []
    got = ours([*args, "qrels", "run"], cwd=tmp_path)
    assert got.status == 0, got.stderr
    printed = {(name.strip(), q): v for name, q, v in
               (line.split("\t") for line in got.stdout.splitlines())}
    per, means = reference.evaluate(judged, ranked, lvl=lvl, complete=complete,
                                    max_ret=max_ret, judged_only=judged_only)
    for q, values in [*per.items(), ("all", means)]:
        for name, value in values.items():
            assert printed[(name, q)] == _printed(value, name.startswith("num_")), (name, q)


@pytest.mark.parametrize("seed", range(6))
def test_infinite_scores_in_a_shuffled_run(tmp_path, seed):
    # trec_eval reads "inf" and "-inf" as scores (atof); queries of different
    # lengths, lines shuffled: the padded sort, where the padding once tied with -inf
    rng = random.Random(seed)
    judged: dict[str, dict[str, int]] = {}
    ranked: dict[str, list[tuple[str, float]]] = {}
    for qi in range(rng.randint(2, 9)):
        q = f"q{qi}"
        docs = [f"d{i}" for i in range(rng.randint(20, 300))]
        ranked[q] = [(d, rng.choice([float("-inf"), float("inf"), 1.0, 2.0, 2.5]))
                     for d in docs]
        judged[q] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, len(docs) // 3)}
        judged[q][docs[0]] = 1  # a grade >= 0 for every query
    lines = [f"{q} Q0 {d} 0 {s} r\n" for q, docs in ranked.items() for d, s in docs]
    rng.shuffle(lines)
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in judged.items() for d, g in docs.items()))
    (tmp_path / "run").write_text("".join(lines))
    got = ours(["-q", "-m", "all_trec", "qrels", "run"], cwd=tmp_path)
    assert got.status == 0, got.stderr
    printed = {(name.strip(), q): v for name, q, v in
               (line.split("\t") for line in got.stdout.splitlines())}
    per, means = reference.evaluate(judged, ranked)
    for q, values in [*per.items(), ("all", means)]:
        for name, value in values.items():
            assert printed[(name, q)] == _printed(value, name.startswith("num_")), (name, q)


@pytest.mark.parametrize("seed", range(40))
def test_each_recall_point_is_the_definitions_without_the_many_points_walk(tmp_path, monkeypatch,
                                                                         seed):
    # iprec_at_recall_p is one point: its value read straight from the relevant rows (0 above
    # RR, the highest precision anywhere at c = 0), the multi-point walk of 11pt_avg not run
    from rankscope.engine import kernels_trec_interp

    def walk(*args: object) -> None:
        raise AssertionError("one recall point went through the walk of many")

    monkeypatch.setattr(kernels_trec_interp, "_walk", walk)
    rng = random.Random(1000 + seed)
    judged, ranked = _tables(*qrels_and_run(rng, n_docs=rng.choice([6, 40, 150])))
    judged = {q: d for q, d in judged.items() if q in ranked}
    if not judged:
        pytest.skip("no query in both files")
    lvl = rng.choice([0, 1, 1, 2, 3])
    max_ret = rng.choice([None, None, 1, 3])
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in judged.items() for d, g in docs.items()))
    (tmp_path / "run").write_text(
        "".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in ranked.items() for d, s in docs))
    args = ["-q", "-m", "iprec_at_recall", f"-l{lvl}"]
    args += [f"-M{max_ret}"] if max_ret is not None else []
    got = ours([*args, "qrels", "run"], cwd=tmp_path)
    assert got.status == 0, got.stderr
    printed = {(name.strip(), q): v for name, q, v in
               (line.split("\t") for line in got.stdout.splitlines())}
    per, means = reference.evaluate(judged, ranked, lvl=lvl, max_ret=max_ret)
    points = [name for name in means if name.startswith("iprec_at_recall_")]
    assert len(points) == 11
    for q, values in [*per.items(), ("all", means)]:
        for name in points:
            assert printed[(name, q)] == _printed(values[name], False), (name, q)
