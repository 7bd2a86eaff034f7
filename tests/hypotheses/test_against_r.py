"""Each naive test against base R (stats package) through selective.interop.rbridge.

R's t.test, prop.test(correct = FALSE), chisq.test(correct = FALSE), cor.test (Pearson;
Spearman with exact = FALSE), summary(lm), summary(glm), anova and Wald chi-square by hand,
on the shared datasets and on R's own `sleep` and `mtcars`. Skipped, with the reason, when R
or rpy2 is missing (install: apt-get install r-base-core; pip install 'selective[r]').

Tolerances: closed forms agree to 1e-9 relative; GLM fits (R fitted to a relative deviance
change of 1e-14, statsmodels with its default IRLS tolerance 1e-8) to 1e-6 (seen: 1e-8); the badly
scaled dataset (values 1e6 +- 1e-3) to 1e-5 (1e-4 for regressions), since R accumulates sums
in long double and numpy in double, R's lm uses QR and statsmodels' OLS a pseudo-inverse, and
residuals of an outcome near 1e6 keep only ~9 digits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

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
    TwoSampleProportionTest,
    TwoSampleTTest,
)
from selective.interop.rbridge import r_eval, why_r_unavailable

REASON = why_r_unavailable()
if REASON is None:  # R's glm stops at a relative deviance change of 1e-8; converge fully instead
    r_eval("assign('TIGHT', glm.control(epsilon = 1e-14, maxit = 100), envir = globalenv())")
pytestmark = [pytest.mark.needs_r, pytest.mark.skipif(REASON is not None, reason=f"R cross-check skipped: {REASON}")]

ALTERNATIVES = ["two-sided", "less", "greater"]
R_ALT = {"two-sided": "two.sided", "less": "less", "greater": "greater"}


def rtol_for(frame, default=1e-9, badly_scaled=1e-5):
    return badly_scaled if frame.attrs.get("name") == "badly_scaled" else default


def close(actual, expected, rtol):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=rtol, atol=0)


def check_htest(res, ref, rtol, *, statistic=True, estimate=True, df=True, ci=True):
    """Compare a TestResult with an R htest list."""
    close(res.pvalue_naive, ref["p.value"], rtol)
    if statistic:
        close(res.statistic, ref["statistic"], rtol)
    if df:
        close(res.df, ref["parameter"], rtol)
    if estimate:
        est = ref["estimate"]
        close(res.estimate, est if np.isscalar(est) else est.iloc[0] - est.iloc[1], rtol)
    if ci:
        close(res.ci_naive, ref["conf.int"], rtol)


class TestTTestsAgainstR:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_t_against_r(self, dataset, alternative):
        res = OneSampleTTest(column="y", value=1.2, alternative=alternative, confidence_level=0.9).run(dataset)
        ref = r_eval("t.test(d$y, mu = 1.2, alternative = alt, conf.level = 0.9)", d=dataset, alt=R_ALT[alternative])
        check_htest(res, ref, rtol_for(dataset))

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_paired_t_against_r(self, dataset, alternative):
        res = PairedTTest(column1="y", column2="w", alternative=alternative).run(dataset)
        ref = r_eval("t.test(d$y, d$w, paired = TRUE, alternative = alt)", d=dataset, alt=R_ALT[alternative])
        check_htest(res, ref, rtol_for(dataset, 1e-9))

    @pytest.mark.parametrize("usevar", ["pooled", "unequal"])
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_two_sample_t_against_r(self, dataset, usevar, alternative):
        res = TwoSampleTTest(column="y", group="g", usevar=usevar, value=0.1, alternative=alternative).run(dataset)
        ref = r_eval(
            "t.test(d$y[d$g == 'ctl'], d$y[d$g == 'trt'], var.equal = ve, mu = 0.1, alternative = alt)",
            d=dataset, ve=usevar == "pooled", alt=R_ALT[alternative],
        )
        check_htest(res, ref, rtol_for(dataset))

    def test_sleep_data_against_r(self):
        sleep = r_eval("sleep")  # R's own data, converted by the bridge
        wide = pd.DataFrame({"drug1": sleep.extra[sleep.group == "1"].to_numpy(),
                             "drug2": sleep.extra[sleep.group == "2"].to_numpy()})
        paired = PairedTTest(column1="drug1", column2="drug2").run(wide)
        ref = r_eval("with(sleep, t.test(extra[group == 1], extra[group == 2], paired = TRUE))")
        check_htest(paired, ref, 1e-9)
        welch = TwoSampleTTest(column="extra", group="group", usevar="unequal").run(sleep)
        ref = r_eval("t.test(extra ~ group, data = sleep)")
        check_htest(welch, ref, 1e-9)

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_z_against_r_by_hand(self, dataset, alternative):
        res = OneSampleZTest(column="y", value=1.0, alternative=alternative).run(dataset)
        z, p = r_eval(
            "z <- (mean(d$y) - 1) / (sd(d$y) / sqrt(nrow(d)));"
            "c(z, switch(alt, two.sided = 2 * pnorm(-abs(z)), less = pnorm(z), "
            "greater = pnorm(z, lower.tail = FALSE)))",
            d=dataset, alt=R_ALT[alternative],
        )
        close([res.statistic, res.pvalue_naive], [z, p], rtol_for(dataset))


class TestProportionTestsAgainstR:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_one_sample_proportion_against_r(self, dataset, alternative):
        spec = OneSampleProportionTest(column="b", value=0.3, alternative=alternative, confidence_level=0.99)
        res = spec.run(dataset)
        ref = r_eval("prop.test(sum(d$b), nrow(d), p = 0.3, alternative = alt, conf.level = 0.99, correct = FALSE)",
                     d=dataset, alt=R_ALT[alternative])
        close(res.statistic**2, ref["statistic"], 1e-9)  # R reports X-squared = z^2
        check_htest(res, ref, 1e-9, statistic=False, df=False)

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_two_sample_proportion_against_r(self, dataset, alternative):
        res = TwoSampleProportionTest(column="b", group="g", alternative=alternative).run(dataset)
        ref = r_eval(
            "x <- c(sum(d$b[d$g == 'ctl']), sum(d$b[d$g == 'trt'])); n <- c(sum(d$g == 'ctl'), sum(d$g == 'trt'));"
            "prop.test(x, n, alternative = alt, correct = FALSE)",
            d=dataset, alt=R_ALT[alternative],
        )
        close(res.statistic**2, ref["statistic"], 1e-9)
        check_htest(res, ref, 1e-9, statistic=False, df=False)

    @pytest.mark.parametrize("columns", [("g", "h"), ("h", "b")])
    def test_chisquare_against_r(self, dataset, columns):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)
            res = ChiSquareIndependenceTest(column1=columns[0], column2=columns[1]).run(dataset)
        ref = r_eval("suppressWarnings(chisq.test(table(d[[a]], d[[b]]), correct = FALSE))",
                     d=dataset, a=columns[0], b=columns[1])
        check_htest(res, ref, 1e-9, estimate=False, ci=False)


class TestCorrelationTestsAgainstR:
    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    def test_pearson_against_r(self, dataset, alternative):
        spec = PearsonCorrelationTest(column1="y", column2="x1", alternative=alternative, confidence_level=0.9)
        res = spec.run(dataset)
        ref = r_eval("cor.test(d$y, d$x1, alternative = alt, conf.level = 0.9)", d=dataset, alt=R_ALT[alternative])
        check_htest(res, ref, rtol_for(dataset))

    @pytest.mark.parametrize("alternative", ALTERNATIVES)
    @pytest.mark.parametrize("columns", [("y", "x1"), ("c", "x1")])
    def test_spearman_against_r(self, dataset, alternative, columns):
        res = SpearmanCorrelationTest(column1=columns[0], column2=columns[1], alternative=alternative).run(dataset)
        ref = r_eval("cor.test(d[[a]], d[[b]], method = 'spearman', exact = FALSE, alternative = alt)",
                     d=dataset, a=columns[0], b=columns[1], alt=R_ALT[alternative])
        # R reports S = (n^3 - n)(1 - rho) / 6 rather than t, and no interval.
        check_htest(res, ref, 1e-9, statistic=False, df=False, ci=False)


LM_CASES = [  # (model, statsmodels formula, term, R call, R coefficient name)
    ("ols", "y ~ x1 + x2 + C(h)", "x1", "lm(y ~ x1 + x2 + h, d)", "x1"),
    ("ols", "y ~ x1 + x2 + C(h)", "C(h)[T.w]", "lm(y ~ x1 + x2 + h, d)", "hw"),
    ("logit", "b ~ x1 + x2 + C(g)", "C(g)[T.trt]", "glm(b ~ x1 + x2 + g, binomial, d, control = TIGHT)", "gtrt"),
    ("logit", "b ~ x1 + x2", "x1", "glm(b ~ x1 + x2, binomial, d, control = TIGHT)", "x1"),
    ("poisson", "c ~ x1 + C(h)", "x1", "glm(c ~ x1 + h, poisson, d, control = TIGHT)", "x1"),
    ("poisson", "c ~ x1 + C(h)", "Intercept", "glm(c ~ x1 + h, poisson, d, control = TIGHT)", "(Intercept)"),
]


class TestRegressionAgainstR:
    @pytest.mark.parametrize("model, formula, term, r_call, r_term", LM_CASES)
    def test_coefficient_against_r(self, regression_dataset, model, formula, term, r_call, r_term):
        res = CoefficientTest(formula=formula, term=term, model=model, confidence_level=0.9).run(regression_dataset)
        table = r_eval(f"fit <- {r_call}; coef(summary(fit))", d=regression_dataset)
        ci = r_eval(f"fit <- {r_call}; confint.default(fit, level = 0.9)" if model != "ols"
                    else f"fit <- {r_call}; confint(fit, level = 0.9)", d=regression_dataset)
        rtol = rtol_for(regression_dataset, 1e-9 if model == "ols" else 1e-6, badly_scaled=1e-4)
        row = table.loc[r_term]
        close([res.estimate, res.statistic, res.pvalue_naive], row.iloc[[0, 2, 3]], rtol)
        close(res.ci_naive, ci.loc[r_term], rtol)

    def test_joint_f_against_r_anova(self, regression_dataset):
        res = JointWaldTest(formula="y ~ x1 + x2 + C(h)", terms=("x1", "x2")).run(regression_dataset)
        table = r_eval("as.data.frame(anova(lm(y ~ h, d), lm(y ~ x1 + x2 + h, d)))", d=regression_dataset)
        close([res.statistic, res.df, res.df_denom], [table["F"].iloc[1], table["Df"].iloc[1], table["Res.Df"].iloc[1]],
              rtol_for(regression_dataset, 1e-8, badly_scaled=1e-4))
        close(res.pvalue_naive, table["Pr(>F)"].iloc[1], rtol_for(regression_dataset, 1e-7, badly_scaled=1e-4))

    @pytest.mark.parametrize("model, r_family", [("logit", "binomial"), ("poisson", "poisson")])
    def test_joint_chisquare_against_r_by_hand(self, regression_dataset, model, r_family):
        outcome = "b" if model == "logit" else "c"
        spec = JointWaldTest(formula=f"{outcome} ~ x1 + x2 + C(h)", terms=("x1", "x2"), model=model)
        res = spec.run(regression_dataset)
        stat, p = r_eval(
            f"fit <- glm({outcome} ~ x1 + x2 + h, {r_family}, d, control = TIGHT); i <- c('x1', 'x2');"
            "b <- coef(fit)[i]; w <- drop(t(b) %*% solve(vcov(fit)[i, i], b));"
            "c(w, pchisq(w, length(i), lower.tail = FALSE))",
            d=regression_dataset,
        )
        close([res.statistic, res.pvalue_naive], [stat, p], rtol_for(regression_dataset, 1e-6))

    def test_mtcars_against_r(self):
        mtcars = r_eval("mtcars")
        ols = CoefficientTest(formula="mpg ~ wt + C(cyl)", term="wt").run(mtcars)
        ref = r_eval("coef(summary(lm(mpg ~ wt + factor(cyl), mtcars)))").loc["wt"]
        close([ols.estimate, ols.statistic, ols.pvalue_naive], ref.iloc[[0, 2, 3]], 1e-9)
        logit = CoefficientTest(formula="am ~ wt", term="wt", model="logit").run(mtcars)
        ref = r_eval("coef(summary(glm(am ~ wt, binomial, mtcars, control = TIGHT)))").loc["wt"]
        close([logit.estimate, logit.statistic, logit.pvalue_naive], ref.iloc[[0, 2, 3]], 1e-6)
        poisson = CoefficientTest(formula="carb ~ wt + hp", term="hp", model="poisson").run(mtcars)
        ref = r_eval("coef(summary(glm(carb ~ wt + hp, poisson, mtcars, control = TIGHT)))").loc["hp"]
        close([poisson.estimate, poisson.statistic, poisson.pvalue_naive], ref.iloc[[0, 2, 3]], 1e-6)
