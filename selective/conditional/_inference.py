"""Shared step: truncated-normal inference for a batch of contrasts on one polyhedron."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..exceptions import SelectiveWarning
from . import _truncnorm
from .polyhedral import _check_gridrange, _limits

ONE_SIDED, TWO_SIDED = "one-sided", "two-sided"


def sigma_from_rule(Xc: np.ndarray, yc: np.ndarray, intercept: bool) -> tuple[float, str]:
    """R selectiveInference's default sigma: full-model residual SE if n >= 2p, else sd(y).

    ``Xc``, ``yc`` are already centred when ``intercept`` is true; the residual degrees of
    freedom are n - p - 1 with an intercept and n - p without.
    """
    n, p = Xc.shape
    if n >= 2 * p:
        coef, *_ = np.linalg.lstsq(Xc, yc, rcond=None)
        rss = float(np.sum((yc - Xc @ coef) ** 2))
        dof = n - p - (1 if intercept else 0)
        return math.sqrt(rss / dof), (f"full-model residual standard error sqrt(RSS/(n-p{'-1' if intercept else ''})) "
                                      f"with n={n}, p={p}")
    warnings.warn(f"`sigma` not given and n < 2p (n={n}, p={p}): using sd(y) = "
                  f"{float(np.std(yc, ddof=1)):.6g}, which overstates the noise when there is "
                  "signal. Supply `sigma` (e.g. from a separate estimate).", SelectiveWarning,
                  stacklevel=3)
    return float(np.std(yc, ddof=1)), "sd(y) (n < 2p), denominator n-1"


def infer_contrasts(A, b, y, contrasts, signs, *, sigma, alpha, alternative, gridrange,
                    cov=None, check_event=True):
    """Limits, p-values, intervals and tail areas for each row of ``contrasts``.

    The tested quantity of row j is ``signs[j] * contrasts[j] @ y``; ``vlo``/``vup`` are its
    limits (as in R selectiveInference). Intervals are returned for ``contrasts[j] @ mu``
    (mirrored for negative signs). ``alternative="one-sided"`` gives
    P(T >= t | limits) for T = sign * contrast' y, the p-value of R selectiveInference.
    """
    bound = _check_gridrange(gridrange)
    k = contrasts.shape[0]
    est = np.empty(k); sd = np.empty(k); vlo = np.empty(k); vup = np.empty(k)
    pv = np.empty(k); ci = np.empty((k, 2)); tails = np.empty((k, 2))
    for j in range(k):
        eta = signs[j] * contrasts[j]
        if cov is None:
            ss = float(eta @ eta)
            c = eta / ss
            s_d = sigma * math.sqrt(ss)
        else:
            sv = cov @ eta
            ss = float(eta @ sv)
            c = sv / ss
            s_d = math.sqrt(ss)
        lim = _limits(A, b, y, eta, c, s_d)
        if check_event:
            tol = 1e-7 * max(1.0, abs(lim.statistic))
            if lim.statistic < lim.vlo - tol or lim.statistic > lim.vup + tol or lim.v0 < -tol:
                raise ValueError(
                    "The response does not satisfy the selection event's constraints "
                    f"(statistic {lim.statistic:.6g} outside [{lim.vlo:.6g}, {lim.vup:.6g}]). "
                    "The selected set or signs do not match the data; check `beta`/`lam`.")
        t = lim.statistic
        est[j] = signs[j] * t
        sd[j] = s_d
        vlo[j], vup[j] = lim.vlo, lim.vup
        pv[j], ci[j], tails[j] = pivot_summary(t, s_d, lim.vlo, lim.vup, signs[j], alpha=alpha, bound=bound,
                                               alternative=alternative)
    return dict(estimate=est, sd=sd, vlo=vlo, vup=vup, pvalue=pv, ci=ci, tailarea=tails)


def pivot_summary(stat: float, sd: float, vlo: float, vup: float, sign: float, *, alpha: float, bound,
                  alternative: str) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """p-value, interval and tail areas of one truncated-normal test of ``sign * estimate``
    (statistic ``stat`` with standard deviation ``sd`` truncated to [vlo, vup]); the interval is
    mirrored back to the estimate's scale when the sign is negative."""
    z, a, b = stat / sd, vlo / sd, vup / sd
    lsf = float(_truncnorm.log_sf_truncated(z, a, b))
    if alternative == ONE_SIDED:
        pv = math.exp(lsf)
    else:
        lcdf = float(_truncnorm.log_cdf_truncated(z, a, b))
        pv = min(1.0, 2.0 * math.exp(min(lsf, lcdf)))
    lo, hi = _truncnorm.interval_standardised(z, a, b, alpha, bound)
    lo, hi = lo * sd, hi * sd
    tl = alpha / 2 if math.isfinite(lo) else 0.0
    th = alpha / 2 if math.isfinite(hi) else 0.0
    if sign < 0:
        lo, hi, tl, th = -hi, -lo, th, tl
    return pv, (lo, hi), (tl, th)


def forward_stop(pvalues, alpha: float) -> int:
    """ForwardStop rule of G'Sell, Wager, Chouldechova and Tibshirani (2016), eq. (4).

    ``khat = max{k : -(1/k) sum_{i<=k} log(1 - p_i) <= alpha}``, 0 when no k qualifies.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return 0
    with np.errstate(divide="ignore"):
        stat = np.cumsum(-np.log1p(-p)) / np.arange(1, p.size + 1)
    ok = np.nonzero(stat <= alpha)[0]
    return int(ok[-1] + 1) if ok.size else 0
