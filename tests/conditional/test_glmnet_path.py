"""The glmnet-compatible lasso path: every grid solution is the exact lasso solution (KKT
conditions to 1e-9 of lambda, plus 1e-12 of lambda_max for the rounding of the gradient),
whichever route solved it (active-set rounds, the Gram matrices of cross-validation obtained by
subtracting the held-out rows, or the coordinate-descent fallback). Deterministic (fixed
seeds); no statistical tests here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from selective.conditional._glmnet import cv_lasso_paths, lasso_path

KKT_RTOL = 1e-9


def _design(seed, n, p, *, corr=0.0, shift=3.0):
    rng = np.random.default_rng(seed)
    X = np.sqrt(1 - corr) * rng.standard_normal((n, p)) + np.sqrt(corr) * rng.standard_normal((n, 1))
    X = X * rng.uniform(0.5, 2.0, p) + rng.normal(0, shift, p)
    beta = np.zeros(p)
    beta[: min(5, p)] = rng.normal(0, 1, min(5, p))
    return X, X @ beta + rng.standard_normal(n) + 2.0


def _assert_kkt(X, y, path, *, intercept=True, standardize=True):
    """Each grid solution minimises (1/2n)||y - b0 - Xb||^2 + lam sum_j w_j |b_j|."""
    n = y.size
    w = np.sqrt(np.mean((X - X.mean(0)) ** 2, axis=0)) if standardize else np.ones(X.shape[1])
    Xc = X - X.mean(0) if intercept else X   # centred: no cancellation with large column means
    # the gradient itself is computed with an absolute rounding error of order eps times its size at
    # b = 0 (lambda_max): found by hypothesis at lambda = 7e-5 with lambda_max of order 1 (error 1e-13)
    slack = 1e-12 * path.lam[0]
    for lam, a0, b in zip(path.lam[1:], path.a0[1:], path.beta[1:], strict=True):
        r = y - a0 - X @ b
        grad = Xc.T @ ((y - y.mean()) - Xc @ b if intercept else r) / n / w
        on = b != 0
        assert np.all(np.abs(grad[on] - lam * np.sign(b[on])) <= KKT_RTOL * lam + slack), lam
        assert np.all(np.abs(grad[~on]) <= lam * (1 + KKT_RTOL) + slack), lam
        if intercept:
            assert abs(r.sum()) <= 1e-8 * n * max(1.0, np.abs(y).max())


CASES = [  # (seed, n, p, corr)
    (1, 200, 20, 0.0), (2, 120, 30, 0.5), (3, 80, 60, 0.9), (4, 300, 40, 0.99),
    (5, 40, 80, 0.0), (6, 30, 200, 0.5), (7, 50, 51, 0.0),
]


class TestLassoPath:
    @pytest.mark.parametrize("case", CASES, ids=lambda c: f"n{c[1]}p{c[2]}r{c[3]}")
    @pytest.mark.parametrize("opts", [{}, {"intercept": False}, {"standardize": False}], ids=str)
    def test_every_grid_solution_meets_the_kkt_conditions(self, case, opts):
        seed, n, p, corr = case
        X, y = _design(seed, n, p, corr=corr)
        path = lasso_path(X, y, **opts)
        assert np.all(path.beta[0] == 0) and path.lam.size >= 5
        _assert_kkt(X, y, path, **opts)

    def test_duplicated_columns_fall_back_and_stay_exact(self):
        # Z_E'Z_E is singular once both copies would enter: the coordinate-descent route
        X, y = _design(8, 100, 10)
        X = np.column_stack([X, X[:, 0]])
        path = lasso_path(X, y)
        _assert_kkt(X, y, path)

    def test_constant_column_is_named(self):
        X, y = _design(9, 50, 5)
        X[:, 3] = 2.5
        with pytest.raises(ValueError, match="`X` column 3 is constant"):
            lasso_path(X, y)


class TestCrossValidationPaths:
    @pytest.mark.parametrize("opts", [{}, {"intercept": False}, {"standardize": False}], ids=str)
    @pytest.mark.parametrize("shift", [3.0, 1e6], ids=["means_3", "means_1e6"])
    def test_downdated_gram_gives_the_paths_of_the_training_rows(self, opts, shift):
        # the training sets' Gram matrices are the full one minus the held-out rows': the same
        # grid, stop and solutions as a path computed on the training rows themselves
        X, y = _design(10, 150, 20, corr=0.3, shift=shift)
        fold = np.random.default_rng(0).permutation(np.resize(np.arange(1, 11), y.size))
        full, fits = cv_lasso_paths(X, y, fold, range(1, 11), **opts)
        ref = lasso_path(X, y, **opts)
        np.testing.assert_allclose(full.lam, ref.lam, rtol=1e-12)
        np.testing.assert_allclose(full.beta, ref.beta, rtol=1e-8, atol=1e-9 * np.abs(ref.beta).max())
        for f, fit in zip(range(1, 11), fits, strict=True):
            keep = fold != f
            direct = lasso_path(X[keep], y[keep], **opts)
            assert fit.lam.size == direct.lam.size
            np.testing.assert_allclose(fit.lam, direct.lam, rtol=1e-10)
            scale = np.abs(direct.beta).max()
            np.testing.assert_allclose(fit.beta, direct.beta, rtol=1e-7, atol=1e-9 * scale)
            np.testing.assert_allclose(fit.a0, direct.a0, rtol=1e-7, atol=1e-9 * max(1.0, abs(direct.a0).max()))
            _assert_kkt(X[keep], y[keep], fit, **opts)

    def test_column_constant_on_a_training_set_is_named(self):
        X, y = _design(11, 60, 6)
        fold = np.resize(np.arange(1, 4), 60)
        X[:, 2] = np.where(fold == 1, np.arange(60.0), 7.0)   # constant outside fold 1
        with pytest.raises(ValueError, match="`X` column 2 is constant"):
            cv_lasso_paths(X, y, fold, (1, 2, 3))

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 10**6), n=st.integers(12, 60), p=st.integers(1, 12),
           corr=st.sampled_from([0.0, 0.6, 0.95]), k=st.integers(3, 6))
    @example(seed=61734, n=14, p=10, corr=0.95, k=5)  # lambda = 7e-5: the gradient's rounding
    def test_fold_paths_are_exact_for_any_split(self, seed, n, p, corr, k):
        X, y = _design(seed, n, p, corr=corr)
        fold = np.random.default_rng(seed).permutation(np.resize(np.arange(1, k + 1), n))
        full, fits = cv_lasso_paths(X, y, fold, range(1, k + 1))
        _assert_kkt(X, y, full)
        for f, fit in zip(range(1, k + 1), fits, strict=True):
            _assert_kkt(X[fold != f], y[fold != f], fit)
