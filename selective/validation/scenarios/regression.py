"""Selection of regression models, with exact conditional p-values beside the standard columns:
the lasso at a fixed λ (:class:`LassoFixedLambda`) and the forward-stepwise path
(:class:`ForwardStepwisePath`), under the global null or with a few real coefficients.

Signal variants (``coefficients`` not empty) use the orthogonal-signal design of
:func:`orthogonal_signal`: the first ``len(coefficients)`` columns are made exactly orthogonal, in
the sample, to each other and to every other column, within the selection rows and within the test
rows of the data-splitting baseline. Then the partial coefficient of a column in the regression of
the mean of y on any set of columns (with an intercept), on all rows or on the test rows, is its
coefficient if it is a signal and exactly 0 otherwise, so a slot is null iff its tested variable is
a noise variable."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ..._validation import check_int, check_positive, check_real
from ...accounting.certificates import DescriptionLength
from ..outcomes import Outcomes
from .base import _STANDARD, Scenario, _corrected

__all__ = ["LassoFixedLambda", "ForwardStepwisePath", "orthogonal_signal"]

_ORACLE = "pvalue_oracle"
_CARVING = "pvalue_carving"
_CARVING_LABEL = "carving (selection on y + N(0, 1) noise, exact conditional on all rows)"


def _two_sided_z(z: np.ndarray) -> np.ndarray:
    return special.erfc(np.abs(z) / math.sqrt(2.0))


def _ols_z_pvalue(x: np.ndarray, y: np.ndarray, j: int) -> float:
    """Two-sided z-test (σ = 1 known) of coefficient ``j`` of y on the columns of x, with intercept."""
    xc = x - x.mean(axis=0)
    yc = y - y.mean()
    g = np.linalg.inv(xc.T @ xc)
    b = g @ (xc.T @ yc)
    return float(_two_sided_z(b[j] / math.sqrt(g[j, j])))


def orthogonal_signal(x: np.ndarray, k: int, ns: int) -> np.ndarray:
    """The design of the signal variants: ``x`` centred within rows ``[:ns]`` and within rows
    ``[ns:]``, then, within each part, its first ``k`` columns replaced by orthogonal columns of
    the same norms that are orthogonal to every other column.

    Within a part, the first ``k`` centred columns are projected off the span of the others
    (least-squares residuals) and orthonormalised (QR, signs kept), then rescaled to their norms
    before. Both parts have mean zero, so the centred cross-products on all rows are the sums of
    those within the parts: the signal columns are exactly orthogonal (up to rounding) to each
    other and to every other column on all rows, on the selection rows and on the test rows.
    Each part needs more rows than ``x`` has columns.
    """
    out = np.empty_like(x, dtype=float)
    for rows in (slice(0, ns), slice(ns, x.shape[0])):
        part = x[rows] - x[rows].mean(axis=0)
        sig = part[:, :k]
        scale = np.linalg.norm(sig, axis=0)
        if k < part.shape[1]:
            rest = part[:, k:]
            sig = sig - rest @ np.linalg.lstsq(rest, sig, rcond=None)[0]
        q, t = np.linalg.qr(sig)
        part[:, :k] = q * np.where(np.diag(t) < 0, -1.0, 1.0) * scale
        out[rows] = part
    return out


def check_coefficients(coefficients: tuple, n_features: int, n_obs: int, split_fraction: float) -> tuple[float, ...]:
    """``coefficients`` as a tuple of floats: at most ``n_features`` finite non-zero reals, and
    (when not empty) at least ``n_features + 1`` rows in each part of the split (the first
    ``round(split_fraction * n_obs)`` rows and the others), as :func:`orthogonal_signal` needs."""
    if isinstance(coefficients, (str, bytes)) or not hasattr(coefficients, "__len__"):
        raise TypeError(f"`coefficients` must be a tuple of finite non-zero real numbers; got {coefficients!r}.")
    out = tuple(check_real(f"coefficients[{i}]", c) for i, c in enumerate(coefficients))
    if len(out) > n_features:
        raise ValueError(f"`coefficients` must have at most n_features = {n_features} entries; got {len(out)}.")
    if any(c == 0.0 for c in out):
        raise ValueError(f"`coefficients` must be non-zero (a real effect each; the other variables are the "
                         f"null ones); got {coefficients!r}.")
    ns = int(round(split_fraction * n_obs))
    if out and min(ns, n_obs - ns) < n_features + 1:
        raise ValueError(f"`coefficients` needs at least n_features + 1 = {n_features + 1} rows in each part of "
                         f"the split (the orthogonal-signal design); got {ns} and {n_obs - ns} rows "
                         f"(n_obs = {n_obs}, split_fraction = {split_fraction:g}): raise n_obs.")
    return out


def finish(sc: Any, p: np.ndarray, tested: np.ndarray, tested_split: np.ndarray,
           extra: dict[str, np.ndarray], tested_carving: np.ndarray | None = None) -> Outcomes:
    """Outcomes of a regression scenario: every column's slot is null iff the variable it tested
    (``tested``; ``tested_split`` for data splitting, ``tested_carving`` for carving) is not among
    the first ``len(coefficients)``; the oracle tests variable 0, a real effect."""
    r, k = len(p), len(sc.coefficients)
    cols = {"pvalue_naive": p, **_corrected(p, sc.certificates(), sc.n_rows, sc.n_candidates), **extra}
    by = {"pvalue_split": tested_split >= k, _ORACLE: np.zeros(r, dtype=bool)}
    if tested_carving is not None:
        by[_CARVING] = tested_carving >= k
    return Outcomes.from_shared({c: cols[c].reshape(r, -1) for c in sc.columns}, (tested >= k).reshape(r, -1),
                                null_by_column={c: v.reshape(r, -1) for c, v in by.items() if c in sc.columns})


# --------------------------------------------------------------------------------------------
# 5. Lasso support at fixed lambda
# --------------------------------------------------------------------------------------------


class _RegressionNull:
    """Shared views of the regression scenarios: y on ``n_features`` predictors and ``n_obs``
    rows, independent of them or with ``coefficients`` on the first ones, with exact conditional
    p-values beside the standard columns (and the oracle in the signal variants)."""

    __slots__ = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_conditional", _CARVING) + ((_ORACLE,) if self.coefficients else ())

    @property
    def truth(self) -> str:
        k = len(self.coefficients)
        if k == 0:
            return f"Global null: y is independent of all {self.n_features} predictors."
        return (f"Predictors 0..{k - 1} have coefficients {self.coefficients}, orthogonal in the sample to every "
                f"other predictor; the other {self.n_features - k} have partial coefficient 0 in every model.")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    def _check_coefficients(self) -> None:
        object.__setattr__(self, "coefficients", check_coefficients(self.coefficients, self.n_features,
                                                                    self.n_obs, self.split_fraction))

    def draw(self, g: np.random.Generator, ns: int) -> tuple[np.ndarray, np.ndarray]:
        """One dataset (X, y): the null draw, or, with ``coefficients``, the orthogonal-signal design
        (:func:`orthogonal_signal`) and y = X b + N(0, 1) noise (the same random numbers)."""
        x = g.standard_normal((self.n_obs, self.n_features))
        y = g.standard_normal(self.n_obs)
        k = len(self.coefficients)
        if k:
            x = orthogonal_signal(x, k, ns)
            y = y + x[:, :k] @ np.asarray(self.coefficients)
        return x, y

    def carving_noise(self, g: np.random.Generator) -> np.ndarray:
        """The randomization of the carving column, N(0, 1) (= sigma^2: the selection sees the data at
        the signal-to-noise ratio of half the rows, as data splitting's does), drawn after every
        other random number of the replication so that the other columns do not change."""
        return g.standard_normal(self.n_obs)

    def oracle(self, x: np.ndarray, y: np.ndarray) -> float:
        """The z-test of variable 0 on all rows, no selection (its estimate is the same in every
        model that holds it, the signal being orthogonal to every other column)."""
        return _ols_z_pvalue(x[:, :1], y, 0)


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
    selection rows. Nothing is tested when the support is empty. Carving (``pvalue_carving``):
    the lasso at :math:`\lambda` = ``lam_factor`` :math:`\sqrt{2n}` (the noise of :math:`y+\omega`
    has sd :math:`\sqrt2`: the same strictness as :math:`\lambda` on y and as data splitting's on
    its rows) on :math:`y+\omega`, :math:`\omega\sim N(0, I)`, one of
    its selected variables drawn uniformly, and its exact p-value given that selection from all of
    y (:func:`selective.conditional.randomized_lasso_inference`; its slot is null iff the variable
    it tested is a noise variable).

    Signal variant (``coefficients`` not empty): X is the orthogonal-signal design
    (:func:`orthogonal_signal`, on the selection rows and the test rows of data splitting) and
    y = :math:`\sum_{j<k}` ``coefficients[j]`` :math:`x_j` + N(0, 1), k = ``len(coefficients)``; an
    extra column ``pvalue_oracle`` tests variable 0 on all rows with no selection.

    Truth: with ``coefficients=()`` (the default) the global null (y is independent of X), so
    every tested partial coefficient is zero. In the signal variant, the first k columns are
    orthogonal in the sample to each other and to every other column, on all rows and on the test
    rows, so the partial coefficient of variable j in the regression of the mean of y on any
    selected support (with intercept, on all rows or on the test rows; X is conditioned on) is
    ``coefficients[j]`` for j < k and exactly 0 otherwise: each column's slot is null iff the
    variable it tested is j >= k (data splitting: the variable drawn from its own support).
    """

    name: str = "lasso_support"
    n_obs: int = 100
    n_features: int = 30
    lam_factor: float = 1.9
    max_size: int = 8
    coefficients: tuple[float, ...] = ()
    description: ClassVar[str] = ("lasso support at fixed lambda, one selected coefficient tested (+ exact "
                                  "conditional, carving)")
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50
    column_labels: ClassVar[dict[str, str]] = {_ORACLE: "oracle (variable 0, no selection)",
                                                _CARVING: _CARVING_LABEL}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("n_obs", self.n_obs, low=4)
        check_positive("lam_factor", self.lam_factor)
        check_int("max_size", self.max_size, low=1, high=self.n_features)
        self._check_coefficients()

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
        from ...conditional import fixed_lasso_inference, randomized_lasso_inference

        r = len(rngs)
        p, pc, ps, po, pk = (np.full(r, np.nan) for _ in range(5))
        tested, tested_s = np.full(r, self.n_features), np.full(r, self.n_features)
        tested_k = np.full(r, self.n_features)
        ns = int(round(self.split_fraction * self.n_obs))
        for i, g in enumerate(rngs):
            x, y = self.draw(g, ns)
            res = fixed_lasso_inference(x, y, self.lam_factor * math.sqrt(self.n_obs), sigma=1.0,
                                        alternative="two-sided")
            e = len(res.variables)
            if e:
                k = int(g.integers(min(e, self.max_size)))
                if e <= self.max_size:
                    p[i], pc[i] = res.pvalue_naive[k], res.pvalue[k]
                    tested[i] = res.index[k]
                else:  # cut support: the naive test is on the cut model, no conditional p-value
                    keep = self._support(x, y)
                    p[i] = _ols_z_pvalue(x[:, keep], y, k)
                    tested[i] = keep[k]
            es = self._support(x[:ns], y[:ns])
            if es.size:
                ks = int(g.integers(es.size))
                ps[i] = _ols_z_pvalue(x[ns:][:, es], y[ns:], ks)
                tested_s[i] = es[ks]
            if self.coefficients:
                po[i] = self.oracle(x, y)
            # y + omega has noise sd sqrt(2): lambda scaled by sqrt(2) selects as strictly as lambda on y (and as
            # data splitting's lambda on its rows), instead of letting more noise variables in
            lam, omega = self.lam_factor * math.sqrt(2.0 * self.n_obs), self.carving_noise(g)
            support = randomized_lasso_inference(x, y, lam, sigma=1.0, noise_sd=1.0, randomization=omega,
                                                 targets=()).extra["selected"]
            if support.size:  # one selected variable, drawn independently of the data
                kk = int(g.integers(support.size))
                rk = randomized_lasso_inference(x, y, lam, sigma=1.0, noise_sd=1.0, randomization=omega, targets=[kk])
                pk[i], tested_k[i] = rk.pvalue[0], rk.index[0]
        return finish(self, p, tested, tested_s, {"pvalue_split": ps, "pvalue_conditional": pc, _ORACLE: po,
                                                  _CARVING: pk}, tested_k)


# --------------------------------------------------------------------------------------------
# 6. Forward stepwise
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ForwardStepwisePath(_RegressionNull, Scenario):
    r"""Forward stepwise path of ``steps`` steps; the first variable to enter is tested in the final model.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1), σ = 1 known. Selection: the
    ordered forward-stepwise path (with intercept) of ``steps`` steps, one of p!/(p-s)! paths,
    ``DescriptionLength(p!/(p-s)!)``. Test: the partial coefficient of the variable that entered
    at step 1, in the regression of y on the s selected variables: naive z-test; exact conditional
    p-value given the path (Tibshirani, Taylor, Lockhart and Tibshirani 2016,
    :func:`selective.conditional.fs_inference` with ``type="all"``, two-sided); Bonferroni over
    the C(p, s) s possible (model, variable) pairs; data splitting: the path on the selection
    rows, the z-test on the others; carving (``pvalue_carving``): the path on :math:`y+\omega`,
    :math:`\omega\sim N(0, I)`, and the exact p-value of its first variable in its s-variable model
    given that path, from all of y (:func:`selective.conditional.randomized_stepwise_inference`).

    Signal variant (``coefficients`` not empty): as in :class:`LassoFixedLambda`, the
    orthogonal-signal design (:func:`orthogonal_signal`), y = :math:`\sum_{j<k}`
    ``coefficients[j]`` :math:`x_j` + N(0, 1) and the oracle column ``pvalue_oracle``. The first
    variable to enter is then mostly a real one, so null slots are rarer than signal slots.

    Truth: with ``coefficients=()`` (the default) the global null (y is independent of X). In the
    signal variant the first k = ``len(coefficients)`` columns are orthogonal in the sample to each
    other and to every other column, on all rows and on the test rows, so the partial coefficient
    of variable j in the regression of the mean of y on any s variables (with intercept; X is
    conditioned on) is ``coefficients[j]`` for j < k and exactly 0 otherwise: a slot is null iff
    the first variable to enter (of the path on all rows, or on the selection rows for data
    splitting) is j >= k.
    """

    name: str = "forward_stepwise"
    n_obs: int = 100
    n_features: int = 30
    steps: int = 3
    coefficients: tuple[float, ...] = ()
    description: ClassVar[str] = ("forward stepwise path of s steps, first entered variable tested (+ exact "
                                  "conditional, carving)")
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50

    column_labels: ClassVar[dict[str, str]] = {_ORACLE: "oracle (variable 0, no selection)",
                                                _CARVING: _CARVING_LABEL}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("steps", self.steps, low=1, high=self.n_features)
        check_int("n_obs", self.n_obs, low=self.steps + 3)
        self._check_coefficients()

    @property
    def naive_is_biased(self) -> bool:  # type: ignore[override]
        """Under the global null the naive p-value of the first variable is biased; with real
        coefficients that variable is mostly a real one, so the null slots are rare."""
        return not self.coefficients

    @property
    def n_candidates(self) -> int:
        p, s = self.n_features, self.steps
        return math.comb(p, s) * s

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(math.perm(self.n_features, self.steps)),)

    def replicate_many(self, rngs):
        from ...conditional import forward_stepwise, fs_inference, randomized_stepwise_inference

        r = len(rngs)
        p, pc, ps, po, pk = (np.full(r, np.nan) for _ in range(5))
        tested, tested_s, tested_k = (np.zeros(r, dtype=int) for _ in range(3))
        ns = int(round(self.split_fraction * self.n_obs))
        s = self.steps
        for i, g in enumerate(rngs):
            x, y = self.draw(g, ns)
            path = forward_stepwise(x, y, maxsteps=s)
            res = fs_inference(path, sigma=1.0, k=s, type="all", alternative="two-sided")
            row = int(np.flatnonzero(np.asarray(res.index) == path.action[0])[0])
            p[i], pc[i] = res.pvalue_naive[row], res.pvalue[row]
            path_s = forward_stepwise(x[:ns], y[:ns], maxsteps=s)
            ps[i] = _ols_z_pvalue(x[ns:][:, np.asarray(path_s.action[:s])], y[ns:], 0)
            tested[i], tested_s[i] = path.action[0], path_s.action[0]
            if self.coefficients:
                po[i] = self.oracle(x, y)
            rk = randomized_stepwise_inference(x, y, steps=s, sigma=1.0, noise_sd=1.0,
                                               randomization=self.carving_noise(g),
                                               targets=[0])
            pk[i], tested_k[i] = rk.pvalue[0], rk.index[0]
        return finish(self, p, tested, tested_s, {"pvalue_split": ps, "pvalue_conditional": pc, _ORACLE: po,
                                                  _CARVING: pk}, tested_k)
