"""How sigma enters the conditional tests: known (exact), unknown with the valid sup + delta
construction, or plug-in (approximate). Definitions, labels, warnings and bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats
import statsmodels.api as sm

from selective.conditional import (
    fixed_lasso_inference,
    forward_stepwise,
    fs_inference,
    lar_inference,
    least_angle_regression,
    truncated_normal_interval,
    truncated_normal_pvalue,
)
from selective.conditional._sigma import sup_pvalue, union_interval
from selective.exceptions import SelectiveWarning


def _data(n=20, p=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = 1.5 * X[:, 0] - X[:, 1] + rng.standard_normal(n)
    return X, y


# limits chosen so that the p-value is not monotone in sigma (0 inside [vlo, vup]) or is
CASES = [(1.3, 1.0, -0.5, 2.0), (1.9, 1.0, -0.5, 2.0), (0.2, 1.0, -3.0, 0.4), (-1.0, 1.0, -1.5, 4.0),
         (2.5, 0.7, 0.4, math.inf), (0.5, 1.0, 0.4, 0.6), (3.0, 1.0, -math.inf, math.inf)]


@pytest.mark.parametrize("stat, sd_unit, vlo, vup", CASES)
@pytest.mark.parametrize("alternative", ["one-sided", "two-sided"])
def test_sup_pvalue_against_a_dense_grid(stat, sd_unit, vlo, vup, alternative):
    low, high = 0.4, 3.0
    sig = np.exp(np.linspace(math.log(low), math.log(high), 20_001))
    alt = "greater" if alternative == "one-sided" else "two-sided"
    dense = np.max(truncated_normal_pvalue(stat, sd=sig * sd_unit, vlo=vlo, vup=vup, alternative=alt))
    got = sup_pvalue(stat, sd_unit, vlo, vup, low, high, alternative)
    # the supremum is at least every grid value and at most a hair above the dense maximum
    assert got >= dense * (1 - 1e-9)
    assert got <= dense * (1 + 1e-6) + 1e-15


@pytest.mark.parametrize("stat, sd_unit, vlo, vup", CASES)
def test_union_interval_against_a_grid(stat, sd_unit, vlo, vup):
    low, high, alpha = 0.4, 3.0, 0.09
    sig = np.exp(np.linspace(math.log(low), math.log(high), 301))
    lo, hi = truncated_normal_interval(np.full(sig.size, stat), sd=sig * sd_unit, vlo=vlo, vup=vup,
                                       alpha=alpha, gridrange=(-100, 100))
    got_lo, got_hi = union_interval(stat, sd_unit, vlo, vup, low, high, alpha, 100.0)
    assert got_lo <= np.min(lo) + 1e-7 * max(1.0, abs(np.min(lo)))
    assert got_hi >= np.max(hi) - 1e-7 * max(1.0, abs(np.max(hi)))
    # ... and is not wider than the grid hull by more than the grid's resolution
    span = np.max(hi) - np.min(lo)
    if math.isfinite(span):
        assert got_lo >= np.min(lo) - 1e-3 * span and got_hi <= np.max(hi) + 1e-3 * span


def test_sigma_interval_is_the_chi_square_interval_of_the_full_model():
    X, y = _data(seed=3)
    res = fixed_lasso_inference(X, y, 4.0, alpha=0.1)
    ols = sm.OLS(y, sm.add_constant(X)).fit()
    d = int(ols.df_resid)
    assert res.sigma_mode == "interval" and res.sigma_df == d == 20 - 10 - 1
    assert res.sigma_delta == pytest.approx(0.01)  # alpha / 10
    rss = float(ols.ssr)
    assert res.sigma == pytest.approx(math.sqrt(rss / d), rel=1e-10)
    lo, hi = res.sigma_interval
    assert lo == pytest.approx(math.sqrt(rss / scipy.stats.chi2.ppf(0.995, d)), rel=1e-10)
    assert hi == pytest.approx(math.sqrt(rss / scipy.stats.chi2.ppf(0.005, d)), rel=1e-10)


@pytest.mark.parametrize("alternative", ["one-sided", "two-sided"])
def test_interval_mode_is_sup_over_known_sigma_plus_delta(alternative):
    """The reported p-value is max over sigma in the interval of the known-sigma p-value, + delta;
    the interval is the hull of the known-sigma intervals at level alpha - delta."""
    X, y = _data(seed=5)
    alpha, delta = 0.1, 0.02
    res = fixed_lasso_inference(X, y, 4.0, alpha=alpha, sigma_delta=delta, alternative=alternative)
    assert res.variables
    lo, hi = res.sigma_interval
    grid = np.exp(np.linspace(math.log(lo), math.log(hi), 120))
    known = [fixed_lasso_inference(X, y, 4.0, sigma=float(s), alpha=alpha - delta, alternative=alternative)
             for s in grid]
    pmax = np.max([k.pvalue for k in known], axis=0)
    np.testing.assert_array_less(np.minimum(1.0, pmax + delta) - 1e-9, res.pvalue + 1e-12)
    np.testing.assert_allclose(res.pvalue, np.minimum(1.0, pmax + delta), rtol=1e-3)
    lows = np.min([k.ci[:, 0] for k in known], axis=0)
    highs = np.max([k.ci[:, 1] for k in known], axis=0)
    assert np.all(res.ci[:, 0] <= lows + 1e-7 * np.abs(lows))
    assert np.all(res.ci[:, 1] >= highs - 1e-7 * np.abs(highs))
    assert np.all(res.tailarea[np.isfinite(res.ci)] == pytest.approx((alpha - delta) / 2))


def test_labels_and_reprs():
    X, y = _data(seed=1)
    known = fixed_lasso_inference(X, y, 4.0, sigma=1.0)
    est = fixed_lasso_inference(X, y, 4.0)
    with pytest.warns(SelectiveWarning, match=r"approximate \(plug-in sigma, 9 residual df\)"):
        plug = fixed_lasso_inference(X, y, 4.0, sigma_method="plugin")
    assert known.inference == "exact conditional (sigma known)"
    assert est.inference.startswith("conditional, valid for unknown sigma") and "9 residual df" in est.inference
    assert plug.inference == "approximate (plug-in sigma, 9 residual df)"
    for r in (known, est, plug):
        assert f"inference={r.inference!r}" in repr(r)
        assert r.inference in r.summary()
    assert "exact" not in plug.summary().split("\n")[0] and "exact" not in est.inference


def test_stepwise_modes():
    X, y = _data(seed=2)
    path = forward_stepwise(X, y, maxsteps=4)
    assert fs_inference(path, sigma=1.0).sigma_mode == "known"
    assert fs_inference(path).sigma_mode == "interval"
    lar = lar_inference(least_angle_regression(X, y, maxsteps=4))
    assert lar.sigma_mode == "interval"
    # every LAR knot p-value is a sup + delta too: never below delta
    for col in (lar.pvalue, lar.pvalue_spacing, lar.pvalue_modspac, lar.pvalue_covtest):
        assert np.all(np.asarray(col) >= lar.sigma_delta)
    # the AIC rule uses sigma in the selection: no valid construction, plug-in with a warning
    with pytest.warns(SelectiveWarning, match="AIC rule .* uses sigma in the selection"):
        aic = fs_inference(path, type="aic", k=4)
    assert aic.sigma_mode == "plugin"
    with pytest.raises(ValueError, match="`sigma_method`='interval' is not available here: the AIC rule"):
        fs_inference(path, type="aic", k=4, sigma_method="interval")


def test_no_residual_df_falls_back_to_plugin_with_a_warning():
    X, y = _data(n=11, p=10, seed=4)  # n = p + 1: no residual df with an intercept
    with pytest.warns(SelectiveWarning, match=r"n <= p \+ 1 .*approximate \(plug-in sigma, 10 residual df\)"):
        res = fixed_lasso_inference(X, y, 2.0)
    assert res.sigma_mode == "plugin" and res.sigma_df == 10
    with pytest.raises(ValueError, match="`sigma_method`='interval' is not available here: the full model "
                                         "leaves 0 residual df"):
        fixed_lasso_inference(X, y, 2.0, sigma_method="interval")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SelectiveWarning)
        fixed_lasso_inference(X, y, 2.0, intercept=False)  # without an intercept one df is left


def test_sigma_options_iv():
    X, y = _data()
    with pytest.raises(ValueError, match="`sigma_method` must be one of 'auto', 'interval', 'plugin'"):
        fixed_lasso_inference(X, y, 4.0, sigma_method="estimate")
    with pytest.raises(ValueError, match=r"`sigma_delta` must be a real number in \(0, alpha\) = \(0, 0.1\)"):
        fixed_lasso_inference(X, y, 4.0, alpha=0.1, sigma_delta=0.1)
    with pytest.raises(ValueError, match=r"`sigma_delta` must be a real number in \(0, 1\)"):
        fixed_lasso_inference(X, y, 4.0, sigma_delta=0.0)
    with pytest.raises(ValueError, match=r"`sigma_delta` must be a real number in \(0, alpha\)"):
        fixed_lasso_inference(X, y, 4.0, sigma=1.0, sigma_delta=0.5)  # checked even when unused
    with pytest.raises(ValueError, match="`sigma_method`='interval' estimates sigma; it cannot be combined"):
        fixed_lasso_inference(X, y, 4.0, sigma=1.0, sigma_method="interval")
    assert fixed_lasso_inference(X, y, 4.0, sigma=1.0, sigma_method="plugin").sigma_mode == "known"
    path = forward_stepwise(X, y, maxsteps=2)
    with pytest.raises(ValueError, match="`sigma_method` must be one of"):
        fs_inference(path, sigma_method=None)
    with pytest.raises(ValueError, match="`sigma_method` must be 'auto' or 'plugin' for family='binomial'"):
        fixed_lasso_inference(X, (y > 0).astype(float), 2.0, family="binomial", sigma_method="interval")
    with pytest.raises(ValueError, match="`sigma_delta` must be None for family='binomial'"):
        fixed_lasso_inference(X, (y > 0).astype(float), 2.0, family="binomial", sigma_delta=0.01)
