r"""Selective inference after a randomized (differentially private) selection.

A DP selector adds noise of a known law to the scores before it chooses. Instead of paying for
the choice through the ledger's max-information bound, the selection can be conditioned on
with that law (randomized selective inference: Tian and Taylor 2018, "Selective inference with
a randomized response", Ann. Statist. 46(2); the selection probability as a function of the
data, Panigrahi, Fry and Taylor 2024): with scores :math:`Z\sim N(\theta,\Sigma)` and a
selection :math:`S` made from :math:`Z` plus independent noise, the law of the target
:math:`Z_k` given :math:`S` and :math:`U = Z - cZ_k` (:math:`c=\Sigma_{\cdot k}/\Sigma_{kk}`,
independent of :math:`Z_k`) has density proportional to

.. math:: \varphi\big((x-\theta_k)/\sigma_k\big)\,\pi(x),\qquad \pi(x) = P(S \mid Z_k = x, U),

an exponential family in :math:`\theta_k`. Its tail probability at the observed :math:`Z_k` is
an exact p-value for :math:`\theta_k = \theta_0` given the selection (exact when the scores are
normal with the covariance used; asymptotic when the covariance is estimated), and inverting it
gives an interval (docs/THEORY.md 3.12). Unlike the polyhedral route, :math:`\pi` is smooth, so
the intervals stay bounded and short when the noise is large.

The selections (events), each with :math:`\pi` computed from the noise law:

* :class:`NoisyTopKEvent`: the selected candidates have the k largest noisy scores. Gumbel
  noise (the exponential mechanism and :class:`~selective.selectors.NoisyTopK`): closed form
  (k = 1), inclusion-exclusion or an adaptive quadrature of its Laplace-transform formula;
  Laplace or Gaussian noise (report noisy max and its one-shot top-k): a sum over the selected
  candidates of 1-d integrals over the noise of the one with the smallest noisy score.
* :class:`ThresholdEvent`: each candidate is reported when its noisy score exceeds a threshold
  (the "file drawer"), independent noise per candidate; closed form.
* :class:`SparseVectorEvent`: AboveThreshold / Sparse (Dwork and Roth 2014, Algorithms 1-2) with
  Laplace threshold and query noise, the answers given to the queries asked; a 1-d integral
  over the threshold noise per segment between two "above" answers.
* :class:`IntervalEvent`: one score plus noise landed in an interval (the event left of a
  polyhedral selection made from a randomized response, along one target's direction:
  :mod:`selective.conditional.randomized_response`); closed form.
* :class:`ReleaseEvent`: the noisy scores themselves were released (Laplace or Gaussian noise,
  the noisy-statistics mechanism), and the tests were chosen from them; :math:`\pi` is then the
  density of the release, :math:`\prod_j f_W(r_j - s_j)`, so the p-value conditions on every
  released value. Targets must be named.

A deterministic selection made after the randomized one, whose outcome restricts the target to
a union of intervals given the rest (the polyhedral lemma along the target), is conditioned on
as well with ``truncation=`` (docs/THEORY.md 3.16).

The 1-d integrals over noise follow their integrand (log-concave for Laplace and Gaussian noise):
mode and window found by grid searches, pieces over which the log integrand changes by at most 5,
ending at every kink (docs/THEORY.md 3.12).

Numerics: :math:`\log\pi` is evaluated on a grid of spacing at most a tenth of the noise
scale and of :math:`\sigma_k`, over the observed score and the null value :math:`\pm 20\sigma_k`,
interpolated by a cubic spline onto a grid four times finer, and the density is integrated cell
by cell in closed form (the normal density times the exponential of a quadratic through the
cell's ends and midpoint), in log space, so that tail probabilities keep their relative
accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import interpolate, optimize, special

from ._checks import check_alpha, check_choice
from ._randomized_events import (
    NOISES,
    IntervalEvent,
    NoisyTopKEvent,
    ReleaseEvent,
    SparseVectorEvent,
    ThresholdEvent,
    _indices,
)

__all__ = ["NOISES", "IntervalEvent", "NoisyTopKEvent", "RandomizedInferenceResult", "ReleaseEvent",
           "SparseVectorEvent", "ThresholdEvent", "randomized_inference"]

_SPAN = 20.0          # the grid covers the observed score and the null value +- this many sigma
_COARSE = 10          # coarse points per noise scale or sigma, whichever is smaller
_REFINE = 4           # fine cells per coarse cell


# ---------------------------------------------------------------- the conditional law


def _log_phi_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(Phi(b) - Phi(a)) for a <= b, accurate in both tails."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    upper = a > 0
    lo = np.where(upper, -b, a)
    hi = np.where(upper, -a, b)
    lhi, llo = special.log_ndtr(hi), special.log_ndtr(lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = lhi + np.log(-np.expm1(np.minimum(llo - lhi, 0.0)))
    return np.where(hi <= lo, -np.inf, out)


def _lse(v: np.ndarray) -> float:
    """log(sum(exp(v))) of a 1-d array (scipy's logsumexp, without its per-call overhead)."""
    m = float(np.max(v))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(v - m))))


class _ConditionalLaw:
    """The law of the target score given the selection and U: cells [x_i, x_i + h] on which
    log pi is the quadratic a + beta y + gamma y^2 (y = x - x_i) through its values at the ends
    and the midpoint, each integrated against the normal density in closed form."""

    def __init__(self, x: np.ndarray, log_pi: np.ndarray, log_pi_mid: np.ndarray, sigma: float,
                 allowed: tuple[tuple[float, float], ...] | None = None):
        self.x, self.sigma, self.allowed = x, sigma, allowed
        h = np.diff(x)
        f0, f1, fm = log_pi[:-1], log_pi[1:], log_pi_mid
        gamma = 2.0 * (f0 - 2.0 * fm + f1) / (h * h)
        # keep the exponent's quadratic term well inside the normal's (a convex log pi with a
        # curvature near 1/sigma^2 only where the grid is coarse against sigma): linear there
        gamma = np.where(gamma < 0.25 / (sigma * sigma), gamma, 0.0)
        self.a, self.beta, self.gamma, self.h = f0, (f1 - f0) / h - gamma * h, gamma, h
        self.left, self.right = log_pi[0], log_pi[-1]

    def _integral(self, mu, lo, hi, idx=slice(None)):
        """log of the integral of exp(a + beta y + gamma y^2) phi((x - mu)/s)/s over y in [lo, hi]."""
        s = self.sigma
        a, beta, gamma = self.a[idx], self.beta[idx], self.gamma[idx]
        d = mu - self.x[:-1][idx]                      # the normal's centre in local coordinates
        prec = 1.0 / (s * s) - 2.0 * gamma             # > 0.5 / s^2
        tau = 1.0 / np.sqrt(prec)
        centre = (d / (s * s) + beta) / prec
        const = a + 0.5 * centre * centre * prec - 0.5 * d * d / (s * s) + np.log(tau / s)
        return const + _log_phi_diff((lo - centre) / tau, (hi - centre) / tau)

    def _mass(self, mu: float, lo: float, hi: float) -> float:
        """log of the unnormalised mass of [lo, hi] (lo < hi, either end possibly infinite)."""
        s, x = self.sigma, self.x
        parts = []
        if lo < x[0]:    # below the grid log pi is flat at its first value
            parts.append(self.left + float(_log_phi_diff((lo - mu) / s, (min(hi, x[0]) - mu) / s)))
        if hi > x[-1]:
            parts.append(self.right + float(_log_phi_diff((max(lo, x[-1]) - mu) / s, (hi - mu) / s)))
        a, b = max(lo, x[0]), min(hi, x[-1])
        if a < b:
            last = x.size - 2
            i = min(max(int(np.searchsorted(x, a, side="right")) - 1, 0), last)
            j = min(max(int(np.searchsorted(x, b, side="left")) - 1, 0), last)
            if i == j:
                parts.append(float(self._integral(mu, a - x[i], b - x[i], slice(i, i + 1))[0]))
            else:
                parts.append(float(self._integral(mu, a - x[i], self.h[i], slice(i, i + 1))[0]))
                if j > i + 1:
                    parts.extend(self._integral(mu, 0.0, self.h[i + 1:j], slice(i + 1, j)))
                parts.append(float(self._integral(mu, 0.0, b - x[j], slice(j, j + 1))[0]))
        return _lse(np.asarray(parts, dtype=float)) if parts else -math.inf

    def log_tails(self, mu: float, x_obs: float) -> tuple[float, float, float]:
        """(log P(X >= x_obs | S), log P(X <= x_obs | S), log P_mu(S) relative to the normal law)."""
        if self.allowed is not None:
            up = [self._mass(mu, max(lo, x_obs), hi) for lo, hi in self.allowed if max(lo, x_obs) < hi]
            low = [self._mass(mu, lo, min(hi, x_obs)) for lo, hi in self.allowed if lo < min(hi, x_obs)]
            upper = _lse(np.asarray(up, dtype=float)) if up else -math.inf
            lower = _lse(np.asarray(low, dtype=float)) if low else -math.inf
            total = float(np.logaddexp(upper, lower))
            return float(upper - total), float(lower - total), total
        s = self.sigma
        cells = self._integral(mu, 0.0, self.h)
        left = self.left + special.log_ndtr((self.x[0] - mu) / s)
        right = self.right + special.log_ndtr((mu - self.x[-1]) / s)
        i = int(np.searchsorted(self.x, x_obs, side="right")) - 1
        i = min(max(i, 0), self.x.size - 2)
        y = min(max(x_obs - self.x[i], 0.0), self.h[i])
        one = slice(i, i + 1)
        part_lo = float(self._integral(mu, 0.0, y, one)[0])
        part_hi = float(self._integral(mu, y, self.h[i], one)[0])
        upper = _lse(np.r_[cells[i + 1:], part_hi, right])
        lower = _lse(np.r_[left, cells[:i], part_lo])
        total = np.logaddexp(upper, lower)
        return float(upper - total), float(lower - total), float(total)


@dataclass(frozen=True)
class RandomizedInferenceResult:
    """P-values and intervals for the targets of :func:`randomized_inference`."""

    candidates: tuple
    index: tuple
    score: np.ndarray
    sd: np.ndarray
    null_value: np.ndarray
    pvalue: np.ndarray
    pvalue_naive: np.ndarray
    ci: np.ndarray
    log_selection_probability: np.ndarray
    log_boundary_tail: np.ndarray
    alpha: float
    alternative: str
    event: Any
    method: str

    def to_frame(self) -> pd.DataFrame:
        """One row per target: score, sd, null value, p-values, interval and selection probability."""
        return pd.DataFrame({
            "candidate": list(self.candidates), "score": self.score, "sd": self.sd, "null_value": self.null_value,
            "pvalue": self.pvalue, "pvalue_naive": self.pvalue_naive, "ci_low": self.ci[:, 0],
            "ci_high": self.ci[:, 1], "selection_probability": np.exp(self.log_selection_probability)})


def _law(u, c, sig, event, absolute, centre_points):
    """The law of a target of sd ``sig`` given the selection, the scores being u + c x at target x."""
    spread = max(1.0, float(np.max(np.abs(c))))
    h = min(sig, event.noise_scale / spread) / _COARSE
    lo = min(centre_points) - _SPAN * sig
    hi = max(centre_points) + _SPAN * sig
    n = int(math.ceil((hi - lo) / h)) + 1
    if n > 400_000:
        raise ValueError(f"The noise scale {event.noise_scale:g} is too small against the target's sd {sig:g} "
                         "for the randomized conditional law to be tabulated (more than 400,000 grid points); "
                         "with (almost) no noise use the polyhedral route (winners_inference).")
    if getattr(event, "closed_form", False):
        return _closed_form_law(u, c, event, absolute, lo, hi, n, sig)
    # a spline across a kink of log pi errs by up to ~1e-4 relative: one spline per piece
    # between the kinks (a Laplace threshold's, and |score| = 0 for absolute scores)
    kinks = _kinks(u, c, event, absolute)
    kinks = kinks[(kinks > lo + 1e-9 * sig) & (kinks < hi - 1e-9 * sig)]
    ends = np.unique(np.concatenate([[lo, hi], kinks]))
    ends = ends[np.r_[True, np.diff(ends) > 1e-9 * sig]]      # no piece of (almost) zero width
    pieces = [np.linspace(a, b, max(2, int(math.ceil((b - a) / h)) + 1))
              for a, b in zip(ends[:-1], ends[1:], strict=True)]
    xc = np.concatenate(pieces)
    log_pi = _log_pi(u, c, event, absolute, xc)
    finite = np.isfinite(log_pi)
    if not finite.any():
        raise ValueError("The selection has probability 0 under the model at every value of the target.")
    # where pi underflows to 0 the law has no mass: floor it far below anything that matters
    log_pi = np.where(finite, log_pi, np.min(log_pi[finite]) - 1e3)
    xs, fines, mids, start = [], [], [], 0
    for piece in pieces:
        xp, fp = piece, log_pi[start:start + piece.size]
        start += piece.size
        x_fine, fine, mid = _spline_piece(xp, fp)
        cut = 1 if xs else 0        # a piece's first node is the previous piece's last
        xs.append(x_fine[cut:])
        fines.append(fine[cut:])
        mids.append(mid)
    return _ConditionalLaw(np.concatenate(xs), np.concatenate(fines), np.concatenate(mids), sig)


def _kinks(u, c, event, absolute) -> np.ndarray:
    """The target values at which log pi has a kink."""
    at = event.kink_scores() if hasattr(event, "kink_scores") else None
    nz = c != 0
    out = [np.zeros(0)]
    if at is not None:
        at = np.broadcast_to(np.asarray(at, dtype=float), u.shape)
        out.append((at - u)[nz] / c[nz])
        if absolute:
            out.append((-at - u)[nz] / c[nz])
    if absolute:
        out.append(-u[nz] / c[nz])
    return np.concatenate(out)


def _spline_piece(xc: np.ndarray, log_pi: np.ndarray):
    """The fine grid of one smooth piece: nodes, log pi at them and at the cells' midpoints."""
    n = xc.size
    steps = (xc[:-1, None] + np.diff(xc)[:, None] * (np.arange(_REFINE) / _REFINE)).ravel()
    xf = np.concatenate([steps, xc[-1:]])
    if n < 3:      # too short for a spline: linear (its kinks are the piece's ends)
        fine = np.interp(xf, xc, log_pi)
        return xf, np.minimum(fine, 0.0), np.minimum(0.5 * (fine[:-1] + fine[1:]), 0.0)
    spline = interpolate.CubicSpline(xc, log_pi)
    lo_env = np.minimum(log_pi[:-1], log_pi[1:]).repeat(_REFINE)
    hi_env = np.maximum(log_pi[:-1], log_pi[1:]).repeat(_REFINE)

    def clipped(v, ends=False):
        # the spline may overshoot where log pi bends sharply: keep it within its neighbours' range
        body = v[:-1] if ends else v
        body[:] = np.clip(body, lo_env - 1e-3, hi_env + 1e-3)
        return np.minimum(v, 0.0)
    return xf, clipped(spline(xf), ends=True), clipped(spline(0.5 * (xf[:-1] + xf[1:])))


def _log_pi(u, c, event, absolute, xs):
    """log pi at the target values ``xs`` (the other scores follow as u + c x)."""
    out = np.empty(xs.size)
    chunk = max(1, 4_000_000 // (max(u.size, 1) * 200))  # the panel integrals hold ~200 nodes per point
    for start in range(0, xs.size, chunk):
        s = u[None, :] + c[None, :] * xs[start:start + chunk, None]
        out[start:start + chunk] = event.log_prob(np.abs(s) if absolute else s)
    return out


def _closed_form_law(u, c, event, absolute, lo, hi, n, sig):
    """The law for an event whose log pi is cheap and, between kinks, a polynomial of degree at
    most 2 in the target (a release: linear for Laplace noise, quadratic for Gaussian): log pi
    is evaluated exactly at every node and midpoint of the fine grid, with the kinks added as
    nodes, so that each cell's quadratic is exact (no spline)."""
    xf = np.linspace(lo, hi, (n - 1) * _REFINE + 1)
    nz = c != 0
    kinks = [np.zeros(0)]
    at = event.kink_scores()        # per score: the score at which log pi has a kink (or none)
    if at is not None:
        kinks.append((np.asarray(at) - u)[nz] / c[nz])
        if absolute:                # |u + c x| = a at both u + c x = a and u + c x = -a
            kinks.append((-np.asarray(at) - u)[nz] / c[nz])
    if absolute:
        kinks.append(-u[nz] / c[nz])
    extra = np.concatenate(kinks)
    merged = np.sort(np.concatenate([xf, extra[(extra > lo) & (extra < hi)]]))
    # a kink within a millionth of a cell of a node replaces nothing: drop the later point
    merged = merged[np.r_[True, np.diff(merged) > 1e-6 * (xf[1] - xf[0])]]
    fine = _log_pi(u, c, event, absolute, merged)
    mid = _log_pi(u, c, event, absolute, 0.5 * (merged[:-1] + merged[1:]))
    finite = np.isfinite(fine)
    if not finite.any():
        raise ValueError("The selection has probability 0 under the model at every value of the target.")
    return _ConditionalLaw(merged, np.minimum(fine, 0.0), np.minimum(mid, 0.0), sig)


def randomized_inference(scores: Any, cov: Any, event: Any, *, targets: Any = None, null_value: Any = 0.0,
                         alpha: float = 0.05, alternative: str = "two-sided",
                         absolute: bool = False, intervals: bool = True,
                         truncation: Any = None) -> RandomizedInferenceResult:
    r"""P-values and intervals for the means of selected scores, given a randomized selection.

    Parameters
    ----------
    scores : array_like (m,) or pandas.Series
        The scores the selector saw before its noise, modelled as :math:`N(\theta, \Sigma)`.
    cov : array_like (m, m)
        :math:`\Sigma` (estimated from the data in practice: the result is then asymptotic).
    event : NoisyTopKEvent, ThresholdEvent, SparseVectorEvent, IntervalEvent or ReleaseEvent
        What the selector did, with its noise law and scale on the scale of ``scores``.
    targets : sequence of positions, optional
        The candidates to test (default: the selected ones; required for a ReleaseEvent).
    null_value : float or array_like (m,)
        :math:`\theta_0` per candidate (default 0).
    alpha : float
        The intervals are at level 1 - alpha (equal tails).
    alternative : {"two-sided", "greater", "less"}
        "greater": :math:`\theta_k > \theta_0`.
    absolute : bool
        The selector saw :math:`|Z|` instead of :math:`Z` (a two-sided screen).
    intervals : bool
        False: skip the intervals and ``log_boundary_tail`` (NaN), which take three quarters of
        the time; for simulations that need the p-values only.
    truncation : sequence of (lower, upper) pairs, optional
        One target only: the values of the target score (given the other scores' part
        :math:`U` independent of it) that a deterministic selection made *after* the randomized
        one allowed, as a union of intervals (ends may be infinite; the observed score must lie
        in one). The law is conditioned on it as well: density
        :math:`\varphi((x-\theta_k)/\sigma_k)\,\pi(x)\,1\{x \in T\}` (a randomized step
        followed by a polyhedral one; docs/THEORY.md 3.16).

    Returns
    -------
    RandomizedInferenceResult
        ``pvalue`` (conditional on the selection and on :math:`U`), ``pvalue_naive`` (the
        normal p-value ignoring the selection), ``ci``, ``log_selection_probability`` (log
        :math:`P_{\theta_0}(S \mid U)`, the mass on which a conditional test rejects; for a
        ReleaseEvent the log density of the release, in noise-scale units),
        ``log_boundary_tail`` (log of the unconditional normal tail probability, under the
        null, beyond the conditional test's rejection boundary at ``alpha``, the smaller over
        the alternative's sides: how far into the normal tail the test relies on the model).

    Notes
    -----
    Exact when the scores are jointly normal with covariance ``cov`` and the event's noise law
    is the selector's. Numerical error of the p-values: below 1e-7 relative for Gumbel top-k and
    Gaussian thresholds (checked against 20-digit quadrature, tails to 1e-10), about 1e-6 for
    Laplace thresholds (log pi bends sharply where a score crosses the threshold: one spline per
    piece between those points; a spline across them erred by up to 1e-4), about 1e-4 for Laplace or
    Gaussian report noisy max / top-k and Sparse Vector (against adaptive quadrature), whose
    selection probabilities are within 1e-8 of 20-digit quadrature in log pi, also with many
    tied candidates, a selected score 60 scales below the others, and query noise from 1/100 to
    10^6 times the threshold noise (docs/THEORY.md 3.12). The Gumbel selection probability is
    within about 1e-11 of 30-digit quadrature in log pi for k up to 30 (an adversarial review
    had found 3e-3 for k > 12 with a fixed quadrature rule). An interval end beyond the
    tabulated range (20 sd) is widened to the range's edge or to infinity. The target must be
    chosen from what the selection releases (a member of the set, not the member with the
    largest noisy score). docs/THEORY.md 3.12.
    """
    names = list(scores.index) if isinstance(scores, pd.Series) else None
    z, S = _scores_and_cov(scores, cov)
    m = z.size
    if not np.all(np.diag(S) > 0):
        raise ValueError("`cov` must have a positive diagonal (every score has a positive variance).")
    low = float(np.linalg.eigvalsh(S)[0])
    if low < -1e-10 * float(np.max(np.diag(S))):
        raise ValueError(f"`cov` must be positive semi-definite (a covariance matrix); its smallest eigenvalue "
                         f"is {low:.3g}.")
    if not hasattr(event, "log_prob"):
        raise TypeError(f"`event` must be a NoisyTopKEvent, ThresholdEvent, SparseVectorEvent, IntervalEvent or "
                        "ReleaseEvent; "
                        f"got {event!r}.")
    event.check(m)
    alpha = check_alpha(alpha)
    alternative = check_choice("alternative", alternative, ("two-sided", "greater", "less"))
    if not isinstance(absolute, (bool, np.bool_)):
        raise TypeError(f"`absolute` must be True or False; got {absolute!r}.")
    if not isinstance(intervals, (bool, np.bool_)):
        raise TypeError(f"`intervals` must be True or False; got {intervals!r}.")
    tg = event.selected if targets is None else _indices("targets", targets)
    if not tg:
        raise ValueError("No target: the selection is empty (a ReleaseEvent selects nothing) and no `targets` "
                         "were given.")
    if max(tg) >= m:
        raise ValueError(f"`targets` {tg!r} must index the {m} candidates.")
    try:
        nulls = (np.broadcast_to(np.asarray(null_value, dtype=float), (m,)) if np.ndim(null_value)
                 else np.full(m, float(null_value)))
    except (TypeError, ValueError):
        raise ValueError(f"`null_value` must be a number or one number per score ({m}); got {null_value!r}.") from None
    if not np.all(np.isfinite(nulls)):
        raise ValueError(f"`null_value` must be finite; got {null_value!r}.")
    allowed = _check_truncation(truncation, tg, z)
    k_ = len(tg)
    pv, naive, ci, logsel, sd = (np.empty(k_), np.empty(k_), np.empty((k_, 2)), np.empty(k_), np.empty(k_))
    edge = np.empty(k_)
    for r, k in enumerate(tg):
        sig = math.sqrt(S[k, k])
        c = S[:, k] / S[k, k]
        law = _law(z - c * z[k], c, sig, event, bool(absolute), (z[k], nulls[k]))
        law.allowed = allowed
        pv[r], naive[r], ci[r], logsel[r], edge[r] = _one_target(law, float(z[k]), float(nulls[k]), sig, alpha,
                                                                 alternative, intervals)
        sd[r] = sig
    labels = tuple(names[k] for k in tg) if names is not None else tuple(tg)
    return RandomizedInferenceResult(
        candidates=labels, index=tuple(tg), score=z[list(tg)], sd=sd, null_value=nulls[list(tg)], pvalue=pv,
        pvalue_naive=naive, ci=ci, log_selection_probability=logsel, log_boundary_tail=edge, alpha=alpha,
        alternative=alternative,
        event=event, method=f"randomized selective inference ({type(event).__name__}, {_noise_of(event)} noise)")


def _scores_and_cov(scores: Any, cov: Any) -> tuple[np.ndarray, np.ndarray]:
    """The scores as a finite vector and ``cov`` as a finite symmetric matrix of their size, or raise."""
    z = np.asarray(scores, dtype=float).ravel()
    m = z.size
    if m == 0 or not np.all(np.isfinite(z)):
        raise ValueError(f"`scores` must be a non-empty vector of finite numbers; got {scores!r}.")
    S = np.asarray(cov, dtype=float)
    if S.shape != (m, m) or not np.all(np.isfinite(S)) or not np.allclose(S, S.T, rtol=1e-10, atol=0):
        raise ValueError(f"`cov` must be a finite symmetric ({m}, {m}) matrix; got shape {S.shape}.")
    return z, S


def _one_target(law: _ConditionalLaw, x_obs: float, null: float, sig: float, alpha: float, alternative: str,
                intervals: bool) -> tuple[float, float, tuple[float, float], float, float]:
    """(conditional p-value, naive p-value, interval, log selection probability, log boundary tail)."""
    up, low, tot = law.log_tails(null, x_obs)
    p_up, p_low = math.exp(up), math.exp(low)
    zs = (x_obs - null) / sig
    if alternative == "greater":
        pv, naive = p_up, float(special.ndtr(-zs))
    elif alternative == "less":
        pv, naive = p_low, float(special.ndtr(zs))
    else:
        pv, naive = min(1.0, 2 * min(p_up, p_low)), min(1.0, 2 * float(special.ndtr(-abs(zs))))
    if not intervals:
        return pv, naive, (math.nan, math.nan), tot, math.nan
    return pv, naive, _interval(law, x_obs, sig, alpha), tot, _boundary_tail(law, null, sig, alpha, alternative)


def _check_truncation(truncation: Any, targets: tuple, z: np.ndarray) -> tuple[tuple[float, float], ...] | None:
    """The truncation as sorted, merged (lower, upper) pairs; None when not given."""
    if truncation is None:
        return None
    if len(targets) != 1:
        raise ValueError(f"`truncation` applies to one target; got targets {targets!r}. Run one call per target.")
    try:
        pairs = [(float(lo), float(hi)) for lo, hi in truncation]
    except (TypeError, ValueError):
        raise TypeError("`truncation` must be a sequence of (lower, upper) pairs of numbers (ends may be "
                        f"infinite); got {truncation!r}.") from None
    if not pairs or any(math.isnan(lo) or math.isnan(hi) or not lo < hi for lo, hi in pairs):
        raise ValueError(f"`truncation` must hold at least one (lower, upper) pair with lower < upper and no NaN; "
                         f"got {truncation!r}.")
    merged: list[list[float]] = []
    for lo, hi in sorted(pairs):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    x = float(z[targets[0]])
    if not any(lo <= x <= hi for lo, hi in merged):
        raise ValueError(f"The observed score of target {targets[0]} ({x:.6g}) lies outside `truncation` "
                         f"{truncation!r}: the deterministic selection it describes did not happen.")
    return tuple((lo, hi) for lo, hi in merged)


def _boundary_tail(law: _ConditionalLaw, null: float, sig: float, alpha: float, alternative: str) -> float:
    """log of the null normal tail beyond the conditional rejection boundary (the smaller side)."""
    level = alpha / 2 if alternative == "two-sided" else alpha
    lo, hi = law.x[0], law.x[-1]
    out = math.inf
    for upper in ((True, False) if alternative == "two-sided" else (alternative == "greater",)):
        def f(x, upper=upper):  # the conditional tail beyond x, minus the level: monotone in x
            tails = law.log_tails(null, x)
            return (tails[0] if upper else tails[1]) - math.log(level)
        fa, fb = f(lo), f(hi)
        if (fa > 0) == (fb > 0):     # the boundary lies beyond the tabulated range: the grid's edge
            x = hi if upper else lo
        else:
            x = optimize.brentq(f, lo, hi, xtol=1e-9 * sig, rtol=1e-12)
        z = (x - null) / sig
        out = min(out, float(special.log_ndtr(-z if upper else z)))
    return out


def _noise_of(event) -> str:
    return getattr(event, "noise", "laplace")


def _interval(law: _ConditionalLaw, x_obs: float, sig: float, alpha: float) -> tuple[float, float]:
    """Equal-tailed interval: the mu with P_mu(X >= x_obs | S) = alpha/2 and 1 - alpha/2."""
    lo_edge, hi_edge = law.x[0] + 5 * sig, law.x[-1] - 5 * sig

    def upper_tail(mu):
        return law.log_tails(mu, x_obs)[0]

    def f_low(mu):   # increasing in mu: zero where the upper tail is alpha/2
        return upper_tail(mu) - math.log(alpha / 2)

    def f_high(mu):  # zero where the lower tail is alpha/2
        return law.log_tails(mu, x_obs)[1] - math.log(alpha / 2)

    def root(f, increasing):
        # a root beyond the tabulated range: widen the interval (an infinite lower end, or the
        # grid's edge for an end whose root lies past the other edge), never shrink it
        a, b = lo_edge, hi_edge
        fa, fb = f(a), f(b)
        if increasing:   # the lower end
            if fa > 0:
                return -math.inf
            if fb < 0:
                return b
        else:            # the upper end
            if fa < 0:
                return a
            if fb > 0:
                return math.inf
        return optimize.brentq(f, a, b, xtol=1e-10 * sig, rtol=1e-12)

    return root(f_low, True), root(f_high, False)
