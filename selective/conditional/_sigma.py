r"""The noise level of the Gaussian conditional tests: known, estimated with a valid bound, or plug-in.

The truncated-normal pivot of Lee, Sun, Sun and Taylor (2016), Theorem 5.2, is exact when
:math:`\sigma` is known. When it is not, three honest options exist:

``"interval"`` (valid, n > rank(X) + intercept)
    The lasso, forward stepwise and LAR selection events, and every tested statistic
    :math:`\eta^\top y`, depend on :math:`y` only through :math:`X^\top y`, i.e. through
    :math:`P_X y`. Under the full linear model :math:`y \sim N(X\beta, \sigma^2 I)` the
    full-model residual sum of squares :math:`\mathrm{RSS} = \|(I - P_X) y\|^2
    \sim \sigma^2\chi^2_d` (:math:`d = n - \mathrm{rank}(X) - \text{intercept}`) is independent
    of :math:`P_X y`, hence of the selection and of the conditional p-value
    :math:`p(y; \sigma)` at every :math:`\sigma`. With :math:`S` the :math:`1 - \delta`
    chi-square interval for :math:`\sigma` computed from RSS, the reported p-value is
    :math:`\min(1, \sup_{\sigma \in S} p(y; \sigma) + \delta)` and the reported interval is
    the union over :math:`\sigma \in S` of the level :math:`1 - (\alpha - \delta)` intervals.
    Conditionally on the selection, :math:`P(p_{rep} \le a) \le P(p(y;\sigma_0) \le a - \delta)
    + P(\sigma_0 \notin S) \le a` for every level :math:`a`, and the interval misses with
    probability at most :math:`(\alpha - \delta) + \delta` (docs/THEORY.md 3.7).
``"plugin"`` (approximate)
    R selectiveInference's rule: the full-model residual standard error when n >= 2p, else
    sd(y), plugged into the known-sigma formulas. Not exact (with few residual degrees of
    freedom the type I error can be several times the nominal level); always warns.
``"auto"`` (default)
    ``"interval"`` when it exists, else ``"plugin"`` with a :class:`SelectiveWarning`.

The supremum and the union are computed numerically: the p-value on a grid of
``_N_GRID_P`` points equally spaced in :math:`\log\sigma` over :math:`S`, the interval ends on
``_N_GRID_CI`` points, each refined around the best grid point by bounded Brent search.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ..exceptions import SelectiveWarning
from . import _truncnorm
from ._checks import check_alpha, check_choice

SIGMA_METHODS = ("auto", "interval", "plugin")
ONE_SIDED, TWO_SIDED = "one-sided", "two-sided"
_N_GRID_P = 41
_N_GRID_CI = 9
_DELTA_FRACTION = 0.1  # default delta = alpha / 10


@dataclass(frozen=True, slots=True)
class SigmaChoice:
    """How the noise level enters the conditional tests (see the module docstring).

    ``mode`` is ``"known"``, ``"interval"`` or ``"plugin"``; ``sigma`` the value used for the
    ``sd`` column (the given value, the point estimate or the plug-in); ``low``/``high`` the
    :math:`1 - \\delta` interval (``"interval"`` only); ``df`` the degrees of freedom of the
    estimate; ``rule`` a sentence for the result's ``sigma_rule``.
    """

    mode: str
    sigma: float
    rule: str
    low: float | None = None
    high: float | None = None
    delta: float | None = None
    df: int | None = None

    @property
    def label(self) -> str:
        return inference_label(self.mode, self.df, self.delta)


def inference_label(mode: str, df: int | None, delta: float | None) -> str:
    """Short description of the validity of a result's p-values, shown in reprs and tables."""
    if mode == "known":
        return "exact conditional (sigma known)"
    if mode == "interval":
        return (f"conditional, valid for unknown sigma (sup over a {1 - delta:.4g} interval for "
                f"sigma from {df} residual df, + delta = {delta:.3g})")
    if mode == "plugin":
        return f"approximate (plug-in sigma, {df} residual df)"
    if mode == "asymptotic":
        return "approximate (asymptotic normal one-step estimator: binomial or Cox lasso)"
    return mode


def check_sigma_delta(delta, alpha: float) -> float:
    """``delta`` in (0, alpha); None gives ``alpha / 10``."""
    if delta is None:
        return _DELTA_FRACTION * alpha
    d = check_alpha(delta, name="sigma_delta")
    if not d < alpha:
        raise ValueError(f"`sigma_delta` must be a real number in (0, alpha) = (0, {alpha:g}); "
                         f"got {delta!r}.")
    return d


def full_model_residuals(Xc: np.ndarray, yc: np.ndarray, intercept: bool) -> tuple[float, int]:
    """RSS of the least-squares fit of ``yc`` on ``Xc`` and its degrees of freedom."""
    n = Xc.shape[0]
    coef, *_ = np.linalg.lstsq(Xc, yc, rcond=None)
    rank = int(np.linalg.matrix_rank(Xc))
    rss = float(np.sum((yc - Xc @ coef) ** 2))
    return rss, n - rank - (1 if intercept else 0)


def plugin_sigma(Xc: np.ndarray, yc: np.ndarray, intercept: bool) -> tuple[float, int, str]:
    """R selectiveInference's default sigma: full-model residual SE if n >= 2p, else sd(y)."""
    n, p = Xc.shape
    if n >= 2 * p:
        coef, *_ = np.linalg.lstsq(Xc, yc, rcond=None)
        rss = float(np.sum((yc - Xc @ coef) ** 2))
        dof = n - p - (1 if intercept else 0)
        return (math.sqrt(rss / dof), dof,
                f"plug-in full-model residual standard error sqrt(RSS/(n-p{'-1' if intercept else ''})) "
                f"with n={n}, p={p} ({dof} residual df; R selectiveInference's rule)")
    return (float(np.std(yc, ddof=1)), n - 1,
            f"plug-in sd(y) (n < 2p, n={n}, p={p}), denominator n-1 ({n - 1} df; "
            "R selectiveInference's rule)")


def choose_sigma(Xc: np.ndarray, yc: np.ndarray, intercept: bool, *, sigma, method: str,
                 alpha: float, delta, interval_blocker: str | None = None,
                 stacklevel: int = 4) -> SigmaChoice:
    """Decide how sigma enters the tests (module docstring); warns for a plug-in.

    ``interval_blocker`` is a reason why the valid construction does not apply to this
    analysis (e.g. the AIC rule uses sigma in the selection), or None.
    """
    method = check_choice("sigma_method", method, SIGMA_METHODS)
    if delta is not None:
        check_sigma_delta(delta, alpha)
    if sigma is not None:
        if method == "interval":
            raise ValueError(f"`sigma_method`='interval' estimates sigma; it cannot be combined with a given "
                             f"`sigma` ({sigma!r}). Leave `sigma` None, or use sigma_method='auto'.")
        return SigmaChoice(mode="known", sigma=float(sigma), rule="supplied by the caller")
    n, p = Xc.shape
    rss, dof = full_model_residuals(Xc, yc, intercept)
    if method in ("auto", "interval") and interval_blocker is None and dof >= 1 and rss > 0:
        d = check_sigma_delta(delta, alpha)
        low = math.sqrt(rss / stats.chi2.ppf(1 - d / 2, dof))
        high = math.sqrt(rss / stats.chi2.ppf(d / 2, dof))
        est = math.sqrt(rss / dof)
        rule = (f"unknown: full-model residual standard error {est:.6g} ({dof} residual df, "
                f"n={n}, p={p}); p-values are sup over the {1 - d:.4g} chi-square interval "
                f"[{low:.6g}, {high:.6g}] plus delta = {d:.3g}, intervals the union over it "
                f"at level 1 - (alpha - delta)")
        return SigmaChoice(mode="interval", sigma=est, rule=rule, low=low, high=high, delta=d, df=dof)
    if method == "interval":
        why = interval_blocker or (
            f"the full model leaves {dof} residual df (n={n}, p={p}"
            f"{', intercept' if intercept else ''})" if dof < 1 else
            "the full model fits y exactly (RSS = 0)")
        raise ValueError(f"`sigma_method`='interval' is not available here: {why}. Supply `sigma`, "
                         "or use sigma_method='plugin' (approximate).")
    value, pdf, rule = plugin_sigma(Xc, yc, intercept)
    if method == "auto":
        why = interval_blocker or (
            f"n <= p + {1 if intercept else 0} (n={n}, p={p}): no residual degrees of freedom "
            "are left for an independent estimate of sigma" if dof < 1 else
            "the full model fits y exactly (RSS = 0)")
        lead = f"`sigma` not given and {why}; "
    else:
        lead = "sigma_method='plugin': "
    warnings.warn(
        f"{lead}using sigma = {value:.6g}, the {rule}. The p-values and "
        f"intervals are approximate (plug-in sigma, {pdf} residual df), not exact: the type I "
        "error exceeds the nominal level, by a factor of several when the residual df are few. "
        "Supply `sigma` (e.g. from a separate estimate) for exact inference.", SelectiveWarning,
        stacklevel=stacklevel)
    return SigmaChoice(mode="plugin", sigma=value, rule=rule, df=pdf)


# --------------------------------------------------------------------------------------------
# p-values and intervals for one contrast
# --------------------------------------------------------------------------------------------

def _log_pvalue(stat, sd, vlo, vup, alternative):
    z, a, b = stat / sd, vlo / sd, vup / sd
    lsf = _truncnorm.log_sf_truncated(z, a, b)
    if alternative == ONE_SIDED:
        return lsf
    lcdf = _truncnorm.log_cdf_truncated(z, a, b)
    return np.minimum(0.0, math.log(2.0) + np.minimum(lsf, lcdf))


def sup_pvalue(stat: float, sd_unit: float, vlo: float, vup: float, low: float, high: float,
               alternative: str) -> float:
    r""":math:`\sup_{\sigma\in[low, high]}` of the truncated-normal p-value of ``stat``.

    ``sd_unit`` is the standard deviation of the statistic per unit sigma
    (:math:`\|\eta\|`). Grid in :math:`\log\sigma`, then bounded Brent search in the cell
    around the best grid point.
    """
    xs = np.linspace(math.log(low), math.log(high), _N_GRID_P)
    vals = _log_pvalue(stat, np.exp(xs) * sd_unit, vlo, vup, alternative)
    if np.any(np.isnan(vals)):
        return math.nan
    i = int(np.argmax(vals))
    best = float(vals[i])
    lo_x, hi_x = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
    if hi_x > lo_x:
        res = optimize.minimize_scalar(
            lambda x: -_log_pvalue_scalar(stat, math.exp(x) * sd_unit, vlo, vup, alternative),
            bounds=(lo_x, hi_x), method="bounded", options={"xatol": 1e-5})
        best = max(best, -float(res.fun))
    return min(1.0, math.exp(best))


def _log_pvalue_scalar(stat, sd, vlo, vup, alternative) -> float:
    z, a, b = stat / sd, vlo / sd, vup / sd
    lsf = _truncnorm._log_sf_scalar(z, a, b, 0.0)
    if alternative == ONE_SIDED:
        return lsf
    return min(0.0, math.log(2.0) + min(lsf, _truncnorm._log_cdf_scalar(z, a, b, 0.0)))


def _end_at(stat, sd, vlo, vup, alpha, bound, upper: bool) -> float:
    """One end of the equal-tailed ``1 - alpha`` interval at a given sd (NaN if degenerate)."""
    z, a, b = stat / sd, vlo / sd, vup / sd
    if not (a < b) or math.isnan(z):
        return math.nan
    return sd * _truncnorm._solve_mu(z, a, b, alpha / 2, lower_tail=upper, bound=bound)


def union_interval(stat: float, sd_unit: float, vlo: float, vup: float, low: float, high: float,
                   alpha: float, bound) -> tuple[float, float]:
    """Hull of the union over sigma in [low, high] of the equal-tailed ``1 - alpha`` intervals."""
    xs = np.linspace(math.log(low), math.log(high), _N_GRID_CI)
    out = []
    for upper, sgn in ((False, 1.0), (True, -1.0)):  # minimise the low end, maximise the high end

        def f(x, upper=upper, sgn=sgn):
            return sgn * _end_at(stat, math.exp(x) * sd_unit, vlo, vup, alpha, bound, upper)

        col = np.array([f(x) for x in xs])
        if np.any(np.isnan(col)):
            return math.nan, math.nan
        if np.min(col) == -math.inf:
            out.append(-sgn * math.inf)
            continue
        i = int(np.argmin(col))
        best = float(col[i])
        lo_x, hi_x = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
        res = optimize.minimize_scalar(lambda x, f=f: max(f(x), -1e300), bounds=(lo_x, hi_x),
                                       method="bounded", options={"xatol": 1e-3})
        val = float(res.fun)
        out.append(-sgn * math.inf if val <= -1e300 else sgn * min(best, val))
    return out[0], out[1]
