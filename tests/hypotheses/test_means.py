"""t- and z-tests against statsmodels and scipy called directly (relative tolerance 1e-12)."""

from __future__ import annotations

import numpy as np
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
