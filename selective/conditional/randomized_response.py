r"""Exact selective inference after a lasso or forward stepwise selection made on a randomized
response (carving: the selection sees :math:`y+\omega`, the inference uses all of :math:`y`).

With :math:`y\sim N(\mu,\sigma^2 I)` and independent :math:`\omega\sim N(0,\tau^2 I)` drawn by
the package, the lasso at a fixed :math:`\lambda` (or :math:`k` steps of forward stepwise) is run
on :math:`U=y+\omega`. Its selection (active set and signs, or the ordered path and signs) is the
polyhedron :math:`\{AU\le b\}` of the unrandomized method (Lee, Sun, Sun and Taylor 2016, Thm 4.3;
Tibshirani, Taylor, Lockhart and Tibshirani 2016). For the target :math:`\eta^\top\mu` (a
coefficient of the regression on the selected variables), write :math:`T=\eta^\top y` and
:math:`P^\perp U = U - \eta\,\eta^\top U/\|\eta\|^2`. Both :math:`T` and :math:`\eta^\top\omega`
are independent of :math:`P^\perp U` (the covariances are multiples of the identity), and the
polyhedral lemma applied to :math:`U` turns the selection, given :math:`P^\perp U`, into
:math:`V^-\le \eta^\top U \le V^+` with :math:`V^\pm` functions of :math:`P^\perp U`. Since
:math:`\eta^\top U = T + \eta^\top\omega`, the law of :math:`T` given the selection and
:math:`P^\perp U` has density proportional to

.. math:: \varphi\Big(\frac{t-\theta}{\sigma\|\eta\|}\Big)\Big[\Phi\Big(\frac{V^+-t}{\tau\|\eta\|}\Big)
          - \Phi\Big(\frac{V^- - t}{\tau\|\eta\|}\Big)\Big],

an exponential family in :math:`\theta=\eta^\top\mu` (Tian and Taylor 2018, "Selective inference
with a randomized response", Ann. Statist. 46(2), Section 4, Gaussian randomization; the same law
as lassoinf's ``LassoInference`` with ``Sigma_noise``). Its tail at the observed :math:`T` is an
exact p-value given the selection, and inverting it gives an interval: both are computed by
:func:`selective.conditional.randomized_inference` with an
:class:`~selective.conditional.randomized.IntervalEvent` (docs/THEORY.md 3.13).

Compared with the polyhedral route (:math:`\tau=0`) the truncation is smoothed, so the intervals
are shorter and the test keeps power when the observation is near a boundary (at small noise,
below about 0.3 sigma, an interval end often lies beyond the tabulated 20 sd and is reported as
infinite, which is conservative: measured, half the lasso intervals at 0.05 sigma, 0.4% at 0.3
sigma); compared with data
splitting or fission at the same noise, the test uses the whole of :math:`y` (the information in
:math:`T` beyond what the selection used). Exact when :math:`\sigma` is the true noise sd;
``sigma`` must therefore be known (with an estimate the result is approximate and is not
offered). Off the Gaussian model (skewed or heavy-tailed errors, unequal variances, a sigma
stated too small) it exceeds its level as the polyhedral route does, by similar or larger
factors at small levels (measured in docs/THEORY.md 3.13).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from ._checks import (
    check_alpha,
    check_choice,
    check_int,
    check_positive_real,
    check_scale,
    check_vector,
    design_and_response,
)
from ._inference import ONE_SIDED, TWO_SIDED
from ._randomized_events import IntervalEvent, _finite
from .lasso import _kkt_gaussian, lambda_on_si_scale, solve_lasso
from .polyhedral import truncation_limits
from .randomized import randomized_inference
from .results import SelectiveInferenceResult, _ro
from .stepwise import forward_stepwise
from .stepwise_inference import _limits_from

__all__ = ["randomized_lasso_inference", "randomized_stepwise_inference", "draw_randomization"]


def draw_randomization(n: int, noise_sd: float, rng: Any = None) -> np.ndarray:
    r"""The randomization :math:`\omega\sim N(0,\text{noise\_sd}^2 I_n)` (``rng``: a
    ``numpy.random.Generator``, a seed, or None for fresh entropy)."""
    n = check_int("n", n, low=1)
    noise_sd = check_positive_real("noise_sd", noise_sd)
    return np.random.default_rng(rng).normal(0.0, noise_sd, size=n)


MIN_NOISE_RATIO = 0.01   # noise_sd / sigma: below it the conditional law needs too fine a grid


#: a supplied randomization whose spread is this improbable under N(0, noise_sd^2) is refused (a correct
#: one is refused with this probability)
_SPREAD_P = 1e-9


def _randomization(n, sigma, noise_sd, rng, randomization, plain):
    if randomization is not None and noise_sd is None:
        raise ValueError("`noise_sd` must be given with `randomization`: the sd the randomization was drawn with "
                         "(the p-values integrate over that law; a wrong value makes them invalid); got "
                         "noise_sd=None.")
    noise_sd = sigma if noise_sd is None else check_scale("noise_sd", noise_sd)
    if noise_sd < MIN_NOISE_RATIO * sigma:
        raise ValueError(f"`noise_sd` must be at least {MIN_NOISE_RATIO:g} * sigma = {MIN_NOISE_RATIO * sigma:.4g} "
                         f"(the smoothed truncation is tabulated on a grid finer than the noise); got {noise_sd!r}. "
                         f"Without randomization use {plain}.")
    if randomization is None:
        return noise_sd, draw_randomization(n, noise_sd, rng)
    if rng is not None:
        raise ValueError(f"`rng` must be None when `randomization` is given (the noise is already drawn); got "
                         f"rng={rng!r}.")
    omega = check_vector("randomization", randomization, length=n)
    # the spread of omega against N(0, noise_sd^2): sum(omega^2) / noise_sd^2 is chi-square with n df
    q = float(omega @ omega) / noise_sd**2
    p = 2.0 * min(stats.chi2.sf(q, n), stats.chi2.cdf(q, n))
    if p < _SPREAD_P:
        raise ValueError(f"`randomization` does not look drawn from N(0, noise_sd^2) with noise_sd = {noise_sd:.4g}: "
                         f"its root mean square is {math.sqrt(q / n) * noise_sd:.4g} (two-sided chi-square p = "
                         f"{p:.2g} on {n} df). Give the sd it was drawn with.")
    return noise_sd, omega


def _targets(targets, size):
    if targets is None:
        return list(range(size))
    try:
        out = [int(t) for t in targets]
    except (TypeError, ValueError):
        raise TypeError(f"`targets` must be a sequence of positions in the selection; got {targets!r}.") from None
    if any(t < 0 or t >= size for t in out) or len(set(out)) != len(out):
        raise ValueError(f"`targets` must hold distinct positions 0..{size - 1} of the {size} selected variables; "
                         f"got {targets!r}.")
    return out


_SIDES = (TWO_SIDED, ONE_SIDED, "greater", "less")


def lasso_active_set(X, u, lam: float, *, intercept: bool = True, tol_beta: float = 1e-5):
    """The lasso at ``lam`` (selectiveInference scale) on ``u``: ``(fit, E)``, the fit and the
    positions of the coefficients counted as selected (``|b_j| > tol_beta * sqrt(n / ||x_j||^2)``,
    the rule of R selectiveInference), after the KKT check. Shared by the inference and by the
    selectors of :mod:`selective.selectors.carving`, so both see the same selection."""
    n = X.shape[0]
    fit = solve_lasso(X, u, lam, intercept=intercept)
    Xc = X - (X.mean(0) if intercept else 0.0)
    uc = u - (u.mean() if intercept else 0.0)
    with np.errstate(divide="ignore"):
        tol_coef = tol_beta * np.sqrt(n / np.sum(Xc ** 2, axis=0))
    E = np.nonzero(np.abs(fit.beta) > tol_coef)[0]
    _kkt_gaussian(Xc, uc, np.where(np.abs(fit.beta) > tol_coef, fit.beta, 0.0), lam, 0.1)
    return fit, E


def _carve(A, b, u, y, eta, sigma, noise_sd, sign, alpha, alternative, gridrange=None, null_value=0.0):
    """Randomized-response inference for eta'mu given {A u <= b} (or given limits already found)."""
    ss = float(eta @ eta)
    if A is not None:
        lim = truncation_limits(A, b, u, eta, sigma=1.0)
        vlo, vup = lim.vlo, lim.vup
    else:
        vlo, vup = gridrange
    stat = float(eta @ y)
    sd = sigma * math.sqrt(ss)
    event = IntervalEvent(vlo, vup, "gaussian", noise_sd * math.sqrt(ss))
    if alternative == TWO_SIDED:
        side = "two-sided"
    elif alternative == ONE_SIDED:  # in the direction of the selected sign, as R selectiveInference's
        side = "greater" if sign > 0 else "less"
    else:
        side = alternative
    try:
        res = randomized_inference([stat], [[sd * sd]], event, alpha=alpha, alternative=side,
                                   null_value=null_value)
    except ValueError as exc:
        if "too small" not in str(exc):
            raise
        raise ValueError(f"The estimate {stat:.4g} lies {abs(stat) / sd:.3g} sd from 0 with randomization sd "
                         f"{noise_sd:.4g} * ||eta|| = {noise_sd * math.sqrt(ss):.3g}: too far out, against the noise, "
                         "for the conditional law to be tabulated (its grid spans the estimate and 0 at a spacing "
                         "of a tenth of the noise). Its p-value is 0 to double precision; a larger `noise_sd` "
                         "or the polyhedral route (noise 0) handles it.") from None
    return stat, sd, vlo, vup, float(res.pvalue[0]), np.asarray(res.ci[0]), float(res.log_boundary_tail[0])


def _naive(est, sd, s, alternative, null=0.0):
    from scipy.stats import norm

    if alternative == TWO_SIDED:
        return 2 * norm.sf(np.abs(est - null) / sd)
    z = (est - null) / sd
    return norm.sf(s * z) if alternative == ONE_SIDED else norm.sf(z if alternative == "greater" else -z)


def _result(procedure, type, names, E, s, rows, sigma, noise_sd, omega, alpha, alternative, vmat, extra, method,
            null_value=0.0, **kw):
    rows = list(rows)
    est = np.array([r[0] for r in rows])
    sd = np.array([r[1] for r in rows])
    ci = np.array([r[5] for r in rows]).reshape(-1, 2)
    return SelectiveInferenceResult(
        procedure=procedure, type=type, variables=tuple(names[j] for j in E), index=_ro(E, int), sign=_ro(s, int),
        estimate=_ro(est), sd=_ro(sd), vlo=_ro([r[2] for r in rows]), vup=_ro([r[3] for r in rows]),
        pvalue=_ro([r[4] for r in rows]), ci=_ro(ci), tailarea=_ro(np.full((len(rows), 2), alpha / 2)),
        alpha=alpha, sigma=float(sigma), alternative=alternative,
        pvalue_naive=_ro(_naive(est, sd, np.asarray(s, float), alternative, null_value)), sigma_rule="given",
        sigma_mode="known", contrasts=_ro(vmat),
        extra={"noise_sd": float(noise_sd), "noise_ratio": float(noise_sd / sigma) ** 2,
               "randomization": _ro(omega), "log_boundary_tail": _ro([r[6] for r in rows]),
               "null_value": float(null_value), **extra},
        method=method, **kw)


def randomized_lasso_inference(X, y, lam: float, *, sigma: float, noise_sd: float | None = None, rng: Any = None,
                               randomization=None, intercept: bool = True, alpha: float = 0.1,
                               alternative: str = TWO_SIDED, columns=None, response: str | None = None,
                               lambda_scale: str = "selectiveInference", tol_beta: float = 1e-5,
                               targets=None, null_value: float = 0.0) -> SelectiveInferenceResult:
    r"""The lasso at ``lam`` on the randomized response :math:`y+\omega`, with exact p-values and
    intervals for the coefficients of :math:`y` regressed on the selected columns.

    Parameters
    ----------
    X : array_like (n, p) or pandas.DataFrame
        Design (with a DataFrame, ``y`` may name the response column).
    y : array_like (n,) or str
        Response, modelled as :math:`N(\mu, \sigma^2 I)` given X.
    lam : float
        Penalty, on the scale of :func:`~selective.conditional.fixed_lasso_inference`
        (:math:`\frac12\|y-b_0-Xb\|^2+\lambda\|b\|_1`; see ``lambda_scale``).
    sigma : float
        The noise sd of ``y`` (required: the p-values are exact for the true sigma).
    noise_sd : float, optional
        The sd :math:`\tau` of the randomization (default ``sigma``: the selection sees the data
        at the signal-to-noise of half the sample, like a 50:50 split). Larger: weaker selection,
        more power left for the tests. At least ``0.01 * sigma``.
    rng : numpy.random.Generator or int, optional
        Draws :math:`\omega` (default: fresh entropy).
    randomization : array_like (n,), optional
        The :math:`\omega` to use instead of drawing it (to reproduce an analysis), with the
        ``noise_sd`` it was drawn with (required then). It must have been drawn from
        :math:`N(0,\tau^2 I)` independently of ``y``, or nothing is valid; a spread far from
        ``noise_sd`` (two-sided chi-square p below 1e-9) is refused.
    intercept : bool
        Centre X, y and the randomized response (an unpenalised intercept).
    alpha : float
        Intervals have coverage 1 - alpha.
    alternative : {"two-sided", "one-sided", "greater", "less"}
        ``"one-sided"``: in the direction of the selected sign (R selectiveInference's);
        ``"greater"`` / ``"less"``: a fixed direction (the alternative of a regression test).
    lambda_scale, tol_beta, columns, response
        As in :func:`~selective.conditional.fixed_lasso_inference`.
    targets : sequence of int, optional
        Test only these positions of the selection (0-based, in the order of the result; the
        choice must not depend on ``y`` beyond the selection). Default: every selected variable.
    null_value : float
        The value of each tested coefficient under the null (default 0; the intervals do not
        depend on it).

    Returns
    -------
    SelectiveInferenceResult
        ``procedure`` is ``"randomized lasso"``; ``vlo``/``vup`` are the limits of
        :math:`\eta^\top(y+\omega)` given :math:`P^\perp(y+\omega)`; ``extra`` holds ``noise_sd``,
        ``noise_ratio`` (:math:`\tau^2/\sigma^2`), the ``randomization`` used, the ``noisy_beta``
        (the lasso solution on :math:`y+\omega`), ``selected`` (every selected column, also
        those not in ``targets``) and ``log_boundary_tail`` (per variable, the log
        normal tail beyond the conditional rejection boundary at ``alpha``: how deep into the
        tail the test relies on normality).

    Notes
    -----
    The selection event is the polyhedron of Lee et al. (2016), Thm 4.3, in :math:`y+\omega`; the
    inactive constraints are orthogonal to the partial-coefficient contrasts and are omitted.
    docs/THEORY.md 3.13; Tian and Taylor (2018).
    """
    X, y, names = design_and_response(X, y, columns, response)
    n, p = X.shape
    lam = lambda_on_si_scale(lam, n, lambda_scale)
    sigma = check_scale("sigma", sigma)
    alpha = check_alpha(alpha)
    alternative = check_choice("alternative", alternative, _SIDES)
    null_value = _finite("null_value", null_value)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"`intercept` must be True or False; got {intercept!r}.")
    noise_sd, omega = _randomization(n, sigma, noise_sd, rng, randomization, "fixed_lasso_inference")
    u = y + omega
    fit, E = lasso_active_set(X, u, lam, intercept=intercept, tol_beta=tol_beta)
    Xc = X - (X.mean(0) if intercept else 0.0)
    uc = u - (u.mean() if intercept else 0.0)
    yc = y - (y.mean() if intercept else 0.0)
    method = (f"randomized response (Tian & Taylor 2018), Gaussian noise sd {noise_sd:.4g}, lasso event of "
              "Lee, Sun, Sun & Taylor (2016) Thm 4.3")
    extra = {"noisy_beta": _ro(fit.beta), "lambda_glmnet": lam / n, "selected": _ro(E, int)}
    if E.size == 0:
        return _result("randomized lasso", "partial", names, E, np.zeros(0), [], sigma, noise_sd, omega, alpha,
                       alternative, np.zeros((0, n)), extra, method, lam=lam)
    XE = Xc[:, E]
    if np.linalg.matrix_rank(XE) < E.size:
        raise ValueError(f"The selected columns {[names[j] for j in E]} are linearly dependent; the lasso solution "
                         "is not unique.")
    s = np.sign(fit.beta[E])
    XEp = np.linalg.pinv(XE)
    A = -s[:, None] * XEp
    b = -lam * s * ((XEp @ np.linalg.pinv(XE.T)) @ s)
    tg = _targets(targets, E.size)
    rows = [_carve(A, b, uc, yc, XEp[i], sigma, noise_sd, s[i], alpha, alternative, null_value=null_value)
            for i in tg]
    return _result("randomized lasso", "partial", names, E[tg], s[tg], rows, sigma, noise_sd, omega, alpha,
                   alternative, XEp[tg], extra, method, null_value=null_value, lam=lam, constraints_A=_ro(A),
                   constraints_b=_ro(b))


def randomized_stepwise_inference(X, y, *, steps: int, sigma: float, noise_sd: float | None = None,
                                  rng: Any = None, randomization=None, intercept: bool = True,
                                  alpha: float = 0.1, alternative: str = TWO_SIDED, columns=None,
                                  response: str | None = None, targets=None,
                                  null_value: float = 0.0) -> SelectiveInferenceResult:
    r"""``steps`` steps of forward stepwise on the randomized response :math:`y+\omega`, with exact
    p-values and intervals for every coefficient of the ``steps``-variable model (the ``type="all"``
    targets of :func:`~selective.conditional.fs_inference`), conditioning on the whole ordered path
    and its signs.

    Parameters are those of :func:`randomized_lasso_inference`, with ``steps`` (declared before
    looking) instead of ``lam``; ``targets`` are positions in the order of entry.

    Returns
    -------
    SelectiveInferenceResult
        ``procedure`` is ``"randomized forward stepwise"``, ``k`` the number of steps;
        ``extra["path"]`` is the :class:`~selective.conditional.StepwisePath` on :math:`y+\omega`.
    """
    X, y, names = design_and_response(X, y, columns, response)
    n, p = X.shape
    sigma = check_scale("sigma", sigma)
    alpha = check_alpha(alpha)
    alternative = check_choice("alternative", alternative, _SIDES)
    null_value = _finite("null_value", null_value)
    k = check_int("steps", steps, low=1, high=p)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"`intercept` must be True or False; got {intercept!r}.")
    noise_sd, omega = _randomization(n, sigma, noise_sd, rng, randomization, "fs_inference")
    path = forward_stepwise(X, y + omega, maxsteps=k, intercept=intercept, columns=names)
    if path.n_steps < k:
        raise ValueError(f"forward stepwise on the randomized response stopped after {path.n_steps} steps, fewer "
                         f"than `steps` = {k}.")
    Xn, uc = path.x_std, path.y_centred
    yc = y - (y.mean() if intercept else 0.0)
    cons = path.constraints
    Gu, off = cons.apply(uc, max_step=k, extra=False), cons.offsets(max_step=k, extra=False)
    act = [int(j) for j in path.action[:k]]
    P = np.linalg.pinv(Xn[:, act])
    vmat = P / np.asarray(path.column_norms)[act][:, None]
    tg = _targets(targets, k)
    rows = []
    for i in tg:
        eta = vmat[i]
        ss = float(eta @ eta)
        Gc = cons.apply((eta / ss)[:, None], max_step=k, extra=False)[:, 0]
        lims = _limits_from(Gu, Gc, off, float(eta @ uc))
        rows.append(_carve(None, None, uc, yc, eta, sigma, noise_sd, path.sign[i], alpha, alternative,
                           gridrange=lims, null_value=null_value))
    method = (f"randomized response (Tian & Taylor 2018), Gaussian noise sd {noise_sd:.4g}, forward stepwise "
              "event of Tibshirani, Taylor, Lockhart & Tibshirani (2016)")
    return _result("randomized forward stepwise", "all", names, np.asarray(act)[tg], np.asarray(path.sign[:k])[tg],
                   rows, sigma, noise_sd, omega, alpha, alternative, vmat[tg], {"path": path}, method,
                   null_value=null_value, k=k)
