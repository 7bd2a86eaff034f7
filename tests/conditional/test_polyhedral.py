"""The polyhedral lemma and the truncated-normal pivot against an 80-digit oracle and brute force."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
from scipy import special

from selective.conditional import (
    polyhedral_test,
    truncated_normal_interval,
    truncated_normal_pivot,
    truncated_normal_pvalue,
    truncation_limits,
)

# Oracle: the normal upper tail in 80-digit decimal arithmetic (standard library only):
# a Taylor series for |x| < 3 and the Laplace continued fraction of the Mills ratio beyond.
# mpmath would do the same; it is not a dependency, so the oracle is written out here.
decimal.getcontext().prec = 80
_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")


def _mp_sf(x):
    if isinstance(x, float) and math.isinf(x):
        return decimal.Decimal(0) if x > 0 else decimal.Decimal(1)
    x = decimal.Decimal(repr(float(x))) if not isinstance(x, decimal.Decimal) else x
    if x < 0:
        return 1 - _mp_sf(-x)
    phi = (-(x * x) / 2).exp() / (2 * _PI).sqrt()
    if x < 3:
        term, total, k = x, x, 0
        while abs(term) > decimal.Decimal(10) ** -85:
            k += 1
            term = term * x * x / (2 * k + 1)
            total += term
        return decimal.Decimal(1) / 2 - phi * total
    t = decimal.Decimal(0)
    for k in range(3000, 0, -1):
        t = k / (x + t)
    return phi / (x + t)


def _mp_mass(lo, hi):
    """P(lo <= Z <= hi) in 80 digits, from the tail on the side away from zero."""
    if lo >= 0:
        return _mp_sf(lo) - _mp_sf(hi)
    if hi <= 0:
        return _mp_sf(-hi) - _mp_sf(-lo)
    return 1 - _mp_sf(-lo) - _mp_sf(hi)


def _mp_tail(z, a, b, mu=0.0):
    """P(Z >= z | a <= Z <= b), Z ~ N(mu, 1), in 80-digit arithmetic."""
    return _mp_mass(z - mu, b - mu) / _mp_mass(a - mu, b - mu)


EXTREME = [
    # (z, a, b): far upper tail, far lower tail, both, short intervals, straddling zero
    (8.05, 7.57, math.inf),
    (11.303071032960066, 4.059664947703843, math.inf),     # case 1, R returns 0
    (22.060889293829263, 1.135700472460193, 73.3597167723107),
    (40.0, 35.0, math.inf),
    (38.0, 37.9, 38.5),
    (-38.0, -math.inf, -30.0),
    (-30.0, -31.0, -29.0),
    (1e-9, -1e-9, 2e-9),
    (0.3, -2.0, 1.0),
    (7.78, 7.57, math.inf),
    (150.0, 149.0, 152.0),
]


class TestTruncatedNormalPvalueOracle:
    @pytest.mark.parametrize("z,a,b", EXTREME)
    def test_truncated_normal_pvalue_against_oracle(self, z, a, b):
        exact = float(_mp_tail(z, a, b))
        got = truncated_normal_pvalue(z, sd=1.0, vlo=a, vup=b)
        assert got == pytest.approx(exact, rel=1e-9), (got, exact)

    @pytest.mark.parametrize("z,a,b", EXTREME)
    def test_lower_and_two_sided_against_oracle(self, z, a, b):
        upper = _mp_tail(z, a, b)
        lower = _mp_mass(a, z) / _mp_mass(a, b)
        got = truncated_normal_pvalue(z, sd=1.0, vlo=a, vup=b, alternative="less")
        assert got == pytest.approx(float(lower), rel=1e-9)
        two = truncated_normal_pvalue(z, sd=1.0, vlo=a, vup=b, alternative="two-sided")
        assert two == pytest.approx(min(1.0, 2 * float(min(upper, lower))), rel=1e-9)

    def test_scale_and_null_value(self):
        got = truncated_normal_pvalue(12.0, sd=2.0, vlo=9.0, vup=20.0, null_value=1.0)
        assert got == pytest.approx(float(_mp_tail(5.5, 4.0, 9.5)), rel=1e-10)

    def test_pivot_is_vectorised(self):
        z = np.array([1.0, 5.0, 30.0])
        got = truncated_normal_pivot(z, sd=1.0, vlo=0.5, vup=np.inf, mean=np.array([0.0, 1.0, 2.0]))
        exact = [float(_mp_tail(zz, 0.5, math.inf, m)) for zz, m in zip(z, [0.0, 1.0, 2.0], strict=True)]
        assert np.allclose(got, exact, rtol=1e-9, atol=0)


class TestTruncatedNormalPvalue:
    @pytest.mark.parametrize("z,a", [(40.0, 35.0), (25.0, 24.5), (30.0, 20.0), (1e3, 999.9)])
    def test_truncated_normal_pvalue_against_mills_series(self, z, a):
        # Oracle without mpmath: Phi-bar(x) = phi(x)/x * sum_k (-1)^k (2k-1)!! / x^(2k), an
        # asymptotic series accurate to ~1e-14 relative with 8 terms for x >= 20.
        def log_sf(x):
            terms = [1.0]
            for k in range(1, 8):
                terms.append(-terms[-1] * (2 * k - 1) / x ** 2)
            return -0.5 * x * x - 0.5 * math.log(2 * math.pi) - math.log(x) + math.log(sum(terms))

        exact = math.exp(log_sf(z) - log_sf(a))
        got = truncated_normal_pvalue(z, sd=1.0, vlo=a, vup=math.inf)
        assert got == pytest.approx(exact, rel=1e-10)
        assert got > 0  # the naive ratio of CDF differences is 0/0 here

    def test_moderate_values_against_direct_formula(self):
        z, a, b = 0.7, -0.5, 2.0
        direct = (special.ndtr(b) - special.ndtr(z)) / (special.ndtr(b) - special.ndtr(a))
        assert truncated_normal_pvalue(z, sd=1.0, vlo=a, vup=b) == pytest.approx(direct, rel=1e-13)

    def test_truncated_normal_pvalue_iv(self):
        with pytest.raises(ValueError, match="`alternative` must be one of"):
            truncated_normal_pvalue(1.0, sd=1.0, vlo=0.0, vup=2.0, alternative="bigger")
        with pytest.raises(ValueError, match="`sd` must be positive"):
            truncated_normal_pvalue(1.0, sd=0.0, vlo=0.0, vup=2.0)
        with pytest.raises(ValueError, match="`vlo` must not exceed `vup`"):
            truncated_normal_pvalue(1.0, sd=1.0, vlo=3.0, vup=2.0)


class TestTruncatedNormalInterval:
    @pytest.mark.parametrize("z,a,b", [(8.05, 7.57, math.inf), (40.0, 35.0, math.inf),
                                       (-30.0, -31.0, -29.0), (0.3, -2.0, 1.0),
                                       (2.5, 1.0, 3.0)])
    def test_truncated_normal_interval_against_oracle(self, z, a, b):
        alpha = 0.1
        lo, hi = truncated_normal_interval(z, sd=1.0, vlo=a, vup=b, alpha=alpha, gridrange=None)
        if math.isfinite(lo):
            assert float(_mp_tail(z, a, b, lo)) == pytest.approx(alpha / 2, rel=1e-8)
        if math.isfinite(hi):
            low_tail = _mp_mass(a - hi, z - hi) / _mp_mass(a - hi, b - hi)
            assert float(low_tail) == pytest.approx(alpha / 2, rel=1e-8)
        assert lo < z < hi or not (a < z < b)

    def test_gridrange_makes_far_ends_infinite(self):
        # with z just above a lower truncation point the lower end is far below
        lo, hi = truncated_normal_interval(1.001, sd=1.0, vlo=1.0, vup=math.inf, alpha=0.1)
        assert lo == -math.inf and math.isfinite(hi)
        lo2, _ = truncated_normal_interval(1.001, sd=1.0, vlo=1.0, vup=math.inf, alpha=0.1,
                                           gridrange=None)
        assert lo2 < -100

    def test_truncated_normal_interval_iv(self):
        with pytest.raises(ValueError, match="`alpha` must be a real number in \\(0, 1\\)"):
            truncated_normal_interval(1.0, sd=1.0, vlo=0.0, vup=2.0, alpha=1.5)
        with pytest.raises(ValueError, match="`gridrange` must be"):
            truncated_normal_interval(1.0, sd=1.0, vlo=0.0, vup=2.0, gridrange=(1, 2))


class TestTruncationLimits:
    def test_truncation_limits_against_brute_force(self):
        rng = np.random.default_rng(12)
        n, m = 6, 15
        A = rng.standard_normal((m, n))
        y = rng.standard_normal(n)
        b = A @ y + rng.uniform(0.1, 2.0, m)  # y inside
        eta = rng.standard_normal(n)
        lim = truncation_limits(A, b, y, eta, sigma=1.0)
        c = eta / (eta @ eta)
        z = y - c * (eta @ y)
        # scan the line y(t) = z + c t and find where it leaves the polyhedron
        ts = np.linspace(lim.statistic - 50, lim.statistic + 50, 200_001)
        inside = np.all(A @ (z[:, None] + c[:, None] * ts[None, :]) <= b[:, None], axis=0)
        assert ts[inside].min() == pytest.approx(lim.vlo, abs=1e-3)
        assert ts[inside].max() == pytest.approx(lim.vup, abs=1e-3)
        assert lim.vlo <= lim.statistic <= lim.vup
        assert lim.sd == pytest.approx(np.linalg.norm(eta))

    def test_general_covariance(self):
        rng = np.random.default_rng(3)
        n = 4
        L = rng.standard_normal((n, n))
        cov = L @ L.T + n * np.eye(n)
        A = -np.eye(n)
        y = np.abs(rng.standard_normal(n)) + 0.1
        eta = np.array([1.0, 0, 0, 0])
        lim = truncation_limits(A, np.zeros(n), y, eta, cov=cov)
        c = cov @ eta / (eta @ cov @ eta)
        z = y - c * y[0]
        # y_j = z_j + c_j t >= 0 for all j
        lows = [-z[j] / c[j] for j in range(n) if c[j] > 0]
        highs = [-z[j] / c[j] for j in range(n) if c[j] < 0]
        assert lim.vlo == pytest.approx(max(lows))
        assert lim.vup == pytest.approx(min(highs) if highs else math.inf)

    def test_truncation_limits_iv(self):
        with pytest.raises(ValueError, match="`A` must have 3 columns"):
            truncation_limits(np.ones((2, 2)), [1, 1], [0, 0, 0], [1, 0, 0])
        with pytest.raises(ValueError, match="`b` must have length 2"):
            truncation_limits(np.ones((2, 3)), [1, 1, 1], [0, 0, 0], [1, 0, 0])
        with pytest.raises(ValueError, match="`eta` must not be the zero vector"):
            truncation_limits(np.ones((2, 3)), [1, 1], [0, 0, 0], [0, 0, 0])
        with pytest.raises(ValueError, match="`y` must contain only finite"):
            truncation_limits(np.ones((2, 3)), [1, 1], [0, np.nan, 0], [1, 0, 0])


class TestPolyhedralTest:
    def test_polyhedral_test_against_theory(self):
        # y ~ N(mu, 1) in one dimension truncated to y >= 0: P(Y >= 1.5 | Y >= 0) under mu = 0
        res = polyhedral_test(-np.eye(1), [0.0], [1.5], [1.0], sigma=1.0, alternative="greater")
        assert res.pvalue == pytest.approx(2 * special.ndtr(-1.5), rel=1e-12)
        assert res.vlo == 0.0 and res.vup == math.inf
        frame = res.to_frame()
        assert list(frame.columns)[:4] == ["statistic", "sd", "vlo", "vup"]

    def test_polyhedral_test_iv(self):
        with pytest.raises(ValueError, match="not in the polyhedron"):
            polyhedral_test(-np.eye(1), [0.0], [-1.5], [1.0], sigma=1.0)
        with pytest.raises(ValueError, match="`sigma` must be a finite positive"):
            polyhedral_test(-np.eye(1), [0.0], [1.5], [1.0], sigma=-1.0)
