"""Every exact sampler and the exponential mechanism under every numpy bit generator.

Regression for the scalar path reading ``rng.bit_generator.random_raw()`` as 64-bit words:
MT19937 produces 32-bit words, so ``uniform_below(3)`` always returned 0, the scalar discrete
Laplace never terminated and the exponential mechanism with <= 16 candidates returned
candidate 0 or hung. The samplers must draw only through the Generator API, whose law does
not depend on the bit generator.

Each test compares draws with the exact law by a chi-square (or binomial) test with a fixed
seed and a false-failure rate of 1e-6 (``FALSE_FAILURE_RATE``): a correct sampler fails it
with probability 1e-6. The old behaviour (a point mass, or no termination: a hang is turned
into a failure by a 120 s alarm) fails every one of them with certainty. Against subtler
errors: 50,000 draws over the cells give a noncentrality above 100 for a 5% error in a
probability of 0.2 or more (power > 0.99 at the 1e-6 level).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import signal
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE, assert_rate_near

from selective.mechanisms import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    permute_and_flip,
    report_noisy_max,
    report_noisy_topk,
)

BIT_GENERATORS = {
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
    "PCG64": np.random.PCG64,
}
UTILS = np.array([0.0, 1.0, 2.0, 3.0, 2.5, -1.0])


def make_rng(name: str, seed: int) -> np.random.Generator:
    return np.random.Generator(BIT_GENERATORS[name](seed))


@contextlib.contextmanager
def time_limit(seconds: int):
    """Turn a hang (the old MT19937 behaviour) into a test failure."""

    def handler(signum, frame):
        raise TimeoutError(f"sampler did not finish within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def chi_square_pvalue(draws: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square of integer draws against P[support_i] = probs_i; cells expecting < 20 pooled."""
    probs = np.asarray(probs, dtype=float)
    probs = probs / probs.sum()
    n = len(draws)
    big = n * probs >= 20
    counts = np.array([np.sum(draws == v) for v in support[big]])
    expected = n * probs[big]
    rest_obs = n - counts.sum()
    rest_exp = n - expected.sum()
    if rest_exp > 0:
        counts = np.r_[counts, rest_obs]
        expected = np.r_[expected, rest_exp]
    else:
        assert rest_obs == 0, "draws outside the support"
    return scipy.stats.chisquare(counts, expected).pvalue


def discrete_laplace_pmf(t: float, width: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.arange(-width, width + 1)
    return z, np.exp(-np.abs(z) / t)


@pytest.mark.parametrize("bitgen", list(BIT_GENERATORS))
class TestUnderEveryBitGenerator:
    def test_bernoulli_exp_against_exact_rate(self, bitgen):
        rng = make_rng(bitgen, 101)
        with time_limit(120):
            vec = bernoulli_exp(Fraction(7, 3), size=100_000, rng=rng)
            scalar = [bernoulli_exp(Fraction(3, 10), rng=rng) for _ in range(20_000)]
        assert_rate_near(int(vec.sum()), 100_000, math.exp(-7 / 3))
        assert_rate_near(int(sum(scalar)), 20_000, math.exp(-0.3))

    def test_discrete_laplace_vector_path_against_exact_pmf(self, bitgen):
        rng = make_rng(bitgen, 102)
        with time_limit(120):
            draws = discrete_laplace(Fraction(7, 2), size=100_000, rng=rng)
        z, p = discrete_laplace_pmf(3.5, 120)
        assert chi_square_pvalue(draws, z, p) > FALSE_FAILURE_RATE

    def test_discrete_laplace_scalar_path_against_exact_pmf(self, bitgen):
        rng = make_rng(bitgen, 103)
        with time_limit(120):
            draws = np.array([discrete_laplace(Fraction(7, 2), rng=rng) for _ in range(50_000)])
        z, p = discrete_laplace_pmf(3.5, 120)
        assert chi_square_pvalue(draws, z, p) > FALSE_FAILURE_RATE

    def test_discrete_laplace_scalar_path_huge_numerator(self, bitgen):
        # t = (2^62 + 1)/2^61: the uniforms below t k exceed 2^63 and come from rng.bytes
        rng = make_rng(bitgen, 104)
        scale = Fraction(2**62 + 1, 2**61)
        with time_limit(120):
            draws = np.array([discrete_laplace(scale, rng=rng) for _ in range(20_000)])
        z, p = discrete_laplace_pmf(float(scale), 60)
        assert chi_square_pvalue(draws, z, p) > FALSE_FAILURE_RATE

    def test_discrete_gaussian_against_exact_pmf(self, bitgen):
        rng = make_rng(bitgen, 105)
        with time_limit(120):
            draws = discrete_gaussian(sigma2=Fraction(9, 4), size=100_000, rng=rng)
        z = np.arange(-30, 31)
        assert chi_square_pvalue(draws, z, np.exp(-z * z / 4.5)) > FALSE_FAILURE_RATE

    def test_exponential_mechanism_scalar_path_against_exact_law(self, bitgen):
        # one draw at a time with 6 <= 16 candidates: the pure-Python path
        rng = make_rng(bitgen, 106)
        p = exponential_mechanism_probabilities(UTILS, epsilon=1.0, sensitivity=1.0)
        with time_limit(120):
            draws = np.array([exponential_mechanism(UTILS, epsilon=1.0, sensitivity=1.0, rng=rng)
                              for _ in range(50_000)])
        assert chi_square_pvalue(draws, np.arange(6), p) > FALSE_FAILURE_RATE

    def test_exponential_mechanism_vector_path_against_exact_law(self, bitgen):
        rng = make_rng(bitgen, 107)
        p = exponential_mechanism_probabilities(UTILS, epsilon=1.0, sensitivity=1.0)
        with time_limit(120):
            draws = exponential_mechanism(UTILS, epsilon=1.0, sensitivity=1.0, rng=rng, size=100_000)
        assert chi_square_pvalue(draws, np.arange(6), p) > FALSE_FAILURE_RATE

    def test_report_noisy_max_scalar_path_against_exact_law(self, bitgen):
        rng = make_rng(bitgen, 108)
        u = np.array([0.0, 0.4, 1.0])
        p = exponential_mechanism_probabilities(u, epsilon=2.0, sensitivity=1.0)
        with time_limit(120):
            draws = np.array([report_noisy_max(u, epsilon=2.0, sensitivity=1.0, rng=rng) for _ in range(30_000)])
        assert chi_square_pvalue(draws, np.arange(3), p) > FALSE_FAILURE_RATE

    def test_permute_and_flip_against_exact_law(self, bitgen):
        rng = make_rng(bitgen, 109)
        u = np.array([0.0, 1.0, 2.0, 0.5])
        q = np.exp(1.0 * (u - u.max()) / 2.0)
        law = np.zeros(4)
        perms = list(itertools.permutations(range(4)))
        for order in perms:
            survive = 1.0
            for r in order:
                law[r] += survive * q[r]
                survive *= 1 - q[r]
        with time_limit(120):
            draws = permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=rng, size=100_000)
        assert chi_square_pvalue(draws, np.arange(4), law / len(perms)) > FALSE_FAILURE_RATE

    def test_report_noisy_topk_against_exact_peeling_law(self, bitgen):
        # k = 2 of 4: P[(i, j)] = p_i q_j(i), q(i) the law without i; 20,000 ordered pairs
        rng = make_rng(bitgen, 110)
        u = np.array([0.0, 1.0, 2.0, 0.5])
        eps, k = 2.0, 2
        w = np.exp((eps / k) * u / 2.0)
        pairs = [(i, j) for i in range(4) for j in range(4) if i != j]
        law = np.array([w[i] / w.sum() * w[j] / (w.sum() - w[i]) for i, j in pairs])
        with time_limit(120):
            draws = [tuple(report_noisy_topk(u, k, epsilon=eps, sensitivity=1.0, rng=rng)) for _ in range(20_000)]
        codes = np.array([pairs.index(d) for d in draws])
        assert chi_square_pvalue(codes, np.arange(len(pairs)), law) > FALSE_FAILURE_RATE
