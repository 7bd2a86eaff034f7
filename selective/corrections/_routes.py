r"""Valid p-value corrections and thresholds γ(α) after selection.

A correction is a fixed function of the naive p-value and of data-independent certificates
(THEORY.md 1.6): :math:`\tilde p = \inf\{\alpha: p \le \gamma(\alpha)\}` satisfies
:math:`P[\tilde p \le \alpha] \le \alpha` under the null. The **minimum of several valid
corrected p-values is valid** (THEORY.md 3.2): :math:`\{\min_j \tilde p_j \le \alpha\} =
\{p \le \max_j\gamma_j(\alpha)\}`, a fixed threshold that route :math:`j^*(\alpha)` certifies.

Units: max-information ``bits`` (log base 2); mutual information ``mi_bits`` (bits); ε in nats.
Every threshold is returned with its base-2 logarithm, since values such as
:math:`2^{-72766}` occur; functions of p are vectorised over numpy arrays.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
.. [RRST] R. Rogers, A. Roth, A. Smith, O. Thakkar, "Max-information, differential privacy, and
   post-selection hypothesis testing", FOCS 2016, arXiv:1604.03924.
.. [RZ] D. Russo, J. Zou, "Controlling bias in adaptive data analysis using information
   theory", AISTATS 2016; journal version IEEE Trans. Inf. Theory 2020; arXiv:1511.05219.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from .._validation import check_int, check_positive, check_probability, check_pvalues
from ..accounting._optim import _bisect_increasing, _grow_upper, max_log_gamma_composite, min_exp_sqrt_plus_beta
from ..accounting.bounds import LOG2_E, MI_TO_MAXINFO_CONSTANT_BITS, MI_TO_MAXINFO_SLIDE_CONSTANT_BITS
from ..accounting.certificates import MaxInfo, MutualInfo
from ..accounting.totals import LedgerTotals, MaxInfoFamily, UnionRoute

__all__ = [
    "Threshold",
    "gamma_from_maxinfo",
    "corrected_pvalue_from_maxinfo",
    "gamma_pure_dp_all_distributions",
    "corrected_pvalue_pure_dp_all_distributions",
    "gamma_pure_dp_product",
    "corrected_pvalue_pure_dp_product",
    "optimal_beta_pure_dp_product",
    "gamma_description_length",
    "corrected_pvalue_description_length",
    "optimal_beta_description_length",
    "gamma_bonferroni",
    "corrected_pvalue_bonferroni",
    "gamma_mi_via_maxinfo",
    "corrected_pvalue_mi_via_maxinfo",
    "optimal_beta_mi_via_maxinfo",
    "gamma_mi_russo_zou",
    "corrected_pvalue_mi_russo_zou",
    "gamma_mi_kl",
    "corrected_pvalue_mi_kl",
    "gamma_union_dl_and_pure_dp_product",
    "corrected_pvalue_union_dl_and_pure_dp_product",
    "optimal_beta_union_dl_and_pure_dp_product",
    "crossover_mi_routes",
    "crossover_slide_forms",
    "gamma_maxinfo",
    "corrected_pvalue_maxinfo",
    "gamma_union",
    "corrected_pvalue_union",
    "gamma_mutual_info",
    "corrected_pvalue_mutual_info",
    "Corrections",
    "correct",
    "interval_at_level",
]

LN2 = math.log(2.0)


def _with_rounding_margin(info_nats: float) -> float:
    """An information bound raised by a margin that covers the rounding error of evaluating the
    binary KL divergence in double precision (about 1e-17 absolute near gamma = alpha, where
    its terms cancel), so that a threshold defined by a root is never on the invalid side. The
    effect on gamma is far below 1e-9 relative."""
    return info_nats * (1 + 1e-14) + 1e-15


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threshold:
    r"""A valid rejection threshold γ(α) and how it was obtained.

    Attributes
    ----------
    alpha : float
        The level.
    log2_gamma : float
        :math:`\log_2\gamma` (exact even where γ underflows; ``-inf`` when no γ > 0 is valid).
    beta : float
        The slack β used (the optimum where β was optimised; NaN if not applicable).
    bits : float
        The max-information k at that β (NaN if not applicable).
    route : str
        Which correction produced it.
    """

    alpha: float
    log2_gamma: float
    beta: float = math.nan
    bits: float = math.nan
    route: str = ""
    details: dict = field(default_factory=dict, compare=False)

    @property
    def gamma(self) -> float:
        """γ as a float (0.0 where it underflows the double range)."""
        return float(2.0**self.log2_gamma) if self.log2_gamma > -1100 else 0.0


def _alpha(alpha) -> float:
    return check_probability("alpha", alpha, closed="neither")


def _scalar_or_array(x: np.ndarray, like):
    return float(x) if np.ndim(like) == 0 else x


def _log_p(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


def _clip1(x):
    return np.minimum(1.0, x)


# --------------------------------------------------------------------------------------------
# 3.1 From a fixed max-information bound
# --------------------------------------------------------------------------------------------


def gamma_from_maxinfo(alpha: float, bound: MaxInfo) -> Threshold:
    r"""Threshold :math:`\gamma(\alpha) = (\alpha - \beta)/2^k` from a bound :math:`I^\beta_\infty \le k`.

    [DFHPRR]_ Theorem 13 [NIPS Thm 4] applied as in [RRST]_ (THEORY.md 3.1). Requires
    β < α: the slack β is a probability and is spent before anything else.
    """
    a = _alpha(alpha)
    if not isinstance(bound, MaxInfo):
        raise TypeError(f"`bound` must be a MaxInfo; got {bound!r}.")
    if not bound.beta < a:
        raise ValueError(
            f"`bound.beta` must be below `alpha` = {a!r} for gamma(alpha) = (alpha - beta) / 2^k; "
            f"got beta = {bound.beta!r}."
        )
    return Threshold(alpha=a, log2_gamma=math.log2(a - bound.beta) - bound.bits, beta=bound.beta,
                     bits=bound.bits, route="max-information (fixed beta)")


def corrected_pvalue_from_maxinfo(pvalue, bound: MaxInfo):
    r"""Corrected p-value :math:`\min(1, 2^k p + \beta)` for a fixed bound :math:`I^\beta_\infty \le k`.

    [DFHPRR]_ Theorem 13: an event of probability q when the selection ignores the data has
    probability at most :math:`2^k q + \beta` (THEORY.md 3.1).

    Examples
    --------
    >>> from selective.accounting import MaxInfo
    >>> round(corrected_pvalue_from_maxinfo(0.004, MaxInfo(bits=3.0, beta=0.001, scope="any distribution")), 12)
    0.033
    """
    p = check_pvalues("pvalue", pvalue)
    if not isinstance(bound, MaxInfo):
        raise TypeError(f"`bound` must be a MaxInfo; got {bound!r}.")
    with np.errstate(over="ignore"):
        out = _clip1(np.exp2(bound.bits + np.log2(np.where(p > 0, p, 1.0))) * (p > 0) + bound.beta)
    return _scalar_or_array(out, pvalue)


# --------------------------------------------------------------------------------------------
# 3.2 Pure DP (Theorems 19 and 20) and description length (Theorems 9 and 17)
# --------------------------------------------------------------------------------------------


def gamma_pure_dp_all_distributions(alpha: float, epsilon: float, n_rows: int) -> Threshold:
    r""":math:`\gamma(\alpha) = \alpha e^{-\varepsilon n}` for a pure ε-DP selection.

    [DFHPRR]_ Theorem 19 (:math:`k = \log_2(e)\varepsilon n`, β = 0) with Theorem 13
    (THEORY.md 3.2). Valid for every data distribution.
    """
    a = _alpha(alpha)
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    k = LOG2_E * eps * n
    return Threshold(alpha=a, log2_gamma=math.log2(a) - k, beta=0.0, bits=k,
                     route="pure DP, Theorem 19 (any distribution)")


def corrected_pvalue_pure_dp_all_distributions(pvalue, epsilon: float, n_rows: int):
    r""":math:`\min(1, e^{\varepsilon n}p)` for a pure ε-DP selection ([DFHPRR]_ Thm 19 + Thm 13)."""
    p = check_pvalues("pvalue", pvalue)
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    with np.errstate(over="ignore", divide="ignore"):
        out = _clip1(np.exp(_log_p(p) + eps * n))
    return _scalar_or_array(out, pvalue)


def _thm20_ab(eps: float, n: int) -> tuple[float, float]:
    """Theorem 20 in nats is a + b sqrt(ln(2/beta))."""
    return eps * eps * n / 2.0, eps * math.sqrt(n / 2.0)


def gamma_pure_dp_product(alpha: float, epsilon: float, n_rows: int) -> Threshold:
    r"""Optimal-β threshold :math:`\gamma^* = \sup_{0<\beta<\alpha}(\alpha-\beta)2^{-k(\beta)}`
    with k(β) from [DFHPRR]_ Theorem 20 (pure ε-DP, product data).

    The maximiser is unique: :math:`\frac{d}{d\beta}\ln\gamma = -\frac1{\alpha-\beta} +
    \frac{\varepsilon\sqrt{n/2}}{2\beta\sqrt{\ln(2/\beta)}}` is strictly decreasing (THEORY.md
    3.2). Product scope: valid for the first block of DP steps on i.i.d. data.
    """
    a = _alpha(alpha)
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    A, B = _thm20_ab(eps, n)
    log_g, beta = max_log_gamma_composite(math.log(a), A, B, 0)
    k = LOG2_E * (A + B * math.sqrt(math.log(2.0 / beta))) if beta > 0 else math.inf
    return Threshold(alpha=a, log2_gamma=log_g / LN2, beta=beta, bits=k,
                     route="pure DP, Theorem 20 (product data), optimal beta")


def _pure_dp_product_opt(pvalue, epsilon, n_rows):
    p = check_pvalues("pvalue", pvalue)
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    A, B = _thm20_ab(eps, n)
    flat = p.ravel()
    value = np.zeros_like(flat)
    beta = np.zeros_like(flat)
    pos = flat > 0
    if pos.any():
        v, b = min_exp_sqrt_plus_beta(np.log(flat[pos]), A, B)
        value[pos], beta[pos] = v, b
    # THEORY vectors: when the minimiser would exceed beta = 1, report beta = 1
    return _clip1(value).reshape(p.shape), beta.reshape(p.shape)


def corrected_pvalue_pure_dp_product(pvalue, epsilon: float, n_rows: int):
    r""":math:`\min\big(1, \inf_{0<\beta\le1}[p\,2^{k(\beta)} + \beta]\big)`, k(β) from [DFHPRR]_
    Theorem 20 (THEORY.md 3.2; product data, first DP block only)."""
    return _scalar_or_array(_pure_dp_product_opt(pvalue, epsilon, n_rows)[0], pvalue)


def optimal_beta_pure_dp_product(pvalue, epsilon: float, n_rows: int):
    """The β attaining :func:`corrected_pvalue_pure_dp_product` (1 when it would exceed 1)."""
    return _scalar_or_array(_pure_dp_product_opt(pvalue, epsilon, n_rows)[1], pvalue)


def gamma_description_length(alpha: float, n_outcomes: int) -> Threshold:
    r"""Max-information route for a description-length selection:
    :math:`\gamma = \alpha^2/(4|\mathcal Y|)` at β = α/2 ([DFHPRR]_ Thm 17 + Thm 13; THEORY.md
    3.2). For a single description-length step :func:`gamma_bonferroni` is better; this route
    exists to compose with DP steps."""
    a = _alpha(alpha)
    N = check_int("n_outcomes", n_outcomes, low=1)
    log2N = math.log2(N)
    return Threshold(alpha=a, log2_gamma=2 * math.log2(a) - 2 - log2N, beta=a / 2,
                     bits=log2N - math.log2(a / 2), route="description length, max-information (beta = alpha/2)")


def _dl_opt(pvalue, n_outcomes):
    p = check_pvalues("pvalue", pvalue)
    N = check_int("n_outcomes", n_outcomes, low=1)
    with np.errstate(over="ignore", divide="ignore"):
        log_beta = 0.5 * (math.log(N) + _log_p(p))
        beta = np.exp(log_beta)
        value = _clip1(2.0 * beta)
    return value, beta


def corrected_pvalue_description_length(pvalue, n_outcomes: int):
    r""":math:`\min(1, 2\sqrt{|\mathcal Y|p})`, the max-information route with the optimal
    :math:`\beta^* = \sqrt{|\mathcal Y|p}` ([DFHPRR]_ Thm 17 + Thm 13; THEORY.md 3.2)."""
    return _scalar_or_array(_dl_opt(pvalue, n_outcomes)[0], pvalue)


def optimal_beta_description_length(pvalue, n_outcomes: int):
    r"""The optimal :math:`\beta^* = \sqrt{|\mathcal Y| p}` of :func:`corrected_pvalue_description_length`."""
    return _scalar_or_array(_dl_opt(pvalue, n_outcomes)[1], pvalue)


def gamma_bonferroni(alpha: float, n_outcomes: int) -> Threshold:
    r""":math:`\gamma = \alpha/N`: union bound over N fixed outcomes or declared hypotheses
    ([DFHPRR]_ Theorem 9; Bonferroni)."""
    a = _alpha(alpha)
    N = check_int("n_outcomes", n_outcomes, low=1)
    return Threshold(alpha=a, log2_gamma=math.log2(a) - math.log2(N), route="Bonferroni")


def corrected_pvalue_bonferroni(pvalue, n_outcomes: int):
    r""":math:`\min(1, Np)` ([DFHPRR]_ Theorem 9; Bonferroni over N declared hypotheses)."""
    p = check_pvalues("pvalue", pvalue)
    N = check_int("n_outcomes", n_outcomes, low=1)
    with np.errstate(over="ignore", divide="ignore"):
        out = _clip1(np.exp(_log_p(p) + math.log(N)))
    return _scalar_or_array(out, pvalue)


# --------------------------------------------------------------------------------------------
# 3.3 Mutual information through max-information
# --------------------------------------------------------------------------------------------


def _mi(mi_bits) -> float:
    return check_positive("mi_bits", mi_bits, allow_zero=True)


def gamma_mi_via_maxinfo(alpha: float, mi_bits: float, *, form: str = "optimal") -> Threshold:
    r"""Threshold from a mutual-information bound m (bits) through max-information.

    THEORY.md 2.6 gives :math:`I^{\beta}_\infty \le k` with :math:`\beta = c/k`,
    :math:`c = m + \log_2(e)/e`; then :math:`\gamma = (\alpha - c/k)2^{-k}` (THEORY.md 3.3).

    Parameters
    ----------
    form : {"optimal", "beta_half_alpha", "slide"}
        "optimal": :math:`k^* = (c + \sqrt{c^2 + 4\alpha c/\ln 2})/(2\alpha)` (derived);
        "beta_half_alpha": β = α/2, :math:`k = 2c/\alpha`; "slide": the same with the RRST
        slides' rounded constant 0.54 (:math:`\frac\alpha2 2^{-\frac2\alpha(m+0.54)}`).
    """
    a = _alpha(alpha)
    m = _mi(mi_bits)
    if form == "optimal":
        c = m + MI_TO_MAXINFO_CONSTANT_BITS
        q = 4 * a * c / LN2
        s = math.sqrt(c * c + q)
        k = (c + s) / (2 * a)
        beta = c / k
        # alpha - beta = alpha (s - c)/(s + c) with s - c = q/(s + c): no cancellation for large m
        log2_gap = math.log2(a) + math.log2(q) - 2 * math.log2(s + c)
        return Threshold(alpha=a, log2_gamma=log2_gap - k, beta=beta, bits=k,
                         route="mutual information via max-information (optimal k)")
    if form in ("beta_half_alpha", "slide"):
        const = MI_TO_MAXINFO_CONSTANT_BITS if form == "beta_half_alpha" else MI_TO_MAXINFO_SLIDE_CONSTANT_BITS
        k = 2 * (m + const) / a
        return Threshold(alpha=a, log2_gamma=math.log2(a / 2) - k, beta=a / 2, bits=k,
                         route=f"mutual information via max-information ({form})")
    raise ValueError(f"`form` must be 'optimal', 'beta_half_alpha' or 'slide'; got {form!r}.")


def _mi_via_opt(pvalue, mi_bits):
    p = check_pvalues("pvalue", pvalue)
    m = _mi(mi_bits)
    c = m + MI_TO_MAXINFO_CONSTANT_BITS
    flat = p.ravel()
    value = np.zeros_like(flat)
    beta = np.zeros_like(flat)
    pos = flat > 0
    if pos.any():
        lp = np.log(flat[pos])
        lcl = math.log(c * LN2)

        # f(x) = p 2^{c x} + 1/x with x = 1/beta >= 1; f'(x) = 0 <=> g(u) = 0, u = ln x, g increasing
        def g(u):
            return lp + lcl + c * np.exp(u) * LN2 + 2 * u

        at_one = g(np.zeros_like(lp)) >= 0
        hi = _grow_upper(g, np.ones_like(lp))
        u = np.where(at_one, 0.0, _bisect_increasing(g, np.zeros_like(lp), hi))
        x = np.exp(u)
        with np.errstate(over="ignore"):
            v = np.exp(lp + c * x * LN2) + 1.0 / x
        value[pos], beta[pos] = v, 1.0 / x
    return _clip1(value).reshape(p.shape), beta.reshape(p.shape)


def corrected_pvalue_mi_via_maxinfo(pvalue, mi_bits: float):
    r""":math:`\min(1, \inf_{0<\beta\le1}[p\,2^{c/\beta} + \beta])`, :math:`c = m + \log_2(e)/e`
    (THEORY.md 3.3, derived from 2.6 and [DFHPRR]_ Thm 13)."""
    return _scalar_or_array(_mi_via_opt(pvalue, mi_bits)[0], pvalue)


def optimal_beta_mi_via_maxinfo(pvalue, mi_bits: float):
    """The β attaining :func:`corrected_pvalue_mi_via_maxinfo`."""
    return _scalar_or_array(_mi_via_opt(pvalue, mi_bits)[1], pvalue)


# --------------------------------------------------------------------------------------------
# 3.4 Russo-Zou
# --------------------------------------------------------------------------------------------


def gamma_mi_russo_zou(alpha: float, mi_bits: float, *, form: str = "optimal") -> Threshold:
    r"""Threshold from [RZ]_'s bound :math:`P[p_T \le \gamma] \le \gamma + \sqrt{m/\log_2(1/(2\gamma))}`.

    The bound is [RZ]_ Proposition 11 of the journal version (from their Proposition 1 applied
    to indicator statistics), valid for γ < 1/2 (THEORY.md 3.4). ``form="optimal"``: the
    largest γ < 1/2 with :math:`\gamma + \sqrt{m/\log_2(1/(2\gamma))} \le \alpha` (derived);
    ``form="split"``: :math:`\min(\alpha/2, \tfrac12 2^{-4m/\alpha^2})` (derived). The seed
    slides' form is not offered: it is not valid as printed in part of its range.
    """
    a = _alpha(alpha)
    if a >= 0.5:
        raise ValueError(f"`alpha` must be below 0.5 for the Russo-Zou correction; got {a!r}.")
    m = _mi(mi_bits)
    if form == "split":
        return Threshold(alpha=a, log2_gamma=min(math.log2(a / 2), -1.0 - 4 * m / (a * a)),
                         route="mutual information, Russo-Zou (split)")
    if form != "optimal":
        raise ValueError(f"`form` must be 'optimal' or 'split'; got {form!r}.")
    if m == 0:
        return Threshold(alpha=a, log2_gamma=math.log2(a), route="mutual information, Russo-Zou (optimal)")

    # gamma = 2^{-L-1}; F(L) = 2^{-L-1} + sqrt(m/L) - alpha is decreasing in L > 0
    def F(L):
        return np.exp2(-L - 1.0) + np.sqrt(m / L) - a

    lo = np.array([m / (4 * a * a)])  # sqrt(m/L) = 2 alpha there, so F > 0
    hi = np.array([max(4 * m / (a * a), math.log2(1 / a) + 2.0)])  # F < 0 there
    L = float(_bisect_increasing(lambda x: -F(x), lo, hi, side="hi")[0])  # valid side: F <= 0
    return Threshold(alpha=a, log2_gamma=-L - 1.0, route="mutual information, Russo-Zou (optimal)")


def corrected_pvalue_mi_russo_zou(pvalue, mi_bits: float):
    r""":math:`\min(1, p + \sqrt{m/\log_2(1/(2p))})` for p < 1/2, else 1 ([RZ]_; THEORY.md 3.4)."""
    p = check_pvalues("pvalue", pvalue)
    m = _mi(mi_bits)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = -np.log2(2.0 * p)
        out = np.where(p < 0.5, p + np.sqrt(m / L), 1.0)
    out = np.where(p == 0, 0.0, out)
    return _scalar_or_array(_clip1(out), pvalue)


# --------------------------------------------------------------------------------------------
# 3.4a Binary KL (data processing)
# --------------------------------------------------------------------------------------------


def _binary_kl(x, y_log, y_log1m):
    """d(x || y) in nats with y given by log y and log(1-y)."""
    return special.xlogy(x, x) - x * y_log + special.xlog1py(1.0 - x, -x) - (1.0 - x) * y_log1m


def gamma_mi_kl(alpha: float, mi_bits: float) -> Threshold:
    r"""The unique γ in (0, α) with :math:`d(\alpha\|\gamma) = m\ln 2` (binary KL, nats).

    Data processing for relative entropy applied to the false-rejection event (THEORY.md 3.4a,
    derived): with :math:`a` the false-rejection probability and :math:`q \le \gamma` its
    probability under the product of marginals, :math:`d(a\|q) \le I(X;\mathcal A(X))`, so
    :math:`a > \gamma` forces :math:`d(a\|\gamma) \le I`. The strongest correction available
    from a mutual-information certificate alone; it dominates Russo-Zou.
    """
    a = _alpha(alpha)
    m = _mi(mi_bits)
    if m == 0:
        return Threshold(alpha=a, log2_gamma=math.log2(a), route="mutual information, binary KL")
    I = _with_rounding_margin(m * LN2)
    la, l1a = math.log(a), math.log1p(-a)

    def d_of_u(u):  # d(alpha || e^u), decreasing in u on (-inf, ln alpha)
        return a * (la - u) + (1 - a) * (l1a - np.log1p(-np.exp(u)))

    lo = np.array([la - (I - (1 - a) * l1a) / a - 1.0])  # d > I there
    hi = np.array([la])  # d = 0 there
    u = float(_bisect_increasing(lambda x: I - d_of_u(x), lo, hi, side="lo")[0])  # valid side: d >= I
    return Threshold(alpha=a, log2_gamma=u / LN2, route="mutual information, binary KL")


def corrected_pvalue_mi_kl(pvalue, mi_bits: float):
    r"""The unique :math:`a \in [p, 1]` with :math:`d(a\|p) = m\ln2`, or 1 when
    :math:`\ln(1/p) \le m\ln 2` (THEORY.md 3.4a, derived; binary KL in nats)."""
    p = check_pvalues("pvalue", pvalue)
    m = _mi(mi_bits)
    I = _with_rounding_margin(m * LN2) if m > 0 else 0.0
    flat = p.ravel().astype(float)
    out = flat.copy()
    if I > 0:
        with np.errstate(divide="ignore"):
            lp = np.log(flat)
        inner = (flat > 0) & (-lp > I)
        out = np.where((flat > 0) & ~inner, 1.0, out)
        if inner.any():
            lpi, l1p = lp[inner], np.log1p(-flat[inner])

            def f(u):  # d(e^u || p) - I, increasing in u on [ln p, 0]
                return _binary_kl(np.exp(u), lpi, l1p) - I

            u = _bisect_increasing(f, lpi, np.zeros_like(lpi), side="hi")  # valid side: d(a||p) >= I
            out[inner] = np.exp(u)
    return _scalar_or_array(_clip1(out.reshape(p.shape)), pvalue)


# --------------------------------------------------------------------------------------------
# 3.5 Crossovers (for documentation and tests)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Crossover:
    """Mutual information (bits) at which two routes give the same threshold."""

    alpha: float
    mi_bits: float
    gamma: float


def crossover_mi_routes(alpha: float) -> Crossover:
    r"""m* where the optimised Russo-Zou and MI-via-max-information thresholds coincide
    (THEORY.md 3.5, derived): Russo-Zou is larger below m*, max-information above."""
    a = _alpha(alpha)

    def diff(log_m):
        m = math.exp(log_m)
        return gamma_mi_russo_zou(a, m).log2_gamma - gamma_mi_via_maxinfo(a, m).log2_gamma

    log_m = optimize.brentq(diff, math.log(1e-9), math.log(100.0), xtol=1e-15, rtol=1e-14, maxiter=500)
    m = math.exp(log_m)
    return Crossover(alpha=a, mi_bits=m, gamma=gamma_mi_via_maxinfo(a, m).gamma)


def crossover_slide_forms(alpha: float) -> Crossover:
    r"""m* where the seed slides' printed Russo-Zou form
    :math:`\min(\alpha/2, \tfrac12 2^{-\log_2(e)m/\alpha^2})` equals their max-information form
    :math:`\frac\alpha2 2^{-\frac2\alpha(m+0.54)}`. Reproduces the slide remark only; the slide
    Russo-Zou form is not a valid correction in part of its range (THEORY.md 3.4)."""
    a = _alpha(alpha)

    def diff(m):
        rz = min(math.log2(a / 2), -1.0 - LOG2_E * m / (a * a))
        mx = math.log2(a / 2) - 2 * (m + MI_TO_MAXINFO_SLIDE_CONSTANT_BITS) / a
        return rz - mx

    m = optimize.brentq(diff, 1e-12, 1e3, xtol=1e-15, rtol=1e-14, maxiter=500)
    rz = min(math.log2(a / 2), -1.0 - LOG2_E * m / (a * a))
    return Crossover(alpha=a, mi_bits=m, gamma=2.0**rz)


# --------------------------------------------------------------------------------------------
# 3.6 Union route (single description-length count and pure DP)
# --------------------------------------------------------------------------------------------


def gamma_union_dl_and_pure_dp_product(alpha: float, n_outcomes_total: int, epsilon: float, n_rows: int) -> Threshold:
    r""":math:`\gamma = \sup_{0<\beta<\alpha/N}(\alpha/N - \beta)2^{-k(\beta)}`, k(β) from [DFHPRR]_
    Theorem 20 at the composed ε (THEORY.md 3.6, derived): Bonferroni over the N
    description-length outcomes applied to the DP correction."""
    a = _alpha(alpha)
    N = check_int("n_outcomes_total", n_outcomes_total, low=1)
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    A, B = _thm20_ab(eps, n)
    log_g, beta = max_log_gamma_composite(math.log(a) - math.log(N), A, B, 0)
    k = LOG2_E * (A + B * math.sqrt(math.log(2.0 / beta))) if beta > 0 else math.inf
    return Threshold(alpha=a, log2_gamma=log_g / LN2, beta=beta, bits=k, route="union route (Theorem 20)")


def _union_opt(pvalue, n_outcomes_total, epsilon, n_rows):
    N = check_int("n_outcomes_total", n_outcomes_total, low=1)
    value, beta = _pure_dp_product_opt(pvalue, epsilon, n_rows)
    # _pure_dp_product_opt clips at 1; the unclipped inner minimum is only needed when N * v < 1,
    # which implies v < 1, so clipping first is harmless.
    return _clip1(value * N), beta


def corrected_pvalue_union_dl_and_pure_dp_product(pvalue, n_outcomes_total: int, epsilon: float, n_rows: int):
    r""":math:`\min(1, N\min_\beta[p\,2^{k(\beta)} + \beta])`, k(β) from Theorem 20 (THEORY.md 3.6)."""
    return _scalar_or_array(_union_opt(pvalue, n_outcomes_total, epsilon, n_rows)[0], pvalue)


def optimal_beta_union_dl_and_pure_dp_product(pvalue, n_outcomes_total: int, epsilon: float, n_rows: int):
    """The β attaining :func:`corrected_pvalue_union_dl_and_pure_dp_product`."""
    return _scalar_or_array(_union_opt(pvalue, n_outcomes_total, epsilon, n_rows)[1], pvalue)


# --------------------------------------------------------------------------------------------
# Ledger-level routes
# --------------------------------------------------------------------------------------------


def gamma_maxinfo(alpha: float, family: MaxInfoFamily) -> Threshold:
    r"""Best threshold from the max-information of a whole analysis (THEORY.md 2.7, 3.1, 3.2).

    :math:`\gamma^*(\alpha) = \sup (\alpha - \beta)2^{-k(\beta)}` over the slack split among the
    pieces of ``family``; the first DP block uses Theorem 20 (product data) or Theorem 19,
    whichever gives the larger γ; J description-length blocks share their slack equally,
    giving :math:`((R-\beta_0)/(J+1))^{J+1}/N` in closed form.
    """
    a = _alpha(alpha)
    R0 = a - family.fixed_beta
    if R0 <= 0:
        return Threshold(alpha=a, log2_gamma=-math.inf, route="max-information: slack exceeds alpha")
    J = family.n_blocks
    lnN = family.log2_n_outcomes * LN2
    K = family.fixed_bits * LN2
    eps, n = family.prefix_epsilon, family.n_rows
    log_a = (J + 1) * math.log(R0 / (J + 1)) - lnN - K - eps * n
    best = Threshold(alpha=a, log2_gamma=log_a / LN2, beta=family.fixed_beta + (J * R0 / (J + 1) if J else 0.0),
                     route="max-information" + (" (Theorem 19 for the DP steps)" if eps > 0 else ""))
    if eps > 0:
        A, B = _thm20_ab(eps, n)
        log_b, beta0 = max_log_gamma_composite(math.log(R0), A, B, J)
        log_b -= lnN + K
        if log_b > log_a:
            best = Threshold(alpha=a, log2_gamma=log_b / LN2,
                             beta=family.fixed_beta + beta0 + (J * (R0 - beta0) / (J + 1) if J else 0.0),
                             route="max-information (Theorem 20 for the first DP block, product data)")
    return best


def corrected_pvalue_maxinfo(pvalue, family: MaxInfoFamily):
    r"""Corrected p-value from the max-information of a whole analysis (THEORY.md 2.7, 3.2):
    :math:`\min(1, \inf[p\,2^{k(\beta)} + \beta])` over the slack split of ``family``."""
    p = check_pvalues("pvalue", pvalue)
    J = family.n_blocks
    lnN = family.log2_n_outcomes * LN2
    K = family.fixed_bits * LN2
    eps, n = family.prefix_epsilon, family.n_rows
    flat = p.ravel()
    out = np.full_like(flat, family.fixed_beta, dtype=float)  # p = 0: the infimum is the fixed slack
    pos = flat > 0
    if pos.any():
        lp = np.log(flat[pos])
        with np.errstate(over="ignore"):
            v = (J + 1) * np.exp((lp + K + lnN + eps * n) / (J + 1))
        if eps > 0:
            A, B = _thm20_ab(eps, n)
            logc = math.log(J + 1) + (lp + K + lnN) / (J + 1)
            vb, _ = min_exp_sqrt_plus_beta(logc, A / (J + 1), B / (J + 1))
            v = np.minimum(v, vb)
        out[pos] = v + family.fixed_beta
    return _scalar_or_array(_clip1(out.reshape(p.shape)), pvalue)


def gamma_union(alpha: float, route: UnionRoute) -> Threshold:
    r"""Union-route threshold (THEORY.md 3.6): Bonferroni over the :math:`N` description-length
    outcomes of the DP threshold at α/N (Theorem 20, or Theorem 19, at the composed ε)."""
    a = _alpha(alpha)
    lnN = route.log2_n_outcomes * LN2
    eps, n = route.dp_epsilon, route.n_rows
    log_a = math.log(a) - lnN - eps * n
    best = Threshold(alpha=a, log2_gamma=log_a / LN2, beta=0.0,
                     route="union bound" + (" (Theorem 19 for the DP steps)" if eps > 0 else " (Bonferroni over outcomes)"))
    if eps > 0:
        A, B = _thm20_ab(eps, n)
        log_b, beta = max_log_gamma_composite(math.log(a) - lnN, A, B, 0)
        if log_b > log_a:
            best = Threshold(alpha=a, log2_gamma=log_b / LN2, beta=beta,
                             route="union bound (Theorem 20 for the DP steps, product data)")
    return best


def corrected_pvalue_union(pvalue, route: UnionRoute):
    r"""Union-route corrected p-value :math:`\min(1, N\inf_\beta[p\,2^{k(\beta)} + \beta])`
    (THEORY.md 3.6), with k from Theorem 20 or Theorem 19 (β = 0), whichever is smaller."""
    p = check_pvalues("pvalue", pvalue)
    lnN = route.log2_n_outcomes * LN2
    eps, n = route.dp_epsilon, route.n_rows
    with np.errstate(over="ignore", divide="ignore"):
        v = np.exp(_log_p(p) + eps * n + lnN)
    if eps > 0:
        A, B = _thm20_ab(eps, n)
        flat = p.ravel()
        vb = np.zeros_like(flat)
        pos = flat > 0
        if pos.any():
            inner, _ = min_exp_sqrt_plus_beta(np.log(flat[pos]), A, B)
            with np.errstate(over="ignore"):
                vb[pos] = np.exp(np.log(inner) + lnN)
        v = np.minimum(v, vb.reshape(p.shape))
    return _scalar_or_array(_clip1(v), pvalue)


def gamma_mutual_info(alpha: float, mutual_info: MutualInfo) -> Threshold:
    """Best threshold from a mutual-information bound: the largest of the binary-KL (3.4a),
    Russo-Zou (3.4) and via-max-information (3.3) thresholds, valid by THEORY.md 3.2."""
    a = _alpha(alpha)
    m = mutual_info.bits
    cands = [gamma_mi_kl(a, m), gamma_mi_via_maxinfo(a, m)]
    if a < 0.5:
        cands.append(gamma_mi_russo_zou(a, m))
    return max(cands, key=lambda t: t.log2_gamma)


def corrected_pvalue_mutual_info(pvalue, mutual_info: MutualInfo):
    """Smallest of the binary-KL, Russo-Zou and via-max-information corrected p-values
    (each valid for the same certificate, so the minimum is valid; THEORY.md 3.2, 3.5)."""
    m = mutual_info.bits
    a = np.asarray(corrected_pvalue_mi_kl(pvalue, m))
    b = np.asarray(corrected_pvalue_mi_russo_zou(pvalue, m))
    c = np.asarray(corrected_pvalue_mi_via_maxinfo(pvalue, m))
    return _scalar_or_array(np.minimum(np.minimum(a, b), c), pvalue)


# --------------------------------------------------------------------------------------------
# The full set of columns for a report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Corrections:
    """Corrected p-values of a set of naive p-values under one ledger (arrays, same order).

    Columns are NaN where a route does not apply; ``best_route`` names the column giving
    ``pvalue_best``; ``gamma_best`` is the largest valid threshold at ``alpha``, the level
    1 - ``gamma_best`` at which intervals are widened (THEORY.md 3.1).
    """

    alpha: float
    pvalue_naive: np.ndarray
    pvalue_maxinfo: np.ndarray
    pvalue_mutual_info: np.ndarray
    pvalue_bonferroni: np.ndarray
    pvalue_best: np.ndarray
    best_route: tuple[str, ...]
    maxinfo_route: tuple[str, ...]
    gamma_best: Threshold | None
    notes: tuple[str, ...]


def correct(pvalues, totals: LedgerTotals, *, alpha: float = 0.05, n_candidates: int | None = None) -> Corrections:
    """Every valid correction of ``pvalues`` under ``totals``, and the best of them.

    Parameters
    ----------
    pvalues : array_like
        Naive p-values of the selected tests.
    totals : LedgerTotals
        From :meth:`Ledger.totals`.
    alpha : float
        Level used for ``gamma_best`` (the corrected p-values themselves do not depend on it).
    n_candidates : int, optional
        Number of hypotheses declared before selection; enables the Bonferroni column.
    """
    p = check_pvalues("pvalues", pvalues).ravel()
    a = _alpha(alpha)
    if n_candidates is not None:
        n_candidates = check_int("n_candidates", n_candidates, low=1)
    nan = np.full_like(p, np.nan)
    notes = list(totals.notes)
    # max-information column: the better of the composition route and the union route
    mi_route = ["" for _ in p]
    p_mx = nan.copy()
    thresholds: list[Threshold] = []
    if totals.maxinfo is not None:
        p_mx = np.asarray(corrected_pvalue_maxinfo(p, totals.maxinfo), dtype=float).reshape(p.shape)
        mi_route = ["composition"] * len(p)
        thresholds.append(gamma_maxinfo(a, totals.maxinfo))
    elif totals.maxinfo_reason:
        notes.append(totals.maxinfo_reason)
    if totals.union is not None:
        p_un = np.asarray(corrected_pvalue_union(p, totals.union), dtype=float).reshape(p.shape)
        better = ~(p_mx <= p_un)  # NaN-safe: union wins where max-info is NaN
        mi_route = [("union" if b else r) for b, r in zip(better, mi_route)]
        p_mx = np.where(better, p_un, p_mx)
        thresholds.append(gamma_union(a, totals.union))
    elif totals.union_reason and totals.maxinfo is None:
        notes.append(totals.union_reason)
    p_mut = nan.copy()
    if totals.mutual_info is not None:
        p_mut = np.asarray(corrected_pvalue_mutual_info(p, totals.mutual_info), dtype=float).reshape(p.shape)
        thresholds.append(gamma_mutual_info(a, totals.mutual_info))
    elif totals.mutual_info_reason:
        notes.append(totals.mutual_info_reason)
    p_bon = nan.copy()
    if n_candidates is not None:
        p_bon = np.asarray(corrected_pvalue_bonferroni(p, n_candidates), dtype=float).reshape(p.shape)
        thresholds.append(gamma_bonferroni(a, n_candidates))
    stack = np.vstack([p_mx, p_mut, p_bon])
    names = ("max-information", "mutual information", "Bonferroni")
    with np.errstate(invalid="ignore"):
        all_nan = np.all(np.isnan(stack), axis=0)
        best = np.where(all_nan, np.nan, np.nanmin(np.where(np.isnan(stack), np.inf, stack), axis=0))
    def route_of(i: int) -> str:
        if all_nan[i] or best[i] >= 1.0:  # nothing below 1: no route "produced" it
            return ""
        j = int(np.argmin(np.where(np.isnan(stack[:, i]), np.inf, stack[:, i])))
        return f"max-information ({mi_route[i]})" if j == 0 else names[j]

    best_route = tuple(route_of(i) for i in range(len(p)))
    gamma_best = max(thresholds, key=lambda t: t.log2_gamma) if thresholds else None
    if gamma_best is None:
        notes.append("no valid correction applies: every corrected column is NaN")
    return Corrections(alpha=a, pvalue_naive=p, pvalue_maxinfo=p_mx, pvalue_mutual_info=p_mut,
                       pvalue_bonferroni=p_bon, pvalue_best=best, best_route=best_route,
                       maxinfo_route=tuple(mi_route), gamma_best=gamma_best, notes=tuple(dict.fromkeys(notes)))


def interval_at_level(estimate: float, std_error: float, level_log2_tail: float, *, df: float | None = None) -> tuple[float, float]:
    r"""Two-sided interval :math:`\hat\theta \pm q\,\mathrm{se}` whose total tail mass is
    :math:`2^{\ell}` (``level_log2_tail`` = ℓ = log2 γ), with q from the normal or Student t
    inverse survival function evaluated in log space, so γ far below 1e-300 still works.

    A naive interval at level 1 - γ(α) for the selected parameter covers with probability at
    least 1 - α (THEORY.md 3.1, same argument as for p-values).
    """
    if level_log2_tail == -math.inf:
        return (-math.inf, math.inf)
    log_half_tail = (level_log2_tail - 1.0) * LN2
    if df is None or not math.isfinite(df):
        q = float(-special.ndtri_exp(log_half_tail)) if log_half_tail < -1e-300 else 0.0
    else:
        half = math.exp(log_half_tail)
        if half > 1e-300:
            q = float(stats.t.isf(half, df))
        else:  # t tail ~ C |t|^{-df}: invert the log survival function by root finding
            q = math.exp(optimize.brentq(lambda u: stats.t.logsf(math.exp(u), df) - log_half_tail,
                                         0.0, 700.0, xtol=1e-14, maxiter=500))
    return (estimate - q * std_error, estimate + q * std_error)
