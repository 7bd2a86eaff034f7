r"""Gaussian mechanisms: calibrations (classic, analytic), zCDP view, discrete Gaussian.

THEORY.md 5.2. Units: ε and ρ in nats, δ a probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize, special

from .._validation import check_in_interval, check_int, check_positive, check_probability, check_rng
from ..accounting.certificates import ZCDP
from . import _grid
from .laplace import _add_exact, _prepare_release
from .samplers import _discrete_gaussian_array, _scale_at_least

__all__ = [
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_delta_analytic",
    "gaussian_rho",
    "discrete_gaussian_delta",
    "DiscreteGaussianPrivacy",
    "GaussianRelease",
    "gaussian_mechanism",
]


def gaussian_sigma_classic(*, sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Classic Gaussian calibration :math:`\sigma = \Delta_2\sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Parameters
    ----------
    sensitivity : float
        l2-sensitivity Δ₂ > 0.
    epsilon : float
        ε in (0, 1) nats. The theorem does not cover ε >= 1 (THEORY.md 7.13): use
        :func:`gaussian_sigma_analytic`.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The boundary value; any σ strictly above it gives (ε, δ)-DP.

    Notes
    -----
    Dwork and Roth (2014), Theorem 3.22 (with :math:`c^2 > 2\ln(1.25/\delta)`).
    """
    d = check_positive("sensitivity", sensitivity)
    e = check_in_interval("epsilon", epsilon, low=0.0, high=1.0, closed="neither")
    dl = check_probability("delta", delta, closed="neither")
    return d * math.sqrt(2.0 * math.log(1.25 / dl)) / e


def gaussian_delta_analytic(*, sigma: float, epsilon: float, sensitivity: float) -> float:
    r"""Exact δ(ε) of the Gaussian mechanism :math:`N(0,\sigma^2)` on l2-sensitivity Δ.

    .. math:: \delta = \Phi\Big(\frac{\Delta}{2\sigma}-\frac{\varepsilon\sigma}{\Delta}\Big)
              - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma}-\frac{\varepsilon\sigma}{\Delta}\Big)

    Notes
    -----
    Balle and Wang (ICML 2018), Theorem 8 (THEORY.md 5.2). Evaluated with log-Φ so the second
    term neither overflows nor underflows.
    """
    s = check_positive("sigma", sigma)
    e = check_positive("epsilon", epsilon, allow_zero=True)
    d = check_positive("sensitivity", sensitivity)
    return _delta_analytic(s, e, d)


def _delta_analytic(s: float, e: float, d: float) -> float:
    a = d / (2.0 * s)
    b = e * s / d
    first = special.ndtr(a - b)
    second = math.exp(e + special.log_ndtr(-a - b))
    return max(float(first - second), 0.0)


def gaussian_sigma_analytic(*, sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Least σ with :func:`gaussian_delta_analytic` <= δ (analytic Gaussian mechanism).

    Valid for every ε > 0 (Balle and Wang 2018, Theorem 8 and Algorithm 1; THEORY.md 5.2).
    δ(σ) decreases in σ; the root is found by bracketing and Brent's method to relative
    accuracy 1e-14, and the returned σ is nudged up until δ(σ) <= δ holds in floating point.
    """
    d = check_positive("sensitivity", sensitivity)
    e = check_positive("epsilon", epsilon)
    dl = check_probability("delta", delta, closed="neither")

    def f(log_s: float) -> float:
        return _delta_analytic(math.exp(log_s), e, d) - dl

    lo, hi = math.log(d) - 1.0, math.log(d) + 1.0
    while f(lo) <= 0:
        lo -= 2.0
    while f(hi) > 0:
        hi += 2.0
    root = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    s = math.exp(root)
    while _delta_analytic(s, e, d) > dl:
        s = math.nextafter(s, math.inf)
    return s


def gaussian_rho(*, sigma: float, sensitivity: float) -> float:
    r"""zCDP parameter :math:`\rho = \Delta_2^2/(2\sigma^2)` of the Gaussian mechanism (nats).

    Bun and Steinke (2016), Proposition 1.6 (THEORY.md 5.2).
    """
    s = check_positive("sigma", sigma)
    d = check_positive("sensitivity", sensitivity)
    return d * d / (2.0 * s * s)


@dataclass(frozen=True, slots=True)
class DiscreteGaussianPrivacy:
    """Privacy of the discrete Gaussian on an integer query: δ at the given ε, and ρ."""

    delta: float
    rho_zcdp: float
    epsilon: float
    sigma: float
    sensitivity: int


def discrete_gaussian_delta(*, sigma: float, epsilon: float, sensitivity: int = 1) -> DiscreteGaussianPrivacy:
    r"""(ε, δ) and zCDP of the discrete Gaussian mechanism on an integer query.

    .. math:: \delta = P\Big[Y>\frac{\varepsilon\sigma^2}{\Delta}-\frac{\Delta}{2}\Big]
              - e^{\varepsilon}P\Big[Y>\frac{\varepsilon\sigma^2}{\Delta}+\frac{\Delta}{2}\Big],
              \qquad \rho=\frac{\Delta^2}{2\sigma^2}

    with :math:`P[Y=y]\propto e^{-y^2/(2\sigma^2)}` on the integers.

    Parameters
    ----------
    sigma : float
        σ > 0 of the discrete Gaussian.
    epsilon : float
        ε >= 0, nats.
    sensitivity : int
        Integer sensitivity Δ >= 1 of the query.

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Theorem 7 (δ re-derived in THEORY.md 5.2 from the
    privacy-loss threshold). Summed as :math:`\sum_{y>a} w(y)(1-e^{\varepsilon-(2y\Delta+\Delta^2)/(2\sigma^2)})`,
    whose terms are all >= 0 (no cancellation), relative to the largest term (no underflow).
    """
    s = check_positive("sigma", sigma)
    e = check_positive("epsilon", epsilon, allow_zero=True)
    d = check_int("sensitivity", sensitivity, low=1)
    s2 = s * s
    a = e * s2 / d - d / 2.0  # first tail: y > a
    y0 = math.floor(a) + 1
    # normaliser Z = sum_y exp(-y^2/(2 s2)), and log of the tail relative to w(y0)
    span = int(math.ceil(40.0 * s)) + 2
    ys = np.arange(-span, span + 1, dtype=np.float64)
    log_z = special.logsumexp(-ys * ys / (2.0 * s2))
    terms = []
    y = y0
    while True:
        rel = -(y * y - y0 * y0) / (2.0 * s2)  # log w(y) - log w(y0)
        if rel < -800.0:
            break
        factor = -math.expm1(e - (2.0 * y * d + d * d) / (2.0 * s2))
        terms.append(math.exp(rel) * factor)
        y += 1
    total = math.fsum(terms)
    delta = 0.0 if total <= 0 else math.exp(math.log(total) - y0 * y0 / (2.0 * s2) - log_z)
    return DiscreteGaussianPrivacy(
        delta=min(delta, 1.0), rho_zcdp=d * d / (2.0 * s2), epsilon=e, sigma=s, sensitivity=d
    )


_MIN_SIGMA2 = Fraction(1, 2**40)  # below this variance a draw of |Y| >= 2^11.5 would overflow the exact sampler


@dataclass(frozen=True, slots=True)
class GaussianRelease:
    """Output of :func:`gaussian_mechanism`: noisy values and a ``ZCDP(rho)`` certificate.

    ``sigma2`` is the exact variance parameter used, in grid units of spacing ``unit``.
    """

    values: np.ndarray
    certificate: ZCDP
    sigma2: Fraction = field(repr=False)
    unit: float


def gaussian_mechanism(values: Any, *, sensitivity: float, rho: float, rng: Any = None,
                       integer: bool | None = None) -> GaussianRelease:
    r"""Release ``values`` with exact discrete Gaussian noise, ρ-zCDP.

    Parameters
    ----------
    values : array_like
        True query answer(s).
    sensitivity : float
        l2-sensitivity Δ₂ > 0 under replace-one neighbours.
    rho : float
        Target ρ > 0 (nats). The noise has :math:`\sigma^2 \ge \Delta^2/(2\rho)` on the
        (effective) sensitivity, so the certificate is exactly ``ZCDP(rho)``.
    rng : numpy.random.Generator or seed, optional
    integer : bool, optional
        Integer query (default: integer dtype and integer sensitivity).

    Notes
    -----
    The discrete Gaussian on an integer query of l2-sensitivity Δ is :math:`\Delta^2/(2\sigma^2)`-zCDP
    (Canonne, Kamath and Steinke 2020, Theorem 4 and Section 2.2 for vectors [R in THEORY.md]).
    Real queries are rounded to a power-of-two grid u <= Δ/(2^20 k), which raises the l2-sensitivity
    to at most Δ/u + √k in grid units, plus 2√k of slack for floating-point error; σ is
    calibrated to that.

    **Assumption on the float values.** The guarantee needs the *computed* values to have
    l2-sensitivity at most Δ; summation rounding can exceed it slightly. The slack of 2 grid
    steps per coordinate covers computed values within one grid step (about Δ/2^20) of a
    Δ-sensitive function, not more. Integer queries (``integer=True``) must hold integers:
    a float array with a non-integer value raises, as in :func:`laplace_mechanism`.
    """
    d = check_positive("sensitivity", sensitivity)
    r = check_positive("rho", rho)
    rng = check_rng(rng)
    arr, flat, integer, unit, grid = _prepare_release(values, d, sensitivity, integer)
    d_eff2 = Fraction(int(d)) ** 2 if integer else _grid.grid_l2_sensitivity_squared(d, unit, flat.size)
    sigma2 = _scale_at_least(d_eff2 / (2 * Fraction(r)))
    if sigma2 < _MIN_SIGMA2:
        raise ValueError(f"`rho` = {rho!r} is too large for `sensitivity` = {sensitivity!r}: the noise variance "
                         "would be below 2^-40 grid steps squared, where the exact sampler's exponents can exceed "
                         "2^62; use a smaller rho (any rho this large already gives essentially no privacy).")
    noise = _discrete_gaussian_array(sigma2, flat.size, rng)
    noisy = _add_exact(grid, noise)
    if integer:
        if noisy.dtype == object:
            raise OverflowError("the noisy integer values do not fit int64; pass `integer=False` for a float release.")
        out = noisy.reshape(arr.shape)
    else:
        out = (noisy.astype(np.float64) * unit).reshape(arr.shape)
    return GaussianRelease(values=out, certificate=ZCDP(r), sigma2=sigma2, unit=unit)
