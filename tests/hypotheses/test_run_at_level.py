"""TestResult.pvalue_method / trusted_level, and run_at_level: a p-value trusted at the level.

Rates at small levels (item (a)): where the version used is deterministic, its rejection rate
is computed exactly by enumerating the null law through the spec's own ``run_at_level`` (no
false failures). Elsewhere the rate is measured by the calibration machinery
(:mod:`selective.hypotheses.calibration`) with fixed seeds; each such check fails when a
one-sided exact binomial test rejects "rate <= level" at FALSE_FAILURE_RATE = 1e-6 (the
chance that a correct implementation fails it; the versions used are exact or permutation
p-values, whose true rate is at most the level).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import math
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE, assert_rate_at_most

from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    PVALUE_METHODS,
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
)
from selective.hypotheses import calibration as cal
from selective.hypotheses._resample import (
    STOP_HITS,
    all_subsets,
    monte_carlo_pvalue,
    n_resamples_for,
    random_two_sample_statistics,
    stratified_permutations,
    two_sample_statistics,
)
from selective.hypotheses._trust_model import VARIANCE_CHECK_LEVEL, VARIANCE_CHECK_MARK

ALL_SPECS = [
    OneSampleTTest(column="y"),
    PairedTTest(column1="y", column2="w", alternative="greater"),
    TwoSampleTTest(column="y", group="g"),
    TwoSampleTTest(column="y", group="g", usevar="unequal"),
    OneSampleZTest(column="y", value=1.0),
    TwoSampleZTest(column="y", group="g", alternative="less"),
    OneSampleProportionTest(column="b", value=0.3),
    TwoSampleProportionTest(column="b", group="g"),
    ChiSquareIndependenceTest(column1="g", column2="h"),
    ChiSquareIndependenceTest(column1="g", column2="t"),
    PearsonCorrelationTest(column1="y", column2="x1"),
    SpearmanCorrelationTest(column1="y", column2="x1", alternative="greater"),
    CoefficientTest(formula="y ~ x1 + x2 + C(h)", term="x1"),
    CoefficientTest(formula="b ~ x1 + x2", term="x1", model="logit", alternative="less"),
    CoefficientTest(formula="c ~ x1", term="x1", model="poisson"),
    JointWaldTest(formula="y ~ x1 + x2 + C(h)", terms=("x1", "x2")),
    JointWaldTest(formula="y ~ x1 + x2", terms=("x1", "x2"), use_f=False),
    JointWaldTest(formula="c ~ x1 + x2", terms=("x1", "x2"), model="poisson"),
]
EXACT_UNDER_MODEL = (OneSampleTTest, PairedTTest, PearsonCorrelationTest)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        return fn(*args, **kwargs)


def expected_run_method(spec) -> str:
    if isinstance(spec, EXACT_UNDER_MODEL):
        return "exact_under_model"
    if isinstance(spec, TwoSampleTTest):
        return "exact_under_model" if spec.usevar == "pooled" else "asymptotic"
    if isinstance(spec, (CoefficientTest, JointWaldTest)) and spec.model == "ols":
        return "exact_under_model" if not isinstance(spec, JointWaldTest) or spec.uses_f else "asymptotic"
    return "asymptotic"


class TestDeclaredMethod:
    def test_every_result_declares_its_method_and_trusted_level(self, dataset):
        for spec in ALL_SPECS:
            res = quiet(spec.run, dataset)
            assert res.pvalue_method == expected_run_method(spec), spec
            assert 0.0 <= res.trusted_level <= 1.0
            # exact only under a model the data cannot confirm at small levels, or asymptotic:
            # never trusted at every level
            assert res.trusted_level > 0.0
            frame = res.to_frame()
            assert frame["pvalue_method"].iloc[0] == res.pvalue_method
            assert frame["trusted_level"].iloc[0] == res.trusted_level
            assert res.trusted_at(1.0) and res.trusted_at(res.trusted_level)
            assert not res.trusted_at(res.trusted_level * 0.999) or res.trusted_level == 0.0

    def test_results_round_trip_through_json(self, dataset):
        for spec in ALL_SPECS:
            for res in (quiet(spec.run, dataset), quiet(spec.run_at_level, dataset, 1e-4, rng=1)):
                record = json.loads(json.dumps(res.to_dict(), allow_nan=False))
                back = TestResult.from_dict(record)
                assert same(back, res)
                for alpha in (0.05, 1e-4, 1e-9):
                    np.testing.assert_array_equal(back.ci_at(alpha=alpha), res.ci_at(alpha=alpha))

    def test_records_without_the_new_fields_read_as_untrusted(self, dataset):
        record = OneSampleTTest(column="y").run(dataset).to_dict()
        for key in ("pvalue_method", "trusted_level", "interval_rule", "df_denom"):
            del record[key]
        back = TestResult.from_dict(record)
        assert back.pvalue_method == "asymptotic" and back.trusted_level == 1.0

    def test_result_iv(self, dataset):
        res = OneSampleTTest(column="y").run(dataset)
        with pytest.raises(ValueError, match=r"`pvalue_method` must be one of 'exact', .*; got 'bootstrap'"):
            res.__class__(**{**_fields(res), "pvalue_method": "bootstrap"})
        with pytest.raises(ValueError, match=r"`trusted_level` must be a real number in \[0, 1\]; got 1.5"):
            res.__class__(**{**_fields(res), "trusted_level": 1.5})
        with pytest.raises(ValueError, match="lacks"):
            TestResult.from_dict({"hypothesis": "h"})
        assert PVALUE_METHODS == ("exact", "exact_under_model", "permutation", "asymptotic")


def _fields(res):
    return {name: getattr(res, name) for name in res.__dataclass_fields__}


def same(a: TestResult, b: TestResult) -> bool:
    """Equal in every field, interval rule included (NaN equal to NaN)."""
    return a.to_dict() == b.to_dict()


def skewed_two_groups(seed=0, n1=20, n2=180):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"y": rng.lognormal(size=n1 + n2), "g": ["a"] * n1 + ["b"] * n2})


def rare_binary(seed=0, n1=300, n2=300, prob=0.02):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"b": (rng.random(n1 + n2) < prob).astype(int), "g": ["a"] * n1 + ["b"] * n2})


class TestRunAtLevel:
    def test_a_trusted_result_comes_back_unchanged(self, dataset):
        rng = np.random.default_rng(7)
        state = rng.bit_generator.state
        for spec in (OneSampleTTest(column="y"), PearsonCorrelationTest(column1="y", column2="x1"),
                     CoefficientTest(formula="y ~ x1 + x2", term="x2")):
            assert same(spec.run_at_level(dataset, 1e-12, rng=rng), spec.run(dataset))
        assert rng.bit_generator.state == state  # nothing was resampled

    @pytest.mark.parametrize(("spec", "data", "method"), [
        (OneSampleProportionTest(column="b", value=0.02), "rare", "exact"),
        (TwoSampleProportionTest(column="b", group="g"), "rare", "exact"),
        (ChiSquareIndependenceTest(column1="g", column2="b"), "rare", "exact"),
        (TwoSampleTTest(column="y", group="g", usevar="unequal", exchangeable=True), "skewed", "permutation"),
        (TwoSampleZTest(column="y", group="g"), "skewed", "permutation"),
        (SpearmanCorrelationTest(column1="y", column2="x1"), "tiny", "permutation"),
        (SpearmanCorrelationTest(column1="y", column2="x1"), "tiny8", "exact"),
        (ChiSquareIndependenceTest(column1="g", column2="h"), "ordinary", "permutation"),
        (CoefficientTest(formula="c ~ x1", term="x1", model="poisson"), "skewed_unbalanced", "permutation"),
        (CoefficientTest(formula="c ~ x1 + C(h)", term="x1", model="poisson"), "skewed_unbalanced", "permutation"),
        (JointWaldTest(formula="c ~ x1 + x2", terms=("x1", "x2"), model="poisson"), "ordinary", "permutation"),
        # chi-square: the F law is not trusted at 1e-4 on 12 rows either; the nuisance is the
        # intercept alone, so the outcome permutation is exact
        (JointWaldTest(formula="y ~ x1 + x2", terms=("x1", "x2"), use_f=False), "tiny", "permutation"),
        (TwoSampleTTest(column="y", group="g"), "skewed", "permutation"),
        (PearsonCorrelationTest(column1="y", column2="x1"), "tiny", "permutation"),
        (CoefficientTest(formula="y ~ x1", term="x1"), "tiny", "permutation"),
    ], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
    def test_the_version_used_below_the_trusted_level(self, spec, data, method):
        data = _dataset(data)
        ordinary = quiet(spec.run, data)
        level = 1e-4
        assert ordinary.trusted_level > level
        res = quiet(spec.run_at_level, data, level, rng=11)
        assert res.pvalue_method == method and res.trusted_level <= level
        assert (res.hypothesis, res.n_obs) == (ordinary.hypothesis, ordinary.n_obs)
        np.testing.assert_array_equal(res.estimate, ordinary.estimate)  # NaN for omnibus tests
        assert res.method != ordinary.method
        if "p = (1 + #" in res.method:  # Monte Carlo, B + 1 = 10 / level draws at most
            b = n_resamples_for(level, 10**6)
            assert b + 1 == 100_000 and f"at most B = {b} " in res.method
            p = res.pvalue_naive
            if p * (b + 1) <= STOP_HITS:  # the stop was not reached: a multiple of 1/(B + 1)
                np.testing.assert_allclose(p * (b + 1), round(p * (b + 1)), atol=1e-6)
                assert p >= 1 / (b + 1)
            else:  # stopped at the h-th extreme draw, the L-th: p = h / L with h <= L <= B
                assert STOP_HITS <= round(STOP_HITS / p) <= b
                np.testing.assert_allclose(STOP_HITS / p, round(STOP_HITS / p), rtol=1e-12)

    def test_no_trusted_version_returns_the_ordinary_result(self, dataset):
        # a continuous nuisance covariate: no exact version of a GLM coefficient test
        spec = CoefficientTest(formula="b ~ x1 + x2", term="x1", model="logit")
        ordinary = spec.run(dataset)
        assert same(spec.run_at_level(dataset, 1e-6, rng=1), ordinary) and ordinary.trusted_level > 1e-6
        # a permutation version needing more resamples than allowed
        data = skewed_two_groups()
        welch = TwoSampleTTest(column="y", group="g", usevar="unequal", exchangeable=True)
        res = welch.run_at_level(data, 1e-4, rng=1, max_resamples=10_000)
        assert same(res, welch.run(data)) and not res.trusted_at(1e-4)
        # a GLM coefficient tested against a non-zero value has no permutation null
        shifted = CoefficientTest(formula="c ~ x1", term="x1", model="poisson", value=0.1)
        assert same(shifted.run_at_level(dataset, 1e-6, rng=1), shifted.run(dataset))

    @pytest.mark.parametrize("spec", [TwoSampleTTest(column="y", group="g", usevar="unequal"),
                                      TwoSampleZTest(column="y", group="g", usevar="unequal")],
                             ids=["welch", "z_unequal"])
    def test_unequal_variances_permute_only_when_declared_exchangeable(self, spec):
        # Welch's null (equal means) allows different distributions, under which the permutation
        # law is only asymptotically right: measured 1.8% at 0.001 (Exp(1) - 1 arms of 15 and 90
        # rows, sd 3 and 1). Without the declaration there is no version: the report withholds.
        data = skewed_two_groups()
        ordinary = spec.run(data)
        assert ordinary.trusted_level > 1e-3
        rng = np.random.default_rng(4)
        state = rng.bit_generator.state
        assert same(spec.run_at_level(data, 1e-3, rng=rng), ordinary)
        assert rng.bit_generator.state == state   # nothing was resampled
        assert "exchangeable=True" in spec.version_hint
        declared = dataclasses.replace(spec, exchangeable=True)
        assert declared.version_hint is None
        assert declared.run_at_level(data, 1e-3, rng=4).pvalue_method == "permutation"
        assert TwoSampleTTest(column="y", group="g").version_hint is None   # Student's: exchangeable by its model
        with pytest.raises(TypeError, match="`exchangeable` must be True or False; got 'yes'"):
            dataclasses.replace(spec, exchangeable="yes")

    def test_resampling_is_reproducible(self):
        data = skewed_two_groups(3)
        spec = TwoSampleTTest(column="y", group="g", usevar="unequal", exchangeable=True)
        a = spec.run_at_level(data, 1e-3, rng=5)
        assert a.pvalue_method == "permutation"
        assert same(a, spec.run_at_level(data, 1e-3, rng=np.random.default_rng(5)))

    @pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    def test_complete_label_permutation_against_scipy(self, alternative, usevar):
        rng = np.random.default_rng(8)
        x1, x2 = rng.exponential(size=5), rng.exponential(size=8) + 0.5
        data = pd.DataFrame({"y": np.concatenate([x1, x2]), "g": ["a"] * 5 + ["b"] * 8})
        spec = TwoSampleZTest(column="y", group="g", usevar=usevar, alternative=alternative, value=0.2,
                              exchangeable=True)
        res = spec.run_at_level(data, 1e-4)
        assert res.pvalue_method == "permutation" and "all 1287 reassignments" in res.method

        def stat(a, b, axis=-1):  # two-sided: |T| against its permutation law, as run_at_level
            t = scipy.stats.ttest_ind(a, b, equal_var=usevar == "pooled", axis=axis).statistic
            return np.abs(t) if alternative == "two-sided" else t

        ref = scipy.stats.permutation_test((x1 - 0.2, x2), stat, permutation_type="independent",
                                           alternative="greater" if alternative == "two-sided" else alternative,
                                           n_resamples=np.inf, vectorized=True)
        np.testing.assert_allclose(res.pvalue_naive, ref.pvalue, rtol=1e-12)

    @pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
    def test_exact_spearman_against_scipy_enumeration(self, alternative):
        rng = np.random.default_rng(9)
        x = rng.normal(size=7)
        y = np.round(x + rng.normal(size=7), 0)  # ties in y
        res = SpearmanCorrelationTest(column1="x", column2="y", alternative=alternative).run_at_level(
            pd.DataFrame({"x": x, "y": y}), 1e-3)
        assert res.pvalue_method == "exact"

        def stat(yy, axis=-1):
            rho = np.apply_along_axis(lambda v: scipy.stats.spearmanr(x, v).statistic, axis, yy)
            return np.abs(rho) if alternative == "two-sided" else rho

        ref = scipy.stats.permutation_test((y,), stat, permutation_type="pairings", n_resamples=np.inf,
                                           alternative="greater" if alternative == "two-sided" else alternative)
        np.testing.assert_allclose(res.pvalue_naive, ref.pvalue, rtol=1e-12)

    def test_intervals_of_the_versions(self):
        data = rare_binary(4)
        res = OneSampleProportionTest(column="b", value=0.05).run_at_level(data, 1e-6)
        count, nobs = int(data["b"].sum()), len(data)
        for alpha in (0.05, 1e-3):
            ref = scipy.stats.binomtest(count, nobs).proportion_ci(1 - alpha, method="exact")
            np.testing.assert_allclose(res.ci_at(alpha=alpha), (ref.low, ref.high), rtol=1e-10)
        welch = TwoSampleTTest(column="y", group="g", usevar="unequal", exchangeable=True)
        skewed = skewed_two_groups()
        ordinary, fallback = welch.run(skewed), welch.run_at_level(skewed, 1e-3, rng=1)
        assert all(math.isnan(v) for v in fallback.ci_at(alpha=ordinary.trusted_level * 0.9))
        if ordinary.trusted_level < 1.0:
            assert fallback.ci_at(alpha=ordinary.trusted_level) == ordinary.ci_at(alpha=ordinary.trusted_level)

    def test_run_at_level_iv(self, dataset):
        spec = OneSampleTTest(column="y")
        for bad in (0.0, 1.5, float("nan")):
            with pytest.raises(ValueError, match=r"`level` must be a real number in \(0, 1\]"):
                spec.run_at_level(dataset, bad)
        with pytest.raises(TypeError, match="`level` must be"):
            spec.run_at_level(dataset, "0.01")
        with pytest.raises(ValueError, match="`max_resamples` must be an integer >= 1; got 0"):
            spec.run_at_level(dataset, 0.01, max_resamples=0)
        with pytest.raises(TypeError, match="`rng` must be a numpy Generator"):
            spec.run_at_level(dataset, 0.01, rng="seed")


def _dataset(name):
    """A named dataset of conftest.py, or one of the adverse ones of this module."""
    if name == "rare":
        return rare_binary()
    if name == "skewed":
        return skewed_two_groups()
    path = pathlib.Path(__file__).with_name("conftest.py")
    module_spec = importlib.util.spec_from_file_location("hypotheses_conftest", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if name == "tiny8":
        return module.tiny().iloc[:8]
    return module.DATASETS[name]()


class TestStratifiedPermutations:
    def test_strata_are_kept_and_orders_are_uniform(self):
        strata = np.array([0, 1, 0, 2, 1, 0])
        perms = stratified_permutations(np.random.default_rng(10), strata, 60_000)
        assert np.all(strata[perms] == strata)
        # stratum 0 holds rows 0, 2, 5: each of its 3! orders is equally likely (chi-square, 5 df)
        codes = perms[:, 0] * 100 + perms[:, 2] * 10 + perms[:, 5]
        _, counts = np.unique(codes, return_counts=True)
        assert len(counts) == 6
        assert scipy.stats.chisquare(counts).pvalue > FALSE_FAILURE_RATE


def sequential_null_law(b: int, h: int) -> dict[float, float]:
    """The exact null law of Besag and Clifford's p-value with at most ``b`` draws, stopping at
    ``h`` extreme ones, for continuous exchangeable statistics: G (extreme draws among all b) is
    uniform on 0..b; given G = g >= h the g extreme draws sit at uniformly random positions and
    the h-th of them is the L-th draw with probability C(l-1, h-1) C(b-l, g-h) / C(b, g)."""
    law: dict[float, float] = {}
    for g in range(b + 1):
        if g < h:
            law[(g + 1) / (b + 1)] = law.get((g + 1) / (b + 1), 0.0) + 1 / (b + 1)
            continue
        for pos in range(h, b - (g - h) + 1):
            w = math.comb(pos - 1, h - 1) * math.comb(b - pos, g - h) / math.comb(b, g) / (b + 1)
            law[h / pos] = law.get(h / pos, 0.0) + w
    return law


class TestSequentialMonteCarlo:
    @pytest.mark.parametrize(("b", "h"), [(20, 3), (59, 4), (99, 10), (30, 1), (STOP_HITS + 60, STOP_HITS)])
    def test_the_exact_null_law_is_valid_at_every_level(self, b, h):
        law = sequential_null_law(b, h)
        assert math.isclose(sum(law.values()), 1.0, rel_tol=1e-12)
        support = np.array(sorted(law))
        cdf = np.cumsum([law[u] for u in support])
        assert np.all(cdf <= support * (1 + 1e-12))   # P(p <= u) <= u at every attainable u
        assert cdf[0] == pytest.approx(support[0])     # and exact at the smallest p, 1/(b + 1)

    def test_bad_arguments_are_refused(self):
        def simulate(g, size):
            return g.standard_normal(size)

        rng = np.random.default_rng(0)
        with pytest.raises(ValueError, match="observed statistic is nan"):
            monte_carlo_pvalue(float("nan"), simulate, 99, alternative="greater", rng=rng, chunk=10)
        with pytest.raises(ValueError, match="`stop_hits`"):
            monte_carlo_pvalue(0.0, simulate, 99, alternative="greater", rng=rng, chunk=10, stop_hits=0)
        with pytest.raises(ValueError, match="`chunk`"):
            monte_carlo_pvalue(0.0, simulate, 99, alternative="greater", rng=rng, chunk=0)

    def test_the_implementation_draws_from_that_law(self):
        # observed and resampled statistics i.i.d. N(0, 1) (exchangeable), at most 59 draws in
        # chunks of 7, stop at 4 extreme ones: the p-values must follow sequential_null_law(59, 4)
        # (chi-square over its 20 most likely values and the rest, at the suite's false-failure rate)
        rng = np.random.default_rng(12)
        law = sequential_null_law(59, 4)
        drawn = [monte_carlo_pvalue(float(rng.standard_normal()), lambda g, size: g.standard_normal(size), 59,
                                    alternative="greater", rng=rng, chunk=7, stop_hits=4) for _ in range(12_000)]
        values = sorted(law, key=law.get, reverse=True)[:20]
        observed = [sum(math.isclose(p, v, rel_tol=1e-12) for p in drawn) for v in values]
        observed.append(len(drawn) - sum(observed))
        expected = [law[v] * len(drawn) for v in values]
        expected.append(len(drawn) - sum(expected))
        assert scipy.stats.chisquare(observed, expected).pvalue > FALSE_FAILURE_RATE
        assert set(np.round(drawn, 12)) <= set(np.round(list(law), 12))


class TestRandomTwoSampleStatistics:
    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    def test_group_sets_are_uniform_and_statistics_match_the_index_version(self, usevar):
        # 7 skewed values, groups of 3: each of the C(7, 3) = 35 sets gives its own statistic
        # (checked: they differ by at least 1e-3), so the statistic identifies the set. Drawn
        # 70,000 times, only the 35 listed statistics occur and each set has frequency 1/35
        # (chi-square, 34 df, at the suite's false-failure rate).
        values = np.random.default_rng(3).exponential(size=7)
        values = (values - values.mean()) / values.std()
        listed = two_sample_statistics(values, all_subsets(7, 3), usevar=usevar)
        assert len(np.unique(np.round(listed, 10))) == 35
        drawn = random_two_sample_statistics(np.random.default_rng(4), values, 3, 70_000, usevar=usevar)
        index = np.abs(drawn[:, None] - listed[None, :]).argmin(axis=1)
        np.testing.assert_allclose(drawn, listed[index], rtol=1e-12, atol=1e-12)
        counts = np.bincount(index, minlength=35)
        assert scipy.stats.chisquare(counts).pvalue > FALSE_FAILURE_RATE


# ---------------------------------------------------------------- (a) rates at 1e-4


LEVEL = 1e-4


def exact_rate(outcomes, probs, run):
    """Rejection rate of ``run(outcome)`` (-> TestResult) at LEVEL over a listed null law."""
    total = 0.0
    for outcome, prob in zip(outcomes, probs, strict=True):
        try:
            res = quiet(run, outcome)
        except ValueError:  # the test refuses the data: no rejection
            continue
        if res.trusted_at(LEVEL) and res.pvalue_naive <= LEVEL:
            total += prob
    return total


class TestExactRatesAtSmallLevel:
    def test_one_proportion_rare_events(self):
        n, p0 = 500, 0.01
        spec = OneSampleProportionTest(column="b", value=p0)
        ks = np.arange(n + 1)
        rate = exact_rate(ks, scipy.stats.binom.pmf(ks, n, p0),
                          lambda k: spec.run_at_level(pd.DataFrame({"b": [1] * k + [0] * (n - k)}), LEVEL))
        assert rate <= LEVEL
        # the ordinary score test, had it been used at this level, rejects far too often
        naive = exact_rate(ks, scipy.stats.binom.pmf(ks, n, p0), lambda k: _untrusted(
            spec.run(pd.DataFrame({"b": [1] * k + [0] * (n - k)}))))
        assert naive > 2 * LEVEL

    @pytest.mark.parametrize("spec", [TwoSampleProportionTest(column="b", group="g"),
                                      ChiSquareIndependenceTest(column1="g", column2="b")], ids=["two-prop", "chi2x2"])
    def test_two_proportions_rare_events(self, spec):
        n1, n2, prob, cap = 200, 200, 0.01, 22  # P(count > 22) < 1e-12 in each group
        pairs = list(itertools.product(range(cap + 1), range(cap + 1)))
        probs = [scipy.stats.binom.pmf(c1, n1, prob) * scipy.stats.binom.pmf(c2, n2, prob) for c1, c2 in pairs]

        def frame(pair):
            c1, c2 = pair
            b = [1] * c1 + [0] * (n1 - c1) + [1] * c2 + [0] * (n2 - c2)
            return pd.DataFrame({"b": b, "g": ["a"] * n1 + ["b"] * n2})

        assert exact_rate(pairs, probs, lambda pair: spec.run_at_level(frame(pair), LEVEL)) <= LEVEL + 1e-11

    def test_spearman_small_n_exact_null(self):
        n = 8
        spec = SpearmanCorrelationTest(column1="x", column2="y")
        perms = np.array(list(itertools.permutations(range(n))))
        s = ((perms - np.arange(n)) ** 2).sum(axis=1)
        values, first, counts = np.unique(s, return_index=True, return_counts=True)
        rate = exact_rate(first, counts / len(perms), lambda i: spec.run_at_level(
            pd.DataFrame({"x": np.arange(n), "y": perms[i]}), LEVEL))
        assert rate <= LEVEL
        naive = exact_rate(first, counts / len(perms), lambda i: _untrusted(spec.run(
            pd.DataFrame({"x": np.arange(n), "y": perms[i]}))))
        assert naive > 2 * LEVEL  # the t approximation: about 4 times the level


def _untrusted(res):
    """The same result, pretending it is trusted everywhere (what using it blindly does)."""
    return TestResult(**{**_fields(res), "trusted_level": 0.0})


def assert_rows_hold(frame):
    for _, row in frame.iterrows():
        strict = row["bound"] == row["level"]
        assert_rate_at_most(row["rejections"], row["n_draws"], row["level"] if strict else row["bound"])


class TestMeasuredRatesAtSmallLevel:
    @pytest.mark.parametrize("key", ["z-normal-2000", "spearman-8", "prop2-rare-unbalanced"])
    def test_deterministic_versions(self, key):
        # 0.8 - 1.6 million draws: a rate twice the level fails with probability above 0.99
        # (z-normal-2000: 80,000 draws; four times the level fails with probability 0.88)
        scale = 0.2 if key == "z-normal-2000" else 0.4
        frame = cal.calibration_table(cases=[key], levels=(LEVEL,), calls=("run_at_level",), scale=scale,
                                      rng=20_240_702)
        assert_rows_hold(frame)

    @pytest.mark.slow
    @pytest.mark.parametrize("key", ["welch-lognormal-20-180", "z2-normal-15-15", "spearman-15", "spearman-tied-60",
                                     "chi3x3", "poisson-exposure", "logit-rare"])
    def test_permutation_versions(self, key):
        # At 1e-4 each draw costs 1e5 resamples: 15-60 draws only catch gross failures (a rate
        # above ~0.1). The check at 1e-2 (2,000 draws of 999 resamples) fails with probability
        # 0.98 once the rate is three times the level; with 1,000 draws (Welch) 0.6, with 500
        # (the GLMs, whose fits dominate the time) 0.12, so there it catches gross failures
        # only. The GLM permutation code itself is checked exactly in test_trust.py and above.
        scale = {"poisson-exposure": 0.25, "logit-rare": 0.25, "welch-lognormal-20-180": 0.5}.get(key, 1.0)
        frame = cal.calibration_table(cases=[key], levels=(1e-2, LEVEL), calls=("run_at_level",), scale=scale,
                                      rng=20_240_703)
        assert set(frame["pvalue_method"]) <= {"permutation", "asymptotic", "-"}
        assert_rows_hold(frame)


class TestScorePermutation:
    @pytest.mark.slow
    @pytest.mark.parametrize("spec", [
        CoefficientTest(formula="y ~ x", term="x", model="poisson"),
        CoefficientTest(formula="y ~ x + C(h)", term="x", model="poisson", alternative="greater"),
        JointWaldTest(formula="y ~ x + z + C(h)", terms=("x", "z"), model="poisson"),
        CoefficientTest(formula="b ~ x + C(h)", term="x", model="logit", alternative="less"),
    ], ids=["poisson", "poisson-strata", "poisson-joint", "logit-strata"])
    def test_permutation_pvalues_are_valid_at_every_level(self, spec):
        # Under H0 (outcome independent of x and z given h; overdispersed counts, skewed x) the
        # permutation p-values must reject at most at their level: 600 draws, checked at 0.05
        # and 0.1 (one-sided binomial, false-failure rate 1e-6 each); twice the level fails
        # with probability above 0.99.
        rng = np.random.default_rng(20_240_706)
        n = 40
        h = np.repeat(["u", "v", "w"], [10, 14, 16])
        pvalues, refused = [], 0
        for _ in range(600):
            mean = np.where(h == "u", 0.5, np.where(h == "v", 1.5, 3.0))
            data = pd.DataFrame({
                "y": rng.negative_binomial(2, 2 / (2 + mean)),  # overdispersed under the null
                "b": (rng.random(n) < 0.3).astype(int),
                "x": rng.lognormal(size=n), "z": rng.normal(size=n), "h": h,
            })
            res = quiet(spec.run_at_level, data, 1e-2, rng=rng)
            if res.pvalue_method != "permutation":
                # the permutation's variance check (level 0.01 per tested column, exact here: the
                # outcomes are exchangeable within strata) refused it: nothing is rejected
                assert VARIANCE_CHECK_MARK in res.method and res.trusted_level > 1e-2
                pvalues.append(1.0)
                refused += 1
                continue
            pvalues.append(res.pvalue_naive)
        pvalues = np.array(pvalues)
        for alpha in (0.05, 0.1):
            assert_rate_at_most(int(np.sum(pvalues <= alpha)), len(pvalues), alpha)
        n_columns = len(getattr(spec, "terms", ("one",)))
        assert_rate_at_most(refused, len(pvalues), VARIANCE_CHECK_LEVEL * n_columns)
