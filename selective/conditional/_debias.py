r"""The debiasing matrix of R selectiveInference 1.2.5 (``debiasingMatrix``, wide design), ported.

For the full-model target of the lasso when p > n, ``fixedLassoInf(type = "full")`` uses the
debiased lasso of Javanmard and Montanari (2014), "Confidence intervals and hypothesis testing
for high-dimensional regression", JMLR 15, 2869-2909 (arXiv:1306.3171), Section 2.1: row j of
an approximate inverse :math:`\Theta` of :math:`\hat\Sigma = X^\top X / n` solves

.. math:: \min_\theta\ \tfrac12 \theta^\top\hat\Sigma\theta - \theta_j + \mu\|\theta\|_1,

the Lagrangian form of their problem (4), :math:`\|\hat\Sigma\theta - e_j\|_\infty \le \mu`.
The package solves it by coordinate descent (``solve_QP_wide`` in its
``quadratic_program_wide.c``) from :math:`\mu = \Phi^{-1}(1 - 0.1/p^2)/\sqrt n`, dividing
:math:`\mu` by 1.5 after each solve, warm-started, for at most 9 solves (``linesearch.try =
10``), and stops early when the ever-active set reaches ``max(50, 0.3 n)`` columns.

The matrix is a heuristic approximate inverse, not the exact minimiser of anything, so it is
reproduced here operation by operation, with the package's stopping rules (KKT tolerance 1e-4
relative to :math:`\mu`, the relative objective and parameter checks at iterations 2, 4, 8,
..., at most 50 iterations per solve, a coordinate left unchanged when it would move by less
than 1e-6 of its size), so that the tests built on it agree with R. The inference built on it
is exact whatever the matrix: the contrasts depend on X, the selected set and signs only.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_MAX_ITER = 50
_MAX_TRY = 10
_SCALING = 1.5
_TOL = 1e-4          # kkt_tol, objective_tol and parameter_tol of the package
_CHANGE = 1e-6       # a coordinate moves only when it changes by more than this, relatively


def debiasing_matrix(X: np.ndarray, rows, *, max_try: int = _MAX_TRY) -> np.ndarray:
    """Rows ``rows`` (0-based) of the package's approximate inverse of ``X'X / n`` (module docs)."""
    n, p = X.shape
    max_active = int(max(50.0, 0.3 * n))   # R passes a double to an int argument: truncation
    bound0 = (1.0 / math.sqrt(n)) * float(-special.ndtri(0.1 / p ** 2))
    diag = np.einsum("ij,ij->j", X, X) / n
    out = np.empty((len(rows), p))
    for i, row in enumerate(rows):
        out[i] = _row(X, diag, int(row), bound0, max_active, max_try)
    return out


def _row(X, diag, row, bound, max_active, max_try):
    """``debiasingRow`` with ``linesearch = TRUE``: the state (solution, fitted values, ever-active
    set) persists from one solve to the next, as the package's C code updates it in place."""
    n, p = X.shape
    st = _State(X, diag, row)
    counter = 1
    solved = False
    while counter < max_try:
        st.solve(bound, max_active)
        solved = True
        # the package's test `iter == max_iter + 1` can never hold (a solve returns at most
        # max_iter), so the line search always divides the bound
        bound = bound / _SCALING
        if st.nactive >= max_active:
            if counter == 1:
                raise RuntimeError(f"The debiasing row {row} reached the active-set limit "
                                   f"{max_active} at once (the package stops with 'Unable to "
                                   "approximate inverse row').")
            # the package reverts to its previous output, whose solution vector is the same
            # object its C code has just updated in place: the current solution
            break
        counter += 1
    if not solved:
        raise RuntimeError("internal: no debiasing solve was run")
    return st.theta.copy()


class _State:
    """Coordinate descent for 1/2 theta' (X'X/n) theta + l' theta + bound ||theta||_1, as the
    package's ``solve_wide`` (ridge term 0, KKT / objective / parameter stopping all on).

    The package keeps the fitted values X theta and recomputes a gradient coordinate from them
    when it is needed; here the gradient g = X'X theta / n + l itself is kept, updated by a
    column of X'X/n when a coordinate moves (the columns of the coordinates that ever move are
    cached) and recomputed from theta at every iteration, so that rounding cannot accumulate.
    """

    def __init__(self, X, diag, row):
        n, p = X.shape
        self.X = X
        self.n = n
        self.p = p
        self.diag = diag
        self.diag_list = diag.tolist()
        self.theta = np.zeros(p)
        self.lin = np.zeros(p)
        self.lin[row] = -1.0
        self.g = self.lin.copy()
        self.active = [row]
        self.in_active = np.zeros(p, bool)
        self.in_active[row] = True
        self._cols: dict[int, np.ndarray] = {}

    @property
    def nactive(self) -> int:
        return len(self.active)

    def refresh(self):
        self.g = self.X.T @ (self.X @ self.theta) / self.n + self.lin

    def _col(self, c):
        col = self._cols.get(c)
        if col is None:
            col = self._cols[c] = self.X.T @ self.X[:, c] / self.n
        return col

    def _apply(self, coord, value):
        """Set a coordinate (the package's update, including its 1e-6 no-move rule)."""
        old = self.theta[coord]
        if value != 0 and not self.in_active[coord]:
            self.in_active[coord] = True
            self.active.append(coord)
        if abs(old - value) > _CHANGE * (abs(value) + abs(old)):
            self.g += (value - old) * self._col(coord)
            self.theta[coord] = value

    def active_pass(self, bound):
        """One pass of updates over the ever-active coordinates, in order (the package's inner
        loop; scalar arithmetic, the hot spot: Python floats for the coordinate being updated,
        one numpy update of the gradient per move)."""
        g, theta = self.g, self.theta
        diag, col = self.diag_list, self._col
        nb = -bound
        for c in self.active:
            d = diag[c]
            old = theta.item(c)
            lt = g.item(c) - d * old
            if lt < nb:
                value = (-lt - bound) / d
            elif lt > bound:
                value = -(lt - bound) / d
            else:
                value = 0.0
            delta = value - old
            if abs(delta) > _CHANGE * (abs(value) + abs(old)):
                g += delta * col(c)
                theta[c] = value

    def sweep(self, bound):
        """One pass over every coordinate in order (the package's full sweep).

        A coordinate outside the ever-active set has value 0 and moves exactly when
        ``|g_c| > bound``; the runs of such coordinates between two ever-active ones are
        checked together, and the ever-active coordinates are updated one by one, so each
        coordinate sees the gradient left by all the updates before it, as in the package.
        """
        g, theta, diag = self.g, self.theta, self.diag
        stops = sorted(self.active) + [self.p]
        pos = 0
        for a in stops:
            while pos < a:
                seg = g[pos:a]
                hit = np.flatnonzero((seg < -bound) | (seg > bound))
                if hit.size == 0:
                    break
                c = pos + int(hit[0])
                lt = float(g[c])
                value = (-lt - bound) / diag[c] if lt < -bound else -(lt - bound) / diag[c]
                self._apply(c, float(value))
                pos = c + 1
            if a == self.p:
                break
            d = float(diag[a])
            old = float(theta[a])
            lt = float(g[a]) - d * old
            if lt < -bound:
                value = (-lt - bound) / d
            elif lt > bound:
                value = -(lt - bound) / d
            else:
                value = 0.0
            if abs(old - value) > _CHANGE * (abs(value) + abs(old)):
                g += (value - old) * self._col(a)
                theta[a] = value
            pos = a + 1

    def kkt(self, bound, idx=None) -> bool:
        g = self.g if idx is None else self.g[idx]
        th = self.theta if idx is None else self.theta[idx]
        pos, neg = th > 0, th < 0
        if np.any(np.abs(g[pos] + bound) > _TOL * bound) or np.any(np.abs(g[neg] - bound) > _TOL * bound):
            return False
        zero = th == 0
        return not np.any(np.abs(g[zero]) > (1.0 + _TOL) * bound)

    def objective(self, bound) -> float:
        a = np.asarray(self.active)
        th = self.theta[a]
        quad = 0.5 * float(self.theta @ (self.g - self.lin))   # (1/2n) ||X theta||^2
        return quad + float(np.sum(self.lin[a] * th)) + float(np.sum(bound * np.abs(th)))

    def solve(self, bound, max_active) -> int:
        theta_old0 = 0.0                 # the package's theta_old: only its first entry is written
        iter_old = 1
        self.refresh()
        new_value = self.objective(bound)
        old_value = new_value + 2000000000
        it = 0
        while it < _MAX_ITER:
            self.refresh()
            for _ in range(5):
                self.active_pass(bound)
                if self.kkt(bound, np.asarray(self.active)):
                    break
            if self.kkt(bound):
                break
            self.sweep(bound)
            if self.kkt(bound):
                break
            if it == 2 * iter_old:
                iter_old = it
                # the package's parameter check compares theta with a vector whose entries are
                # all 0 except the first, which holds the last entry of theta at the last check
                d0 = self.theta[0] - theta_old0
                norm_diff = math.sqrt(d0 * d0 + float(self.theta[1:] @ self.theta[1:]))
                norm_last = math.sqrt(float(self.theta @ self.theta))
                theta_old0 = float(self.theta[-1])
                if norm_diff < _TOL * norm_last:
                    break
                new_value = self.objective(bound)
                if abs(old_value - new_value) < _TOL * abs(new_value) and it > 0:
                    break
                old_value = new_value
            if self.nactive > max_active and it >= 1:
                break
            it += 1
        return it
