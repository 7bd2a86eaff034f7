"""Grouped forward stepwise: theory checks, bad input and null simulations (TC and TF)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.conditional import group_forward_stepwise, groupfs_inference

INDEX = [1, 1, 2, 2, 3, 4, 4, 4]


def _xy(rng, n=40, signal=0.0):
    X = rng.standard_normal((n, len(INDEX)))
    y = signal * X[:, 0] + rng.standard_normal(n)
    return X, y


class TestGroupfs:
    def test_first_group_maximises_the_penalised_drop(self):
        rng = np.random.default_rng(1)
        X, y = _xy(rng, signal=2.0)
        path = group_forward_stepwise(X, y, INDEX, maxsteps=1, sigma=1.0)
        Xc, yc = X - X.mean(0), y - y.mean()
        crit = {}
        for g in set(INDEX):
            cols = [j for j, h in enumerate(INDEX) if h == g]
            Q, _ = np.linalg.qr(Xc[:, cols])
            crit[g] = np.sum((Q.T @ yc) ** 2) - 2 * len(cols)
        assert path.action[0] == max(crit, key=crit.get) == 1

    def test_tc_without_constraints_is_the_chi_test(self):
        # one group, one step: no competitor, so the support is [0, inf) and TC is the usual
        # chi test of the group
        rng = np.random.default_rng(2)
        X = rng.standard_normal((30, 2))
        y = rng.standard_normal(30)
        res = groupfs_inference(group_forward_stepwise(X, y, [1, 1], maxsteps=1, sigma=1.0,
                                                       center="columns"), sigma=1.0)
        Xc, yc = X - X.mean(0), y - y.mean()
        Q, _ = np.linalg.qr(Xc)
        T = np.linalg.norm(Q.T @ yc)
        assert res.statistic[0] == pytest.approx(T)
        assert res.pvalue[0] == pytest.approx(scipy.stats.chi2.sf(T ** 2, 2), rel=1e-10)
        assert res.support[0][0, 0] == 0.0 and res.support[0][0, 1] == np.inf

    def test_frame_columns(self):
        rng = np.random.default_rng(3)
        X, y = _xy(rng, signal=1.0)
        res = groupfs_inference(group_forward_stepwise(X, y, INDEX, maxsteps=2))
        assert list(res.to_frame().columns) == ["group", "df", "statistic_name", "statistic",
                                                "pvalue", "support_low", "support_high",
                                                "n_support_intervals", "sigma", "df2"]
        assert res.statistic_name == "TF"

    def test_center_true_subtracts_one_mean_per_group(self):  # R-compatible mode
        # selectiveInference's groupfs convention: each group minus the mean of all its
        # entries, then divided by its Frobenius norm; the fits are least squares of the
        # centred y on these columns (not on the column-centred ones)
        rng = np.random.default_rng(5)
        X, y = _xy(rng, signal=1.0)
        X = X + rng.uniform(-1, 1, X.shape[1])  # unequal column means
        path = group_forward_stepwise(X, y, INDEX, maxsteps=3, center=True)
        Xs, yc = path.x_std, y - y.mean()
        for g in set(INDEX):
            cols = [j for j, h in enumerate(INDEX) if h == g]
            Xg = X[:, cols] - X[:, cols].mean()
            assert np.allclose(Xs[:, cols], Xg / np.linalg.norm(Xg), rtol=0, atol=1e-14)
        for step in range(3):
            cols = [j for j, h in enumerate(INDEX) if h in path.action[:step + 1]]
            coef = np.linalg.lstsq(Xs[:, cols], yc, rcond=None)[0]
            rss = np.sum((yc - Xs[:, cols] @ coef) ** 2)
            assert path.rss[step] == pytest.approx(rss, rel=1e-12)
        res = groupfs_inference(path)
        rank = np.linalg.matrix_rank(Xs[:, [j for j, h in enumerate(INDEX) if h in path.action]])
        assert res.df2 == X.shape[0] - rank - 2  # the package's n - rank - intercept - 1

    def test_center_columns_is_least_squares_with_intercept(self):
        rng = np.random.default_rng(6)
        X, y = _xy(rng, signal=1.0)
        X = X + rng.uniform(-1, 1, X.shape[1])
        path = group_forward_stepwise(X, y, INDEX, maxsteps=3, center="columns")
        for step in range(3):
            cols = [j for j, h in enumerate(INDEX) if h in path.action[:step + 1]]
            A = np.column_stack([np.ones(X.shape[0]), X[:, cols]])
            coef = np.linalg.lstsq(A, y, rcond=None)[0]
            assert path.rss[step] == pytest.approx(np.sum((y - A @ coef) ** 2), rel=1e-12)
        res = groupfs_inference(path)
        assert res.df2 == X.shape[0] - len(cols) - 1  # exact residual dimension

    def test_case31_path_rss_matches_r(self):
        # per-step RSS of R's groupfs on the reference data (path.log of case 31)
        import json
        import pathlib

        import pandas as pd

        ref_dir = pathlib.Path(__file__).resolve().parents[1] / "reference" / "r-selectiveinference"
        case = json.loads((ref_dir / "case_31_groupfs_n60_unknown_sigma.json").read_text())
        df = pd.read_csv(ref_dir / case["inputs"]["xy"]["file"])
        X = df[case["inputs"]["xy"]["x_columns"]].to_numpy(float)
        y = df[case["inputs"]["xy"]["y_column"]].to_numpy(float)
        path = group_forward_stepwise(X, y, case["args"]["index"], maxsteps=4, center=True)
        assert list(path.action) == case["path"]["action"]
        assert np.allclose(path.rss, case["path"]["log"]["RSS"], rtol=1e-12, atol=0)
        # column centring gives the (smaller) least-squares RSS, not R's
        cols = group_forward_stepwise(X, y, case["args"]["index"], maxsteps=1, center="columns")
        assert cols.rss[0] < path.rss[0] - 1e-3

    def test_groupfs_iv(self):
        rng = np.random.default_rng(4)
        X, y = _xy(rng)
        with pytest.raises(ValueError, match="`index` must give one group label per column"):
            group_forward_stepwise(X, y, [1, 2], maxsteps=2)
        with pytest.raises(ValueError, match="`maxsteps` must be an integer >= 1"):
            group_forward_stepwise(X, y, INDEX, maxsteps=0)
        with pytest.raises(ValueError, match="`sigma` must be a finite positive"):
            group_forward_stepwise(X, y, INDEX, sigma=-2.0)
        with pytest.raises(ValueError, match="`center` must be True, False"):
            group_forward_stepwise(X, y, INDEX, center="rows")
        with pytest.raises(ValueError, match="group 2 of `X` is zero"):
            group_forward_stepwise(np.column_stack([X[:, :2], np.ones((40, 2)), X[:, 4:]]), y,
                                   INDEX)
        with pytest.raises(TypeError, match="`path` must be a GroupStepwisePath"):
            groupfs_inference("path")


def _null_pvalues(known_sigma: bool, n_trials: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, len(INDEX)))
    out = []
    for _ in range(n_trials):
        y = rng.standard_normal(40)
        s = 1.0 if known_sigma else None
        res = groupfs_inference(group_forward_stepwise(X, y, INDEX, maxsteps=2, sigma=s), sigma=s)
        out.extend(res.pvalue)
    return np.array(out)


@pytest.mark.parametrize("known_sigma", [True, False], ids=["TC", "TF"])
def test_groupfs_pvalue_uniform_under_null(known_sigma):
    # global null: every selected group's coefficients are 0, so each p-value is U(0, 1)
    # (Loftus & Taylor 2015, Thm 3.1 / 3.2). 2 x 300 p-values; a KS test at 1e-6 detects a
    # shift of the median by about 0.1.
    pv = _null_pvalues(known_sigma, 300, 99 if known_sigma else 98)
    assert scipy.stats.kstest(pv, "uniform").pvalue > FALSE_FAILURE_RATE


def test_naive_chi_pvalue_fails_the_same_check():
    # the same simulation with the untruncated chi p-value is far from uniform: the check has
    # power (KS p-value about 1e-35 here)
    rng = np.random.default_rng(99)
    X = rng.standard_normal((40, len(INDEX)))
    naive = []
    for _ in range(150):
        y = rng.standard_normal(40)
        res = groupfs_inference(group_forward_stepwise(X, y, INDEX, maxsteps=2, sigma=1.0),
                                sigma=1.0)
        naive.extend(scipy.stats.chi2.sf(res.statistic ** 2, res.df))
    assert scipy.stats.kstest(naive, "uniform").pvalue < FALSE_FAILURE_RATE
