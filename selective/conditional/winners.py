r"""Inference on winners: conditional and hybrid inference for the top-ranked of several estimates.

I. Andrews, T. Kitagawa and A. McCloskey, "Inference on winners", Quarterly Journal of Economics
139(1), 2024, 305-358 (AKM below): conditional inference (their Section 3) and hybrid inference
(Section 4). The formulas below are written out here, with the validity argument for the
Bonferroni projection that this module uses instead of AKM's exact quantile.

Setting: a vector of estimates :math:`X \sim N(\mu, \Sigma)` with :math:`\Sigma` known (or
consistently estimated: then every guarantee below is asymptotic), and the candidates with the
largest values (``by="value"``) or largest absolute values (``by="abs"``) are selected. For a
selected candidate :math:`j` the target is :math:`\mu_j`.

**Conditional inference** (AKM Section 3). With :math:`c = \Sigma e_j / \Sigma_{jj}` and
:math:`Z = X - c X_j` (independent of :math:`X_j`), the event that :math:`j` sits at its observed
rank is, given :math:`Z`, a set of linear inequalities in :math:`X_j` alone, so :math:`X_j` given
the event and :math:`Z` is :math:`N(\mu_j, \Sigma_{jj})` truncated to an interval
:math:`[V^-, V^+]` (the polyhedral lemma, Lee, Sun, Sun and Taylor 2016, Lemma 5.1). The function
conditions on a refinement of "j was selected" that keeps this an interval: for
``by="value"``, which candidates lie above :math:`j` and which below; for ``by="abs"``, the same
for the absolute values plus the signs of :math:`X_j` and of the candidates above it. Conditioning
on a finer event keeps exactness (the truncated-normal pivot is uniform given every cell of the
partition, hence given their union) at some cost in power. The p-values and equal-tailed
intervals come from the truncated-normal pivot (Lee et al. 2016, Theorem 5.2) and are exact
conditionally on the selection. The median-unbiased estimate solves
:math:`P_{\mu}(X_j \ge x_j \mid \text{event}, Z) = 1/2`.

**Hybrid inference** (AKM Section 4). With :math:`\beta < \alpha` fixed in advance and
:math:`c_\beta = \Phi^{-1}(1 - \beta/(2K))` (Bonferroni over the :math:`K` candidates, so that
:math:`P(\max_i |X_i - \mu_i|/\sigma_i > c_\beta) \le \beta` under any :math:`\Sigma`; AKM use the
exact quantile of the maximum, which is smaller: Bonferroni is conservative), the hybrid test of
:math:`\mu_j = \mu_0` rejects when :math:`|x_j - \mu_0| > c_\beta \sigma_j` (the projection test)
or, otherwise, when the conditional test with the truncation interval intersected with
:math:`[\mu_0 - c_\beta\sigma_j, \mu_0 + c_\beta\sigma_j]` rejects at level
:math:`(\alpha - \beta)/(1 - \beta)`. Its p-value is :math:`p_H = \beta + (1 - \beta)\,p_{C,\beta}`
(and :math:`\beta` when the projection test rejects). Validity (the argument of AKM, in one
line): with :math:`b` the probability that the selected candidate's projection test
rejects, :math:`b \le \beta`, and :math:`P(p_H \le u) \le b + (1 - b)(u - \beta)/(1 - \beta) \le u`
for every :math:`u \ge \beta`; below :math:`\beta` it never rejects. The hybrid interval is the
set of :math:`\mu_0` in the projection interval that the hybrid test does not reject, computed on
a grid refined by bisection at its ends (or, when no grid point is accepted, around the grid's
largest p-values by bounded maximisation); the hull of that set is reported (a superset, so its
coverage is at least :math:`1 - \alpha`). The hybrid interval stays bounded when the winner
barely wins, where the conditional one can be very long (AKM Section 3.3).

Conditions: normality of :math:`X` (joint, with the covariance used), the ranking made on
:math:`X` itself with nothing else looked at, and :math:`\beta` chosen without seeing the data.
The p-values here are final p-values, used at the level the analyst chose; the conditional one is
exact at every level, the hybrid one is valid at every level but never below :math:`\beta`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.stats

from . import _truncnorm
from ._checks import check_alpha, check_alternative, check_choice, check_int
from .polyhedral import truncated_normal_interval, truncated_normal_pvalue

__all__ = ["WinnersResult", "winners_inference"]

_GRID_POINTS = 201  # hybrid interval: grid over the projection interval before bisection


@dataclass(frozen=True, slots=True, kw_only=True)
class WinnersResult:
    """Conditional and hybrid inference for the selected candidates (one row per candidate).

    Attributes
    ----------
    candidates : tuple
        Labels of the selected candidates, best first.
    rank : numpy.ndarray
        Their ranks (1 = the winner).
    estimate, sd : numpy.ndarray
        Observed estimates :math:`x_j` and standard deviations :math:`\\sqrt{\\Sigma_{jj}}`.
    vlo, vup : numpy.ndarray
        Truncation limits of :math:`X_j` given the conditioning event.
    pvalue_naive, pvalue_conditional, pvalue_hybrid : numpy.ndarray
        P-values for :math:`\\mu_j` = ``null_value`` (two-sided unless ``alternative`` says).
    ci_naive, ci_conditional, ci_hybrid, ci_projection : numpy.ndarray
        Intervals at level ``1 - alpha``, shape (k, 2).
    median_unbiased : numpy.ndarray
        The conditionally median-unbiased estimate of :math:`\\mu_j`.
    """

    __test__ = False
    candidates: tuple
    rank: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    vlo: np.ndarray
    vup: np.ndarray
    pvalue_naive: np.ndarray
    pvalue_conditional: np.ndarray
    pvalue_hybrid: np.ndarray
    ci_naive: np.ndarray
    ci_conditional: np.ndarray
    ci_hybrid: np.ndarray
    ci_projection: np.ndarray
    median_unbiased: np.ndarray
    alpha: float
    beta: float
    null_value: np.ndarray
    alternative: str
    by: str
    n_candidates: int
    method: str = field(repr=False, default="")

    def to_frame(self) -> pd.DataFrame:
        """One row per selected candidate, indexed by its label."""
        frame = pd.DataFrame({
            "rank": self.rank, "estimate": self.estimate, "sd": self.sd,
            "median_unbiased": self.median_unbiased, "vlo": self.vlo, "vup": self.vup,
            "pvalue_naive": self.pvalue_naive, "pvalue_conditional": self.pvalue_conditional,
            "pvalue_hybrid": self.pvalue_hybrid,
            "ci_naive_low": self.ci_naive[:, 0], "ci_naive_high": self.ci_naive[:, 1],
            "ci_conditional_low": self.ci_conditional[:, 0], "ci_conditional_high": self.ci_conditional[:, 1],
            "ci_hybrid_low": self.ci_hybrid[:, 0], "ci_hybrid_high": self.ci_hybrid[:, 1],
            "ci_projection_low": self.ci_projection[:, 0], "ci_projection_high": self.ci_projection[:, 1],
        }, index=pd.Index(list(self.candidates), name="candidate"))
        return frame

    def summary(self) -> str:
        """A text block: the table and what was conditioned on."""
        head = (f"Inference on winners: top {len(self.candidates)} of {self.n_candidates} by "
                f"{'|estimate|' if self.by == 'abs' else 'estimate'}; H0: mu = {_nulls(self.null_value)} "
                f"({self.alternative}); intervals at {1 - self.alpha:g}; hybrid beta = {self.beta:g}.")
        cols = ["estimate", "median_unbiased", "pvalue_naive", "pvalue_conditional", "pvalue_hybrid",
                "ci_hybrid_low", "ci_hybrid_high"]
        return head + "\n" + self.to_frame()[cols].to_string(float_format=lambda v: f"{v:.4g}")

    def __repr__(self) -> str:
        return self.summary()


def _nulls(values: np.ndarray) -> str:
    return f"{values[0]:g}" if np.all(values == values[0]) else "null_value (per candidate)"


def _check_inputs(estimates, cov, labels):
    if isinstance(estimates, pd.Series) and labels is None:
        labels = tuple(estimates.index)
    x = np.asarray(estimates, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"`estimates` must be a vector of at least 2 candidates; got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`estimates` must be finite; entry {int(np.flatnonzero(~np.isfinite(x))[0])} "
                         f"is {x[~np.isfinite(x)][0]!r}.")
    sigma = np.asarray(cov, dtype=float)
    if sigma.ndim == 1:  # standard errors of independent estimates
        if sigma.shape != x.shape or not np.all(np.isfinite(sigma) & (sigma > 0)):
            raise ValueError("`cov` given as a vector must hold one positive finite standard error per "
                             f"estimate ({x.size}); got {sigma!r}.")
        sigma = np.diag(sigma**2)
    if sigma.shape != (x.size, x.size) or not np.all(np.isfinite(sigma)):
        raise ValueError(f"`cov` must be a finite {x.size} x {x.size} covariance matrix (or a vector of "
                         f"standard errors); got shape {sigma.shape}.")
    if not np.allclose(sigma, sigma.T, rtol=1e-10, atol=0.0):
        raise ValueError("`cov` must be symmetric.")
    if not np.all(np.diag(sigma) > 0):
        raise ValueError("`cov` must have a positive diagonal (every estimate has a positive variance).")
    if labels is None:
        labels = tuple(range(x.size))
    labels = tuple(labels)
    if len(labels) != x.size or len(set(labels)) != x.size:
        raise ValueError(f"`labels` must be {x.size} distinct labels, one per estimate; got {len(labels)}.")
    return x, sigma, labels


def _limits(x: np.ndarray, sigma: np.ndarray, j: int, above: np.ndarray, by: str) -> tuple[float, float]:
    """Truncation interval of X_j given Z = X - c X_j and j's cell (see the module docstring).

    Each constraint is ``a @ X <= 0`` with ``a`` having two entries; writing
    ``X = z + c * X_j``, it reads ``(a @ c) X_j <= -(a @ z)``.
    """
    c = sigma[:, j] / sigma[j, j]
    z = x - c * x[j]
    others = np.ones(x.size, dtype=bool)
    others[j] = False
    up = above & others
    down = ~above & others
    coef, rhs = [], []  # constraints coef * X_j <= rhs

    def add(a_j, a_i, idx):  # a_j X_j + a_i X_i <= 0 for i in idx (a_i scalar or array)
        a_i = np.broadcast_to(a_i, idx.shape).astype(float)
        coef.append(a_j + a_i * c[idx])
        rhs.append(-(a_i * z[idx]) - a_j * z[j])

    iu, idn = np.flatnonzero(up), np.flatnonzero(down)
    if by == "value":
        add(1.0, -np.ones(iu.size), iu)     # X_j - X_i <= 0 for those above
        add(-1.0, np.ones(idn.size), idn)   # X_i - X_j <= 0 for those below
    else:
        s = 1.0 if x[j] >= 0 else -1.0
        su = np.where(x[iu] >= 0, 1.0, -1.0)
        add(-s, np.zeros(1), np.array([j]))  # -s X_j <= 0 (j's sign); z_j = 0 by construction
        add(0.0, -su, iu)                    # -s_i X_i <= 0 (signs of those above)
        add(s, -su, iu)                      # s X_j - s_i X_i <= 0
        add(-s, np.ones(idn.size), idn)      # X_i - s X_j <= 0
        add(-s, -np.ones(idn.size), idn)     # -X_i - s X_j <= 0
    coef = np.concatenate(coef)
    rhs = np.concatenate(rhs)
    scale = 1e-12 * (1.0 + np.abs(c).max())
    pos, neg = coef > scale, coef < -scale
    vup = float(np.min(rhs[pos] / coef[pos])) if pos.any() else math.inf
    vlo = float(np.max(rhs[neg] / coef[neg])) if neg.any() else -math.inf
    return vlo, vup


def _hybrid_pvalue(xj, sd, vlo, vup, mu0, crit, beta, alternative):
    """Hybrid p-value at each null value in ``mu0`` (vectorised)."""
    mu0 = np.asarray(mu0, dtype=float)
    lo = np.maximum(vlo, mu0 - crit * sd)
    hi = np.minimum(vup, mu0 + crit * sd)
    dev = (xj - mu0) / sd
    outside = np.abs(dev) > crit
    # one-sided: the projection test rejects only in the alternative's direction; a value
    # beyond the other end is no evidence for the alternative (p = 1; rejecting less keeps the size)
    wrong = (dev < -crit) if alternative == "greater" else (dev > crit) if alternative == "less" else False
    ok = ~outside & (lo < hi)
    pc = np.ones_like(mu0)
    if ok.any():
        with np.errstate(divide="ignore"):  # a zero-mass tail: log 0 = -inf is the right value
            pc[ok] = truncated_normal_pvalue(xj, sd=sd, vlo=lo[ok], vup=hi[ok], null_value=mu0[ok],
                                         alternative=alternative)
    return np.where(wrong, 1.0, np.where(outside, beta, beta + (1.0 - beta) * pc))


def _hybrid_interval(xj, sd, vlo, vup, crit, alpha, beta, alternative):
    """Hull of {mu0 in the projection interval : hybrid p-value > alpha}."""
    lo_p, hi_p = xj - crit * sd, xj + crit * sd
    grid = np.linspace(lo_p, hi_p, _GRID_POINTS)
    with np.errstate(divide="ignore"):
        pv = _hybrid_pvalue(xj, sd, vlo, vup, grid, crit, beta, alternative)
    accept = pv > alpha

    def gap(mu0: float) -> float:
        return float(_hybrid_pvalue(xj, sd, vlo, vup, np.array([mu0]), crit, beta, alternative)[0]) - alpha

    if not accept.any():
        # an accepted set narrower than the grid's spacing: look for it around the grid's largest
        # p-values, maximising the p-value between their neighbours (it is continuous there)
        for i in np.argsort(-pv, kind="stable")[:3]:
            a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
            best = scipy.optimize.minimize_scalar(lambda m: -gap(m), bounds=(a, b), method="bounded",
                                                  options={"xatol": 1e-10 * sd})
            if -best.fun > 0:
                m = float(best.x)
                return (scipy.optimize.brentq(gap, a, m, xtol=1e-12 * sd) if gap(a) < 0 else a,
                        scipy.optimize.brentq(gap, m, b, xtol=1e-12 * sd) if gap(b) < 0 else b)
        return math.nan, math.nan

    def edge(inside: float, outside: float) -> float:
        # the hybrid p-value is continuous inside the projection interval: a sign change between
        # two grid points brackets a root (the end of the accepted set there)
        return scipy.optimize.brentq(gap, min(inside, outside), max(inside, outside), xtol=1e-12 * sd)

    first, last = int(np.argmax(accept)), int(len(accept) - 1 - np.argmax(accept[::-1]))
    low = lo_p if first == 0 else edge(grid[first], grid[first - 1])
    high = hi_p if last == len(grid) - 1 else edge(grid[last], grid[last + 1])
    return low, high


def winners_inference(estimates, cov, *, k: int = 1, by: str = "value", labels=None,
                      alpha: float = 0.05, beta: float | None = None, null_value: float = 0.0,
                      alternative: str = "two-sided",
                      gridrange: tuple[float, float] | None = (-100.0, 100.0)) -> WinnersResult:
    r"""Conditional and hybrid inference for the ``k`` best of several normal estimates.

    Parameters
    ----------
    estimates : array_like or pandas.Series, shape (K,)
        The candidates' estimates (a Series' index gives the labels).
    cov : array_like, shape (K, K) or (K,)
        Their covariance matrix, or a vector of standard errors for independent estimates.
    k : int
        How many were selected (the ``k`` largest by ``by``), 1 <= k <= K.
    by : {"value", "abs"}
        Rank by the estimates or by their absolute values.
    labels : sequence, optional
        Candidate labels (default: the Series index or 0..K-1).
    alpha : float
        Level of the intervals (and of the hybrid construction).
    beta : float, optional
        The hybrid's projection level, ``0 < beta < alpha`` (default ``alpha / 10``, AKM's choice).
    null_value : float or array_like of shape (K,)
        The hypothesised :math:`\mu_j`: one value for every candidate, or one per candidate
        (in the order of ``estimates``).
    alternative : {"two-sided", "greater", "less"}
    gridrange : (float, float) or None
        Conditional intervals: search range in sd units (an end beyond it is reported infinite).

    Returns
    -------
    WinnersResult

    Examples
    --------
    >>> res = winners_inference([2.9, 2.5, 0.3, -1.0], [1.0, 1.0, 1.0, 1.0])
    >>> round(float(res.pvalue_naive[0]), 4), round(float(res.pvalue_conditional[0]), 4)
    (0.0037, 0.6009)
    """
    x, sigma, labels = _check_inputs(estimates, cov, labels)
    n = x.size
    k = check_int("k", k, low=1, high=n)
    by = check_choice("by", by, ("value", "abs"))
    alpha = check_alpha(alpha)
    beta = alpha / 10.0 if beta is None else float(beta)
    if not (0.0 < beta < alpha):
        raise ValueError(f"`beta` must satisfy 0 < beta < alpha = {alpha:g}; got {beta!r}.")
    alternative = check_alternative(alternative)
    nulls = np.broadcast_to(np.asarray(null_value, dtype=float), x.shape) if np.ndim(null_value) <= 1 else None
    if nulls is None or nulls.shape != x.shape or not np.all(np.isfinite(nulls)):
        raise ValueError(f"`null_value` must be a finite number or {n} finite numbers, one per candidate; "
                         f"got {null_value!r}.")
    bound = None if gridrange is None else float(max(abs(gridrange[0]), abs(gridrange[1])))

    key = x if by == "value" else np.abs(x)
    order = np.argsort(-key, kind="stable")[:k]
    sd_all = np.sqrt(np.diag(sigma))
    crit = float(scipy.stats.norm.isf(beta / (2.0 * n)))
    z_naive = float(scipy.stats.norm.isf(alpha / 2.0))
    rows = {name: np.empty(k) for name in ("sd", "vlo", "vup", "pn", "pc", "ph", "mu")}
    cis = {name: np.empty((k, 2)) for name in ("naive", "cond", "hyb", "proj")}
    for r, j in enumerate(order):
        above = key > key[j]
        xj, sd, mu0 = x[j], sd_all[j], float(nulls[j])
        vlo, vup = _limits(x, sigma, j, above, by)
        # guard against rounding: the observed value lies in its own cell
        vlo, vup = min(vlo, xj), max(vup, xj)
        rows["sd"][r], rows["vlo"][r], rows["vup"][r] = sd, vlo, vup
        if alternative == "two-sided":
            rows["pn"][r] = 2.0 * scipy.stats.norm.sf(abs(xj - mu0) / sd)
        elif alternative == "greater":
            rows["pn"][r] = scipy.stats.norm.sf((xj - mu0) / sd)
        else:
            rows["pn"][r] = scipy.stats.norm.cdf((xj - mu0) / sd)
        rows["pc"][r] = truncated_normal_pvalue(xj, sd=sd, vlo=vlo, vup=vup, null_value=mu0,
                                                alternative=alternative)
        rows["ph"][r] = _hybrid_pvalue(xj, sd, vlo, vup, np.array([mu0]), crit, beta, alternative)[0]
        rows["mu"][r] = sd * _truncnorm._solve_mu(xj / sd, vlo / sd, vup / sd, 0.5, lower_tail=False,
                                                   bound=bound)
        cis["naive"][r] = (xj - z_naive * sd, xj + z_naive * sd)
        cis["cond"][r] = truncated_normal_interval(xj, sd=sd, vlo=vlo, vup=vup, alpha=alpha, gridrange=gridrange)
        cis["hyb"][r] = _hybrid_interval(xj, sd, vlo, vup, crit, alpha, beta, "two-sided")
        cis["proj"][r] = (xj - crit * sd, xj + crit * sd)
    method = (f"winners_inference(by={by!r}, k={k}): conditional on the cell of the ranking "
              f"(Andrews, Kitagawa and McCloskey 2024); hybrid with beta = {beta:g}, Bonferroni "
              f"projection critical value {crit:.4g}")
    return WinnersResult(
        candidates=tuple(labels[j] for j in order), rank=np.arange(1, k + 1), estimate=x[order],
        sd=rows["sd"], vlo=rows["vlo"], vup=rows["vup"], pvalue_naive=rows["pn"],
        pvalue_conditional=rows["pc"], pvalue_hybrid=rows["ph"], ci_naive=cis["naive"],
        ci_conditional=cis["cond"], ci_hybrid=cis["hyb"], ci_projection=cis["proj"],
        median_unbiased=rows["mu"], alpha=alpha, beta=beta, null_value=nulls[order].copy(),
        alternative=alternative, by=by, n_candidates=n, method=method)
