"""The shape of a GLM coefficient's score: the inputs of the GLM trust rules (docs/THEORY.md 7.1).

For column :math:`j`, :math:`\\tilde x` is :math:`x_j` minus its projection on the other columns,
weighted by the variance function at the given means, and the score
:math:`U=\\sum_i\\tilde x_i(y_i-\\mu_i)` has the variance, skewness and excess kurtosis returned by
:func:`score_shape` (the cumulants of a Poisson count, of a Bernoulli trial, or of a count of
``trials`` Bernoulli trials); :func:`grid_step` is the step of the grid a covariate lies on.
"""

from __future__ import annotations

import numpy as np


def score_shape(exog: np.ndarray, mu: np.ndarray, j: int, family: str, trials: np.ndarray | None = None):
    """Shape of the score of column ``j`` of a canonical GLM at the means ``mu`` (shape (n,) or (..., n)).

    Returns whether other columns exist, the score's variance, its skewness :math:`|\\gamma|`, its
    signed excess kurtosis and its lattice step in standard units
    (:func:`selective.hypotheses._trust.glm_trusted_level`). The step is charged only when column
    ``j`` is the model's only column: the Wald statistic is then a function of the one lattice sum
    :math:`\\sum_i x_{ij} y_i`. With other columns (an intercept, say) it is a function of several
    sums, and the level sets of a smooth function cut across their joint lattice: computed exactly,
    the two-group logit and Poisson Wald tests with an intercept hold their level without the term,
    while with it no binary covariate was ever trusted (docs/THEORY.md 7.1).
    """
    if family == "poisson":
        v, k3, k4 = mu, mu, mu
    else:
        v = mu * (1.0 - mu)
        k3, k4 = v * (1.0 - 2.0 * mu), v * (1.0 - 6.0 * v)
        if trials is not None:
            v, k3, k4 = (np.asarray(trials, dtype=float) * c for c in (v, k3, k4))
    others = [c for c in range(exog.shape[1]) if c != j]
    xt = np.broadcast_to(exog[:, j], mu.shape)
    if others:
        z = exog[:, others]
        zw = z * v[..., :, None]
        gram = np.einsum("ni,...nj->...ij", z, zw)
        rhs = np.einsum("...ni,n->...i", zw, exog[:, j])
        try:
            coef = np.linalg.solve(gram, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:  # a fit with a singular weighted Gram (means at 0 or 1): project anyway
            coef = (np.linalg.pinv(gram) @ rhs[..., None])[..., 0]
        xt = xt - coef @ z.T
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.sum(xt * xt * v, axis=-1)
        gamma = np.abs(np.sum(xt**3 * k3, axis=-1)) / var**1.5
        signed = np.sum(xt**4 * k4, axis=-1) / var**2
        # a lattice only when the statistic is a function of the one sum sum_i x_ij y_i (docs/THEORY.md 7.1)
        step = (0.0 if others else grid_step(exog[:, j])) / np.sqrt(var)
    return bool(others), var, gamma, signed, step


def grid_step(values: np.ndarray) -> float:
    """The step of the grid the values lie on (0 when they lie on none, as continuous data)."""
    distinct = np.unique(values)
    if distinct.size < 2:
        return 0.0
    gaps = np.diff(distinct)
    step = float(gaps.min())
    multiples = gaps / step
    if np.all(np.abs(multiples - np.round(multiples)) <= 1e-6 * np.maximum(1.0, multiples)):
        return step
    return 0.0
