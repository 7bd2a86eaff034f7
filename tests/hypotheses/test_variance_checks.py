"""The variance checks: a model's variance along the tested column (docs/THEORY.md 7.1).

OLS with errors whose spread grows with the tested covariate, Poisson counts overdispersed
along it, Student's pooled t with the smaller group the more spread out, and correlation tests
of uncorrelated but dependent variables all reject true nulls far too often at the levels the
corrections use; the checks withhold those p-values (and their permutation versions) with the
reason, and stay quiet at their level when the model's variance holds.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from stats_helpers import assert_rate_at_least, assert_rate_at_most
from statsmodels.stats.diagnostic import het_breuschpagan

from selective import Analysis
from selective.accounting.certificates import DescriptionLength
from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    CoefficientTest,
    JointWaldTest,
    PearsonCorrelationTest,
    SpearmanCorrelationTest,
    TwoSampleTTest,
    TwoSampleZTest,
)
from selective.hypotheses._trust_model import (
    VARIANCE_CHECK_LEVEL,
    VARIANCE_CHECK_MARK,
    koenker_fires,
    koenker_z,
    poisson_dispersion_z,
)
from selective.selectors import Selection


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        return fn(*args, **kwargs)


def rejects(spec, data, level, rng):
    """Rejection at ``level`` as the report decides it: a version trusted at the level, p <= level."""
    res = quiet(spec.run_at_level, data, level, rng=rng)
    return res.trusted_level <= level and res.pvalue_naive <= level


# ------------------------------------------------------------------ the statistic and its calibration


def test_koenker_z_is_the_signed_root_of_statsmodels_robust_breusch_pagan():
    rng = np.random.default_rng(1)
    for n in (30, 200):
        x = rng.normal(size=n)
        e = np.abs(x) * rng.normal(size=n)
        lm = het_breuschpagan(e, sm.add_constant(x**2), robust=True)[0]
        z = koenker_z(x**2, e**2)
        np.testing.assert_allclose(z * z * n / (n - 1), lm, rtol=1e-10)
        assert z > 0  # the squares grow with the weights
        assert koenker_z(x**2, (e / (0.1 + np.abs(x))) ** 2 * (0.1 + np.exp(-x * x))) < 0


def test_the_permutation_check_fires_at_its_level_when_the_squares_are_exchangeable():
    # heavy-tailed weights and squares (lognormal, t3): the normal law of z would be far off, the
    # permutation law is exact. 1,500 draws; false-failure rate 1e-6 each way; a rate of 2% (or
    # a check that never fires) fails with probability above 0.99.
    rng = np.random.default_rng(2)
    fired = sum(koenker_fires(rng.lognormal(size=25) ** 2, rng.standard_t(3, size=25) ** 2)[0] for _ in range(1500))
    assert_rate_at_most(fired, 1500, VARIANCE_CHECK_LEVEL)
    assert fired >= 2  # it does fire sometimes (P(fired < 2) = 5e-6 at the 1% rate)


def test_the_check_is_fixed_by_the_data_and_fires_on_a_trend():
    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    e = np.abs(x) ** 1.5 * rng.normal(size=60)
    assert koenker_fires(x**2, e**2) == koenker_fires(x**2, e**2)  # same table at every call
    fired = sum(koenker_fires(x**2, (np.abs(x) ** 1.5 * rng.normal(size=60)) ** 2)[0] for _ in range(100))
    assert_rate_at_least(fired, 100, 0.6)  # measured about 0.9
    strata = np.repeat([0, 1], 30)
    w = np.where(strata == 0, 1.0, 4.0) + 0 * x  # constant within strata: nothing to see
    assert koenker_fires(w, e**2, strata) == (False, "")


def test_poisson_dispersion_z_under_the_model_and_under_overdispersion():
    rng = np.random.default_rng(4)
    x = rng.normal(size=300)
    mu = np.full(300, 2.0)
    z_null = [poisson_dispersion_z(x - x.mean(), rng.poisson(2.0, 300), mu) for _ in range(400)]
    assert abs(np.mean(z_null)) < 0.25 and 0.75 < np.std(z_null) < 1.25  # approximately N(0, 1)
    y = rng.negative_binomial(2.0 / 5.0, 1.0 / 6.0, 300)  # mean 2, variance 12
    assert poisson_dispersion_z(x - x.mean(), y, mu) > 5


# ------------------------------------------------------------------ the specs


def _heteroscedastic(rng, n=100):
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": np.abs(x) ** 1.5 * rng.normal(size=n), "z": rng.normal(size=n)})


def test_ols_with_a_variance_growing_with_the_covariate_is_withheld_with_the_reason():
    data = _heteroscedastic(np.random.default_rng(5))
    for spec in (CoefficientTest(formula="y ~ x", term="x"), JointWaldTest(formula="y ~ x + z", terms=("x", "z"))):
        res = spec.run(data)
        assert res.trusted_level == 1.0 and VARIANCE_CHECK_MARK in res.method and "'x'" in res.method
        assert "cov_type='HC3'" in res.method
        again = quiet(spec.run_at_level, data, 1e-3, rng=1)
        assert again.pvalue_method != "permutation" and again.trusted_level == 1.0
    robust = CoefficientTest(formula="y ~ x", term="x", cov_type="HC3").run(data)
    assert VARIANCE_CHECK_MARK not in robust.method  # the robust test is not checked (and never trusted)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["ols", "ols-binary", "pooled", "pearson", "poisson-dispersion"])
def test_adverse_nulls_at_small_levels(case):
    # The tested parameter is exactly null; before the checks these rejected 19%, 23%, 17% and 17%
    # at 0.01 (docs/THEORY.md 7.1). One-sided binomial, false-failure rate 1e-6: 300 draws at 0.01
    # (a return to 17% fails with probability above 0.999). Pearson with y = x e at n = 40 is
    # improved, not fixed (the check fires in about half: 11.9% at 0.05, 6.1% at 0.01 in 1,000
    # draws): 2,000 draws, held to 15% at 0.05 (it was 21%, which fails with probability above
    # 0.99). 0.001 is not checked here (300 draws cannot see OLS's remaining 7 times the level
    # there, docs/THEORY.md 7.1).
    rng = np.random.default_rng(6)
    counts = {0.05: 0, 0.01: 0}
    n_draws = 2000 if case == "pearson" else 300
    for _ in range(n_draws):
        if case == "ols":
            data, spec = _heteroscedastic(rng), CoefficientTest(formula="y ~ x", term="x")
        elif case == "ols-binary":
            b = np.r_[np.ones(10), np.zeros(50)]
            data = pd.DataFrame({"b": b, "y": np.where(b == 1, 5.0, 1.0) * rng.normal(size=60)})
            spec = CoefficientTest(formula="y ~ b", term="b")
        elif case == "pooled":
            data = pd.DataFrame({"g": np.r_[np.zeros(15), np.ones(90)],
                                 "y": np.r_[3.0 * rng.normal(size=15), rng.normal(size=90)]})
            spec = TwoSampleTTest(column="y", group="g")
        elif case == "pearson":
            x = rng.normal(size=40)
            data = pd.DataFrame({"x": x, "y": x * rng.normal(size=40)})
            spec = PearsonCorrelationTest(column1="x", column2="y")
        else:  # equal means, negative binomial (size 0.5) in one group and Poisson in the other
            g = np.r_[np.ones(100), np.zeros(100)]
            y = np.r_[rng.negative_binomial(0.5, 0.5 / 2.5, 100), rng.poisson(2.0, 100)]
            data, spec = pd.DataFrame({"g": g, "y": y}), CoefficientTest(formula="y ~ g", term="g", model="poisson")
        for level in counts:
            counts[level] += rejects(spec, data, level, rng)
    if case == "pearson":
        assert_rate_at_most(counts[0.05], n_draws, 0.15)
    else:
        assert_rate_at_most(counts[0.01], n_draws, 0.01)


def test_poisson_with_a_common_overdispersion_uses_the_permutation():
    # the Wald p-value assumes the Poisson variance; the permutation within strata only needs the
    # same law in a stratum, which a common dispersion keeps
    rng = np.random.default_rng(7)
    data = pd.DataFrame({"x": rng.normal(size=200), "y": rng.negative_binomial(2.0 / 5.0, 1.0 / 6.0, 200)})
    spec = CoefficientTest(formula="y ~ x", term="x", model="poisson")
    res = spec.run(data)
    assert res.trusted_level == 1.0 and "overdispersed along 'x'" in res.method
    assert "this p-value is not trusted (its permutation version is)" in res.method
    assert quiet(spec.run_at_level, data, 1e-2, rng=1).pvalue_method == "permutation"
    logit = CoefficientTest(formula="b ~ x", term="x", model="logit")
    assert VARIANCE_CHECK_MARK not in logit.run(data.assign(b=(data.y > 1).astype(int))).method


def test_pooled_t_fires_only_when_the_smaller_group_is_the_more_spread_out():
    rng = np.random.default_rng(8)
    y = np.r_[3.0 * rng.normal(size=15), rng.normal(size=90)]
    data = pd.DataFrame({"g": np.r_[np.zeros(15), np.ones(90)], "y": y})
    for cls in (TwoSampleTTest, TwoSampleZTest):
        res = cls(column="y", group="g").run(data)
        assert res.trusted_level == 1.0 and "usevar='unequal'" in res.method
        assert VARIANCE_CHECK_MARK not in cls(column="y", group="g", usevar="unequal").run(data).method
    reverse = data.assign(y=np.r_[rng.normal(size=15), 3.0 * rng.normal(size=90)])  # conservative: quiet
    assert VARIANCE_CHECK_MARK not in TwoSampleTTest(column="y", group="g").run(reverse).method
    equal = pd.DataFrame({"g": np.r_[np.zeros(50), np.ones(50)], "y": np.r_[3 * rng.normal(size=50),
                                                                           rng.normal(size=50)]})
    assert VARIANCE_CHECK_MARK not in TwoSampleTTest(column="y", group="g").run(equal).method  # equal sizes


def test_the_report_withholds_with_the_checks_reason():
    data = _heteroscedastic(np.random.default_rng(19))  # naive p 0.0025: Bonferroni over 10 would reject
    a = Analysis(data, alpha=0.05, rng=1, n_candidates=10)
    a.preregister(DescriptionLength(10))
    a.record(Selection(value=("x",), certificate=DescriptionLength(10), label="one of 10"))
    a.test(CoefficientTest(formula="y ~ x", term="x"))
    table = a.report()
    assert table.frame["pvalue_bonferroni"].isna().all()
    note = table.frame["note"].iloc[0]
    assert "variance check failed: the squared residuals grow with the residualised 'x' (studentised " in note
    assert "p-value trusted at no level below 1" in note and "withheld" in note
    text = table.to_markdown()
    assert "variance check failed" in text
    # the interval's reason names the check too (it was "trusted down to miscoverage 1 only")
    assert ("interval is trusted at no miscoverage below 1 (variance check failed: the squared residuals grow with "
            "the residualised 'x')") in text


# ------------------------------------------------------------------ edge cases (an adversarial review)


def test_no_trend_can_be_seen_in_a_constant_or_balanced_binary_column():
    # a balanced 0/1 column has constant squared deviations: every permuted statistic ties with the
    # observed one, and rounding had made the check fire at random (18 of 40 in one column order)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        data = pd.DataFrame({"x": rng.normal(size=100), "sex": np.repeat([0, 1], 50)})
        for pair in (("x", "sex"), ("sex", "x")):
            assert VARIANCE_CHECK_MARK not in PearsonCorrelationTest(column1=pair[0], column2=pair[1]).run(data).method
    same = pd.DataFrame({"g": [0] * 4 + [1] * 6, "y": [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]})
    assert VARIANCE_CHECK_MARK not in TwoSampleTTest(column="y", group="g").run(same).method
    z = np.repeat([0, 1, 2], 30)  # I(z**2) residualised on z is constant within the strata of z
    for seed in range(5):
        data = pd.DataFrame({"z": z, "y": np.random.default_rng(seed).normal(size=90)})
        assert VARIANCE_CHECK_MARK not in CoefficientTest(formula="y ~ z + I(z**2)", term="I(z ** 2)").run(data).method


def test_the_result_and_its_permutation_version_agree_at_any_scale():
    # the note (on data rescaled by a power of 2 inside the test) and the permutation's own check
    # (on the data as given) once drew different permutations: 27 of 400 disagreed
    for seed in range(60):
        rng = np.random.default_rng(seed)
        y = np.r_[1.6 * rng.normal(size=15), rng.normal(size=90)] * 1e3
        data = pd.DataFrame({"g": np.r_[np.zeros(15), np.ones(90)], "y": y})
        spec = TwoSampleTTest(column="y", group="g")
        fired = VARIANCE_CHECK_MARK in spec.run(data).method
        assert not (fired and quiet(spec.run_at_level, data, 1e-3, rng=1).pvalue_method == "permutation"), seed
        assert fired == (VARIANCE_CHECK_MARK in spec.run(data.assign(y=data.y * 2.0**-40)).method)


def test_the_note_does_not_promise_a_permutation_that_does_not_exist():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    data = pd.DataFrame({"x": x, "z": rng.normal(size=200), "y": np.abs(x) ** 1.5 * rng.normal(size=200),
                         "w": rng.uniform(0.5, 2.0, size=200)})
    res = CoefficientTest(formula="y ~ x + z", term="x").run(data)  # continuous nuisance: no permutation
    assert "so this p-value is not trusted;" in res.method and "permutation version is" not in res.method
    wls = JointWaldTest(formula="y ~ x", terms=("x",), weights="w")
    assert quiet(wls.run_at_level, data, 1e-3, rng=1).pvalue_method != "permutation"  # it would ignore the weights


def test_a_real_correlation_does_not_fire_the_check():
    # the squares of two correlated normals are correlated (rho^2): a check on them withheld the
    # discoveries themselves (the release table's Spearman signal scenario lost half its power);
    # the check reads the residuals of y on x instead. 300 draws at rho = 0.6, n = 40 (measured
    # 1 of 300): at most 2% (false-failure rate 1e-6); the check on the squares fails it.
    rng = np.random.default_rng(10)
    fired = 0
    for _ in range(300):
        x = rng.normal(size=40)
        data = pd.DataFrame({"x": x, "y": 0.6 * x + 0.8 * rng.normal(size=40)})
        fired += VARIANCE_CHECK_MARK in PearsonCorrelationTest(column1="x", column2="y").run(data).method
        fired += VARIANCE_CHECK_MARK in SpearmanCorrelationTest(column1="x", column2="y").run(data).method
    assert_rate_at_most(fired, 600, 0.02)


def test_the_report_says_why_a_permutation_replaced_the_wald_p_value():
    rng = np.random.default_rng(7)
    data = pd.DataFrame({"x": rng.normal(size=200), "y": rng.negative_binomial(2.0 / 5.0, 1.0 / 6.0, 200)})
    data["y"] = data.y + 4 * (data.x > 1)  # a real effect, so that the corrected p-value is small
    a = Analysis(data, alpha=0.05, rng=1, n_candidates=10)
    a.preregister(DescriptionLength(10))
    a.record(Selection(value=("x",), certificate=DescriptionLength(10), label="one of 10"))
    a.test(CoefficientTest(formula="y ~ x", term="x", model="poisson"))
    text = a.report().to_markdown()
    assert "Permutation p-value used at the corrected level" in text
    assert "Variance check failed: the Pearson residuals are overdispersed along 'x'" in text


def test_huge_values_give_the_same_trust_without_overflow():
    # Pitman's fourth moments and the variances of the correlation rule overflowed beyond 1e154
    # (a warning, and a level computed from inf); every rule is scale-free
    rng = np.random.default_rng(11)
    data = pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50)})
    for frame in (data, data.round(1)):
        for cls in (PearsonCorrelationTest, SpearmanCorrelationTest):
            spec = cls(column1="x", column2="y")
            plain = spec.run(frame)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                huge = spec.run(frame * 1e160)
            assert huge.trusted_level == pytest.approx(plain.trusted_level) and huge.method == plain.method
