"""Accurate truncated-normal probabilities in log space (private helpers).

Every probability is computed from log upper-tail probabilities of the standard normal,
``log Phi(-x) = scipy.special.log_ndtr(-x)``, on whichever side of zero avoids cancellation,
and differences of tails are taken as ``log(e^u - e^v) = u + log1mexp(v - u)``. The relative
accuracy is therefore close to machine precision however far in the tails the interval lies
(down to probabilities of about 1e-300 and beyond, as logs).
"""

from __future__ import annotations

import math

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
    for sel, near, far in ((upper, lo, hi), (lower, -hi, -lo)):
        if not sel.any():
            continue
        # near = endpoint closer to zero (>= 0 after reflection), far = the other one
        u = special.log_ndtr(-near[sel])  # log Phi-bar(near)
        v = special.log_ndtr(-far[sel])   # log Phi-bar(far)
        d = v - u
        res = u + _log1mexp(d)
        short = d > -0.5  # the two tails are within a factor e^0.5: cancellation in d
        if short.any():
            res[short] = _log_mass_short(near[sel][short], far[sel][short])
        out[sel] = res
    if mid.any():
        r2 = np.sqrt(2.0)
        out[mid] = np.log(0.5 * (special.erf(hi[mid] / r2) - special.erf(lo[mid] / r2)))
    return out


_GL_X, _GL_W = np.polynomial.legendre.leggauss(30)


def _log_mass_short(near, far):
    """log of the normal mass between 0 <= near < far when the interval is short.

    Factor out phi(near): mass = phi(near) * int_0^h exp(-near u - u^2/2) du, h = far - near,
    by 30-point Gauss-Legendre (the integrand is entire and varies by at most a factor of
    about e^0.5 here, so the rule is exact to rounding).
    """
    h = far - near
    u = 0.5 * h[:, None] * (_GL_X[None, :] + 1.0)
    integrand = np.exp(-near[:, None] * u - 0.5 * u * u)
    integral = 0.5 * h * (integrand @ _GL_W)
    return -0.5 * near * near - 0.5 * np.log(2 * np.pi) + np.log(integral)


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


def _log_mass_scalar(lo: float, hi: float) -> float:
    """Scalar version of :func:`log_normal_mass` (the root finders call it many times)."""
    if lo >= 0 or hi <= 0:
        near, far = (lo, hi) if lo >= 0 else (-hi, -lo)
        u = float(special.log_ndtr(-near))
        v = float(special.log_ndtr(-far))
        d = v - u
        if d > -0.5:
            return float(_log_mass_short(np.array([near]), np.array([far]))[0])
        return u + (math.log(-math.expm1(d)) if d > -math.log(2.0) else math.log1p(-math.exp(d)))
    r2 = math.sqrt(2.0)
    return math.log(0.5 * (math.erf(hi / r2) - math.erf(lo / r2)))


def _log_sf_scalar(z, a, b, mu):
    zc = min(max(z, a), b)
    return _log_mass_scalar(zc - mu, b - mu) - _log_mass_scalar(a - mu, b - mu)


def _log_cdf_scalar(z, a, b, mu):
    zc = min(max(z, a), b)
    return _log_mass_scalar(a - mu, zc - mu) - _log_mass_scalar(a - mu, b - mu)


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
            return _log_cdf_scalar(z, a, b, m) - log_level  # decreasing in m
        return _log_sf_scalar(z, a, b, m) - log_level  # increasing in m

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
    """Equal-tailed (1 - alpha) interval for mu (standardised scale) by inverting the pivot.

    Returns (nan, nan) when the truncation interval is degenerate (a >= b) or z is NaN.
    """
    if not (a < b) or math.isnan(z):
        return math.nan, math.nan
    low = _solve_mu(z, a, b, alpha / 2, lower_tail=False, bound=bound)
    high = _solve_mu(z, a, b, alpha / 2, lower_tail=True, bound=bound)
    return low, high
