r"""Exact selective inference for the lasso at a fixed lambda.

Gaussian family: Lee, Sun, Sun and Taylor (2016), Sections 4-6: the event that the lasso
selects active set :math:`E` with signs :math:`s` is the polyhedron of Proposition 4.2 /
Theorem 4.3; the target is either the coefficient of the regression of :math:`y` on
:math:`X_E` (``type="partial"``, eq. (5.2)) or of the full regression on all columns
(``type="full"``).

Binomial and Cox families: the one-step (debiased) estimator of Taylor and Tibshirani (2018),
"Post-selection inference for l1-penalized likelihood models", Canad. J. Statist. 46(1),
Section 3: asymptotically :math:`\bar\beta_E \sim N(\beta_E^*, I_E^{-1})`, and the active
signs become linear constraints on :math:`\bar\beta_E` (modules ``_lasso_binomial`` and
``_lasso_cox``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ._checks import (
    check_alpha,
    check_choice,
    check_nonneg_real,
    check_positive_real,
    check_scale,
    check_vector,
    design_and_response,
)
from ._inference import ONE_SIDED, TWO_SIDED, infer_contrasts
from ._sigma import SIGMA_METHODS, choose_sigma
from .results import SelectiveInferenceResult, _ro

__all__ = ["KKTError", "LassoFit", "solve_lasso", "fixed_lasso_inference"]


class KKTError(ValueError):
    """The supplied or computed lasso solution violates the KKT conditions at ``lam``."""


class LassoFit:
    """Plain container for a lasso solution (``beta``, ``intercept``, solver and KKT gaps)."""

    __slots__ = ("beta", "intercept", "solver", "max_active_dev", "max_inactive_subgradient")

    def __init__(self, beta, intercept, solver, max_active_dev, max_inactive_subgradient):
        self.beta = beta
        self.intercept = intercept
        self.solver = solver
        self.max_active_dev = max_active_dev
        self.max_inactive_subgradient = max_inactive_subgradient

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"LassoFit(n_active={int(np.sum(self.beta != 0))}, solver={self.solver!r}, "
                f"max_active_dev={self.max_active_dev:.2e}, "
                f"max_inactive_subgradient={self.max_inactive_subgradient:.4f})")


SOLVER_TOL = 1e-12


LAMBDA_SCALES = ("selectiveInference", "glmnet")
FAMILIES = ("gaussian", "binomial", "cox")


def lambda_on_si_scale(lam, n: int, lambda_scale: str) -> float:
    r"""``lam`` converted to the scale of R selectiveInference (:math:`\frac12\|r\|^2 + \lambda\|b\|_1`).

    glmnet's objective is :math:`\frac1{2n}\|r\|^2 + s\|b\|_1` (binomial: :math:`-\ell/n +
    s\|b\|_1`), the same problem with :math:`\lambda = n s`.
    """
    lambda_scale = check_choice("lambda_scale", lambda_scale, LAMBDA_SCALES)
    lam = check_positive_real("lam", lam)
    return lam * n if lambda_scale == "glmnet" else lam


def solve_lasso(X, y, lam: float, *, intercept: bool = True, family: str = "gaussian",
                tol: float = SOLVER_TOL, max_iter: int = 1_000_000,
                lambda_scale: str = "selectiveInference", status=None,
                ties: str = "breslow") -> LassoFit:
    r"""Lasso solution at a fixed ``lam`` on the scale of :math:`\frac12\|y-b_0-Xb\|^2+\lambda\|b\|_1`.

    With ``lambda_scale="glmnet"``, ``lam`` is on glmnet's scale instead,
    :math:`\frac1{2n}\|y-b_0-Xb\|^2+\lambda\|b\|_1` (glmnet's ``s``; the same problem at
    ``n * lam``), for the gaussian and the binomial family alike.

    Gaussian: scikit-learn's coordinate descent ``Lasso(alpha=lam/n, tol=tol)`` (glmnet's
    ``s = lambda/n``) on centred data, then polished by solving the KKT equations of the
    found support exactly. Binomial: objective :math:`-\ell(b_0,b)+\lambda\|b\|_1`, solved by
    proximal Newton (IRLS with coordinate descent on the penalised weighted least squares,
    unpenalised intercept) to a KKT gap below ``1e-10``. Cox (``y`` the survival times,
    ``status`` 1 for an event and 0 for censoring, ``ties`` "breslow" as glmnet or "efron"):
    objective :math:`-\ell(b)+\lambda\|b\|_1` with Cox's log partial likelihood, no
    intercept, solved by proximal Newton on a working set to a KKT gap below ``1e-10``.

    Returns
    -------
    LassoFit
        ``beta`` (length p; for binomial the intercept is in ``intercept``).
    """
    family = check_choice("family", family, FAMILIES)
    if family != "cox" and (status is not None or ties != "breslow"):
        raise ValueError(f"`status` and `ties` are for family='cox' only; got family={family!r} "
                         f"with status={'given' if status is not None else None}, ties={ties!r}.")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = X.shape
    lam = lambda_on_si_scale(lam, n, lambda_scale)
    if family == "gaussian":
        from sklearn.linear_model import Lasso

        xm = X.mean(0) if intercept else np.zeros(p)
        ym = y.mean() if intercept else 0.0
        # one Fortran-ordered centred copy, which the coordinate descent uses as it is
        Xc = np.array(X, dtype=float, order="F", copy=True)
        Xc -= xm
        yc = np.ascontiguousarray(y - ym, dtype=float)
        model = Lasso(alpha=lam / n, fit_intercept=False, tol=tol, max_iter=max_iter,
                      selection="cyclic", copy_X=False, precompute=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(Xc, yc, check_input=False)
        beta = np.asarray(model.coef_, dtype=float).copy()
        beta = _polish_gaussian(Xc, yc, beta, lam)
        g = Xc.T @ (yc - Xc @ beta) / lam
        act = beta != 0
        dev = float(np.max(np.abs(g[act] - np.sign(beta[act])))) if act.any() else 0.0
        ina = float(np.max(np.abs(g[~act]))) if (~act).any() else 0.0
        b0 = ym - xm @ beta
        return LassoFit(beta, b0, f"sklearn.linear_model.Lasso(tol={tol:g}) + KKT polish", dev, ina)
    if family == "cox":
        from ._lasso_cox import check_survival, solve_cox_lasso

        time, status, ties = check_survival(y, status, n, ties)
        return solve_cox_lasso(X, time, status, lam, ties=ties)
    from ._lasso_binomial import solve_logistic_lasso

    return solve_logistic_lasso(X, y, lam, intercept=intercept)


def _polish_gaussian(Xc, yc, beta, lam):
    """Re-solve the active KKT system exactly; keep the solver's answer if the signs change."""
    act = np.nonzero(np.abs(beta) > 0)[0]
    if act.size == 0 or act.size > Xc.shape[0]:
        return beta
    s = np.sign(beta[act])
    XE = Xc[:, act]
    try:
        bE = np.linalg.solve(XE.T @ XE, XE.T @ yc - lam * s)
    except np.linalg.LinAlgError:
        return beta
    if np.all(np.sign(bE) == s):
        out = np.zeros_like(beta)
        out[act] = bE
        return out
    return beta


def _kkt_gaussian(Xc, yc, beta, lam, tol_kkt):
    g = Xc.T @ (yc - Xc @ beta) / lam
    act = beta != 0
    dev = float(np.max(np.abs(g[act] - np.sign(beta[act])))) if act.any() else 0.0
    ina = float(np.max(np.abs(g[~act]))) if (~act).any() else 0.0
    if dev > tol_kkt or ina > 1 + tol_kkt:
        raise KKTError(
            f"`beta` does not solve the lasso at lam={lam:g}: the KKT conditions fail "
            f"(max |gradient - sign| on the active set {dev:.3g}, max |gradient| off it "
            f"{ina:.3g}, allowed {tol_kkt:g} and 1 + {tol_kkt:g}; gradient = X'(y - X beta)/lam "
            "with centred X, y when intercept=True). Solve at the same `lam` on the scale "
            "(1/2)||y - Xb||^2 + lam||b||_1 (glmnet s = lam/n), or pass beta=None.")
    return dev, ina


def fixed_lasso_inference(X, y, lam: float, *, beta=None, family: str = "gaussian",
                          sigma: float | None = None, intercept: bool = True,
                          type: str = "partial", alpha: float = 0.1,
                          alternative: str = ONE_SIDED, tol_beta: float = 1e-5,
                          tol_kkt: float = 0.1, gridrange=(-100.0, 100.0), columns=None,
                          response: str | None = None, sigma_method: str = "auto",
                          sigma_delta: float | None = None,
                          lambda_scale: str = "selectiveInference", status=None,
                          ties: str = "breslow") -> SelectiveInferenceResult:
    r"""Selective p-values and intervals for the lasso at fixed ``lam`` (Lee et al. 2016).

    Parameters
    ----------
    X : array_like (n, p) or pandas.DataFrame
        Design. With a DataFrame, ``y`` may be the name of the response column and
        ``columns`` the predictor names (default: every other column).
    y : array_like (n,) or str
        Response (0/1 for ``family="binomial"``; positive survival times for ``"cox"``).
    lam : float
        Penalty on the scale :math:`\frac12\|y - b_0 - Xb\|^2 + \lambda\|b\|_1` (binomial:
        :math:`-\ell + \lambda\|b\|_1`), R selectiveInference's; glmnet's ``s`` is
        ``lam / n``. See ``lambda_scale``.
    lambda_scale : {"selectiveInference", "glmnet"}
        The scale of ``lam``: ``"selectiveInference"`` (default, above) or ``"glmnet"``, on
        which the objective is :math:`\frac1{2n}\|y - b_0 - Xb\|^2 + \lambda\|b\|_1`
        (binomial: :math:`-\ell/n + \lambda\|b\|_1`), i.e. the ``s`` of glmnet's
        ``coef(fit, s = ...)``; it is converted to ``n * lam``. The result's ``lam`` is always
        on the selectiveInference scale (``extra["lambda_glmnet"]`` holds ``lam / n``).
    beta : array_like, optional
        A lasso solution at ``lam`` (length p; binomial: length p + 1 with the intercept
        first, or length p with ``intercept=False``). Default: solved with :func:`solve_lasso`.
        Checked against the KKT conditions (``tol_kkt``); a failure raises :class:`KKTError`.
    family : {"gaussian", "binomial", "cox"}
        ``"cox"``: Cox's proportional-hazards lasso :math:`-\ell(b) + \lambda\|b\|_1`
        (log partial likelihood, no intercept), R's ``fixedLassoInf(family = "cox")``;
        asymptotic, like ``"binomial"`` (see Notes).
    status : array_like (n,) or str, optional
        ``family="cox"`` only (required there): 1 where ``y`` is an event time, 0 where it is
        censored; with a DataFrame, the name of its column.
    ties : {"breslow", "efron"}
        ``family="cox"`` only: the partial likelihood's handling of tied event times, for the
        lasso and the information alike. ``"breslow"`` (default) is glmnet's; R's
        ``fixedLassoInf`` takes the information from ``coxph`` (Efron). Without ties they agree.
    sigma : float, optional
        Noise sd (gaussian). Given: the p-values are exact. Not given: see ``sigma_method``.
    intercept : bool
        Fit an unpenalised intercept (gaussian: centre X and y). Ignored for ``"cox"``,
        whose partial likelihood has none.
    type : {"partial", "full"}
        Target: coefficients of y regressed on the selected columns (Lee et al. eq. 5.2) or
        of the full regression on all columns (uses the inactive constraints too). When
        p > n the full regression is not identified and, as R's ``fixedLassoInf``, the target
        of variable j is the mean of its debiased lasso estimate
        :math:`\hat\beta^d_j = M_j y - \nu_j` (Javanmard and Montanari 2014; see Notes):
        ``estimate`` is :math:`\hat\beta^d_j`, ``extra["debiasing_offset"]`` holds
        :math:`\nu` and ``contrasts`` the rows :math:`M_j`.
    alpha : float
        Intervals have coverage 1 - alpha.
    alternative : {"one-sided", "two-sided"}
        ``"one-sided"``: in the direction of the selected sign (R's p-value).
    tol_beta : float
        Variable j is selected when :math:`|\beta_j| > \text{tol\_beta}\sqrt{n/\|x_j\|^2}`.
    gridrange : (float, float) or None
        Interval ends beyond ``gridrange * sd`` are reported as infinite (as in R).
    sigma_method : {"auto", "interval", "plugin"}
        How an unknown sigma is handled (gaussian, ``sigma=None``). ``"interval"``: valid
        p-values and intervals from the full-model residual variance (needs n > rank(X) +
        intercept and the full linear model): the supremum of the conditional p-value over a
        :math:`1-\delta` confidence interval for sigma, plus :math:`\delta`; intervals are the
        union over that interval at level :math:`1-(\alpha-\delta)` (THEORY.md 3.7).
        ``"plugin"``: R selectiveInference's plug-in rule (full-model residual standard
        error when n >= 2p, else sd(y)); approximate, warns. ``"auto"`` (default):
        ``"interval"`` when n > rank(X) + intercept, else ``"plugin"``.
    sigma_delta : float, optional
        The :math:`\delta` of ``"interval"``, in (0, alpha); default ``alpha / 10``.
        The reported p-values are never below it: choose it below the smallest level the
        p-values will be compared with (the test is valid at every level, powerless below delta).

    Returns
    -------
    SelectiveInferenceResult
        ``sigma_mode`` / ``inference`` say whether sigma was known (exact), estimated with
        the valid construction, or plugged in (approximate).

    Notes
    -----
    Gaussian: Lee et al. (2016), Theorem 4.3 (polyhedron
    :math:`-\mathrm{diag}(s)(X_E^\top X_E)^{-1}X_E^\top y \le -\lambda\,\mathrm{diag}(s)
    (X_E^\top X_E)^{-1}s` plus, for ``"full"``, the inactive KKT rows), Lemma 5.1 and
    Theorem 5.2. For the partial target the inactive rows are orthogonal to the contrast and
    do not move the limits, so they are omitted. ``type="full"`` with p > n: the contrast
    :math:`M_j` of the debiased lasso depends on y only through the selected set and signs,
    so :math:`M_j y - \nu_j` is a linear statistic with exact truncated-normal law on the
    same polyhedron; the p-value tests that its mean is 0 (when the true coefficients vanish
    off the selected set it is exactly :math:`\beta_j - \nu_j`, otherwise approximately
    :math:`\beta_j` under the sparsity conditions of the debiased lasso). R selectiveInference
    1.2.5 uses the same :math:`M` and :math:`\nu` but centres its standardised statistic
    :math:`s_j M_j y/\|M_j\|` at :math:`\nu_j` instead of :math:`s_j\nu_j/\|M_j\|`, and
    shifts its interval by :math:`\|M_j\|\nu_j` instead of :math:`\nu_j`; its p-values and
    intervals differ from these accordingly (its :math:`M` and limits agree). Binomial and
    Cox: Taylor and Tibshirani (2018), Section 3, one-step estimator :math:`\bar\beta_E =
    \hat\beta_E + I_E^{-1}\nabla_E\ell(\hat\beta)` (:math:`= \hat\beta_E + \lambda I_E^{-1}s`
    at an exact solution; binomial: with the intercept) with :math:`I_E` the observed
    information; the p-values are asymptotic approximations (docs/THEORY.md 3.11).

    References
    ----------
    .. [1] J. D. Lee, D. L. Sun, Y. Sun, J. E. Taylor, Ann. Statist. 44(3), 907-927, 2016.
    .. [2] J. Taylor, R. Tibshirani, Canad. J. Statist. 46(1), 41-61, 2018.
    .. [3] A. Javanmard, A. Montanari, "Confidence intervals and hypothesis testing for
       high-dimensional regression", J. Mach. Learn. Res. 15, 2869-2909, 2014.
    """
    if isinstance(status, str) and isinstance(X, pd.DataFrame):  # a column of the frame
        if status not in X.columns:
            raise ValueError(f"`status` must name a column of the data frame; got {status!r}. "
                             f"Columns: {list(X.columns)}.")
        if columns is None:
            columns = [c for c in X.columns if c not in (status, y if isinstance(y, str) else response)]
        status = X[status].to_numpy(dtype=float)
    X, y, names = design_and_response(X, y, columns, response)
    n, p = X.shape
    lam = lambda_on_si_scale(lam, n, lambda_scale)
    family = check_choice("family", family, FAMILIES)
    type = check_choice("type", type, ("partial", "full"))
    alpha = check_alpha(alpha)
    alternative = check_choice("alternative", alternative, (ONE_SIDED, TWO_SIDED))
    tol_beta = check_nonneg_real("tol_beta", tol_beta)
    tol_kkt = check_nonneg_real("tol_kkt", tol_kkt)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"`intercept` must be True or False; got {intercept!r}.")
    sigma_method = check_choice("sigma_method", sigma_method, SIGMA_METHODS)
    if family != "cox" and status is not None:
        raise ValueError(f"`status` is for family='cox' only; got family={family!r} with a status.")
    if family != "cox" and ties != "breslow":
        raise ValueError(f"`ties` is for family='cox' only; got ties={ties!r} with family={family!r}.")
    if family != "gaussian":
        if sigma_method == "interval":
            raise ValueError(f"`sigma_method` must be 'auto' or 'plugin' for family={family!r} (no "
                             "noise level is estimated); got 'interval'.")
        if sigma_delta is not None:
            raise ValueError(f"`sigma_delta` must be None for family={family!r} (no noise level is "
                             f"estimated); got {sigma_delta!r}.")
        if sigma is not None:
            raise ValueError(f"`sigma` must be None for family={family!r}; got {sigma!r}.")
        if type != "partial":
            raise ValueError(f"`type` must be 'partial' for family={family!r}; got {type!r}.")
    if family == "cox":
        from ._lasso_cox import check_survival, cox_inference

        time, status, ties = check_survival(y, status, n, ties)
        return cox_inference(X, time, status, names, lam, beta, ties, alpha, alternative, tol_beta,
                             tol_kkt, gridrange)
    if family == "binomial":
        from ._lasso_binomial import binomial_inference

        return binomial_inference(X, y, names, lam, beta, intercept, alpha, alternative, tol_beta,
                         gridrange)
    sigma = check_scale("sigma", sigma, allow_none=True)
    xm = X.mean(0) if intercept else np.zeros(p)
    Xc = X - xm
    yc = y - (y.mean() if intercept else 0.0)
    if beta is None:
        fit = solve_lasso(X, y, lam, intercept=intercept)
        beta = fit.beta
        solver = fit.solver
    else:
        beta = check_vector("beta", beta, length=p)
        solver = "user-supplied beta"
    norms2 = np.sum(Xc ** 2, axis=0)
    with np.errstate(divide="ignore"):
        tol_coef = tol_beta * np.sqrt(n / norms2)
    E = np.nonzero(np.abs(beta) > tol_coef)[0]
    beta_kkt = np.where(np.abs(beta) > tol_coef, beta, 0.0)
    _kkt_gaussian(Xc, yc, beta_kkt, lam, tol_kkt)
    choice = choose_sigma(Xc, yc, intercept, sigma=sigma, method=sigma_method, alpha=alpha,
                          delta=sigma_delta, stacklevel=3)
    sigma_fields = _sigma_fields(choice)
    if E.size == 0:
        return _empty(names, type, alpha, choice.sigma, alternative, lam, choice.rule, **sigma_fields)
    s = np.sign(beta[E])
    XE = Xc[:, E]
    XEp = np.linalg.pinv(XE)  # (X_E'X_E)^{-1} X_E'
    if np.linalg.matrix_rank(XE) < E.size:
        raise ValueError(f"The selected columns {[names[j] for j in E]} are linearly dependent; "
                         "the lasso solution is not unique.")
    A = -s[:, None] * XEp
    b = -lam * s * ((XEp @ np.linalg.pinv(XE.T)) @ s)
    offsets = None
    if type == "partial":
        vmat = XEp
    else:
        if p <= n:
            vmat = np.linalg.pinv(Xc)[E]
        else:  # the debiased lasso (Javanmard & Montanari 2014), as R's fixedLassoInf
            vmat, offsets = _debiased_contrasts(Xc, E, s, lam, intercept)
        inactive = np.setdiff1d(np.arange(p), E)
        if inactive.size:
            Xi = Xc[:, inactive]
            resid_proj = Xi.T - (Xi.T @ XE) @ XEp          # X_{-E}'(I - P_E)
            shift = Xi.T @ (XEp.T @ s)                       # X_{-E}' (X_E^+)' s
            A = np.vstack([A, resid_proj, -resid_proj])
            b = np.concatenate([b, lam * (1 - shift), lam * (1 + shift)])
    out = infer_contrasts(A, b, yc, vmat, s, sigma=choice, alpha=alpha, alternative=alternative,
                          gridrange=gridrange, offsets=offsets)
    naive = _naive_pvalues(out["estimate"], out["sd"], s, alternative)
    extra = {"solver": solver, "beta": _ro(beta), "lambda_glmnet": lam / n}
    method = f"Lee, Sun, Sun & Taylor (2016) Thm 4.3 + 5.2, family=gaussian, type={type}"
    if offsets is not None:
        extra["debiasing_offset"] = _ro(offsets)
        method += " (p > n: debiased lasso, Javanmard & Montanari 2014)"
    return SelectiveInferenceResult(
        procedure="fixed-lambda lasso", type=type, variables=tuple(names[j] for j in E),
        index=_ro(E, int), sign=_ro(s, int), estimate=_ro(out["estimate"]), sd=_ro(out["sd"]),
        vlo=_ro(out["vlo"]), vup=_ro(out["vup"]), pvalue=_ro(out["pvalue"]), ci=_ro(out["ci"]),
        tailarea=_ro(out["tailarea"]), alpha=alpha, sigma=float(choice.sigma), alternative=alternative,
        pvalue_naive=_ro(naive), lam=lam, sigma_rule=choice.rule, **sigma_fields, contrasts=_ro(vmat),
        constraints_A=_ro(A), constraints_b=_ro(b), extra=extra, method=method)


def _debiased_contrasts(Xc, E, s, lam, intercept):
    r"""Contrasts and offsets of the debiased lasso for ``type="full"`` when p > n.

    The debiased lasso (Javanmard and Montanari 2014, eq. (5)) is
    :math:`\hat\beta^d = \hat\beta + \Theta X^\top(y - X\hat\beta)/n` with :math:`\Theta` an
    approximate inverse of :math:`\hat\Sigma = X^\top X / n` (:func:`._debias.debiasing_matrix`;
    with an intercept, X has a column of ones first). On the selected set S (the intercept
    included), the KKT equations give :math:`\hat\beta_S = \hat\Sigma_S^{-1}(X_S^\top y -
    \lambda (0, s))/n`, so :math:`\hat\beta^d_S = M y - \nu` with

    .. math:: M = \{\Theta_S X^\top + (I - \Theta_S\hat\Sigma)_{\cdot S}\hat\Sigma_S^{-1}X_S^\top\}/n,
       \qquad \nu = (I - \Theta_S\hat\Sigma)_{\cdot S}\hat\Sigma_S^{-1}(0, s)\,\lambda/n,

    the construction of R selectiveInference's ``fixedLassoInf(type = "full")`` for p > n
    (which uses the sign of the fitted intercept where the intercept's subgradient, 0, belongs:
    the two agree, because the debiasing rows of the centred columns have a zero intercept
    entry). M depends on y only through the selected set and signs, so each
    :math:`M_j y` is a linear statistic of y and the polyhedral lemma applies (Lee et al.
    2016, Theorem 5.2). Returns ``(M, nu)`` without the intercept's row.
    """
    from ._debias import debiasing_matrix

    n, p = Xc.shape
    if intercept:
        Xint = np.column_stack([np.ones(n), Xc])
        S = np.concatenate([[0], E + 1])
        subgrad = np.concatenate([[0.0], s])
    else:
        Xint, S, subgrad = Xc, E, s
    k = S.size
    notS = np.setdiff1d(np.arange(Xint.shape[1]), S)
    XS = Xint[:, S]
    Xo = Xint[:, np.concatenate([S, notS])]
    sig_inv = np.linalg.inv(XS.T @ XS / n)
    theta = debiasing_matrix(Xo, range(k))
    resid = -((theta @ Xo.T) @ Xo) / n             # I - Theta Sigma-hat, restricted to rows S
    resid[:, :k] += np.eye(k)
    B = resid[:, :k] @ sig_inv
    M = (theta @ Xo.T + B @ XS.T) / n
    nu = (B @ subgrad) * lam / n
    if intercept:
        M, nu = M[1:], nu[1:]
    return M, nu


def _sigma_fields(choice) -> dict:
    """The result fields that record how sigma entered (see :class:`SigmaChoice`)."""
    return dict(sigma_mode=choice.mode,
                sigma_interval=None if choice.low is None else (choice.low, choice.high),
                sigma_delta=choice.delta, sigma_df=choice.df)


def _naive_pvalues(est, sd, s, alternative):
    from scipy.stats import norm
    z = s * est / sd
    if alternative == ONE_SIDED:
        return norm.sf(z)
    return 2 * norm.sf(np.abs(z))


def _empty(names, type, alpha, sigma, alternative, lam, rule, procedure="fixed-lambda lasso", **sigma_fields):
    e = np.zeros(0)
    return SelectiveInferenceResult(
        procedure=procedure, type=type, variables=(), index=_ro(np.zeros(0), int),
        sign=_ro(np.zeros(0), int), estimate=_ro(e), sd=_ro(e), vlo=_ro(e), vup=_ro(e),
        pvalue=_ro(e), ci=_ro(np.zeros((0, 2))), tailarea=_ro(np.zeros((0, 2))), alpha=alpha,
        sigma=float(sigma) if sigma is not None else math.nan, alternative=alternative,
        pvalue_naive=_ro(e), lam=lam, sigma_rule=rule, method="no variable selected", **sigma_fields)
