"""20-digit (or more: the caller's mpmath precision) noise distribution functions shared by the
randomized-inference tests: Gaussian, Gumbel (maximum) and Laplace, centred, of scale ``b``."""

from __future__ import annotations

import math

import mpmath as mp


def mp_cdf(noise: str, b: float, x: float):
    """P(W <= x) for W of the given law and scale, exact in mpmath (infinite x allowed)."""
    if x == math.inf:
        return mp.mpf(1)
    if x == -math.inf:
        return mp.mpf(0)
    x = mp.mpf(x) / b
    if noise == "gaussian":
        return mp.ncdf(x)
    if noise == "gumbel":
        return mp.e ** (-mp.e ** (-x))
    return mp.e ** x / 2 if x < 0 else 1 - mp.e ** (-x) / 2


def mp_sf(noise: str, b: float, x: float):
    """P(W > x), computed without cancellation in the upper tail (infinite x allowed)."""
    if x == math.inf:
        return mp.mpf(0)
    if x == -math.inf:
        return mp.mpf(1)
    x = mp.mpf(x) / b
    if noise == "gaussian":
        return mp.ncdf(-x)
    if noise == "gumbel":
        return -mp.expm1(-mp.e ** (-x))
    return 1 - mp.e ** x / 2 if x < 0 else mp.e ** (-x) / 2
