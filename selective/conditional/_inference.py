"""Shared step: truncated-normal inference for a batch of contrasts on one polyhedron."""

from __future__ import annotations

import math

import numpy as np

from . import _truncnorm
from ._sigma import ONE_SIDED, TWO_SIDED, SigmaChoice, sup_pvalue, union_interval
from .polyhedral import _check_gridrange, _limits

__all__ = ["ONE_SIDED", "TWO_SIDED", "infer_contrasts", "pivot_summary", "summarise", "forward_stop"]


def infer_contrasts(A, b, y, contrasts, signs, *, sigma, alpha, alternative, gridrange,
                    cov=None, check_event=True, offsets=None):
    """Limits, p-values, intervals and tail areas for each row of ``contrasts``.

    ``offsets`` (optional, one per row): the estimate of row j is ``contrasts[j] @ y -
    offsets[j]`` and the null hypothesis is that its mean is 0; the tested statistic, its
    limits and the interval are shifted accordingly (the polyhedral lemma is unchanged: a
    constant shift of a Gaussian statistic shifts its truncation limits by the same constant).

    The tested quantity of row j is ``signs[j] * contrasts[j] @ y``; ``vlo``/``vup`` are its
    limits (as in R selectiveInference). Intervals are returned for ``contrasts[j] @ mu``
    (mirrored for negative signs). ``alternative="one-sided"`` gives
    P(T >= t | limits) for T = sign * contrast' y, the p-value of R selectiveInference.
    ``sigma`` is a :class:`SigmaChoice` (or a float: known sigma); with ``cov`` it is ignored.
    """
    if not isinstance(sigma, SigmaChoice):
        sigma = SigmaChoice(mode="known", sigma=float(sigma), rule="")
    bound = _check_gridrange(gridrange)
    k = contrasts.shape[0]
    est, sd, vlo, vup, pv = (np.empty(k) for _ in range(5))
    ci, tails = np.empty((k, 2)), np.empty((k, 2))
    for j in range(k):
        eta = signs[j] * contrasts[j]
        if cov is None:
            ss = float(eta @ eta)
            c = eta / ss
            s_d = sigma.sigma * math.sqrt(ss)
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
        lo_j, hi_j = lim.vlo, lim.vup
        if offsets is not None:
            shift = signs[j] * offsets[j]
            t, lo_j, hi_j = t - shift, lo_j - shift, hi_j - shift
        est[j] = signs[j] * t
        sd[j] = s_d
        vlo[j], vup[j] = lo_j, hi_j
        if cov is None:
            pv[j], ci[j], tails[j] = summarise(t, math.sqrt(ss), lo_j, hi_j, signs[j], sigma,
                                               alpha=alpha, bound=bound, alternative=alternative)
        else:
            pv[j], ci[j], tails[j] = pivot_summary(t, s_d, lo_j, hi_j, signs[j], alpha=alpha,
                                                   bound=bound, alternative=alternative)
    return dict(estimate=est, sd=sd, vlo=vlo, vup=vup, pvalue=pv, ci=ci, tailarea=tails)


def pivot_summary(stat: float, sd: float, vlo: float, vup: float, sign: float, *, alpha: float, bound,
                  alternative: str) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """p-value, interval and tail areas of one truncated-normal test of ``sign * estimate``
    (statistic ``stat`` with standard deviation ``sd`` truncated to [vlo, vup]); the interval is
    mirrored back to the estimate's scale when the sign is negative."""
    z, a, b = stat / sd, vlo / sd, vup / sd
    lsf = _truncnorm._log_sf_scalar(z, a, b, 0.0)   # scalar formulas: no array overhead
    if alternative == ONE_SIDED:
        pv = math.exp(lsf)
    else:
        lcdf = _truncnorm._log_cdf_scalar(z, a, b, 0.0)
        pv = min(1.0, 2.0 * math.exp(min(lsf, lcdf)))
    lo, hi = _truncnorm.interval_standardised(z, a, b, alpha, bound)
    lo, hi = lo * sd, hi * sd
    tl = alpha / 2 if math.isfinite(lo) else 0.0
    th = alpha / 2 if math.isfinite(hi) else 0.0
    if sign < 0:
        lo, hi, tl, th = -hi, -lo, th, tl
    return pv, (lo, hi), (tl, th)


def summarise(stat: float, sd_unit: float, vlo: float, vup: float, sign: float, choice: SigmaChoice,
              *, alpha: float, bound, alternative: str) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """p-value, interval (on the estimate's scale) and tail levels of one test under ``choice``.

    Known or plug-in sigma: :func:`pivot_summary` at ``choice.sigma``. Unknown sigma with the
    valid construction (``choice.mode == "interval"``, see :mod:`._sigma`): the p-value is
    ``min(1, sup_S p + delta)`` and the interval the union over S of the level
    ``1 - (alpha - delta)`` intervals; the tail levels are then ``(alpha - delta) / 2``.
    """
    if choice.mode != "interval":
        return pivot_summary(stat, choice.sigma * sd_unit, vlo, vup, sign, alpha=alpha, bound=bound,
                             alternative=alternative)
    d = choice.delta
    pv = min(1.0, sup_pvalue(stat, sd_unit, vlo, vup, choice.low, choice.high, alternative) + d)
    lo, hi = union_interval(stat, sd_unit, vlo, vup, choice.low, choice.high, alpha - d, bound)
    tl = (alpha - d) / 2 if math.isfinite(lo) else 0.0
    th = (alpha - d) / 2 if math.isfinite(hi) else 0.0
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
