"""High-precision noise distribution functions shared by the randomized-inference tests (the
caller's mpmath precision): Gaussian, Gumbel (maximum) and Laplace, centred, of scale ``b``."""

from __future__ import annotations

import math

import mpmath as mp


def _tails(noise: str, x):
    """(P(W <= x), P(W > x)) for the standard law, each computed without cancellation in its tail."""
    if noise == "gaussian":
        return mp.ncdf(x), mp.ncdf(-x)
    if noise == "gumbel":
        inner = mp.e ** (-x)
        return mp.e ** (-inner), -mp.expm1(-inner)
    if x < 0:
        low = mp.e ** x / 2
        return low, 1 - low
    high = mp.e ** (-x) / 2
    return 1 - high, high


def _tail(noise: str, b: float, x: float, upper: bool):
    if math.isinf(x):
        return mp.mpf(int((x > 0) != upper))
    return _tails(noise, mp.mpf(x) / b)[int(upper)]


def mp_cdf(noise: str, b: float, x: float):
    """P(W <= x) for W of the given law and scale, in mpmath (infinite x allowed)."""
    return _tail(noise, b, x, upper=False)


def mp_sf(noise: str, b: float, x: float):
    """P(W > x), without cancellation in the upper tail (infinite x allowed)."""
    return _tail(noise, b, x, upper=True)


def svt_segments(ev) -> list[tuple[list[int], bool]]:
    """The segments of a Sparse Vector run: the queries up to and including each above-threshold
    answer (True), and the unfinished last run of below-threshold answers (False)."""
    segments, seg = [], []
    for q, above in zip(ev.asked, ev.above, strict=True):
        seg.append(q)
        if above:
            segments.append((seg, True))
            seg = []
    if seg:
        segments.append((seg, False))
    return segments
