"""Exponential mechanism, permute-and-flip, report noisy max and noisy top-k.

Distribution tests: fixed seeds, false-failure rate 1e-6 each; 200,000 draws over 4-6 cells
detect a 5% error in epsilon (probability shifts of ~1-2%, noncentrality > 150) with power
above 0.999.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting.certificates import PureDP
from selective.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    permute_and_flip,
    report_noisy_max,
    report_noisy_max_certificate,
    report_noisy_topk,
    report_noisy_topk_certificate,
)

N_DRAWS = 200_000
UTILS = np.array([0.0, 1.0, 2.0, 3.0, 2.5, -1.0])


def _chi2(indices, probs):
    counts = np.bincount(indices, minlength=len(probs))
    return scipy.stats.chisquare(counts, np.asarray(probs) * len(indices)).pvalue


def permute_and_flip_law(u, epsilon, sensitivity):
    """Exact law of permute-and-flip by enumerating all orders."""
    q = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
    law = np.zeros(len(u))
    perms = list(itertools.permutations(range(len(u))))
    for order in perms:
        survive = 1.0
        for r in order:
            law[r] += survive * q[r]
            survive *= 1 - q[r]
    return law / len(perms)


class TestExponentialMechanism:
    def test_exponential_mechanism_against_exact_law(self):
        p = exponential_mechanism_probabilities(UTILS, epsilon=1.0, sensitivity=1.0)
        draws = exponential_mechanism(UTILS, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(1), size=N_DRAWS)
        assert _chi2(draws, p) > FALSE_FAILURE_RATE

    def test_exponential_mechanism_awkward_parameters(self):
        # non-dyadic sensitivity and epsilon, large utilities (Python-integer path)
        u = UTILS * 0.3 + 1e6
        p = exponential_mechanism_probabilities(u, epsilon=0.7, sensitivity=0.3)
        draws = exponential_mechanism(u, epsilon=0.7, sensitivity=0.3, rng=np.random.default_rng(2), size=N_DRAWS)
        assert _chi2(draws, p) > FALSE_FAILURE_RATE

    def test_scalar_path_against_exact_law(self):
        # one draw at a time with few candidates takes the pure-Python path; 30,000 draws
        # detect a 10% error in epsilon with power 0.9996 (5% error: power 0.16).
        p = exponential_mechanism_probabilities(UTILS, epsilon=1.0, sensitivity=1.0)
        rng = np.random.default_rng(12)
        draws = np.array([exponential_mechanism(UTILS, epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(30_000)])
        assert _chi2(draws, p) > FALSE_FAILURE_RATE

    def test_simulation_path_against_exact_law(self):
        p = exponential_mechanism_probabilities(UTILS, epsilon=1.0, sensitivity=1.0)
        draws = exponential_mechanism(UTILS, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(3),
                                      size=N_DRAWS, exact=False)
        assert _chi2(draws, p) > FALSE_FAILURE_RATE

    def test_exponential_mechanism_iv(self):
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            exponential_mechanism(UTILS, epsilon=0.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            exponential_mechanism(UTILS, epsilon=1.0, sensitivity=-1.0)
        with pytest.raises(ValueError, match="`utilities` must be finite; got nan"):
            exponential_mechanism([1.0, float("nan")], epsilon=1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="non-empty one-dimensional"):
            exponential_mechanism([], epsilon=1.0, sensitivity=1.0)


class TestPermuteAndFlip:
    def test_permute_and_flip_against_exact_law(self):
        law = permute_and_flip_law(UTILS, 1.0, 1.0)
        draws = permute_and_flip(UTILS, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(4), size=N_DRAWS)
        assert _chi2(draws, law) > FALSE_FAILURE_RATE

    def test_exponential_noise_simulation_against_exact_law(self):
        law = permute_and_flip_law(UTILS, 1.0, 1.0)
        draws = report_noisy_max(UTILS, epsilon=1.0, sensitivity=1.0, noise="exponential", exact=False,
                                 rng=np.random.default_rng(5))
        assert 0 <= draws < len(UTILS)
        many = permute_and_flip(UTILS, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(5), size=N_DRAWS,
                                exact=False)
        assert _chi2(many, law) > FALSE_FAILURE_RATE

    def test_report_noisy_max_certificate(self):
        assert report_noisy_max_certificate(epsilon=2.0) == PureDP(2.0, rho=0.5)
        assert report_noisy_max_certificate(epsilon=2.0, noise="exponential") == PureDP(2.0)

    def test_report_noisy_max_iv(self):
        with pytest.raises(ValueError, match="`noise` must be one of 'gumbel', 'exponential'; got 'laplace'"):
            report_noisy_max(UTILS, epsilon=1.0, sensitivity=1.0, noise="laplace")


class TestReportNoisyTopK:
    def test_report_noisy_topk_against_peeling_law(self):
        # k = 2 of 4: P(i then j) = EM_{eps/2}(i) * EM_{eps/2 on the rest}(j). 12 cells;
        # 6,000 draws (each a full two-round run) detect a wrong per-round budget (eps instead
        # of eps/k) with power > 0.999; false-failure rate 1e-6.
        u = np.array([0.0, 1.0, 2.0, 3.0])
        eps, k, n = 2.0, 2, 6_000
        rng = np.random.default_rng(6)
        pairs = [tuple(report_noisy_topk(u, k, epsilon=eps, sensitivity=1.0, rng=rng)) for _ in range(n)]
        cells = [(i, j) for i in range(4) for j in range(4) if i != j]
        p1 = exponential_mechanism_probabilities(u, epsilon=eps / k, sensitivity=1.0)
        law = []
        for i, j in cells:
            rest = [r for r in range(4) if r != i]
            p2 = exponential_mechanism_probabilities(u[rest], epsilon=eps / k, sensitivity=1.0)
            law.append(p1[i] * p2[rest.index(j)])
        counts = np.array([pairs.count(c) for c in cells])
        assert scipy.stats.chisquare(counts, np.array(law) * n).pvalue > FALSE_FAILURE_RATE

    def test_oneshot_gumbel_equals_peeling_law(self):
        u = np.array([0.0, 1.0, 2.0, 3.0])
        eps, k, n = 2.0, 2, 100_000
        rng = np.random.default_rng(7)
        noisy = u + rng.gumbel(0.0, 2.0 * k / eps, size=(n, 4))  # what exact=False does, batched
        first = np.argmax(noisy, axis=1)
        p1 = exponential_mechanism_probabilities(u, epsilon=eps / k, sensitivity=1.0)
        assert _chi2(first, p1) > FALSE_FAILURE_RATE
        out = report_noisy_topk(u, k, epsilon=eps, sensitivity=1.0, rng=rng, exact=False)
        assert len(out) == 2 and len(set(out.tolist())) == 2

    def test_report_noisy_topk_finds_clear_winners(self):
        scores = np.zeros(10_000)
        scores[[17, 4242, 9999]] = [1e4, 2e4, 3e4]
        out = report_noisy_topk(scores, 3, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(8))
        assert out.tolist() == [9999, 4242, 17]

    def test_report_noisy_topk_certificate(self):
        cert = report_noisy_topk_certificate(4, epsilon=2.0)
        assert cert == PureDP(2.0, rho=4 * (2.0 / 4) ** 2 / 8)

    def test_report_noisy_topk_iv(self):
        with pytest.raises(ValueError, match=r"`k` must be at most the number of candidates \(4\); got 5"):
            report_noisy_topk([1, 2, 3, 4], 5, epsilon=1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
            report_noisy_topk([1, 2, 3, 4], 0, epsilon=1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            report_noisy_topk([1, 2, 3, 4], 2, epsilon=-1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            report_noisy_topk([1, 2, 3, 4], 2, epsilon=1.0, sensitivity=0.0)
        with pytest.raises(ValueError, match="`scores` must be finite"):
            report_noisy_topk([1, 2, float("nan")], 2, epsilon=1.0, sensitivity=1.0)


def test_exponential_mechanism_privacy_on_neighbours():
    """Utilities of neighbours differ by at most Delta = 1: output ratios stay within e^eps.

    For each outcome, given the number of times it appeared in both runs, the share from the
    first run is Binomial with success probability at most e^eps/(1 + e^eps) under eps-DP;
    one-sided binomial tests, Bonferroni over 2 x 4 outcomes, overall false-failure rate 1e-6.
    """
    eps = 1.0
    u = np.array([0.0, 1.0, 2.0, 3.0])
    u2 = u + np.array([1.0, -1.0, 1.0, -1.0])
    n = 200_000
    a = np.bincount(exponential_mechanism(u, epsilon=eps, sensitivity=1.0, rng=np.random.default_rng(9), size=n),
                    minlength=4)
    b = np.bincount(exponential_mechanism(u2, epsilon=eps, sensitivity=1.0, rng=np.random.default_rng(10), size=n),
                    minlength=4)
    bound = math.exp(eps) / (1 + math.exp(eps))
    for x, y in ((a, b), (b, a)):
        for i in range(4):
            p = scipy.stats.binomtest(int(x[i]), int(x[i] + y[i]), bound, alternative="greater").pvalue
            assert p > FALSE_FAILURE_RATE / 8
