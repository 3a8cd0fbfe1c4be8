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

from rankscope.judgments import Judgments
from rankscope.llm_judge.agreement import judge_agreement

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


def _ranking_reference(human, machine, runs, *, common: bool):
    """nDCG@10 of each run with pytrec_eval under each side's grades (restricted to the
    pairs both graded when ``common``), and Kendall's tau of the two orderings."""
    def qrels(frame, keep):
        out: dict[str, dict[str, int]] = {}
        for q, d, _, g in frame.iter_rows():
            if keep is None or (q, d) in keep:
                out.setdefault(q, {})[d] = int(g)
        return out

    def mean_ndcg(q, run):
        per = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut"}).evaluate(run)
        return float(np.mean([v["ndcg_cut_10"] for v in per.values()]))

    both = ({(q, d) for q, d, _, _ in human.iter_rows()}
            & {(q, d) for q, d, _, _ in machine.iter_rows()})
    keep = both if common else None
    h_scores = [mean_ndcg(qrels(human, keep), r) for r in runs]
    m_scores = [mean_ndcg(qrels(machine, keep), r) for r in runs]
    return h_scores, m_scores, kendalltau(h_scores, m_scores), len(both)


@pytest.mark.parametrize("all_pairs", [False, True])
def test_system_ranking_tau_matches_scipy_on_pytrec_eval_values(all_pairs):
    """The LLM leaves one pair in six ungraded. By default both sides are evaluated on
    the pairs both graded (before: the human side kept every pair, so the ungraded ones
    counted as non-relevant for the LLM only); ``all_pairs`` keeps every grade."""
    human, machine = _data(5)
    human = human.filter(pl.col("rater") == "ann")
    runs = _runs()
    result = judge_agreement(human, machine, scale="graded", all_pairs=all_pairs,
                             runs=[pl.DataFrame([(q, d, s) for q, docs in r.items()
                                                 for d, s in docs.items()],
                                                schema=["query_id", "doc_id", "score"],
                                                orient="row") for r in runs],
                             metric="nDCG@10", n_resamples=0)
    h_scores, m_scores, tau, n_both = _ranking_reference(human, machine, runs,
                                                         common=not all_pairs)
    ranking = result.ranking
    assert ranking is not None and ranking.n_queries == 6
    assert ranking.common is (not all_pairs)
    assert (ranking.n_pairs, ranking.human_only, ranking.llm_only) == (n_both, 60 - n_both, 0)
    assert n_both == 50
    assert ranking.tau == pytest.approx(tau.statistic)
    assert ranking.p_value == pytest.approx(tau.pvalue)
    got = {row["run"]: row for row in ranking.runs.to_dicts()}
    assert len(got) == 5
    by_human = sorted(zip(h_scores, m_scores, strict=True), reverse=True)
    rows = ranking.runs.to_dicts()
    for (hs, ms), row in zip(by_human, rows, strict=True):
        assert row["human"] == pytest.approx(hs) and row["llm"] == pytest.approx(ms)
        assert row["delta"] == pytest.approx(ms - hs)


def test_binary_agreement_at_both_usual_thresholds():
    """Relevant = grade >= 1 (trec_eval) and >= 2 (the TREC RAG / UMBRELA reports), each
    stated with its threshold, against sklearn on the binarised grades."""
    human, machine = _data(3)
    result = judge_agreement(human, machine, scale="graded", n_resamples=0)
    _, h, m, _ = _reference(human, machine)
    assert [b.threshold for b in result.binary] == [1.0, 2.0]
    for b in result.binary:
        hb = [int(g >= b.threshold) for g in h]
        mb = [int(g >= b.threshold) for g in m]
        assert b.kappa == pytest.approx(cohen_kappa_score(hb, mb))
        assert b.base_rate_human == pytest.approx(np.mean(hb))
        assert b.base_rate_llm == pytest.approx(np.mean(mb))
    assert result.kappa_binary == result.binary[0].kappa  # the threshold asked for first
    two = judge_agreement(human, machine, scale="graded", threshold=2, n_resamples=0)
    assert [b.threshold for b in two.binary] == [2.0, 1.0]
    from rankscope.judgments import BINARY

    on_binary = judge_agreement(human.with_columns(pl.col("grade").clip(0, 1)),
                                machine.with_columns(pl.col("grade").clip(0, 1)),
                                scale=BINARY, n_resamples=0)
    assert [b.threshold for b in on_binary.binary] == [1.0]


def test_bootstrap_intervals_of_kappa_and_alpha():
    """The documented bootstrap, done here with sklearn and the krippendorff package: the
    results (ordered by query, then document) resampled with numpy's default_rng(seed),
    n draws each, and the 2.5% and 97.5% quantiles of the coefficients."""
    human, machine = _data(11)
    human = human.filter(pl.col("rater") == "ann")
    result = judge_agreement(human, machine, scale="graded", n_resamples=300, seed=4)
    items, h, m, _ = _reference(human, machine)
    h, m = np.array(h), np.array(m)
    rng = np.random.default_rng(4)
    kappas: dict[str, list[float]] = {"kappa": [], "kappa_linear": [], "kappa_quadratic": []}
    for _ in range(300):
        idx = rng.integers(0, len(items), size=len(items))
        kappas["kappa"].append(cohen_kappa_score(h[idx], m[idx], labels=LABELS))
        kappas["kappa_linear"].append(cohen_kappa_score(h[idx], m[idx], labels=LABELS,
                                                        weights="linear"))
        kappas["kappa_quadratic"].append(cohen_kappa_score(h[idx], m[idx], labels=LABELS,
                                                           weights="quadratic"))
    for name, values in kappas.items():
        low, high = result.intervals[name]
        assert low == pytest.approx(np.quantile(values, 0.025))
        assert high == pytest.approx(np.quantile(values, 0.975))
        assert low <= getattr(result, name) <= high
    rng = np.random.default_rng(4)
    alphas = []
    for _ in range(300):
        idx = rng.integers(0, len(items), size=len(items))
        alphas.append(krippendorff.alpha(reliability_data=np.array([h[idx], m[idx]]),
                                         value_domain=LABELS, level_of_measurement="ordinal"))
    assert result.intervals["alpha"] == pytest.approx(
        (np.quantile(alphas, 0.025), np.quantile(alphas, 0.975)))
    assert result.n_resamples == 300 and result.confidence == 0.95


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
    code = main(["judge", "agreement", str(hp), str(mp), "--bootstrap", "200", "--runs",
                 str(run), str(run2)])
    text = capsys.readouterr().out
    assert code == 0 and "Cohen's kappa, quadratic weights" in text and "confusion" in text
    assert "binary, relevant = grade >= 1  " in text
    assert "binary, relevant = grade >= 2 (TREC RAG, UMBRELA)" in text
    assert "95% bootstrap intervals, 200 resamples" in text
    assert f"on the {len(items)} results both graded" in text
