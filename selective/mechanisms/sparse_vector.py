r"""AboveThreshold, Sparse and NumericSparse (Dwork and Roth 2014, Algorithms 1-3; THEORY.md 5.4).

The stateful objects cannot express the broken variants listed by Lyu, Su and Li (2017):
threshold noise and query noise are always drawn, the query noise scales with the cut-off c,
the threshold noise is redrawn after every ⊤, the noisy query value is never released (only
NumericSparse releases a *separately* noised answer), and the cut-off is mandatory: after c ⊤
answers every further query raises :class:`~selective.exceptions.BudgetExhausted`.

Noise is exact discrete Laplace on a power-of-two grid u <= Δ/2^16; a real query value f
is compared with the noisy threshold exactly (rational arithmetic), and the sensitivity is
taken as ceil(Δ/u) grid steps plus 2 steps of slack for floating-point error, so the privacy
proof (which shifts the noise by the sensitivity) holds verbatim for the implemented algorithm,
provided the *computed* query values have sensitivity at most Δ up to one grid step (summation
rounding can exceed the exact sensitivity slightly; see :mod:`selective.mechanisms._grid`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_int, check_positive, check_probability, check_real, check_rng
from ..accounting.certificates import ApproxDP, PureDP
from ..exceptions import BudgetExhausted
from . import _grid
from .samplers import _discrete_laplace_array, _scale_at_least

__all__ = [
    "AboveThresholdAccuracy",
    "above_threshold_accuracy",
    "SparseNoiseScales",
    "sparse_noise_scales",
    "LyuSuLiScales",
    "svt_lyu_su_li_alg1_scales",
    "sparse_accuracy",
    "AboveThreshold",
    "Sparse",
    "NumericSparse",
    "sparse_exact_noise_scales",
]

_SVT_GRID_BITS = 16


@dataclass(frozen=True, slots=True)
class AboveThresholdAccuracy:
    """(α, β)-accuracy of AboveThreshold in two valid forms."""

    alpha_dr14: float
    alpha_smith: float


def above_threshold_accuracy(
    *, n_queries: int, beta: float, epsilon: float, sensitivity: float = 1.0
) -> AboveThresholdAccuracy:
    r"""Accuracy α of AboveThreshold over k queries with failure probability β.

    ``alpha_dr14`` = :math:`8\Delta(\ln k+\ln(2/\beta))/\varepsilon` (Dwork and Roth 2014, Theorem
    3.24); ``alpha_smith`` = :math:`6\Delta\ln((k+1)/\beta)/\varepsilon` (Smith's lecture notes,
    Theorem 2: union bound over the k + 1 Laplace draws). Both are valid (THEORY.md 5.4).
    """
    k = check_int("n_queries", n_queries, low=1)
    b = check_probability("beta", beta, closed="neither")
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    return AboveThresholdAccuracy(
        alpha_dr14=8.0 * d * (math.log(k) + math.log(2.0 / b)) / e,
        alpha_smith=6.0 * d * math.log((k + 1) / b) / e,
    )


@dataclass(frozen=True, slots=True)
class SparseNoiseScales:
    """Laplace scales of Sparse: threshold noise Lap(σ) redrawn after each ⊤, query noise Lap(2σ)."""

    threshold_scale: float
    query_scale: float


def sparse_noise_scales(*, c: int, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0) -> SparseNoiseScales:
    r"""Noise of Sparse (Dwork and Roth 2014, Algorithm 2, Theorem 3.25; THEORY.md 5.4).

    :math:`\sigma=2c\Delta/\varepsilon` when δ = 0, else :math:`\sqrt{32c\ln(1/\delta)}\,\Delta/\varepsilon`;
    threshold noise Lap(σ), query noise Lap(2σ).
    """
    cc = check_int("c", c, low=1)
    e = check_positive("epsilon", epsilon)
    dl = check_probability("delta", delta, closed="left")
    d = check_positive("sensitivity", sensitivity)
    sigma = 2.0 * cc * d / e if dl == 0 else math.sqrt(32.0 * cc * math.log(1.0 / dl)) * d / e
    return SparseNoiseScales(threshold_scale=sigma, query_scale=2.0 * sigma)


def _check_sparse_delta_calibration(c: int, epsilon: float, delta: float) -> None:
    """The δ > 0 calibration needs sqrt(c)(e^{ε'} - 1) <= sqrt(2 ln(1/δ)), ε' = ε/sqrt(8c ln(1/δ))."""
    L = math.log(1.0 / delta)
    eps_each = epsilon / math.sqrt(8.0 * c * L)
    if not math.sqrt(c) * math.expm1(eps_each) <= math.sqrt(2.0 * L):
        raise ValueError(
            f"`epsilon` = {epsilon!r} with c = {c} and delta = {delta!r} is outside the range where the "
            "delta > 0 calibration of Sparse holds (DR Thm 3.20 needs sqrt(c)(e^eps' - 1) <= sqrt(2 ln(1/delta))); "
            "use delta = 0 or a smaller epsilon."
        )


@dataclass(frozen=True, slots=True)
class LyuSuLiScales:
    """Noise of Lyu-Su-Li Algorithm 1 (threshold noise drawn once)."""

    threshold_scale: float
    query_scale: float
    query_scale_monotone: float


def svt_lyu_su_li_alg1_scales(*, c: int, epsilon: float, sensitivity: float = 1.0) -> LyuSuLiScales:
    r"""Noise of Lyu, Su and Li (PVLDB 2017) Algorithm 1 with ε₁ = ε/2, ε₂ = ε - ε₁.

    Threshold Lap(Δ/ε₁) once; queries Lap(2cΔ/ε₂), or Lap(cΔ/ε₂) for monotone queries;
    halt after c ⊤ (THEORY.md 5.4).
    """
    cc = check_int("c", c, low=1)
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    e1 = e / 2.0
    e2 = e - e1
    return LyuSuLiScales(threshold_scale=d / e1, query_scale=2.0 * cc * d / e2, query_scale_monotone=cc * d / e2)


def sparse_accuracy(*, n_queries: int, c: int, beta: float, epsilon: float, delta: float = 0.0,
                    sensitivity: float = 1.0) -> float:
    r"""Accuracy α of Sparse (Dwork and Roth 2014, Theorem 3.26; THEORY.md 5.4).

    δ = 0: :math:`8c\Delta(\ln k+\ln(2c/\beta))/\varepsilon`; δ > 0:
    :math:`\Delta(\ln k+\ln(2c/\beta))\sqrt{512c\ln(1/\delta)}/\varepsilon`.
    """
    k = check_int("n_queries", n_queries, low=1)
    cc = check_int("c", c, low=1)
    b = check_probability("beta", beta, closed="neither")
    e = check_positive("epsilon", epsilon)
    dl = check_probability("delta", delta, closed="left")
    d = check_positive("sensitivity", sensitivity)
    core = math.log(k) + math.log(2.0 * cc / b)
    if dl == 0:
        return 8.0 * cc * d * core / e
    return d * core * math.sqrt(512.0 * cc * math.log(1.0 / dl)) / e


class _NoisyComparator:
    """Exact noisy comparisons f + ν >= T + ρ on a power-of-two grid (private helper)."""

    __slots__ = ("_unit", "_d_int", "_threshold", "_rng")

    def __init__(self, threshold: float, sensitivity: float, rng: np.random.Generator) -> None:
        self._unit = _grid.grid_unit(sensitivity, _SVT_GRID_BITS)
        self._d_int = _grid.grid_threshold_sensitivity(sensitivity, self._unit)
        self._threshold = Fraction(threshold)
        self._rng = rng

    def scale(self, multiple_of_sensitivity: Fraction) -> Fraction:
        """Noise scale in grid units: at least ``multiple`` times the grid sensitivity."""
        return _scale_at_least(multiple_of_sensitivity * self._d_int)

    def draw(self, scale: Fraction) -> int:
        return int(_discrete_laplace_array(scale.numerator, scale.denominator, 1, self._rng)[0])

    def above(self, value: float, rho: int, nu: int) -> bool:
        """Exactly whether value + nu u >= T + rho u."""
        x = (Fraction(value) - self._threshold) / Fraction(self._unit)
        return x >= rho - nu

    def draw_many(self, scale: Fraction, n: int) -> np.ndarray:
        return _discrete_laplace_array(scale.numerator, scale.denominator, n, self._rng)

    def above_many(self, values: np.ndarray, rho: int, nu: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`above`: floating point where it is decisive, exact rationals otherwise."""
        vu = values / self._unit  # exact: the unit is a power of two
        tu = float(self._threshold) / self._unit
        diff = vu - tu
        z = (rho - nu).astype(np.float64)
        tol = 2.0**-40 * (np.abs(vu) + abs(tu) + np.abs(z) + 1.0)
        out = diff >= z
        unsure = np.flatnonzero(np.abs(diff - z) <= tol)
        for i in unsure:
            out[i] = self.above(float(values[i]), rho, int(nu[i]))
        return out


def _check_value(value: Any) -> float:
    return check_real("value", value)


class AboveThreshold:
    r"""AboveThreshold (Dwork and Roth 2014, Algorithm 1, Theorem 3.23): ε-DP, halts at the first ⊤.

    Parameters
    ----------
    threshold : float
        Public threshold T.
    epsilon : float
        ε > 0, nats.
    sensitivity : float
        Sensitivity Δ > 0 of every query (replace-one neighbours).
    rng : numpy.random.Generator or seed, optional

    Notes
    -----
    :math:`\hat T=T+\mathrm{Lap}(2\Delta/\varepsilon)` is drawn once; each query gets fresh
    :math:`\mathrm{Lap}(4\Delta/\varepsilon)` noise. :meth:`query` returns False (⊥) or True (⊤);
    after ⊤ further queries raise :class:`BudgetExhausted`. Certificate ``PureDP(epsilon)``
    for any number of ⊥ answers.
    """

    __slots__ = ("_epsilon", "_cmp", "_rho", "_nu_scale", "_halted", "_n_queries")

    def __init__(self, threshold: float, *, epsilon: float, sensitivity: float, rng: Any = None) -> None:
        t = check_real("threshold", threshold)
        self._epsilon = check_positive("epsilon", epsilon)
        d = check_positive("sensitivity", sensitivity)
        self._cmp = _NoisyComparator(t, d, check_rng(rng))
        e = Fraction(self._epsilon)
        self._rho = self._cmp.draw(self._cmp.scale(2 / e))
        self._nu_scale = self._cmp.scale(4 / e)
        self._halted = False
        self._n_queries = 0

    def __repr__(self) -> str:
        return f"AboveThreshold(epsilon={self._epsilon!r}, n_queries={self._n_queries}, halted={self._halted})"

    @property
    def halted(self) -> bool:
        """Whether the ⊤ answer has been given (no further queries are answered)."""
        return self._halted

    @property
    def n_queries(self) -> int:
        return self._n_queries

    def certificate(self) -> PureDP:
        """``PureDP(epsilon)`` for the whole run."""
        return PureDP(self._epsilon)

    def query(self, value: float) -> bool:
        """Compare the query value f_i(S) (computed on the data) with the noisy threshold."""
        v = _check_value(value)
        if self._halted:
            raise BudgetExhausted("AboveThreshold has answered ⊤ and halted; it answers no further queries.")
        self._n_queries += 1
        nu = self._cmp.draw(self._nu_scale)
        if self._cmp.above(v, self._rho, nu):
            self._halted = True
            return True
        return False


class Sparse:
    r"""Sparse (Dwork and Roth 2014, Algorithm 2, Theorem 3.25): at most c ⊤ answers.

    Parameters
    ----------
    threshold : float
        Public threshold T.
    epsilon : float
        ε > 0, nats.
    sensitivity : float
        Δ > 0 of every query.
    c : int
        Cut-off: the number of ⊤ answers after which the mechanism halts (mandatory).
    delta : float
        0 (default; ``PureDP(epsilon)``) or δ in (0, 1) (``ApproxDP(epsilon, delta)``).
    rng : numpy.random.Generator or seed, optional

    Notes
    -----
    σ from :func:`sparse_noise_scales`; threshold noise Lap(σ) redrawn after every ⊤, query
    noise Lap(2σ); after c ⊤ answers :meth:`query` raises :class:`BudgetExhausted`.
    """

    __slots__ = ("_epsilon", "_delta", "_c", "_cmp", "_rho", "_rho_scale", "_nu_scale", "_n_above", "_n_queries")

    def __init__(self, threshold: float, *, epsilon: float, sensitivity: float, c: int, delta: float = 0.0,
                 rng: Any = None) -> None:
        t = check_real("threshold", threshold)
        self._epsilon = check_positive("epsilon", epsilon)
        d = check_positive("sensitivity", sensitivity)
        self._c = check_int("c", c, low=1)
        self._delta = check_probability("delta", delta, closed="left")
        if self._delta >= 1:
            raise ValueError(f"`delta` must be a real number in [0, 1); got {delta!r}.")
        self._cmp = _NoisyComparator(t, d, check_rng(rng))
        e = Fraction(self._epsilon)
        if self._delta == 0:
            mult = Fraction(2 * self._c) / e  # sigma / Δ
        else:
            _check_sparse_delta_calibration(self._c, self._epsilon, self._delta)
            # sigma / Δ = sqrt(32 c ln(1/δ))/ε, rounded up to a rational
            mult = _scale_at_least(
                math.sqrt(32.0 * self._c * math.log(1.0 / self._delta)) / self._epsilon * (1 + 1e-12)
            )
        self._rho_scale = self._cmp.scale(mult)
        self._nu_scale = self._cmp.scale(2 * mult)
        self._rho = self._cmp.draw(self._rho_scale)
        self._n_above = 0
        self._n_queries = 0

    def __repr__(self) -> str:
        return (f"Sparse(epsilon={self._epsilon!r}, delta={self._delta!r}, c={self._c}, "
                f"n_above={self._n_above}, n_queries={self._n_queries})")

    @property
    def c(self) -> int:
        return self._c

    @property
    def n_above(self) -> int:
        """Number of ⊤ answers given so far."""
        return self._n_above

    @property
    def n_queries(self) -> int:
        return self._n_queries

    @property
    def halted(self) -> bool:
        return self._n_above >= self._c

    def certificate(self) -> PureDP | ApproxDP:
        """``PureDP(epsilon)`` (δ = 0) or ``ApproxDP(epsilon, delta)``, for the whole run."""
        return PureDP(self._epsilon) if self._delta == 0 else ApproxDP(self._epsilon, self._delta)

    def screen(self, values: Any) -> np.ndarray:
        """Answer a batch of queries in order; return the positions of the ⊤ answers.

        Equal in law to calling :meth:`query` on each value in turn, stopping silently once the
        c-th ⊤ has been given (the remaining values are not queried). Raises
        :class:`BudgetExhausted` if the mechanism has already halted.
        """
        v = np.asarray(values, dtype=np.float64).ravel()
        if not np.all(np.isfinite(v)):
            raise ValueError("`values` must be finite; got NaN or infinity.")
        if self.halted:
            raise BudgetExhausted(f"Sparse has given its c = {self._c} above-threshold answers and halted.")
        hits = []
        pos = 0
        while pos < v.size and not self.halted:
            rest = v[pos:]
            nu = self._cmp.draw_many(self._nu_scale, rest.size)
            above = self._cmp.above_many(rest, self._rho, nu)
            first = np.flatnonzero(above)
            if first.size == 0:
                self._n_queries += rest.size
                break
            j = int(first[0])
            self._n_queries += j + 1
            hits.append(pos + j)
            self._n_above += 1
            self._rho = self._cmp.draw(self._rho_scale)
            pos += j + 1
        return np.asarray(hits, dtype=np.int64)

    def query(self, value: float) -> bool:
        """⊤ (True) or ⊥ (False) for the query value f_i(S); raises after c ⊤ answers."""
        v = _check_value(value)
        if self.halted:
            raise BudgetExhausted(f"Sparse has given its c = {self._c} above-threshold answers and halted.")
        self._n_queries += 1
        nu = self._cmp.draw(self._nu_scale)
        if self._cmp.above(v, self._rho, nu):
            self._n_above += 1
            self._rho = self._cmp.draw(self._rho_scale)  # fresh threshold noise after every ⊤
            return True
        return False


def sparse_exact_noise_scales(*, epsilon: float, sensitivity: float, c: int) -> SparseNoiseScales:
    """The Laplace scales that :class:`Sparse` (δ = 0) actually draws, in the units of the values.

    Its noise is discrete Laplace on a power-of-two grid of step u, with scales (in steps) at
    least the grid sensitivity times 2c/ε and 4c/ε: slightly above
    :func:`sparse_noise_scales` (the grid sensitivity has rounding slack). On that fine grid the
    continuous Laplace law of the same scale describes the comparisons to within about one grid
    step; randomized selective inference (docs/THEORY.md 3.12) uses these scales.
    """
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    cc = check_int("c", c, low=1)
    cmp = _NoisyComparator(0.0, d, np.random.default_rng(0))  # no draw: only the grid is read
    mult = Fraction(2 * cc) / Fraction(e)
    unit = cmp._unit
    return SparseNoiseScales(threshold_scale=float(cmp.scale(mult)) * unit,
                             query_scale=float(cmp.scale(2 * mult)) * unit)


class NumericSparse:
    r"""NumericSparse (Dwork and Roth 2014, Algorithm 3, Theorem 3.27), δ = 0: ε-DP.

    Like :class:`Sparse` run with ε₁ = 8ε/9, but on ⊤ it releases the query value with
    *fresh* Laplace noise of scale 2cΔ/ε₂, ε₂ = 2ε/9 (the c answers cost ε/9 in total); the
    noise used in the comparison is never released. Returns None for ⊥. The released value is
    the query rounded to a power-of-two grid u <= Δ/2^16 plus exact discrete Laplace noise on
    that grid (calibrated to the rounded query's sensitivity floor(Δ/u) + 1).
    """

    __slots__ = ("_sparse", "_epsilon", "_c", "_ans_scale", "_unit", "_rng")

    def __init__(self, threshold: float, *, epsilon: float, sensitivity: float, c: int, rng: Any = None) -> None:
        e = check_positive("epsilon", epsilon)
        d = check_positive("sensitivity", sensitivity)
        cc = check_int("c", c, low=1)
        self._rng = check_rng(rng)
        self._sparse = Sparse(threshold, epsilon=8.0 * e / 9.0 * (1 - 1e-15), sensitivity=d, c=cc, rng=self._rng)
        self._epsilon = e
        self._c = cc
        self._unit = _grid.grid_unit(d, _SVT_GRID_BITS)
        d_round = _grid.grid_l1_sensitivity(d, self._unit, 1)
        self._ans_scale = _scale_at_least(
            Fraction(2 * cc * d_round) / (Fraction(2) * Fraction(e) / 9) * (1 + Fraction(1, 10**12))
        )

    def __repr__(self) -> str:
        return f"NumericSparse(epsilon={self._epsilon!r}, c={self._c}, n_above={self.n_above})"

    @property
    def n_above(self) -> int:
        return self._sparse.n_above

    @property
    def halted(self) -> bool:
        return self._sparse.halted

    def certificate(self) -> PureDP:
        """``PureDP(epsilon)`` for the whole run."""
        return PureDP(self._epsilon)

    def query(self, value: float) -> float | None:
        """None (⊥) or a freshly noised answer for the query value; raises after c ⊤ answers."""
        v = _check_value(value)
        if not self._sparse.query(v):
            return None
        k = int(_grid.to_grid(np.array([v]), self._unit)[0])
        noise = int(_discrete_laplace_array(self._ans_scale.numerator, self._ans_scale.denominator, 1, self._rng)[0])
        return float((k + noise) * self._unit)
