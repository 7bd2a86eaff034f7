"""The rules behind TestResult.trusted_level, each against an independent computation.

Exact rules (one and two proportions, 2x2 tables, chi-square against F) are checked against
brute-force enumeration of the null law through the specs' own ``run``; the Edgeworth rules
against their closed forms and complete permutation enumeration; Pitman's moments against
enumeration. No randomness except the Monte Carlo certificate, whose check uses a fixed seed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    ChiSquareIndependenceTest,
    OneSampleProportionTest,
    TwoSampleProportionTest,
    _glm_shape,
    _trust,
)
from selective.hypotheses._resample import all_permutations
from selective.hypotheses._trust import (
    LEVEL_GRID,
    RATE_TOLERANCE,
    certified_trusted_level,
    chi2_vs_f_trusted_level,
    discrete_trusted_level,
    grid_trusted_level,
    one_proportion_trusted_level,
    pitman_moments,
    spearman_trusted_level,
    studentised_trusted_level,
    t_reference_ratio,
    two_proportion_trusted_level,
)

ALTERNATIVES = ["two-sided", "less", "greater"]


def exact_size_check(pvalues, probs, trusted):
    """Brute force: the rejection rate is within tolerance at every attainable p-value (and at
    ``trusted`` itself) from ``trusted`` on, and (when ``trusted`` > 0) not just below it."""
    pvalues, probs = np.asarray(pvalues, dtype=float), np.asarray(probs, dtype=float)
    keep = ~np.isnan(pvalues)
    pvalues, probs = pvalues[keep], probs[keep]

    def rate(u):
        return probs[pvalues <= u * (1 + 1e-9)].sum()

    for u in [trusted, *pvalues[pvalues >= trusted]]:
        if u > 0:
            assert rate(u) <= (1 + RATE_TOLERANCE) * u * (1 + 1e-9), (u, rate(u))
    if trusted > 0:
        below = trusted * (1 - 1e-6)
        assert rate(below) > (1 + RATE_TOLERANCE) * below


class TestGrid:
    def test_grid_trusted_level_is_the_last_level_of_the_leading_run(self):
        ok = np.ones(len(LEVEL_GRID), dtype=bool)
        assert grid_trusted_level(ok) == LEVEL_GRID[-1]
        ok[40] = False  # 1e-2.5: trusted from the level just above
        assert grid_trusted_level(ok) == LEVEL_GRID[39]
        ok[10] = False  # a failure higher up wins, whatever holds below it
        assert grid_trusted_level(ok) == LEVEL_GRID[9]
        assert grid_trusted_level(np.zeros(len(LEVEL_GRID), dtype=bool)) == 1.0  # level 1 always holds

    def test_grid_trusted_level_is_vectorised(self):
        ok = np.ones((3, len(LEVEL_GRID)), dtype=bool)
        ok[1, 20] = False
        ok[2, :] = False
        np.testing.assert_array_equal(grid_trusted_level(ok), [LEVEL_GRID[-1], LEVEL_GRID[19], 1.0])


class TestDiscreteRule:
    @pytest.mark.parametrize("seed", range(5))
    def test_discrete_trusted_level_against_brute_force(self, seed):
        rng = np.random.default_rng(seed)
        probs = rng.dirichlet(np.ones(30))
        pvalues = np.sort(rng.random(30)) ** 3  # some anti-conservative, some not
        pvalues[rng.integers(0, 30, 3)] = np.nan  # outcomes where the test does not run
        trusted = discrete_trusted_level(np.log(pvalues), np.log(probs))
        exact_size_check(pvalues, probs, trusted)

    def test_a_valid_discrete_test_is_trusted_everywhere(self):
        # p-values equal to the upper tail probabilities: exactly valid at every level
        probs = scipy.stats.binom.pmf(np.arange(21), 20, 0.3)
        pvalues = scipy.stats.binom.sf(np.arange(21) - 1, 20, 0.3)
        assert discrete_trusted_level(np.log(pvalues), np.log(probs)) == 0.0

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize(("nobs", "value", "variance"), [(60, 0.1, "null"), (40, 0.5, "null"), (50, 0.2, "sample")])
    def test_one_proportion_against_enumeration_through_run(self, nobs, value, variance, alternative):
        spec = OneSampleProportionTest(column="b", value=value, alternative=alternative, variance=variance)
        pvalues = []
        for k in range(nobs + 1):
            data = pd.DataFrame({"b": [1] * k + [0] * (nobs - k)})
            try:
                res = spec.run(data)
            except ValueError:  # the Wald test refuses 0 or nobs successes: no rejection
                pvalues.append(np.nan)
                continue
            assert res.trusted_level == one_proportion_trusted_level(nobs, value, alternative=alternative,
                                                                     variance=variance)
            pvalues.append(res.pvalue_naive)
        probs = scipy.stats.binom.pmf(np.arange(nobs + 1), nobs, value)
        exact_size_check(pvalues, probs, res.trusted_level)

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize(("n1", "n2", "successes"), [(30, 40, 8), (15, 60, 20), (25, 25, 25)])
    def test_two_proportions_against_enumeration_through_run(self, n1, n2, successes, alternative):
        spec = TwoSampleProportionTest(column="b", group="g", alternative=alternative)
        chi = ChiSquareIndependenceTest(column1="g", column2="b")
        x1 = np.arange(max(0, successes - n2), min(n1, successes) + 1)
        pvalues, chi_pvalues = [], []
        for c1 in x1:
            b = [1] * c1 + [0] * (n1 - c1) + [1] * (successes - c1) + [0] * (n2 - successes + c1)
            data = pd.DataFrame({"b": b, "g": ["a"] * n1 + ["b"] * n2})
            res = spec.run(data)
            pvalues.append(res.pvalue_naive)
            chi_res = _quiet_run(chi, data)  # warns: expected counts below 5
            chi_pvalues.append(chi_res.pvalue_naive)
        probs = scipy.stats.hypergeom.pmf(x1, n1 + n2, successes, n1)
        assert res.trusted_level == two_proportion_trusted_level(n1, n2, successes, alternative=alternative)
        exact_size_check(pvalues, probs, res.trusted_level)
        exact_size_check(chi_pvalues, probs, chi_res.trusted_level)  # the 2x2 chi-square: the same rule

    def test_rare_events_are_trusted_only_at_large_levels(self):
        # 10 successes among 1,000 rows: the pooled z-test is not trusted at 0.05, but with 1,000
        # successes it is, down to about 0.01
        assert two_proportion_trusted_level(500, 500, 10, alternative="two-sided") > 0.05
        assert two_proportion_trusted_level(5000, 5000, 1000, alternative="two-sided") < 0.02


def _quiet_run(spec, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        return spec.run(data)


class TestEdgeworthRules:
    def test_studentised_level_grows_with_skewness(self):
        levels = [studentised_trusted_level(g, alternative="two-sided") for g in (0.001, 0.01, 0.05, 0.2)]
        assert levels == sorted(levels) and levels[0] < levels[-1]
        assert studentised_trusted_level(0.0, alternative="two-sided") == LEVEL_GRID[-1]

    def test_studentised_level_against_its_formula(self):
        gamma = 0.02
        trusted = studentised_trusted_level(gamma, alternative="greater")
        for u, expect in ((trusted, True), (trusted / 10 ** (1 / 16), False)):
            x = scipy.stats.norm.isf(u)
            rel = 2 * gamma * (2 * x * x + 1) / 6 * scipy.stats.norm.pdf(x) / u
            assert bool(rel <= RATE_TOLERANCE + 1e-12) is expect

    @pytest.mark.parametrize("df", [10, 49, 500])
    def test_z_reference_against_the_t_tail(self, df):
        # zero skewness: the trusted level is where P(|t_df| > z_{u/2}) <= 1.1 u, from scipy's t
        trusted = studentised_trusted_level(0.0, alternative="two-sided",
                                            reference_ratio=t_reference_ratio(df, alternative="two-sided"))
        k = int(np.flatnonzero(LEVEL_GRID == trusted)[0])
        for u in LEVEL_GRID[: k + 1]:
            assert 2 * scipy.stats.t.sf(scipy.stats.norm.isf(u / 2), df) <= 1.1 * u + 1e-15
        if k + 1 < len(LEVEL_GRID):
            u = LEVEL_GRID[k + 1]
            assert 2 * scipy.stats.t.sf(scipy.stats.norm.isf(u / 2), df) > 1.1 * u

    @pytest.mark.parametrize(("q", "df_resid"), [(2, 20), (3, 200), (5, 5000)])
    def test_chi2_vs_f_against_the_f_tail(self, q, df_resid):
        trusted = chi2_vs_f_trusted_level(q, df_resid)
        k = int(np.flatnonzero(LEVEL_GRID == trusted)[0])
        ratio = scipy.stats.f.sf(scipy.stats.chi2.isf(LEVEL_GRID, q) / q, q, df_resid) / LEVEL_GRID
        assert np.all(ratio[: k + 1] <= 1.1)
        assert k + 1 == len(LEVEL_GRID) or ratio[k + 1] > 1.1


class TestPitman:
    @pytest.mark.parametrize("seed", range(3))
    def test_pitman_moments_against_enumeration(self, seed):
        rng = np.random.default_rng(seed)
        a = scipy.stats.rankdata(rng.integers(0, 3, 7))  # ties
        b = rng.exponential(size=7)
        t = (b - b.mean())[all_permutations(7)] @ (a - a.mean())
        m2 = np.mean(t**2)
        skew, kurt = pitman_moments(a, b)
        np.testing.assert_allclose([skew, kurt], [np.mean(t**3) / m2**1.5, np.mean(t**4) / m2**2], rtol=1e-10)

    @pytest.mark.parametrize("n", [10, 25, 100])
    def test_untied_spearman_kurtosis_against_closed_form(self, n):
        r = np.arange(1.0, n + 1)
        skew, kurt = pitman_moments(r, r)
        assert abs(skew) < 1e-12
        delta = 36 * (n - 2) * (n - 3) / (25 * n * (n - 1) * (n + 1))  # rho's kurtosis minus Pearson r's
        np.testing.assert_allclose(kurt - 3 * (n - 1) / (n + 1), delta, rtol=1e-10)

    def test_spearman_rule_against_the_exact_null_at_n_10(self):
        # all 10! permutations: the t approximation's exact size at every attainable p-value
        n = 10
        perms = all_permutations(n).astype(np.int64)
        s = ((perms - np.arange(n)) ** 2).sum(axis=1)
        rho = 1 - 6 * s / (n**3 - n)
        with np.errstate(divide="ignore"):
            t = rho * np.sqrt((n - 2) / (1 - rho**2))
        pvalues = 2 * scipy.stats.t.sf(np.abs(t), n - 2)
        trusted = spearman_trusted_level(np.arange(1.0, n + 1), np.arange(1.0, n + 1), alternative="two-sided")
        assert 0 < trusted < 1
        values, counts = np.unique(pvalues, return_counts=True)
        size = np.cumsum(counts) / len(pvalues)
        kept = values >= trusted
        assert np.all(size[kept] <= 1.1 * values[kept])

    def test_spearman_is_not_trusted_below_ten_pairs(self):
        assert spearman_trusted_level(np.arange(9.0), np.arange(9.0), alternative="two-sided") == 1.0

    def test_ties_coarsen_the_lattice_and_raise_the_level(self):
        n = 60
        untied = spearman_trusted_level(np.arange(n * 1.0), np.arange(n * 1.0), alternative="two-sided")
        binary = scipy.stats.rankdata(np.repeat([0, 1], [50, 10]))
        assert spearman_trusted_level(binary, np.arange(n * 1.0), alternative="two-sided") > untied


class TestMonteCarloCertificate:
    def test_uniform_pvalues_are_certified_down_to_the_draws(self):
        p = np.random.default_rng(1).random(200_000)  # certifiable down to about 5000 / 200000
        assert 0.02 < certified_trusted_level(p) < 0.04

    def test_anti_conservative_pvalues_are_not(self):
        p = np.random.default_rng(2).random(200_000) ** 1.3  # rate u^(1/1.3) > 1.1 u below 0.66
        assert certified_trusted_level(p) > 0.5

    def test_table_certificate_depends_on_the_margins_only(self):
        a = np.array([[5, 5, 5], [10, 10, 20], [20, 20, 15]])
        b = np.array([[10, 0, 5], [5, 15, 20], [20, 20, 15]])  # same margins
        assert _trust.chi_square_table_trusted_level(a) == _trust.chi_square_table_trusted_level(b)


class TestGlmRule:
    def test_batched_levels_equal_one_at_a_time(self):
        rng = np.random.default_rng(3)
        design = np.column_stack([np.ones(80), rng.exponential(size=80), rng.normal(size=80)])
        mu = rng.uniform(0.2, 3.0, size=(4, 80))
        batched = _trust.glm_trusted_level(design, mu, [1], "poisson", alternative="two-sided")
        single = [_trust.glm_trusted_level(design, m, [1], "poisson", alternative="two-sided") for m in mu]
        np.testing.assert_array_equal(batched, single)

    def test_heavy_tailed_exposure_and_rare_events_raise_the_level(self):
        rng = np.random.default_rng(4)
        normal = np.column_stack([np.ones(300), rng.normal(size=300)])
        heavy = np.column_stack([np.ones(300), rng.lognormal(sigma=1.5, size=300)])
        common, rare = np.full(300, 2.0), np.full(300, 0.02)
        level = _trust.glm_trusted_level
        assert level(heavy, common, [1], "poisson", alternative="two-sided") > level(
            normal, common, [1], "poisson", alternative="two-sided")
        assert level(normal, rare, [1], "binomial", alternative="two-sided") > level(
            normal, np.full(300, 0.4), [1], "binomial", alternative="two-sided")

    def test_grid_step_of_a_covariate(self):
        assert _glm_shape.grid_step(np.array([0.0, 1.0, 1.0, 0.0])) == 1.0
        assert _glm_shape.grid_step(np.array([0.5, 2.0, 3.5])) == 1.5
        assert _glm_shape.grid_step(np.random.default_rng(5).normal(size=50)) == 0.0


def test_tolerance_is_bradleys():
    assert RATE_TOLERANCE == 0.1 and math.isclose(LEVEL_GRID[16], 0.1)
