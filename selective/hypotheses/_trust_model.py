r"""Trust rules for p-values that are exact only under a parametric model.

Student's t-tests, OLS coefficient tests and Pearson's test are exact when the observations (errors) are
normal, and the package once trusted them at every level. They are not exact otherwise, and the corrections
use them at :math:`10^{-4}` and below, where a skewed outcome makes them reject many times too often
(exponential data, n = 50: 20 times at :math:`10^{-4}`; docs/calibration.md). Normality cannot be checked
from the data at those levels, so each test gets a ``trusted_level`` from the shape of its own data, as the
asymptotic tests do (:mod:`selective.hypotheses._trust`); under normal data it is small and shrinks as n grows.

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

import hashlib
import math
from typing import Any

import numpy as np

from . import _glm_shape, _resample, _trust
from ._counts import binomial_dispersion_z, binomial_trials, counts_problem  # noqa: F401 (counts_problem: for regression)
from ._null_fit import null_fit_means

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
    (:func:`selective.hypotheses._glm_shape.grid_step`), 0 when either is continuous."""
    a, b = _unit_scale(a), _unit_scale(b)  # scale-free: the product of the grid steps cannot overflow
    step = grid_steps(a) * grid_steps(b)
    return _trust.permutation_rule(a, b, step, alternative=alternative, min_n=4)


def grid_steps(values: np.ndarray) -> np.ndarray | float:
    """:func:`selective.hypotheses._glm_shape.grid_step` of each row (last axis) of ``values``."""
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


# --------------------------------------------------------------------------------------------
# Variance checks: the model's variance along the tested column
# --------------------------------------------------------------------------------------------

#: one-sided level of the variance checks
VARIANCE_CHECK_LEVEL = 0.01
#: the normal quantile 1 - VARIANCE_CHECK_LEVEL (the Poisson check, and the others beyond PERMUTED_CHECK_MAX_N)
VARIANCE_CHECK_Z = 2.3263478740408408
#: permutations of the studentised Breusch-Pagan check (it fires when at most 4 are as large)
CHECK_PERMUTATIONS = 499
#: the largest number of rows whose check is calibrated by permutation (beyond it: the normal law)
PERMUTED_CHECK_MAX_N = 20_000
#: the words that open the note of a failed check (the report quotes the note from the method)
VARIANCE_CHECK_MARK = "variance check failed"


def _centred(values: np.ndarray, strata: np.ndarray | None) -> tuple[np.ndarray, int]:
    """``values`` minus their stratum means, and the number of strata."""
    if strata is None:
        return values - values.mean(), 1
    counts = np.bincount(strata)
    means = np.bincount(strata, weights=values) / np.where(counts > 0, counts, 1)
    return values - means[strata], int(np.count_nonzero(counts))


def koenker_z(weights: np.ndarray, squares: np.ndarray, strata: np.ndarray | None = None) -> float:
    r"""Signed studentised Breusch-Pagan statistic (Koenker 1981) of ``squares`` on ``weights``.

    :math:`z = \sum_i \tilde w_i \tilde s_i / \sqrt{\sum_i \tilde w_i^2 \cdot \sum_i \tilde s_i^2 / (n - g)}`
    with :math:`\tilde w, \tilde s` centred within the ``g`` strata (one when ``strata`` is
    None): :math:`\sqrt{n - g}` times the correlation of the squares with the weights, whose square
    is (n - 1)/n times Koenker's LM statistic with the one regressor ``weights`` (statsmodels'
    ``het_breuschpagan(..., robust=True)``). With ``weights`` the squared residualised tested
    column :math:`a_i^2` and ``squares`` the squared residuals,
    :math:`\sum a_i^2 e_i^2 - \hat\sigma^2\sum a_i^2` is the sandwich variance of the coefficient
    minus the model's, so a large positive z says that the model's variance understates the
    coefficient's (the direction that makes its test anti-conservative). 0 when either is constant.
    """
    w, g = _centred(np.asarray(weights, dtype=float), strata)
    s, _ = _centred(np.asarray(squares, dtype=float), strata)
    dof = len(s) - g
    den = float(np.sum(w * w)) * float(np.sum(s * s)) / max(dof, 1)
    return float(np.sum(w * s) / math.sqrt(den)) if den > 0 and dof > 0 else 0.0


def _unit_scale(values: Any) -> np.ndarray:
    """``values`` as floats divided by their largest absolute value (unchanged when that is 0 or not
    finite): the checks are scale-free, and so is the seed of their permutations."""
    v = np.asarray(values, dtype=float)
    top = float(np.max(np.abs(v), initial=0.0))
    return v / top if 0.0 < top < math.inf else v


def koenker_fires(weights: np.ndarray, squares: np.ndarray, strata: np.ndarray | None = None) -> tuple[bool, str]:
    r"""Whether the squares grow with the weights at :data:`VARIANCE_CHECK_LEVEL`, and how it was judged.

    The statistic :math:`T = \sum_i \tilde w_i s_i` (:func:`koenker_z`'s numerator) is referred to
    its law over :data:`CHECK_PERMUTATIONS` permutations of the squares within strata (exact when
    they are exchangeable within strata: no trend, whatever their law; the seed is fixed by the
    data, so a table is the same at every call), or, beyond :data:`PERMUTED_CHECK_MAX_N` rows, z
    to the normal law.
    """
    w, sq = _unit_scale(weights), _unit_scale(squares)  # scale-free: the same decision at any units
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(sq))):
        return False, ""
    wc, _ = _centred(w, strata)
    sc, _ = _centred(sq, strata)
    # weights or squares constant within every stratum (up to rounding): no trend can be seen
    if not (np.max(np.abs(wc), initial=0.0) > 1e-9 and np.max(np.abs(sc), initial=0.0) > 1e-9):
        return False, ""
    n = len(sq)
    if n > PERMUTED_CHECK_MAX_N:
        z = koenker_z(w, sq, strata)
        return z > VARIANCE_CHECK_Z, f"z = {z:.2f} > {VARIANCE_CHECK_Z:.2f}"
    observed = float(wc @ sq)
    tolerance = 1e-9 * float(np.abs(wc) @ np.abs(sq))  # rounding: sums of the same terms in another order
    digest = hashlib.sha256(w.tobytes() + b"|" + sq.tobytes()).digest()
    gen = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    codes = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    count, done, chunk = 0, 0, max(1, min(CHECK_PERMUTATIONS, 2_000_000 // max(n, 1)))
    while done < CHECK_PERMUTATIONS:
        size = min(chunk, CHECK_PERMUTATIONS - done)
        stats = sq[_resample.stratified_permutations(gen, codes, size)] @ wc
        count += int(np.sum(stats >= observed - tolerance))
        done += size
    pvalue = (1 + count) / (1 + CHECK_PERMUTATIONS)
    return pvalue <= VARIANCE_CHECK_LEVEL, f"permutation p = {pvalue:.2g} <= {VARIANCE_CHECK_LEVEL:g}"


def poisson_dispersion_z(column: np.ndarray, y: np.ndarray, mu: np.ndarray) -> float:
    r"""Signed check of the Poisson variance along a tested column.

    With :math:`w_i = \tilde x_i^2 \mu_i` (``column`` the tested column residualised in the
    Fisher-information metric: :math:`w_i` is row i's share of the information) and Pearson
    residuals :math:`r_i = (y_i - \mu_i)/\sqrt{\mu_i}`, :math:`\sum_i w_i r_i^2 / \sum_i w_i` is
    the sandwich variance of the coefficient over the model's. Under the Poisson model
    :math:`E r_i^2 = 1` and :math:`\mathrm{Var}\, r_i^2 = 2 + 1/\mu_i`, so
    :math:`z = \sum_i w_i (r_i^2 - 1) / \sqrt{\sum_i w_i^2 (2 + 1/\mu_i)}` is approximately standard
    normal; overdispersion, common or growing with the column, makes it large.
    """
    mu = np.asarray(mu, dtype=float)
    w = np.asarray(column, dtype=float) ** 2 * mu
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = (np.asarray(y, dtype=float) - mu) ** 2 / mu
        den = float(np.sum(w * w * (2.0 + 1.0 / mu)))
    if not (np.all(np.isfinite(r2)) and np.isfinite(den) and den > 0):
        return 0.0
    return float(np.sum(w * (r2 - 1.0)) / math.sqrt(den))


def residualised(exog: np.ndarray, j: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Column ``j`` of ``exog`` minus its (weighted) least-squares projection on the other columns."""
    others = [c for c in range(exog.shape[1]) if c != j]
    a = exog[:, j].astype(float)
    if others:
        z = exog[:, others]
        zw = z if weights is None else z * weights[:, None]
        coef, *_ = np.linalg.lstsq(z.T @ zw, zw.T @ a, rcond=None)
        a = a - z @ coef
    return a


def nuisance_strata(exog: np.ndarray, tested: list[int]) -> np.ndarray:
    """Integer codes of the rows' values of the columns not tested (one stratum when none is left)."""
    others = [c for c in range(exog.shape[1]) if c not in tested]
    if not others:
        return np.zeros(exog.shape[0], dtype=np.int64)
    _, codes = np.unique(exog[:, others], axis=0, return_inverse=True)
    return np.asarray(codes, dtype=np.int64).ravel()


def check_note(what: str, how: str, *, model: bool, permutation: bool, fix: str, has_permutation: bool = True) -> str:
    """The note of a failed variance check (the method carries it; the report quotes it)."""
    which = ("neither this p-value nor its permutation version is trusted" if model and permutation
             else "this p-value is not trusted" if model and not has_permutation
             else "this p-value is not trusted (its permutation version is)" if model
             else "its permutation version is not used")
    return f"{VARIANCE_CHECK_MARK}: {what} ({how}), so {which}; {fix}"


def fit_variance_checks(fit, model: str, columns: list[int], names: list[str], *,
                        permutable: bool = True) -> tuple[str, bool, bool]:
    """The variance checks of a plain (nonrobust) regression fit for the tested ``columns``.

    Returns the note of a failed check ("" when both pass), whether the model's check failed
    and whether the score permutation may be used. The model's p-value (OLS / WLS t or F,
    Poisson Wald) needs the model's variance along each tested column: OLS by
    :func:`koenker_fires` of the squared whitened residuals on the squared residualised column,
    Poisson by :func:`poisson_dispersion_z`. The permutation
    needs outcomes exchangeable within strata of the nuisance values: :func:`koenker_fires` of the
    squared Pearson residuals on the squared residualised column within those strata, only when
    the spec has one (``permutable``: a null value of 0, no weights or robust covariance) and at
    least half of the rows share their nuisance values with another row. A logit fit of 0/1
    outcomes has neither (a binary outcome's variance is fixed by its mean); one of counts of
    successes (:func:`binomial_trials`) has the model's, :func:`binomial_dispersion_z` (and no
    permutation).
    """
    trials = binomial_trials(fit) if model == "logit" else None
    if model == "logit" and trials is None:
        return "", False, True
    if model == "ols":
        exog, resid = np.asarray(fit.model.wexog, dtype=float), np.asarray(fit.wresid, dtype=float)
        weights, squares = None, _unit_scale(resid) ** 2
    elif trials is not None:
        exog, p = np.asarray(fit.model.exog, dtype=float), np.asarray(fit.mu, dtype=float)
        y, weights = np.asarray(fit.model.endog, dtype=float) * trials, trials * p * (1.0 - p)
        with np.errstate(divide="ignore", invalid="ignore"):
            squares = (y - trials * p) ** 2 / weights
    else:
        exog, weights = np.asarray(fit.model.exog, dtype=float), np.asarray(fit.mu, dtype=float)
        y = np.asarray(fit.model.endog, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            squares = (y - weights) ** 2 / weights
    strata = nuisance_strata(exog, columns)
    sizes = np.bincount(strata)
    # as the score permutation requires (it has no version for counts of successes)
    permutable = permutable and trials is None and bool(np.mean(sizes[strata] >= 2) >= 0.5)
    model_fails = permutation_fails = False
    what = how = ""
    for j, term in zip(columns, names, strict=True):
        a = residualised(exog, j, weights)
        if model == "ols":
            fires, h = koenker_fires(a * a, squares)
        else:
            z = poisson_dispersion_z(a, y, weights) if trials is None else binomial_dispersion_z(a, y, p, trials)
            fires, h = z > VARIANCE_CHECK_Z, f"z = {z:.2f} > {VARIANCE_CHECK_Z:.2f}"
        perm, h2 = koenker_fires(a * a, squares, strata) if permutable else (False, "")
        if (fires or perm) and not what:
            bp = model == "ols" or perm and not fires
            what = (f"the squared residuals grow with the residualised {term!r}" if bp
                    else f"the Pearson residuals are overdispersed along {term!r}")
            how = ("studentised Breusch-Pagan, " if bp else "") + (h if fires else h2)
        model_fails, permutation_fails = model_fails or fires, permutation_fails or perm
    if not (model_fails or permutation_fails):
        return "", False, True
    fix = (f"cov_type='{'HC3' if model == 'ols' else 'HC0'}' gives a variance-robust test, but only its naive "
           "p-value: robust covariances have no trusted level, so its corrected columns are withheld")
    note = check_note(what, how, model=model_fails, permutation=permutation_fails, fix=fix,
                      has_permutation=permutable)
    return note, model_fails, not permutation_fails


def fit_trust(fit, model: str, columns: list[int], names: list[str], alternative: str, *,
              permutable: bool = True, values: list[float] | None = None) -> tuple[float, str, float]:
    """Trusted levels of a plain regression fit's t / Wald test of ``columns``: of its p-value and
    of its interval, and the note of a failed variance check (:func:`fit_variance_checks`; both
    levels are 1 when the model's check fails) or of what set a GLM's level.

    OLS / WLS: :func:`ols_trusted_level` of the whitened design and residuals (WLS is OLS on rows
    scaled by the root weights), for both. GLMs: :func:`selective.hypotheses._trust.glm_trusted_level`.
    The p-value's level is read at the means of the null fit (the tested coefficients held at
    ``values``, default 0; :func:`null_fit_means`): only the null law of the statistic matters for a
    p-value, and under the null that fit estimates it at least as well as the full one, while a
    real effect no longer inflates the level. The interval covers the true coefficient whatever it is,
    so its level is read at the fitted means. When the null fit fails, both use the fitted means.
    """
    note, model_fails, _ = fit_variance_checks(fit, model, columns, names, permutable=permutable)
    if model_fails:
        return 1.0, note, 1.0
    if model == "ols":
        level = ols_trusted_level(np.asarray(fit.model.wexog, dtype=float), np.asarray(fit.wresid, dtype=float),
                                  columns, alternative)
        return float(level), note, float(level)
    exog = np.asarray(fit.model.exog, dtype=float)
    family, trials = ("poisson" if model == "poisson" else "binomial"), (
        binomial_trials(fit) if model == "logit" else None)
    values = [0.0] * len(columns) if values is None else values
    ratio = exog.shape[1] / exog.shape[0] if exog.shape[1] >= _glm_shape.MANY_COEFFICIENTS else 0.0  # rule 2c
    se, beta = np.asarray(fit.bse, dtype=float)[columns], np.asarray(fit.params, dtype=float)[columns]
    null_shift = float(np.max(np.abs(np.asarray(values) / se))) if len(columns) == 1 else 0.0
    extra = _glm_shape.dimension_excess(_trust.LEVEL_GRID, alternative, ratio, shift=null_shift, df=len(columns))
    extra_ci = _glm_shape.dimension_excess(_trust.LEVEL_GRID, alternative, ratio, df=len(columns),
                                           shift=float(np.max(np.abs(beta / se))))
    if alternative == "two-sided" and len(columns) == 1:  # rule 2b: the tails' first-order terms cancel
        interval = float(_trust.glm_interval_trusted_level(exog, np.asarray(fit.mu), columns[0], family, trials=trials,
                                                           extra=extra_ci))
    else:
        interval = float(_trust.glm_trusted_level(exog, np.asarray(fit.mu), columns, family, alternative=alternative,
                                                  trials=trials, extra=extra_ci))
    mu0 = null_fit_means(fit, columns, values)
    shape: dict = {}
    level = float(_trust.glm_trusted_level(exog, np.asarray(fit.mu) if mu0 is None else mu0, columns, family,
                                           alternative=alternative, trials=trials, details=shape, extra=extra))
    # rule 2c is named where its charge at the trusted level is material (more than 1%)
    binds_p, binds_ci = ((ratio > 0 and 0 < lv < 1 and _glm_shape.charge_at(e, lv) > 0.01)
                         for e, lv in ((extra, level), (extra_ci, interval)))
    if 0.0 < level < 1.0:  # say what set it, for the report's note
        what = ", ".join(f"{name!r}" for name in names)
        lattice = f", lattice step {shape['step']:.2g} sd" if shape.get("step", 0.0) >= 1e-3 else ""
        where = "at the fitted means (the null fit failed)" if mu0 is None else "at the means of the null fit"
        note = "; ".join(x for x in (note, (
            f"{SHAPE_MARK} of {what} {where} (skewness {shape['skewness']:.2g}, excess kurtosis "
            f"{shape['kurtosis']:.2g}{lattice})" + (f" and the {DIMENSION_MARK}" if binds_p else "")
            + ": more rows lower it, as do lighter tails or more distinct values of the tested column")) if x)
    if interval > level:
        note = "; ".join(x for x in (note, f"interval trusted down to miscoverage {interval:.2g} (the score's shape at "
                                     "the fitted means" + (f" and the {DIMENSION_MARK}" if binds_ci else "")
                                     + ": a strong effect raises it)") if x)
    if ratio > MANY_COLUMNS or (ratio > 0 and (binds_p or binds_ci)):  # say when the charge is material
        note = "; ".join(x for x in (note, f"{DIMENSION_MARK}: {exog.shape[1]} coefficients on {exog.shape[0]} rows, "
                                     "the Wald statistic's high-dimensional inflation taken as variance 1 + "
                                     f"{_glm_shape.DIMENSION_VARIANCE:g} p/n (docs/THEORY.md 7.1)") if x)
    return level, note, max(interval, level)


#: a GLM with 4 or more coefficients, more than this share of its rows, says in its note that rule 2c's
#: many-columns charge set its levels (docs/THEORY.md 7.1)
MANY_COLUMNS = 0.02


DIMENSION_MARK = "many-columns charge (rule 2c)"  #: names rule 2c in a GLM test's method (the report reads it)
#: how a GLM test's method says what set its trusted level (:func:`shape_reason` finds it)
SHAPE_MARK = "trusted level set by the shape of the score"


def shape_reason(method: str) -> str:
    """The clause of a GLM test's method that says what set its trusted level ("" when none)."""
    at = str(method).find(SHAPE_MARK)
    if at < 0:
        return ""
    end = str(method).find("; ", at)
    return str(method)[at:] if end < 0 else str(method)[at:end]


def pooled_variance_note(x1: np.ndarray, x2: np.ndarray, *, exchangeable: bool = False) -> str:
    """The variance check of Student's pooled two-sample test ("" when it passes).

    The pooled statistic is the OLS t of the outcome on a group indicator, so the check is
    :func:`koenker_fires` of the squared deviations from the group means on the squared centred
    indicator: it fires when the smaller group is the more spread out (with equal group sizes
    the pooled variance is right whatever the two variances, and it never fires). With
    ``exchangeable`` declared, the label permutation stays available (the note says so).
    """
    both = _unit_scale(np.concatenate([np.asarray(x1, dtype=float), np.asarray(x2, dtype=float)]))
    n1, n = len(x1), len(both)
    indicator = np.concatenate([np.ones(n1), np.zeros(n - n1)]) - n1 / n
    squares = np.concatenate([both[:n1] - both[:n1].mean(), both[n1:] - both[n1:].mean()]) ** 2
    fires, how = koenker_fires(indicator**2, squares)
    if not fires:
        return ""
    return check_note("the smaller group is the more spread out", f"studentised Breusch-Pagan, {how}", model=True,
                      permutation=not exchangeable, fix="Welch's test (usevar='unequal') allows unequal variances; "
                      "exchangeable=True declares the same distribution in both groups (the permutation is then used)")


def correlation_variance_note(a: np.ndarray, b: np.ndarray) -> str:
    """The variance check of a test of zero correlation ("" when it passes): :func:`koenker_fires`
    of the squared least-squares residuals of ``b`` on ``a`` on the squared centred ``a`` (the
    t statistic of r is the OLS t of the slope, and this is its variance check). The p-value and
    its permutation version assume independence; uncorrelated but dependent variables whose
    spread grows with the other's distance from its mean (y = x e) make the variance of r larger
    than 1/n, and the test anti-conservative. Residuals, not the centred values: a real
    correlation makes the squares of the two variables correlated (bivariate normal: rho^2), and
    a check on them would withhold the discoveries themselves."""
    a, b = _unit_scale(a), _unit_scale(b)
    a, b = a - a.mean(), b - b.mean()
    aa = float(a @ a)
    resid = b - (float(a @ b) / aa) * a if aa > 0 else b  # b's least-squares residual on a
    fires, how = koenker_fires(a * a, resid * resid)
    if not fires:
        return ""
    return check_note("the spread of the second variable grows with the first's distance from its mean, a "
                      "dependence that a zero correlation allows", f"studentised Breusch-Pagan, {how}", model=True,
                      permutation=True, fix="these tests assume independence")
