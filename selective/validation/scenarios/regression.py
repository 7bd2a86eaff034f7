"""Selection of regression models under the global null, with exact conditional p-values
beside the standard columns: the lasso at a fixed λ (:class:`LassoFixedLambda`) and the
forward-stepwise path (:class:`ForwardStepwisePath`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ..._validation import check_int, check_positive
from ...accounting.certificates import DescriptionLength
from .base import _STANDARD, Scenario

__all__ = ["LassoFixedLambda", "ForwardStepwisePath"]


def _two_sided_z(z: np.ndarray) -> np.ndarray:
    return special.erfc(np.abs(z) / math.sqrt(2.0))


def _ols_z_pvalue(x: np.ndarray, y: np.ndarray, j: int) -> float:
    """Two-sided z-test (σ = 1 known) of coefficient ``j`` of y on the columns of x, with intercept."""
    xc = x - x.mean(axis=0)
    yc = y - y.mean()
    g = np.linalg.inv(xc.T @ xc)
    b = g @ (xc.T @ yc)
    return float(_two_sided_z(b[j] / math.sqrt(g[j, j])))


# --------------------------------------------------------------------------------------------
# 5. Lasso support at fixed lambda
# --------------------------------------------------------------------------------------------


class _RegressionNull:
    """Shared views of the regression scenarios: y independent of ``n_features`` predictors on
    ``n_obs`` rows, with exact conditional p-values beside the standard columns."""

    __slots__ = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_conditional",)

    @property
    def truth(self) -> str:
        return f"Global null: y is independent of all {self.n_features} predictors."

    @property
    def n_rows(self) -> int:
        return self.n_obs


@dataclass(frozen=True, slots=True, kw_only=True)
class LassoFixedLambda(_RegressionNull, Scenario):
    r"""Lasso at a fixed λ selects a support; one selected coefficient is tested.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1), σ = 1 known. Selection: the lasso
    :math:`\frac12\|y-b_0-Xb\|^2+\lambda\|b\|_1` with :math:`\lambda` = ``lam_factor``
    :math:`\sqrt n` (:func:`selective.conditional.fixed_lasso_inference`); supports of size at
    most ``max_size`` count (larger ones are cut to the ``max_size`` largest ``|b|``, as
    :class:`selective.selectors.description.LassoSupport` does), certificate
    ``DescriptionLength(sum_{j<=s} C(p, j))``. One selected variable is drawn uniformly with the
    replication's generator (independent of the data) and its partial coefficient in the
    regression of y on the support is tested: naive z-test; exact conditional p-value given the
    selected support and signs (Lee, Sun, Sun and Taylor 2016, two-sided; NaN when the support was
    cut); Bonferroni over the :math:`\sum_j j\binom pj` (support, variable) pairs; data
    splitting with the lasso at :math:`\lambda` = ``lam_factor`` :math:`\sqrt{n_s}` on the
    selection rows. Nothing is tested when the support is empty.

    Truth: global null (y is independent of X), so every tested partial coefficient is zero.
    """

    name: str = "lasso_support"
    n_obs: int = 100
    n_features: int = 30
    lam_factor: float = 1.9
    max_size: int = 8
    description: ClassVar[str] = "lasso support at fixed lambda, one selected coefficient tested (+ exact conditional)"
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("n_obs", self.n_obs, low=4)
        check_positive("lam_factor", self.lam_factor)
        check_int("max_size", self.max_size, low=1, high=self.n_features)

    @property
    def n_candidates(self) -> int:
        return sum(j * math.comb(self.n_features, j) for j in range(1, self.max_size + 1))

    def certificates(self) -> tuple[Any, ...]:
        from ...selectors.description import n_supports

        return (DescriptionLength(n_supports(self.n_features, self.max_size)),)

    def _support(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        from ...conditional import solve_lasso

        n = x.shape[0]
        beta = solve_lasso(x, y, self.lam_factor * math.sqrt(n), intercept=True).beta
        xc = x - x.mean(axis=0)
        active = np.flatnonzero(np.abs(beta) > 1e-5 * np.sqrt(n / (xc**2).sum(axis=0)))
        if active.size > self.max_size:
            active = np.sort(active[np.argsort(-np.abs(beta[active]), kind="stable")[: self.max_size]])
        return active

    def replicate_many(self, rngs):
        from ...conditional import fixed_lasso_inference

        r = len(rngs)
        p, pc, ps = (np.full(r, np.nan) for _ in range(3))
        ns = int(round(self.split_fraction * self.n_obs))
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            y = g.standard_normal(self.n_obs)
            res = fixed_lasso_inference(x, y, self.lam_factor * math.sqrt(self.n_obs), sigma=1.0,
                                        alternative="two-sided")
            e = len(res.variables)
            if e:
                k = int(g.integers(min(e, self.max_size)))
                if e <= self.max_size:
                    p[i], pc[i] = res.pvalue_naive[k], res.pvalue[k]
                else:  # cut support: the naive test is on the cut model, no conditional p-value
                    keep = self._support(x, y)
                    p[i] = _ols_z_pvalue(x[:, keep], y, k)
            es = self._support(x[:ns], y[:ns])
            if es.size:
                ks = int(g.integers(es.size))
                ps[i] = _ols_z_pvalue(x[ns:][:, es], y[ns:], ks)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps, "pvalue_conditional": pc})


# --------------------------------------------------------------------------------------------
# 6. Forward stepwise
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ForwardStepwisePath(_RegressionNull, Scenario):
    """Forward stepwise path of ``steps`` steps; the first variable to enter is tested in the final model.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1), σ = 1 known. Selection: the
    ordered forward-stepwise path (with intercept) of ``steps`` steps, one of p!/(p-s)! paths,
    ``DescriptionLength(p!/(p-s)!)``. Test: the partial coefficient of the variable that entered
    at step 1, in the regression of y on the s selected variables: naive z-test; exact conditional
    p-value given the path (Tibshirani, Taylor, Lockhart and Tibshirani 2016,
    :func:`selective.conditional.fs_inference` with ``type="all"``, two-sided); Bonferroni over
    the C(p, s) s possible (model, variable) pairs; data splitting: the path on the selection
    rows, the z-test on the others.

    Truth: global null (y is independent of X).
    """

    name: str = "forward_stepwise"
    n_obs: int = 100
    n_features: int = 30
    steps: int = 3
    description: ClassVar[str] = "forward stepwise path of s steps, first entered variable tested (+ exact conditional)"
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("steps", self.steps, low=1, high=self.n_features)
        check_int("n_obs", self.n_obs, low=self.steps + 3)

    @property
    def n_candidates(self) -> int:
        p, s = self.n_features, self.steps
        return math.comb(p, s) * s

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(math.perm(self.n_features, self.steps)),)

    def replicate_many(self, rngs):
        from ...conditional import forward_stepwise, fs_inference

        r = len(rngs)
        p, pc, ps = (np.full(r, np.nan) for _ in range(3))
        ns = int(round(self.split_fraction * self.n_obs))
        s = self.steps
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            y = g.standard_normal(self.n_obs)
            path = forward_stepwise(x, y, maxsteps=s)
            res = fs_inference(path, sigma=1.0, k=s, type="all", alternative="two-sided")
            row = int(np.flatnonzero(np.asarray(res.index) == path.action[0])[0])
            p[i], pc[i] = res.pvalue_naive[row], res.pvalue[row]
            path_s = forward_stepwise(x[:ns], y[:ns], maxsteps=s)
            ps[i] = _ols_z_pvalue(x[ns:][:, np.asarray(path_s.action[:s])], y[ns:], 0)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps, "pvalue_conditional": pc})
