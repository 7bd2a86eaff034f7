"""Under the null each exact test rejects at rate alpha, and its interval covers at its level.

Each check is a two-sided binomial test with false-failure rate 1e-6 (the chance a correct
implementation fails; ``stats_helpers.FALSE_FAILURE_RATE``). With 3,000 trials at
alpha = 0.05 a check fails with probability 0.45 (true rate 7%) to 0.69 (3%); a p-value halved
or doubled by a one-sided / two-sided mix-up (2.5% or 10%) fails with probability above 0.98,
and a normal quantile in place of the t quantile at n = 8 (true rate 9.1%) almost surely.
Coverage at 90%: fails with probability about 1/2 once the true coverage is off by 2.7 points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from stats_helpers import assert_rate_near

from selective.hypotheses import (
    OneSampleTTest,
    PearsonCorrelationTest,
    TwoSampleTTest,
)

ALPHA = 0.05
N_TRIALS = 3_000


def rejections(spec, make_frame, rng, n_trials=N_TRIALS):
    return sum(spec.run(make_frame(rng)).pvalue_naive <= ALPHA for _ in range(n_trials))


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_one_sample_t_rejects_at_alpha_under_the_null(alternative):
    rng = np.random.default_rng(20_240_611)
    spec = OneSampleTTest(column="y", value=1.5, alternative=alternative)
    hits = rejections(spec, lambda r: pd.DataFrame({"y": 1.5 + 2.0 * r.standard_normal(8)}), rng)
    assert_rate_near(hits, N_TRIALS, ALPHA)


def test_two_sample_student_t_rejects_at_alpha_under_the_null():
    usevar = "pooled"
    rng = np.random.default_rng(20_240_612)
    groups = np.array(["a"] * 5 + ["b"] * 9)
    spec = TwoSampleTTest(column="y", group="g", usevar=usevar)
    hits = rejections(spec, lambda r: pd.DataFrame({"y": r.standard_normal(14), "g": groups}), rng)
    assert_rate_near(hits, N_TRIALS, ALPHA)


def test_pearson_rejects_at_alpha_under_the_null():
    rng = np.random.default_rng(20_240_613)
    spec = PearsonCorrelationTest(column1="x", column2="y", alternative="less")
    hits = rejections(spec, lambda r: pd.DataFrame({"x": r.standard_normal(10), "y": r.standard_normal(10)}), rng)
    assert_rate_near(hits, N_TRIALS, ALPHA)


def test_two_sample_welch_interval_covers_at_its_level():
    confidence_level = 0.9
    # Unequal variances and sizes; Welch's interval is approximate but good to ~0.3 points here.
    rng = np.random.default_rng(20_240_615)
    groups = np.array(["a"] * 15 + ["b"] * 25)
    spec = TwoSampleTTest(column="y", group="g", usevar="unequal", confidence_level=confidence_level)
    covered = 0
    for _ in range(N_TRIALS):
        y = np.where(groups == "a", 2.0 + 3.0 * rng.standard_normal(40), 0.5 + rng.standard_normal(40))
        low, high = spec.run(pd.DataFrame({"y": y, "g": groups})).ci_naive
        covered += low <= 1.5 <= high
    assert_rate_near(covered, N_TRIALS, confidence_level)
