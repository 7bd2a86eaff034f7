r"""A glmnet-compatible Gaussian lasso path (private): the same lambda grid, stopping rules and
interpolation as R's glmnet 4.1, with every solution solved exactly.

R's ``glmnet(x, y)`` (family gaussian, ``alpha = 1``) minimises, at each lambda of its grid,

.. math:: \frac{1}{2n}\|y - b_0 - X\beta\|^2 + \lambda \sum_j w_j |\beta_j|,

with :math:`w_j` the population standard deviation of column j when ``standardize=TRUE`` (1
otherwise). The grid is :math:`\lambda_m = \lambda_{\max} r^{(m-1)/(L-1)}`, ``L = nlambda =
100``, ``r = lambda.min.ratio`` (0.01 when n < p, else 1e-4) and :math:`\lambda_{\max} =
\max_j |\tilde x_j^\top \tilde y| / (n w_j)` (tilde: centred when there is an intercept), the
first value being reported as :math:`\exp(2\log\lambda_2 - \log\lambda_3)` (glmnet's
``fix.lam``). The path stops early, from the fifth value on, once the fraction of deviance
explained rises by less than ``fdev = 1e-5`` of itself or exceeds ``devmax = 0.999``
(``glmnet.control()``). ``predict(fit, s)`` interpolates the coefficients linearly in lambda
between grid values (``lambda.interp``), clamping s to the grid's range.

Here each solution is the exact minimiser, where glmnet stops at ``thresh = 1e-7``; the two
agree to glmnet's convergence tolerance. The solver (:func:`_grid_solutions`) walks down the
grid with an active set and its signs: at each lambda it solves the KKT equations of the set,
:math:`g_E = (Z_E^\top Z_E)^{-1}(Z_E^\top y - n\lambda s)` (a Cholesky factor updated as
columns enter or leave), drops a column whose coefficient has the wrong sign, adds the columns
that violate :math:`|z_j^\top(y - Zg)| \le n\lambda`, and stops when neither happens: the
result then satisfies the KKT conditions, which characterise the lasso solution (unique when
:math:`Z_E` has full column rank). Where this does not settle (a degenerate path, or a
singular :math:`Z_E^\top Z_E` when p >= n), that lambda is solved by coordinate descent and
the KKT equations of the support it finds. When n > p everything runs on the Gram matrix, and
the training sets of a cross-validation get theirs by subtracting the held-out rows'
cross-products from the full data's (:func:`cv_lasso_paths`), as glmnet's covariance updates
avoid recomputing inner products.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

FDEV = 1e-5      # glmnet.control()$fdev
DEVMAX = 0.999   # glmnet.control()$devmax
MNLAM = 5        # glmnet.control()$mnlam
_KKT_RTOL = 1e-10   # a column enters when |z_j'r| > n lambda (1 + _KKT_RTOL)
_MAX_ROUNDS = 30    # active-set rounds at one lambda before coordinate descent takes over


@dataclass(frozen=True)
class LassoPath:
    """Solutions on a glmnet lambda grid: ``lam`` (L,), ``a0`` (L,), ``beta`` (L, p), ``dev_ratio``."""

    lam: np.ndarray
    a0: np.ndarray
    beta: np.ndarray
    dev_ratio: np.ndarray

    def coef_at(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Intercepts (len(s),) and coefficients (len(s), p) at ``s``, as glmnet's ``predict``."""
        left, right, frac = lambda_interp(self.lam, np.asarray(s, dtype=float))
        a0 = self.a0[left] * frac + self.a0[right] * (1 - frac)
        beta = self.beta[left] * frac[:, None] + self.beta[right] * (1 - frac)[:, None]
        return a0, beta

    def predict(self, X: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Fitted values (n, len(s)) at ``s``."""
        a0, beta = self.coef_at(s)
        return a0[None, :] + X @ beta.T


def lambda_interp(lam: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """glmnet's ``lambda.interp``: 0-based left / right grid positions and the weight of left."""
    k = lam.size
    if k == 1:
        z = np.zeros(s.size, dtype=int)
        return z, z, np.ones(s.size)
    sfrac = (lam[0] - s) / (lam[0] - lam[k - 1])
    lam_n = (lam[0] - lam) / (lam[0] - lam[k - 1])
    sfrac = np.clip(sfrac, lam_n.min(), lam_n.max())
    coord = np.interp(sfrac, lam_n, np.arange(1, k + 1, dtype=float))  # lam_n increases
    left = np.floor(coord).astype(int) - 1
    right = np.ceil(coord).astype(int) - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = (sfrac - lam_n[right]) / (lam_n[left] - lam_n[right])
    frac = np.where(left == right, 1.0, frac)
    frac = np.where(np.abs(lam_n[left] - lam_n[right]) < np.finfo(float).eps, 1.0, frac)
    return left, right, frac


def default_min_ratio(n: int, p: int) -> float:
    return 0.01 if n < p else 1e-4


# ---------------------------------------------------------------- the problem of one set of rows


@dataclass(frozen=True)
class _Problem:
    """The standardised problem of one set of rows: ``zy = Z'yc``, ``yy = yc'yc``, and either the
    Gram matrix ``gram = Z'Z`` (n > p) or ``Z`` itself; ``xm``, ``ym``, ``w`` map the solutions
    back to the columns of X; ``rows`` gives (X, y) of these rows for the fallbacks."""

    n: int
    zy: np.ndarray
    yy: float
    xm: np.ndarray
    ym: float
    w: np.ndarray
    gram: np.ndarray | None
    Z: np.ndarray | None
    rows: object

    def design(self) -> tuple[np.ndarray, np.ndarray]:
        """Z and yc, built from the rows when only the Gram matrix is kept."""
        X, y = self.rows()
        return np.asarray((X - self.xm) / self.w, dtype=float, order="F"), y - self.ym

    def cross(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Z_a' Z_b."""
        if self.gram is not None:
            return self.gram[np.ix_(a, b)]
        return self.Z[:, a].T @ self.Z[:, b]

    def times(self, g: np.ndarray, act: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """(Z'Z g)[rows] (all rows by default) for g (p,) zero off ``act``."""
        if self.gram is not None:
            # the Gram matrix is symmetric: (Z'Z g)' = g_A' (Z'Z)[A, :], a k x p product on a
            # contiguous block of rows, instead of copying the (p - k) x p rows asked for
            out = g[act] @ self.gram[act]
            return out if rows is None else out[rows]
        Zr = self.Z if rows is None else self.Z[:, rows]
        return Zr.T @ (self.Z[:, act] @ g[act])


def _constant_column_error(j: int) -> ValueError:
    return ValueError(f"`X` column {j} is constant; the glmnet path cannot standardise it.")


def _problem_from_rows(X, y, intercept, standardize, keep_design) -> _Problem:
    n, p = X.shape
    xm = X.mean(0) if intercept else np.zeros(p)
    ym = float(y.mean()) if intercept else 0.0
    w = np.sqrt(np.mean((X - X.mean(0)) ** 2, axis=0)) if standardize else np.ones(p)
    if np.any(w == 0):
        raise _constant_column_error(int(np.nonzero(w == 0)[0][0]))
    Z = np.array((X - xm) / w, dtype=float, order="F")
    yc = np.ascontiguousarray(y - ym, dtype=float)
    gram = None if keep_design else Z.T @ Z
    return _Problem(n=n, zy=Z.T @ yc, yy=float(yc @ yc), xm=xm, ym=ym, w=w, gram=gram,
                    Z=Z if keep_design else None, rows=lambda: (X, y))


@dataclass(frozen=True)
class _Sums:
    """Sums over a set of rows of X0 = X - mu and y0 = y - nu (mu, nu: the full data's means, so
    that the centring of a subset is a small correction): count, X0'1, y0'1, X0'X0, X0'y0, y0'y0."""

    n: int
    sx: np.ndarray
    sy: float
    xx: np.ndarray
    xy: np.ndarray
    yy: float

    @classmethod
    def of(cls, X0, y0) -> _Sums:
        return cls(X0.shape[0], X0.sum(0), float(y0.sum()), X0.T @ X0, X0.T @ y0, float(y0 @ y0))

    def __sub__(self, other: _Sums) -> _Sums:
        return _Sums(self.n - other.n, self.sx - other.sx, self.sy - other.sy, self.xx - other.xx,
                     self.xy - other.xy, self.yy - other.yy)


def _problem_from_sums(s: _Sums, mu, nu, intercept, standardize, rows) -> _Problem:
    """The problem of the rows summed in ``s``: centred cross-products ``xx - n d d'`` (d the
    rows' mean of X0), plus ``n xm xm'`` without an intercept (the raw cross-products)."""
    n = s.n
    d, e = s.sx / n, s.sy / n
    xm_raw, ym_raw = mu + d, nu + e
    cxx = s.xx - n * np.outer(d, d)
    var = np.diag(cxx) / n
    cxy = s.xy - n * d * e
    cyy = s.yy - n * e * e
    shaky = var <= 1e-8 * np.diag(s.xx) / n   # constant, or too close to it for the subtraction
    if np.any(shaky) or cyy <= 1e-8 * s.yy:
        X, y = rows()
        j = np.nonzero(shaky)[0]
        var[j] = np.mean((X[:, j] - X[:, j].mean(0)) ** 2, axis=0)
        if standardize and np.any(var == 0):
            raise _constant_column_error(int(np.nonzero(var == 0)[0][0]))
        cyy = float(np.sum((y - y.mean()) ** 2))
    w = np.sqrt(var) if standardize else np.ones(d.size)
    if intercept:
        xm, ym = xm_raw, ym_raw
    else:
        xm, ym = np.zeros(d.size), 0.0
        cxx = cxx + n * np.outer(xm_raw, xm_raw)
        cxy = cxy + n * xm_raw * ym_raw
        cyy = cyy + n * ym_raw * ym_raw
    gram = cxx / np.outer(w, w)
    return _Problem(n=n, zy=cxy / w, yy=float(cyy), xm=xm, ym=ym, w=w, gram=gram, Z=None, rows=rows)


# ---------------------------------------------------------------- paths


def lasso_path(X: np.ndarray, y: np.ndarray, *, intercept: bool = True, standardize: bool = True,
               nlambda: int = 100, lambda_min_ratio: float | None = None) -> LassoPath:
    """The path of ``glmnet(X, y, intercept=intercept, standardize=standardize)`` (module docstring)."""
    n, p = X.shape
    prob = _problem_from_rows(X, y, intercept, standardize, keep_design=n <= p)
    return _path(prob, p, nlambda, lambda_min_ratio)


def cv_lasso_paths(X: np.ndarray, y: np.ndarray, fold: np.ndarray, labels, *, intercept: bool = True,
                   standardize: bool = True) -> tuple[LassoPath, list[LassoPath]]:
    """The path on all rows and on the rows outside each fold (``fold != label``), as
    ``cv.glmnet``. When n > p the training sets' Gram matrices are the full one minus the
    held-out rows' (one pass over the data in all)."""
    n, p = X.shape
    if n <= p:
        return (lasso_path(X, y, intercept=intercept, standardize=standardize),
                [lasso_path(X[fold != f], y[fold != f], intercept=intercept, standardize=standardize)
                 for f in labels])
    mu, nu = X.mean(0), float(y.mean())
    X0, y0 = X - mu, y - nu
    total = _Sums.of(X0, y0)
    full = _path(_problem_from_sums(total, mu, nu, intercept, standardize, lambda: (X, y)), p)
    paths = []
    for f in labels:
        test = fold == f
        held = _Sums.of(X0[test], y0[test])
        prob = _problem_from_sums(total - held, mu, nu, intercept, standardize,
                                  lambda t=~test: (X[t], y[t]))
        paths.append(_path(prob, p))
    return full, paths


def _path(prob: _Problem, p: int, nlambda: int = 100, lambda_min_ratio: float | None = None) -> LassoPath:
    n = prob.n
    if prob.yy == 0:
        raise ValueError("`y` is constant; the glmnet path is not defined.")
    ratio = default_min_ratio(n, p) if lambda_min_ratio is None else float(lambda_min_ratio)
    lam_max = float(np.max(np.abs(prob.zy))) / n
    lams = lam_max * (ratio ** (1.0 / (nlambda - 1))) ** np.arange(nlambda)
    gammas, devs = _grid_solutions(prob, lams)
    L = devs.size
    lam_out = lams[:L].copy()
    if L > 2:  # glmnet's fix.lam
        ll = np.log(lam_out)
        lam_out[0] = math.exp(2 * ll[1] - ll[2])
    beta = gammas / prob.w
    a0 = prob.ym - beta @ prob.xm
    return LassoPath(lam=lam_out, a0=a0, beta=beta, dev_ratio=devs)


def _stops(devs: list[float], m: int) -> bool:
    """glmnet keeps grid value m and stops there: from the 5th value on, when the deviance ratio
    rises by less than FDEV of itself or exceeds DEVMAX."""
    return m >= MNLAM - 1 and not (devs[m] - devs[m - 1] >= FDEV * devs[m] and devs[m] <= DEVMAX)


# ---------------------------------------------------------------- the solver


class _ActiveSet:
    """Ordered active columns, their signs and the lower Cholesky factor L of Z_A'Z_A.

    L is the leading k x k block of a buffer whose remaining diagonal is 1 and off-diagonal 0,
    so that the triangular solves run on the whole (contiguous) buffer with zero right-hand
    sides beyond k, and columns enter or leave without copying L; the buffer grows by a
    quarter when full."""

    def __init__(self, prob: _Problem):
        self.prob = prob
        self.act = np.zeros(0, dtype=np.intp)
        self.sgn = np.zeros(0)
        self.buf = np.eye(min(16, prob.zy.size), order="F")

    def _padded(self, rows: np.ndarray) -> np.ndarray:
        out = np.zeros((self.buf.shape[0],) + rows.shape[1:])
        out[: rows.shape[0]] = rows
        return out

    def solve(self, t: float) -> np.ndarray:
        """g_A = (Z_A'Z_A)^{-1}(Z_A'y - t s_A)."""
        k = self.act.size
        rhs = self.prob.zy[self.act] - t * self.sgn
        if k == 0:
            return rhs
        x, _ = lapack.dpotrs(self.buf, self._padded(rhs), lower=1)
        return x[:k]

    def add(self, new: np.ndarray, signs: np.ndarray) -> bool:
        """Append columns; False (and unchanged) when Z_A'Z_A would be singular."""
        k, b = self.act.size, new.size
        cbb = self.prob.cross(new, new)
        scale = math.sqrt(float(np.max(np.diag(cbb))))
        if k:
            w, _ = lapack.dtrtrs(self.buf, self._padded(self.prob.cross(self.act, new)), lower=1)
            w = w[:k]
            cbb = cbb - w.T @ w
        lb, info = lapack.dpotrf(cbb, lower=1, clean=1)
        if info != 0 or not np.min(np.diag(lb)) > 1e-6 * scale:   # (nearly) collinear columns
            return False
        cap = self.buf.shape[0]
        if k + b > cap:
            grown = np.eye(min(self.prob.zy.size, max(k + b, cap + cap // 4)), order="F")
            grown[:k, :k] = self.buf[:k, :k]
            self.buf = grown
        self.buf[k:k + b, k:k + b] = lb
        if k:
            self.buf[k:k + b, :k] = w.T
        self.act, self.sgn = np.concatenate([self.act, new]), np.concatenate([self.sgn, signs])
        return True

    def drop(self, pos: np.ndarray) -> bool:
        """Remove the columns at positions ``pos``: rows after the first are re-factored from
        their part of the old factor (L_T L_T' is Z_T'Z_T minus the kept leading block's share)."""
        i0, k_old = int(pos.min()), self.act.size
        keep = np.setdiff1d(np.arange(k_old), pos)
        tail = keep[keep > i0]
        k = keep.size
        buf = self.buf
        if tail.size:
            m = buf[tail, i0:k_old]
            lt, info = lapack.dpotrf(m @ m.T, lower=1, clean=1)
            if info != 0:
                return False
            buf[i0:k, :i0] = buf[tail, :i0]
            buf[i0:k, i0:k] = lt
        buf[k:k_old, :k_old] = 0.0
        buf[:k_old, k:k_old] = 0.0
        buf[np.arange(k, k_old), np.arange(k, k_old)] = 1.0
        self.act, self.sgn = self.act[keep], self.sgn[keep]
        return True

    def reset(self, g: np.ndarray) -> bool:
        """Rebuild from a solution's support and signs."""
        self.act, self.sgn = np.zeros(0, dtype=np.intp), np.zeros(0)
        self.buf = np.eye(self.buf.shape[0], order="F")
        on = np.nonzero(g)[0]
        return on.size == 0 or self.add(on, np.sign(g[on]))


def _grid_solutions(prob: _Problem, lams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact solutions (L, p) and deviance ratios (L,) down the grid up to glmnet's stop."""
    n, p, zy = prob.n, prob.zy.size, prob.zy
    state = _ActiveSet(prob)
    usable = True
    gammas, grads, devs = [np.zeros(p)], [zy], [0.0]
    for m in range(1, lams.size):
        t = n * float(lams[m])
        solved = None
        if usable:
            # start from the previous active set, changed where the last two solutions, continued
            # linearly in lambda, say it changes (a guess only: the rounds check the KKT conditions)
            r = 0.0 if m < 2 else (lams[m - 1] - lams[m]) / (lams[m - 2] - lams[m - 1])
            g_guess = gammas[-1] + r * (gammas[-1] - gammas[-2]) if m >= 2 else gammas[-1]
            grad_guess = grads[-1] + r * (grads[-1] - grads[-2]) if m >= 2 else grads[-1]
            solved = _settle(state, t, g_guess, grad_guess)
        if solved is None:
            g = _fallback(prob, float(lams[m]), gammas[-1])
            usable = state.reset(g)
            grad = zy - prob.times(g, np.nonzero(g)[0])
        else:
            g, grad = solved
        rss = prob.yy - g @ zy - g @ grad            # ||yc - Zg||^2 = yy - 2g'zy + g'Z'Zg
        gammas.append(g)
        grads.append(grad)
        devs.append(1.0 - rss / prob.yy)
        if _stops(devs, m):
            break
    return np.array(gammas), np.array(devs)


def _settle(state: _ActiveSet, t: float, g_guess: np.ndarray, grad_guess: np.ndarray,
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """The solution at ``t = n lambda`` and its gradient Z'(yc - Zg), from the active set of
    the previous lambda updated by a guess; None when the rounds do not settle or Z_A'Z_A is
    singular."""
    prob = state.prob
    p = prob.zy.size
    leave = np.nonzero(np.sign(g_guess[state.act]) != state.sgn)[0]
    if leave.size and not state.drop(leave):
        return None
    excess = np.abs(grad_guess) - t
    excess[state.act] = -np.inf
    enter = np.nonzero(excess > 0)[0]
    if enter.size:
        state.add(enter, np.sign(grad_guess[enter]))   # refused when singular: the rounds decide
    for _ in range(_MAX_ROUNDS):
        g_act = state.solve(t)
        wrong = np.nonzero(np.sign(g_act) != state.sgn)[0]
        if wrong.size:
            if not state.drop(wrong):
                return None
            continue
        g = np.zeros(p)
        g[state.act] = g_act
        off = np.ones(p, dtype=bool)
        off[state.act] = False
        off = np.nonzero(off)[0]
        grad = np.empty(p)
        grad[state.act] = t * state.sgn         # the KKT equations the solve imposed
        grad[off] = prob.zy[off] - prob.times(g, state.act, off)
        new = off[np.abs(grad[off]) > t * (1 + _KKT_RTOL)]
        if new.size == 0:
            return g, grad
        if not state.add(new, np.sign(grad[new])):
            return None
    return None


def _fallback(prob: _Problem, lam: float, start: np.ndarray) -> np.ndarray:
    Z, yc = (prob.Z, prob.rows()[1] - prob.ym) if prob.Z is not None else prob.design()
    return _coordinate_descent(Z, np.ascontiguousarray(yc, dtype=float), lam, start)


def _coordinate_descent(Z, yc, lam, start):
    from sklearn.linear_model import Lasso

    model = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=1_000_000, selection="cyclic",
                  warm_start=True, copy_X=True, precompute=False)
    model.coef_ = np.array(start, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(np.asfortranarray(Z), yc)
    return _polish(Z, yc, np.asarray(model.coef_, dtype=float).copy(), Z.shape[0] * lam)


def _polish(Z, yc, g, lam_n):
    """Solve the KKT equations of the support found exactly; keep ``g`` if the signs change
    or the solution then violates the KKT conditions."""
    act = np.nonzero(g)[0]
    if act.size == 0 or act.size >= Z.shape[0]:
        return g
    s = np.sign(g[act])
    ZE = Z[:, act]
    try:
        gE = np.linalg.solve(ZE.T @ ZE, ZE.T @ yc - lam_n * s)
    except np.linalg.LinAlgError:
        return g
    if not np.all(np.sign(gE) == s):
        return g
    out = np.zeros_like(g)
    out[act] = gE
    grad = Z.T @ (yc - Z @ out)
    if np.max(np.abs(grad)) > lam_n * (1 + 1e-9):
        return g
    return out
