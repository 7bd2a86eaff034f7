"""Mutual-information routes (THEORY.md 3.3-3.5): through max-information, Russo-Zou, the
binary KL divergence, their crossovers, and the best of them for a
:class:`~selective.accounting.certificates.MutualInfo` certificate.

Units: mutual information ``mi_bits`` in bits.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
.. [RZ] D. Russo, J. Zou, "Controlling bias in adaptive data analysis using information
   theory", AISTATS 2016; journal version IEEE Trans. Inf. Theory 2020; arXiv:1511.05219.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .._validation import check_positive, check_pvalues
from ..accounting._optim import _bisect_increasing, _newton_increasing
from ..accounting.bounds import LOG2_E, MI_TO_MAXINFO_CONSTANT_BITS, MI_TO_MAXINFO_SLIDE_CONSTANT_BITS
from ..accounting.certificates import MutualInfo
from ._common import LN2, Threshold, _alpha, _clip1, _scalar_or_array, _with_rounding_margin

__all__ = [
    "gamma_mi_via_maxinfo",
    "corrected_pvalue_mi_via_maxinfo",
    "optimal_beta_mi_via_maxinfo",
    "gamma_mi_russo_zou",
    "corrected_pvalue_mi_russo_zou",
    "gamma_mi_kl",
    "corrected_pvalue_mi_kl",
    "crossover_mi_routes",
    "crossover_slide_forms",
    "gamma_mutual_info",
    "corrected_pvalue_mutual_info",
]


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
        return Threshold(alpha=a, log2_gamma=math.log2(a) - 1.0 - k, beta=a / 2, bits=k,
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
        u = np.zeros_like(lp)
        inner = ~at_one
        if inner.any():
            q = lp[inner] + lcl

            def gi(v, idx):
                return q[idx] + c * LN2 * np.exp(v) + 2 * v

            def gd(v, idx):
                e = c * LN2 * np.exp(v)
                return q[idx] + e + 2 * v, e + 2.0

            # the root is at most u1 = ln(-q / (c ln 2)) (where g = 2 u1 > 0); g is convex, so
            # Newton from u1 descends to it monotonically
            u1 = np.log(-q / (c * LN2))
            u[inner] = _newton_increasing(gi, gd, np.zeros_like(q), u1, u1, side="mid")
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
    m_a2 = m / a / a  # m / alpha^2 without underflow of alpha^2 (inf when it overflows)
    if form == "split":
        return Threshold(alpha=a, log2_gamma=min(math.log2(a) - 1.0, -1.0 - 4 * m_a2),
                         route="mutual information, Russo-Zou (split)")
    if form != "optimal":
        raise ValueError(f"`form` must be 'optimal' or 'split'; got {form!r}.")
    if m == 0:
        return Threshold(alpha=a, log2_gamma=math.log2(a), route="mutual information, Russo-Zou (optimal)")
    if not 4 * m_a2 < 1e300:  # L > m/(4 alpha^2) is beyond the double range: gamma = 2^{-L-1} is 0 to double precision
        return Threshold(alpha=a, log2_gamma=-math.inf, route="mutual information, Russo-Zou (optimal)")

    # gamma = 2^{-L-1}; F(L) = 2^{-L-1} + sqrt(m/L) - alpha is decreasing in L > 0
    def F(L):
        return np.exp2(-L - 1.0) + np.sqrt(m / L) - a

    lo = np.array([m_a2 / 4])  # sqrt(m/L) = 2 alpha there, so F > 0
    hi = np.array([max(4 * m_a2, math.log2(1 / a) + 2.0)])  # F < 0 there
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
    info_nats = _with_rounding_margin(m * LN2)
    la, l1a = math.log(a), math.log1p(-a)

    def d_of_u(u):  # d(alpha || e^u), decreasing in u on (-inf, ln alpha)
        return a * (la - u) + (1 - a) * (l1a - np.log1p(-np.exp(u)))

    lo = np.array([la - (info_nats - (1 - a) * l1a) / a - 1.0])  # d > info_nats there
    hi = np.array([la])  # d = 0 there
    # valid side: d >= info_nats
    u = float(_bisect_increasing(lambda x: info_nats - d_of_u(x), lo, hi, side="lo")[0])
    return Threshold(alpha=a, log2_gamma=u / LN2, route="mutual information, binary KL")


def corrected_pvalue_mi_kl(pvalue, mi_bits: float):
    r"""The unique :math:`a \in [p, 1]` with :math:`d(a\|p) = m\ln2`, or 1 when
    :math:`\ln(1/p) \le m\ln 2` (THEORY.md 3.4a, derived; binary KL in nats)."""
    p = check_pvalues("pvalue", pvalue)
    m = _mi(mi_bits)
    info_nats = _with_rounding_margin(m * LN2) if m > 0 else 0.0
    flat = p.ravel().astype(float)
    out = flat.copy()
    if info_nats > 0:
        with np.errstate(divide="ignore"):
            lp = np.log(flat)
        inner = (flat > 0) & (-lp > info_nats)
        out = np.where((flat > 0) & ~inner, 1.0, out)
        if inner.any():
            lpi, l1p = lp[inner], np.log1p(-flat[inner])

            def f(u, idx):  # d(e^u || p) - info_nats, increasing in u on [ln p, 0]
                return _binary_kl(np.exp(u), lpi[idx], l1p[idx]) - info_nats

            def fd(u, idx):  # and its derivative e^u (u - ln p - ln(1 - e^u) + ln(1 - p))
                a, lq, l1q = np.exp(u), lpi[idx], l1p[idx]
                with np.errstate(divide="ignore"):
                    l1a = np.log1p(-a)
                return _binary_kl(a, lq, l1q) - info_nats, a * (u - lq - l1a + l1q)

            # valid side: d(a||p) >= info_nats
            u = _newton_increasing(f, fd, lpi, np.zeros_like(lpi), 0.5 * lpi, side="hi")
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
# The best route for a mutual-information certificate
# --------------------------------------------------------------------------------------------


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
