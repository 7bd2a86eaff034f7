r"""Trust rules for p-values that are exact only under a parametric model.

Student's t-tests, OLS coefficient tests and Pearson's test are exact when the observations
(errors) are normal, and the package once trusted them at every level. They are not exact
otherwise, and the corrections use them at :math:`10^{-4}` and below, where a skewed
outcome makes them reject many times too often (exponential data, n = 50: 20 times at
:math:`10^{-4}`; docs/calibration.md). Normality cannot be checked from the data at those
levels, so each test gets a ``trusted_level`` from the shape of its own data, as the
asymptotic tests do (:mod:`selective.hypotheses._trust`); under normal data that level is
small and shrinks as n grows.

Two rules:

1. **Second-order Edgeworth bound for two-sided studentised statistics**
   (:func:`studentised_mean_trusted_level`, :func:`welch_trusted_level`,
   :func:`ols_trusted_level`). For the studentised mean of n observations with skewness
   :math:`\gamma` and excess kurtosis :math:`\kappa`,
   :math:`P(T \le x) = \Phi(x) + n^{-1/2} q_1(x)\varphi(x) + n^{-1} q_2(x)\varphi(x) + O(n^{-3/2})`
   with :math:`q_1` even and
   :math:`q_2(x) = x\{\tfrac{\kappa}{12}(x^2-3) - \tfrac{\gamma^2}{18}(x^4+2x^2-3) - \tfrac14(x^2+3)\}`
   (P. Hall, *The Bootstrap and Edgeworth Expansion*, Springer 1992, Section 2.6). In the
   two-sided tail the :math:`q_1` terms cancel, and the last term of :math:`q_2` is the
   :math:`t_{n-1}` law's own, so against the t reference the relative excess is
   :math:`\tfrac{x\varphi(x)}{q}\{\tfrac{\gamma_s^2}{18}(x^4+2x^2-3) - \tfrac{\kappa_s}{12}(x^2-3)\}`
   with :math:`q` one tail, :math:`\gamma_s = \gamma/\sqrt n` and :math:`\kappa_s = \kappa/n`
   the skewness and excess kurtosis of the sum. The rule bounds :math:`\gamma` by
   :math:`|G_1| + \mathrm{SE}` (:func:`selective.hypotheses._trust.skewness_bound`), charges
   the kurtosis term only on the side where it adds rejections (a negative :math:`\kappa`
   beyond :math:`x^2 = 3`, a positive one inside), bounded by the sample excess kurtosis
   :math:`G_2` plus its standard error, and doubles the total
   (:data:`~selective.hypotheses._trust.EDGEWORTH_SAFETY`) for the omitted terms. Measured
   (exponential, n = 50, 4e6 draws): the expansion predicts 1.36, 2.53, 7.1 and 17 times the
   level at 0.05, 0.01, 1e-3 and 1e-4; the truth is 1.30, 2.23, 6.4 and 20.5, inside the
   doubled charge. One-sided tests keep the first-order rule of
   :func:`selective.hypotheses._trust.studentised_trusted_level`, whose :math:`q_1` term
   does not cancel.

   Welch's statistic uses the skewness bound of the difference of means and
   :math:`\kappa_s = \sum_k \kappa_k s_k^4 / n_k^3 / \tau^4`; an OLS coefficient, the
   standardised residualised column :math:`a` (:math:`\sum a_i^2 = 1`), with
   :math:`\gamma_s = \gamma_\varepsilon |\sum a_i^3|` and :math:`\kappa_s = \kappa_\varepsilon
   \sum a_i^4` from the residuals' moments. The studentised-mean polynomial is the case of
   greatest coupling between numerator and variance estimate, and is used for both as an
   approximation that docs/calibration.md measures.

2. **Permutation moments for correlation-type statistics** (:func:`correlation_trusted_level`).
   Pearson's t and the pooled two-sample t (the Pearson t of the outcome against a group
   indicator) have, under independence (identical distributions in the two groups), the
   permutation law given the observed values: exact, whatever the law of the data. The
   rule of :func:`selective.hypotheses._trust.spearman_trusted_level` (Pitman's exact
   permutation skewness and kurtosis, Edgeworth, doubled) bounds the error of the normal
   theory law against it, conditionally on the data, so no margin for sampling error is
   needed; a lattice term enters when both variables lie on a grid. Below the level, the
   specs fall back to the permutation test itself.
"""

from __future__ import annotations

import math

import numpy as np

from . import _trust

__all__ = [
    "moment_bounds",
    "second_order_ok",
    "studentised_mean_trusted_level",
    "welch_trusted_level",
    "ols_trusted_level",
    "correlation_trusted_level",
]


def moment_bounds(x: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds on a population's skewness and on either sign of its excess kurtosis.

    Returns ``(skew, kurt_low, kurt_high)`` along ``axis``: :math:`|G_1| + \\mathrm{SE}_1`,
    :math:`\\max(0, -G_2 + \\mathrm{SE}_2)` capped at 2 (excess kurtosis is at least -2) and
    :math:`\\max(0, G_2 + \\mathrm{SE}_2)`, with :math:`G_1, G_2` the adjusted sample skewness
    and excess kurtosis and
    :math:`\\mathrm{SE}_2 = 2\\,\\mathrm{SE}_1\\sqrt{(n^2-1)/((n-3)(n+5))}` their standard errors
    under normality. Fewer than 4 observations give infinite bounds.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[axis]
    shape = np.delete(x.shape, axis % x.ndim) if x.ndim else ()
    if n < 4:
        inf = np.full(shape, np.inf)
        return inf, np.minimum(inf, 2.0), inf
    d = x - x.mean(axis=axis, keepdims=True)
    m2 = (d * d).mean(axis=axis)
    m3 = (d * d * d).mean(axis=axis)
    m4 = (d * d * d * d).mean(axis=axis)
    positive = m2 > 0
    safe = np.where(positive, m2, 1.0)
    g1 = np.where(positive, m3 / safe**1.5, 0.0)
    g2 = np.where(positive, m4 / safe**2 - 3.0, 0.0)
    big_g1 = g1 * math.sqrt(n * (n - 1.0)) / (n - 2.0)
    big_g2 = ((n + 1.0) * g2 + 6.0) * (n - 1.0) / ((n - 2.0) * (n - 3.0))
    se1 = math.sqrt(6.0 * n * (n - 1.0) / ((n - 2.0) * (n + 1.0) * (n + 3.0)))
    se2 = 2.0 * se1 * math.sqrt((n * n - 1.0) / ((n - 3.0) * (n + 5.0)))
    skew = np.abs(big_g1) + _trust.SKEWNESS_MARGIN * se1
    kurt_low = np.clip(-big_g2 + _trust.SKEWNESS_MARGIN * se2, 0.0, 2.0)
    kurt_high = np.maximum(0.0, big_g2 + _trust.SKEWNESS_MARGIN * se2)
    return skew, kurt_low, kurt_high


def second_order_ok(skew_s, kurt_low_s, kurt_high_s, *, reference_ratio=1.0) -> np.ndarray:
    """Whether the two-sided rule trusts each level of :data:`~selective.hypotheses._trust.LEVEL_GRID`.

    ``skew_s``, ``kurt_low_s`` and ``kurt_high_s`` bound the skewness and the two signs of the
    excess kurtosis of the studentised sum (e.g. :math:`\\gamma/\\sqrt n` and :math:`\\kappa/n`);
    ``reference_ratio`` is the normal-model ratio of the reference used to the exact one (1 for
    the t reference). Broadcasts over leading axes; the last axis is the grid.
    """
    q, x = _trust._tail("two-sided")
    g = np.asarray(skew_s, dtype=float)[..., None]
    low = np.asarray(kurt_low_s, dtype=float)[..., None]
    high = np.asarray(kurt_high_s, dtype=float)[..., None]
    x2 = x * x
    kurt = np.where(x2 >= 3.0, low * (x2 - 3.0), high * (3.0 - x2)) / 12.0
    shape = g * g / 18.0 * np.abs(x2 * x2 + 2.0 * x2 - 3.0) + kurt
    rel = _trust.EDGEWORTH_SAFETY * x * _trust._mills(x, q) * shape
    rel = np.nan_to_num(rel, nan=np.inf)
    return np.asarray(reference_ratio) * (1.0 + rel) <= 1.0 + _trust.RATE_TOLERANCE


def _level(ok: np.ndarray) -> np.ndarray | float:
    out = _trust.grid_trusted_level(ok)
    return float(out) if np.ndim(out) == 0 else out


def studentised_mean_trusted_level(x: np.ndarray, alternative: str, *, reference: str = "t"):
    """Trusted level of a studentised mean of ``x`` (last axis) against a t or normal reference.

    Two-sided: the second-order rule with :func:`moment_bounds` over :math:`\\sqrt n` and
    :math:`n`; one-sided: the first-order rule. A normal reference (the z-test) also pays its
    exact normal-model ratio against :math:`t_{n-1}`. Vectorised over leading axes.
    """
    n = np.shape(x)[-1]
    ratio = _trust.t_reference_ratio(n - 1, alternative=alternative) if reference == "normal" else 1.0
    if alternative != "two-sided":
        return _trust.studentised_trusted_level(
            _trust.studentised_mean_skewness(x), alternative=alternative, reference_ratio=ratio
        )
    skew, low, high = moment_bounds(x)
    return _level(second_order_ok(skew / math.sqrt(n), low / n, high / n, reference_ratio=ratio))


def welch_trusted_level(x1: np.ndarray, x2: np.ndarray, alternative: str, *, reference_ratio=1.0):
    """Trusted level of Welch's statistic (the difference of means over its separate-variance
    standard error); ``reference_ratio`` as in :func:`second_order_ok`. Vectorised."""
    skew = _trust.welch_skewness(x1, x2)
    if alternative != "two-sided":
        return _trust.studentised_trusted_level(skew, alternative=alternative, reference_ratio=reference_ratio)
    n1, n2 = np.shape(x1)[-1], np.shape(x2)[-1]
    _, low1, high1 = moment_bounds(x1)
    _, low2, high2 = moment_bounds(x2)
    v1, v2 = np.var(x1, axis=-1, ddof=1) / n1, np.var(x2, axis=-1, ddof=1) / n2
    tau4 = (v1 + v2) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        w1, w2 = v1 * v1 / n1 / tau4, v2 * v2 / n2 / tau4  # kappa_k s_k^4 / n_k^3 / tau^4 = kappa_k w_k
        low, high = low1 * w1 + low2 * w2, high1 * w1 + high2 * w2
    return _level(second_order_ok(skew, low, high, reference_ratio=reference_ratio))


def ols_trusted_level(exog: np.ndarray, resid: np.ndarray, columns: list[int], alternative: str):
    """Trusted level of OLS t (or F) tests of ``columns``, from the residuals' shape.

    For each tested column, :math:`a` is the column residualised on the others and scaled to
    unit norm; :math:`\\gamma_s = \\gamma|\\sum a^3|`, :math:`\\kappa_s = \\kappa\\sum a^4` with
    :func:`moment_bounds` of the residuals (last axis: one level per row of ``resid``). Joint
    tests take the worst column with the two-sided rule (a heuristic, measured in
    docs/calibration.md).
    """
    exog = np.asarray(exog, dtype=float)
    skew, low, high = moment_bounds(resid)
    ok = True
    for j in columns:
        others = [c for c in range(exog.shape[1]) if c != j]
        a = exog[:, j].copy()
        if others:
            z = exog[:, others]
            coef, *_ = np.linalg.lstsq(z, a, rcond=None)
            a = a - z @ coef
        norm = float(np.sqrt(a @ a))
        if not norm > 0:
            return 1.0 if np.ndim(skew) == 0 else np.ones(np.shape(skew))
        a = a / norm
        s3, s4 = abs(float(np.sum(a**3))), float(np.sum(a**4))
        if alternative == "two-sided":
            col_ok = second_order_ok(skew * s3, low * s4, high * s4)
        else:
            q, x = _trust._tail(alternative)
            g = np.asarray(skew * s3)[..., None]
            rel = _trust.EDGEWORTH_SAFETY * g * (2 * x * x + 1) / 6 * _trust._mills(x, q)
            col_ok = 1.0 + np.nan_to_num(rel, nan=np.inf) <= 1.0 + _trust.RATE_TOLERANCE
        ok = ok & col_ok
    return _level(ok)


def correlation_trusted_level(a: np.ndarray, b: np.ndarray, *, alternative: str) -> float:
    """Trusted level of the normal-theory (t) p-value of the correlation of ``a`` and ``b``
    against their permutation law (Pearson's test; the pooled two-sample t with ``a`` a group
    indicator). Lattice step: the product of the two variables' grid steps
    (:func:`selective.hypotheses._trust._grid_step`), 0 when either is continuous."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    step = grid_steps(a) * grid_steps(b)
    return _trust.permutation_rule(a, b, step, alternative=alternative, min_n=4)


def grid_steps(values: np.ndarray) -> np.ndarray | float:
    """:func:`selective.hypotheses._trust._grid_step` of each row (last axis) of ``values``."""
    v = np.sort(np.asarray(values, dtype=float), axis=-1)
    gaps = np.diff(v, axis=-1)
    positive = gaps > 0
    step = np.min(np.where(positive, gaps, np.inf), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        multiples = gaps / step[..., None]
    on_grid = np.all(~positive | (np.abs(multiples - np.round(multiples)) <= 1e-6 * np.maximum(1.0, multiples)),
                     axis=-1)
    out = np.where(np.isfinite(step) & on_grid, step, 0.0)
    return float(out) if np.ndim(out) == 0 else out
