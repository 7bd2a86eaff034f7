"""Exact integer grids for real-valued queries (private helpers).

A real query value f is released through an integer k = rint(f / u) on a grid of spacing
u = 2^e (a power of two, so f / u and rint are exact in binary floating point). Rounding
moves each coordinate by at most 1/2 grid step, so an l1-sensitivity of Δ in real units
becomes an integer sensitivity of at most floor(Δ/u) + k on the grid (k coordinates), and an
l2-sensitivity of at most Δ/u + sqrt(k). Exact integer noise on the grid then carries the
certificate; the released value is (k + noise) * u, whose attainable set no longer depends on
the true f (the defence against Mironov's attack, THEORY.md 7.1).

Floating-point slack: the privacy proof needs the *computed* floating-point value of the query
to have sensitivity at most Δ; the exact value having it is not enough, because summation
rounding can move the computed value slightly further. Every integer sensitivity below adds
``FLOAT_SLACK_STEPS`` = 2 grid steps per coordinate, so a computed value that is within one
grid step (about Δ/2^20, relative) of a Δ-sensitive function is still covered. Larger
numerical errors (e.g. catastrophic cancellation) are the caller's responsibility.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

GRID_BITS = 20  # grid spacing is at most sensitivity / 2^GRID_BITS
FLOAT_SLACK_STEPS = 2  # grid steps per coordinate added for floating-point error of the query
_CLIP = 2.0**62  # |f / u| is clipped here (a 1-Lipschitz map: sensitivity is unchanged)


def grid_unit(sensitivity: float, bits: int = GRID_BITS) -> float:
    """Largest power of two u with u <= sensitivity / 2^bits."""
    m, e = math.frexp(float(sensitivity))  # sensitivity = m 2^e, m in [0.5, 1)
    return math.ldexp(1.0, e - 1 - bits)


def to_grid(values: np.ndarray, unit: float) -> np.ndarray:
    """rint(values / unit) as int64, clipped to +-2^62 grid steps (floats beyond 2^52 are integers)."""
    scaled = np.asarray(values, dtype=np.float64) / unit  # exact: unit is a power of two
    return np.rint(np.clip(scaled, -_CLIP, _CLIP)).astype(np.int64)


def grid_l1_sensitivity(sensitivity: float, unit: float, n_coords: int) -> int:
    """Integer l1-sensitivity of the rounded query: floor(Δ/u) + n_coords (rounding) + slack."""
    return math.floor(Fraction(sensitivity) / Fraction(unit)) + n_coords * (1 + FLOAT_SLACK_STEPS)


def grid_l2_sensitivity_squared(sensitivity: float, unit: float, n_coords: int) -> Fraction:
    """Exact rational bound on the squared l2-sensitivity of the rounded query in grid units.

    Each coordinate moves by at most 1 step from rounding and ``FLOAT_SLACK_STEPS`` from the
    slack, so the l2-sensitivity is at most Δ/u + c sqrt(k), c = 1 + FLOAT_SLACK_STEPS, and
    (Δ/u + c sqrt(k))^2 <= (Δ/u)^2 + 2 c (Δ/u) r + c^2 k with r = isqrt(k - 1) + 1 >= sqrt(k).
    """
    du = Fraction(sensitivity) / Fraction(unit)
    c = 1 + FLOAT_SLACK_STEPS
    r = math.isqrt(n_coords - 1) + 1 if n_coords else 0
    return du * du + 2 * c * du * r + c * c * n_coords


def grid_threshold_sensitivity(sensitivity: float, unit: float) -> int:
    """Integer bound ceil(Δ/u) + slack on the change of a real query measured in grid units."""
    return math.ceil(Fraction(sensitivity) / Fraction(unit)) + FLOAT_SLACK_STEPS
