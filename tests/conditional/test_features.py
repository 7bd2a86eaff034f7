"""Offline checks of estimate_sigma, lambda on glmnet's scale, the debiased full target (p > n)
and the faster root finders (many means, grouped stepwise); the agreement with R is checked
live in test_live_r_features.py. Deterministic (fixed seeds), no statistical tests here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from selective.conditional import (
    SigmaEstimate,
    estimate_sigma,
    fixed_lasso_inference,
    many_means,
    solve_lasso,
)
from selective.conditional._debias import debiasing_matrix
from selective.conditional._glmnet import lambda_interp, lasso_path
from selective.conditional._inference import infer_contrasts
from selective.conditional.groupfs import _trig_region


def _data(seed=0, n=60, p=10, signal=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 2.0, p) + rng.normal(0, 1, p)
    beta = np.zeros(p)
    beta[:3] = signal * np.array([1.0, -1.0, 0.5])
    return X, X @ beta + rng.standard_normal(n) + 1.0


# ---------------------------------------------------------------- lambda_scale


class TestLambdaScale:
    def test_glmnet_scale_is_n_times_smaller(self):
        X, y = _data()
        n = y.size
        lam = 0.3 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean())))
        a = fixed_lasso_inference(X, y, lam, sigma=1.0)
        b = fixed_lasso_inference(X, y, lam / n, sigma=1.0, lambda_scale="glmnet")
        assert b.lam == pytest.approx(lam, rel=1e-15)
        assert b.extra["lambda_glmnet"] == pytest.approx(lam / n, rel=1e-15)
        assert np.array_equal(a.index, b.index)
        assert np.allclose(a.pvalue, b.pvalue, rtol=1e-12)
        assert np.allclose(a.ci, b.ci, rtol=1e-12)
        fa, fb = solve_lasso(X, y, lam), solve_lasso(X, y, lam / n, lambda_scale="glmnet")
        assert np.allclose(fa.beta, fb.beta, rtol=1e-12, atol=1e-14)

    def test_glmnet_scale_solution_solves_glmnets_objective(self):
        # glmnet: (1/2n)||y - b0 - Xb||^2 + s||b||_1, so X'(y - b0 - Xb)/n = s sign(b) on the support
        X, y = _data(1)
        n = y.size
        s = 0.2 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / n
        fit = solve_lasso(X, y, s, lambda_scale="glmnet")
        g = X.T @ (y - fit.intercept - X @ fit.beta) / n
        on = fit.beta != 0
        assert on.any() and (~on).any()
        assert np.allclose(g[on], s * np.sign(fit.beta[on]), rtol=1e-9)
        assert np.all(np.abs(g[~on]) <= s * (1 + 1e-9))

    def test_binomial_accepts_glmnet_scale(self):
        rng = np.random.default_rng(2)
        X = rng.standard_normal((150, 5))
        y = (rng.uniform(size=150) < 1 / (1 + np.exp(-X[:, 0]))).astype(float)
        a = fixed_lasso_inference(X, y, 6.0, family="binomial")
        b = fixed_lasso_inference(X, y, 6.0 / 150, family="binomial", lambda_scale="glmnet")
        assert np.allclose(a.pvalue, b.pvalue, rtol=1e-9)

    def test_bad_scale_is_named(self):
        X, y = _data()
        with pytest.raises(ValueError, match="`lambda_scale` must be one of"):
            fixed_lasso_inference(X, y, 1.0, lambda_scale="sklearn")
        with pytest.raises(ValueError, match="`lambda_scale` must be one of"):
            solve_lasso(X, y, 1.0, lambda_scale="R")


# ---------------------------------------------------------------- estimate_sigma


class TestEstimateSigma:
    def test_formula_of_r_at_the_chosen_lambda(self):
        X, y = _data(3, n=80, p=12)
        est = estimate_sigma(X, y, seed=1)
        assert isinstance(est, SigmaEstimate)
        fit = lasso_path(X, y)
        a0, beta = fit.coef_at(np.array([est.lambda_min]))
        rss = float(np.sum((y - a0[0] - X @ beta[0]) ** 2))
        df = int(np.count_nonzero(beta[0])) + 1
        assert est.df == df
        assert est.sigma == pytest.approx(math.sqrt(rss / (y.size - df - 1)), rel=1e-12)
        assert est.lam == pytest.approx(y.size * est.lambda_min, rel=1e-15)
        # lambda.min is the largest lambda attaining the minimum of the CV curve
        assert est.cvm[est.index_min] == np.min(est.cvm)
        assert np.all(est.cvm[: est.index_min] > np.min(est.cvm))
        assert set(est.to_frame().columns) == {"lambda", "lam", "cvm", "cvsd", "chosen"}

    def test_close_to_the_true_noise_level(self):
        X, y = _data(4, n=400, p=20)   # noise sd 1
        est = estimate_sigma(X, y, seed=2)
        assert 0.85 < est.sigma < 1.15

    def test_folds_are_r_like_and_reproducible(self):
        X, y = _data(5, n=53)
        a = estimate_sigma(X, y, seed=7)
        b = estimate_sigma(X, y, seed=7)
        assert a.sigma == b.sigma and np.array_equal(a.foldid, b.foldid)
        counts = np.bincount(a.foldid)[1:]
        assert counts.size == 10 and counts.max() - counts.min() <= 1
        c = estimate_sigma(X, y, foldid=a.foldid)
        assert c.sigma == a.sigma

    def test_glmnet_grid(self):
        X, y = _data(6, n=50, p=10)
        fit = lasso_path(X, y)
        lam = fit.lam
        n = y.size
        w = np.sqrt(np.mean((X - X.mean(0)) ** 2, axis=0))
        lam_max = np.max(np.abs((X - X.mean(0)).T @ (y - y.mean())) / w) / n
        assert lam[0] == pytest.approx(lam_max, rel=1e-12)
        assert np.allclose(np.diff(np.log(lam)), math.log(1e-4) / 99, rtol=1e-9)
        assert np.all(fit.beta[0] == 0)
        # the path stops early only where glmnet's rule says so
        d = fit.dev_ratio
        assert d[-1] > 0.999 or d[-1] - d[-2] < 1e-5 * d[-1] or lam.size == 100

    def test_lambda_interp_as_glmnet(self):
        lam = np.array([1.0, 0.5, 0.25, 0.125])
        left, right, frac = lambda_interp(lam, np.array([2.0, 1.0, 0.375, 0.125, 0.01]))
        assert left.tolist() == [0, 0, 1, 3, 3] and right.tolist() == [0, 0, 2, 3, 3]
        assert frac == pytest.approx([1.0, 1.0, 0.5, 1.0, 1.0], rel=1e-14)

    def test_bad_input(self):
        X, y = _data(n=9)
        with pytest.raises(ValueError, match="at least 10 rows"):
            estimate_sigma(X, y)
        X, y = _data(n=30)
        with pytest.raises(ValueError, match="at least 3 folds"):
            estimate_sigma(X, y, foldid=np.repeat([1, 2], 15))
        with pytest.raises(ValueError, match="`foldid` must be 30 integer"):
            estimate_sigma(X, y, foldid=np.arange(10))
        with pytest.raises(ValueError, match="`nfolds` must be"):
            estimate_sigma(X, y, nfolds=2)
        with pytest.raises(TypeError, match="`standardize` must be True or False"):
            estimate_sigma(X, y, standardize="yes")


# ---------------------------------------------------------------- type="full", p > n


class TestDebiasedFull:
    def _wide(self, seed=8, n=25, p=40):
        X, y = _data(seed, n=n, p=p, signal=2.0)
        lam = 0.35 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean())))
        return X, y, lam

    def test_estimates_are_contrasts_minus_offsets(self):
        X, y, lam = self._wide()
        res = fixed_lasso_inference(X, y, lam, sigma=1.0, type="full")
        assert "debiased" in res.method and res.index.size >= 1
        yc = y - y.mean()
        nu = np.asarray(res.extra["debiasing_offset"])
        assert np.allclose(res.estimate, res.contrasts @ yc - nu, rtol=1e-12, atol=1e-14)
        t = res.sign * res.estimate
        assert np.all((res.vlo <= t + 1e-9) & (t <= res.vup + 1e-9))
        assert np.allclose(res.sd, np.linalg.norm(res.contrasts, axis=1), rtol=1e-12)

    def test_contrasts_depend_on_the_selection_only(self):
        # the exactness of the test rests on M depending on y only through the selected set and
        # signs: a small change of y that keeps them keeps M and nu
        X, y, lam = self._wide(9)
        a = fixed_lasso_inference(X, y, lam, sigma=1.0, type="full")
        b = fixed_lasso_inference(X, y + 1e-4 * np.random.default_rng(0).standard_normal(y.size), lam,
                                  sigma=1.0, type="full")
        assert np.array_equal(a.index, b.index) and np.array_equal(a.sign, b.sign)
        assert np.allclose(a.contrasts, b.contrasts, rtol=1e-12, atol=1e-15)
        assert np.allclose(a.extra["debiasing_offset"], b.extra["debiasing_offset"], rtol=1e-12)

    def test_debiasing_rows_approximately_invert_the_gram_matrix(self):
        rng = np.random.default_rng(10)
        n, p = 40, 60
        X = rng.standard_normal((n, p))
        X -= X.mean(0)
        theta = debiasing_matrix(X, range(3))
        S = X.T @ X / n
        mu = math.sqrt(1 / n) * -special.ndtri(0.1 / p ** 2)
        # Javanmard & Montanari's constraint |Sigma theta - e_j|_inf <= mu, at the first bound
        for j in range(3):
            e = np.zeros(p)
            e[j] = 1.0
            assert np.max(np.abs(S @ theta[j] - e)) <= mu * (1 + 1e-3)

    def test_offsets_shift_the_polyhedral_law(self):
        # testing mean(c'y - o) = 0 on {Ay <= b} is testing mean(c'(y - w)) = 0 on
        # {A(y - w) <= b - Aw} for any w with c'w = o (Lee et al. 2016, Lemma 5.1)
        rng = np.random.default_rng(11)
        n = 8
        A = rng.standard_normal((5, n))
        y = rng.standard_normal(n)
        b = A @ y + rng.uniform(0.1, 1.0, 5)
        c = rng.standard_normal((1, n))
        o = 0.7
        w = o * c[0] / (c[0] @ c[0])
        kw = dict(sigma=1.3, alpha=0.1, alternative="one-sided", gridrange=(-100, 100))
        for sgn in (1.0, -1.0):
            r1 = infer_contrasts(A, b, y, c, np.array([sgn]), offsets=np.array([o]), **kw)
            r2 = infer_contrasts(A, b - A @ w, y - w, c, np.array([sgn]), **kw)
            for key in ("estimate", "vlo", "vup", "pvalue", "ci"):
                assert np.allclose(r1[key], r2[key], rtol=1e-9, atol=1e-12), key


# ---------------------------------------------------------------- faster root finders


class TestFasterRoots:
    def test_many_means_is_odd_and_solves_its_equations(self):
        rng = np.random.default_rng(12)
        y = np.concatenate([rng.normal(0, 1, 200), [4.0, -4.0, 7.5, -2.9]])
        res = many_means(y, k=6)
        c = res.threshold
        sel = list(res.selected)
        i, j = sel.index(200), sel.index(201)       # +4 and -4: mirror images
        assert res.mu_hat[i] == pytest.approx(-res.mu_hat[j], rel=1e-13)
        assert res.ci[i, 0] == pytest.approx(-res.ci[j, 1], rel=1e-13)
        for k, idx in enumerate(sel):
            z, mu = y[idx], res.mu_hat[k]
            den = special.ndtr(-(c - mu)) + special.ndtr(-c - mu)
            mean = mu + (np.exp(-0.5 * (c - mu) ** 2) - np.exp(-0.5 * (c + mu) ** 2)) / math.sqrt(2 * math.pi) / den
            assert mean == pytest.approx(z, abs=1e-11)

    def test_many_means_far_interval_end_is_infinite(self):
        # an observation just above the threshold with a tiny alpha: the lower end lies far out
        res = many_means(np.array([3.0000001, 3.0, 0.1, -0.2]), k=1, alpha=1e-300)
        assert res.ci[0, 0] == -math.inf or res.ci[0, 0] < -10
        assert np.isfinite(res.mu_hat[0])

    def test_trig_region_finds_a_narrow_gap(self):
        # g(x) = (sin x - sin 0.7)^2 - 1e-10 is negative only on a gap of width ~2e-5 around 0.7,
        # far below a grid of 4001 points on [0, pi/2]; expand (s - a)^2 - e as
        # s^2 - 2 a s + a^2 - e, coefficients (const, sin, cos, sin^2, cos^2, sin cos)
        a = math.sin(0.7)
        C = np.array([[a * a - 1e-10, -2 * a, 0.0, 1.0, 0.0, 0.0]])
        region = _trig_region(C, 0.0, math.pi / 2)
        assert len(region) == 2
        gap = (region[0][1], region[1][0])
        width = 2 * 1e-5 / math.cos(0.7)
        assert gap[0] == pytest.approx(0.7 - width / 2, abs=1e-9)
        assert gap[1] == pytest.approx(0.7 + width / 2, abs=1e-9)
        assert region[0][0] == 0.0 and region[1][1] == math.pi / 2

    def test_trig_region_without_constraints(self):
        assert _trig_region(np.zeros((0, 6)), 0.0, 1.0) == [(0.0, 1.0)]


def test_stepwise_constant_column_error_names_the_column_label():
    import pandas as pd

    from selective.conditional import forward_stepwise

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(20, 3)), columns=["age", "dose", "bmi"])
    frame["dose"] = 2.0
    frame["y"] = rng.normal(size=20)
    with pytest.raises(ValueError, match=r"`X` column 'dose' \(position 1\) is constant.*normalize=False"):
        forward_stepwise(frame, "y", maxsteps=2)
