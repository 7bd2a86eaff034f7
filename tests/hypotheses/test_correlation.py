"""Correlation tests against scipy called directly (rtol 1e-12)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from selective.hypotheses import PearsonCorrelationTest, SpearmanCorrelationTest

RTOL = 1e-12
ALTERNATIVES = ["two-sided", "less", "greater"]


def close(actual, expected, rtol=RTOL):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


class TestPearsonCorrelationTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize("columns", [("y", "x1"), ("x1", "x2"), ("y", "w")])
    def test_pearson_against_scipy(self, dataset, alternative, columns):
        res = PearsonCorrelationTest(column1=columns[0], column2=columns[1], alternative=alternative,
                                     confidence_level=0.9).run(dataset)
        ref = scipy.stats.pearsonr(dataset[columns[0]], dataset[columns[1]], alternative=alternative)
        n = len(dataset)
        r = ref.statistic
        close([res.estimate, res.pvalue_naive, res.df], [r, ref.pvalue, n - 2])
        close(res.statistic, r * math.sqrt((n - 2) / (1 - r * r)))
        close(res.ci_naive, tuple(ref.confidence_interval(0.9)))

    def test_pvalue_is_the_t_test_of_the_slope(self, dataset):
        res = PearsonCorrelationTest(column1="y", column2="x1").run(dataset)
        slope = scipy.stats.linregress(dataset.x1, dataset.y)
        close(res.pvalue_naive, slope.pvalue, rtol=1e-9)


class TestSpearmanCorrelationTest:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize("columns", [("y", "x1"), ("b", "x1"), ("c", "h_codes")])
    def test_spearman_against_scipy(self, dataset, alternative, columns):
        frame = dataset.assign(h_codes=dataset.h.map({"u": 0, "v": 1, "w": 2}))
        res = SpearmanCorrelationTest(column1=columns[0], column2=columns[1], alternative=alternative).run(frame)
        ref = scipy.stats.spearmanr(frame[columns[0]], frame[columns[1]], alternative=alternative)
        n = len(frame)
        rho = ref.statistic
        close([res.estimate, res.pvalue_naive, res.df], [rho, ref.pvalue, n - 2])
        close(res.statistic, rho * math.sqrt((n - 2) / (1 - rho * rho)))
        crit = scipy.stats.norm.isf(0.025 if alternative == "two-sided" else 0.05)
        z, half = math.atanh(rho), crit * math.sqrt(1.06 / (n - 3))
        low, high = math.tanh(z - half), math.tanh(z + half)
        expected = {"two-sided": (low, high), "less": (-1.0, high), "greater": (low, 1.0)}[alternative]
        close(res.ci_naive, expected)
