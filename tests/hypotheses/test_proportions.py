"""Proportion and chi-square tests against statsmodels and scipy called directly (rtol 1e-12)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from statsmodels.stats.contingency_tables import Table
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest

from selective.exceptions import SelectiveWarning
from selective.hypotheses import ChiSquareIndependenceTest, OneSampleProportionTest, TwoSampleProportionTest

RTOL = 1e-12
ALTERNATIVES = ["two-sided", "less", "greater"]
SM = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}


def close(actual, expected, rtol=RTOL):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


def one_sided(interval_two_sided_at_2alpha, alternative, bounds):
    low, high = interval_two_sided_at_2alpha
    return (low, bounds[1]) if alternative == "greater" else (bounds[0], high)


class TestOneSampleProportionTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize("variance", ["null", "sample"])
    def test_one_sample_proportion_against_statsmodels(self, dataset, alternative, variance):
        value = 0.3
        res = OneSampleProportionTest(column="b", value=value, variance=variance, alternative=alternative).run(dataset)
        count, nobs = int(dataset.b.sum()), len(dataset)
        z, p = proportions_ztest(count, nobs, value=value, alternative=SM[alternative],
                                 prop_var=value if variance == "null" else False)
        close([res.statistic, res.pvalue_naive, res.estimate], [z, p, count / nobs])
        method = "wilson" if variance == "null" else "normal"
        if alternative == "two-sided":
            expected = proportion_confint(count, nobs, alpha=0.05, method=method)
        else:  # a one-sided bound at level 1 - a is an end of the two-sided interval at 1 - 2a
            expected = one_sided(proportion_confint(count, nobs, alpha=0.10, method=method), alternative, (0, 1))
        close(res.ci_naive, expected)

    def test_success_value_booleans_and_strings_agree(self, dataset):
        frame = dataset.assign(outcome=np.where(dataset.b == 1, "yes", "no"))
        numeric = OneSampleProportionTest(column="b").run(frame)
        boolean = OneSampleProportionTest(column="t").run(frame)
        labelled = OneSampleProportionTest(column="outcome", success="yes").run(frame)
        assert numeric.pvalue_naive == boolean.pvalue_naive == labelled.pvalue_naive
        assert labelled.hypothesis == "P(outcome == 'yes') = 0.5 (score z-test)"

    def test_score_test_is_the_square_root_of_the_chisquare_goodness_of_fit(self, dataset):
        count, nobs, value = int(dataset.b.sum()), len(dataset), 0.3
        res = OneSampleProportionTest(column="b", value=value).run(dataset)
        chi2 = scipy.stats.chisquare([count, nobs - count], [nobs * value, nobs * (1 - value)])
        close([res.statistic**2, res.pvalue_naive], [chi2.statistic, chi2.pvalue], rtol=1e-10)


class TestTwoSampleProportionTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_two_sample_proportion_against_statsmodels(self, dataset, alternative):
        res = TwoSampleProportionTest(column="b", group="g", alternative=alternative).run(dataset)
        c1, n1 = int(dataset.b[dataset.g == "ctl"].sum()), int((dataset.g == "ctl").sum())
        c2, n2 = int(dataset.b[dataset.g == "trt"].sum()), int((dataset.g == "trt").sum())
        z, p = proportions_ztest(np.array([c1, c2]), np.array([n1, n2]), alternative=SM[alternative])
        close([res.statistic, res.pvalue_naive, res.estimate], [z, p, c1 / n1 - c2 / n2])
        alpha = 0.05 if alternative == "two-sided" else 0.10
        expected = confint_proportions_2indep(c1, n1, c2, n2, method="wald", compare="diff", alpha=alpha)
        if alternative != "two-sided":
            expected = one_sided(expected, alternative, (-1, 1))
        close(res.ci_naive, np.clip(expected, -1, 1))
        assert res.n_obs == n1 + n2

    def test_two_sided_equals_the_chisquare_on_the_2x2_table(self, dataset):
        res = TwoSampleProportionTest(column="b", group="g").run(dataset)
        table = pd.crosstab(dataset.g, dataset.b).to_numpy()
        chi2, p, _, _ = scipy.stats.chi2_contingency(table, correction=False)
        close([res.statistic**2, res.pvalue_naive], [chi2, p], rtol=1e-10)

    def test_interval_is_clipped_to_minus_one_one(self):
        frame = pd.DataFrame({"b": [1, 1, 1, 1, 0, 0, 0, 1], "g": ["a"] * 4 + ["b"] * 4})
        low, high = TwoSampleProportionTest(column="b", group="g", confidence_level=0.999).run(frame).ci_naive
        assert -1 <= low < high == 1.0


class TestChiSquareIndependenceTest:
    @pytest.mark.parametrize("columns", [("g", "h"), ("h", "b"), ("g", "t")])
    def test_chisquare_against_statsmodels_and_scipy(self, dataset, columns):
        spec = ChiSquareIndependenceTest(column1=columns[0], column2=columns[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)
            res = spec.run(dataset)
        table = pd.crosstab(dataset[columns[0]], dataset[columns[1]])
        ref = Table(table, shift_zeros=False).test_nominal_association()
        close([res.statistic, res.pvalue_naive, res.df], [ref.statistic, ref.pvalue, ref.df])
        chi2, p, df, _ = scipy.stats.chi2_contingency(table.to_numpy(), correction=False)
        close([res.statistic, res.pvalue_naive, res.df], [chi2, p, df], rtol=1e-10)
        assert np.isnan(res.estimate) and all(np.isnan(res.ci_naive)) and res.n_obs == len(dataset)

    def test_zero_cells_are_not_shifted(self):
        frame = pd.DataFrame({"a": list("xxxxxyyyyy") * 3, "b": list("ppppprrrrs") * 3})
        with pytest.warns(SelectiveWarning, match="expected count"):
            res = ChiSquareIndependenceTest(column1="a", column2="b").run(frame)
        chi2, p, df, _ = scipy.stats.chi2_contingency(pd.crosstab(frame.a, frame.b).to_numpy(), correction=False)
        close([res.statistic, res.pvalue_naive, res.df], [chi2, p, df], rtol=1e-10)


def test_two_proportion_sorted_levels_say_which_group_came_first():
    frame = pd.DataFrame({"hit": [1] * 5 + [0] * 35 + [1] * 15 + [0] * 25, "arm": ["b"] * 40 + ["a"] * 40})
    r = TwoSampleProportionTest(column="hit", group="arm").run(frame)
    assert "levels in sorted order: arm='a' minus arm='b'" in r.method
    assert r.estimate == pytest.approx(15 / 40 - 5 / 40)
