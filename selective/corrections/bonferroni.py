"""Bonferroni over N fixed outcomes or declared hypotheses ([DFHPRR]_ Theorem 9), and its weighted
form over the stopping positions of SparseValidate (THEORY.md 3.15).

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int, check_probability, check_pvalues
from ._common import Threshold, _alpha, _clip1, _log_p, _scalar_or_array

__all__ = ["gamma_bonferroni", "corrected_pvalue_bonferroni", "sparse_validate_weights",
           "corrected_pvalue_sparse_validate"]


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


def sparse_validate_weights(m: int, *, first_weight: float = 0.5) -> np.ndarray:
    r"""Weights of the m stopping positions of SparseValidate(m, B = 1) (THEORY.md 3.15):
    ``first_weight`` on the first query and the rest shared equally by queries 2..m
    (:math:`w_1 = 1` when m = 1). They sum to 1 and must be declared before the holdout is read."""
    m = check_int("m", m, low=1)
    w1 = check_probability("first_weight", first_weight, closed="right")
    if m == 1:
        return np.ones(1)
    if w1 == 1.0:
        raise ValueError(f"`first_weight` must be below 1 when m > 1 (queries 2..{m} need weight); got 1.0.")
    return np.concatenate([[w1], np.full(m - 1, (1.0 - w1) / (m - 1))])


def corrected_pvalue_sparse_validate(pvalue, position, m: int, *, first_weight: float = 0.5):
    r"""P-value of the feature that SparseValidate(m, B = 1) validated at query ``position``
    (1-based), by a weighted union bound over the stopping positions: :math:`\min(1, p/w_q)` with
    :func:`sparse_validate_weights` (THEORY.md 3.15).

    Parameters
    ----------
    pvalue : float or array
        The validated feature's p-value on the holdout, **one-sided in the direction declared for
        query q before the holdout was read** (e.g. the sign of its training estimate). When the
        query itself checked that direction ("the holdout agrees in sign and the effect exceeds
        a cut"), this is half the two-sided p-value.
    position : int or array of int
        The query that answered 1, in 1..m.
    m : int
        The number of queries declared (SparseValidate's m).
    first_weight : float
        The weight of the first query, in (0, 1]; default 1/2.

    Notes
    -----
    Valid when the order of the queries and their directions are fixed by data independent of
    the holdout, and each one-sided p-value is valid under its null: whatever the holdout
    answered, a false rejection at position q needs :math:`p_q \le \alpha w_q`, which has
    probability at most :math:`\alpha w_q`, and the weights sum to 1. Nothing else about the
    queries is used, so the bound holds for any dependence between the features. With
    ``first_weight = 1/2`` and a query that checks the sign, a feature validated by the first
    query gets its two-sided holdout p-value back, the single-use holdout's test.

    The p-value is compared with :math:`\alpha w_q`, not with alpha: an asymptotic p-value must
    be accurate down to that level (a result's ``trusted_level`` at most :math:`\alpha w_q`;
    docs/THEORY.md 7.1), which for a late query is :math:`\alpha/(2(m-1))` with the default weights.
    """
    p = check_pvalues("pvalue", pvalue)
    w = sparse_validate_weights(m, first_weight=first_weight)
    q = np.asarray(position)
    if q.shape != np.shape(p) and q.ndim:
        raise ValueError(f"`position` must be a scalar or have the shape of `pvalue` {np.shape(p)}; got {q.shape}.")
    if not (np.issubdtype(q.dtype, np.integer) and np.all((q >= 1) & (q <= len(w)))):
        raise ValueError(f"`position` must hold integers in 1..m = 1..{len(w)}; got {position!r:.80}.")
    return _scalar_or_array(_clip1(np.asarray(p, dtype=float) / w[q - 1]), pvalue)
