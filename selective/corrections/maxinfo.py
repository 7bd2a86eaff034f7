r"""Max-information routes (THEORY.md 3.1, 3.2, 2.7).

From a fixed bound :math:`I^\beta_\infty \le k`, from pure ε-DP ([DFHPRR]_ Theorems 19 and 20),
from a description-length count ([DFHPRR]_ Theorem 17), and from the composed
:class:`~selective.accounting.totals.MaxInfoFamily` of a whole analysis, with the optimal slack β
where it is optimised.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
.. [RRST] R. Rogers, A. Roth, A. Smith, O. Thakkar, "Max-information, differential privacy, and
   post-selection hypothesis testing", FOCS 2016, arXiv:1604.03924.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int, check_positive, check_pvalues
from ..accounting._optim import max_log_gamma_composite, min_exp_sqrt_plus_beta
from ..accounting.bounds import LOG2_E
from ..accounting.certificates import MaxInfo
from ..accounting.totals import MaxInfoFamily
from ._common import LN2, Threshold, _alpha, _clip1, _log_p, _scalar_or_array, _thm20_ab

__all__ = [
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
    "gamma_maxinfo",
    "corrected_pvalue_maxinfo",
]


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
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = np.where(p > 0, _clip1(np.exp(_log_p(p) + eps * n)), 0.0)  # p = 0 stays 0 even if eps n overflows
    return _scalar_or_array(out, pvalue)


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
    log_g, beta = _theorem20_optimum(math.log(a), A, B, 0)
    k = LOG2_E * (A + B * math.sqrt(math.log(2.0 / beta))) if beta > 0 else math.inf
    return Threshold(alpha=a, log2_gamma=log_g / LN2, beta=beta, bits=k,
                     route="pure DP, Theorem 20 (product data), optimal beta")


def _theorem20_optimum(log_r: float, a: float, b: float, n_blocks: int) -> tuple[float, float]:
    """``max_log_gamma_composite``, or (-inf, 0) where its solver loses precision (NaN): only when
    epsilon^2 n is far beyond any usable range, where gamma is 0 to double precision anyway;
    -inf (reject nothing) is always valid. With -inf the Theorem 19 alternative is kept."""
    with np.errstate(invalid="ignore"):
        log_g, beta = max_log_gamma_composite(log_r, a, b, n_blocks)
    if math.isnan(log_g) or math.isnan(beta):
        return -math.inf, 0.0
    return log_g, beta


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
                     bits=log2N - math.log2(a) + 1.0, route="description length, max-information (beta = alpha/2)")


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


# --------------------------------------------------------------------------------------------
# The max-information of a whole analysis (THEORY.md 2.7)
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
    log_a = (J + 1) * (math.log(R0) - math.log(J + 1)) - lnN - K - eps * n
    best = Threshold(alpha=a, log2_gamma=log_a / LN2, beta=family.fixed_beta + (J * R0 / (J + 1) if J else 0.0),
                     route="max-information" + (" (Theorem 19 for the DP steps)" if eps > 0 else ""))
    if eps > 0 and family.allow_product:
        A, B = _thm20_ab(eps, n)
        log_b, beta0 = _theorem20_optimum(math.log(R0), A, B, J)
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
        if eps > 0 and family.allow_product:
            A, B = _thm20_ab(eps, n)
            logc = math.log(J + 1) + (lp + K + lnN) / (J + 1)
            vb, _ = min_exp_sqrt_plus_beta(logc, A / (J + 1), B / (J + 1))
            v = np.minimum(v, vb)
        out[pos] = v + family.fixed_beta
    return _scalar_or_array(_clip1(out.reshape(p.shape)), pvalue)
