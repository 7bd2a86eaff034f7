"""AboveThreshold, Sparse and NumericSparse: behaviour, refusals and a privacy sanity check."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting.certificates import ApproxDP, PureDP
from selective.exceptions import BudgetExhausted
from selective.mechanisms import AboveThreshold, NumericSparse, Sparse, sparse_accuracy


def _first_above(values, eps, seed_seq):
    out = []
    for seed in seed_seq:
        at = AboveThreshold(0.0, epsilon=eps, sensitivity=1.0, rng=np.random.default_rng(seed))
        hit = len(values)
        for i, v in enumerate(values):
            if at.query(v):
                hit = i
                break
        out.append(hit)
    return np.bincount(out, minlength=len(values) + 1)


def test_above_threshold_privacy_on_neighbours():
    """Query values of neighbours differ by at most Delta = 1: outcome ratios within e^eps.

    Outcome = index of the first ⊤ (or none). Given the total count of an outcome over both
    runs, the share of the first run is Binomial with probability at most e^eps/(1 + e^eps)
    under eps-DP; one-sided tests with Bonferroni over 2 x 4 outcomes, overall false-failure
    rate 1e-6. 20,000 runs per dataset.
    """
    eps = 1.0
    q1 = [-1.0, 0.5, 1.5]
    q2 = [0.0, -0.5, 0.5]
    n = 20_000
    a = _first_above(q1, eps, range(n))
    b = _first_above(q2, eps, range(n, 2 * n))
    bound = math.exp(eps) / (1 + math.exp(eps))
    for x, y in ((a, b), (b, a)):
        for i in range(4):
            if x[i] + y[i]:
                test = scipy.stats.binomtest(int(x[i]), int(x[i] + y[i]), bound, alternative="greater")
                assert test.pvalue > FALSE_FAILURE_RATE / 8


class TestAboveThreshold:
    def test_halts_after_top_and_refuses(self):
        at = AboveThreshold(0.0, epsilon=1.0, sensitivity=1.0, rng=1)
        assert at.query(1e6) is True
        assert at.halted
        with pytest.raises(BudgetExhausted, match="halted"):
            at.query(0.0)

    def test_far_below_threshold_answers_bottom(self):
        at = AboveThreshold(0.0, epsilon=1.0, sensitivity=1.0, rng=2)
        assert not any(at.query(-1e4) for _ in range(100))
        assert at.n_queries == 100
        assert at.certificate() == PureDP(1.0)

    def test_repr_hides_the_noisy_threshold(self):
        at = AboveThreshold(0.0, epsilon=1.0, sensitivity=1.0, rng=3)
        assert "rho" not in repr(at) and "threshold" not in repr(at)

    def test_iv(self):
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            AboveThreshold(0.0, epsilon=0.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            AboveThreshold(0.0, epsilon=1.0, sensitivity=0.0)
        at = AboveThreshold(0.0, epsilon=1.0, sensitivity=1.0, rng=1)
        with pytest.raises(ValueError, match="`value` must be a finite real number"):
            at.query(float("nan"))


class TestSparse:
    def test_cutoff_is_mandatory(self):
        sv = Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=2, rng=4)
        assert sv.query(1e6) and sv.query(1e6)
        assert sv.halted
        with pytest.raises(BudgetExhausted, match="c = 2"):
            sv.query(1e6)

    def test_screen_matches_query_semantics(self):
        sv = Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=3, rng=5)
        vals = np.array([-1e5, 1e5, -1e5, 1e5, 1e5, 1e5, 1e5])
        assert sv.screen(vals).tolist() == [1, 3, 4]
        assert sv.n_queries == 5 and sv.halted
        with pytest.raises(BudgetExhausted):
            sv.screen(vals)

    def test_query_noise_tails_at_large_scale(self):
        """Regression: c = 10^4, epsilon = 1e-3 gave query-noise numerators near 2.6e18, so
        ``screen`` (the batched sampler) wrapped int64 whenever the geometric part V was >= 8,
        so no query noise exceeded about 7 scales and the mass beyond went elsewhere.

        White-box: 200,000 draws of the comparison noise Lap(2 sigma) in grid units; the tails
        P[|nu| > j b], j = 1..8, against the exact law (chi-square, 9 cells, the last
        expecting about 67 draws; false-failure rate 1e-6). The wrapped sampler leaves the
        last cell empty (p ~ 1e-20).
        """
        sv = Sparse(0.0, epsilon=1e-3, sensitivity=1.0, c=10**4, rng=np.random.default_rng(31))
        scale = sv._nu_scale  # noqa: SLF001 - white-box: the noise of the comparisons
        nu = sv._cmp.draw_many(scale, 200_000)  # noqa: SLF001
        t = float(scale)
        a = np.abs(nu)
        beyond = np.array([np.sum(a > j * t) for j in range(1, 9)])
        counts = np.r_[len(a) - beyond[0], -np.diff(beyond), beyond[-1]]
        tail = np.exp(-np.arange(9, dtype=float))  # continuous tails: t > 10^12 grid steps
        assert scipy.stats.chisquare(counts, np.r_[-np.diff(tail), tail[-1]] * len(a)).pvalue > FALSE_FAILURE_RATE
        assert scale.numerator < 2**53  # no needless inflation of the numerator

    def test_certificates(self):
        assert Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=3, rng=1).certificate() == PureDP(1.0)
        assert Sparse(0.0, epsilon=0.5, sensitivity=1.0, c=3, delta=1e-6, rng=1).certificate() == ApproxDP(0.5, 1e-6)

    def test_delta_calibration_range_is_checked(self):
        with pytest.raises(ValueError, match="outside the range where the delta > 0 calibration"):
            Sparse(0.0, epsilon=500.0, sensitivity=1.0, c=1, delta=0.5, rng=1)

    def test_sparse_accuracy_forms(self):
        assert sparse_accuracy(n_queries=100, c=2, beta=0.05, epsilon=1.0) == pytest.approx(
            8 * 2 * (math.log(100) + math.log(4 / 0.05)))

    def test_iv(self):
        with pytest.raises(ValueError, match="`c` must be an integer >= 1"):
            Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=0)
        with pytest.raises(ValueError, match=r"`delta` must be a real number in \[0, 1\)"):
            Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=1, delta=1.0)
        with pytest.raises(ValueError, match="`values` must be finite"):
            Sparse(0.0, epsilon=1.0, sensitivity=1.0, c=1, rng=1).screen([np.nan])


class TestNumericSparse:
    def test_releases_separately_noised_answers_and_halts(self):
        ns = NumericSparse(0.0, epsilon=9.0, sensitivity=0.001, c=2, rng=6)
        assert ns.query(-10.0) is None
        a = ns.query(10.0)
        assert a is not None and abs(a - 10.0) < 1.0
        assert ns.query(10.0) is not None
        with pytest.raises(BudgetExhausted):
            ns.query(10.0)
        assert ns.certificate() == PureDP(9.0)
