"""Laplace and Gaussian mechanisms with exact noise.

Distribution tests: fixed seeds, false-failure rate 1e-6; 200,000 draws catch a 5% scale
error with power > 0.999 (see test_samplers.py for the noncentralities).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting.certificates import ZCDP, PureDP
from selective.mechanisms import (
    discrete_gaussian_delta,
    gaussian_delta_analytic,
    gaussian_mechanism,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    laplace_mechanism,
    laplace_scale,
)

N_DRAWS = 200_000


def laplace_tail_pvalue(noise_in_scales: np.ndarray, n_tails: int = 4) -> float:
    """Chi-square of |noise|/b over [0, 1], (1, 2], ..., (n, inf) against Laplace: P[|Y| > j b] = e^-j.

    The noise is discrete Laplace on a grid whose scale is more than 10^6 grid steps, so the
    continuous tails are exact to better than 1e-6 per cell.
    """
    a = np.abs(noise_in_scales)
    beyond = np.array([np.sum(a > j) for j in range(1, n_tails + 1)])
    counts = np.r_[len(a) - beyond[0], -np.diff(beyond), beyond[-1]]
    tail = np.exp(-np.arange(0, n_tails + 1, dtype=float))
    probs = np.r_[-np.diff(tail), tail[-1]]
    return scipy.stats.chisquare(counts, probs * len(a)).pvalue


class TestLaplaceMechanism:
    def test_laplace_mechanism_integer_noise_against_exact_pmf(self):
        counts = np.full(N_DRAWS, 7, dtype=np.int64)
        rel = laplace_mechanism(counts, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(1))
        assert rel.certificate == PureDP(0.5)
        assert rel.values.dtype == np.int64
        noise = rel.values - 7
        z = np.arange(-60, 61)
        p = np.exp(-np.abs(z) * 0.5)
        p /= p.sum()
        keep = N_DRAWS * p >= 20
        lo, hi = z[keep].min(), z[keep].max()
        exp = np.r_[p[z < lo].sum(), p[keep], p[z > hi].sum()] * N_DRAWS
        obs = np.bincount(np.clip(noise, lo - 1, hi + 1) - (lo - 1), minlength=len(exp))
        assert scipy.stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > FALSE_FAILURE_RATE

    def test_laplace_mechanism_real_query_on_grid(self):
        rel = laplace_mechanism(np.array([0.123456789, 0.5]), sensitivity=0.01, epsilon=1.0, rng=2)
        # released values are multiples of the grid unit: the attainable set does not depend on f
        assert np.all(rel.values / rel.unit == np.rint(rel.values / rel.unit))
        assert rel.unit <= 0.01 / 2**20
        assert float(rel.scale) * rel.unit >= 0.01 / 1.0
        assert rel.certificate == PureDP(1.0)

    def test_laplace_mechanism_real_noise_scale(self):
        # noise on a real query has (nearly) the Laplace(Delta/eps) spread: variance 2 b^2.
        rel = laplace_mechanism(np.zeros(N_DRAWS), sensitivity=0.3, epsilon=0.6, rng=np.random.default_rng(3))
        b = 0.3 / 0.6
        z = (rel.values.var() - 2 * b * b) / (2 * b * b * math.sqrt(5.0 / N_DRAWS))
        assert abs(z) < 5.3  # false-failure rate about 1e-7

    def test_laplace_mechanism_tails_at_large_scale(self):
        """Regression: k = 1000 real values at epsilon = 1e-4 overflowed int64 inside the sampler.

        The noise was bounded (max |noise| about 1.7 b): not DP. The tails P[|noise| > j b],
        j = 1..4, must match e^-j: 200 releases of 1000 values (200,000 draws), chi-square on
        5 cells, false-failure rate 1e-6; the bounded noise gives p ~ 0, and a 5% error in
        the scale gives a noncentrality of about 450 (power ~ 1).
        """
        rng = np.random.default_rng(21)
        noise, releases = [], []
        for _ in range(200):
            rel = laplace_mechanism(np.zeros(1000), sensitivity=1.0, epsilon=1e-4, rng=rng)
            noise.append(rel.values / (float(rel.scale) * rel.unit))
            releases.append(rel)
        assert laplace_tail_pvalue(np.concatenate(noise)) > FALSE_FAILURE_RATE
        rel = releases[0]
        assert 1.0 / 1e-4 <= float(rel.scale) * rel.unit <= 1.0 / 1e-4 * (1 + 1e-5)
        assert rel.scale.numerator < 2**53  # no needless inflation of the numerator

    def test_laplace_mechanism_integer_no_wraparound(self):
        # int64 values near the top: the sum with the noise must not wrap to negative numbers
        top = np.full(64, 2**63 - 1, dtype=np.int64)
        with pytest.raises(OverflowError, match="do not fit int64"):
            laplace_mechanism(top, sensitivity=1, epsilon=1.0, rng=22)
        near = np.full(64, 2**62, dtype=np.int64)
        assert np.all(laplace_mechanism(near, sensitivity=1, epsilon=1.0, rng=22).values > 2**61)

    def test_laplace_scale_iv(self):
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            laplace_scale(sensitivity=0.0, epsilon=1.0)
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            laplace_scale(sensitivity=1.0, epsilon=-1.0)

    def test_laplace_mechanism_iv(self):
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            laplace_mechanism([1.0], sensitivity=-1.0, epsilon=1.0)
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            laplace_mechanism([1.0], sensitivity=1.0, epsilon=0.0)
        with pytest.raises(ValueError, match="`values` must be finite"):
            laplace_mechanism([float("nan")], sensitivity=1.0, epsilon=1.0)
        with pytest.raises(ValueError, match="`sensitivity` must be an integer for an integer query"):
            laplace_mechanism([1], sensitivity=0.5, epsilon=1.0, integer=True)


class TestGaussian:
    def test_classic_refuses_eps_at_least_one(self):
        with pytest.raises(ValueError, match=r"`epsilon` must be a real number in \(0, 1\); got 1.0"):
            gaussian_sigma_classic(sensitivity=1.0, epsilon=1.0, delta=1e-5)

    @pytest.mark.parametrize("eps", [0.1, 0.5, 0.9])
    def test_analytic_below_classic_and_tight(self, eps):
        s = gaussian_sigma_analytic(sensitivity=1.0, epsilon=eps, delta=1e-6)
        assert s <= gaussian_sigma_classic(sensitivity=1.0, epsilon=eps, delta=1e-6)
        assert gaussian_delta_analytic(sigma=s, epsilon=eps, sensitivity=1.0) <= 1e-6
        assert gaussian_delta_analytic(sigma=s * (1 - 1e-9), epsilon=eps, sensitivity=1.0) > 1e-6

    def test_gaussian_mechanism_noise_against_exact_pmf(self):
        rel = gaussian_mechanism(np.zeros(N_DRAWS, dtype=np.int64), sensitivity=1, rho=0.5,
                                 rng=np.random.default_rng(4))
        assert rel.certificate == ZCDP(0.5)
        s2 = float(rel.sigma2)
        assert s2 >= 1.0  # Delta^2 / (2 rho)
        z = np.arange(-20, 21)
        p = np.exp(-z * z / (2 * s2))
        p /= p.sum()
        keep = N_DRAWS * p >= 20
        lo, hi = z[keep].min(), z[keep].max()
        exp = np.r_[p[z < lo].sum(), p[keep], p[z > hi].sum()] * N_DRAWS
        obs = np.bincount(np.clip(rel.values, lo - 1, hi + 1) - (lo - 1), minlength=len(exp))
        assert scipy.stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > FALSE_FAILURE_RATE

    def test_gaussian_mechanism_real_query(self):
        rel = gaussian_mechanism(np.array([0.25, 0.75]), sensitivity=0.01, rho=0.1, rng=5)
        assert rel.certificate == ZCDP(0.1)
        sigma = math.sqrt(float(rel.sigma2)) * rel.unit
        assert sigma >= 0.01 / math.sqrt(2 * 0.1)

    def test_discrete_gaussian_delta_decreases_in_sigma(self):
        d = [discrete_gaussian_delta(sigma=s, epsilon=1.0).delta for s in (1.0, 2.0, 4.0)]
        assert d[0] > d[1] > d[2] > 0

    def test_gaussian_mechanism_integer_checks_integrality(self):
        # like the Laplace mechanism: a non-integer value with integer=True is refused, not truncated
        with pytest.raises(ValueError, match="`values` must be integers when `integer=True`"):
            gaussian_mechanism(np.array([1.0, 2.5]), sensitivity=1, rho=0.5, integer=True, rng=1)
        rel = gaussian_mechanism(np.array([1.0, 2.0]), sensitivity=1, rho=0.5, integer=True, rng=1)
        assert rel.values.dtype == np.int64

    def test_gaussian_iv(self):
        with pytest.raises(ValueError, match="`rho` must be a finite positive"):
            gaussian_mechanism([1.0], sensitivity=1.0, rho=0.0)
        with pytest.raises(ValueError, match=r"`delta` must be a real number in \(0, 1\)"):
            gaussian_sigma_analytic(sensitivity=1.0, epsilon=1.0, delta=0.0)
        with pytest.raises(ValueError, match="`sensitivity` must be an integer >= 1"):
            discrete_gaussian_delta(sigma=1.0, epsilon=1.0, sensitivity=0)
