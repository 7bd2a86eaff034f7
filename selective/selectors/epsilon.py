r"""Choosing ε for a DP selector: the threshold a noisy top-k step leaves, and the ε that meets a target.

A pure ε-DP selection on n rows costs max-information that grows with :math:`\varepsilon\sqrt n`
(Dwork et al. 2015, Theorem 20: :math:`\log_2(e)(\varepsilon^2 n/2 +
\varepsilon\sqrt{n\ln(2/\beta)/2})` bits) and mutual information :math:`n\min(\varepsilon
\tanh(\varepsilon/2), \rho)` nats (THEORY.md 4.2). With ε = 1 on a few thousand rows that is
thousands of bits: the corrected threshold is then far below any positive p-value a double can
hold, and the DP columns reject nothing. :func:`suggest_epsilon` finds the largest ε
whose threshold meets a target; :func:`noisy_topk_threshold` gives the threshold of a given ε.

Both evaluate the threshold exactly as a report does: the step's certificate
(:func:`~selective.mechanisms.exponential.report_noisy_topk_certificate`) is recorded on a
:class:`~selective.accounting.Ledger` of ``n_rows`` rows and its totals go through
:func:`~selective.corrections.correct`, so the helper cannot drift from the report.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_in_interval, check_int, check_positive, check_probability
from ..accounting.ledger import MAX_ROWS, Ledger
from ..corrections import correct
from ..corrections._common import Threshold
from ..exceptions import NoBoundError
from ..mechanisms.exponential import report_noisy_topk_certificate

__all__ = ["DPThreshold", "EpsilonSuggestion", "noisy_topk_threshold", "suggest_epsilon",
           "SMALLEST_LOG2_PVALUE"]

#: log2 of the smallest positive double (5e-324): a threshold below it rejects no p-value a double can hold
SMALLEST_LOG2_PVALUE = -1074.0
_BETA_SHOWN = 1e-3  # the slack at which ledgers show their bits (``Ledger.rows``)


@dataclass(frozen=True, slots=True)
class DPThreshold:
    """The threshold a noisy top-k step leaves the DP columns of a report.

    Attributes
    ----------
    epsilon, n_rows, k, alpha : float, int, int, float
        The step and the level.
    threshold : Threshold
        The largest threshold at ``alpha`` of the max-information and mutual-information
        columns (``log2_gamma`` exact even where γ underflows), and the route giving it.
    maxinfo_bits : float
        Max-information of the step at β = 0.001 (bits), as the ledger shows it; inf if none.
    mutual_info_bits : float
        Mutual-information bound of the step (bits).
    preregistered : bool
        Whether the step was declared in advance (else only Theorem 19 applies, THEORY.md 3.2a).
    """

    epsilon: float
    n_rows: int
    k: int
    alpha: float
    threshold: Threshold
    maxinfo_bits: float
    mutual_info_bits: float
    preregistered: bool = True

    @property
    def log2_threshold(self) -> float:
        return self.threshold.log2_gamma

    @property
    def rejects_nothing(self) -> bool:
        """True when the threshold is below the smallest positive double: no positive naive
        p-value a double can hold is rejected by the DP columns."""
        return self.threshold.log2_gamma < SMALLEST_LOG2_PVALUE


@functools.lru_cache(maxsize=1024)
def _threshold(epsilon: float, n_rows: int, k: int, alpha: float, preregistered: bool) -> DPThreshold:
    ledger = Ledger(n_rows)
    ledger.record(report_noisy_topk_certificate(k, epsilon=epsilon))
    totals = ledger.totals()
    corr = correct(np.array([1.0]), totals, alpha=alpha, adaptive=not preregistered)
    shown = [corr.thresholds.get(key) for key in ("maxinfo", "mutual_info")]
    shown = [t for t in shown if t is not None]
    best = max(shown, key=lambda t: t.log2_gamma) if shown else Threshold(alpha=alpha, log2_gamma=-math.inf)
    try:
        bits = ledger.max_info(beta=_BETA_SHOWN).bits
    except NoBoundError:  # beyond the double range
        bits = math.inf
    mi = totals.mutual_info.bits if totals.mutual_info is not None else math.inf
    return DPThreshold(epsilon=epsilon, n_rows=n_rows, k=k, alpha=alpha, threshold=best, maxinfo_bits=bits,
                       mutual_info_bits=mi, preregistered=preregistered)


def noisy_topk_threshold(epsilon: float, n_rows: int, *, k: int = 1, alpha: float = 0.05,
                         preregistered: bool = True) -> DPThreshold:
    r"""The threshold at ``alpha`` that one ε-DP noisy top-k step on ``n_rows`` rows leaves.

    Parameters
    ----------
    epsilon : float
        Total privacy budget of the step (nats), > 0.
    n_rows : int
        Number of independent records n (units, with ``Analysis(units=...)``), >= 1.
    k : int, default 1
        Number of candidates kept (the step's certificate is ``PureDP(epsilon, rho=epsilon^2/(8k))``).
    alpha : float, default 0.05
        The level.
    preregistered : bool, default True
        Whether the step is declared in advance (``Analysis.preregister`` or a plan file): then
        Theorem 20 (product data) and the mutual-information routes apply; otherwise only the
        union route with Theorem 19 (THEORY.md 3.2a).

    Returns
    -------
    DPThreshold
        The largest threshold of the max-information and mutual-information columns, with the
        step's bits. A naive p-value is rejected after correction when it is at most this
        threshold.

    Notes
    -----
    Computed by recording the step on a :class:`~selective.accounting.Ledger` and calling
    :func:`~selective.corrections.correct`, as a report does: [DFHPRR]_ Theorems 19 and 20 with
    the optimal β (THEORY.md 3.2), and the binary-KL, Russo-Zou and via-max-information routes
    of the mutual information (THEORY.md 3.3-3.4a). Later steps of an analysis only lower it.
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1, high=MAX_ROWS)
    kk = check_int("k", k, low=1)
    a = check_probability("alpha", alpha, closed="neither")
    if not isinstance(preregistered, bool):
        raise TypeError(f"`preregistered` must be True or False; got {preregistered!r}.")
    return _threshold(eps, n, kk, a, preregistered)


@dataclass(frozen=True, slots=True)
class EpsilonSuggestion:
    """The largest ε whose noisy top-k step keeps the corrected threshold at ``alpha / max_cost``.

    Attributes
    ----------
    epsilon : float
        The suggested budget (nats): its threshold is at least ``target``; ε (1 + 1e-9) misses it.
    target : float
        ``alpha / max_cost``.
    at_epsilon : DPThreshold
        The threshold and bits at ``epsilon``.
    threshold_without_noise : float
        ``alpha / C(n_candidates, k)``: what the same choice gets from its number of possible
        outputs alone (a plain :class:`~selective.TopK`, union route); NaN without ``n_candidates``.
    noise_pays : bool or None
        Whether the DP threshold at ``epsilon`` beats ``threshold_without_noise`` (None without
        ``n_candidates``). When False, a plain top-k meets the target without noise.
    """

    epsilon: float
    target: float
    at_epsilon: DPThreshold
    threshold_without_noise: float = math.nan
    noise_pays: bool | None = None

    def __repr__(self) -> str:
        t = self.at_epsilon
        root_n = math.sqrt(t.n_rows)
        return (f"EpsilonSuggestion(epsilon={self.epsilon:.4g}, epsilon*sqrt(n)={self.epsilon * root_n:.3g}, "
                f"threshold={t.threshold.gamma:.3g} >= {self.target:.3g}, maxinfo_bits={t.maxinfo_bits:.3g})")


def suggest_epsilon(n_rows: int, *, k: int = 1, alpha: float = 0.05, max_cost: float = 10.0,
                    n_candidates: int | None = None, preregistered: bool = True) -> EpsilonSuggestion:
    r"""The largest ε for a noisy top-k step whose corrected threshold is at least ``alpha / max_cost``.

    Parameters
    ----------
    n_rows : int
        Number of independent records n (units, with ``Analysis(units=...)``: pass the number
        of units and divide the result by the largest unit's size, group privacy).
    k : int, default 1
        Number of candidates the step keeps.
    alpha : float, default 0.05
        The level of the corrected tests.
    max_cost : float, default 10
        How much smaller than ``alpha`` the corrected threshold may be, > 1: the suggestion keeps
        the threshold of the DP columns at least ``alpha / max_cost`` (10: a naive p-value of
        0.005 still rejects at 0.05).
    n_candidates : int, optional
        Number of declared candidates m; then the suggestion also gives
        ``alpha / C(m, k)``, the threshold of the same choice without noise, for comparison.
    preregistered : bool, default True
        See :func:`noisy_topk_threshold`.

    Returns
    -------
    EpsilonSuggestion

    Notes
    -----
    The threshold :math:`\gamma(\varepsilon)` of every route is strictly decreasing in ε: the
    Theorem 19 and 20 bounds :math:`k(\beta)` increase strictly with ε for every β, so
    :math:`\sup_\beta(\alpha-\beta)2^{-k(\beta)}` decreases strictly; the mutual-information bound
    :math:`n\min(\varepsilon\tanh(\varepsilon/2), \varepsilon^2/(8k))` nats increases strictly,
    and each mutual-information threshold decreases strictly in it. Their maximum therefore
    crosses the target once, and bisection on :math:`\log\varepsilon` finds the crossing; the
    returned ε is the end of the final bracket on the valid side (its threshold, computed as a
    report computes it, meets the target) and the bracket is narrower than a relative 1e-9.
    As :math:`\varepsilon \to 0` every threshold tends to α, so any ``max_cost`` > 1 is met.

    Examples
    --------
    >>> s = suggest_epsilon(6366, k=3, n_candidates=60)
    >>> round(s.epsilon, 4), s.at_epsilon.threshold.gamma >= 0.005
    (0.0164, True)
    """
    n = check_int("n_rows", n_rows, low=1, high=MAX_ROWS)
    kk = check_int("k", k, low=1)
    a = check_probability("alpha", alpha, closed="neither")
    cost = check_in_interval("max_cost", max_cost, low=1.0, high=math.inf, closed="neither")
    if n_candidates is not None:
        m = check_int("n_candidates", n_candidates, low=1)
        if kk > m:
            raise ValueError(f"`k` must be at most `n_candidates` ({m}); got {kk}.")
    if not isinstance(preregistered, bool):
        raise TypeError(f"`preregistered` must be True or False; got {preregistered!r}.")
    log2_target = math.log2(a) - math.log2(cost)

    def meets(log_eps: float) -> bool:
        return _threshold(math.exp(log_eps), n, kk, a, preregistered).threshold.log2_gamma >= log2_target

    lo = hi = -0.5 * math.log(n)  # epsilon sqrt(n) = 1
    while not meets(lo):
        lo -= 2.0
        if lo < -700.0:  # pragma: no cover - gamma -> alpha as epsilon -> 0, so this is not reached
            raise ValueError(f"no epsilon above 1e-304 meets `max_cost` = {cost!r}; choose a larger one.")
    hi = lo + 2.0
    while meets(hi):
        lo, hi = hi, hi + 2.0
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    eps = math.exp(lo)
    at = _threshold(eps, n, kk, a, preregistered)  # the very evaluation meets(lo) made: it meets the target
    without, pays = math.nan, None
    if n_candidates is not None:
        log2_without = math.log2(a) - math.log2(math.comb(n_candidates, kk))
        without = 2.0**log2_without
        pays = at.threshold.log2_gamma > log2_without
    return EpsilonSuggestion(epsilon=eps, target=2.0**log2_target, at_epsilon=at,
                             threshold_without_noise=without, noise_pays=pays)
