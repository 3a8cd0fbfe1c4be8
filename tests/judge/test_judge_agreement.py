"""Human vs LLM agreement equals sklearn / statsmodels / krippendorff / scipy computed
directly on the same data."""

from __future__ import annotations

import json
from collections import Counter

import krippendorff
import numpy as np
import polars as pl
import pytest
import pytrec_eval
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import cohens_kappa

from rankscope.judge.agreement import judge_agreement
from rankscope.judgments import Judgments

LABELS = [0, 1, 2, 3]


def _data(seed: int = 7):
    rng = np.random.default_rng(seed)
    items = [(f"q{q}", f"d{d}") for q in range(6) for d in range(10)]
    truth = {it: int(rng.integers(0, 4)) for it in items}
    rows = [(q, d, "ann", truth[(q, d)]) for q, d in items]
    for q, d in items[:24]:  # bob and carl grade the first 24 items too
        for rater in ("bob", "carl"):
            g = truth[(q, d)] if rng.random() < 0.6 else int(rng.integers(0, 4))
            rows.append((q, d, rater, g))
    llm = []
    for i, (q, d) in enumerate(items):
        if i % 6 == 5:  # one item in six left ungraded by the LLM
            continue
        noise = rng.choice([-1, 0, 0, 0, 1])
        llm.append((q, d, "llm:m", int(np.clip(truth[(q, d)] + noise, 0, 3))))
    human = pl.DataFrame(rows, schema=["query_id", "doc_id", "rater", "grade"], orient="row")
    machine = pl.DataFrame(llm, schema=["query_id", "doc_id", "rater", "grade"], orient="row")
    return human, machine


def _reference(human: pl.DataFrame, machine: pl.DataFrame):
    """The overlap computed by hand: majority of the humans (ties out), the LLM's grade."""
    by_item: dict[tuple[str, str], list[int]] = {}
    for q, d, _, g in human.iter_rows():
        by_item.setdefault((q, d), []).append(g)
    majority, ties = {}, 0
    for item, grades in by_item.items():
        counts = Counter(grades).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            ties += 1
        else:
            majority[item] = counts[0][0]
    llm = {(q, d): g for q, d, _, g in machine.iter_rows()}
    items = sorted(set(majority) & set(llm))
    return items, [majority[i] for i in items], [llm[i] for i in items], ties


def test_kappas_confusion_and_base_rates_match_sklearn_and_statsmodels():
    human, machine = _data()
    items, h, m, ties = _reference(human, machine)
    result = judge_agreement(Judgments(human, scale="graded"), Judgments(machine),
                             threshold=2)
    assert result.n_items == len(items) and result.human_ties == ties and ties > 0
    assert result.kappa == pytest.approx(cohen_kappa_score(h, m, labels=LABELS))
    assert result.kappa_linear == pytest.approx(
        cohen_kappa_score(h, m, labels=LABELS, weights="linear"))
    assert result.kappa_quadratic == pytest.approx(
        cohen_kappa_score(h, m, labels=LABELS, weights="quadratic"))
    table = confusion_matrix(h, m, labels=LABELS)
    assert result.kappa == pytest.approx(cohens_kappa(table, return_results=False))
    hb = [int(g >= 2) for g in h]
    mb = [int(g >= 2) for g in m]
    assert result.kappa_binary == pytest.approx(cohen_kappa_score(hb, mb))
    assert result.base_rate_human == pytest.approx(np.mean(hb))
    assert result.base_rate_llm == pytest.approx(np.mean(mb))
    assert result.exact == pytest.approx(np.mean(np.array(h) == np.array(m)))
    assert result.confusion.drop("human").to_numpy().tolist() == table.tolist()
    assert result.confusion.get_column("human").to_list() == ["0", "1", "2", "3"]
    assert result.human_raters == ["ann", "bob", "carl"] and result.llm_raters == ["llm:m"]
    assert result.n_llm_only == len({(q, d) for q, d, *_ in machine.iter_rows()}) - len(items)
    json.dumps(result.to_dict(), allow_nan=False)


def test_krippendorff_alpha_over_every_rater_matches_the_package():
    human, machine = _data(11)
    items, *_ = _reference(human, machine)
    result = judge_agreement(human, machine, scale="graded")
    raters = ["ann", "bob", "carl", "llm:m"]
    data = np.full((len(raters), len(items)), np.nan)
    index = {it: j for j, it in enumerate(items)}
    for q, d, r, g in pl.concat([human, machine]).iter_rows():
        if (q, d) in index:
            data[raters.index(r), index[(q, d)]] = g
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                  value_domain=LABELS)
    assert result.alpha_level == "ordinal"
    assert result.alpha == pytest.approx(expected)
    # the per-pair kappas include every human with the LLM
    pairs = {(a, b) for a, b, *_ in result.pairs.iter_rows()}
    assert ("ann", "llm:m") in pairs and ("bob", "carl") in pairs


def _runs(seed: int = 3):
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(5):
        frame = {f"q{q}": {f"d{d}": float(rng.random() + (0.3 * r if d < 3 else 0))
                           for d in range(10)} for q in range(6)}
        runs.append(frame)
    return runs


def test_system_ranking_tau_matches_scipy_on_pytrec_eval_values():
    human, machine = _data(5)
    human = human.filter(pl.col("rater") == "ann")
    runs = _runs()
    result = judge_agreement(human, machine, scale="graded",
                             runs=[pl.DataFrame([(q, d, s) for q, docs in r.items()
                                                 for d, s in docs.items()],
                                                schema=["query_id", "doc_id", "score"],
                                                orient="row") for r in runs],
                             metric="nDCG@10")

    def qrels(frame):
        out: dict[str, dict[str, int]] = {}
        for q, d, _, g in frame.iter_rows():
            out.setdefault(q, {})[d] = int(g)
        return out

    def mean_ndcg(q, run):
        per = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut"}).evaluate(run)
        return float(np.mean([v["ndcg_cut_10"] for v in per.values()]))

    h_scores = [mean_ndcg(qrels(human), r) for r in runs]
    m_scores = [mean_ndcg(qrels(machine), r) for r in runs]
    tau = kendalltau(h_scores, m_scores)
    ranking = result.ranking
    assert ranking is not None and ranking.n_queries == 6
    assert ranking.tau == pytest.approx(tau.statistic)
    assert ranking.p_value == pytest.approx(tau.pvalue)
    got = {row["run"]: row for row in ranking.runs.to_dicts()}
    assert len(got) == 5
    by_human = sorted(zip(h_scores, m_scores, strict=True), reverse=True)
    rows = ranking.runs.to_dicts()
    for (hs, ms), row in zip(by_human, rows, strict=True):
        assert row["human"] == pytest.approx(hs) and row["llm"] == pytest.approx(ms)
        assert row["delta"] == pytest.approx(ms - hs)


def test_no_overlap_gives_no_figures_and_same_raters_are_refused():
    human, machine = _data()
    none = judge_agreement(human.filter(pl.col("query_id") == "q0"),
                           machine.filter(pl.col("query_id") == "q1"))
    assert none.n_items == 0 and none.kappa is None and none.alpha is None
    from rankscope.errors import InputError

    with pytest.raises(InputError, match="ann"):
        judge_agreement(human, human)


def test_the_agreement_command(tmp_path, capsys):
    from rankscope.cli.main import main

    human, machine = _data()
    hp, mp = tmp_path / "human.csv", tmp_path / "llm.csv"
    human.write_csv(hp)
    machine.write_csv(mp)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {10 - d} a\n" for q in range(6)
                           for d in range(10)))
    run2 = tmp_path / "run2.txt"
    run2.write_text("".join(f"q{q} Q0 d{d} {d + 1} {d} b\n" for q in range(6)
                            for d in range(10)))
    code = main(["judge", "agreement", str(hp), str(mp), "--scale", "graded", "--runs",
                 str(run), str(run2), "-m", "P@5", "-f", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    items, h, m, _ = _reference(human, machine)
    assert report["n_items"] == len(items)
    assert report["kappa"] == pytest.approx(cohen_kappa_score(h, m, labels=LABELS))
    assert report["ranking"]["metric"] == "P@5" and len(report["ranking"]["runs"]) == 2
    code = main(["judge", "agreement", str(hp), str(mp)])
    text = capsys.readouterr().out
    assert code == 0 and "Cohen's kappa, quadratic weights" in text and "confusion" in text
