r"""Holdout-reuse formulas: Thresholdout calibration and privacy, SparseValidate counts.

THEORY.md 5.5 and 5.6 (Dwork, Feldman, Hardt, Pitassi, Reingold, Roth, "Generalization in
adaptive data analysis and holdout reuse", full version arXiv:1506.02629; theorem numbers of
the full version, NIPS numbers in brackets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_int, check_positive, check_probability

__all__ = [
    "ThresholdoutParameters",
    "thresholdout_parameters",
    "ThresholdoutPrivacy",
    "thresholdout_privacy",
    "SparseValidateEll",
    "sparsevalidate_ell",
    "sparsevalidate_n_outcomes",
]


@dataclass(frozen=True, slots=True)
class ThresholdoutParameters:
    r"""Calibration of Thresholdout by DFHPRR Theorem 25 [NIPS Thm 9].

    Attributes
    ----------
    threshold : float
        T = 3τ/4.
    sigma : float
        Noise rate σ = τ/(96 ln(4m/β)).
    n0, n1 : float
        Lemma 24's sample sizes at (B, σ, τ/8, β/(2m)).
    n_required : float
        min(n0, n1): the holdout size the theorem asks for.
    n1_exact_conditions : float
        The derived conditions behind n1 (THEORY.md 5.5): max of
        13 sqrt(32 B ln(2/d))/(σ τ') and 338 ln(8/d)/τ'^2, d = β'τ'/(26 ln(26/τ')).
    """

    threshold: float
    sigma: float
    n0: float
    n1: float
    n_required: float
    n1_exact_conditions: float

    @property
    def T(self) -> float:  # noqa: N802 - the paper's name
        """Alias of :attr:`threshold`."""
        return self.threshold


def thresholdout_parameters(tau: float, beta: float, m_queries: int, budget: int) -> ThresholdoutParameters:
    r"""Threshold, noise rate and holdout size for Thresholdout (DFHPRR Thm 25, Lemma 24).

    Parameters
    ----------
    tau : float
        Accuracy τ in (0, 1).
    beta : float
        Failure probability β in (0, 1).
    m_queries : int
        Number of queries m >= budget.
    budget : int
        Budget B >= 1 (number of over-threshold answers).

    Returns
    -------
    ThresholdoutParameters

    Notes
    -----
    :math:`T=3\tau/4`, :math:`\sigma=\tau/(96\ln(4m/\beta))`; the guarantee
    :math:`P[\exists i\le m: Z_i<B\ \&\ |a_i-P[\phi_i]|\ge\tau]\le\beta` holds when
    :math:`n\ge\min\{n_0,n_1\}(B,\sigma,\tau/8,\beta/(2m))` with
    :math:`n_0=\max\{2B/(\sigma\tau'),\ln(6/\beta')/\tau'^2\}` and
    :math:`n_1=80\sqrt{B\ln(1/(\tau'\beta'))}/(\tau'\sigma)` (the latter "for sufficiently small
    β and τ"; ``n1_exact_conditions`` is the requirement behind it).
    """
    t = check_probability("tau", tau, closed="neither")
    b = check_probability("beta", beta, closed="neither")
    m = check_int("m_queries", m_queries, low=1)
    B = check_int("budget", budget, low=1, high=m)
    sigma = t / (96.0 * math.log(4.0 * m / b))
    tp = t / 8.0
    bp = b / (2.0 * m)
    n0 = max(2.0 * B / (sigma * tp), math.log(6.0 / bp) / tp**2)
    n1 = 80.0 * math.sqrt(B * math.log(1.0 / (tp * bp))) / (tp * sigma)
    d = bp * tp / (26.0 * math.log(26.0 / tp))
    n1_exact = max(13.0 * math.sqrt(32.0 * B * math.log(2.0 / d)) / (sigma * tp), 338.0 * math.log(8.0 / d) / tp**2)
    return ThresholdoutParameters(threshold=0.75 * t, sigma=sigma, n0=n0, n1=n1, n_required=min(n0, n1),
                                  n1_exact_conditions=n1_exact)


@dataclass(frozen=True, slots=True)
class ThresholdoutPrivacy:
    """Privacy of Thresholdout on the holdout: pure ε and, at the given δ, approximate ε."""

    epsilon_pure: float
    epsilon_approx: float
    delta: float


def thresholdout_privacy(*, budget: int, n: int, sigma: float, delta: float) -> ThresholdoutPrivacy:
    r"""Thresholdout is :math:`(2B/(\sigma n), 0)`-DP and :math:`(\sqrt{32B\ln(2/\delta)}/(\sigma n), \delta)`-DP.

    DFHPRR Lemma 23 (THEORY.md 5.5): with respect to the holdout of n rows; B AboveThreshold
    runs and B Laplace answers, each :math:`1/(\sigma n)`-DP. The approximate figure is valid
    whenever :math:`\sqrt B(e^{1/(\sigma n)}-1)\le\sqrt{2\ln(2/\delta)}` (checked: ValueError
    otherwise).
    """
    B = check_int("budget", budget, low=1)
    nn = check_int("n", n, low=1)
    s = check_positive("sigma", sigma)
    dl = check_probability("delta", delta, closed="neither")
    eps0 = 1.0 / (s * nn)
    if not math.sqrt(B) * math.expm1(eps0) <= math.sqrt(2.0 * math.log(2.0 / dl)):
        raise ValueError(
            f"the approximate-DP figure of Thresholdout needs sqrt(B)(e^(1/(sigma n)) - 1) <= sqrt(2 ln(2/delta)); "
            f"got B = {B}, sigma n = {s * nn!r}, delta = {delta!r}. Recompute from DR Thm 3.20."
        )
    return ThresholdoutPrivacy(epsilon_pure=2.0 * B * eps0,
                               epsilon_approx=math.sqrt(32.0 * B * math.log(2.0 / dl)) * eps0, delta=dl)


@dataclass(frozen=True, slots=True)
class SparseValidateEll:
    r"""The factor :math:`\ell_i` of SparseValidate (exact integers).

    Attributes
    ----------
    ell_exact : int
        :math:`\sum_{j=0}^{\min(i-1,B)}\binom{i-1}{j}` (what the proof counts).
    ell_as_printed : int
        :math:`\sum_{j=0}^{\min(i-1,B)}\binom{i}{j}` (the paper's typo; a valid but looser bound).
    m_pow_B : int
        The stated cap :math:`m^B`.
    """

    ell_exact: int
    ell_as_printed: int
    m_pow_B: int  # noqa: N815 - the paper's name

    @property
    def log2_ell_exact(self) -> float:
        """:math:`\\log_2\\ell_i` in bits."""
        return math.log2(self.ell_exact)


def sparsevalidate_ell(i: int, budget: int, m: int) -> SparseValidateEll:
    r"""SparseValidate's :math:`\ell_i` for the i-th of m queries with budget B (DFHPRR Thm 27 [NIPS Thm 10]).

    :math:`P[\psi_i(S)=1]\le\ell_i\beta_i` with :math:`\ell_i=\sum_{j=0}^{\min\{i-1,B\}}\binom{i-1}{j}`
    (THEORY.md 5.6: the paper prints :math:`\binom ij`; the exact count is implemented and the
    printed one reported beside it).
    """
    mm = check_int("m", m, low=1)
    ii = check_int("i", i, low=1, high=mm)
    B = check_int("budget", budget, low=0)
    top = min(ii - 1, B)
    exact = sum(math.comb(ii - 1, j) for j in range(top + 1))
    printed = sum(math.comb(ii, j) for j in range(top + 1))
    return SparseValidateEll(ell_exact=exact, ell_as_printed=printed, m_pow_B=mm**B)


def sparsevalidate_n_outcomes(m: int, budget: int) -> int:
    r"""Transcripts of SparseValidate(m, B): :math:`\sum_{j=0}^{\min(B, m)}\binom mj` (THEORY.md 2.5, 5.6)."""
    mm = check_int("m", m, low=1)
    B = check_int("budget", budget, low=0)
    return sum(math.comb(mm, j) for j in range(min(B, mm) + 1))
