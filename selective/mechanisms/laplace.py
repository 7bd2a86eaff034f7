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
from .samplers import _discrete_laplace_array, _scale_at_least

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
    l1-sensitivity floor(Δ₁/u) + k, plus 2 grid steps per coordinate of slack for
    floating-point error, and the noise is calibrated to that, so the certificate is exactly ε
    at a relative cost of about 3·2^-20 in noise.

    **Assumption on the float values.** The guarantee needs the *computed* values (what is
    passed as ``values``) to have l1-sensitivity at most Δ₁. Summation rounding can make the
    computed statistic move slightly more than the exact one; the 2 steps of slack per
    coordinate (about 2Δ₁/2^20 in total per coordinate) cover errors up to one grid step per
    coordinate, not more. Compute statistics stably (e.g. ``math.fsum``, counts as integers
    with ``integer=True``) when the data are large in magnitude relative to Δ₁.

    Integer queries must be integers (checked: a float array with a non-integer value
    raises) and below 2^63 in absolute value. The noise is drawn from the exact law for every
    scale (no int64 wrap-around in the sampler or in the addition).
    """
    d = check_positive("sensitivity", sensitivity)
    e = check_positive("epsilon", epsilon)
    rng = check_rng(rng)
    arr, flat, integer, unit, grid = _prepare_release(values, d, sensitivity, integer)
    d_int = int(d) if integer else _grid.grid_l1_sensitivity(d, unit, flat.size)
    scale = _scale_at_least(Fraction(d_int) / Fraction(e))
    noise = _discrete_laplace_array(scale.numerator, scale.denominator, flat.size, rng)
    noisy = _add_exact(grid, noise)
    if integer:
        if noisy.dtype == object:
            raise OverflowError("the noisy integer values do not fit int64; pass `integer=False` for a float release.")
        out = noisy.reshape(arr.shape)
    else:
        out = (noisy.astype(np.float64) * unit).reshape(arr.shape)
    return LaplaceRelease(values=out, certificate=PureDP(e), scale=scale, unit=unit)


def _prepare_release(values: Any, d: float, sensitivity: Any, integer: bool | None):
    """Shared input handling of the Laplace and Gaussian mechanisms: check the values, decide
    whether the query is integer, and put it on its exact integer grid.

    Returns (array, flat values, integer flag, grid unit, integer grid values)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
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
        return arr, flat, True, 1.0, _as_int64(flat)
    unit = _grid.grid_unit(d, _grid.GRID_BITS + max(flat.size, 1).bit_length())
    return arr, flat, False, unit, _grid.to_grid(flat, unit)


def _as_int64(flat: np.ndarray) -> np.ndarray:
    """Integer query values as int64 (refusing values an int64 cannot hold exactly)."""
    if flat.dtype.kind == "f" and flat.size and not np.all(np.abs(flat) < 2.0**63):
        raise ValueError("`values` must be below 2^63 in absolute value when `integer=True`.")
    if flat.dtype.kind == "u" and flat.size and int(flat.max()) >= 2**63:
        raise ValueError("`values` must be below 2^63 in absolute value when `integer=True`.")
    return flat.astype(np.int64)


def _add_exact(grid: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """grid + noise without int64 wrap-around: int64 when it provably fits, else Python integers."""
    if grid.size == 0:
        return grid.copy()
    bound = int(np.abs(grid).max(initial=0)) + int(np.abs(noise).max(initial=0))
    if bound < 2**63 - 1:
        return grid + noise
    return np.array([int(a) + int(b) for a, b in zip(grid, noise, strict=True)], dtype=object)
