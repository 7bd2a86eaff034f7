r"""Where a naive p-value is trusted: the rules behind ``TestResult.trusted_level``.

A p-value :math:`p` is *trusted at level* :math:`u` when its rejection rate under the null,
:math:`P(p \le u)`, is at most :math:`u` (exact, exact-under-model and permutation p-values,
under their stated assumptions) or at most :math:`(1 + \tau)\,u` with :math:`\tau` =
:data:`RATE_TOLERANCE` = 0.1 (asymptotic p-values): Bradley's stringent criterion of
robustness, J. V. Bradley, "Robustness?", Br. J. Math. Stat. Psychol. 31 (1978), pp. 144-152,
one-sided since only excess rejections harm. ``trusted_level`` is the smallest :math:`u_0`
such that the p-value is trusted at every :math:`u \ge u_0`. The corrections of
:mod:`selective.corrections` compare a naive p-value with a threshold :math:`\gamma` that is
often :math:`10^{-4}` to :math:`10^{-7}`, where normal and chi-square references fail first
(docs/THEORY.md, pitfall 9 and Section 7.1).

Four rules, each conservative in the direction that matters:

1. **Exact size of a discrete test** (:func:`discrete_trusted_level`). When the null
   distribution of the data is known (one proportion: Binomial(n, p0)) or known conditionally
   on statistics that are sufficient for the nuisance parameter (two proportions and 2x2
   tables: the hypergeometric law of one cell given the margins), the rejection rate of the
   z / chi-square p-value is computed exactly at every attainable p-value. The conditional
   version is enough for the unconditional claim: if :math:`P(p \le u \mid m) \le 1.1u` for
   every margin :math:`m` at which the p-value is used, averaging over :math:`m` keeps it.

2. **First-order Edgeworth bound for studentised statistics** (:func:`studentised_trusted_level`).
   For a studentised sum whose numerator has skewness :math:`\gamma` (of the sum, e.g.
   :math:`\gamma_1/\sqrt n` for a mean), :math:`P(T \le x) = \Phi(x) + \tfrac{\gamma}{6}
   (2x^2 + 1)\varphi(x) + O(n^{-1})` (P. Hall, *The Bootstrap and Edgeworth Expansion*,
   Springer 1992, Chapter 2; the same polynomial holds for the Wald statistic of a
   one-parameter canonical exponential family, whose variance estimate moves with the
   numerator as :math:`s^2` does with a mean, and is used for GLM coefficients as an
   approximation). Relative to the tail :math:`q` that is the error
   :math:`\tfrac{|\gamma|}{6}(2x^2+1)\varphi(x)/q`; the rule doubles it
   (:data:`EDGEWORTH_SAFETY`) for the omitted higher-order terms, and charges it to each
   tail of a two-sided test (the first-order terms of the two tails cancel, but not beyond
   the region where the expansion holds; a two-sided GLM interval uses the second-order rule
   :func:`glm_interval_trusted_level`). Where the reference itself differs from the exact
   normal-model law (a z reference for a studentised mean, whose normal-model law is
   :math:`t_{n-1}`), that ratio is computed exactly and multiplies.

3. **Edgeworth bound for a permutation-null statistic** (:func:`spearman_trusted_level`): the
   t approximation of Spearman's test against the permutation law of the ranks, through the
   exact permutation skewness and kurtosis of a correlation (E. J. G. Pitman, "Significance
   tests which may be applied to samples from any populations. II. The correlation
   coefficient test", Suppl. J. R. Stat. Soc. 4 (1937), pp. 225-232), doubled likewise.

4. **Monte Carlo certificate** (:func:`certified_trusted_level`): for r x c tables (more
   than one degree of freedom), :data:`CERTIFICATE_DRAWS` tables drawn from the exact
   conditional law given the margins (Patefield's algorithm), a Clopper-Pearson upper bound
   at simultaneous confidence :math:`1 -` :data:`CERTIFICATE_ERROR` on the rejection rate at
   every level of a fine grid (it cannot certify below about 0.025). The draws use a seed
   derived from the margins, so the same table always gets the same ``trusted_level``.

Trusted levels of rules 2-4 are points of :data:`LEVEL_GRID` (16 per decade, 1 down to
:math:`10^{-15}`); an asymptotic p-value is never trusted below :math:`10^{-15}`.
"""

from __future__ import annotations

import functools
import hashlib
import math

import numpy as np
import scipy.special
import scipy.stats

from ._glm_shape import score_shape

__all__ = ["RATE_TOLERANCE", "EDGEWORTH_SAFETY", "LEVEL_GRID", "discrete_trusted_level", "studentised_trusted_level",
           "spearman_trusted_level", "permutation_rule", "certified_trusted_level", "skewness_bound",
           "studentised_mean_skewness", "welch_skewness", "pitman_moments"]

#: Allowed relative excess of an asymptotic p-value's rejection rate (Bradley 1978, stringent).
RATE_TOLERANCE = 0.1
#: Factor on the first-order Edgeworth error, for the terms the expansion omits.
EDGEWORTH_SAFETY = 2.0
#: Levels at which rules 2-4 are checked: 1, 10^(-1/16), ..., 1e-15 (descending).
LEVEL_GRID = 10.0 ** (-np.arange(0, 16 * 15 + 1) / 16.0)
#: Standard errors added to a sample skewness to bound the population one.
SKEWNESS_MARGIN = 1.0
#: Smallest n for which the Spearman rule is used (below it the t approximation is not trusted).
SPEARMAN_MIN_N = 10
#: Tables drawn by the Monte Carlo certificate, and its simultaneous error probability.
CERTIFICATE_DRAWS = 200_000
CERTIFICATE_ERROR = 1e-3
_LOG_TOLERANCE = math.log1p(RATE_TOLERANCE)


def _tail(alternative: str, levels: np.ndarray = LEVEL_GRID) -> tuple[np.ndarray, np.ndarray]:
    """Tail probability of each level (half of it when two-sided) and its normal quantile."""
    q = levels / 2.0 if alternative == "two-sided" else np.minimum(levels, 0.999)  # level 1 is trusted anyway
    return q, scipy.stats.norm.isf(q)


def _mills(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """phi(x) / q, with q the upper normal tail at x."""
    return np.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi)) / q


def grid_trusted_level(ok: np.ndarray) -> np.ndarray:
    """Smallest grid level at which ``ok`` holds and holds at every larger grid level.

    ``ok`` has shape ``(..., len(LEVEL_GRID))`` (levels descending). Level 1 is always trusted.
    """
    ok = np.array(ok, dtype=bool, copy=True)
    ok[..., 0] = True
    first_bad = np.where(ok.all(axis=-1), ok.shape[-1], np.argmin(ok, axis=-1))
    return LEVEL_GRID[first_bad - 1]


# ---------------------------------------------------------------- rule 1: exact size


def discrete_trusted_level(log_pvalues: np.ndarray, log_probs: np.ndarray) -> float:
    """Smallest level from which a discrete test's exact rejection rate stays within tolerance.

    Parameters
    ----------
    log_pvalues : array
        Log p-value of each possible outcome (NaN: the test gives no p-value there and does
        not reject).
    log_probs : array
        Log null probability of each outcome.

    Returns
    -------
    float
        :math:`u_0` such that :math:`P(p \\le u) \\le 1.1\\,u` for every :math:`u \\ge u_0`;
        0.0 when that holds at every level.

    Notes
    -----
    :math:`P(p \\le u)` is a step function of :math:`u` that jumps at attainable p-values, so
    :math:`P(p \\le u)/u` peaks there. If :math:`p_v` is the largest attainable p-value where
    the ratio exceeds 1.1, the ratio stays above 1.1 on :math:`[p_v, P(p \\le p_v)/1.1)` and
    below it from :math:`P(p \\le p_v)/1.1` on. P-values within a relative 1e-9 of each other
    count as tied, and a tie group is charged at its smallest member.
    """
    log_p = np.asarray(log_pvalues, dtype=float)
    log_w = np.asarray(log_probs, dtype=float)
    keep = ~np.isnan(log_p) & (log_w > -np.inf)
    log_p, log_w = log_p[keep], log_w[keep]
    if log_p.size == 0:
        return 0.0
    order = np.argsort(log_p, kind="stable")
    log_p, log_w = log_p[order], log_w[order]
    log_size = np.logaddexp.accumulate(log_w)
    last = np.append(np.diff(log_p) > 1e-9, True)  # last member of each tie group
    first = np.insert(last[:-1], 0, True)
    group_p = log_p[first]
    group_size = log_size[last]
    bad = group_size - group_p > _LOG_TOLERANCE
    if not bad.any():
        return 0.0
    v = np.flatnonzero(bad)[-1]
    return float(min(1.0, math.exp(group_size[v] - _LOG_TOLERANCE)))


# ---------------------------------------------------------------- rule 2: studentised statistics


def studentised_trusted_level(
    skewness: np.ndarray | float, *, alternative: str, reference_ratio: np.ndarray | float = 1.0
) -> np.ndarray | float:
    """Trusted level of a studentised statistic from the skewness of its numerator.

    Parameters
    ----------
    skewness : float or array
        Bound on :math:`|\\gamma|`, the skewness of the numerator sum (for a mean of n
        observations with skewness :math:`\\gamma_1`: :math:`\\gamma_1/\\sqrt n`). Arrays give
        one trusted level per entry (vectorised over replications).
    alternative : {"two-sided", "less", "greater"}
    reference_ratio : float or array
        Normal-model rejection rate of the reference used divided by the level, on
        :data:`LEVEL_GRID` (shape ``(len(LEVEL_GRID),)`` or ``skewness.shape + (len(LEVEL_GRID),)``);
        1 when the reference is exact under the normal model.

    Returns
    -------
    float or array
        A point of :data:`LEVEL_GRID`.
    """
    q, x = _tail(alternative)
    g = np.abs(np.asarray(skewness, dtype=float))[..., None]
    rel = EDGEWORTH_SAFETY * g * (2.0 * x * x + 1.0) / 6.0 * _mills(x, q)
    ok = np.asarray(reference_ratio) * (1.0 + np.nan_to_num(rel, nan=np.inf)) <= 1.0 + RATE_TOLERANCE
    out = grid_trusted_level(ok)
    return float(out) if np.ndim(out) == 0 else out


def t_reference_ratio(df: np.ndarray | float, *, alternative: str) -> np.ndarray:
    """Rejection rate of a normal reference for a statistic whose law is t(df), over the level.

    Exact under the normal model: :math:`P(|t_{df}| > z_{u/2}) / u` (one-sided: one tail).
    """
    q, x = _tail(alternative)
    d = np.asarray(df, dtype=float)[..., None]
    return scipy.stats.t.sf(x, d) / q


def skewness_bound(g1: np.ndarray | float, n: np.ndarray | float) -> np.ndarray:
    """Upper bound :math:`|G_1| + \\mathrm{SE}(n)` on a population skewness (:data:`SKEWNESS_MARGIN`).

    :math:`G_1` is the adjusted sample skewness and
    :math:`\\mathrm{SE}(n) = \\sqrt{6n(n-1)/((n-2)(n+1)(n+3))}` its standard error under
    normality; the margin guards against a skewness that the sample happens to hide. Heavy
    tails hide more: docs/calibration.md shows the lognormal case.
    """
    n = np.asarray(n, dtype=float)
    se = np.sqrt(6.0 * n * (n - 1.0) / ((n - 2.0) * (n + 1.0) * (n + 3.0)))
    return np.abs(np.nan_to_num(np.asarray(g1, dtype=float), nan=0.0)) + SKEWNESS_MARGIN * se


def adjusted_skewness(x: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted sample skewness :math:`G_1` and standard deviation (ddof=1) along ``axis``.

    A constant sample has skewness 0 (and standard deviation 0).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[axis]
    d = x - x.mean(axis=axis, keepdims=True)
    m2 = (d * d).mean(axis=axis)
    m3 = (d * d * d).mean(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        g1 = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0)
    g1 = g1 * math.sqrt(n * (n - 1.0)) / (n - 2.0) if n > 2 else np.full_like(g1, np.nan)
    return g1, np.sqrt(m2 * n / (n - 1.0))


def studentised_mean_skewness(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Bound on the skewness of the mean of ``x``: :func:`skewness_bound` over :math:`\\sqrt n`."""
    n = np.asarray(x).shape[axis]
    if n < 3:
        return np.full(np.delete(np.asarray(x).shape, axis), np.inf)
    g1, _ = adjusted_skewness(x, axis)
    return skewness_bound(g1, n) / math.sqrt(n)


def welch_skewness(x1: np.ndarray, x2: np.ndarray, axis: int = -1) -> np.ndarray:
    """Bound on the skewness of :math:`\\bar x_1 - \\bar x_2` over its standard deviation.

    :math:`(b_1/n_1^2 + b_2/n_2^2)/\\tau^3` with :math:`b_k = \\text{skewness bound}_k\\,s_k^3`
    and :math:`\\tau^2 = s_1^2/n_1 + s_2^2/n_2`: the third cumulant of the difference is
    :math:`\\mu_{3,1}/n_1^2 - \\mu_{3,2}/n_2^2`, bounded without counting on cancellation.
    """
    n1, n2 = np.asarray(x1).shape[axis], np.asarray(x2).shape[axis]
    if min(n1, n2) < 3:
        return np.full(np.delete(np.asarray(x1).shape, axis), np.inf)
    g1, s1 = adjusted_skewness(x1, axis)
    g2, s2 = adjusted_skewness(x2, axis)
    b1 = skewness_bound(g1, n1) * s1**3
    b2 = skewness_bound(g2, n2) * s2**3
    tau = np.sqrt(s1**2 / n1 + s2**2 / n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (b1 / n1**2 + b2 / n2**2) / tau**3
    return np.where(tau > 0, out, np.inf)


def glm_trusted_level(exog: np.ndarray, mu: np.ndarray, columns: list[int], family: str, *, alternative: str,
                      trials: np.ndarray | None = None, details: dict | None = None, extra=0.0) -> float | np.ndarray:
    """Trusted level of a GLM Wald p-value from the shape of the tested coefficients' scores.

    For a tested column :math:`j`, :math:`\\tilde x` is :math:`x_j` minus its weighted projection
    on the other columns (weights the variance function :math:`v(\\mu)` at the means ``mu``: the
    null fit's for a p-value, the fitted ones for an interval, as ``_trust_model.fit_trust`` passes),
    and the score :math:`U = \\sum_i \\tilde x_i (y_i - \\mu_i)` has skewness
    :math:`\\gamma = \\sum \\tilde x^3 \\kappa_3 / (\\sum \\tilde x^2 v)^{3/2}` and excess kurtosis
    :math:`\\kappa = \\sum \\tilde x^4 \\kappa_4 / (\\sum \\tilde x^2 v)^2`, with the cumulants
    :math:`\\kappa_3 = \\kappa_4 = \\mu` (Poisson) or :math:`\\mu(1-\\mu)(1-2\\mu)` and
    :math:`\\mu(1-\\mu)(1-6\\mu(1-\\mu))` (Bernoulli; times ``trials`` :math:`m_i` for a count of
    :math:`m_i` trials, whose cumulants are the sums of the trials'). The relative tail error charged is
    :math:`[\\tfrac{|\\gamma|}{6}(2x^2+1) + \\tfrac{|\\kappa|}{24}|x^3-3x| + \\tfrac{\\kappa_+}{12}|x|^3 + h]
    \\,\\varphi(x)/q`, doubled (:data:`EDGEWORTH_SAFETY`), where :math:`h` is the lattice step of
    :math:`\\sum_i x_{ij} y_i` in standard units when the column's values lie on a grid (a binary or count
    covariate: the grid step over :math:`\\sqrt{\\sum \\tilde x^2 v}`, damped by the other columns as
    :func:`~selective.hypotheses._glm_shape.score_shape` says), else 0, and the
    :math:`\\kappa_+ = \\max(\\kappa, 0)` term, charged when the tested column is the only one, is the Wald
    statistic's own, :math:`W \\approx s + (\\kappa/12 - \\gamma^2/8)s^3` in the standardised score :math:`s`
    (docs/THEORY.md 7.1; with an intercept the Wald tail measured lighter). A heavy-tailed covariate, rare
    events or a coarse covariate make the level large. Joint tests take the worst column and the two-sided
    charge (a heuristic). ``details``, a dict, receives the largest :math:`|\\gamma|`, :math:`|\\kappa|`, :math:`h`.
    ``extra``, a relative excess on :data:`LEVEL_GRID` (rule 2c's), multiplies the shape's: (1 + rel)(1 + extra).
    """
    exog = np.asarray(exog, dtype=float)
    mu = np.asarray(mu, dtype=float)  # shape (n,), or (..., n) for many fits on one design
    q, x = _tail(alternative)
    mills = _mills(x, q)
    ok = np.ones(mu.shape[:-1] + LEVEL_GRID.shape, dtype=bool)
    for j in columns:
        others, var, gamma, signed, step = score_shape(exog, mu, j, family, trials)
        kappa = np.abs(signed)
        shape = (gamma / 6.0)[..., None] * (2.0 * x * x + 1.0) + (kappa / 24.0)[..., None] * np.abs(x**3 - 3.0 * x)
        if not others:  # the Wald's own s^3 term (one parameter; nuisance parameters made it conservative)
            shape = shape + (np.maximum(signed, 0.0) / 12.0)[..., None] * np.abs(x) ** 3
        rel = EDGEWORTH_SAFETY * mills * (shape + step[..., None])
        ok &= ((1.0 + np.nan_to_num(rel, nan=np.inf)) * (1.0 + extra) <= 1.0 + RATE_TOLERANCE) & (var > 0)[..., None]
        if details is not None:
            for key, value in (("skewness", gamma), ("kurtosis", kappa), ("step", step)):
                details[key] = max(details.get(key, 0.0), float(np.nan_to_num(value, nan=np.inf)))
    out = grid_trusted_level(ok)
    return float(out) if np.ndim(out) == 0 else out


def glm_interval_trusted_level(exog: np.ndarray, mu: np.ndarray, column: int, family: str, *,
                               trials: np.ndarray | None = None, extra=0.0) -> float | np.ndarray:
    """Trusted miscoverage of a GLM coefficient's two-sided Wald interval: the second-order rule 2b.

    The interval misses :math:`\\beta_j` when :math:`|W|>x` at the true means (``mu``: the fitted
    ones). Two-sided, the first-order terms of the two tails cancel (Hall 1992, Section 2.6):
    :math:`P(|s|>x)-2Q(x) = 2\\varphi(x)[\\tfrac{\\kappa}{24}(x^3-3x)+\\tfrac{\\gamma^2}{72}(x^5-10x^3+15x)]`
    for the standardised score s (:func:`~selective.hypotheses._glm_shape.score_shape`), and
    :math:`W\\approx s+(\\kappa/12-\\gamma^2/8)s^3` adds :math:`2\\varphi(x)(\\kappa/12-\\gamma^2/8)x^3`
    with one parameter. The relative error charged is :math:`[\\tfrac{|\\kappa|}{24}|x^3-3x|+
    \\tfrac{\\gamma^2}{72}|x^5-10x^3+15x|+\\tfrac{\\kappa_+}{12}x^3+h]\\varphi(x)/q` (q half the
    miscoverage, h the lattice step), doubled (:data:`EDGEWORTH_SAFETY`), whatever the other columns:
    nuisance columns add second-order terms of their own, not derived, so the rule was measured on
    such designs (docs/THEORY.md 7.1, rule 2b). One-sided intervals keep the first-order rule. ``extra``
    as for :func:`glm_trusted_level`.
    """
    mu = np.asarray(mu, dtype=float)
    q, x = _tail("two-sided")
    _, var, gamma, signed, step = score_shape(np.asarray(exog, dtype=float), mu, column, family, trials)
    g2, kap = (gamma * gamma)[..., None], signed[..., None]
    shape = (np.abs(kap) / 24.0 * np.abs(x**3 - 3.0 * x) + g2 / 72.0 * np.abs(x**5 - 10.0 * x**3 + 15.0 * x)
             + np.maximum(kap, 0.0) / 12.0 * x**3)
    rel = EDGEWORTH_SAFETY * _mills(x, q) * (shape + step[..., None])
    ok = (1.0 + np.nan_to_num(rel, nan=np.inf)) * (1.0 + extra) <= 1.0 + RATE_TOLERANCE
    out = grid_trusted_level(ok & (var > 0)[..., None])
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------- rule 3: Spearman


def pitman_moments(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Skewness and kurtosis of :math:`T = \\sum_i a_i b_{\\pi(i)}` over uniform permutations.

    Exact finite-population moments (Pitman 1937) from the power sums
    :math:`A_k = \\sum (a_i - \\bar a)^k`, :math:`B_k` likewise, by counting how the four
    indices of :math:`E T^4` coincide; ``a`` and ``b`` need n >= 4. Vectorised: ``a`` and
    ``b`` may have leading axes (the last one is the sample), and the moments broadcast.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    n = a.shape[-1]
    A2, A3, A4 = (np.sum(a**k, axis=-1) for k in (2, 3, 4))
    B2, B3, B4 = (np.sum(b**k, axis=-1) for k in (2, 3, 4))
    m2 = A2 * B2 / (n - 1)
    m3 = A3 * B3 * n / ((n - 1) * (n - 2))
    m4 = (
        A4 * B4 / n
        + 4 * A4 * B4 / (n * (n - 1))
        + 3 * (A2 * A2 - A4) * (B2 * B2 - B4) / (n * (n - 1))
        + 6 * (2 * A4 - A2 * A2) * (2 * B4 - B2 * B2) / (n * (n - 1) * (n - 2))
        + (3 * A2 * A2 - 6 * A4) * (3 * B2 * B2 - 6 * B4) / (n * (n - 1) * (n - 2) * (n - 3))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        gamma, kurt = m3 / m2**1.5, m4 / (m2 * m2)
    return (float(gamma), float(kurt)) if np.ndim(gamma) == 0 else (gamma, kurt)


def spearman_trusted_level(rank_x: np.ndarray, rank_y: np.ndarray, *, alternative: str) -> float:
    """Trusted level of Spearman's t approximation, given the two rank vectors (ties allowed).

    Under independence the ranks are exchangeable, and :math:`\\rho` has the permutation law
    of a correlation between the fixed rank vectors, with skewness :math:`\\gamma` and
    kurtosis :math:`K` from :func:`pitman_moments`. The t approximation is the law of a
    normal-theory correlation, symmetric with kurtosis :math:`3(n-1)/(n+1)`. With
    :math:`\\Delta = K - 3(n-1)/(n+1)` (for untied ranks
    :math:`36(n-2)(n-3)/(25n(n-1)(n+1))`) the Edgeworth relative tail error at the normal
    quantile :math:`x` of the tail :math:`q` is
    :math:`[\\tfrac{|\\gamma|}{6}|x^2-1| + \\tfrac{|\\Delta|}{24}|x^3-3x|]\\,\\varphi(x)/q`,
    doubled by :data:`EDGEWORTH_SAFETY`, plus the lattice term :math:`h\\,\\varphi(x)/q` (an
    atom of the discrete law at the critical value, :math:`h` the gap between attainable values
    of :math:`T` in standard units, from the gaps between midranks: :func:`_rank_step`), doubled
    too. Below ``SPEARMAN_MIN_N`` = 10 observations the
    approximation is not trusted at all (1.0). Measured (docs/calibration.md): untied n = 15,
    the t approximation rejects 1.8 times too often at 1e-4; the rule trusts it from about
    0.03 on.
    """
    a, b = np.asarray(rank_x, dtype=float), np.asarray(rank_y, dtype=float)
    return permutation_rule(a, b, _rank_step(a) * _rank_step(b), alternative=alternative, min_n=SPEARMAN_MIN_N)


def permutation_rule(a: np.ndarray, b: np.ndarray, step: float, *, alternative: str, min_n: int) -> float:
    """The rule of :func:`spearman_trusted_level` for the correlation of any two vectors: the
    normal-theory law of a correlation against the permutation law of ``a`` against ``b``,
    ``step`` the gap between attainable values of :math:`\\sum a_i b_{\\pi(i)}` (0: none).
    Fewer than ``min_n`` pairs: not trusted (1.0). Vectorised over leading axes of ``a`` and
    ``b`` (``step`` broadcasts with them)."""
    n = np.shape(a)[-1]
    if n < min_n:
        return 1.0 if np.ndim(a) + np.ndim(b) == 2 else np.ones(np.broadcast_shapes(np.shape(a), np.shape(b))[:-1])
    gamma, kurt = pitman_moments(a, b)
    delta = np.asarray(kurt) - 3.0 * (n - 1) / (n + 1)
    var_a = np.var(a, axis=-1) * n  # (callers pass values of unit scale: no square overflows)
    var_b = np.var(b, axis=-1) * n
    sd = np.sqrt(var_a * var_b / (n - 1))
    q, x = _tail(alternative)
    with np.errstate(invalid="ignore", divide="ignore"):
        shape = (np.abs(gamma)[..., None] / 6 * np.abs(x * x - 1) + np.abs(delta)[..., None] / 24 * np.abs(x**3 - 3 * x)
                 + np.asarray(step / sd)[..., None])
    rel = np.nan_to_num(EDGEWORTH_SAFETY * _mills(x, q) * shape, nan=np.inf)
    out = grid_trusted_level(1.0 + rel <= 1.0 + RATE_TOLERANCE)
    return float(out) if np.ndim(out) == 0 else out


def _rank_step(ranks: np.ndarray) -> float:
    """Greatest common divisor of the gaps between (mid)ranks: 1 without ties, coarser with
    some ties (a two-valued variable: the gap between its two midranks)."""
    doubled = np.unique(np.round(2.0 * np.asarray(ranks)).astype(np.int64))
    if doubled.size < 2:
        return math.inf
    return float(np.gcd.reduce(np.diff(doubled))) / 2.0


# ---------------------------------------------------------------- rule 4: Monte Carlo certificate


def margin_seed(*arrays: np.ndarray) -> int:
    """A seed fixed by the given integer arrays (the margins of a table)."""
    h = hashlib.sha256()
    for arr in arrays:
        h.update(np.asarray(arr, dtype=np.int64).tobytes())
        h.update(b"|")
    return int.from_bytes(h.digest()[:8], "little")


#: Fine grid (64 per decade) used by the certificate; the step bounds the rate between points.
_FINE_GRID = 10.0 ** (-np.arange(0, 64 * 15 + 1) / 64.0)


def certified_trusted_level(null_pvalues: np.ndarray) -> float:
    """Trusted level certified by Monte Carlo draws of the p-value under the exact null.

    For each point :math:`u_k` of a grid with 64 points per decade, the rate on
    :math:`[u_k, u_{k-1}]` is at most :math:`P(p \\le u_{k-1})`, bounded above by Clopper-Pearson
    at confidence :math:`1 - \\epsilon/K` (K the number of grid points where a bound is
    possible; :math:`\\epsilon` = :data:`CERTIFICATE_ERROR`, Bonferroni over the grid). The
    result is the smallest grid point from which every bound is at most :math:`1.1\\,u_k`.
    The bracket costs 3.7% and the simultaneous bound about :math:`4.5\\sqrt{u/B}`, so with
    B draws nothing below about :math:`5000/B` (0.025 for :data:`CERTIFICATE_DRAWS`) can be
    certified: r x c tables rely on ``run_at_level`` below that.
    """
    p = np.sort(np.asarray(null_pvalues, dtype=float))
    draws = p.size
    upper_levels = _FINE_GRID[:-1]
    levels = _FINE_GRID[1:]
    usable = levels * draws >= 1.0
    k = int(usable.sum())
    if k == 0:
        return 1.0
    counts = np.searchsorted(p, upper_levels[:k] * (1 + 1e-12), side="right")
    bound = np.where(
        counts >= draws, 1.0, scipy.stats.beta.isf(CERTIFICATE_ERROR / k, counts + 1, np.maximum(draws - counts, 1))
    )
    ok = bound <= (1.0 + RATE_TOLERANCE) * levels[:k]
    if ok.all():
        return float(levels[k - 1])
    first_bad = int(np.argmin(ok))
    return float(_FINE_GRID[first_bad])


def chi_square_statistics(tables: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Pearson's :math:`X^2` of each table in ``tables`` (shape ``(..., r, c)``)."""
    return np.sum((tables - expected) ** 2 / expected, axis=(-2, -1))


def chi_square_table_trusted_level(table: np.ndarray) -> float:
    """Trusted level of the chi-square p-value of an r x c table (rule 4; 2x2: rule 1).

    It depends on the margins only (cached).
    """
    table = np.asarray(table)
    rows, cols = table.sum(axis=1).astype(np.int64), table.sum(axis=0).astype(np.int64)
    if table.shape == (2, 2):
        return two_proportion_trusted_level(int(rows[0]), int(rows[1]), int(cols[0]), alternative="two-sided")
    return _margins_trusted_level(tuple(int(r) for r in rows), tuple(int(c) for c in cols))


@functools.lru_cache(maxsize=256)
def _margins_trusted_level(rows: tuple[int, ...], cols: tuple[int, ...]) -> float:
    rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    expected = np.outer(rows, cols) / rows.sum()
    df = (len(rows) - 1) * (len(cols) - 1)
    rng = np.random.default_rng(margin_seed(rows, cols))
    draws = scipy.stats.random_table(rows, cols).rvs(size=CERTIFICATE_DRAWS, random_state=rng)
    stats = chi_square_statistics(draws, expected)
    return certified_trusted_level(scipy.stats.chi2.sf(stats, df))


# ---------------------------------------------------------------- proportions (rule 1)


def _normal_log_pvalue(z: np.ndarray, alternative: str) -> np.ndarray:
    if alternative == "two-sided":
        return np.minimum(math.log(2.0) + scipy.stats.norm.logsf(np.abs(z)), 0.0)
    if alternative == "greater":
        return scipy.stats.norm.logsf(z)
    return scipy.stats.norm.logcdf(z)


def one_proportion_trusted_level(nobs: int, value: float, *, alternative: str, variance: str) -> float:
    """Exact trusted level of the one-sample proportion z-test under Binomial(nobs, value)."""
    k = np.arange(nobs + 1, dtype=float)
    phat = k / nobs
    if variance == "null":
        se = math.sqrt(value * (1.0 - value) / nobs)
    else:
        se = np.sqrt(phat * (1.0 - phat) / nobs)
        se = np.where(se > 0, se, np.nan)  # 0 or nobs successes: the Wald test refuses to run
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (phat - value) / se
    log_p = _normal_log_pvalue(z, alternative)
    return discrete_trusted_level(log_p, scipy.stats.binom.logpmf(k, nobs, value))


def two_proportion_trusted_level(n1: int, n2: int, successes: int, *, alternative: str) -> float:
    """Exact conditional trusted level of the pooled two-proportion z-test (and of the 2x2
    chi-square test, its square), given the group sizes and the total number of successes.

    Given the margins, the first group's count is hypergeometric whatever the common
    proportion; a total of 0 or of all rows makes the test undefined (trusted at every level:
    it never runs).
    """
    total = n1 + n2
    if successes in (0, total):
        return 0.0
    x1 = np.arange(max(0, successes - n2), min(n1, successes) + 1, dtype=float)
    pooled = successes / total
    se = math.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2))
    z = (x1 / n1 - (successes - x1) / n2) / se
    log_w = scipy.stats.hypergeom.logpmf(x1, total, successes, n1)
    return discrete_trusted_level(_normal_log_pvalue(z, alternative), log_w)


def chi2_vs_f_trusted_level(n_terms: int, df_resid: float) -> float:
    """Trusted level of a chi-square reference for a Wald statistic whose normal-model law is
    ``n_terms`` times F(n_terms, df_resid): the exact ratio :math:`P(qF > c_u)/u` on the grid."""
    c = scipy.stats.chi2.isf(LEVEL_GRID, n_terms)
    ratio = scipy.stats.f.sf(c / n_terms, n_terms, df_resid) / LEVEL_GRID
    return float(grid_trusted_level(ratio <= 1.0 + RATE_TOLERANCE))


def log_comb(n: int, k: int) -> float:
    """log C(n, k)."""
    return float(scipy.special.gammaln(n + 1) - scipy.special.gammaln(k + 1) - scipy.special.gammaln(n - k + 1))
