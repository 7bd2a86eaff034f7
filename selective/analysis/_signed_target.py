r"""The conditional column after a randomized screen by signed clipped means.

A :class:`~selective.selectors.clipped_scores.SignedClippedMeanScores` screen (plan score
``signed_mean``) ranks :math:`S_j = \frac1n\sum_i s_i\,\mathrm{clip}(x_{ij})`, :math:`s_i = +1`
in the ``positive`` group and -1 elsewhere; the selected column is then tested for a difference
of the two groups' (raw) means, :math:`D_j`. The statistic tested is not a score, so the law is
that of :func:`~selective.conditional.randomized_target_inference`: given the group labels,
:math:`S` and :math:`D_j` are linear in the two groups' means of the rows and are jointly normal
in large samples, with

.. math::
    \operatorname{Var}(S) = (n_+ C_+ + n_- C_-)/n^2,\quad
    \operatorname{Cov}(S, D_j) = \pm(c_{+,j} + c_{-,j})/n,\quad
    \operatorname{Var}(D_j) = v_{+,j}/n_+ + v_{-,j}/n_-,

:math:`C_\pm` the groups' covariance matrices of the clipped columns, :math:`c_{\pm,j}` their
covariances with the raw column :math:`j` and :math:`v_{\pm,j}` its variances (the sign is that
of the test's level order). The nuisance means of the scores are conditioned away, so the
p-value does not need the groups to be balanced or the column's mean to be zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..hypotheses.means import TwoSampleTTest, TwoSampleZTest
from ..selectors.clipped_scores import SignedClippedMeanScores

__all__ = ["check_signed_test", "signed_scores", "signed_target"]


def check_signed_test(spec: Any, score: SignedClippedMeanScores) -> tuple:
    """The test's two levels when ``spec`` tests the group difference the score ranked; raises otherwise."""
    want = (f"the screen ranked signed clipped means (group {score.sign_column!r}, {score.positive!r} against every "
            f"other row), so the test must be a TwoSampleTTest or TwoSampleZTest with group={score.sign_column!r} "
            f"and levels naming {score.positive!r} and the other group")
    if not isinstance(spec, (TwoSampleTTest, TwoSampleZTest)) or spec.group != score.sign_column:
        raise ValueError(f"`conditional_on`: {want}; got {spec!r}.")
    if spec.levels is None or score.positive not in tuple(spec.levels):
        raise ValueError(f"`conditional_on`: {want}; got levels={spec.levels!r}.")
    return tuple(spec.levels)


def _groups(score: SignedClippedMeanScores, data: pd.DataFrame, levels: tuple):
    g = data[score.sign_column]
    pos = (g == score.positive).to_numpy(dtype=bool, na_value=False)
    other = next(v for v in levels if v != score.positive)
    neg = (g == other).to_numpy(dtype=bool, na_value=False)
    return pos, neg, other


def signed_scores(score: SignedClippedMeanScores, data: pd.DataFrame):
    """(S, Var(S), ones) from the rows (the signs fixed), or None when a group has fewer than 2 rows."""
    x = np.clip(data[list(score.columns)].to_numpy(dtype=float), -score.clip, score.clip)
    pos = (data[score.sign_column] == score.positive).to_numpy(dtype=bool, na_value=False)
    n, n_pos = x.shape[0], int(pos.sum())
    if n_pos < 2 or n - n_pos < 2:
        return None
    s = np.where(pos, 1.0, -1.0)
    cov = (n_pos * np.atleast_2d(np.cov(x[pos], rowvar=False))
           + (n - n_pos) * np.atleast_2d(np.cov(x[~pos], rowvar=False))) / (n * n)
    return s @ x / n, cov, np.ones(x.shape[1])


def signed_target(score: SignedClippedMeanScores, data: pd.DataFrame, candidate: Any,
                  levels: tuple) -> tuple[float, float, np.ndarray] | str:
    """(D, Var(D), Cov(S, D)) for the test of ``candidate`` between ``levels``, or why not."""
    pos, neg, other = _groups(score, data, levels)
    if not np.all(pos | neg):
        return (f"the screen's signs split the rows into {score.positive!r} and every other row, and "
                f"{int((~(pos | neg)).sum())} rows are in neither of the test's levels {levels!r}")
    x = np.clip(data[list(score.columns)].to_numpy(dtype=float), -score.clip, score.clip)
    y = data[candidate].to_numpy(dtype=float)
    n = y.size

    def cross(mask):
        xc, yc = x[mask] - x[mask].mean(axis=0), y[mask] - y[mask].mean()
        return xc.T @ yc / (int(mask.sum()) - 1)
    sign = 1.0 if levels[0] == score.positive else -1.0
    d = sign * (y[pos].mean() - y[neg].mean())
    v = float(np.var(y[pos], ddof=1) / pos.sum() + np.var(y[neg], ddof=1) / neg.sum())
    return float(d), v, sign * (cross(pos) + cross(neg)) / n
