"""Exact samplers against their exact laws (CKS 2020, Algorithms 1-3).

Each distributional test uses a fixed seed and a false-failure rate of 1e-6
(``FALSE_FAILURE_RATE``): a correct sampler fails it with probability 1e-6. With 200,000
draws a 5% error in the scale is caught with power > 0.999 (noncentrality of the chi-square
about 500 for the discrete Laplace and about 1000 for the discrete Gaussian; for
Bernoulli(exp(-gamma)) a 5% error in gamma moves the mean by 11 standard errors or more;
for the KS tests of the continuous path sqrt(N) D is about 4.0 against a critical 2.7).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE, assert_rate_near

from selective.mechanisms import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    simulation_exponential,
    simulation_gaussian,
    simulation_gumbel,
    simulation_laplace,
)

N_DRAWS = 200_000


def discrete_laplace_tail_pvalue(z: np.ndarray, t: float, n_tails: int = 4) -> float:
    """Chi-square of |Z| over the cells [0, t], (t, 2t], ..., (n t, inf) against the exact law.

    For P[Z = z] proportional to p^|z|, p = e^{-1/t}: P[|Z| >= m] = 2 p^m / (1 + p), m >= 1, and
    |Z| > j t iff |Z| >= floor(j t) + 1.
    """
    p = math.exp(-1.0 / t)
    tail = [1.0] + [2.0 * math.exp(-(math.floor(j * t) + 1) / t) / (1.0 + p) for j in range(1, n_tails + 1)]
    probs = np.r_[-np.diff(tail), tail[-1]]
    a = np.abs(np.asarray(z, dtype=object))
    cells = np.array([sum(1 for v in a if v > j * t) for j in range(1, n_tails + 1)])
    counts = np.r_[len(z) - cells[0], -np.diff(cells), cells[-1]]
    return scipy.stats.chisquare(counts, probs * len(z)).pvalue


def chi_square_against(draws: np.ndarray, log_weight, support_halfwidth: int) -> float:
    """p-value of a chi-square test of integer draws against P[z] proportional to exp(log_weight(z)).

    Cells with an expected count below 20 are pooled into the two tails.
    """
    z = np.arange(-support_halfwidth, support_halfwidth + 1)
    lw = log_weight(z.astype(float))
    p = np.exp(lw - lw.max())
    p /= p.sum()
    keep = len(draws) * p >= 20
    lo, hi = z[keep].min(), z[keep].max()
    expected = np.r_[p[z < lo].sum(), p[keep], p[z > hi].sum()] * len(draws)
    counts = np.bincount(np.clip(draws, lo - 1, hi + 1) - (lo - 1), minlength=hi - lo + 3)
    mask = expected > 0
    return scipy.stats.chisquare(counts[mask], expected[mask] * counts.sum() / expected[mask].sum()).pvalue


class TestBernoulliExp:
    @pytest.mark.parametrize("gamma", [Fraction(3, 10), Fraction(7, 3), Fraction(1, 3) + Fraction(1, 2**70), 0])
    def test_bernoulli_exp_against_exact_rate(self, gamma):
        draws = bernoulli_exp(gamma, size=N_DRAWS, rng=np.random.default_rng(11))
        assert draws.dtype == bool
        assert_rate_near(int(draws.sum()), N_DRAWS, math.exp(-float(gamma)))

    def test_bernoulli_exp_scalar(self):
        assert isinstance(bernoulli_exp("1/2", rng=1), bool)
        assert bernoulli_exp(0, rng=1) is True

    def test_bernoulli_exp_iv(self):
        with pytest.raises(ValueError, match="`gamma` must be a non-negative"):
            bernoulli_exp(-1, rng=1)
        with pytest.raises(TypeError, match="`gamma` must be a rational"):
            bernoulli_exp(True, rng=1)
        with pytest.raises(ValueError, match="`gamma` must be a finite"):
            bernoulli_exp(float("nan"), rng=1)


class TestDiscreteLaplace:
    @pytest.mark.parametrize("scale", [Fraction(3), Fraction(10, 3), Fraction(1, 2), 1.7])
    def test_discrete_laplace_against_exact_pmf(self, scale):
        draws = discrete_laplace(scale, size=N_DRAWS, rng=np.random.default_rng(12))
        t = float(scale)
        width = int(30 * t) + 5
        assert chi_square_against(draws, lambda z: -np.abs(z) / t, width) > FALSE_FAILURE_RATE

    def test_discrete_laplace_scalar_path_against_exact_pmf(self):
        # few draws at a time go through the pure-Python path; 100,000 scalar draws give a
        # noncentrality of about 250 for a 5% scale error (power > 0.999).
        rng = np.random.default_rng(17)
        draws = np.array([discrete_laplace(Fraction(7, 2), rng=rng) for _ in range(100_000)])
        assert chi_square_against(draws, lambda z: -np.abs(z) / 3.5, 120) > FALSE_FAILURE_RATE

    def test_discrete_laplace_large_scale_mean_and_variance(self):
        # scale 1000: variance 2p/(1-p)^2, p = e^{-1/1000}; 200,000 draws give a relative
        # standard error of about 0.5% on the variance: a 5% scale error (10% variance) fails.
        t = 1000
        draws = discrete_laplace(t, size=N_DRAWS, rng=np.random.default_rng(13)).astype(float)
        p = math.exp(-1 / t)
        var = 2 * p / (1 - p) ** 2
        z = (draws.var() - var) / (var * math.sqrt(5.0 / N_DRAWS))  # kurtosis of Laplace: 6
        assert abs(z) < 5.3  # two-sided normal tail 1e-7
        assert np.all(draws == np.rint(draws))

    def test_discrete_laplace_no_int64_wraparound_at_large_numerators(self):
        # Regression: X = U + t V was formed in int64 and wrapped when t V >= 2^63, which bounded
        # the noise (not DP). t = 2^62 - 1 over s = 2^40 (scale about 4.2e6) wraps for every
        # V >= 2. The tails P[|Z| > j t], j = 1..4, must match the exact law: 100,000 draws,
        # false-failure rate 1e-6; the wrapped sampler has no mass beyond 2t (p ~ 0).
        scale = Fraction(2**62 - 1, 2**40)
        draws = discrete_laplace(scale, size=100_000, rng=np.random.default_rng(18))
        assert discrete_laplace_tail_pvalue(draws, float(scale)) > FALSE_FAILURE_RATE

    def test_discrete_laplace_refuses_scale_beyond_2_to_56(self):
        with pytest.raises(ValueError, match=r"`scale` must be below 2\^56"):
            discrete_laplace(2**56, rng=1)
        assert abs(discrete_laplace(Fraction(2**70 + 1, 2**16), rng=1)) < 2**62  # huge numerator, fine scale

    def test_discrete_laplace_shapes(self):
        assert isinstance(discrete_laplace(2, rng=1), int)
        assert discrete_laplace(2, size=(3, 4), rng=1).shape == (3, 4)
        assert discrete_laplace(2, size=0, rng=1).shape == (0,)

    def test_discrete_laplace_iv(self):
        with pytest.raises(ValueError, match="`scale` must be a positive"):
            discrete_laplace(0, rng=1)
        with pytest.raises(ValueError, match="`scale` must be a positive"):
            discrete_laplace(-1.5, rng=1)
        with pytest.raises(ValueError, match="`size` must be an integer >= 0"):
            discrete_laplace(1, size=-1, rng=1)


class TestDiscreteGaussian:
    @pytest.mark.parametrize("sigma", [1.5, 4.0, 0.7])
    def test_discrete_gaussian_against_exact_pmf(self, sigma):
        draws = discrete_gaussian(sigma, size=N_DRAWS, rng=np.random.default_rng(14))
        s2 = sigma * sigma  # the sampler rounds sigma^2 up by a relative 2^-47 at most
        width = int(12 * sigma) + 5
        assert chi_square_against(draws, lambda z: -z * z / (2 * s2), width) > FALSE_FAILURE_RATE

    def test_discrete_gaussian_exact_sigma2(self):
        draws = discrete_gaussian(sigma2=Fraction(9, 4), size=N_DRAWS, rng=np.random.default_rng(15))
        assert chi_square_against(draws, lambda z: -z * z / 4.5, 30) > FALSE_FAILURE_RATE

    def test_discrete_gaussian_large_sigma_variance(self):
        # sigma = 1e5 exercises the Python-integer path (denominators beyond 2^62).
        s = 1e5
        draws = discrete_gaussian(s, size=50_000, rng=np.random.default_rng(16)).astype(float)
        z = (draws.var() - s * s) / (s * s * math.sqrt(2.0 / 50_000))
        assert abs(z) < 5.3

    def test_discrete_gaussian_iv(self):
        with pytest.raises(ValueError, match="exactly one of `sigma` and `sigma2`"):
            discrete_gaussian(rng=1)
        with pytest.raises(ValueError, match="`sigma` must be a positive"):
            discrete_gaussian(0.0, rng=1)


class TestSimulationNoise:
    """The fast floating-point path (no certificate) draws the right continuous laws."""

    def test_simulation_laplace_against_exact_cdf(self):
        d = simulation_laplace(2.0, size=N_DRAWS, rng=np.random.default_rng(7))
        assert scipy.stats.kstest(d, scipy.stats.laplace(scale=2.0).cdf).pvalue > FALSE_FAILURE_RATE

    def test_simulation_gaussian_against_exact_cdf(self):
        d = simulation_gaussian(2.0, size=N_DRAWS, rng=np.random.default_rng(8))
        assert scipy.stats.kstest(d, scipy.stats.norm(scale=2.0).cdf).pvalue > FALSE_FAILURE_RATE

    def test_simulation_gumbel_against_exact_cdf(self):
        d = simulation_gumbel(2.0, size=N_DRAWS, rng=np.random.default_rng(9))
        assert scipy.stats.kstest(d, scipy.stats.gumbel_r(scale=2.0).cdf).pvalue > FALSE_FAILURE_RATE

    def test_simulation_exponential_against_exact_cdf(self):
        d = simulation_exponential(2.0, size=N_DRAWS, rng=np.random.default_rng(10))
        assert scipy.stats.kstest(d, scipy.stats.expon(scale=2.0).cdf).pvalue > FALSE_FAILURE_RATE

    def test_simulation_iv(self):
        with pytest.raises(ValueError, match="`scale` must be a finite positive"):
            simulation_laplace(0.0)
        with pytest.raises(ValueError, match="`sigma` must be a finite positive"):
            simulation_gaussian(-1.0)
