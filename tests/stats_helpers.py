"""Helpers for statistical tests of randomized code.

Every statistical test states its false-failure rate: the probability that a correct
implementation fails it. ``FALSE_FAILURE_RATE`` is the default.
"""

from __future__ import annotations

import scipy.stats

FALSE_FAILURE_RATE = 1e-6  # chance that a correct implementation fails one such test


def assert_rate_at_most(
    n_events: int, n_trials: int, rate: float, *, false_failure_rate: float = FALSE_FAILURE_RATE
) -> None:
    """Fail when ``n_events / n_trials`` is significantly above ``rate`` (one-sided binomial)."""
    p = scipy.stats.binomtest(int(n_events), int(n_trials), rate, alternative="greater").pvalue
    assert p > false_failure_rate, f"{n_events}/{n_trials} exceeds rate {rate} (p = {p:.1e})"


def assert_rate_at_least(
    n_events: int, n_trials: int, rate: float, *, false_failure_rate: float = FALSE_FAILURE_RATE
) -> None:
    """Fail when ``n_events / n_trials`` is significantly below ``rate`` (one-sided binomial)."""
    p = scipy.stats.binomtest(int(n_events), int(n_trials), rate, alternative="less").pvalue
    assert p > false_failure_rate, f"{n_events}/{n_trials} is below rate {rate} (p = {p:.1e})"


def assert_rate_near(
    n_events: int, n_trials: int, rate: float, *, false_failure_rate: float = FALSE_FAILURE_RATE
) -> None:
    """Fail when ``n_events / n_trials`` is significantly different from ``rate`` (two-sided)."""
    p = scipy.stats.binomtest(int(n_events), int(n_trials), rate, alternative="two-sided").pvalue
    assert p > false_failure_rate, f"{n_events}/{n_trials} differs from rate {rate} (p = {p:.1e})"
