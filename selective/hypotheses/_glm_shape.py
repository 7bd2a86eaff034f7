"""The shape of a GLM coefficient's score: the inputs of the GLM trust rules (docs/THEORY.md 7.1).

For column :math:`j`, :math:`\\tilde x` is :math:`x_j` minus its projection on the other columns,
weighted by the variance function at the given means, and the score
:math:`U=\\sum_i\\tilde x_i(y_i-\\mu_i)` has the variance, skewness and excess kurtosis returned by
:func:`score_shape` (the cumulants of a Poisson count, of a Bernoulli trial, or of a count of
``trials`` Bernoulli trials); :func:`grid_step` is the step of the grid a covariate lies on.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats


def score_shape(exog: np.ndarray, mu: np.ndarray, j: int, family: str, trials: np.ndarray | None = None):
    """Shape of the score of column ``j`` of a canonical GLM at the means ``mu`` (shape (n,) or (..., n)).

    Returns whether other columns exist, the score's variance, its skewness :math:`|\\gamma|`, its
    signed excess kurtosis and its lattice step in standard units, as charged
    (:func:`selective.hypotheses._trust.glm_trusted_level`). With column ``j`` on a grid of step g,
    :math:`\\sum_i x_{ij}y_i` is a lattice sum of step g, and alone (no other column) the Wald
    statistic is a function of it: the step :math:`g/\\sqrt{\\operatorname{Var} U}` is charged in full.
    Other columns smooth it: the score is :math:`\\sum_i x_{ij}y_i - \\sum_i c_iy_i` with
    :math:`c_i` the projection of :math:`x_{ij}` on them, and the lattice's first Fourier term is
    damped by the characteristic function of the second sum at frequency :math:`2\\pi/g` (computed
    exactly; about :math:`\\exp(-2\\pi^2\\sigma_c^2/g^2)` with :math:`\\sigma_c^2=\\sum_i c_i^2v_i`),
    the factor charged.
    With arms of comparable size it vanishes (the two-group logit and Poisson tests, summed exactly,
    hold their level without the term); a small group against a huge one keeps it (24 rows against
    10^6 at p = 0.5 rejected 1.28 times the level at 0.05 without it) (docs/THEORY.md 7.1).
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
        g = grid_step(exog[:, j])
        step = g * _damping(exog[:, j] - xt, g, mu, family, trials) / np.sqrt(var)
    return bool(others), var, gamma, signed, step


def _damping(c: np.ndarray, g: float, mu: np.ndarray, family: str, trials: np.ndarray | None) -> np.ndarray:
    """:math:`|E\\,e^{2\\pi i\\sum_i c_iy_i/g}|`, the characteristic function of the projection's sum at the
    lattice frequency (exact for Poisson and binomial outcomes; about :math:`\\exp(-2\\pi^2\\sum c_i^2v_i/g^2)`
    for small :math:`c_i/g`); 1 without other columns (c = 0)."""
    if g <= 0:
        return np.zeros(mu.shape[:-1])
    one_minus_cos = 1.0 - np.cos(2.0 * np.pi * c / g)
    if family == "poisson":
        return np.exp(-np.sum(mu * one_minus_cos, axis=-1))
    m = 1.0 if trials is None else np.asarray(trials, dtype=float)
    inner = np.clip(1.0 - 2.0 * mu * (1.0 - mu) * one_minus_cos, 0.0, 1.0)
    return np.exp(np.sum(0.5 * m * np.log(inner), axis=-1))


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


#: The many-columns charge (docs/THEORY.md 7.1, rule 2c) applies to models with at least this many coefficients;
#: with fewer, the O(1/n) error of the Wald statistic is the shape rules' own.
MANY_COEFFICIENTS = 4
#: Envelope constants of that charge: the Wald statistic is taken as N(a (p/n) |beta/se|, 1 + c p/n). Measured
#: (logit, p/n 0.02-0.06, signal sd 0-2.7): c 0.5-1.2 and a about 1; the envelope is 1.5 for both.
DIMENSION_VARIANCE = 1.5
DIMENSION_BIAS = 1.5


def dimension_excess(levels: np.ndarray, alternative: str, ratio: float, *, shift: float = 0.0,
                     df: int = 1) -> np.ndarray:
    """Relative excess over each of ``levels`` of a Wald test whose statistic is
    :math:`N(b, 1 + c\\,p/n)` instead of :math:`N(0, 1)` (``ratio`` = p/n, ``shift`` = |beta - value| / se,
    b = a (p/n) ``shift``): the high-dimensional inflation of the MLE (Sur and Candès 2019) that the shape
    rules do not see. A joint test of ``df`` > 1 coefficients takes the chi-square scaled by 1 + c p/n.
    Zero when ``ratio`` is 0."""
    levels = np.asarray(levels, dtype=float)
    if ratio <= 0.0:
        return np.zeros_like(levels)
    scale = math.sqrt(1.0 + DIMENSION_VARIANCE * ratio)
    if df > 1:
        return scipy.stats.chi2.sf(scipy.stats.chi2.isf(levels, df) / scale**2, df) / levels - 1.0
    b = DIMENSION_BIAS * ratio * abs(float(shift))
    if alternative == "two-sided":
        x = scipy.stats.norm.isf(levels / 2.0)
        rate = scipy.stats.norm.sf((x - b) / scale) + scipy.stats.norm.sf((x + b) / scale)
    else:  # the shift taken towards the rejecting side
        x = scipy.stats.norm.isf(np.minimum(levels, 0.999))
        rate = scipy.stats.norm.sf((x - b) / scale)
    return rate / np.where(alternative == "two-sided", levels, np.minimum(levels, 0.999)) - 1.0


def charge_at(extra: np.ndarray, level: float) -> float:
    """Rule 2c's relative excess (``extra``, on ``_trust.LEVEL_GRID``, descending) at a grid ``level``."""
    from ._trust import LEVEL_GRID

    return float(extra[min(int(np.searchsorted(-LEVEL_GRID, -level)), len(extra) - 1)])
