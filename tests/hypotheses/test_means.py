"""t- and z-tests against statsmodels and scipy called directly (relative tolerance 1e-12)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ttest_ind, zconfint, ztest

from selective.hypotheses import OneSampleTTest, OneSampleZTest, PairedTTest, TwoSampleTTest, TwoSampleZTest

RTOL = 1e-12
# scipy sums in another order: on the badly scaled dataset (values 1e6 +- 1e-3) a difference of
# means keeps only ~9 significant digits, so cross-checks against scipy use a looser tolerance.
SCIPY_RTOL = 1e-6
ALTERNATIVES = ["two-sided", "less", "greater"]
SM = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}


def close(actual, expected, rtol=RTOL):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


def groups(frame, column="y"):
    return frame.loc[frame.g == "ctl", column].to_numpy(float), frame.loc[frame.g == "trt", column].to_numpy(float)


class TestOneSampleTTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_t_against_statsmodels(self, dataset, alternative):
        x = dataset.y.to_numpy(float)
        value = float(np.median(x))
        res = OneSampleTTest(column="y", value=value, alternative=alternative, confidence_level=0.9).run(dataset)
        d = DescrStatsW(x)
        t, p, df = d.ttest_mean(value, alternative=SM[alternative])
        close([res.statistic, res.pvalue_naive, res.df, res.estimate], [t, p, df, d.mean])
        low, high = d.tconfint_mean(alpha=0.1, alternative=SM[alternative])
        close(res.ci_naive, (low, high))
        assert res.n_obs == len(x) and res.alternative == alternative and res.confidence_level == 0.9

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_t_against_scipy(self, dataset, alternative):
        x = dataset.y.to_numpy(float)
        res = OneSampleTTest(column="y", value=1.0, alternative=alternative).run(dataset)
        ref = scipy.stats.ttest_1samp(x, 1.0, alternative=alternative)
        close([res.statistic, res.pvalue_naive, res.df], [ref.statistic, ref.pvalue, ref.df], rtol=SCIPY_RTOL)
        close(res.ci_naive, tuple(ref.confidence_interval(0.95)), rtol=SCIPY_RTOL)


class TestPairedTTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_paired_t_against_statsmodels_and_scipy(self, dataset, alternative):
        res = PairedTTest(column1="y", column2="w", alternative=alternative).run(dataset)
        diff = dataset.y.to_numpy(float) - dataset.w.to_numpy(float)
        d = DescrStatsW(diff)
        t, p, df = d.ttest_mean(0.0, alternative=SM[alternative])
        close([res.statistic, res.pvalue_naive, res.df, res.estimate], [t, p, df, d.mean])
        close(res.ci_naive, d.tconfint_mean(alpha=0.05, alternative=SM[alternative]))
        ref = scipy.stats.ttest_rel(dataset.y, dataset.w, alternative=alternative)
        close([res.statistic, res.pvalue_naive], [ref.statistic, ref.pvalue], rtol=SCIPY_RTOL)


class TestTwoSampleTTest:
    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_two_sample_t_against_statsmodels(self, dataset, usevar, alternative):
        value = 0.25
        res = TwoSampleTTest(column="y", group="g", usevar=usevar, value=value, alternative=alternative,
                             confidence_level=0.99).run(dataset)
        x1, x2 = groups(dataset)
        t, p, df = ttest_ind(x1, x2, alternative=SM[alternative], usevar=usevar, value=value)
        cm = CompareMeans(DescrStatsW(x1), DescrStatsW(x2))
        close([res.statistic, res.pvalue_naive, res.df, res.estimate], [t, p, df, cm.d1.mean - cm.d2.mean])
        close(res.ci_naive, cm.tconfint_diff(alpha=0.01, alternative=SM[alternative], usevar=usevar))
        assert res.n_obs == len(x1) + len(x2)

    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    def test_two_sample_t_against_scipy(self, dataset, usevar):
        res = TwoSampleTTest(column="y", group="g", usevar=usevar).run(dataset)
        x1, x2 = groups(dataset)
        ref = scipy.stats.ttest_ind(x1, x2, equal_var=usevar == "pooled")
        close([res.statistic, res.pvalue_naive, res.df], [ref.statistic, ref.pvalue, ref.df], rtol=SCIPY_RTOL)

    def test_levels_choose_and_order_the_groups(self, dataset):
        forward = TwoSampleTTest(column="y", group="h", levels=("u", "w")).run(dataset)
        backward = TwoSampleTTest(column="y", group="h", levels=("w", "u")).run(dataset)
        x1 = dataset.loc[dataset.h == "u", "y"].to_numpy(float)
        x2 = dataset.loc[dataset.h == "w", "y"].to_numpy(float)
        t, p, _ = ttest_ind(x1, x2)
        close([forward.statistic, forward.pvalue_naive], [t, p])
        close(backward.statistic, -t)
        close(backward.estimate, -forward.estimate)
        assert forward.hypothesis == "mean(y | h='u') - mean(y | h='w') = 0 (Student t-test)"


class TestOneSampleZTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_z_against_statsmodels(self, dataset, alternative):
        x = dataset.y.to_numpy(float)
        value = float(x.mean() + x.std())
        res = OneSampleZTest(column="y", value=value, alternative=alternative).run(dataset)
        z, p = ztest(x, value=value, alternative=SM[alternative])
        close([res.statistic, res.pvalue_naive, res.estimate], [z, p, DescrStatsW(x).mean])
        close(res.ci_naive, zconfint(x, alpha=0.05, alternative=SM[alternative]))
        assert np.isnan(res.df)


class TestTwoSampleZTest:
    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_two_sample_z_against_statsmodels(self, dataset, usevar, alternative):
        res = TwoSampleZTest(column="y", group="g", usevar=usevar, alternative=alternative).run(dataset)
        x1, x2 = groups(dataset)
        z, p = ztest(x1, x2, alternative=SM[alternative], usevar=usevar)
        cm = CompareMeans(DescrStatsW(x1), DescrStatsW(x2))
        close([res.statistic, res.pvalue_naive, res.estimate], [z, p, cm.d1.mean - cm.d2.mean])
        close(res.ci_naive, cm.zconfint_diff(alpha=0.05, alternative=SM[alternative], usevar=usevar))


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e160, 1e300])
def test_the_same_data_times_a_constant_gives_the_same_p_value(scale):
    """t and z tests are scale-free: at 1e+-155 and beyond the old code returned 0, 1 or NaN."""
    import warnings

    from selective.hypotheses import OneSampleTTest, OneSampleZTest, TwoSampleTTest, TwoSampleZTest

    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 1.0, 40)
    groups = np.r_[["a"] * 20, ["b"] * 20]
    specs = [OneSampleTTest(column="x"), OneSampleZTest(column="x"),
             TwoSampleTTest(column="x", group="g", levels=("a", "b")),
             TwoSampleTTest(column="x", group="g", levels=("a", "b"), usevar="unequal"),
             TwoSampleZTest(column="x", group="g", levels=("a", "b"))]
    base = pd.DataFrame({"x": x, "g": groups})
    scaled = pd.DataFrame({"x": x * scale, "g": groups})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for spec in specs:
            r0, r1 = spec.run(base), spec.run(scaled)
            assert r1.pvalue_naive == pytest.approx(r0.pvalue_naive, rel=1e-12), spec
            assert r1.statistic == pytest.approx(r0.statistic, rel=1e-12), spec
            assert r1.estimate == pytest.approx(r0.estimate * scale, rel=1e-12), spec
            assert r1.ci_naive[0] == pytest.approx(r0.ci_naive[0] * scale, rel=1e-12), spec


def test_sorted_levels_say_which_group_came_first():
    """Without ``levels`` the groups are taken in sorted order; the method names that order, so 0/1
    coding is read as group 0 minus group 1 (control minus treatment), and the estimate agrees."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"y": np.r_[rng.normal(0, 1, 40), rng.normal(2, 1, 40)], "treat": [0] * 40 + [1] * 40})
    r = TwoSampleTTest(column="y", group="treat").run(frame)
    assert "levels in sorted order: treat=0 minus treat=1" in r.method
    assert r.estimate == pytest.approx(frame.y[:40].mean() - frame.y[40:].mean()) and r.estimate < 0
    named = TwoSampleTTest(column="y", group="treat", levels=(1, 0)).run(frame)
    assert "sorted order" not in named.method and named.estimate == pytest.approx(-r.estimate)


def test_one_sided_hypothesis_label_names_the_direction():
    two = OneSampleTTest(column="y")
    up = OneSampleTTest(column="y", alternative="greater")
    assert up.hypothesis == two.hypothesis + " [one-sided: greater]"
    assert OneSampleTTest(column="y", alternative="greater", label="mine").hypothesis == "mine"
