"""Paired tests, intervals, corrections, effect sizes: scipy / statsmodels called directly."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from rankscope.compare.significance import (
    adjust,
    effect_size,
    mean_interval,
    paired_test,
    tukey_hsd,
    win_tie_loss,
)
from rankscope.errors import OptionError

stats = pytest.importorskip("scipy.stats")


def _pair(seed: int, n: int = 30, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n)
    x = np.clip(y + rng.normal(shift, 0.15, n), 0, 1)
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_test_matches_ttest_rel(seed: int) -> None:
    x, y = _pair(seed)
    got = paired_test(x, y, "t", confidence=0.9)
    ref = stats.ttest_rel(x, y)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert (got.ci_low, got.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)


def _t_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """Differences of every texture: metric-like, two queries, constant non-zero (variance 0),
    nearly constant (catastrophic cancellation), large, negative, many queries."""
    rng = np.random.default_rng(11)
    cases = [_pair(seed, n) for seed, n in itertools.product(range(4), (2, 3, 7, 50, 250))]
    y = rng.random(40)
    cases += [(y + 0.1, y), (y + 1e-9 * rng.random(40) + 0.3, y),
              (rng.normal(1e6, 1.0, 20), rng.normal(1e6, 1.0, 20)),
              (y, y + rng.random(40)), (rng.random(1000), rng.random(1000))]
    return cases


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99, 0.5])
def test_t_test_and_t_interval_equal_scipy_stats_to_the_last_bit(confidence: float) -> None:
    """The t-test and the t intervals use scipy.special's t distribution, not scipy.stats:
    the same bits as ttest_rel / ttest_1samp and their confidence_interval."""
    for x, y in _t_cases():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = stats.ttest_rel(x, y)
            ci = ref.confidence_interval(confidence_level=confidence)
            one = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=confidence)
            d_ci = stats.ttest_1samp(x - y, 0.0).confidence_interval(confidence_level=confidence)
        got = paired_test(x, y, "t", confidence=confidence)
        assert (got.p_value, got.ci_low, got.ci_high) == (ref.pvalue, ci.low, ci.high)
        wilcoxon = paired_test(x, y, "wilcoxon", confidence=confidence)  # its t interval
        assert (wilcoxon.ci_low, wilcoxon.ci_high) == (d_ci.low, d_ci.high)
        if not np.all(x == x[0]):
            assert mean_interval(x, confidence=confidence) == (one.low, one.high)


def test_a_t_test_comparison_does_not_import_scipy_stats() -> None:
    """scipy.stats costs about 0.65 s of CPU to import, most of a 17-run comparison's
    statistics: the default comparison (t-test, Holm) must not load it."""
    code = (
        "import sys\n"
        "from rankscope.compare.significance import adjust, mean_interval, paired_test\n"
        "x = [0.1, 0.5, 0.4, 0.9]; y = [0.2, 0.3, 0.3, 0.5]\n"
        "import numpy as np\n"
        "out = paired_test(np.array(x), np.array(y), 't')\n"
        "mean_interval(np.array(x))\n"
        "adjust(np.array([out.p_value, 0.01]), 'holm')\n"
        "print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_t_interval_is_the_textbook_one() -> None:
    # mean(d) +/- t_{0.975, n-1} * sd(d) / sqrt(n), from the definition.
    x, y = _pair(7, n=12)
    d = x - y
    half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)
    got = paired_test(x, y, "t", confidence=0.95)
    assert (got.ci_low, got.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))


@pytest.mark.parametrize("seed", [0, 3])
def test_wilcoxon_matches_scipy(seed: int) -> None:
    x, y = _pair(seed, n=25)
    y[:3] = x[:3]  # some zero differences: scipy's default drops them
    got = paired_test(x, y, "wilcoxon")
    assert got.p_value == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12)
    ci = stats.ttest_1samp(x - y, 0.0).confidence_interval(confidence_level=0.95)
    assert (got.ci_low, got.ci_high) == pytest.approx((ci.low, ci.high))


def test_permutation_matches_scipy_with_the_same_seed() -> None:
    x, y = _pair(4, n=40)
    got = paired_test(x, y, "permutation", n_resamples=2000, seed=11)
    ref = stats.permutation_test(
        (x, y), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=2000, alternative="two-sided",
        rng=np.random.default_rng(11),
    )
    assert got.p_value == ref.pvalue
    # Same seed, same answer; another seed, (almost surely) another estimate.
    assert paired_test(x, y, "permutation", n_resamples=2000, seed=11).p_value == got.p_value


@pytest.mark.parametrize("n", [5, 8, 11])
def test_small_permutation_test_is_exact(n: int) -> None:
    # With 2^n <= the rounds every sign flip is enumerated: p is the share of
    # flips whose |mean difference| reaches the observed one (slow reference).
    x, y = _pair(n, n=n, shift=0.1)
    d = x - y
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=n)))
    means = (flips * d).mean(axis=1)
    expected = np.mean(np.abs(means) >= abs(d.mean()) - 1e-12)
    assert paired_test(x, y, "permutation", n_resamples=10000).p_value == pytest.approx(expected)


def test_bootstrap_matches_scipy_with_the_same_seed() -> None:
    x, y = _pair(5, n=35)
    d = x - y
    got = paired_test(x, y, "bootstrap", n_resamples=3000, seed=3, confidence=0.9)
    ref = stats.bootstrap((d,), np.mean, n_resamples=3000, confidence_level=0.9,
                          method="percentile", vectorized=True, rng=np.random.default_rng(3))
    assert (got.ci_low, got.ci_high) == (ref.confidence_interval.low,
                                         ref.confidence_interval.high)
    # Shift method: resampled means centred on the observed mean, as extreme as it.
    extreme = np.abs(ref.bootstrap_distribution - d.mean()) >= abs(d.mean())
    assert got.p_value == pytest.approx((1 + extreme.sum()) / (1 + extreme.size))


def test_tukey_matches_a_two_way_anova_from_statsmodels() -> None:
    smf = pytest.importorskip("statsmodels.formula.api")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    k, n = 4, 20
    topic = rng.random(n)
    values = np.clip(topic[None, :] + rng.normal(0, 0.1, (k, n))
                     + np.array([0, 0.02, 0.08, 0.15])[:, None], 0, 1)
    frame = pd.DataFrame({"value": values.reshape(-1),
                          "run": np.repeat([f"r{i}" for i in range(k)], n),
                          "query": np.tile([f"q{j}" for j in range(n)], k)})
    fit = smf.ols("value ~ C(run) + C(query)", data=frame).fit()
    assert fit.df_resid == (k - 1) * (n - 1)
    se = math.sqrt(fit.mse_resid / n)
    p, half = tukey_hsd(values, confidence=0.95)
    means = values.mean(axis=1)
    for i, j in itertools.combinations(range(k), 2):
        q = abs(means[i] - means[j]) / se
        expected = stats.studentized_range.sf(q, k, fit.df_resid)
        assert p[i, j] == pytest.approx(expected, rel=1e-9)
        assert p[j, i] == p[i, j]
    assert half == pytest.approx(stats.studentized_range.ppf(0.95, k, fit.df_resid) * se)
    assert np.all(np.diag(p) == 1.0)


@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bonferroni", "bonferroni"),
                                               ("bh", "fdr_bh")])
def test_corrections_match_multipletests(ours: str, theirs: str) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.001, 0.04, 0.03, 0.2, 0.012])
    expected = multitest.multipletests(p, alpha=0.05, method=theirs)[1]
    assert adjust(p, ours) == pytest.approx(expected)


def test_bonferroni_by_hand_and_nan_left_out() -> None:
    # Two present p-values: each times 2, capped at 1; NaN is not in the family.
    got = adjust(np.array([0.01, math.nan, 0.7]), "bonferroni")
    assert got[0] == pytest.approx(0.02)
    assert math.isnan(got[1])
    assert got[2] == 1.0
    assert list(adjust(np.array([0.3, 0.01]), "none")) == [0.3, 0.01]


def test_mean_interval_matches_scipy() -> None:
    x, _ = _pair(8, n=18)
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=0.99)
    assert mean_interval(x, confidence=0.99) == pytest.approx((ci.low, ci.high))
    boot = stats.bootstrap((x,), np.mean, n_resamples=500, confidence_level=0.95,
                           method="percentile", vectorized=True, rng=np.random.default_rng(1))
    assert mean_interval(x, method="bootstrap", n_resamples=500, seed=1) == (
        boot.confidence_interval.low, boot.confidence_interval.high)


def test_effect_size_is_cohens_dz() -> None:
    # d = (0.1, 0.3, 0.2): mean 0.2, sd = sqrt(((-.1)^2 + .1^2 + 0) / 2) = 0.1 -> d_z = 2.
    x = np.array([0.6, 0.8, 0.7])
    y = np.array([0.5, 0.5, 0.5])
    assert effect_size(x, y) == pytest.approx(2.0)
    assert math.isnan(effect_size(y + 0.1, y))  # differences do not vary


def test_win_tie_loss_by_hand() -> None:
    x = np.array([0.5, 0.2, 0.3, 0.3, 0.9])
    y = np.array([0.4, 0.2, 0.5, 0.3 + 1e-15, 0.1])
    # wins: 0.5>0.4, 0.9>0.1; ties: 0.2=0.2 and 0.3 ~ 0.3 within 1e-12; loss: 0.3<0.5
    assert win_tie_loss(x, y) == (2, 2, 1)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "permutation", "bootstrap"])
def test_identical_values_give_p_one(test: str) -> None:
    x = np.array([0.1, 0.5, 0.7, 0.2])
    got = paired_test(x, x.copy(), test)
    assert (got.p_value, got.ci_low, got.ci_high) == (1.0, 0.0, 0.0)


def test_one_query_has_no_p_value() -> None:
    got = paired_test(np.array([0.5]), np.array([0.2]), "t")
    assert math.isnan(got.p_value) and math.isnan(got.ci_low)


def test_bad_names_are_refused() -> None:
    with pytest.raises(OptionError, match="test must be one of"):
        paired_test(np.zeros(3), np.ones(3), "z")
    with pytest.raises(OptionError, match="correction must be one of"):
        adjust(np.array([0.1]), "sidak")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 250, 1001])
def test_every_pair_at_once_is_each_pair_alone_to_the_bit(n: int) -> None:
    """A comparison tests a metric's pairs in one pass (t-test p-values, effect sizes,
    wins/ties/losses over the rows of differences); each is what the one-pair function
    gives for that pair, itself checked against scipy above."""
    from rankscope.compare.significance import (
        effect_size,
        effect_sizes,
        t_test_p_values,
        win_tie_loss,
        wins_ties_losses,
    )

    rng = np.random.default_rng(n)
    runs = np.round(rng.random((6, n)), 3)
    runs[2] = runs[0]  # no difference at all
    if n:
        runs[3] = runs[0] + 0.25  # the same difference on every query
        runs[4, : n // 2] = runs[0, : n // 2]  # ties on half the queries
    pairs = [(j, 0) for j in range(1, 6)] + [(5, 4), (3, 1)]
    diffs = np.stack([runs[a] - runs[b] for a, b in pairs])
    p_values = t_test_p_values(diffs)
    effects = effect_sizes(diffs)
    counts = wins_ties_losses(diffs, tolerance=1e-12)
    for i, (a, b) in enumerate(pairs):
        alone = paired_test(runs[a], runs[b], "t")
        np.testing.assert_array_equal(p_values[i], alone.p_value)  # NaN equal to NaN
        np.testing.assert_array_equal(effects[i], effect_size(runs[a], runs[b]))
        assert tuple(counts[i]) == win_tie_loss(runs[a], runs[b], tolerance=1e-12)
