r"""The polyhedral lemma and the truncated-normal pivot.

For :math:`y \sim N(\mu, \Sigma)` and a selection event :math:`\{A y \le b\}`, Lee, Sun, Sun and
Taylor (2016), Lemma 5.1, show that the event equals
:math:`\{V^-(z) \le \eta^\top y \le V^+(z),\ V^0(z) \ge 0\}` where
:math:`c = \Sigma\eta / (\eta^\top\Sigma\eta)` and :math:`z = y - c\,\eta^\top y` is independent
of :math:`\eta^\top y`. Theorem 5.2 there turns this into the pivot

.. math:: F^{[V^-, V^+]}_{\eta^\top\mu,\ \eta^\top\Sigma\eta}(\eta^\top y) \sim U(0, 1),

the CDF of a normal truncated to :math:`[V^-, V^+]`. This module computes the limits, the
pivot (in log space, accurate far in the tails), p-values and confidence intervals obtained by
inverting the pivot with a root finder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _truncnorm
from ._checks import check_alpha, check_alternative, check_matrix, check_vector

__all__ = [
    "TruncationLimits",
    "TruncatedNormalResult",
    "truncation_limits",
    "truncated_normal_pivot",
    "truncated_normal_pvalue",
    "truncated_normal_interval",
    "polyhedral_test",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncationLimits:
    """Limits :math:`[V^-, V^+]` of :math:`\\eta^\\top y` on the polyhedron, Lee et al. Lemma 5.1."""

    statistic: float
    sd: float
    vlo: float
    vup: float
    v0: float  # min slack of the rows orthogonal to eta; >= 0 when y is in the polyhedron

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"statistic": self.statistic, "sd": self.sd, "vlo": self.vlo,
                              "vup": self.vup, "v0": self.v0}])


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncatedNormalResult:
    """One truncated-normal test: p-value and equal-tailed interval by pivot inversion."""

    __test__ = False
    statistic: float
    sd: float
    vlo: float
    vup: float
    null_value: float
    alternative: str
    pvalue: float
    ci: tuple[float, float]
    tailarea: tuple[float, float]
    alpha: float
    method: str = field(repr=False, default="truncated-normal pivot, Lee et al. (2016) Thm 5.2")

    def to_frame(self) -> pd.DataFrame:
        row = {"statistic": self.statistic, "sd": self.sd, "vlo": self.vlo, "vup": self.vup,
               "null_value": self.null_value, "alternative": self.alternative,
               "pvalue": self.pvalue, "ci_low": self.ci[0], "ci_high": self.ci[1],
               "tailarea_low": self.tailarea[0], "tailarea_high": self.tailarea[1],
               "alpha": self.alpha, "method": self.method}
        return pd.DataFrame([row])


def truncation_limits(A, b, y, eta, *, cov=None, sigma: float | None = None,
                      zero_tol: float = 1e-12) -> TruncationLimits:
    r"""Truncation limits of :math:`\eta^\top y` given :math:`A y \le b` (polyhedral lemma).

    Parameters
    ----------
    A : array_like, shape (m, n)
        Constraint matrix of the selection event :math:`\{A y \le b\}`.
    b : array_like, shape (m,)
        Offsets.
    y : array_like, shape (n,)
        Observed response (must satisfy the constraints).
    eta : array_like, shape (n,)
        Contrast; the target is :math:`\eta^\top \mu`.
    cov : array_like, shape (n, n), optional
        Covariance :math:`\Sigma` of ``y``. Default ``sigma**2 * I``.
    sigma : float, optional
        Noise standard deviation when ``cov`` is not given (default 1). It does not move the
        limits when ``cov`` is a multiple of the identity; it sets ``sd``.
    zero_tol : float
        Rows with :math:`|(A c)_j| \le` ``zero_tol`` :math:`\|A_j\|\,\|c\|` count as orthogonal
        to the contrast (they bound :math:`V^0`, not the limits).

    Returns
    -------
    TruncationLimits
        ``statistic`` :math:`=\eta^\top y`, ``sd`` :math:`=\sqrt{\eta^\top\Sigma\eta}`, ``vlo``,
        ``vup`` (possibly infinite) and ``v0``.

    Notes
    -----
    Lee, Sun, Sun and Taylor (2016), Lemma 5.1: with :math:`c = \Sigma\eta/\eta^\top\Sigma\eta`,
    :math:`z = y - c\eta^\top y` and :math:`\alpha = Ac`,
    :math:`V^- = \max_{\alpha_j < 0} (b_j - (Az)_j)/\alpha_j`,
    :math:`V^+ = \min_{\alpha_j > 0} (b_j - (Az)_j)/\alpha_j`.

    References
    ----------
    .. [1] J. D. Lee, D. L. Sun, Y. Sun, J. E. Taylor, "Exact post-selection inference, with
       application to the lasso", Ann. Statist. 44(3), 907-927, 2016, arXiv:1311.6238.
    """
    y = check_vector("y", y)
    n = y.shape[0]
    A = check_matrix("A", A, n_cols=n)
    b = check_vector("b", b, length=A.shape[0])
    eta = check_vector("eta", eta, length=n)
    if cov is None:
        s = 1.0 if sigma is None else float(sigma)
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"`sigma` must be a finite positive real number; got {sigma!r}.")
        ss = float(eta @ eta)
        if ss <= 0:
            raise ValueError("`eta` must not be the zero vector.")
        c = eta / ss
        sd = s * math.sqrt(ss)
    else:
        cov = check_matrix("cov", cov, n_rows=n, n_cols=n)
        sv = cov @ eta
        ss = float(eta @ sv)
        if not ss > 0:
            raise ValueError("`eta` must have positive variance eta' cov eta; got "
                             f"{ss!r}.")
        c = sv / ss
        sd = math.sqrt(ss)
    return _limits(A, b, y, eta, c, sd, zero_tol)


def _limits(A, b, y, eta, c, sd, zero_tol=1e-12) -> TruncationLimits:
    stat = float(eta @ y)
    z = y - c * stat
    al = A @ c
    resid = b - A @ z
    scale = zero_tol * np.linalg.norm(A, axis=1) * np.linalg.norm(c) if A.size else al
    zero = np.abs(al) <= scale
    neg = (al < 0) & ~zero
    pos = (al > 0) & ~zero
    vlo = float(np.max(resid[neg] / al[neg])) if neg.any() else -math.inf
    vup = float(np.min(resid[pos] / al[pos])) if pos.any() else math.inf
    v0 = float(np.min(resid[zero])) if zero.any() else math.inf
    return TruncationLimits(statistic=stat, sd=float(sd), vlo=vlo, vup=vup, v0=v0)


def truncated_normal_pivot(statistic, *, sd, vlo, vup, mean=0.0):
    r"""Upper-tail pivot :math:`P_{\text{mean}}(T \ge t \mid V^- \le T \le V^+)`, :math:`T \sim N(\text{mean}, sd^2)`.

    Vectorised. Computed as a ratio of log normal masses so that it keeps full relative
    accuracy when :math:`t` is far in a tail (where :math:`1 - \Phi` differences cancel).
    This is :math:`1 - F` of Lee et al. (2016), Theorem 5.2.
    """
    st, sd, lo, hi, m = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                              for v in (statistic, sd, vlo, vup, mean)))
    if np.any(~(sd > 0)):
        raise ValueError(f"`sd` must be positive; got {sd[~(sd > 0)].ravel()[0]!r}.")
    out = np.exp(_truncnorm.log_sf_truncated(st / sd, lo / sd, hi / sd, m / sd))
    return out if out.ndim else float(out)


def truncated_normal_pvalue(statistic, *, sd, vlo, vup, null_value=0.0,
                            alternative: str = "greater"):
    r"""Selective p-value of :math:`H_0: \eta^\top\mu = \text{null\_value}` from the truncated normal.

    Parameters
    ----------
    statistic, sd, vlo, vup : float or array_like
        Observed :math:`\eta^\top y`, its standard deviation and truncation limits.
    null_value : float
        Hypothesised mean.
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: :math:`P(T \ge t \mid \cdot)` (the one-sided p-value of R
        selectiveInference when applied to ``sign * coef``); ``"two-sided"``: twice the
        smaller tail, capped at 1.

    Returns
    -------
    float or numpy.ndarray
        Accurate even when the statistic is 30+ sd into the tail (R's double-precision ratio
        returns 0 there).

    Notes
    -----
    Lee, Sun, Sun and Taylor (2016), Theorem 5.2; tails from ``scipy.special.log_ndtr``.
    """
    alternative = check_alternative(alternative)
    st, sd, lo, hi, m = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                              for v in (statistic, sd, vlo, vup, null_value)))
    if np.any(~(sd > 0)):
        raise ValueError(f"`sd` must be positive; got {sd[~(sd > 0)].ravel()[0]!r}.")
    if np.any(lo > hi):
        raise ValueError("`vlo` must not exceed `vup`.")
    z, a, bb, mu = st / sd, lo / sd, hi / sd, m / sd
    lsf = _truncnorm.log_sf_truncated(z, a, bb, mu)
    lcdf = _truncnorm.log_cdf_truncated(z, a, bb, mu)
    if alternative == "greater":
        out = np.exp(lsf)
    elif alternative == "less":
        out = np.exp(lcdf)
    else:
        out = np.minimum(1.0, 2.0 * np.exp(np.minimum(lsf, lcdf)))
    return out if out.ndim else float(out)


def truncated_normal_interval(statistic, *, sd, vlo, vup, alpha: float = 0.1,
                              gridrange: tuple[float, float] | None = (-100.0, 100.0)):
    r"""Equal-tailed :math:`1-\alpha` selective interval for the mean, by inverting the pivot.

    Solves :math:`P_{L}(T \ge t \mid \cdot) = \alpha/2` and :math:`P_{U}(T \le t \mid \cdot) =
    \alpha/2` with Brent's method on the log tails (tolerance 1e-13 sd), Lee et al. (2016),
    Section 6. Returns ``(low, high)`` (arrays if the inputs are arrays).

    Parameters
    ----------
    gridrange : (float, float) or None
        Search range in units of ``sd`` around 0, as R selectiveInference's ``gridrange``:
        an end beyond it is reported as -inf / inf. ``None`` searches without bound.
    """
    alpha = check_alpha(alpha)
    bound = _check_gridrange(gridrange)
    st, sd, lo, hi = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                           for v in (statistic, sd, vlo, vup)))
    if np.any(~(sd > 0)):
        raise ValueError(f"`sd` must be positive; got {sd[~(sd > 0)].ravel()[0]!r}.")
    low = np.empty(st.shape)
    high = np.empty(st.shape)
    for idx in np.ndindex(st.shape):
        s = sd[idx]
        lo_i, hi_i = _truncnorm.interval_standardised(st[idx] / s, lo[idx] / s, hi[idx] / s, alpha, bound)
        low[idx], high[idx] = lo_i * s, hi_i * s
    if st.ndim == 0:
        return float(low), float(high)
    return low, high


def _check_gridrange(gridrange) -> float | None:
    if gridrange is None:
        return None
    try:
        g0, g1 = (float(v) for v in gridrange)
    except (TypeError, ValueError):
        raise TypeError(f"`gridrange` must be a pair (low, high) with low < 0 < high, or None; "
                        f"got {gridrange!r}.") from None
    if not (g0 < 0 < g1):
        raise ValueError(f"`gridrange` must be a pair (low, high) with low < 0 < high, or None; "
                         f"got {gridrange!r}.")
    if g0 != -g1:
        raise ValueError(f"`gridrange` must be symmetric (-g, g); got {gridrange!r}.")
    return g1


def polyhedral_test(A, b, y, eta, *, sigma: float | None = None, cov=None, alpha: float = 0.1,
                    null_value: float = 0.0, alternative: str = "two-sided",
                    gridrange: tuple[float, float] | None = (-100.0, 100.0)) -> TruncatedNormalResult:
    r"""Selective test and interval for :math:`\eta^\top\mu` given :math:`\{A y \le b\}`.

    Combines :func:`truncation_limits` (Lee et al. 2016, Lemma 5.1) with the truncated-normal
    pivot (Theorem 5.2). See those functions for the parameters. Raises ``ValueError`` when
    ``y`` violates the constraints (the event did not happen).

    Examples
    --------
    >>> import numpy as np
    >>> res = polyhedral_test(-np.eye(1), [0.0], [1.5], [1.0], sigma=1.0)  # y >= 0 observed
    >>> round(res.pvalue, 6)  # P(|Z| >= 1.5 | Z >= 0), two-sided in the truncated law
    0.267223
    """
    lim = truncation_limits(A, b, y, eta, cov=cov, sigma=sigma)
    _check_inside(lim)
    pv = truncated_normal_pvalue(lim.statistic, sd=lim.sd, vlo=lim.vlo, vup=lim.vup,
                                 null_value=null_value, alternative=alternative)
    lo, hi = truncated_normal_interval(lim.statistic, sd=lim.sd, vlo=lim.vlo, vup=lim.vup,
                                       alpha=alpha, gridrange=gridrange)
    tails = (alpha / 2 if math.isfinite(lo) else 0.0, alpha / 2 if math.isfinite(hi) else 0.0)
    return TruncatedNormalResult(statistic=lim.statistic, sd=lim.sd, vlo=lim.vlo, vup=lim.vup,
                                 null_value=float(null_value), alternative=alternative,
                                 pvalue=float(pv), ci=(lo, hi), tailarea=tails, alpha=alpha)


def _check_inside(lim: TruncationLimits, rtol: float = 1e-8) -> None:
    slack = rtol * max(1.0, abs(lim.statistic))
    if lim.v0 < -slack or lim.statistic < lim.vlo - slack or lim.statistic > lim.vup + slack:
        raise ValueError("`y` is not in the polyhedron {A y <= b}: the selection event did not "
                         f"occur (statistic {lim.statistic:.6g} outside [{lim.vlo:.6g}, "
                         f"{lim.vup:.6g}] or V0 = {lim.v0:.3g} < 0). Check `A`, `b` and `y`.")
