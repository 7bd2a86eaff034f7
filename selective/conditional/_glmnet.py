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

Here each solution is the exact minimiser (from the homotopy path and the KKT equations of its
active set, see :class:`_Homotopy`), where glmnet stops at ``thresh = 1e-7``; the two
agree to glmnet's convergence tolerance.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

FDEV = 1e-5      # glmnet.control()$fdev
DEVMAX = 0.999   # glmnet.control()$devmax
MNLAM = 5        # glmnet.control()$mnlam


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


def lasso_path(X: np.ndarray, y: np.ndarray, *, intercept: bool = True, standardize: bool = True,
               nlambda: int = 100, lambda_min_ratio: float | None = None) -> LassoPath:
    """The path of ``glmnet(X, y, intercept=intercept, standardize=standardize)`` (module docstring)."""
    n, p = X.shape
    xm = X.mean(0) if intercept else np.zeros(p)
    ym = float(y.mean()) if intercept else 0.0
    w = np.sqrt(np.mean((X - X.mean(0)) ** 2, axis=0)) if standardize else np.ones(p)
    if np.any(w == 0):
        j = int(np.nonzero(w == 0)[0][0])
        raise ValueError(f"`X` column {j} is constant; the glmnet path cannot standardise it.")
    Z = np.array((X - xm) / w, dtype=float, order="F")
    yc = np.ascontiguousarray(y - ym, dtype=float)
    nulldev = float(yc @ yc)
    if nulldev == 0:
        raise ValueError("`y` is constant; the glmnet path is not defined.")
    ratio = default_min_ratio(n, p) if lambda_min_ratio is None else float(lambda_min_ratio)
    lam_max = float(np.max(np.abs(Z.T @ yc))) / n
    alf = ratio ** (1.0 / (nlambda - 1))
    lams = lam_max * alf ** np.arange(nlambda)
    hom = _Homotopy(Z, yc, lams)
    # glmnet's stopping rule on the homotopy's (rounded) solutions first, so that only the
    # grid values up to the stop (and two beyond, for safety) are solved exactly
    L0 = _stop_index(_dev_ratios(Z, yc, hom.approx, nulldev))
    m_end = min(nlambda, L0 + 2)
    while True:
        gammas = hom.exact(m_end)
        devs = _dev_ratios(Z, yc, gammas, nulldev)
        L = _stop_index(devs)
        if L < m_end or m_end == nlambda:
            break
        m_end = nlambda
    lam_out = lams[:L].copy()
    if L > 2:  # glmnet's fix.lam
        ll = np.log(lam_out)
        lam_out[0] = math.exp(2 * ll[1] - ll[2])
    beta = gammas[:L] / w
    a0 = ym - beta @ xm
    return LassoPath(lam=lam_out, a0=a0, beta=beta, dev_ratio=devs[:L])


def _dev_ratios(Z, yc, gammas, nulldev):
    """Fraction of deviance explained by each row of ``gammas`` (NaN rows stay NaN)."""
    resid = yc[None, :] - gammas @ Z.T
    devs = 1.0 - np.einsum("ij,ij->i", resid, resid) / nulldev
    devs[0] = 0.0
    return devs


def _stop_index(devs) -> int:
    """Number of grid values glmnet keeps: from the 5th value on, it stops after the first one
    whose deviance ratio rises by less than FDEV of itself or exceeds DEVMAX."""
    nlambda = devs.size
    for m in range(min(MNLAM, nlambda) - 1, nlambda):
        if m >= 1 and not (devs[m] - devs[m - 1] >= FDEV * devs[m] and devs[m] <= DEVMAX):
            return m + 1
    return nlambda


class _Homotopy:
    r"""Lasso solutions of (1/2n)||yc - Z g||^2 + lam ||g||_1 on a grid of lambdas.

    The lasso path is piecewise linear in lambda (Efron, Hastie, Johnstone and Tibshirani 2004,
    Section 3.1): its knots, active sets and signs come from the homotopy (LARS with the lasso
    modification, scikit-learn's ``lars_path``; on the Gram matrix when n > p), which gives
    ``approx`` by linear interpolation between knots. :meth:`exact` then solves, at each
    lambda, the KKT equations of that active set,
    :math:`g_E = (Z_E^\top Z_E)^{-1}(Z_E^\top y - n\lambda s)`, once per active set (affine in
    lambda), and checks the KKT conditions; any lambda where this fails (a degenerate path,
    or beyond the homotopy's last knot when p >= n) is solved by coordinate descent instead.
    A grid value beyond the last knot has ``approx`` NaN.
    """

    def __init__(self, Z, yc, lams):
        from sklearn.linear_model import lars_path

        n, p = Z.shape
        self.Z, self.yc, self.lams, self.n = Z, yc, lams, n
        self.gram = Z.T @ Z if n > p else None
        self.zy = Z.T @ yc
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alphas, _, coefs = lars_path(Z, yc, Xy=self.zy if self.gram is not None else None,
                                         Gram=self.gram, method="lasso",
                                         alpha_min=float(lams[-1]) * (1 - 1e-9), copy_X=True,
                                         max_iter=10 * max(n, p))
        kn, cf = alphas[::-1], coefs[:, ::-1]             # increasing knots
        approx = np.zeros((lams.size, p))
        approx[lams < kn[0]] = np.nan
        inside = (lams < alphas[0]) & (lams >= kn[0])
        idx = np.nonzero(inside)[0]
        if idx.size and kn.size > 1:
            lam_in = lams[idx]
            j = np.minimum(np.searchsorted(kn, lam_in, side="right") - 1, kn.size - 2)
            t = (lam_in - kn[j]) / (kn[j + 1] - kn[j])
            approx[idx] = cf[:, j].T * (1 - t)[:, None] + cf[:, j + 1].T * t[:, None]
        self.approx = approx

    def exact(self, m_end: int) -> np.ndarray:
        """Exact solutions at the first ``m_end`` grid values."""
        Z, yc, lams, n, gram = self.Z, self.yc, self.lams[:m_end], self.n, self.gram
        p = Z.shape[1]
        approx = self.approx[:m_end]
        out = np.zeros((m_end, p))
        bad = np.nonzero(np.isnan(approx[:, 0]))[0].tolist()
        idx = np.nonzero(~np.isnan(approx[:, 0]))[0]
        # the homotopy's own solution is kept where it already meets the KKT conditions to
        # 1e-12 (relative to lambda): re-solving would change it by rounding only
        if idx.size:
            good = _kkt_gap(Z, yc, approx[idx], lams[idx]) <= 1e-12
            out[idx[good]] = approx[idx[good]]
            idx = idx[~good]
        pattern = np.sign(approx[idx]).astype(np.int8)
        keys, inverse = np.unique(pattern, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        for u, key in enumerate(keys):
            act = np.nonzero(key)[0]
            ms = idx[inverse == u]
            if act.size == 0:
                continue
            sgn = key[act].astype(float)
            GE = gram[np.ix_(act, act)] if gram is not None else Z[:, act].T @ Z[:, act]
            try:
                sol = np.linalg.solve(GE, np.column_stack([self.zy[act], sgn]))
            except np.linalg.LinAlgError:
                bad.extend(ms.tolist())
                continue
            gE = sol[:, 0][None, :] - n * lams[ms][:, None] * sol[:, 1][None, :]
            ok = np.all(np.sign(gE) == sgn[None, :], axis=1)
            out[np.ix_(ms[ok], act)] = gE[ok]
            bad.extend(ms[~ok].tolist())
        # KKT check of every solution (one product), coordinate descent where it fails
        viol = _kkt_gap(Z, yc, out, lams) > 1e-9
        for m in sorted(set(bad) | set(np.nonzero(viol)[0].tolist())):
            out[m] = _coordinate_descent(Z, yc, float(lams[m]), out[m - 1] if m else np.zeros(p))
        return out


def _kkt_gap(Z, yc, G, lams) -> np.ndarray:
    """Largest violation of the lasso's KKT conditions by each row of G, relative to lambda:
    max over the support of |grad_j - lam s_j| and off it of |grad_j| - lam, grad = Z'(y - Zg)/n."""
    grad = (yc[None, :] - G @ Z.T) @ Z / Z.shape[0]
    on = G != 0
    act = np.where(on, np.abs(grad - lams[:, None] * np.sign(G)), 0.0).max(axis=1)
    off = np.where(on, -np.inf, np.abs(grad) - lams[:, None]).max(axis=1)
    return np.maximum(act, off) / lams


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
