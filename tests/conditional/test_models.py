"""Lasso, stepwise, LAR and many-means: theory checks, frames, bad input, and null simulations."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE, assert_rate_near

from selective.conditional import (
    KKTError,
    SelectiveInferenceResult,
    fixed_lasso_inference,
    forward_stepwise,
    fs_inference,
    lar_inference,
    least_angle_regression,
    many_means,
    solve_lasso,
)
from selective.exceptions import SelectiveWarning

FRAME_COLUMNS = ["variable", "index", "sign", "estimate", "sd", "statistic", "vlo", "vup",
                 "pvalue", "ci_low", "ci_high", "tailarea_low", "tailarea_high", "pvalue_naive",
                 "pvalue_spacing", "pvalue_modspac", "pvalue_covtest"]


def _data(n=60, p=8, seed=0, signal=(3.0, -2.0)):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[: len(signal)] = signal
    y = X @ beta + rng.standard_normal(n)
    return X, y


class TestFixedLassoInference:
    def test_solver_meets_kkt(self):
        X, y = _data()
        fit = solve_lasso(X, y, 20.0)
        assert fit.max_active_dev < 1e-9
        assert fit.max_inactive_subgradient < 1.0

    def test_solver_matches_supplied_beta(self):
        X, y = _data(seed=3)
        fit = solve_lasso(X, y, 15.0)
        a = fixed_lasso_inference(X, y, 15.0)
        b = fixed_lasso_inference(X, y, 15.0, beta=fit.beta)
        assert a.variables == b.variables
        assert np.allclose(a.pvalue, b.pvalue, rtol=1e-12)

    def test_partial_estimate_is_ols_on_selected_columns(self):
        X, y = _data(seed=5)
        res = fixed_lasso_inference(X, y, 20.0, sigma=1.0)
        Xc = X - X.mean(0)
        ols, *_ = np.linalg.lstsq(Xc[:, res.index], y - y.mean(), rcond=None)
        assert np.allclose(res.estimate, ols, rtol=1e-10)
        assert np.all(res.vlo <= res.sign * res.estimate)
        assert np.all(res.sign * res.estimate <= res.vup)

    def test_dataframe_input_and_frame(self):
        X, y = _data(seed=2)
        df = pd.DataFrame(X, columns=[f"v{j}" for j in range(X.shape[1])])
        df["out"] = y
        res = fixed_lasso_inference(df, "out", 20.0, sigma=1.0)
        arr = fixed_lasso_inference(X, y, 20.0, sigma=1.0)
        assert res.variables == tuple(f"v{j}" for j in arr.index)
        frame = res.to_frame()
        assert list(frame.columns) == FRAME_COLUMNS
        assert frame["pvalue_spacing"].isna().all()
        assert isinstance(res, SelectiveInferenceResult)
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.alpha = 0.2  # frozen

    def test_full_type_and_no_intercept_run(self):
        X, y = _data(seed=4)
        full = fixed_lasso_inference(X, y, 20.0, sigma=1.0, type="full")
        noint = fixed_lasso_inference(X, y, 20.0, sigma=1.0, intercept=False)
        assert full.variables and noint.variables
        assert list(full.to_frame().columns) == list(noint.to_frame().columns)

    def test_plugin_sigma_warns_and_is_labelled_approximate(self):
        X, y = _data(n=20, p=15, seed=1)
        with pytest.warns(SelectiveWarning, match=r"n < 2p.*approximate \(plug-in sigma, 19 residual df\)"):
            res = fixed_lasso_inference(X, y, 8.0, sigma_method="plugin")
        assert res.sigma == pytest.approx(np.std(y, ddof=1))  # R's sd(y) rule when n < 2p
        assert res.sigma_mode == "plugin" and "exact" not in res.inference
        # with n = 20 > p + 1 the default is the valid unknown-sigma construction, no warning
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", SelectiveWarning)
            res = fixed_lasso_inference(X, y, 8.0)
        assert res.sigma_mode == "interval" and res.sigma_df == 20 - 15 - 1

    def test_binomial_runs_from_own_solver(self):
        rng = np.random.default_rng(8)
        X = rng.standard_normal((150, 5))
        y = (rng.uniform(size=150) < 1 / (1 + np.exp(-(X[:, 0] * 1.5)))).astype(float)
        res = fixed_lasso_inference(X, y, 5.0, family="binomial")
        assert 0 in res.index
        assert np.all((res.pvalue >= 0) & (res.pvalue <= 1))

    def test_fixed_lasso_inference_iv(self):
        X, y = _data()
        with pytest.raises(ValueError, match="`lam` must be a finite positive real number"):
            fixed_lasso_inference(X, y, -1.0)
        with pytest.raises(ValueError, match="`family` must be one of 'gaussian', 'binomial'"):
            fixed_lasso_inference(X, y, 10.0, family="poisson")
        with pytest.raises(ValueError, match="`type` must be one of 'partial', 'full'"):
            fixed_lasso_inference(X, y, 10.0, type="both")
        with pytest.raises(ValueError, match="`alpha` must be a real number in \\(0, 1\\)"):
            fixed_lasso_inference(X, y, 10.0, alpha=0.0)
        with pytest.raises(ValueError, match="`sigma` must be a finite positive real number"):
            fixed_lasso_inference(X, y, 10.0, sigma=0.0)
        with pytest.raises(ValueError, match="`y` must have length 60"):
            fixed_lasso_inference(X, y[:-1], 10.0)
        with pytest.raises(ValueError, match="`beta` must have length 8"):
            fixed_lasso_inference(X, y, 10.0, beta=np.zeros(3))
        with pytest.raises(ValueError, match="`alternative` must be one of"):
            fixed_lasso_inference(X, y, 10.0, alternative="greater")
        with pytest.raises(KKTError, match="KKT conditions fail"):
            fixed_lasso_inference(X, y, 10.0, beta=np.ones(8))
        with pytest.raises(ValueError, match="`y` must contain only 0 and 1"):
            fixed_lasso_inference(X, y, 10.0, family="binomial")
        with pytest.raises(ValueError, match="`y` must name a column"):
            fixed_lasso_inference(pd.DataFrame(X), "nope", 10.0)


class TestStepwise:
    def test_fs_all_and_aic_frames(self):
        X, y = _data(seed=11)
        path = forward_stepwise(X, y, maxsteps=5)
        active = fs_inference(path, sigma=1.0)
        allv = fs_inference(path, sigma=1.0, type="all", k=3)
        aic = fs_inference(path, sigma=1.0, type="aic")
        assert list(active.to_frame().columns) == list(allv.to_frame().columns) == FRAME_COLUMNS
        assert len(allv.variables) == 3 and allv.khat is None
        assert aic.khat == len(aic.variables)
        assert path.to_frame().shape[0] == 5
        # the compact constraints reproduce the dense ones
        G = path.constraints.to_dense()
        assert np.allclose(G @ path.y_centred, path.constraints.apply(path.y_centred))
        assert np.all(G @ path.y_centred >= -1e-10)

    def test_fs_first_step_is_a_max_of_correlations(self):
        X, y = _data(seed=12)
        path = forward_stepwise(X, y, maxsteps=1)
        Xc = X - X.mean(0)
        score = np.abs(Xc.T @ (y - y.mean())) / np.linalg.norm(Xc, axis=0)
        assert path.action[0] == np.argmax(score)

    def test_lar_knots_decrease_and_extra_pvalues(self):
        X, y = _data(seed=13)
        path = least_angle_regression(X, y)
        assert np.all(np.diff(path.lam) < 0)
        res = lar_inference(path, sigma=1.0)
        frame = res.to_frame()
        assert frame[["pvalue_spacing", "pvalue_modspac", "pvalue_covtest"]].notna().all().all()
        # the exact knot test (both limits from the first t steps' event) is the one-sided test
        # of the step-t contrast, a positive multiple of the knot vector
        np.testing.assert_allclose(res.pvalue_modspac, res.pvalue, rtol=1e-9)

    def test_fs_inference_iv(self):
        X, y = _data()
        path = forward_stepwise(X, y, maxsteps=3)
        with pytest.raises(ValueError, match="`type` must be one of 'active', 'all', 'aic'"):
            fs_inference(path, type="some")
        with pytest.raises(ValueError, match="`k` must be an integer in \\[1, 3\\]"):
            fs_inference(path, k=4)
        with pytest.raises(TypeError, match="`path` must be a StepwisePath from least_angle"):
            lar_inference(path)
        with pytest.raises(ValueError, match="`maxsteps` must be an integer >= 1"):
            forward_stepwise(X, y, maxsteps=0)
        with pytest.raises(ValueError, match="`ntimes` must be an integer >= 1"):
            fs_inference(path, ntimes=0)


class TestManyMeans:
    def test_many_means_against_theory(self):
        y = np.array([5.0, 0.1, -4.0, 0.3, 2.0])
        res = many_means(y, k=2)
        assert list(res.selected) == [0, 2]
        assert res.threshold == 2.0
        # p-value: P(|Z| >= |y| | |Z| >= c)
        assert res.pvalue[0] == pytest.approx(scipy.stats.norm.sf(5) / scipy.stats.norm.sf(2))
        # the estimate shrinks towards zero but keeps the sign
        assert 0 < res.mu_hat[0] < 5 and -4 < res.mu_hat[1] < 0
        assert list(res.to_frame().columns) == ["index", "observed", "mu_hat", "pvalue", "ci_low",
                                                "ci_high", "threshold"]

    def test_bh_selection(self):
        y = np.array([6.0, 0.1, -5.0, 0.3, 0.2, 0.5, -0.4])
        res = many_means(y, bh_q=0.1)
        assert list(res.selected) == [0, 2]
        assert res.threshold == pytest.approx(-scipy.stats.norm.ppf(0.1 * 2 / (2 * 7)))

    def test_many_means_iv(self):
        with pytest.raises(ValueError, match="Exactly one of `bh_q` and `k`"):
            many_means([1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="`k` must be an integer in \\[1, 2\\]"):
            many_means([1.0, 2.0, 3.0], k=3)
        with pytest.raises(ValueError, match="`sigma` must be a finite positive"):
            many_means([1.0, 2.0, 3.0], k=1, sigma=-1)


# ------------------------------------------------------------------------------------------
# Simulations under the null: the selective p-value is U(0, 1)
# ------------------------------------------------------------------------------------------

def _null_lasso_pvalues(n_trials, rng):
    n, p, lam = 25, 5, 6.0
    X = rng.standard_normal((n, p))  # fixed design
    pvals = []
    for _ in range(n_trials):
        y = rng.standard_normal(n)  # beta = 0, sigma = 1
        res = fixed_lasso_inference(X, y, lam, sigma=1.0)
        if res.variables:
            pvals.append(float(res.pvalue[0]))  # the first selected variable: one p per draw
    return np.array(pvals)


def test_fixed_lasso_pvalue_uniform_under_null():
    # KS test of uniformity on ~1000 selective p-values; under the null the p-value of each
    # selected variable is exactly U(0,1) (Lee et al. 2016, Thm 5.2). A naive z-test p-value
    # fails this test (it is far too small after selection): checked below.
    rng = np.random.default_rng(20_260_101)
    pv = _null_lasso_pvalues(1500, rng)
    assert pv.size > 600
    assert scipy.stats.kstest(pv, "uniform").pvalue > FALSE_FAILURE_RATE
    assert_rate_near(int(np.sum(pv <= 0.1)), pv.size, 0.1)


def test_naive_pvalue_fails_the_same_check():
    rng = np.random.default_rng(20_260_101)
    n, p, lam = 25, 5, 6.0
    X = rng.standard_normal((n, p))
    naive = []
    for _ in range(400):
        y = rng.standard_normal(n)
        res = fixed_lasso_inference(X, y, lam, sigma=1.0)
        if res.variables:
            naive.append(float(res.pvalue_naive[0]))
    assert scipy.stats.kstest(naive, "uniform").pvalue < 1e-6  # the check has power


@pytest.mark.slow
def test_fs_sequential_pvalue_uniform_under_null():
    rng = np.random.default_rng(7_777)
    n, p = 30, 6
    X = rng.standard_normal((n, p))
    first, second = [], []
    for _ in range(1000):
        y = rng.standard_normal(n)
        res = fs_inference(forward_stepwise(X, y, maxsteps=2), sigma=1.0)
        first.append(res.pvalue[0])
        second.append(res.pvalue[1])
    for pv in (first, second):
        assert scipy.stats.kstest(pv, "uniform").pvalue > FALSE_FAILURE_RATE


@pytest.mark.slow
def test_lasso_interval_covers_under_signal():
    # coverage of the partial target b_E = (X_E'X_E)^{-1} X_E' mu; 1 - alpha = 0.9
    rng = np.random.default_rng(31_415)
    n, p = 40, 6
    X = rng.standard_normal((n, p))
    beta = np.array([1.0, -0.6, 0, 0, 0, 0])
    mu = X @ beta
    hits = total = 0
    for _ in range(600):
        y = mu + rng.standard_normal(n)
        res = fixed_lasso_inference(X, y, 8.0, sigma=1.0)
        if not res.variables:
            continue
        Xc = X - X.mean(0)
        target = np.linalg.pinv(Xc[:, res.index]) @ (mu - mu.mean())
        hits += int(np.sum((res.ci[:, 0] <= target) & (target <= res.ci[:, 1])))
        total += len(res.variables)
    assert_rate_near(hits, total, 0.9)


def test_binomial_own_solver_against_r_case():
    # selectiveInference 1.2.5 + glmnet 4.1-6 (thresh 1e-14), case 15 of the reference folder:
    # our proximal-Newton logistic lasso reproduces glmnet's beta to ~1e-9, hence coef0 and
    # the p-values at the level of that convergence error.
    import json
    import pathlib

    ref_dir = pathlib.Path(__file__).resolve().parents[1] / "reference" / "r-selectiveinference"
    case = json.loads((ref_dir / "case_15_fixedlasso_binomial_n100p10_lam4.json").read_text())
    data = pd.read_csv(ref_dir / "binom_n100_p10.csv")
    res = fixed_lasso_inference(data, "y", 4.0, family="binomial")
    assert [j + 1 for j in res.index] == case["output"]["vars"]
    assert np.allclose(res.extra["beta"], case["args"]["beta"], rtol=0, atol=1e-7)
    assert np.allclose(res.estimate, case["output"]["coef0"], rtol=1e-6)
    assert np.allclose(res.pvalue, case["output"]["pv"], rtol=1e-5)
