"""Agreement coefficients, checked against values published in the literature.

- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4
  coders x 12 units example with missing values: alpha nominal 0.743, ordinal
  0.815, interval 0.849 (the krippendorff package's docstring reproduces them).
- Fleiss (1971), 30 patients x 6 psychiatrists x 5 diagnoses: kappa 0.430
  (R irr's kappam.fleiss: 0.4302445; the data as in statsmodels' tests).
- The 10 subjects x 14 raters example of Wikipedia's "Fleiss' kappa": 0.210.
- SAS PROC FREQ's kappa example (3 x 3 table in statsmodels' tests): simple
  kappa 0.4842, weighted kappa (Cicchetti-Allison = linear weights) 0.4701.
"""

from __future__ import annotations

import pytest

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels")

from rankscope.judgments import (
    agreement,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)

N = None
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    "C": [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
}

FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]

# Wikipedia "Fleiss' kappa" worked example: raters per category (1..5) for 10 subjects.
WIKIPEDIA_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]

# SAS example: rows = rater A's category, columns = rater B's.
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def _krippendorff(make):
    rows = [("q", f"u{i}", rater, g) for rater, grades in KRIPPENDORFF_2011.items()
            for i, g in enumerate(grades)]
    return make(rows, scale="1-5")


def test_krippendorff_alpha_literature_values(make_judgments):
    j = _krippendorff(make_judgments)
    assert krippendorff_alpha(j, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(j, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(j, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(j) == krippendorff_alpha(j, "ordinal")  # auto on 1-5


def test_fleiss_kappa_fleiss_1971(make_judgments):
    rows = [("q", f"p{i}", f"r{k}", g) for i, grades in enumerate(FLEISS_1971)
            for k, g in enumerate(grades)]
    result = fleiss_kappa(make_judgments(rows, scale="1-5"))
    assert result.value == pytest.approx(0.4302445, abs=1e-7)
    assert (result.n_items, result.n_raters) == (30, 6)


def test_fleiss_kappa_wikipedia_example(make_judgments):
    rows = []
    for i, counts in enumerate(WIKIPEDIA_COUNTS):
        grades = [cat for cat, c in enumerate(counts, start=1) for _ in range(c)]
        rows += [("q", f"s{i}", f"r{k}", g) for k, g in enumerate(grades)]
    assert fleiss_kappa(make_judgments(rows, scale="1-5")).value == pytest.approx(0.210, abs=5e-4)


def _sas(make):
    rows = []
    item = 0
    for a, row in enumerate(SAS_TABLE):
        for b, count in enumerate(row):
            for _ in range(count):
                rows += [("q", f"i{item}", "A", a), ("q", f"i{item}", "B", b)]
                item += 1
    return make(rows, scale="0-2")


def test_cohen_kappa_sas_example(make_judgments):
    j = _sas(make_judgments)
    plain = cohen_kappa(j, weights=None)
    assert plain.rows() == [("A", "B", 19, pytest.approx(0.4842, abs=5e-5))]
    linear = cohen_kappa(j, weights="linear")
    assert linear["kappa"].item() == pytest.approx(0.4701, abs=5e-5)


def test_cohen_kappa_weights_follow_the_scale_not_the_seen_grades(make_judgments):
    # Two raters who only used grades 0 and 3 of the graded scale: with the
    # scale's four categories the linear weight of a 0/3 disagreement is 1
    # (distance 3 of 3), the same as unweighted -> equal kappas.
    j = make_judgments([("q", "a", "x", 0), ("q", "a", "y", 3), ("q", "b", "x", 3),
                        ("q", "b", "y", 3), ("q", "c", "x", 0), ("q", "c", "y", 0)],
                       scale="graded")
    assert cohen_kappa(j, weights="linear")["kappa"].item() == pytest.approx(
        cohen_kappa(j, weights=None)["kappa"].item())


def test_percent_agreement_by_hand(make_judgments):
    j = make_judgments([
        ("q", "a", "x", 1), ("q", "a", "y", 1), ("q", "a", "z", 0),   # 3 pairs, 1 agrees
        ("q", "b", "x", 2), ("q", "b", "y", 2), ("q", "b", "z", None),  # 1 pair, agrees
        ("q", "c", "x", 3),                                           # no pair
    ])
    assert percent_agreement(j) == pytest.approx(2 / 4)
    assert percent_agreement(make_judgments([("q", "a", "x", 1)])) is None


def test_undefined_coefficients_are_none(make_judgments):
    # Everyone agrees on one grade only: kappa and alpha are 0/0.
    j = make_judgments([("q", "a", "x", 1), ("q", "a", "y", 1)], scale="binary")
    assert cohen_kappa(j)["kappa"].item() is None
    assert krippendorff_alpha(j, "nominal") is None
    one = make_judgments([("q", "a", "x", 1), ("q", "b", "y", 0)], scale="binary")
    assert cohen_kappa(one).height == 0  # no item in common
    assert fleiss_kappa(one).value is None
    assert krippendorff_alpha(one) is None


def test_fleiss_uses_items_with_the_most_common_count(make_judgments):
    # Items a, b have 2 grades, c has 3: Fleiss runs on a and b.
    j = make_judgments([
        ("q", "a", "x", 1), ("q", "a", "y", 1),
        ("q", "b", "x", 0), ("q", "b", "y", 0),
        ("q", "c", "x", 1), ("q", "c", "y", 0), ("q", "c", "z", 1),
    ], scale="binary")
    result = fleiss_kappa(j)
    assert (result.n_items, result.n_raters) == (2, 2)
    # a: [0, 2], b: [2, 0] -> P_i = 1 each, P_e = 0.5^2 + 0.5^2 = 0.5 -> (1 - 0.5)/(1 - 0.5)
    assert result.value == pytest.approx(1.0)


def test_agreement_summary_and_per_query(make_judgments):
    rows = [("q1", f"u{i}", r, g) for r, grades in KRIPPENDORFF_2011.items()
            for i, g in enumerate(grades)]
    rows += [("q2", "a", "A", 1), ("q2", "a", "B", 2), ("q2", "b", "A", 2),
             ("q2", "b", "B", 2)]
    j = make_judgments(rows, scale="1-5")
    res = agreement(j, by_query=True)
    assert res.n_raters == 4 and res.n_items == 12 + 2  # results with at least one grade
    assert res.cohen_weights == "quadratic"
    per = {row["query_id"]: row for row in res.per_query.to_dicts()}
    # per query q1 is exactly Krippendorff's example
    assert per["q1"]["alpha_nominal"] == pytest.approx(0.743, abs=5e-4)
    assert per["q1"]["alpha_interval"] == pytest.approx(0.849, abs=5e-4)
    # q2: pairs (1, 2) disagree, (2, 2) agree -> 1/2
    assert per["q2"]["percent"] == pytest.approx(0.5)
    d = res.to_dict()
    assert set(d["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert d["per_query"]["q2"]["percent"] == pytest.approx(0.5)


def test_tie_rate_in_summary(make_judgments):
    j = make_judgments([("q", "a", "x", 1), ("q", "a", "y", 0), ("q", "b", "x", 1),
                        ("q", "b", "y", 1)], scale="binary")
    assert agreement(j).tie_rate == 0.5  # a ties, b does not


def test_cohen_and_alpha_agree_with_other_library_entry_points(make_judgments):
    # Our Cohen's kappa (statsmodels on a contingency table) against scikit-learn's
    # cohen_kappa_score on the raw pairs; our alpha (value counts) against
    # krippendorff.alpha on the raters x units reliability matrix.
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    import krippendorff
    import numpy as np

    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(3, 25))
        a = rng.integers(0, 4, n).astype(float)
        b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
        c = np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 4, n).astype(float))
        rows = [("q", f"i{i}", "a", a[i]) for i in range(n)]
        rows += [("q", f"i{i}", "b", b[i]) for i in range(n)]
        rows += [("q", f"i{i}", "c", None if np.isnan(c[i]) else c[i]) for i in range(n)]
        j = make_judgments(rows, scale="graded")
        for weights in (None, "linear", "quadratic"):
            ours = cohen_kappa(j, weights=weights).row(0)  # the (a, b) pair
            theirs = sklearn_metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3],
                                                       weights=weights)
            if np.isnan(theirs):
                assert ours[3] is None
            else:
                assert ours[3] == pytest.approx(theirs), (trial, weights)
        matrix = np.vstack([a, b, c])
        for level in ("nominal", "ordinal", "interval"):
            want = krippendorff.alpha(reliability_data=matrix, value_domain=[0, 1, 2, 3],
                                      level_of_measurement=level)
            assert krippendorff_alpha(j, level) == pytest.approx(want), (trial, level)
