"""Data fission and thinning: the parts are independent with the stated laws, and break as stated."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from selective.selectors.fission import binomial_thinning, gaussian_fission, poisson_thinning

# Every goodness-of-fit / independence check below uses a fixed seed and rejects at 1e-6: a
# correct implementation fails one of them with probability about 1e-6 per check.


def _joint_fit_pvalue(f, g, pmf_f, pmf_g):
    """Chi-square test of the joint table of (f, g) against the product of the stated laws."""
    top_f, top_g = int(f.max()), int(g.max())
    observed = np.zeros((top_f + 1, top_g + 1))
    np.add.at(observed, (f, g), 1)
    expected = np.outer(pmf_f(np.arange(top_f + 1)), pmf_g(np.arange(top_g + 1))) * f.size
    # cells with expected count < 5, and the mass beyond the observed range, are pooled into one
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], f.size - expected[keep].sum())
    return scipy.stats.chisquare(obs, exp, ddof=0).pvalue


def test_poisson_thinning_gives_independent_poisson_parts():
    rng = np.random.default_rng(1)
    mu, eps = 3.0, 0.3
    x = rng.poisson(mu, 200_000)
    parts = poisson_thinning(x, epsilon=eps, rng=2)
    assert (parts.explore + parts.confirm == x).all()
    p = _joint_fit_pvalue(parts.explore, parts.confirm,
                          lambda k: scipy.stats.poisson.pmf(k, eps * mu),
                          lambda k: scipy.stats.poisson.pmf(k, (1 - eps) * mu))
    assert p > 1e-6
    assert parts.confirm_scale[0] == pytest.approx(0.7) and "Poisson" in parts.assumption


def test_poisson_thinning_of_overdispersed_counts_is_dependent():
    # The check above can fail: negative-binomial counts (variance 3 x mean) thin into correlated parts.
    rng = np.random.default_rng(3)
    x = rng.negative_binomial(1.5, 1.5 / (1.5 + 3.0), 50_000)
    parts = poisson_thinning(x, epsilon=0.5, rng=4)
    r = np.corrcoef(parts.explore, parts.confirm)[0, 1]
    assert r > 0.2  # Poisson would give 0 (sd of r about 0.0045 here)


def test_binomial_thinning_gives_independent_binomial_parts():
    rng = np.random.default_rng(5)
    m, prob = 10, 0.35
    x = rng.binomial(m, prob, 200_000)
    parts = binomial_thinning(x, np.full(x.size, m), epsilon=0.4, rng=6)
    m1 = 4
    assert (parts.confirm_scale == m - m1).all()
    p = _joint_fit_pvalue(parts.explore, parts.confirm,
                          lambda k: scipy.stats.binom.pmf(k, m1, prob),
                          lambda k: scipy.stats.binom.pmf(k, m - m1, prob))
    assert p > 1e-6


def test_gaussian_fission_is_independent_with_the_stated_variance_and_breaks_with_a_wrong_sigma():
    rng = np.random.default_rng(7)
    x = rng.normal(1.0, 2.0, 100_000)
    parts = gaussian_fission(x, sigma=2.0, tau=0.5, rng=8)
    r = np.corrcoef(parts.explore, parts.confirm)[0, 1]
    z = np.arctanh(r) * np.sqrt(x.size - 3)
    assert 2 * scipy.stats.norm.sf(abs(z)) > 1e-6
    expected_sd = 2.0 * np.sqrt(1 + 0.5**-2)
    assert parts.confirm_scale[0] == pytest.approx(expected_sd)
    chi = (x.size - 1) * parts.confirm.var(ddof=1) / expected_sd**2
    assert 1e-6 < scipy.stats.chi2.cdf(chi, x.size - 1) < 1 - 1e-6
    wrong = gaussian_fission(x, sigma=1.0, tau=0.5, rng=8)  # true sigma is 2
    assert np.corrcoef(wrong.explore, wrong.confirm)[0, 1] > 0.3


def test_select_on_the_exploration_test_on_the_confirmation_holds_the_level():
    # 40 candidate means of n = 25 null Gaussian rows (sigma = 1 known); the exploration picks the
    # largest mean; the z test on the confirmation part holds the level, the naive one does not.
    # 4000 replications; false-failure rate about 2e-6 (two binomial checks at 1e-6).
    rng = np.random.default_rng(11)
    reps, k, n, tau = 4000, 40, 25, 1.0
    data = rng.normal(0.0, 1.0, (reps, k, n))
    parts = gaussian_fission(data.ravel(), sigma=1.0, tau=tau, rng=12)
    explore = parts.explore.reshape(data.shape).mean(axis=2)
    confirm = parts.confirm.reshape(data.shape).mean(axis=2)
    pick = explore.argmax(axis=1)
    z = confirm[np.arange(reps), pick] / (np.sqrt(1 + tau**-2) / np.sqrt(n))
    p_fission = scipy.stats.norm.sf(z)
    naive = data.mean(axis=2)[np.arange(reps), data.mean(axis=2).argmax(axis=1)] * np.sqrt(n)
    p_naive = scipy.stats.norm.sf(naive)
    for level in (0.05, 0.01):
        assert scipy.stats.binom.sf(int((p_fission <= level).sum()) - 1, reps, level) > 1e-6
    assert (p_naive <= 0.05).mean() > 0.5


@pytest.mark.parametrize(("call", "match"), [
    (lambda: poisson_thinning([1, -2]), "`counts` must hold non-negative integers; entry 1"),
    (lambda: poisson_thinning([1.5]), "`counts` must hold non-negative integers"),
    (lambda: poisson_thinning([1, 2], epsilon=1.0), "`epsilon` must be a real number in \\(0, 1\\)"),
    (lambda: binomial_thinning([1, 1], [1, 3]), "`trials` must be at least 2 in every row to thin \\(row 0"),
    (lambda: binomial_thinning([4], [3]), "`successes` must not exceed `trials`"),
    (lambda: binomial_thinning([1, 2], [3]), "`trials` must have one entry per"),
    (lambda: gaussian_fission([0.1, 0.2], sigma=0.0), "`sigma` must be one positive"),
    (lambda: gaussian_fission([0.1, np.nan], sigma=1.0), "`values` must be finite; entry 1"),
    (lambda: gaussian_fission([0.1], sigma=1.0, tau=-1), "`tau`"),
])
def test_errors_name_the_argument_and_value(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_same_seed_same_parts():
    x = np.arange(20)
    a, b = poisson_thinning(x, rng=3), poisson_thinning(x, rng=3)
    assert (a.explore == b.explore).all()
