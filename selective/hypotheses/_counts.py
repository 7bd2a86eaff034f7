"""Logit models of counts of successes (successes and failures per row): what their trials are,
what makes their counts unusable, and the check of their binomial variance (docs/THEORY.md 7.1)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["binomial_trials", "counts_problem", "binomial_dispersion_z"]


def binomial_trials(fit) -> np.ndarray | None:
    """The trials :math:`m_i` of a logit fit whose outcome is a count of successes (two outcome
    columns, successes and failures), or None for 0/1 outcomes."""
    m = np.asarray(getattr(fit.model, "n_trials", 1.0), dtype=float)
    return m if m.ndim == 1 and np.any(m > 1) else None


def counts_problem(model) -> str | None:
    """What is wrong with the counts of a logit model of successes and failures (None if nothing,
    or for 0/1 outcomes): whole, non-negative numbers of each, at least one trial in every row."""
    trials = np.asarray(getattr(model, "n_trials", 1.0), dtype=float)
    if trials.ndim != 1 or np.all(trials == 1.0):
        return None
    share = np.asarray(model.endog, dtype=float)
    successes = np.where(trials > 0, share * trials, 0.0)
    bad = ~(np.isfinite(trials) & (trials >= 1) & (share >= 0) & (share <= 1)
            & (np.abs(trials - np.round(trials)) <= 1e-9 * trials)
            & (np.abs(successes - np.round(successes)) <= 1e-9 * trials))
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    return (f"must hold whole, non-negative numbers with at least one trial in every row; row {i} (position) has "
            f"{float(successes[i]):g} successes out of {float(trials[i]):g} trials")


def binomial_dispersion_z(column: np.ndarray, counts: np.ndarray, p: np.ndarray, trials: np.ndarray) -> float:
    r"""Signed check of the binomial variance along a tested column: :func:`poisson_dispersion_z`
    for counts :math:`y_i \sim \text{Binomial}(m_i, p_i)`, with :math:`v_i = m_ip_i(1-p_i)`,
    :math:`w_i = \tilde x_i^2 v_i`, :math:`r_i = (y_i - m_ip_i)/\sqrt{v_i}` and
    :math:`\mathrm{Var}\, r_i^2 = 2 + (1 - 6p_i(1-p_i))/v_i`; the larger of that z and the same
    z with weights :math:`v_i` (a common overdispersion, the usual one for counts of clustered
    trials, is found by all rows in proportion to their information, not only by those that carry
    the information on the column: measured, a beta-binomial with intra-class correlation 0.02 over
    30 trials and 60 rows made the Wald test reject 7.3% at 0.05 when only the first z was used;
    equal weights instead of :math:`v_i` missed it when the trials vary from 1 to 200,
    docs/THEORY.md 7.1). Rows of one trial are left out: a single trial's variance is fixed by its
    mean, so only counts can be overdispersed."""
    v = trials * p * (1.0 - p)
    counted = (trials >= 2) & (v > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(counted, (np.asarray(counts, dtype=float) - trials * p) ** 2 / v, 1.0)
        var_r2 = np.where(counted, 2.0 + (1.0 - 6.0 * p * (1.0 - p)) / v, 0.0)
    if not (np.all(np.isfinite(r2)) and np.all(np.isfinite(var_r2))):
        return 0.0
    z = []
    for w in (np.where(counted, np.asarray(column, dtype=float) ** 2 * v, 0.0), np.where(counted, v, 0.0)):
        den = float(np.sum(w * w * var_r2))
        z.append(float(np.sum(w * (r2 - 1.0)) / math.sqrt(den)) if den > 0 else 0.0)
    return max(z)
