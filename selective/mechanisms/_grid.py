"""Exact integer grids for real-valued queries (private helpers).

A real query value f is released through an integer k = rint(f / u) on a grid of spacing
u = 2^e (a power of two, so f / u and rint are exact in binary floating point). Rounding
moves each coordinate by at most 1/2 grid step, so an l1-sensitivity of Δ in real units
becomes an integer sensitivity of at most floor(Δ/u) + k on the grid (k coordinates), and an
l2-sensitivity of at most Δ/u + sqrt(k). Exact integer noise on the grid then carries the
certificate; the released value is (k + noise) * u, whose attainable set no longer depends on
the true f (the defence against Mironov's attack, THEORY.md 7.1).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

GRID_BITS = 20  # grid spacing is at most sensitivity / 2^GRID_BITS
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
    """Integer l1-sensitivity of the rounded query: floor(Δ/u) + n_coords."""
    return math.floor(Fraction(sensitivity) / Fraction(unit)) + n_coords


def grid_threshold_sensitivity(sensitivity: float, unit: float) -> int:
    """Integer bound ceil(Δ/u) on the change of a real query measured in grid units."""
    return math.ceil(Fraction(sensitivity) / Fraction(unit))
