r"""Forward stepwise (FS) and least angle regression (LAR) paths and their selection events.

Tibshirani, Taylor, Lockhart and Tibshirani (2016), "Exact post-selection inference for
sequential regression procedures", JASA 111(514), 600-620 (arXiv:1401.3889): the event that FS
or LAR takes a given sequence of variables and signs in its first k steps is a polyhedron
:math:`\{\Gamma y \ge u\}` (Section 3: FS, Section 4 / Proposition 2: LAR). This module
builds the paths and stores those events compactly; the inference on them
(:func:`fs_inference`, :func:`lar_inference`) is in :mod:`.stepwise_inference`.

Conventions follow R selectiveInference: y and the columns are centred (``intercept=True``)
and the columns scaled to unit norm (``normalize=True``); coefficients are reported on the
scale of the original columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._checks import check_int, design_and_response
from ._constraints import StepConstraints, sparse_rows
from .results import _ro

__all__ = ["StepwisePath", "forward_stepwise", "least_angle_regression"]

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


def _prepare(X, y, intercept, normalize, names=None):
    n, p = X.shape
    xm = X.mean(0) if intercept else np.zeros(p)
    Xc = X - xm
    yc = y - (y.mean() if intercept else 0.0)
    norms = np.sqrt(np.sum(Xc ** 2, axis=0))
    if normalize:
        if np.any(norms == 0):
            j = int(np.nonzero(norms == 0)[0][0])
            label = f"{names[j]!r} (position {j})" if names is not None else f"{j}"
            what = "constant" if intercept else "all zero"
            raise ValueError(f"`X` column {label} is {what}; it cannot be normalised. Remove it, or pass "
                             f"normalize=False.")
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
    Xn, yc, xm, norms = _prepare(X, y, intercept, normalize, names)
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
            j = int(cand[i])
            s = 1 if score[i] >= 0 else -1
            others = np.delete(np.arange(cand.size), i)
            m = 2 * others.size
            # the entry sign itself: s x~_j' y >= 0 (implied by the rows below unless j is
            # the last candidate)
            cons.add([(t, sparse_rows(1, p, [0], [j], [s / rn[i]]))], np.zeros(1), step + 1)
            if m:
                rows = np.repeat(np.arange(m), 2)
                cols = np.empty(2 * m, int)
                vals = np.empty(2 * m)
                cols[0::2] = j
                vals[0::2] = s / rn[i]
                oc, orr = cand[others], rn[others]
                cols[1::4], vals[1::4] = oc, -1.0 / orr     # s x_j - x_k >= 0
                cols[3::4], vals[3::4] = oc, 1.0 / orr      # s x_j + x_k >= 0
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
                pair_k.append(kk)
                pair_s.append(np.full(kk.size, sv))
                pair_coef.append(1.0 / den[ok])
                pair_val.append(ry[kk] / den[ok])
            pk, ps = np.concatenate(pair_k), np.concatenate(pair_s)
            pc, pv = np.concatenate(pair_coef), np.concatenate(pair_val)
            if pk.size == 0:
                break
            i = int(np.argmax(pv))
            lam = float(pv[i])
            if lam <= 0:
                break
            j, s, cj = int(pk[i]), int(ps[i]), float(pc[i])
            others = np.delete(np.arange(pk.size), i)
            m = others.size
            blocks_rows, blocks_cols, blocks_vals = [], [], []
            # c(j,s)' y - c(k,s')' y >= 0
            r_ = np.repeat(np.arange(m), 2)
            c_ = np.empty(2 * m, int)
            v_ = np.empty(2 * m)
            c_[0::2], v_[0::2] = j, cj
            c_[1::2], v_[1::2] = pk[others], -pc[others]
            blocks_rows.append(r_)
            blocks_cols.append(c_)
            blocks_vals.append(v_)
            # c(j,s)' y >= 0
            blocks_rows.append(np.array([m]))
            blocks_cols.append(np.array([j]))
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
        active.append(j)
        signs.append(s)
        lams.append(lam)
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


def __getattr__(name: str):
    # fs_inference and lar_inference lived here before the module was split
    if name in ("fs_inference", "lar_inference"):
        from . import stepwise_inference

        return getattr(stepwise_inference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
