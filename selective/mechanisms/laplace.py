r"""The Laplace mechanism with exact discrete noise (THEORY.md 5.1, 5.2, 7.1).

:func:`laplace_scale` is the calibration :math:`b = \Delta_1/\varepsilon` of Dwork and Roth
(2014), Theorem 3.6. :func:`laplace_mechanism` releases a query with noise of at least that
scale, drawn by the exact discrete Laplace sampler: integer queries (counts, means times n)
directly; real queries after rounding to a power-of-two grid fine enough not to matter
(sensitivity inflated by at most the rounding, so the certificate is exact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_positive, check_rng
from ..accounting.certificates import PureDP
from . import _grid
from .samplers import _discrete_laplace_array, fraction_at_least

__all__ = ["LaplaceScale", "laplace_scale", "LaplaceRelease", "laplace_mechanism"]


@dataclass(frozen=True, slots=True)
class LaplaceScale:
    r"""Calibration of the Laplace mechanism.

    Attributes
    ----------
    scale : float
        :math:`b = \Delta_1/\varepsilon`.
    std : float
        :math:`\sqrt2\,b`.
    epsilon, sensitivity : float
        The inputs (ε in nats; Δ₁ the l1-sensitivity under replace-one neighbours).
    """

    scale: float
    std: float
    epsilon: float
    sensitivity: float

    def tail_probability(self, t: float) -> float:
        r""":math:`P[|Y| \ge t b] = e^{-t}` for :math:`Y \sim \mathrm{Lap}(b)`, t >= 0."""
        return math.exp(-check_positive("t", t, allow_zero=True))


def laplace_scale(*, sensitivity: float, epsilon: float) -> LaplaceScale:
    r"""Laplace scale for an ε-DP release of a query of l1-sensitivity Δ₁.

    Parameters
    ----------
    sensitivity : float
        l1-sensitivity Δ₁ > 0 (replace-one neighbours; the mean of a [a, b]-valued function
        over n rows has (b - a)/n).
    epsilon : float
        ε > 0, in nats.

    Returns
    -------
    LaplaceScale
        ``scale`` = Δ₁/ε, ``std`` = √2 Δ₁/ε.

    Notes
    -----
    Dwork and Roth (2014), Theorem 3.6 and Fact 3.7 (THEORY.md 5.1).

    Examples
    --------
    >>> laplace_scale(sensitivity=1.0, epsilon=0.1).scale
    10.0
    """
    d = check_positive("sensitivity", sensitivity)
    e = check_positive("epsilon", epsilon)
    b = d / e
    return LaplaceScale(scale=b, std=math.sqrt(2.0) * b, epsilon=e, sensitivity=d)


@dataclass(frozen=True, slots=True)
class LaplaceRelease:
    """Output of :func:`laplace_mechanism`.

    Attributes
    ----------
    values : numpy.ndarray
        The noisy values (int64 for integer queries, float64 otherwise).
    certificate : PureDP
        ε-DP with respect to replace-one neighbours, given the declared sensitivity.
    scale : Fraction
        Noise scale actually used, in grid units (exact).
    unit : float
        Grid spacing (1 for integer queries); the noise on the original scale is
        ``scale * unit`` >= sensitivity / epsilon.
    """

    values: np.ndarray
    certificate: PureDP
    scale: Fraction = field(repr=False)
    unit: float


def laplace_mechanism(values: Any, *, sensitivity: float, epsilon: float, rng: Any = None,
                      integer: bool | None = None) -> LaplaceRelease:
    r"""Release ``values`` (a scalar or vector query) with exact Laplace-type noise.

    Parameters
    ----------
    values : array_like
        The true query answer(s), computed on the data.
    sensitivity : float
        l1-sensitivity Δ₁ > 0 of the whole vector under replace-one neighbours.
    epsilon : float
        ε > 0 in nats.
    rng : numpy.random.Generator or seed, optional
    integer : bool, optional
        Treat the query as integer-valued (counts, means times n): noise is discrete Laplace of
        scale at least Δ₁/ε added directly. Default: True when ``values`` has an integer dtype
        and ``sensitivity`` is an integer.

    Returns
    -------
    LaplaceRelease
        Noisy values and a ``PureDP(epsilon)`` certificate.

    Notes
    -----
    Integer queries: the discrete Laplace :math:`P[Z=z]\propto e^{-|z|/t}` with
    :math:`t\ge\Delta_1/\varepsilon` gives ε-DP for integer queries of sensitivity Δ₁
    (Canonne, Kamath, Steinke 2020; THEORY.md 5.2). Real queries are rounded to a grid of
    spacing u = 2^e <= Δ₁/(2^20 k) (k coordinates); the rounded vector has integer
    l1-sensitivity floor(Δ₁/u) + k, and the noise is calibrated to that, so the certificate
    is exactly ε at a relative cost of at most 2^-20 in noise.
    """
    d = check_positive("sensitivity", sensitivity)
    e = check_positive("epsilon", epsilon)
    rng = check_rng(rng)
    arr = np.asarray(values)
    if arr.dtype.kind not in "iufb" or arr.dtype.kind == "b":
        raise TypeError(f"`values` must be numeric; got dtype {arr.dtype}.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("`values` must be finite; got NaN or infinity.")
    if integer is None:
        integer = arr.dtype.kind in "iu" and float(d).is_integer()
    flat = arr.ravel()
    if integer:
        if not float(d).is_integer():
            raise ValueError(f"`sensitivity` must be an integer for an integer query; got {sensitivity!r}.")
        if arr.dtype.kind == "f" and not np.all(flat == np.rint(flat)):
            raise ValueError("`values` must be integers when `integer=True`.")
        unit, d_int = 1.0, int(d)
        grid = flat.astype(np.int64)
    else:
        unit = _grid.grid_unit(d, _grid.GRID_BITS + max(flat.size, 1).bit_length())
        grid = _grid.to_grid(flat, unit)
        d_int = _grid.grid_l1_sensitivity(d, unit, flat.size)
    scale = fraction_at_least(Fraction(d_int) / Fraction(e))
    noise = _discrete_laplace_array(scale.numerator, scale.denominator, flat.size, rng)
    noisy = grid + noise
    out = noisy.reshape(arr.shape) if integer else (noisy.astype(np.float64) * unit).reshape(arr.shape)
    return LaplaceRelease(values=out, certificate=PureDP(e), scale=scale, unit=unit)
