"""Coefficient and joint Wald tests against statsmodels called directly (rtol 1e-12)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import statsmodels.api as sm
import statsmodels.formula.api as smf

from selective.hypotheses import CoefficientTest, JointWaldTest

RTOL = 1e-12
ALTERNATIVES = ["two-sided", "less", "greater"]
CASES = [  # (model, formula, term)
    ("ols", "y ~ x1 + x2 + C(h)", "x1"),
    ("ols", "y ~ x1 + x2 + C(h)", "C(h)[T.w]"),
    ("ols", "y ~ x1 * C(g)", "x1:C(g)[T.trt]"),
    ("logit", "b ~ x1 + x2 + C(g)", "x2"),
    ("logit", "t ~ x1 + C(h)", "C(h)[T.v]"),
    ("poisson", "c ~ x1 + x2 + C(h)", "x1"),
    ("poisson", "c ~ np.log(y - y.min() + 1) + C(g)", "Intercept"),
]


def close(actual, expected, rtol=RTOL):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


def direct_fit(model, formula, data):
    if model == "ols":
        return smf.ols(formula, data).fit()
    family = sm.families.Binomial() if model == "logit" else sm.families.Poisson()
    return smf.glm(formula, data.assign(t=data.t.astype(float)), family=family).fit(atol=1e-13, rtol=1e-13, maxiter=100)


class TestCoefficientTest:
    @pytest.mark.parametrize("model, formula, term", CASES)
    def test_coefficient_against_statsmodels(self, regression_dataset, model, formula, term):
        res = CoefficientTest(formula=formula, term=term, model=model, confidence_level=0.9).run(regression_dataset)
        fit = direct_fit(model, formula, regression_dataset)
        close([res.estimate, res.statistic, res.pvalue_naive], [fit.params[term], fit.tvalues[term], fit.pvalues[term]])
        close(res.ci_naive, tuple(fit.conf_int(alpha=0.1).loc[term]))
        assert res.n_obs == fit.nobs
        if model == "ols":
            assert res.df == fit.df_resid
        else:
            assert np.isnan(res.df)

    @pytest.mark.parametrize("alternative", ["less", "greater"])
    @pytest.mark.parametrize("model, formula, term", CASES[:1] + CASES[3:4] + CASES[5:6])
    def test_one_sided_coefficient_against_statsmodels(self, regression_dataset, model, formula, term, alternative):
        value = 0.1
        res = CoefficientTest(formula=formula, term=term, model=model, value=value, alternative=alternative).run(
            regression_dataset
        )
        fit = direct_fit(model, formula, regression_dataset)
        contrast = fit.t_test(f"{term} = {value}")
        stat, p_two = float(np.squeeze(contrast.statistic)), float(np.squeeze(contrast.pvalue))
        toward = (stat > 0) == (alternative == "greater")
        close(res.statistic, stat)
        close(res.pvalue_naive, p_two / 2 if toward else 1 - p_two / 2)
        dist = scipy.stats.t(fit.df_resid) if model == "ols" else scipy.stats.norm
        crit = dist.isf(0.05)
        b, se = fit.params[term], fit.bse[term]
        expected = (b - crit * se, np.inf) if alternative == "greater" else (-np.inf, b + crit * se)
        close(res.ci_naive, expected)

    @pytest.mark.parametrize("weights", [None, "w"])
    def test_an_outcome_fitted_exactly_is_refused(self, regression_dataset, weights):
        # a constant outcome leaves a residual of rounding noise: statsmodels reports t of order 1
        # from it (5.1 and p = 1e-5 on 40 rows), which is no test at all
        data = regression_dataset.assign(yc=-0.05, w=1.0 + regression_dataset.x1.abs())
        with pytest.raises(ValueError, match="'yc ~ x1' fits its outcome exactly up to rounding .* constant outcome"):
            CoefficientTest(formula="yc ~ x1", term="x1", weights=weights).run(data)
        with pytest.raises(ValueError, match="fits its outcome exactly"):
            JointWaldTest(formula="yc ~ x1 + x2", terms=("x1", "x2")).run(data)

    def test_large_offsets_and_extreme_scales(self, regression_dataset):
        # an outcome varying on a small scale around a large value (unix seconds) is tested as its
        # centred version is; one whose squares would underflow is refused instead of getting p = 1
        d = regression_dataset
        spec = CoefficientTest(formula="yt ~ x1", term="x1")
        centred, spread = d.y - d.y.mean(), d.y.std()
        base = spec.run(d.assign(yt=centred))
        for offset, rtol in ((1.7e9, 1e-4), (1e11, 1e-2)):  # the data keep fewer digits of y as the offset grows
            res = spec.run(d.assign(yt=offset * spread + centred))
            np.testing.assert_allclose(res.pvalue_naive, base.pvalue_naive, rtol=rtol)
        with pytest.raises(ValueError, match="varies only in its last digits around a large value"):
            spec.run(d.assign(yt=1e17 * spread + centred))
        with pytest.raises(ValueError, match="the outcome has largest absolute value 3.*e-200 .* rescale it"):
            spec.run(d.assign(yt=3e-200 * d.y / d.y.abs().max()))
        with pytest.raises(ValueError, match="'x1' has largest absolute value .*e\\+160"):
            spec.run(d.assign(yt=d.y, x1=1e160 * d.x1))
        # a near-deterministic relation is tested, not refused (its t is about 1e11)
        near = d.assign(yt=1000 * d.x1 + 1e-8 * (d.y - d.y.mean()) / d.y.std())
        assert spec.run(near).statistic > 1e9

    def test_a_failing_null_fit_leaves_the_ordinary_result(self, regression_dataset, monkeypatch):
        # the permutation version below the trusted level refits the null model; where that fit
        # fails on the data, run_at_level returns the ordinary (untrusted) result, never an error
        from selective.hypotheses import regression

        spec = CoefficientTest(formula="c ~ x1 + x2", term="x1", model="poisson")
        ordinary = spec.run(regression_dataset)

        def failing(*args, **kwargs):
            raise ValueError("The first guess on the deviance function returned a nan.")

        monkeypatch.setattr(regression.sm, "GLM", failing)
        res = spec.run_at_level(regression_dataset, 1e-12, rng=1)
        # (the trust rule's null fit fails too: the level is then read at the fitted means)
        assert res.pvalue_naive == ordinary.pvalue_naive and res.pvalue_method == ordinary.pvalue_method == "asymptotic"
        assert res.method.split(";")[0] == ordinary.method.split(";")[0]
        assert "(the null fit failed)" in res.method or not 0 < res.trusted_level < 1  # said where a level is set


class TestJointWaldTest:
    @pytest.mark.parametrize("use_f", [None, True, False])
    @pytest.mark.parametrize("model, formula, terms", [
        ("ols", "y ~ x1 + x2 + C(h)", ("x1", "x2")),
        ("ols", "y ~ x1 + x2 + C(h)", ("C(h)[T.v]", "C(h)[T.w]")),
        ("logit", "b ~ x1 + x2 + C(h)", ("x1", "C(h)[T.v]", "C(h)[T.w]")),
        ("poisson", "c ~ x1 + x2", ("x2",)),
    ])
    def test_joint_wald_against_statsmodels(self, regression_dataset, model, formula, terms, use_f):
        res = JointWaldTest(formula=formula, terms=terms, model=model, use_f=use_f).run(regression_dataset)
        fit = direct_fit(model, formula, regression_dataset)
        expect_f = (model == "ols") if use_f is None else use_f
        r_matrix = np.zeros((len(terms), len(fit.params)))
        for i, term in enumerate(terms):
            r_matrix[i, list(fit.params.index).index(term)] = 1
        wald = fit.wald_test(r_matrix, use_f=expect_f, scalar=True)
        close([res.statistic, res.pvalue_naive], [wald.statistic, wald.pvalue])
        assert res.df == len(terms)
        if expect_f:
            assert res.df_denom == fit.df_resid and "use_f=True" in res.method
        else:
            assert np.isnan(res.df_denom) and "chi-square" in res.method
        assert np.isnan(res.estimate) and all(np.isnan(res.ci_naive))

    def test_ols_f_equals_the_nested_model_comparison(self, regression_dataset):
        res = JointWaldTest(formula="y ~ x1 + x2 + C(h)", terms=("x1", "x2")).run(regression_dataset)
        # Another route (residual sums of squares) on centred y, which F ignores. On the badly
        # scaled y (1e6 +- 1e-3) statsmodels' own fit of the raw y (which the spec, like a direct
        # call, uses) is only good to ~1e-6 (F) and ~1e-5 (its small p-value), hence the tolerance.
        centred = regression_dataset.assign(y=regression_dataset.y - regression_dataset.y.mean())
        full = smf.ols("y ~ x1 + x2 + C(h)", centred).fit()
        restricted = smf.ols("y ~ C(h)", centred).fit()
        f, p, df = full.compare_f_test(restricted)
        close([res.statistic, res.pvalue_naive, res.df], [f, p, df], rtol=1e-4)

    def test_single_term_f_is_the_squared_t(self, regression_dataset):
        joint = JointWaldTest(formula="y ~ x1 + x2", terms=["x2"]).run(regression_dataset)
        single = CoefficientTest(formula="y ~ x1 + x2", term="x2").run(regression_dataset)
        close([joint.statistic, joint.pvalue_naive], [single.statistic**2, single.pvalue_naive], rtol=1e-10)
