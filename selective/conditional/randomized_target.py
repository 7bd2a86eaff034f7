r"""Randomized selective inference for a statistic that the selection did not rank.

:func:`~selective.conditional.randomized_inference` tests the mean of a selected *score*. A
selection often ranks one statistic and the test is about another: a DP screen ranks signed
clipped means (:class:`~selective.selectors.SignedMeanScore`: up to the group sizes, half the
difference of the groups' clipped means) and the selected column is then tested with Welch's t
on its raw values. With the scores :math:`S` and the tested statistic :math:`T` jointly normal,

.. math:: (S, T) \sim N\Big(\big(\eta, \theta\big),
          \begin{pmatrix}\Sigma & g\\ g^\top & v\end{pmatrix}\Big),

and a selection made from :math:`S` plus independent noise of a known law, write
:math:`S = U + cT` with :math:`c = g/v`; :math:`U` is independent of :math:`T`. Given the
selection and :math:`U`, :math:`T` has density proportional to
:math:`\varphi((t-\theta)/\sqrt v)\,\pi(t)`, :math:`\pi(t) = P(\text{selection}\mid S = U + ct)`:
the law of :func:`~selective.conditional.randomized_inference` with this :math:`U` and
:math:`c` (there :math:`T` is one of the scores). Its tail at the observed :math:`T` is an exact
p-value for :math:`\theta = \theta_0` given the selection and :math:`U`, whatever :math:`\eta`
(the nuisance means are conditioned away), and inverting it gives an interval
(docs/THEORY.md 3.12, "A target the selection did not rank"). Exact when the joint law is
normal with the covariance used; asymptotic when the covariance is estimated from the rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._checks import check_alpha, check_choice
from .randomized import RandomizedInferenceResult, _law, _noise_of, _one_target, _scores_and_cov

__all__ = ["randomized_target_inference"]


def _finite(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"`{name}` must be a finite number; got {value!r}.")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"`{name}` must be a finite number; got {value!r}.")
    return out


def randomized_target_inference(scores: Any, cov: Any, event: Any, estimate: float, variance: float,
                                cross_cov: Any, *, null_value: float = 0.0, alpha: float = 0.05,
                                alternative: str = "two-sided", absolute: bool = False, intervals: bool = True,
                                name: Any = "target") -> RandomizedInferenceResult:
    r"""P-value and interval for the mean of a statistic jointly normal with the ranked scores.

    Parameters
    ----------
    scores : array_like (m,) or pandas.Series
        The scores the selector saw before its noise, :math:`S \sim N(\eta, \Sigma)`.
    cov : array_like (m, m)
        :math:`\Sigma`.
    event : NoisyTopKEvent, ThresholdEvent, SparseVectorEvent, IntervalEvent or ReleaseEvent
        What the selector did, with its noise law and scale on the scale of ``scores``.
    estimate : float
        The tested statistic :math:`T` (observed).
    variance : float
        :math:`v = \operatorname{Var}(T) > 0`.
    cross_cov : array_like (m,)
        :math:`g = \operatorname{Cov}(S, T)`; the joint covariance must be positive
        semi-definite.
    null_value : float
        :math:`\theta_0`.
    alpha, alternative, absolute, intervals
        As in :func:`~selective.conditional.randomized_inference`.
    name : label
        The target's label in the result.

    Returns
    -------
    RandomizedInferenceResult
        One row (``index`` is ``(-1,)``: the target is not one of the scores), with the fields of
        :func:`~selective.conditional.randomized_inference`.

    Notes
    -----
    Exact when (S, T) is jointly normal with the covariance given; with a covariance estimated
    from the rows it is asymptotic, and it inherits the z-test's error in the tails: an adversarial
    review measured 6.3% / 1.7% / 0.35% at 0.05 / 0.01 / 0.001 (20,000 null tests) for a Welch
    difference with 20 rows in one group, and 10% / 4.6% / 1.7% with lognormal rows (n = 400,
    10% in one group), where the known covariance gives the levels. The report's conditional
    column shows the p-value only where the z-test of the same hypothesis is trusted at the level
    the conditional test uses (:mod:`selective.analysis.conditional_rows`); a direct caller should
    apply the same care. With ``estimate`` one of the scores (``variance`` its variance, ``cross_cov`` its column of
    ``cov``) this is :func:`~selective.conditional.randomized_inference` for that score. Module
    docstring for the law; docs/THEORY.md 3.12.
    """
    z, S = _scores_and_cov(scores, cov)
    m = z.size
    t, v = _finite("estimate", estimate), _finite("variance", variance)
    if v <= 0:
        raise ValueError(f"`variance` must be positive; got {variance!r}.")
    g = np.asarray(cross_cov, dtype=float).ravel()
    if g.shape != (m,) or not np.all(np.isfinite(g)):
        raise ValueError(f"`cross_cov` must be {m} finite numbers (the covariance of each score with the target); "
                         f"got {cross_cov!r}.")
    joint = np.block([[S, g[:, None]], [g[None, :], np.array([[v]])]])
    low = float(np.linalg.eigvalsh(joint)[0])
    if low < -1e-10 * float(np.max(np.diag(joint))):
        raise ValueError(f"The joint covariance of the scores and the target (`cov`, `cross_cov`, `variance`) must be "
                         f"positive semi-definite; its smallest eigenvalue is {low:.3g}.")
    if not hasattr(event, "log_prob"):
        raise TypeError("`event` must be a NoisyTopKEvent, ThresholdEvent, SparseVectorEvent, IntervalEvent or "
                        f"ReleaseEvent; got {event!r}.")
    event.check(m)
    null = _finite("null_value", null_value)
    alpha = check_alpha(alpha)
    alternative = check_choice("alternative", alternative, ("two-sided", "greater", "less"))
    for flag, value in (("absolute", absolute), ("intervals", intervals)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"`{flag}` must be True or False; got {value!r}.")
    sig = math.sqrt(v)
    c = g / v
    law = _law(z - c * t, c, sig, event, bool(absolute), (t, null))
    pv, naive, ci, logsel, edge = _one_target(law, t, null, sig, alpha, alternative, bool(intervals))
    return RandomizedInferenceResult(
        candidates=(name,), index=(-1,), score=np.array([t]), sd=np.array([sig]), null_value=np.array([null]),
        pvalue=np.array([pv]), pvalue_naive=np.array([naive]), ci=np.array([ci], dtype=float),
        log_selection_probability=np.array([logsel]), log_boundary_tail=np.array([edge]), alpha=alpha,
        alternative=alternative, event=event,
        method=f"randomized selective inference for a target the selection did not rank ({type(event).__name__}, "
               f"{_noise_of(event)} noise)")
