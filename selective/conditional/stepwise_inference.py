r"""Selective inference after forward stepwise and least angle regression.

Tibshirani, Taylor, Lockhart and Tibshirani (2016), "Exact post-selection inference for
sequential regression procedures", JASA 111(514), 600-620 (arXiv:1401.3889): on the polyhedral
event of the first k steps of the path (:mod:`.stepwise`), the polyhedral lemma and the
truncated-normal pivot (Lee, Sun, Sun and Taylor 2016, Lemma 5.1 and Theorem 5.2) give exact
tests of each entered variable's partial coefficient (``type="active"``), of all variables of
the k-step model (``"all"``), or of the model chosen by AIC with the AIC decisions added to
the event (``"aic"``, Section 5). For LAR the spacing test, a knot test with both truncation
limits from one conditioning event, and the covariance test of Lockhart, Taylor, Tibshirani
and Tibshirani (2014) are reported too.

The noise level is known (exact), unknown and handled by the valid sup-over-an-interval
construction, or plugged in (approximate); see :mod:`._sigma`.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from . import _truncnorm
from ._checks import check_alpha, check_choice, check_int, check_positive_real, check_scale
from ._constraints import sparse_rows
from ._inference import ONE_SIDED, TWO_SIDED, forward_stop, summarise
from ._sigma import SIGMA_METHODS, SigmaChoice, choose_sigma, sup_pvalue
from .polyhedral import _check_gridrange
from .results import SelectiveInferenceResult, _ro
from .stepwise import StepwisePath

__all__ = ["fs_inference", "lar_inference"]

_AIC_BLOCKER = ("the AIC rule of type='aic' uses sigma in the selection itself (penalty "
                "mult * sigma^2 * df), so the selection is not independent of the sigma estimate")


def fs_inference(path: StepwisePath, *, sigma: float | None = None, alpha: float = 0.1,
                 k: int | None = None, type: str = "active", mult: float = 2.0,
                 ntimes: int = 2, alternative: str = ONE_SIDED,
                 gridrange=(-100.0, 100.0), sigma_method: str = "auto",
                 sigma_delta: float | None = None) -> SelectiveInferenceResult:
    r"""Selective inference after forward stepwise (Tibshirani et al. 2016, Section 3 and 5).

    Parameters
    ----------
    path : StepwisePath
        From :func:`forward_stepwise`.
    sigma : float, optional
        Noise sd. Given: the p-values are exact. Not given: see ``sigma_method``.
    alpha : float
        Coverage 1 - alpha; also the ForwardStop level.
    k : int, optional
        Number of steps to use (default: all steps of the path). Required for ``type="all"``
        and ``"aic"`` unless the path length is wanted.
    type : {"active", "all", "aic"}
        ``"active"``: sequential test of each entering variable's partial coefficient given
        the first t steps; ``"all"``: every variable of the k-step model given k steps;
        ``"aic"``: every variable of the model chosen by AIC (penalty ``mult * sigma**2 *
        df``, stopping after ``ntimes`` consecutive increases), with the AIC decisions added to
        the event.
    alternative : {"one-sided", "two-sided"}
        ``"one-sided"`` tests in the direction of the entry sign (R's p-value).
    sigma_method : {"auto", "interval", "plugin"}
        How an unknown sigma is handled (``sigma=None``). ``"interval"``: valid p-values from
        the full-model residual variance, which is independent of the path (the path depends
        on y only through X'y) under the full linear model: the supremum of the conditional
        p-value over a :math:`1-\delta` chi-square interval for sigma, plus :math:`\delta`;
        intervals are the union over it at level :math:`1-(\alpha-\delta)` (THEORY.md 3.7).
        Needs n > rank(X) + intercept, and is not available for ``type="aic"`` (the AIC
        penalty uses sigma). ``"plugin"``: R selectiveInference's plug-in (full-model
        residual standard error when n >= 2p, else sd(y)); approximate, warns. ``"auto"``
        (default): ``"interval"`` where it applies, else ``"plugin"``.
    sigma_delta : float, optional
        The :math:`\delta` of ``"interval"``, in (0, alpha); default ``alpha / 10``.
        The reported p-values are never below it: choose it below the smallest level the
        p-values will be compared with (the test is valid at every level, powerless below delta).

    Returns
    -------
    SelectiveInferenceResult
        ``khat``: ForwardStop estimate (G'Sell et al. 2016) for ``"active"``, the AIC size
        for ``"aic"``. ``sigma_mode`` / ``inference`` say how sigma entered.
    """
    if not isinstance(path, StepwisePath) or path.procedure != "forward stepwise":
        raise TypeError(f"`path` must be a StepwisePath from forward_stepwise(); got "
                        f"{getattr(path, 'procedure', path.__class__.__name__)!r}.")
    return _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange,
                      sigma_method, sigma_delta)


def lar_inference(path: StepwisePath, *, sigma: float | None = None, alpha: float = 0.1,
                  k: int | None = None, type: str = "active", mult: float = 2.0,
                  ntimes: int = 2, alternative: str = ONE_SIDED,
                  gridrange=(-100.0, 100.0), sigma_method: str = "auto",
                  sigma_delta: float | None = None) -> SelectiveInferenceResult:
    r"""Selective inference after least angle regression (Tibshirani et al. 2016, Section 4-5).

    Same parameters as :func:`fs_inference`. With ``type="active"`` it also reports, for the
    knot :math:`\lambda_t = c_t^\top y` (sd :math:`\sigma\|c_t\|`, one-sided):

    * ``pvalue_spacing``: the spacing test, :math:`\lambda_t` truncated to
      :math:`[\lambda_{t+1}, \lambda_{t-1}]` (:math:`\lambda_0 = \infty`, and
      :math:`\lambda_{t+1} = 0` after the last step of a complete path). This is the value
      R selectiveInference 1.2.5 returns as ``pv.modspac`` (and, in all but one of the
      reference entries, as ``pv.spacing``). Its two limits are single rows of two different
      events (steps t and t + 1), so it is not covered by the polyhedral lemma; it is
      reported for comparison with R.
    * ``pvalue_modspac``: the knot test made exact, both limits from one conditioning event:
      :math:`\lambda_t` truncated to the polyhedral limits :math:`[V^-, V^+]` of
      :math:`c_t^\top y` on the event of the first t steps (Lee et al. 2016, Lemma 5.1;
      Tibshirani et al. 2016, Section 4). That event already implies
      :math:`V^- \ge \lambda_{t+1}` and :math:`V^+ \le \lambda_{t-1}`, and :math:`c_t` is a
      positive multiple of the step-t contrast, so this equals the one-sided ``pvalue`` of
      step t. (An earlier version took :math:`\lambda_{t+1}` as the lower limit and the
      upper one from the polyhedron: limits of two different events, not uniform under the null.)
    * ``pvalue_covtest``: the covariance test :math:`\exp(-T_t)`,
      :math:`T_t = \lambda_t(\lambda_t-\lambda_{t+1})/(\sigma^2\|c_t\|^2)` (Lockhart,
      Taylor, Tibshirani and Tibshirani 2014); asymptotic, not exact. R's ``1 - pexp(T)`` is
      0 once it underflows, ours is not.

    All are computed from log tails, so they stay accurate far in the tail. With the valid
    unknown-sigma construction each is the supremum over the sigma interval plus delta.
    """
    if not isinstance(path, StepwisePath) or path.procedure != "least angle regression":
        raise TypeError(f"`path` must be a StepwisePath from least_angle_regression(); got "
                        f"{getattr(path, 'procedure', path.__class__.__name__)!r}.")
    return _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange,
                      sigma_method, sigma_delta)


def _limits_from(Gy, Gc, u, stat):
    """Polyhedral lemma for G y >= u, i.e. A = -G, b = -u (Lee et al. 2016, Lemma 5.1)."""
    al = -Gc
    resid = -u + Gy - Gc * stat  # b - A z with z = y - c stat
    scale = 1e-12 * (np.abs(Gc).max() if Gc.size else 1.0)
    zero = np.abs(al) <= scale
    neg = (al < 0) & ~zero
    pos = (al > 0) & ~zero
    vlo = float(np.max(resid[neg] / al[neg])) if neg.any() else -math.inf
    vup = float(np.min(resid[pos] / al[pos])) if pos.any() else math.inf
    return vlo, vup


def _aic_event(path, cons, k, sigma, mult, ntimes):
    """AIC stopping rule and its constraints (Tibshirani et al. 2016, Section 5.3)."""
    yc = path.y_centred
    Q = path.constraints.Q
    p = path.x_std.shape[1]
    qy = Q[:, :k].T @ yc
    rss0 = float(yc @ yc)
    rss = rss0 - np.cumsum(qy ** 2)
    aic = rss + mult * sigma ** 2 * path.df[:k]
    parts_rows = []
    count = 0
    khat = k
    last = 0
    prev = rss0
    for i in range(k):
        s = 1.0 if qy[i] >= 0 else -1.0
        j = int(path.action[i])
        coef = s / path.residual_norms[i]  # s * q_i = s * r_j/||r_j||
        thr = math.sqrt(mult * (path.df[i] - (path.df[i - 1] if i else 0))) * sigma
        if aic[i] <= prev:
            parts_rows.append((i, j, coef, thr))
            count = 0
        else:
            parts_rows.append((i, j, -coef, -thr))
            count += 1
        prev = aic[i]
        last = i + 1
        if count == ntimes:
            break
    if count == ntimes:
        khat = last - ntimes
    for i, j, coef, thr in parts_rows:
        cons.add([(i, sparse_rows(1, p, [0], [j], [coef]))], np.array([thr]), -1)
    return khat, aic[:last]


def _tests(type, k, khat):
    """(model size, 0-based positions of the tested coefficients) of every test of ``type``."""
    if type == "active":
        return [(t, [t - 1]) for t in range(1, k + 1)]      # (model size, which coef)
    if type == "all":
        return [(k, list(range(k)))]
    return [(khat, list(range(khat)))]


def _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange, sigma_method,
               sigma_delta):
    alpha = check_alpha(alpha)
    type = check_choice("type", type, ("active", "all", "aic"))
    alternative = check_choice("alternative", alternative, (ONE_SIDED, TWO_SIDED))
    bound = _check_gridrange(gridrange)
    mult = check_positive_real("mult", mult)
    ntimes = check_int("ntimes", ntimes, low=1)
    sigma = check_scale("sigma", sigma, allow_none=True)
    sigma_method = check_choice("sigma_method", sigma_method, SIGMA_METHODS)
    T = path.n_steps
    if T == 0:
        raise ValueError("`path` has no steps; nothing to test.")
    k = T if k is None else check_int("k", k, low=1, high=T)
    Xn, yc = path.x_std, path.y_centred
    choice = choose_sigma(Xn, yc, path.intercept, sigma=sigma, method=sigma_method, alpha=alpha,
                          delta=sigma_delta, interval_blocker=_AIC_BLOCKER if type == "aic" else None,
                          stacklevel=4)
    # extra (AIC) rows go to a shallow copy, so the path object is never modified
    cons = copy.copy(path.constraints)
    cons.blocks = list(path.constraints.blocks)
    khat = None
    if type == "aic":
        khat, _ = _aic_event(path, cons, k, choice.sigma, mult, ntimes)
        if khat == 0:
            raise ValueError("AIC chose the empty model (khat = 0); nothing to test.")
    Gy_all = cons.apply(yc, max_step=k, extra=True)
    u_all = cons.offsets(max_step=k, extra=True)
    steps_of_rows = np.concatenate([np.full(blk[1].shape[0], blk[2]) for blk in
                                    cons._select(k, True)]) if cons.blocks else np.zeros(0)
    contrasts, signs, row_masks, vars_ = [], [], [], []
    for msize, which in _tests(type, k, khat):
        A = path.action[:msize]
        P = np.linalg.pinv(Xn[:, A])
        for w in which:
            j = int(path.action[w])
            contrasts.append(P[w] / path.column_norms[j])
            signs.append(int(path.sign[w]))
            vars_.append(j)
            if type == "active":
                row_masks.append((steps_of_rows <= msize) & (steps_of_rows > 0))
            else:
                row_masks.append(np.ones(steps_of_rows.size, bool))
    m = len(contrasts)
    est, sd, vlo, vup, pv = (np.empty(m) for _ in range(5))
    ci, tails = np.empty((m, 2)), np.empty((m, 2))
    etas = np.array(signs, dtype=float)[:, None] * np.array(contrasts)
    sss = np.einsum("ij,ij->i", etas, etas)
    GC = cons.apply((etas / sss[:, None]).T, max_step=k, extra=True)  # every contrast at once
    for i in range(m):
        eta = etas[i]
        ss = float(sss[i])
        stat = float(eta @ yc)
        Gc = GC[:, i]
        msk = row_masks[i]
        lo_, hi_ = _limits_from(Gy_all[msk], Gc[msk], u_all[msk], stat)
        est[i], sd[i], vlo[i], vup[i] = signs[i] * stat, choice.sigma * math.sqrt(ss), lo_, hi_
        pv[i], ci[i], tails[i] = summarise(stat, math.sqrt(ss), lo_, hi_, signs[i], choice, alpha=alpha,
                                           bound=bound, alternative=alternative)
    extra = {"sigma_rule": choice.rule}
    spacing = modspac = covtest = None
    if type == "active":
        khat = forward_stop(pv, alpha)
        if path.procedure == "least angle regression":
            spacing, modspac, covtest, knot_sd = _lar_tests(path, k, choice)
            extra["knot_sd"] = _ro(knot_sd)
    from scipy.stats import norm
    zst = np.array(signs) * est / sd
    naive = norm.sf(zst) if alternative == ONE_SIDED else 2 * norm.sf(np.abs(zst))
    vmat = np.array(contrasts)  # estimate = vmat @ y (R's fsInf vmat is sign * vmat)
    return SelectiveInferenceResult(
        procedure=path.procedure, type=type, variables=tuple(path.variables[j] for j in vars_),
        index=_ro(vars_, int), sign=_ro(signs, int), estimate=_ro(est), sd=_ro(sd),
        vlo=_ro(vlo), vup=_ro(vup), pvalue=_ro(pv), ci=_ro(ci), tailarea=_ro(tails),
        alpha=alpha, sigma=float(choice.sigma), alternative=alternative, pvalue_naive=_ro(naive),
        pvalue_spacing=None if spacing is None else _ro(spacing),
        pvalue_modspac=None if modspac is None else _ro(modspac),
        pvalue_covtest=None if covtest is None else _ro(covtest),
        k=k, khat=khat, sigma_rule=choice.rule, sigma_mode=choice.mode,
        sigma_interval=None if choice.low is None else (choice.low, choice.high),
        sigma_delta=choice.delta, sigma_df=choice.df, contrasts=_ro(vmat),
        extra={**extra, "constraint_bytes_compact": cons.nbytes,
               "constraint_bytes_dense": cons.dense_nbytes(k)},
        method=f"Tibshirani, Taylor, Lockhart & Tibshirani (2016), {path.procedure}, type={type}")


def _knot_pvalue(lam_t, nrm, lo, hi, choice: SigmaChoice) -> float:
    """One-sided truncated-normal p-value of the knot ``lam_t`` (sd ``sigma * nrm``) on [lo, hi]."""
    if choice.mode == "interval":
        return min(1.0, sup_pvalue(lam_t, nrm, lo, hi, choice.low, choice.high, ONE_SIDED) + choice.delta)
    s_d = choice.sigma * nrm
    return math.exp(_truncnorm._log_sf_scalar(lam_t / s_d, lo / s_d, hi / s_d, 0.0))


def _lar_tests(path, k, choice: SigmaChoice):
    """Spacing, exact knot (both limits from one event) and covariance-test p-values."""
    cons = path.constraints
    Gy = cons.apply(path.y_centred, max_step=k, extra=False)
    u = cons.offsets(max_step=k, extra=False)
    steps_of_rows = np.concatenate([np.full(b[1].shape[0], b[2]) for b in cons._select(k, False)])
    lam = np.concatenate([path.lam, [path.next_lam]])
    sp_, ms, cv, sds = (np.empty(k) for _ in range(4))
    C = np.column_stack([_knot_vector(path, t) for t in range(k)])   # lambda_t = c_t' y
    nrms = np.linalg.norm(C, axis=0)
    GC = cons.apply(C / nrms ** 2, max_step=k, extra=False)
    for t in range(k):
        nrm = float(nrms[t])
        sds[t] = choice.sigma * nrm
        lam_t, lam_next = lam[t], lam[t + 1]
        lam_prev = lam[t - 1] if t > 0 else math.inf
        sp_[t] = _knot_pvalue(lam_t, nrm, lam_next, lam_prev, choice)
        # both limits from the event of the first t + 1 (1-based) steps
        msk = steps_of_rows <= t + 1
        lo, hi = _limits_from(Gy[msk], GC[msk, t], u[msk], lam_t)
        ms[t] = _knot_pvalue(lam_t, nrm, lo, hi, choice)
        # covariance test; with the sigma interval its supremum is at the largest sigma
        s_top = choice.high if choice.mode == "interval" else choice.sigma
        cv[t] = math.exp(-lam_t * (lam_t - lam_next) / (s_top * nrm) ** 2)
        if choice.mode == "interval":
            cv[t] = min(1.0, cv[t] + choice.delta)
    return sp_, ms, cv, sds


def _knot_vector(path, t):
    """Vector c_t with lambda_t = c_t' y (centred y, normalised columns)."""
    Xn = path.x_std
    j = int(path.action[t])
    if t == 0:
        return path.sign[0] * Xn[:, j]
    A = path.action[:t]
    XA = Xn[:, A]
    sA = path.sign[:t].astype(float)
    G = XA.T @ XA
    d = Xn[:, j] @ XA @ np.linalg.solve(G, sA)
    r = Xn[:, j] - XA @ np.linalg.solve(G, XA.T @ Xn[:, j])
    return r / (path.sign[t] - d)
