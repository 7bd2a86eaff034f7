"""Bonferroni over N fixed outcomes or declared hypotheses ([DFHPRR]_ Theorem 9).

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int, check_pvalues
from ._common import Threshold, _alpha, _clip1, _log_p, _scalar_or_array

__all__ = ["gamma_bonferroni", "corrected_pvalue_bonferroni"]


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
