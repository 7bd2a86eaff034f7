r"""Forward stepwise (FS) and least angle regression (LAR) paths with exact selective inference.

Tibshirani, Taylor, Lockhart and Tibshirani (2016), "Exact post-selection inference for
sequential regression procedures", JASA 111(514), 600-620 (arXiv:1401.3889): the event that FS
or LAR takes a given sequence of variables and signs in its first k steps is a polyhedron
:math:`\{\Gamma y \ge u\}` (Section 3: FS, Section 4 / Proposition 2: LAR), so the polyhedral
lemma and truncated-normal pivot give exact tests of each entered variable's partial
coefficient (``type="active"``), of all variables of the k-step model (``"all"``), or of the
model chosen by AIC, with the AIC decisions added to the event (``"aic"``, Section 5). For
LAR the spacing test (Section 5.2, Theorem 2 and its modified form) and the covariance test
of Lockhart, Taylor, Tibshirani and Tibshirani (2014) are reported too.

Conventions follow R selectiveInference: y and the columns are centred (``intercept=True``)
and the columns scaled to unit norm (``normalize=True``); coefficients are reported on the
scale of the original columns.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _truncnorm
from ._checks import check_alpha, check_choice, check_int, check_positive_real, design_and_response
from ._constraints import StepConstraints, sparse_rows
from ._inference import ONE_SIDED, TWO_SIDED, forward_stop, pivot_summary, sigma_from_rule
from .polyhedral import _check_gridrange
from .results import SelectiveInferenceResult, _ro

__all__ = ["StepwisePath", "forward_stepwise", "least_angle_regression", "fs_inference",
           "lar_inference"]

_EPS = 1e-10


@dataclass(frozen=True, slots=True, kw_only=True)
class StepwisePath:
    """A forward stepwise or LAR path and the polyhedral event of each of its steps."""

    procedure: str                 # "forward stepwise" or "least angle regression"
    variables: tuple[str, ...]     # all column names
    action: np.ndarray             # 0-based entered columns, in order
    sign: np.ndarray               # entry signs
    df: np.ndarray                 # model degrees of freedom after each step (1, 2, ...)
    lam: np.ndarray                # LAR knots (NaN for FS)
    next_lam: float                # LAR knot after the last step (0 when the path is complete)
    completepath: bool
    intercept: bool
    normalize: bool
    column_means: np.ndarray
    column_norms: np.ndarray
    x_std: np.ndarray = field(repr=False)   # centred, normalised design
    y_centred: np.ndarray = field(repr=False)
    constraints: StepConstraints = field(repr=False)
    residual_norms: np.ndarray = field(repr=False)  # ||r_{j_t}^{(t-1)}|| at each step

    @property
    def n_steps(self) -> int:
        return int(self.action.size)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "variable": [self.variables[j] for j in self.action],
            "index": self.action.astype(int),
            "sign": self.sign.astype(int),
            "df": self.df.astype(int),
            "lambda": self.lam,
        }, index=pd.RangeIndex(1, self.n_steps + 1, name="step"))


def _prepare(X, y, intercept, normalize):
    n, p = X.shape
    xm = X.mean(0) if intercept else np.zeros(p)
    Xc = X - xm
    yc = y - (y.mean() if intercept else 0.0)
    norms = np.sqrt(np.sum(Xc ** 2, axis=0))
    if normalize:
        if np.any(norms == 0):
            j = int(np.nonzero(norms == 0)[0][0])
            raise ValueError(f"`X` column {j} is constant; it cannot be normalised.")
        Xn = Xc / norms
    else:
        Xn = Xc
        norms = np.ones(p)
    return Xn, yc, xm, norms


class _Basis:
    """Nested orthonormal basis of the entered columns (classical Gram-Schmidt, twice)."""

    def __init__(self, X, T):
        n, p = X.shape
        self.X = X
        self.Q = np.zeros((n, T))
        self.W = np.zeros((p, T))
        self.t = 0
        self.xx = np.sum(X ** 2, axis=0)
        self.rn2 = self.xx.copy()

    def residual(self, j):
        r = self.X[:, j].copy()
        for _ in range(2):
            r -= self.Q[:, :self.t] @ (self.Q[:, :self.t].T @ r)
        return r

    def add(self, j):
        r = self.residual(j)
        q = r / np.linalg.norm(r)
        self.Q[:, self.t] = q
        self.W[:, self.t] = self.X.T @ q
        self.t += 1
        self.rn2 = self.xx - np.sum(self.W[:, :self.t] ** 2, axis=1)
        return q


def _max_steps(maxsteps, n, p, intercept):
    return int(min(maxsteps, p, n - (1 if intercept else 0)))


def forward_stepwise(X, y, *, maxsteps: int = 2000, intercept: bool = True,
                     normalize: bool = True, columns=None, response=None) -> StepwisePath:
    r"""Forward stepwise regression path and its selection event.

    At each step the variable whose residualised, normalised column
    :math:`\tilde x_j = (I-P_A)x_j/\|(I-P_A)x_j\|` has the largest :math:`|\tilde x_j^\top y|`
    enters (the largest drop in RSS). The event "variable :math:`j_t` enters with sign
    :math:`s_t`" is :math:`s_t\tilde x_{j_t}^\top y \ge \pm\tilde x_k^\top y` for every other
    candidate :math:`k` (Tibshirani et al. 2016, Section 3.1).

    Parameters
    ----------
    X : array_like (n, p) or pandas.DataFrame
    y : array_like (n,) or str (response column name when ``X`` is a DataFrame)
    maxsteps : int
        At most ``min(maxsteps, p, n - intercept)`` steps.
    intercept, normalize : bool
        Centre y and the columns; scale the columns to unit norm (as R ``fs``).

    Returns
    -------
    StepwisePath
    """
    return _path("fs", X, y, maxsteps, intercept, normalize, columns, response)


def least_angle_regression(X, y, *, maxsteps: int = 2000, intercept: bool = True,
                           normalize: bool = True, columns=None, response=None) -> StepwisePath:
    r"""Least angle regression path (no lasso modification) and its selection event.

    With active set :math:`A`, signs :math:`s_A`, :math:`d_k = x_k^\top (X_A^+)^\top s_A` and
    :math:`r_k = (I-P_A)x_k`, variable :math:`k` would join with sign :math:`s` at
    :math:`\lambda = c(k,s)^\top y`, :math:`c(k,s) = r_k/(s - d_k)` (for the pairs with
    :math:`1 - s d_k > 0`); the next knot is the largest of these. The event of the first
    k steps is :math:`c(j_t,s_t)^\top y \ge c(k,s)^\top y`,
    :math:`c(j_{t-1},s_{t-1})^\top y \ge c(j_t,s_t)^\top y` and :math:`c(j_t,s_t)^\top y \ge 0`
    (Tibshirani et al. 2016, Section 4, Proposition 2). Efron, Hastie, Johnstone and
    Tibshirani (2004) define the path.

    Returns
    -------
    StepwisePath
        ``lam`` holds the knots :math:`\lambda_1 \ge \lambda_2 \ge \dots` on the scale of the
        normalised columns.
    """
    return _path("lar", X, y, maxsteps, intercept, normalize, columns, response)


def _path(kind, X, y, maxsteps, intercept, normalize, columns, response):
    X, y, names = design_and_response(X, y, columns, response)
    maxsteps = check_int("maxsteps", maxsteps, low=1)
    for nm, v in (("intercept", intercept), ("normalize", normalize)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"`{nm}` must be True or False; got {v!r}.")
    n, p = X.shape
    Xn, yc, xm, norms = _prepare(X, y, intercept, normalize)
    T = _max_steps(maxsteps, n, p, intercept)
    basis = _Basis(Xn, T)
    cons = StepConstraints(Xn, basis.Q, basis.W)
    xy = Xn.T @ yc
    ry = xy.copy()
    active: list[int] = []
    signs: list[int] = []
    lams: list[float] = []
    rnorms: list[float] = []
    in_active = np.zeros(p, bool)
    prev_c = None  # LAR: (t, j, coef) of the previous knot's vector c(j,s) = coef * r_j^{(t)}
    next_lam = math.nan
    for step in range(T):
        t = basis.t
        cand = np.nonzero((~in_active) & (basis.rn2 > _EPS * basis.xx))[0]
        if cand.size == 0:
            break
        rn = np.sqrt(basis.rn2[cand])
        if kind == "fs" or t == 0:
            if kind == "lar":  # LAR's first knot: largest |x_j' y| (raw inner products)
                rn = np.ones(cand.size)
            score = ry[cand] / rn
            i = int(np.argmax(np.abs(score)))
            j = int(cand[i]); s = 1 if score[i] >= 0 else -1
            others = np.delete(np.arange(cand.size), i)
            m = 2 * others.size
            # the entry sign itself: s x~_j' y >= 0 (implied by the rows below unless j is
            # the last candidate)
            cons.add([(t, sparse_rows(1, p, [0], [j], [s / rn[i]]))], np.zeros(1), step + 1)
            if m:
                rows = np.repeat(np.arange(m), 2)
                cols = np.empty(2 * m, int); vals = np.empty(2 * m)
                cols[0::2] = j; vals[0::2] = s / rn[i]
                oc = cand[others]; orr = rn[others]
                cols[1::4] = oc; vals[1::4] = -1.0 / orr     # s x_j - x_k >= 0
                cols[3::4] = oc; vals[3::4] = 1.0 / orr      # s x_j + x_k >= 0
                cons.add([(t, sparse_rows(m, p, rows, cols, vals))], np.zeros(m), step + 1)
            lam = abs(score[i]) if kind == "lar" else math.nan
            if kind == "lar":
                prev_c = (t, j, float(s))  # lambda_1 = c' y with c = s x_j
        else:
            # LAR step with t active variables
            A = np.array(active)
            R = basis.W[A, :t]           # X_A = Q R', R' upper-triangular (t x t)
            sA = np.array(signs, float)
            w = np.linalg.solve(R, sA)   # Q w = X_A (X_A'X_A)^{-1} s_A
            d = basis.W[:, :t] @ w       # d_k = x_k' X_A (X_A'X_A)^{-1} s_A
            pair_k, pair_s, pair_val, pair_coef = [], [], [], []
            # Each candidate competes with the sign of its residual inner product r_k'y
            # (the root of the other sign is negative when |d_k| < 1); that sign is part of
            # the conditioning event (rows s_k r_k'y >= 0 below).
            sk = np.where(ry[cand] >= 0, 1.0, -1.0)
            both = (1 - d[cand] > _EPS) & (1 + d[cand] > _EPS)
            for sv in (1.0, -1.0):
                den = sv - d[cand]
                ok = (sv * den > _EPS) & (~both | (sk == sv))
                kk = cand[ok]
                pair_k.append(kk); pair_s.append(np.full(kk.size, sv))
                pair_coef.append(1.0 / den[ok]); pair_val.append(ry[kk] / den[ok])
            pk = np.concatenate(pair_k); ps = np.concatenate(pair_s)
            pc = np.concatenate(pair_coef); pv = np.concatenate(pair_val)
            if pk.size == 0:
                break
            i = int(np.argmax(pv))
            lam = float(pv[i])
            if lam <= 0:
                break
            j = int(pk[i]); s = int(ps[i]); cj = float(pc[i])
            others = np.delete(np.arange(pk.size), i)
            m = others.size
            blocks_rows, blocks_cols, blocks_vals = [], [], []
            # c(j,s)' y - c(k,s')' y >= 0
            r_ = np.repeat(np.arange(m), 2)
            c_ = np.empty(2 * m, int); v_ = np.empty(2 * m)
            c_[0::2] = j; v_[0::2] = cj
            c_[1::2] = pk[others]; v_[1::2] = -pc[others]
            blocks_rows.append(r_); blocks_cols.append(c_); blocks_vals.append(v_)
            # c(j,s)' y >= 0
            blocks_rows.append(np.array([m])); blocks_cols.append(np.array([j]))
            blocks_vals.append(np.array([cj]))
            # s_k r_k' y >= 0 for the candidates whose competing sign was chosen by the data
            kb = cand[both]
            nb = kb.size
            Mt = sparse_rows(m + 2 + nb, p,
                             np.concatenate(blocks_rows + [np.array([m + 1]), m + 2 + np.arange(nb)]),
                             np.concatenate(blocks_cols + [np.array([j]), kb]),
                             np.concatenate(blocks_vals + [np.array([-cj]), sk[both]]))
            # row m+1: c_prev' y - c(j,s)' y >= 0 (the part on c_prev is added separately)
            tp, jp, cp = prev_c
            Mp = sparse_rows(m + 2 + nb, p, [m + 1], [jp], [cp])
            cons.add([(t, Mt), (tp, Mp)], np.zeros(m + 2 + nb), step + 1)
            prev_c = (t, j, cj)
        active.append(j); signs.append(s); lams.append(lam)
        rnorms.append(math.sqrt(basis.rn2[j]))
        in_active[j] = True
        q = basis.add(j)
        ry = ry - basis.W[:, basis.t - 1] * float(q @ yc)
    complete = len(active) == min(p, n - (1 if intercept else 0)) or not np.any(
        (~in_active) & (basis.rn2 > _EPS * basis.xx))
    if kind == "lar":
        next_lam = 0.0 if complete else _next_knot(basis, active, signs, ry, in_active)
    return StepwisePath(
        procedure="forward stepwise" if kind == "fs" else "least angle regression",
        variables=tuple(names), action=_ro(active, int), sign=_ro(signs, int),
        df=_ro(np.arange(1, len(active) + 1), int),
        lam=_ro(lams if kind == "lar" else np.full(len(active), np.nan)),
        next_lam=float(next_lam), completepath=bool(complete), intercept=bool(intercept),
        normalize=bool(normalize), column_means=_ro(xm), column_norms=_ro(norms),
        x_std=Xn, y_centred=yc, constraints=cons, residual_norms=_ro(rnorms))


def _next_knot(basis, active, signs, ry, in_active):
    t = basis.t
    cand = np.nonzero((~in_active) & (basis.rn2 > _EPS * basis.xx))[0]
    if cand.size == 0:
        return 0.0
    A = np.array(active)
    w = np.linalg.solve(basis.W[A, :t], np.array(signs, float))
    d = basis.W[:, :t] @ w
    best = 0.0
    for sv in (1.0, -1.0):
        den = sv - d[cand]
        ok = sv * den > _EPS
        if ok.any():
            best = max(best, float(np.max(ry[cand][ok] / den[ok])))
    return best


# --------------------------------------------------------------------------------------------
# inference
# --------------------------------------------------------------------------------------------

def fs_inference(path: StepwisePath, *, sigma: float | None = None, alpha: float = 0.1,
                 k: int | None = None, type: str = "active", mult: float = 2.0,
                 ntimes: int = 2, alternative: str = ONE_SIDED,
                 gridrange=(-100.0, 100.0)) -> SelectiveInferenceResult:
    r"""Selective inference after forward stepwise (Tibshirani et al. 2016, Section 3 and 5).

    Parameters
    ----------
    path : StepwisePath
        From :func:`forward_stepwise`.
    sigma : float, optional
        Noise sd. Default: full-model residual standard error if n >= 2p, else sd(y)
        (R selectiveInference's rule, applied to the centred, normalised data).
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

    Returns
    -------
    SelectiveInferenceResult
        ``khat``: ForwardStop estimate (G'Sell et al. 2016) for ``"active"``, the AIC size
        for ``"aic"``.
    """
    if not isinstance(path, StepwisePath) or path.procedure != "forward stepwise":
        raise TypeError(f"`path` must be a StepwisePath from forward_stepwise(); got "
                        f"{getattr(path, 'procedure', path.__class__.__name__)!r}.")
    return _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange)


def lar_inference(path: StepwisePath, *, sigma: float | None = None, alpha: float = 0.1,
                  k: int | None = None, type: str = "active", mult: float = 2.0,
                  ntimes: int = 2, alternative: str = ONE_SIDED,
                  gridrange=(-100.0, 100.0)) -> SelectiveInferenceResult:
    r"""Selective inference after least angle regression (Tibshirani et al. 2016, Section 4-5).

    Same parameters as :func:`fs_inference`. With ``type="active"`` it also reports

    * ``pvalue_spacing``: the spacing test (Section 5): the knot
      :math:`\lambda_t = c_t^\top y` with sd :math:`\sigma\|c_t\|` truncated to
      :math:`[\lambda_{t+1}, \lambda_{t-1}]` (:math:`\lambda_0 = \infty`, and
      :math:`\lambda_{t+1} = 0` after the last step of a complete path). This is the value
      R selectiveInference 1.2.5 returns as ``pv.modspac`` (and, in all but one of the
      reference entries, as ``pv.spacing``);
    * ``pvalue_modspac``: the same statistic with the upper limit replaced by the polyhedral
      :math:`V^+` of :math:`c_t` given the first t steps (an exact test of the knot);
    * ``pvalue_covtest``: the covariance test :math:`\exp(-T_t)`,
      :math:`T_t = \lambda_t(\lambda_t-\lambda_{t+1})/(\sigma^2\|c_t\|^2)` (Lockhart,
      Taylor, Tibshirani and Tibshirani 2014); R's ``1 - pexp(T)`` is 0 once it underflows,
      ours is not.

    All are computed from log tails, so they stay accurate far in the tail.
    """
    if not isinstance(path, StepwisePath) or path.procedure != "least angle regression":
        raise TypeError(f"`path` must be a StepwisePath from least_angle_regression(); got "
                        f"{getattr(path, 'procedure', path.__class__.__name__)!r}.")
    return _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange)


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


def _inference(path, sigma, alpha, k, type, mult, ntimes, alternative, gridrange):
    alpha = check_alpha(alpha)
    type = check_choice("type", type, ("active", "all", "aic"))
    alternative = check_choice("alternative", alternative, (ONE_SIDED, TWO_SIDED))
    bound = _check_gridrange(gridrange)
    mult = check_positive_real("mult", mult)
    ntimes = check_int("ntimes", ntimes, low=1)
    T = path.n_steps
    if T == 0:
        raise ValueError("`path` has no steps; nothing to test.")
    k = T if k is None else check_int("k", k, low=1, high=T)
    Xn, yc = path.x_std, path.y_centred
    if sigma is None:
        sigma, rule = sigma_from_rule(Xn, yc, path.intercept)
    else:
        sigma = check_positive_real("sigma", sigma)
        rule = "supplied by the caller"
    # extra (AIC) rows go to a shallow copy, so the path object is never modified
    cons = copy.copy(path.constraints)
    cons.blocks = list(path.constraints.blocks)
    khat = None
    if type == "aic":
        khat, _ = _aic_event(path, cons, k, sigma, mult, ntimes)
        if khat == 0:
            raise ValueError("AIC chose the empty model (khat = 0); nothing to test.")
    Gy_all = cons.apply(yc, max_step=k, extra=True)
    u_all = cons.offsets(max_step=k, extra=True)
    steps_of_rows = np.concatenate([np.full(blk[1].shape[0], blk[2]) for blk in
                                    cons._select(k, True)]) if cons.blocks else np.zeros(0)
    if type == "active":
        tests = [(t, [t - 1]) for t in range(1, k + 1)]      # (model size, which coef)
    elif type == "all":
        tests = [(k, list(range(k)))]
    else:
        tests = [(khat, list(range(khat)))]
    contrasts, signs, row_masks, vars_ = [], [], [], []
    for msize, which in tests:
        A = path.action[:msize]
        XA = Xn[:, A]
        P = np.linalg.pinv(XA)
        for w in which:
            j = int(path.action[w])
            eta = P[w] / path.column_norms[j]
            contrasts.append(eta)
            signs.append(int(path.sign[w]))
            vars_.append(j)
            if type == "active":
                row_masks.append((steps_of_rows <= msize) & (steps_of_rows > 0))
            else:
                row_masks.append(np.ones(steps_of_rows.size, bool))
    m = len(contrasts)
    est = np.empty(m); sd = np.empty(m); vlo = np.empty(m); vup = np.empty(m)
    pv = np.empty(m); ci = np.empty((m, 2)); tails = np.empty((m, 2))
    for i in range(m):
        eta = signs[i] * contrasts[i]
        ss = float(eta @ eta)
        c = eta / ss
        stat = float(eta @ yc)
        Gc = cons.apply(c, max_step=k, extra=True)
        msk = row_masks[i]
        lo_, hi_ = _limits_from(Gy_all[msk], Gc[msk], u_all[msk], stat)
        s_d = sigma * math.sqrt(ss)
        est[i] = signs[i] * stat; sd[i] = s_d; vlo[i] = lo_; vup[i] = hi_
        pv[i], ci[i], tails[i] = pivot_summary(stat, s_d, lo_, hi_, signs[i], alpha=alpha, bound=bound,
                                               alternative=alternative)
    extra = {"sigma_rule": rule}
    spacing = modspac = covtest = None
    if type == "active":
        khat = forward_stop(pv, alpha)
        if path.procedure == "least angle regression":
            spacing, modspac, covtest, knot_sd = _lar_tests(path, k, sigma, Gy_all,
                                                            u_all, steps_of_rows)
            extra["knot_sd"] = _ro(knot_sd)
    A_rows = None
    b_rows = None
    nbytes = cons.nbytes
    from scipy.stats import norm
    zst = np.array(signs) * est / sd
    naive = norm.sf(zst) if alternative == ONE_SIDED else 2 * norm.sf(np.abs(zst))
    vmat = np.array(contrasts)  # estimate = vmat @ y (R's fsInf vmat is sign * vmat)
    return SelectiveInferenceResult(
        procedure=path.procedure, type=type, variables=tuple(path.variables[j] for j in vars_),
        index=_ro(vars_, int), sign=_ro(signs, int), estimate=_ro(est), sd=_ro(sd),
        vlo=_ro(vlo), vup=_ro(vup), pvalue=_ro(pv), ci=_ro(ci), tailarea=_ro(tails),
        alpha=alpha, sigma=float(sigma), alternative=alternative, pvalue_naive=_ro(naive),
        pvalue_spacing=None if spacing is None else _ro(spacing),
        pvalue_modspac=None if modspac is None else _ro(modspac),
        pvalue_covtest=None if covtest is None else _ro(covtest),
        k=k, khat=khat, sigma_rule=rule, contrasts=_ro(vmat), constraints_A=A_rows,
        constraints_b=b_rows, extra={**extra, "constraint_bytes_compact": nbytes,
                                     "constraint_bytes_dense": cons.dense_nbytes(k)},
        method=f"Tibshirani, Taylor, Lockhart & Tibshirani (2016), {path.procedure}, type={type}")


def _lar_tests(path, k, sigma, Gy_all, u_all, steps_of_rows):
    """Spacing, modified spacing and covariance-test p-values for the first k LAR steps."""
    cons = path.constraints
    lam = np.concatenate([path.lam, [path.next_lam]])
    sp_ = np.empty(k); ms = np.empty(k); cv = np.empty(k); sds = np.empty(k)
    for t in range(k):
        # c_t = coef * r_j^{(t)}: the knot vector, lam_t = c_t' y
        j = int(path.action[t])
        c_vec = _knot_vector(path, t)
        nrm = float(np.linalg.norm(c_vec))
        s_d = sigma * nrm
        sds[t] = s_d
        lam_t = lam[t]
        lam_next = lam[t + 1]
        lam_prev = lam[t - 1] if t > 0 else math.inf
        sp_[t] = math.exp(float(_truncnorm.log_sf_truncated(lam_t / s_d, lam_next / s_d,
                                                            lam_prev / s_d)))
        msk = (steps_of_rows <= t + 1) & (steps_of_rows > 0)
        cc = c_vec / nrm ** 2
        Gc = cons.apply(cc, max_step=k, extra=True)
        _, vup = _limits_from(Gy_all[msk], Gc[msk], u_all[msk], float(c_vec @ path.y_centred))
        ms[t] = math.exp(float(_truncnorm.log_sf_truncated(lam_t / s_d, lam_next / s_d,
                                                            vup / s_d)))
        T_ = lam_t * (lam_t - lam_next) / s_d ** 2
        cv[t] = math.exp(-T_)
        del j
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
