"""TestResult: one frame layout for every test, and intervals rebuilt at any level, down to tiny gamma."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.special

from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    ChiSquareIndependenceTest,
    CoefficientTest,
    JointWaldTest,
    OneSampleProportionTest,
    OneSampleTTest,
    OneSampleZTest,
    PairedTTest,
    PearsonCorrelationTest,
    SpearmanCorrelationTest,
    TestResult,
    TwoSampleProportionTest,
    TwoSampleTTest,
    TwoSampleZTest,
    confidence_interval,
)

COLUMNS = ["estimate", "ci_low", "ci_high", "statistic", "df", "df_denom", "pvalue_naive", "pvalue_method",
           "trusted_level", "alternative", "confidence_level", "n_obs", "method"]

ALL_SPECS = [
    OneSampleTTest(column="y"),
    PairedTTest(column1="y", column2="w", alternative="greater"),
    TwoSampleTTest(column="y", group="g", usevar="unequal"),
    OneSampleZTest(column="y", value=1.0),
    TwoSampleZTest(column="y", group="g", alternative="less"),
    OneSampleProportionTest(column="b", value=0.3),
    TwoSampleProportionTest(column="b", group="g"),
    ChiSquareIndependenceTest(column1="g", column2="h"),
    PearsonCorrelationTest(column1="y", column2="x1"),
    SpearmanCorrelationTest(column1="y", column2="x1", alternative="greater"),
    CoefficientTest(formula="y ~ x1 + x2 + C(h)", term="x1"),
    CoefficientTest(formula="b ~ x1 + x2", term="x1", model="logit", alternative="less"),
    CoefficientTest(formula="c ~ x1", term="x1", model="poisson"),
    JointWaldTest(formula="y ~ x1 + x2 + C(h)", terms=("x1", "x2")),
    JointWaldTest(formula="c ~ x1 + x2", terms=("x1", "x2"), model="poisson"),
]
INTERVAL_SPECS = [s for s in ALL_SPECS if not isinstance(s, (ChiSquareIndependenceTest, JointWaldTest))]


def run(spec, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        return spec.run(data)


def norm_isf(tail):
    """Standard normal upper quantile by Newton's method on log P(Z > z) (scipy's log_ndtr),
    a route independent of the ndtri that scipy's isf uses."""
    z = 1.0
    for _ in range(100):
        log_sf = scipy.special.log_ndtr(-z)
        step = (log_sf - math.log(tail)) / math.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - log_sf)
        z += step
        if abs(step) < 1e-15 * z:
            break
    return z


class TestTestResult:
    def test_frames_have_the_same_columns_for_every_test(self, dataset):
        frames = [run(spec, dataset).to_frame() for spec in ALL_SPECS]
        for frame, spec in zip(frames, ALL_SPECS, strict=True):
            assert list(frame.columns) == COLUMNS
            assert frame.index.name == "hypothesis" and list(frame.index) == [spec.hypothesis]
        table = pd.concat(frames)
        assert table.index.is_unique
        assert table[["estimate", "ci_low", "ci_high", "df", "df_denom", "trusted_level"]].dtypes.eq(float).all()

    def test_result_is_frozen_and_not_collected(self, dataset):
        res = OneSampleTTest(column="y").run(dataset)
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.pvalue_naive = 0.0
        assert TestResult.__test__ is False
        assert "statsmodels" in res.method and "ttest_mean" in res.method

    def test_label_replaces_the_generated_hypothesis(self, dataset):
        res = OneSampleTTest(column="y", label="H1: mean y is zero").run(dataset)
        assert res.hypothesis == "H1: mean y is zero"
        assert OneSampleTTest(column="y", value=2.5).hypothesis == "mean(y) = 2.5 (t-test)"


@pytest.fixture
def well_scaled():
    rng = np.random.default_rng(11)
    x1 = rng.normal(size=40)
    return pd.DataFrame({"y": 0.4 + rng.normal(size=40), "x1": x1, "b": (rng.random(40) < 0.35).astype(int)})


class TestCiAt:
    @pytest.mark.parametrize("spec", INTERVAL_SPECS, ids=lambda s: type(s).__name__)
    def test_ci_at_reproduces_the_spec_run_at_that_level(self, dataset, spec):
        res = run(spec, dataset)
        assert res.ci_at(spec.confidence_level) == res.ci_naive
        again = run(dataclasses.replace(spec, confidence_level=0.8), dataset)
        np.testing.assert_allclose(res.ci_at(0.8), again.ci_naive, rtol=1e-14)
        np.testing.assert_allclose(confidence_interval(spec, dataset, 0.8), again.ci_naive, rtol=1e-14)

    @pytest.mark.parametrize("spec", INTERVAL_SPECS, ids=lambda s: type(s).__name__)
    def test_intervals_widen_as_alpha_shrinks(self, dataset, spec):
        res = run(spec, dataset)
        widths = []
        for alpha in (0.05, 1e-6, 1e-12, 1e-20, 1e-100):
            low, high = res.ci_at(alpha=alpha)
            assert not (math.isnan(low) or math.isnan(high)) and low <= res.estimate <= high
            widths.append((low, high))
        assert all(a[0] >= b[0] and a[1] <= b[1] for a, b in zip(widths, widths[1:], strict=False))

    @pytest.mark.parametrize("gamma", [1e-6, 1e-12, 1e-30])
    def test_tiny_alpha_t_interval_is_dual_to_the_test(self, well_scaled, gamma):
        # At the end of the 1 - gamma interval the t-test's p-value is gamma; a quantile taken
        # as ppf(1 - gamma / 2) would be off by ~1e-4 relative at gamma = 1e-12 and infinite at 1e-30.
        low, high = OneSampleTTest(column="y").run(well_scaled).ci_at(alpha=gamma)
        for end in (low, high):
            p = OneSampleTTest(column="y", value=end).run(well_scaled).pvalue_naive
            np.testing.assert_allclose(p, gamma, rtol=1e-7)

    @pytest.mark.parametrize("gamma", [1e-12, 1e-30])
    def test_tiny_alpha_wilson_interval_is_dual_to_the_score_test(self, well_scaled, gamma):
        low, high = OneSampleProportionTest(column="b").run(well_scaled).ci_at(alpha=gamma)
        for end in (low, high):
            p = OneSampleProportionTest(column="b", value=end).run(well_scaled).pvalue_naive
            np.testing.assert_allclose(p, gamma, rtol=1e-6)

    @pytest.mark.parametrize("gamma", [1e-12, 1e-30])
    def test_tiny_alpha_normal_quantiles_against_high_precision(self, well_scaled, gamma):
        res = OneSampleZTest(column="y").run(well_scaled)
        se = res.estimate / res.statistic
        low, high = res.ci_at(alpha=gamma)
        np.testing.assert_allclose((high - low) / (2 * se), norm_isf(gamma / 2), rtol=1e-12)
        pearson = PearsonCorrelationTest(column1="y", column2="x1", alternative="greater").run(well_scaled)
        z = norm_isf(gamma) / math.sqrt(len(well_scaled) - 3)
        expected = math.tanh(math.atanh(pearson.estimate) - z)
        np.testing.assert_allclose(pearson.ci_at(alpha=gamma)[0], expected, rtol=1e-12)

    def test_tests_without_intervals_give_nan(self, dataset):
        res = JointWaldTest(formula="y ~ x1 + x2", terms=("x1", "x2")).run(dataset)
        assert all(math.isnan(v) for v in res.ci_at(alpha=1e-12))

    def test_ci_at_iv(self, dataset):
        res = OneSampleTTest(column="y").run(dataset)
        with pytest.raises(TypeError, match="exactly one of `confidence_level` and `alpha`"):
            res.ci_at()
        with pytest.raises(TypeError, match="exactly one of `confidence_level` and `alpha`"):
            res.ci_at(0.9, alpha=0.1)
        with pytest.raises(ValueError, match=r"`confidence_level` must be a real number in \(0, 1\); got 1.0"):
            res.ci_at(1.0)
        with pytest.raises(ValueError, match=r"`alpha` must be a real number in \(0, 1\); got 0.0"):
            res.ci_at(alpha=0.0)
        with pytest.raises(TypeError, match="`spec` must be a test spec"):
            confidence_interval("mean(y) = 0", dataset, 0.9)
