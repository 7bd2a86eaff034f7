r"""Union-bound routes (THEORY.md 3.6): Bonferroni over the :math:`N` description-length
outcomes of an analysis applied to the pure-DP correction of its DP steps ([DFHPRR]_
Theorem 20, or Theorem 19, at the composed ε).

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int, check_positive, check_pvalues
from ..accounting._optim import min_exp_sqrt_plus_beta
from ..accounting.bounds import LOG2_E
from ..accounting.totals import UnionRoute
from ._common import LN2, Threshold, _alpha, _clip1, _log_p, _scalar_or_array, _thm20_ab
from .maxinfo import _pure_dp_product_opt, _theorem20_optimum

__all__ = [
    "gamma_union_dl_and_pure_dp_product",
    "corrected_pvalue_union_dl_and_pure_dp_product",
    "optimal_beta_union_dl_and_pure_dp_product",
    "gamma_union",
    "corrected_pvalue_union",
]


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
    log_g, beta = _theorem20_optimum(math.log(a) - math.log(N), A, B, 0)
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
# Ledger-level union route
# --------------------------------------------------------------------------------------------


def gamma_union(alpha: float, route: UnionRoute) -> Threshold:
    r"""Union-route threshold (THEORY.md 3.6): Bonferroni over the :math:`N` description-length
    outcomes of the DP threshold at α/N (Theorem 20, or Theorem 19, at the composed ε)."""
    a = _alpha(alpha)
    lnN = route.log2_n_outcomes * LN2
    eps, n = route.dp_epsilon, route.n_rows
    log_a = math.log(a) - lnN - eps * n
    how = " (Theorem 19 for the DP steps)" if eps > 0 else " (Bonferroni over outcomes)"
    best = Threshold(alpha=a, log2_gamma=log_a / LN2, beta=0.0, route="union bound" + how)
    if eps > 0 and route.allow_product:
        A, B = _thm20_ab(eps, n)
        log_b, beta = _theorem20_optimum(math.log(a) - lnN, A, B, 0)
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
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        v = np.where(p > 0, np.exp(_log_p(p) + eps * n + lnN), 0.0)  # p = 0 stays 0 even if eps n overflows
    if eps > 0 and route.allow_product:
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
