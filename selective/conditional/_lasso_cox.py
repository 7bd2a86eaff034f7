r"""The Cox proportional-hazards lasso: its solver and one-step selective inference.

The lasso solves :math:`\min_b -\ell(b) + \lambda\|b\|_1` with :math:`\ell` Cox's log partial
likelihood (Breslow's or Efron's handling of tied event times). Inference follows Taylor and
Tibshirani (2018), "Post-selection inference for l1-penalized likelihood models", Canad. J.
Statist. 46(1), Section 3 and its application to Cox's model, as R selectiveInference's
``fixedLassoInf(family = "cox")``: with :math:`E` the selected set, :math:`s` its signs and
:math:`I_E` the observed information of the active coefficients at the lasso solution, the
one-step estimator :math:`\bar\beta_E = \hat\beta_E + I_E^{-1}\nabla_E\ell(\hat\beta)` is
asymptotically :math:`N(\beta_E^*, I_E^{-1})`, and the selection of the signs is the polyhedron
:math:`\mathrm{diag}(s)(\bar\beta_E - I_E^{-1}\nabla_E\ell) \ge 0`. The p-values and intervals
are those of the truncated normal law of :math:`s_j\bar\beta_j` on that polyhedron: an
asymptotic approximation, without a finite-sample guarantee (docs/THEORY.md 3.11).

The partial likelihood, its score and its information come from ``_partial_likelihood`` (the
quantities of statsmodels' ``PHReg``, vectorised; the tests check them against ``PHReg``).
Reached through :func:`selective.conditional.fixed_lasso_inference` and
:func:`selective.conditional.solve_lasso` with ``family="cox"``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_choice, check_vector
from ._inference import infer_contrasts
from ._partial_likelihood import CoxPartialLikelihood
from .lasso import KKTError, LassoFit, _empty, _naive_pvalues
from .results import SelectiveInferenceResult, _ro

TIES = ("breslow", "efron")


def check_survival(time, status, n: int, ties: str):
    """``(time, status, ties)`` checked: n positive finite times, 0/1 status with an event."""
    ties = check_choice("ties", ties, TIES)
    time = check_vector("y", time, length=n)
    if not np.all(time > 0):
        bad = time[~(time > 0)][0]
        raise ValueError(f"`y` (survival times) must be positive for family='cox'; got {float(bad)!r}.")
    if status is None:
        raise ValueError("`status` (1 = event, 0 = censored, one per row) is required for "
                         "family='cox'; got None.")
    status = check_vector("status", status, length=n)
    if not np.all((status == 0) | (status == 1)):
        bad = status[~((status == 0) | (status == 1))][0]
        raise ValueError(f"`status` must contain only 0 (censored) and 1 (event); got {float(bad)!r}.")
    if not status.any():
        raise ValueError("`status` has no event (all 0): the partial likelihood is constant.")
    return time, status, ties


def _model(time, X, status, ties):
    return CoxPartialLikelihood(time, X, status, ties)


def _objective(model, b, lam):
    return -model.loglike(b) + lam * float(np.sum(np.abs(b)))


def _kkt_gaps(score, beta, lam):
    g = score / lam
    act = beta != 0
    dev = float(np.max(np.abs(g[act] - np.sign(beta[act])))) if act.any() else 0.0
    ina = float(np.max(np.abs(g[~act]))) if (~act).any() else 0.0
    return dev, ina


def _quadratic_lasso(H, c, lam, z, sweeps=10_000, tol=1e-15):
    """Coordinate descent for :math:`\\min_z \\frac12 z^\\top H z - c^\\top z + \\lambda\\|z\\|_1`."""
    d = np.diag(H).copy()
    Hz = H @ z
    for _ in range(sweeps):
        change = 0.0
        for j in range(z.size):
            rho = c[j] - Hz[j] + d[j] * z[j]
            new = math.copysign(max(abs(rho) - lam, 0.0), rho) / d[j]
            if new != z[j]:
                Hz += H[:, j] * (new - z[j])
                change = max(change, abs(new - z[j]))
                z[j] = new
        if change < tol * (1.0 + float(np.max(np.abs(z)))):
            break
    return z


def _prox_newton(model, b, lam, tol, max_outer):
    """Proximal Newton with backtracking on one model (a working set of columns)."""
    f = _objective(model, b, lam)
    for _ in range(max_outer):
        g = model.score(b)
        if _kkt_gaps_ok(g, b, lam, tol):
            break
        H = -model.hessian(b)
        H[np.diag_indices_from(H)] += 1e-12 * max(1.0, float(np.max(np.diag(H))))
        z = _quadratic_lasso(H, g + H @ b, lam, b.copy())
        step = z - b
        if float(np.max(np.abs(step))) <= 1e-15 * (1.0 + float(np.max(np.abs(b)))):
            break
        decrease = -(g @ step) + lam * (np.sum(np.abs(z)) - np.sum(np.abs(b)))
        if -decrease <= 1e-13 * max(1.0, abs(f)):  # below rounding: the polish finishes the job
            break
        t, accepted = 1.0, False
        for _ in range(40):
            cand = b + t * step
            fc = _objective(model, cand, lam)
            if fc <= f + 0.25 * t * decrease:
                accepted = True
                break
            t /= 2
        if not accepted:  # the decrease is below rounding: the polish finishes the job
            break
        b, f = cand, fc
    return b


def _polish(model, beta, lam, tol):
    """Newton on the KKT equations of the support, score_E(b) = lam * sign(b_E), kept only if the
    signs, the inactive subgradients and the objective stay as they were (to rounding)."""
    E = np.nonzero(beta)[0]
    if E.size == 0:
        return beta
    s = np.sign(beta[E])
    b = beta.copy()
    for _ in range(20):
        g = model.score(b)
        F = g[E] - lam * s
        if float(np.max(np.abs(F))) <= 1e-14 * lam:
            break
        H = -np.atleast_2d(model.hessian(b))[np.ix_(E, E)]
        try:
            b[E] = b[E] + np.linalg.solve(H, F)
        except np.linalg.LinAlgError:
            return beta
    if np.any(np.sign(b[E]) != s):
        return beta
    f0, f1 = _objective(model, beta, lam), _objective(model, b, lam)
    dev0, ina0 = _kkt_gaps(model.score(beta), beta, lam)
    dev1, ina1 = _kkt_gaps(model.score(b), b, lam)
    if f1 > f0 + 1e-12 * abs(f0) or dev1 > dev0 or ina1 > max(ina0, 1 + tol):
        return beta
    return b


def _kkt_gaps_ok(score, beta, lam, tol):
    dev, ina = _kkt_gaps(score, beta, lam)
    return dev < tol and ina <= 1 + tol


def solve_cox_lasso(X, time, status, lam, *, ties="breslow", tol=1e-10, max_outer=100) -> LassoFit:
    r"""The Cox lasso :math:`\min_b -\ell(b) + \lambda\|b\|_1` by proximal Newton on a working set.

    The working set starts with the columns whose score at 0 exceeds ``lam``; the problem on it
    is solved by proximal Newton (exact information of the partial likelihood, coordinate
    descent on the quadratic model, backtracking on the objective), columns that violate the
    KKT conditions are added, and the loop repeats until the KKT gaps over all columns are
    below ``tol``. glmnet's ``family = "cox"`` (Breslow ties) minimises
    :math:`-\ell/n + s\|b\|_1`, the same problem at :math:`\lambda = n s`.
    """
    n, p = X.shape
    beta = np.zeros(p)
    full = _model(time, X, status, ties)
    work = np.zeros(p, bool)
    for _ in range(p + 1):
        g = full.score(beta)
        if _kkt_gaps_ok(g, beta, lam, tol):
            break
        add = (np.abs(g) > lam * (1 + tol)) & ~work
        work |= add | (beta != 0)
        cols = np.nonzero(work)[0]
        beta[cols] = _prox_newton(_model(time, X[:, cols], status, ties), beta[cols], lam, tol,
                                  max_outer)
        if not add.any():
            break
    beta = _polish(full, beta, lam, tol)
    dev, ina = _kkt_gaps(full.score(beta), beta, lam)
    return LassoFit(beta, 0.0, f"proximal Newton on a working set (ties={ties})",
                    dev, ina)


def cox_inference(X, time, status, names, lam, beta, ties, alpha, alternative, tol_beta, tol_kkt,
                  gridrange):
    """The selective p-values and intervals of :func:`fixed_lasso_inference` for ``family="cox"``."""
    n, p = X.shape
    if beta is None:
        fit = solve_cox_lasso(X, time, status, lam, ties=ties)
        beta, solver = fit.beta, fit.solver
    else:
        beta = check_vector("beta", beta, length=p)
        solver = "user-supplied beta"
    norms2 = np.sum((X - X.mean(0)) ** 2, axis=0)
    with np.errstate(divide="ignore"):
        tol_coef = tol_beta * np.sqrt(n / norms2)
    E = np.nonzero(np.abs(beta) > tol_coef)[0]
    bk = np.where(np.abs(beta) > tol_coef, beta, 0.0)
    dev, ina = _kkt_gaps(_model(time, X, status, ties).score(bk), bk, lam)
    if dev > tol_kkt or ina > 1 + tol_kkt:
        raise KKTError(
            f"`beta` does not solve the Cox lasso at lam={lam:g} (ties={ties!r}): the KKT "
            f"conditions fail (max |score/lam - sign| on the active set {dev:.3g}, max "
            f"|score/lam| off it {ina:.3g}, allowed {tol_kkt:g} and 1 + {tol_kkt:g}). Solve "
            "-loglik + lam||b||_1 at the same `lam` (glmnet: s = lam/n, Breslow ties), or pass "
            "beta=None.")
    rule = "not used (Cox: variance from the partial-likelihood information at beta)"
    if E.size == 0:
        return _empty(names, "partial", alpha, None, alternative, lam, rule, sigma_mode="asymptotic")
    s = np.sign(beta[E])
    model = _model(time, X[:, E], status, ties)
    bE = beta[E]
    info = -np.atleast_2d(model.hessian(bE))
    try:
        Q = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        raise ValueError(f"The partial-likelihood information of the selected columns "
                         f"{[names[j] for j in E]} is singular at beta.") from None
    # one-step (Newton) estimator with the observed score, lam * s at an exact solution
    shift = Q @ model.score(bE)
    bbar = bE + shift
    k = E.size
    A = -np.diag(s)
    b = -s * shift
    contrasts = np.eye(k)
    out = infer_contrasts(A, b, bbar, contrasts, s, sigma=1.0, alpha=alpha, alternative=alternative,
                          gridrange=gridrange, cov=Q, check_event=False)
    naive = _naive_pvalues(out["estimate"], out["sd"], s, alternative)
    return SelectiveInferenceResult(
        procedure="fixed-lambda lasso", type="partial", variables=tuple(names[j] for j in E),
        index=_ro(E, int), sign=_ro(s, int), estimate=_ro(out["estimate"]), sd=_ro(out["sd"]),
        vlo=_ro(out["vlo"]), vup=_ro(out["vup"]), pvalue=_ro(out["pvalue"]), ci=_ro(out["ci"]),
        tailarea=_ro(out["tailarea"]), alpha=alpha, sigma=math.nan, alternative=alternative,
        pvalue_naive=_ro(naive), lam=lam, sigma_rule=rule, sigma_mode="asymptotic",
        contrasts=_ro(contrasts), constraints_A=_ro(A), constraints_b=_ro(b),
        extra={"solver": solver, "beta": _ro(beta), "lambda_glmnet": lam / n, "ties": ties,
               "kkt_gaps": (dev, ina), "zscore": _ro(out["estimate"] / out["sd"]),
               "one_step": _ro(bbar), "information": _ro(info)},
        method=f"Taylor & Tibshirani (2018) one-step estimator, family=cox, ties={ties}")
