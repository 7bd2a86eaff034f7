r"""The binomial (logistic) lasso: its solver and the one-step selective inference of Taylor
and Tibshirani (2018), "Post-selection inference for l1-penalized likelihood models", Canad. J.
Statist. 46(1), Section 3: asymptotically :math:`\bar\beta_E \sim N(\beta_E^*, I_E^{-1})`,
and the active signs become linear constraints on :math:`\bar\beta_E`.

Reached through :func:`selective.conditional.fixed_lasso_inference` and
:func:`selective.conditional.solve_lasso` with ``family="binomial"``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_vector
from ._inference import infer_contrasts
from .lasso import KKTError, LassoFit, _empty, _naive_pvalues
from .results import SelectiveInferenceResult, _ro


def solve_logistic_lasso(X, y, lam, *, intercept, tol=1e-11, max_outer=200):
    n, p = X.shape
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("`y` must contain only 0 and 1 for family='binomial'.")
    b0 = math.log(y.mean() / (1 - y.mean())) if intercept else 0.0
    beta = np.zeros(p)
    for _ in range(max_outer):
        eta = b0 + X @ beta
        pr = 1 / (1 + np.exp(-eta))
        w = np.clip(pr * (1 - pr), 1e-10, None)
        z = eta + (y - pr) / w
        # coordinate descent on 1/2 sum w (z - b0 - X b)^2 + lam ||b||_1
        xw2 = (w[:, None] * X * X).sum(0)
        r = z - b0 - X @ beta
        for _inner in range(10_000):
            maxchg = 0.0
            if intercept:
                d = (w @ r) / w.sum()
                b0 += d
                r -= d
                maxchg = abs(d)
            for j in range(p):
                old = beta[j]
                rho = X[:, j] @ (w * r) + xw2[j] * old
                new = np.sign(rho) * max(abs(rho) - lam, 0.0) / xw2[j]
                if new != old:
                    r -= X[:, j] * (new - old)
                    beta[j] = new
                    maxchg = max(maxchg, abs(new - old))
            if maxchg < 1e-14:
                break
        eta = b0 + X @ beta
        pr = 1 / (1 + np.exp(-eta))
        g = X.T @ (y - pr) / lam
        act = beta != 0
        dev = float(np.max(np.abs(g[act] - np.sign(beta[act])))) if act.any() else 0.0
        ina = float(np.max(np.abs(g[~act]))) if (~act).any() else 0.0
        g0 = abs(float(np.sum(y - pr))) if intercept else 0.0
        if dev < tol and ina <= 1 + tol and g0 < tol * lam:
            break
    return LassoFit(beta, b0, "proximal Newton (IRLS + coordinate descent), KKT gap < 1e-11",
                    dev, ina)


def binomial_inference(X, y, names, lam, beta, intercept, alpha, alternative, tol_beta, gridrange):
    n, p = X.shape
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("`y` must contain only 0 and 1 for family='binomial'.")
    if beta is None:
        fit = solve_logistic_lasso(X, y, lam, intercept=intercept)
        full = np.concatenate([[fit.intercept], fit.beta]) if intercept else fit.beta
        solver = fit.solver
    else:
        full = check_vector("beta", beta, length=p + 1 if intercept else p)
        solver = "user-supplied beta"
    X1 = np.column_stack([np.ones(n), X]) if intercept else X
    off = 1 if intercept else 0
    bvars = full[off:]
    norms2 = np.sum((X - X.mean(0)) ** 2, axis=0) if intercept else np.sum(X ** 2, axis=0)
    tol_coef = tol_beta * np.sqrt(n / norms2)
    E = np.nonzero(np.abs(bvars) > tol_coef)[0]
    if E.size == 0:
        return _empty(names, "partial", alpha, None, alternative, lam,
                      "not used (binomial)", sigma_mode="asymptotic")
    s = np.sign(bvars[E])
    cols = np.concatenate([[0], E + 1]) if intercept else E
    XE1 = X1[:, cols]
    bE1 = full[cols]
    eta = X1 @ full
    pr = 1 / (1 + np.exp(-eta))
    w = pr * (1 - pr)
    g = X.T @ (y - pr) / lam
    act = np.zeros(p, bool)
    act[E] = True
    dev = float(np.max(np.abs(g[act] - s))) if act.any() else 0.0
    ina = float(np.max(np.abs(g[~act]))) if (~act).any() else 0.0
    if dev > 0.1 or ina > 1.1:
        raise KKTError(
            f"`beta` does not solve the logistic lasso at lam={lam:g}: KKT gaps "
            f"{dev:.3g} (active) and {ina:.3g} (inactive |gradient|), allowed 0.1 and 1.1.")
    H = XE1.T @ (w[:, None] * XE1)
    Q = np.linalg.inv(H)
    score = XE1.T @ (y - pr)
    shift = Q @ score  # lam * Q @ (0, s) at an exact solution
    # one-step (Newton) estimator: beta + I^{-1} score; the score equals lam (0, s) at an exact
    # solution, but the observed score is used so that an approximate beta is corrected too
    bbar = bE1 + shift
    k = E.size
    # constraints sign(beta_E) = s, beta_E = bbar_E - shift_E  =>  -s*bbar_E <= -s*shift_E
    A = np.zeros((k, cols.size))
    A[np.arange(k), np.arange(k) + off] = -s
    b = -s * shift[off:]
    contrasts = np.zeros((k, cols.size))
    contrasts[np.arange(k), np.arange(k) + off] = 1.0
    sgn0 = np.sign(bbar[off:])
    sgn0[sgn0 == 0] = 1.0
    out = infer_contrasts(A, b, bbar, contrasts, sgn0, sigma=1.0, alpha=alpha,
                          alternative=alternative, gridrange=gridrange, cov=Q,
                          check_event=False)
    naive = _naive_pvalues(out["estimate"], out["sd"], sgn0, alternative)
    return SelectiveInferenceResult(
        procedure="fixed-lambda lasso", type="partial", variables=tuple(names[j] for j in E),
        index=_ro(E, int), sign=_ro(sgn0, int), estimate=_ro(out["estimate"]),
        sd=_ro(out["sd"]), vlo=_ro(out["vlo"]), vup=_ro(out["vup"]), pvalue=_ro(out["pvalue"]),
        ci=_ro(out["ci"]), tailarea=_ro(out["tailarea"]), alpha=alpha, sigma=math.nan,
        alternative=alternative, pvalue_naive=_ro(naive), lam=lam,
        sigma_rule="not used (binomial: variance from the Fisher information at beta)",
        sigma_mode="asymptotic",
        contrasts=_ro(contrasts), constraints_A=_ro(A), constraints_b=_ro(b),
        extra={"solver": solver, "beta": _ro(full), "lasso_sign": _ro(s, int), "lambda_glmnet": lam / n,
               "zscore": _ro(out["estimate"] / out["sd"]), "one_step": _ro(bbar)},
        method="Taylor & Tibshirani (2018) one-step estimator, family=binomial")
