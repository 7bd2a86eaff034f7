"""Accurate truncated-normal probabilities in log space (private helpers).

Every probability is computed from log upper-tail probabilities of the standard normal,
``log Phi(-x) = scipy.special.log_ndtr(-x)``, on whichever side of zero avoids cancellation,
and differences of tails are taken as ``log(e^u - e^v) = u + log1mexp(v - u)``. The relative
accuracy is therefore close to machine precision however far in the tails the interval lies
(down to probabilities of about 1e-300 and beyond, as logs).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate on both sides of ``-log 2``."""
    x = np.asarray(x, dtype=float)
    out = np.full_like(x, -np.inf)
    small = x > -np.log(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(small, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
    return np.where(x == 0, -np.inf, out)


def log_normal_mass(lo, hi):
    r"""``log(Phi(hi) - Phi(lo))`` for ``lo <= hi`` (broadcast), accurate in both tails.

    For ``lo >= 0`` it uses upper tails, :math:`\bar\Phi(lo) - \bar\Phi(hi)`; for ``hi <= 0``
    lower tails, :math:`\Phi(hi) - \Phi(lo)`; when the interval straddles zero it is
    :math:`(\mathrm{erf}(hi/\sqrt2) - \mathrm{erf}(lo/\sqrt2))/2`, a sum of two terms of the
    same sign, so short intervals around zero keep full relative accuracy too.
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    out = np.empty(lo.shape, dtype=float)
    upper = lo >= 0
    lower = (~upper) & (hi <= 0)
    mid = ~(upper | lower)
    if upper.any():
        u = special.log_ndtr(-lo[upper])  # log Phi-bar(lo)
        v = special.log_ndtr(-hi[upper])  # log Phi-bar(hi)
        out[upper] = u + _log1mexp(v - u)
    if lower.any():
        u = special.log_ndtr(hi[lower])  # log Phi(hi)
        v = special.log_ndtr(lo[lower])  # log Phi(lo)
        out[lower] = u + _log1mexp(v - u)
    if mid.any():
        r2 = np.sqrt(2.0)
        out[mid] = np.log(0.5 * (special.erf(hi[mid] / r2) - special.erf(lo[mid] / r2)))
    return out


def log_sf_truncated(z, a, b, mu=0.0):
    r"""``log P(Z >= z | a <= Z <= b)`` with ``Z ~ N(mu, 1)``, ``a <= z <= b`` (clipped)."""
    z, a, b, mu = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (z, a, b, mu)))
    zc = np.clip(z, a, b)
    return log_normal_mass(zc - mu, b - mu) - log_normal_mass(a - mu, b - mu)


def log_cdf_truncated(z, a, b, mu=0.0):
    r"""``log P(Z <= z | a <= Z <= b)`` with ``Z ~ N(mu, 1)``."""
    z, a, b, mu = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (z, a, b, mu)))
    zc = np.clip(z, a, b)
    return log_normal_mass(a - mu, zc - mu) - log_normal_mass(a - mu, b - mu)


def _solve_mu(z: float, a: float, b: float, level: float, *, lower_tail: bool,
              bound: float | None) -> float:
    """Standardised mu at which the pivot tail equals ``level``.

    ``lower_tail=False`` solves ``P_mu(Z >= z | a, b) = level`` (a lower confidence end);
    ``lower_tail=True`` solves ``P_mu(Z <= z | a, b) = level`` (an upper end). The tail
    ``P_mu(Z >= z)`` increases in mu, ``P_mu(Z <= z)`` decreases. Returns +-inf when the root
    lies beyond ``bound`` (or when it does not exist).
    """
    log_level = np.log(level)

    def f(m):
        if lower_tail:
            return float(log_cdf_truncated(z, a, b, m)) - log_level  # decreasing in m
        return float(log_sf_truncated(z, a, b, m)) - log_level  # increasing in m

    sign = -1.0 if lower_tail else 1.0  # sign * f is increasing

    def g(m):
        return sign * f(m)

    # bracket around the statistic, widening geometrically
    lo_m, hi_m = z - 1.0, z + 1.0
    limit = bound if bound is not None else 1e7
    step = 1.0
    while g(lo_m) > 0:
        step *= 2.0
        lo_m = z - step
        if lo_m < -limit:
            if bound is not None and g(-bound) > 0:
                return -np.inf
            lo_m = -limit
            if g(lo_m) > 0:
                return -np.inf
            break
    step = 1.0
    while g(hi_m) < 0:
        step *= 2.0
        hi_m = z + step
        if hi_m > limit:
            if bound is not None and g(bound) < 0:
                return np.inf
            hi_m = limit
            if g(hi_m) < 0:
                return np.inf
            break
    root = optimize.brentq(g, lo_m, hi_m, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=500)
    if bound is not None and abs(root) > bound:
        return np.inf if root > 0 else -np.inf
    return root


def interval_standardised(z: float, a: float, b: float, alpha: float,
                          bound: float | None) -> tuple[float, float]:
    """Equal-tailed (1 - alpha) interval for mu (standardised scale) by inverting the pivot."""
    low = _solve_mu(z, a, b, alpha / 2, lower_tail=False, bound=bound)
    high = _solve_mu(z, a, b, alpha / 2, lower_tail=True, bound=bound)
    return low, high
