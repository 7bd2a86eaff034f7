"""Logit models of counts of successes (``"s + f ~ x"``: successes and failures per row).

A count of m trials is m Bernoulli rows: its trust rule must charge the count's cumulants
(m times the Bernoulli ones), its score permutation is exact only among rows of equal m, and
counts, unlike 0/1 outcomes, can be overdispersed (clustered trials), which the variance check
must find (docs/THEORY.md 7.1).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from selective.hypotheses import CoefficientTest
from tests.stats_helpers import assert_rate_at_least, assert_rate_at_most

COUNTS = CoefficientTest(formula="s + f ~ x", term="x", model="logit")


def _counts(rng, n, trials, p, x=None):
    x = rng.normal(size=n) if x is None else x
    s = rng.binomial(trials, p)
    return pd.DataFrame({"s": s, "f": trials - s, "x": x})


def _expanded(frame: pd.DataFrame) -> pd.DataFrame:
    """The same data as one 0/1 row per trial."""
    rows = [(1.0, x) for s, x in zip(frame.s, frame.x, strict=True) for _ in range(s)]
    rows += [(0.0, x) for f, x in zip(frame.f, frame.x, strict=True) for _ in range(f)]
    return pd.DataFrame(rows, columns=["y", "x"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_are_trusted_as_their_trials_would_be(seed):
    """The trust rule charges a count the cumulants of its m trials: the aggregated fit gets the
    trusted level (and p-value) of the same data as one 0/1 row per trial, whose fit is the same."""
    rng = np.random.default_rng(seed)
    n = 40
    frame = _counts(rng, n, rng.integers(2, 30, size=n), 0.3, x=np.round(rng.normal(size=n), 1))
    counts = COUNTS.run(frame)
    trials = CoefficientTest(formula="y ~ x", term="x", model="logit").run(_expanded(frame))
    assert counts.pvalue_naive == pytest.approx(trials.pvalue_naive, rel=1e-7)
    assert counts.trusted_level == pytest.approx(trials.trusted_level, rel=1e-9)
    assert counts.trusted_level < 1.0


def test_no_permutation_for_counts():
    """Counts are exchangeable only with equal trials and equal dispersion (measured before: trials
    1 and 30 set by the tested group, 3.5% at 0.01; a beta-binomial in 12 of 60 rows, 2.6% at
    0.01, the within-strata check missing it): counts have no exact version, the ordinary result is
    returned; 0/1 outcomes keep the permutation."""
    rng = np.random.default_rng(3)
    g = np.repeat([0.0, 1.0], 20)
    for trials in (np.where(g == 1, 1, 30), np.full(40, 12)):
        assert COUNTS.run_at_level(_counts(rng, 40, trials, 0.3, x=g), 1e-3, rng=1).pvalue_method == "asymptotic"
    binary = _counts(rng, 40, np.ones(40, dtype=int), 0.3, x=g)
    binary["s"] = (rng.random(40) < np.where(g == 1, 0.85, 0.15)).astype(int)  # an effect: p below the level
    binary["f"] = 1 - binary["s"]
    single = CoefficientTest(formula="s ~ x", term="x", model="logit")
    assert single.run_at_level(binary, 1e-3, rng=1).pvalue_method == "permutation"


@pytest.mark.parametrize("s, f, what", [
    ([3, 5, -1, 2] * 10, [4, 4, 4, 4] * 10, "row 2 \\(position\\) has -1 successes out of 3 trials"),
    ([3, 5, 1.5, 2] * 10, [4, 4, 4, 4] * 10, "row 2 \\(position\\) has 1.5 successes out of 5.5 trials"),
    ([3, 5, 0, 2] * 10, [4, 4, 0, 4] * 10, "row 2 \\(position\\) has 0 successes out of 0 trials"),
])
def test_counts_must_be_whole_and_non_negative(s, f, what):
    frame = pd.DataFrame({"s": s, "f": f, "x": np.arange(40.0)})
    with pytest.raises(ValueError, match="must hold whole, non-negative numbers with at least one trial in every "
                                         f"row; {what}"):
        COUNTS.run(frame)


def _fires(frame: pd.DataFrame) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = COUNTS.run(frame)
    fired = "overdispersed" in res.method
    assert not fired or res.trusted_level == 1.0
    return fired


def test_the_variance_check_finds_overdispersed_counts():
    """Beta-binomial counts (intra-class correlation 0.1 over 30 trials: variance 3.9 times the
    binomial's) fire the check; binomial counts rarely do. One-sided binomial checks of the fire
    rates at false-failure rate 1e-6 each: a check without power (or the Bernoulli rule, which has
    no check) fails the first, one that fires at random fails the second."""
    rng = np.random.default_rng(4)
    n, m, rho, reps = 60, 30, 0.1, 200
    a, b = 0.3 * (1 - rho) / rho, 0.7 * (1 - rho) / rho
    over = sum(_fires(_counts(rng, n, np.full(n, m), rng.beta(a, b, size=n))) for _ in range(reps))
    assert_rate_at_least(over, reps, 0.9)
    plain = sum(_fires(_counts(rng, n, np.full(n, m), 0.3)) for _ in range(reps))
    assert_rate_at_most(plain, reps, 0.05)


def test_zero_one_outcomes_keep_their_rule():
    """Two outcome columns of one trial each are 0/1 outcomes: no variance check, the Bernoulli rule."""
    rng = np.random.default_rng(5)
    frame = _counts(rng, 80, np.ones(80, dtype=int), 0.4)
    counts = COUNTS.run(frame)
    single = CoefficientTest(formula="s ~ x", term="x", model="logit").run(frame)
    assert counts.pvalue_naive == pytest.approx(single.pvalue_naive, rel=1e-9)
    assert counts.trusted_level == pytest.approx(single.trusted_level, rel=1e-12)


def test_the_method_says_what_set_a_glm_trusted_level():
    """A GLM's trusted level comes from the shape of the tested column's score (docs/THEORY.md 7.1):
    the method says which shape, with the numbers the rule used, and the report's note carries it."""
    from selective import Analysis
    from selective.hypotheses import _trust
    from selective.hypotheses._null_fit import null_fit_means
    from selective.hypotheses._trust_model import SHAPE_MARK, shape_reason

    rng = np.random.default_rng(6)
    frame = _counts(rng, 60, rng.integers(2, 30, size=60), 0.3, x=rng.lognormal(size=60))
    res = COUNTS.run(frame)
    assert 0 < res.trusted_level < 1
    fit = res.model_result
    details: dict = {}
    null_means = null_fit_means(fit, [1], [0.0])
    level = _trust.glm_trusted_level(np.asarray(fit.model.exog), null_means, [1], "binomial",
                                     alternative="two-sided", trials=fit.model.n_trials, details=details)
    assert level == res.trusted_level
    reason = shape_reason(res.method)
    assert reason.startswith(f"{SHAPE_MARK} of 'x' at the means of the null fit (skewness "
                             f"{details['skewness']:.2g}, ")
    analysis = Analysis(frame, rng=1, n_candidates=1000)
    analysis.test(COUNTS)
    assert reason in analysis.report().frame.note.iloc[0]
    # no reason where nothing was charged (trusted at every level) or the check failed (level 1)
    assert shape_reason(CoefficientTest(formula="y ~ x", term="x").run(
        pd.DataFrame({"y": rng.normal(size=50), "x": rng.normal(size=50)})).method) == ""
