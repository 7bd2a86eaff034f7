r"""Numerical kernels for the optimal-β corrections (private).

All problems here have a unique optimum characterised by a monotone first-order condition
(THEORY.md 3.2, 3.3), so they are solved by vectorised bisection in a log parametrisation,
robust for values far below the double range (work with logarithms throughout).

Notation: Theorem 20 of Dwork et al. (arXiv:1506.02629) bounds max-information in nats by
:math:`a + b\sqrt{L}` with :math:`a = \varepsilon^2 n/2`, :math:`b = \varepsilon\sqrt{n/2}` and
:math:`L = \ln(2/\beta)`, i.e. :math:`\beta = 2e^{-L}`, and :math:`\beta \le 1 \iff L \ge \ln 2`.
"""

from __future__ import annotations

import math

import numpy as np

LN2 = math.log(2.0)
_N_ITER = 200


def _bisect_increasing(f, lo: np.ndarray, hi: np.ndarray, *, side: str = "mid") -> np.ndarray:
    """Root of an increasing function on [lo, hi] (elementwise; f(lo) <= 0 <= f(hi) assumed).

    ``side="lo"`` returns the end of the final bracket where f <= 0, ``"hi"`` the end where
    f > 0, ``"mid"`` its midpoint: thresholds defined by a root use the end on the valid side.
    The loop stops once every bracket is narrower than 4e-16 max(1, |hi|). The brackets are
    updated in place, and that test is skipped in the first iterations, where it cannot hold
    yet (the widest bracket relative to its ends has not been halved often enough), which
    leaves the result unchanged.
    """
    lo = np.array(lo, dtype=float, copy=True)
    hi = np.array(hi, dtype=float, copy=True)
    if lo.size == 0:
        return lo
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.max((hi - lo) / (4e-16 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))))
    skip = int(math.log2(ratio)) - 2 if 1.0 < ratio < math.inf else 0
    mid = np.empty_like(lo)
    pos = np.empty(lo.shape, dtype=bool)
    for it in range(_N_ITER):
        np.add(lo, hi, out=mid)
        mid *= 0.5
        np.greater(f(mid), 0, out=pos)
        np.copyto(hi, mid, where=pos)
        np.logical_not(pos, out=pos)
        np.copyto(lo, mid, where=pos)
        if it >= skip and np.all(hi - lo <= 4e-16 * np.maximum(1.0, np.abs(hi))):
            break
    if side == "lo":
        return lo
    if side == "hi":
        return hi
    return 0.5 * (lo + hi)


def _newton_increasing(f, fd, lo: np.ndarray, hi: np.ndarray, x0: np.ndarray, *, side: str,
                       max_iter: int = 60) -> np.ndarray:
    """Root of an increasing function on [lo, hi] by safeguarded Newton, finished by bisection.

    ``f(x, idx)`` and ``fd(x, idx)`` (returning f and f') evaluate the elements ``idx`` (an
    index array into the problem) at ``x``; ``f(lo) <= 0 <= f(hi)`` is assumed. Each Newton
    iterate shrinks the bracket [lo, hi] by its sign, and a step leaving the bracket is replaced
    by the bracket's midpoint, so the iteration cannot diverge; only the elements not yet
    converged are evaluated. The result has the same meaning as :func:`_bisect_increasing`'s
    (``side`` selects the end of a final bracket on the valid side): around each Newton root a
    bracket of a few units in the last place is verified by the signs of f at its ends and
    bisected; where the verification fails the whole remaining bracket is bisected.
    """
    lo = np.array(lo, dtype=float, copy=True)
    hi = np.array(hi, dtype=float, copy=True)
    x = np.clip(np.array(x0, dtype=float, copy=True), lo, hi)
    idx = np.arange(lo.size)
    for _ in range(max_iter):
        if idx.size == 0:
            break
        xi, li, hi_i = x[idx], lo[idx], hi[idx]
        fx, dfx = fd(xi, idx)
        pos = fx > 0
        hi_i = np.where(pos, xi, hi_i)
        li = np.where(pos, li, xi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = fx / dfx
        scale = np.maximum(1.0, np.abs(xi))
        # a step of a few ulps is rounding noise in f: the root is found (and the step may
        # then point just outside the bracket, which must not trigger a bisection step)
        done = (np.abs(step) <= 1e-15 * scale) | (hi_i - li <= 4e-16 * scale) | (fx == 0)
        xn = xi - step
        outside = ~((xn > li) & (xn < hi_i))
        xn = np.where(done, xi, np.where(outside, 0.5 * (li + hi_i), xn))
        x[idx], lo[idx], hi[idx] = xn, li, hi_i
        idx = idx[~done]
    # a verified bracket of a few ulps around each root, bisected to the usual width
    width = 4e-15 * np.maximum(1.0, np.abs(x))
    a, b = np.maximum(lo, x - width), np.minimum(hi, x + width)
    every = np.arange(lo.size)
    ok = (f(a, every) <= 0) & (f(b, every) > 0)
    out = np.empty_like(lo)
    for sel, (left, right) in ((np.nonzero(ok)[0], (a, b)), (np.nonzero(~ok)[0], (lo, hi))):
        if sel.size:
            out[sel] = _bisect_increasing(lambda t, s=sel: f(t, s), left[sel], right[sel], side=side)
    return out


def _grow_upper(f, start: np.ndarray) -> np.ndarray:
    """Double ``start`` elementwise until f > 0 (f increasing, unbounded above)."""
    hi = np.array(start, dtype=float, copy=True)
    for _ in range(2000):
        bad = ~(f(hi) > 0)
        if not bad.any():
            return hi
        hi = np.where(bad, hi * 2.0, hi)
    raise FloatingPointError("bracketing failed in an optimal-beta solver")  # pragma: no cover


def min_exp_sqrt_plus_beta(logc, a: float, b: float):
    r"""Minimise :math:`F(\beta) = \exp(c + a + b\sqrt{\ln(2/\beta)}) + \beta` over β in (0, 1].

    Vectorised over ``logc`` (= c). With :math:`L = \ln(2/\beta)`,
    :math:`F'(\beta) = 1 - e^{h(L)}` where
    :math:`h(L) = c + a + b\sqrt L + \ln b - 2\ln 2 + L - \tfrac12\ln L` is increasing for
    :math:`L \ge \ln 2` (its derivative :math:`1 + b/(2\sqrt L) - 1/(2L) > 0` there), so the
    optimum is the root of h, or β = 1 when :math:`h(\ln 2) \ge 0`.

    Returns
    -------
    value, beta : ndarray
        The minimum (not clipped at 1) and the minimiser.
    """
    logc = np.asarray(logc, dtype=float)
    if b <= 0:
        # no beta dependence: the infimum is at beta -> 0
        return np.exp(logc + a), np.zeros_like(logc)
    lnb = math.log(b)

    def h(L):
        return logc + a + b * np.sqrt(L) + lnb - 2 * LN2 + L - 0.5 * np.log(L)

    L0 = np.full_like(logc, LN2)
    at_one = h(L0) >= 0
    start = np.maximum(1.0, -(logc + a + lnb) + 4.0)
    hi = _grow_upper(h, np.where(at_one, 1.0, start))
    L = np.where(at_one, LN2, _bisect_increasing(h, L0, hi))
    beta = np.where(at_one, 1.0, 2.0 * np.exp(-L))
    with np.errstate(over="ignore"):
        value = np.exp(logc + a + b * np.sqrt(L)) + beta
    return value, beta


def _log_sub(log_r: float, log_x):
    """ln(R - x) from ln R and ln x (x < R)."""
    return log_r + np.log1p(-np.exp(log_x - log_r))


def _split_root(log_R: float, b: float, weight: int) -> float:
    r"""Root :math:`L_0 = \ln(2/\beta_0)` of :math:`-w/(R-\beta_0) + b/(2\beta_0\sqrt{L_0}) = 0` on
    :math:`\beta_0 \in (0, R)`, the optimal share of the Theorem 20 block when ``weight`` = w
    other pieces share the rest of the slack R (given as ``log_R`` = ln R, so that R far below
    the double range works). The left side decreases strictly in :math:`\beta_0`
    (:math:`\beta\sqrt{\ln(2/\beta)}` increases for :math:`\beta < 2/\sqrt e`); in logarithms the
    condition is :math:`h(L) = \ln b + L - \ln 4 - \tfrac12\ln L - \ln w + \ln(R - 2e^{-L}) = 0`,
    h increasing, solved by bisection in L."""
    lnb, lnw, ln4 = math.log(b), math.log(weight), math.log(4.0)

    def h(L):
        with np.errstate(divide="ignore"):
            return lnb + L - ln4 - 0.5 * np.log(L) - lnw + _log_sub(log_R, LN2 - L)

    L_lo = np.array([LN2 - log_R])  # beta0 = R: h = -inf
    hi = _grow_upper(h, np.array([max(1.0, LN2 - log_R + 1.0)]))
    return float(_bisect_increasing(h, L_lo, hi)[0])


def max_log_gamma_composite(log_R0: float, a: float, b: float, n_blocks: int):
    r"""Maximise :math:`(J+1)\ln\frac{R_0-\beta_0}{J+1} - (a + b\sqrt{\ln(2/\beta_0)})` over
    :math:`\beta_0 \in (0, R_0)` (J = ``n_blocks`` description-length blocks sharing the rest
    of the slack equally, THEORY.md 3.2 and 2.7). ``log_R0`` = ln R0.

    Returns
    -------
    log_value : float
        The maximum (natural log).
    beta0 : float
        The maximiser (0.0 where it underflows).
    """
    J1 = n_blocks + 1
    if b <= 0:
        return J1 * (log_R0 - math.log(J1)) - a, 0.0
    L = _split_root(log_R0, b, J1)
    log_rest = float(_log_sub(log_R0, LN2 - L))
    return J1 * (log_rest - math.log(J1)) - (a + b * math.sqrt(L)), 2.0 * math.exp(-L)


def min_bits_composite(R: float, a: float, b: float, n_blocks: int):
    r"""Minimise over :math:`\beta_0 \in (0, R)` the nats
    :math:`a + b\sqrt{\ln(2/\beta_0)} + J\ln\frac{J}{R - \beta_0}` (Thm 20 block plus J
    description-length blocks sharing :math:`R - \beta_0` equally): the first-order condition of
    :func:`max_log_gamma_composite` with J in place of J + 1.

    Returns (value_nats, beta0).
    """
    J = n_blocks
    if J == 0:
        raise ValueError("min_bits_composite needs at least one description-length block")
    if b <= 0:
        return a + J * math.log(J / R), 0.0
    log_R = math.log(R)
    L = _split_root(log_R, b, J)
    log_rest = float(_log_sub(log_R, LN2 - L))
    return a + b * math.sqrt(L) + J * (math.log(J) - log_rest), 2.0 * math.exp(-L)
