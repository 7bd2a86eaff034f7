r"""Selective estimation of the means selected from a Gaussian sample ("many means").

Reid, Taylor and Tibshirani (2017), "Post-selection point and interval estimation of signal
sizes in Gaussian samples", Canad. J. Statist. 45(2), 128-148 (arXiv:1405.3340). Observations
:math:`y_i \sim N(\mu_i, \sigma^2)` independent; the selection (the k largest :math:`|y_i|`,
or the Benjamini-Hochberg rejections at level q) keeps :math:`y_i` exactly when
:math:`|y_i| \ge c`, where, given the other observations, the threshold :math:`c` is fixed
(Section 2-3 there). Each selected :math:`y_i` is then normal truncated to
:math:`(-\infty, -c] \cup [c, \infty)`; the estimate is the conditional MLE (solving
:math:`E_\mu[Y \mid |Y| \ge c] = y_i`), the interval inverts the truncated CDF and the
p-value for :math:`\mu_i = 0` is :math:`\bar\Phi(|y_i|/\sigma)/\bar\Phi(c/\sigma)`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._checks import check_alpha, check_int, check_scale, check_vector
from ._truncnorm import log_normal_mass
from .results import ManyMeansResult, _ro

__all__ = ["many_means"]


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SPAN = 10_000.0       # every root is searched in [-_SPAN, _SPAN] (standardised scale)
_MAX_ITER = 200
_NEWTON_DONE = 1e-9  # relative size of a final Newton step
_MAX_STEP = 4.0


def _log_phi(x):
    return -0.5 * x * x - _LOG_SQRT_2PI


def _log_denominator(mu, c):
    """log P_mu(|Y| >= c), Y ~ N(mu, 1) (vectorised in mu)."""
    return np.logaddexp(special.log_ndtr(-c - mu), special.log_ndtr(mu - c))


def _mean_gap(mu, z, c):
    """E_mu[Y | |Y| >= c] - z and its derivative Var_mu(Y | |Y| >= c) (positive).

    With D = P_mu(|Y| >= c): E[Y - mu | .] = (phi(c - mu) - phi(c + mu)) / D and
    E[(Y - mu)^2 | .] = 1 + ((c - mu) phi(c - mu) + (c + mu) phi(c + mu)) / D (moments of a
    normal restricted to a union of two half-lines).
    """
    ld = _log_denominator(mu, c)
    r_hi = np.exp(_log_phi(c - mu) - ld)
    r_lo = np.exp(_log_phi(c + mu) - ld)
    m1 = r_hi - r_lo
    m2 = 1.0 + (c - mu) * r_hi + (c + mu) * r_lo
    return mu + m1 - z, m2 - m1 * m1


def _log_sf_gap(mu, z, c, level):
    """log P_mu(Y >= z | |Y| >= c) - log(level) for z >= c, and its derivative in mu.

    d/dmu log P_mu(Y >= z) = phi(z - mu) / Phi-bar(z - mu) and d/dmu log D = E[Y - mu | .].
    """
    ld = _log_denominator(mu, c)
    num = special.log_ndtr(mu - z)
    mills = np.exp(_log_phi(z - mu) - num)
    m1 = np.exp(_log_phi(c - mu) - ld) - np.exp(_log_phi(c + mu) - ld)
    return num - ld - level, mills - m1


def _log_cdf_gap(mu, z, c, level):
    """log P_mu(Y <= z | |Y| >= c) - log(level) for z >= c, and its derivative in mu.

    The event is (-inf, -c] u [c, z]; d/dmu of its log mass is
    (phi(c - mu) - phi(z - mu) - phi(c + mu)) / mass.
    """
    ld = _log_denominator(mu, c)
    num = np.logaddexp(special.log_ndtr(-c - mu), log_normal_mass(c - mu, z - mu))
    d_num = (np.exp(_log_phi(c - mu) - num) - np.exp(_log_phi(z - mu) - num)
             - np.exp(_log_phi(c + mu) - num))
    m1 = np.exp(_log_phi(c - mu) - ld) - np.exp(_log_phi(c + mu) - ld)
    return num - ld - level, d_num - m1


def _solve(gap, x0, sign=1.0):
    """Roots of ``sign * gap(mu)[0]``, increasing in mu, one per entry of ``x0``.

    Safeguarded Newton, vectorised over the entries (Press et al., Numerical Recipes, 3rd ed.,
    Section 9.4, ``rtsafe``): a Newton step, shortened to at most a limit (``_MAX_STEP``,
    doubled each time it binds), is taken when it stays inside the current bracket, and
    otherwise the bracket is bisected; the bracket starts as [-_SPAN, _SPAN] and shrinks around
    the sign changes seen. A Newton step of relative size below ``_NEWTON_DONE`` is the last
    one: the error after it is of the order of the step squared (quadratic convergence), far
    below rounding, so the roots are as accurate as the function values. The iteration also
    ends at an exact zero or when the bracket is two units in the last place wide. A root
    beyond the search range (never for the estimate; an interval end more than ``_SPAN`` sd
    away) is returned as -inf or +inf.
    """
    lo = np.full(x0.shape, -_SPAN)
    hi = np.full(x0.shape, _SPAN)
    x = np.clip(x0.astype(float), -_SPAN, _SPAN)
    limit = np.full(x.shape, _MAX_STEP)
    every = np.arange(x.size)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # a root outside [-_SPAN, _SPAN] is reported as -inf / +inf
        below_range = sign * gap(lo, every)[0] > 0
        above_range = sign * gap(hi, every)[0] < 0
        x[below_range] = -np.inf
        x[above_range] = np.inf
        active = ~(below_range | above_range)
        for _ in range(_MAX_ITER):
            idx = np.nonzero(active)[0]
            if idx.size == 0:
                break
            xa = x[idx]
            f, fp = gap(xa, idx)
            f, fp = sign * f, sign * fp
            below = f < 0
            lo[idx] = np.where(below, xa, lo[idx])
            hi[idx] = np.where(below, hi[idx], xa)
            step = f / fp
            newton = np.isfinite(step) & (fp > 0)
            # damped: at most `limit` per iteration, a limit that doubles each time it binds (the
            # functions are flat far from the roots, where a full Newton step overshoots, and
            # some roots lie thousands of units away)
            lim = limit[idx]
            clipped = ~newton | (np.abs(step) >= lim)
            step = np.where(newton, np.clip(step, -lim, lim), lim * np.sign(f))
            limit[idx] = np.where(clipped, 2 * lim, lim)
            new = xa - step
            scale = np.maximum(np.abs(xa), 1.0)
            final = newton & ~clipped & (np.abs(step) <= _NEWTON_DONE * scale)
            inside = (new > lo[idx]) & (new < hi[idx])
            new = np.where(inside | final, new, 0.5 * (lo[idx] + hi[idx]))
            done = (f == 0) | final | (hi[idx] - lo[idx] <= 2 * np.finfo(float).eps * scale)
            x[idx] = np.where(f == 0, xa, new)
            active[idx[done]] = False
    return x


def many_means(y, *, alpha: float = 0.1, bh_q: float | None = None, k: int | None = None,
               sigma: float = 1.0) -> ManyMeansResult:
    r"""Selective p-values, estimates and intervals for means selected by BH or top-k.

    Parameters
    ----------
    y : array_like (n,)
        Independent observations :math:`y_i \sim N(\mu_i, \sigma^2)`.
    alpha : float
        Intervals have coverage 1 - alpha.
    bh_q : float, optional
        Select the Benjamini-Hochberg rejections at level ``bh_q`` (two-sided z-tests of
        :math:`\mu_i = 0`). Exactly one of ``bh_q`` and ``k`` must be given.
    k : int, optional
        Select the ``k`` largest :math:`|y_i|`.
    sigma : float
        Known noise standard deviation.

    Returns
    -------
    ManyMeansResult
        ``selected`` (0-based, increasing), ``mu_hat`` (conditional MLE), ``pvalue``,
        ``ci``, ``threshold`` c (top-k: the (k+1)-th largest :math:`|y_i|`; BH:
        :math:`\sigma\bar\Phi^{-1}(qR/(2n))` with R rejections).

    Notes
    -----
    Reid, Taylor and Tibshirani (2017), Sections 2-4. The roots (estimate and interval ends) are
    found for all selected means at once by safeguarded Newton iterations on log-tail formulas,
    to the accuracy of the function values, so estimates far above the threshold stay
    accurate. A negative observation is handled as the mirror image of its absolute value (the
    selection event is symmetric). R's ``manyMeans`` uses ``uniroot``'s default tolerance
    (about 1e-4).

    Two defects of R selectiveInference 1.2.5's ``manyMeans`` (checked against it): with
    ``bh.q`` it conditions on :math:`|y_i| \ge \sigma\bar\Phi^{-1}(R/(2n))`, without ``q``,
    so its p-values are exactly ``q`` times too small and its estimates and intervals belong
    to the wrong event; and for ``sigma`` other than 1 its truncated mean lacks a factor
    :math:`\sigma^2` in the correction term, so its estimates (not its p-values or intervals)
    are wrong. This function uses the correct threshold and mean.
    """
    y = check_vector("y", y)
    n = y.size
    alpha = check_alpha(alpha)
    sigma = check_scale("sigma", sigma)
    if (bh_q is None) == (k is None):
        raise ValueError(f"Exactly one of `bh_q` and `k` must be given; got bh_q={bh_q!r}, k={k!r}.")
    z = y / sigma
    az = np.abs(z)
    if k is not None:
        k = check_int("k", k, low=1, high=n - 1)
        order = np.argsort(-az, kind="stable")
        sel = np.sort(order[:k])
        c = float(az[order[k]])
        method = "top-K"
    else:
        bh_q = float(check_alpha(bh_q, "bh_q"))
        pv = 2 * special.ndtr(-az)
        order = np.argsort(pv, kind="stable")
        ok = np.nonzero(pv[order] <= bh_q * np.arange(1, n + 1) / n)[0]
        R = int(ok[-1] + 1) if ok.size else 0
        if R == 0:
            raise ValueError(f"Benjamini-Hochberg at bh_q={bh_q} selects no mean; nothing to "
                             "estimate.")
        sel = np.sort(order[:R])
        c = float(-special.ndtri(bh_q * R / (2 * n)))
        method = f"BH({bh_q:g})"
    # reflection: for y_i < 0 everything is the mirror image of the same problem at |y_i|
    # (the selection event |Y| >= c is symmetric), so the roots are found for |z_i| >= c only
    zs = z[sel]
    za = np.abs(zs)
    flip = np.where(zs < 0, -1.0, 1.0)
    pvals = np.exp(special.log_ndtr(-za) - special.log_ndtr(-c))
    la = math.log(alpha / 2)
    mu_a = _solve(lambda mu, i: _mean_gap(mu, za[i], c), za)
    # P_mu(Y >= y | .) increases in mu: the lower end is where it is alpha/2; the upper end
    # where P_mu(Y <= y | .) (decreasing in mu) is alpha/2
    low_a = _solve(lambda mu, i: _log_sf_gap(mu, za[i], c, la), za - 2.0)
    high_a = _solve(lambda mu, i: _log_cdf_gap(mu, za[i], c, la), za + 2.0, sign=-1.0)
    mu_hat = flip * mu_a
    ci = np.column_stack([np.where(flip > 0, low_a, -high_a), np.where(flip > 0, high_a, -low_a)])
    full = np.zeros(n)
    full[sel] = mu_hat * sigma
    return ManyMeansResult(method=method, selected=_ro(sel, int), observed=_ro(y[sel]),
                           mu_hat=_ro(mu_hat * sigma), pvalue=_ro(pvals), ci=_ro(ci * sigma),
                           threshold=c * sigma, sigma=sigma, alpha=alpha, bh_q=bh_q, k=k,
                           mu_hat_full=_ro(full))
