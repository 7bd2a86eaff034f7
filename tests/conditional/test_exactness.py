"""Null simulations: what is labelled exact (or valid) holds its level.

* LAR knot test ``pvalue_modspac``: both truncation limits from one conditioning event, so it is
  U(0, 1) under the global null. (Truncating with limits of two different events, the earlier
  behaviour, fails this check: KS p-value about 1e-19 at step 4 with this design and seed.)
* Unknown sigma: the default method (``sigma_method="auto"``, the sup over a confidence interval
  for sigma plus delta) rejects at most alpha at alpha = 0.05, 0.01 and 0.001 with very few
  residual degrees of freedom, where R's plug-in rejects far more often (checked too, so the
  simulation has power). delta = 5e-4 (below every level checked; the p-values are never below
  delta, so with the default delta = alpha / 10 = 0.005 the check at 0.001 would be empty).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE, assert_rate_at_most

from selective.conditional import (
    fixed_lasso_inference,
    forward_stepwise,
    fs_inference,
    lar_inference,
    least_angle_regression,
)

LEVELS = (0.05, 0.01, 0.001)
DELTA = 5e-4


@pytest.mark.slow
def test_lar_modspac_uniform_under_the_global_null():
    """600 null responses on one correlated design (n = 30, p = 10, AR(1) correlation 0.8), four
    LAR steps, sigma known: KS test of the knot p-values of each step (Bonferroni over the four
    steps, false-failure rate 1e-6 in all). About 3 s."""
    rng = np.random.default_rng(1)
    n, p, k, rho = 30, 10, 4, 0.8
    corr = rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(corr).T
    pv = [[] for _ in range(k)]
    for _ in range(600):
        y = rng.standard_normal(n)
        res = lar_inference(least_angle_regression(X, y, maxsteps=k + 1), sigma=1.0, k=k)
        for t in range(k):
            pv[t].append(res.pvalue_modspac[t])
    for t in range(k):
        ks = scipy.stats.kstest(pv[t], "uniform").pvalue
        assert ks > FALSE_FAILURE_RATE / k, f"step {t + 1}: KS p-value {ks:.2e}"


def _rates(pvals):
    pvals = np.asarray(pvals)
    return {a: int(np.sum(pvals <= a)) for a in LEVELS}


def _assert_default_valid_and_plugin_not(default, plugin):
    n_default, n_plugin = len(default), len(plugin)
    hits, hits_plugin = _rates(default), _rates(plugin)
    for a in LEVELS:  # three checks, false-failure rate 1e-6 in all
        assert_rate_at_most(hits[a], n_default, a, false_failure_rate=FALSE_FAILURE_RATE / 3)
    # R's plug-in with this few residual df is far above the level (the simulation has power)
    p_plugin = scipy.stats.binomtest(hits_plugin[0.01], n_plugin, 0.01, alternative="greater").pvalue
    assert p_plugin < 1e-6, f"plug-in rejected {hits_plugin[0.01]}/{n_plugin} at 0.01"


@pytest.mark.slow
def test_unknown_sigma_forward_stepwise_holds_its_level():
    """Forward stepwise, n = 8, p = 4 (3 residual df), two steps, every variable of the 2-step
    model tested two-sided, global null with sigma = 2 unknown; 300 replications. About 4 s.
    R's plug-in (residual SE on 3 df) rejects about 9% at 0.01 and 5% at 0.001 here."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 4))
    default, plugin = [], []
    for _ in range(300):
        y = 2.0 * rng.standard_normal(8)
        path = forward_stepwise(X, y, maxsteps=2)
        res = fs_inference(path, k=2, type="all", alternative="two-sided", alpha=0.05, sigma_delta=DELTA)
        assert res.sigma_mode == "interval"
        default.append(res.pvalue[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plug = fs_inference(path, k=2, type="all", alternative="two-sided", alpha=0.05, sigma_method="plugin")
        plugin.append(plug.pvalue[0])
    _assert_default_valid_and_plugin_not(default, plugin)


@pytest.mark.slow
def test_unknown_sigma_lasso_holds_its_level():
    """Lasso at lam = 2.5, n = 10, p = 5 (4 residual df), the first selected variable tested
    two-sided, global null with sigma = 1 unknown; 300 replications (about 270 select). About 4 s.
    R's plug-in rejects about 7% at 0.01 and 3% at 0.001 here."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((10, 5))
    default, plugin = [], []
    for _ in range(300):
        y = rng.standard_normal(10)
        res = fixed_lasso_inference(X, y, 2.5, alternative="two-sided", alpha=0.05, sigma_delta=DELTA)
        if not res.variables:
            continue
        assert res.sigma_mode == "interval"
        default.append(res.pvalue[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plug = fixed_lasso_inference(X, y, 2.5, alternative="two-sided", alpha=0.05, sigma_method="plugin")
        plugin.append(plug.pvalue[0])
    assert len(default) > 200
    _assert_default_valid_and_plugin_not(default, plugin)
