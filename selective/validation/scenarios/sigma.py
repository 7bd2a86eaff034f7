r"""Conditional inference after forward stepwise with the noise level unknown (docs/THEORY.md 3.7).

:class:`UnknownSigmaStepwise`: forward stepwise at n = 20, p = 10 under the global null, the
first step's sequential test. With :math:`\sigma` unknown the package's valid route,
``sigma_method="interval"``, takes the supremum of the conditional p-value over a
:math:`1-\delta` chi-square interval for :math:`\sigma` from the full-model residuals
(independent of the selection), plus :math:`\delta`. R selectiveInference's plug-in (the
residual standard error on n - p - 1 = 9 df, treated as the known :math:`\sigma`) is shown
beside it as a diagnostic: the package labels it approximate, and here it rejects several
times too often in the tail. A signal variant (``coefficients``) puts real coefficients on the
first predictors, in the orthogonal-signal design of
:func:`~selective.validation.scenarios.regression.orthogonal_signal` (which needs a few more rows
than n = 20 at p = 10), with an oracle column.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ..._validation import check_in_interval, check_int
from ...accounting.certificates import DescriptionLength
from .base import _STANDARD, Scenario
from .regression import check_coefficients, finish, orthogonal_signal

__all__ = ["UnknownSigmaStepwise"]

_PLUGIN = "pvalue_conditional_plugin"
_ORACLE = "pvalue_oracle"


def _marginal_t_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided t-test (n - 2 df) of the slope of y on x with an intercept."""
    n = len(y)
    r = float(np.corrcoef(x, y)[0, 1])
    t = r * math.sqrt((n - 2) / max((1.0 - r) * (1.0 + r), 1e-300))
    return float(2.0 * stats.t.sf(abs(t), n - 2))


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownSigmaStepwise(Scenario):
    r"""Forward stepwise at small n with :math:`\sigma` unknown; the first entered variable is tested.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1); the analyst does not know
    :math:`\sigma`. Selection: the forward-stepwise path (with intercept) of ``steps`` steps,
    ``DescriptionLength(p!/(p-s)!)``. Test: the sequential (``type="active"``) two-sided test of
    the first entered variable, i.e. its slope in the regression of y on it alone:

    - ``pvalue_naive``: the ordinary t-test of that slope (n - 2 df);
    - ``pvalue_conditional``: :func:`selective.conditional.fs_inference` with
      ``sigma_method="interval"`` and ``sigma_delta`` (valid, THEORY.md 3.7);
    - ``pvalue_conditional_plugin``: the same with ``sigma_method="plugin"`` (approximate; a
      diagnostic);
    - Bonferroni over the ``n_features`` slopes; data splitting: the first step on half of the
      rows, the t-test on the others;
    - ``pvalue_oracle`` (signal variant only): the t-test of variable 0's slope on all rows, no
      selection.

    Signal variant (``coefficients`` not empty): X is the orthogonal-signal design of
    :func:`~selective.validation.scenarios.regression.orthogonal_signal` (on the first
    ``split_fraction`` of the rows and on the others, the data-splitting parts; each needs at least
    ``n_features + 1`` rows, so ``n_obs`` >= 22 at p = 10) and y = :math:`\sum_{j<k}`
    ``coefficients[j]`` :math:`x_j` + N(0, :math:`\sigma^2`), :math:`\sigma = 1` unknown to the
    analyst, k = ``len(coefficients)``.

    Truth: with ``coefficients=()`` (the default) the global null (y is independent of X). In the
    signal variant the first k columns are orthogonal in the sample to each other and to every
    other column, on all rows and on the test rows, so the slope of the mean of y on variable j
    alone (with intercept; X is conditioned on) is ``coefficients[j]`` for j < k and exactly 0
    otherwise: a slot is null iff the first variable to enter (on all rows; on the selection rows
    for data splitting) is j >= k. The t-test of a null slope on rows the selection did not see
    (data splitting) is then conservative (the other signals inflate its residual variance,
    independently of the slope's estimate), and the conditional test stays valid (the full-model
    residuals behind the sigma interval are pure noise).
    """

    name: str = "unknown_sigma_stepwise"
    n_obs: int = 20
    n_features: int = 10
    steps: int = 3
    sigma_delta: float = 0.005
    coefficients: tuple[float, ...] = ()
    default_reps: ClassVar[int] = 2000
    chunk_size: ClassVar[int] = 50
    column_labels: ClassVar[dict[str, str]] = {_PLUGIN: "exact conditional, plug-in sigma (approximate)",
                                               _ORACLE: "oracle (variable 0, no selection)"}
    invalid_columns: ClassVar[dict[str, str]] = {
        _PLUGIN: "plug-in sigma treated as known: approximate, labelled so by the package (THEORY.md 3.7)"}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("steps", self.steps, low=1, high=self.n_features)
        check_int("n_obs", self.n_obs, low=self.n_features + 3)
        check_in_interval("sigma_delta", self.sigma_delta, low=0.0, high=0.1, closed="neither")
        object.__setattr__(self, "coefficients", check_coefficients(self.coefficients, self.n_features,
                                                                    self.n_obs, self.split_fraction))

    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"forward stepwise at n = {self.n_obs}, p = {self.n_features} with sigma unknown: first step "
                "tested, valid sigma interval beside the plug-in")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_conditional", _PLUGIN) + ((_ORACLE,) if self.coefficients else ())

    @property
    def naive_is_biased(self) -> bool:  # type: ignore[override]
        """Under the global null the naive p-value of the first variable is biased; with real
        coefficients that variable is mostly a real one, so the null slots are rare."""
        return not self.coefficients

    @property
    def truth(self) -> str:
        k = len(self.coefficients)
        if k == 0:
            return f"Global null: y is independent of all {self.n_features} predictors (sigma unknown)."
        return (f"Predictors 0..{k - 1} have coefficients {self.coefficients}, orthogonal in the sample to every "
                f"other predictor; the other {self.n_features - k} have slope 0 (sigma unknown).")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(math.perm(self.n_features, self.steps)),)

    def conditional(self, x: np.ndarray, y: np.ndarray, *, interval: bool = True) -> tuple[Any, Any, Any]:
        """(path, result with the sigma interval, result with the plug-in sigma) of one dataset;
        ``interval=False`` skips the interval route (None in its place; it costs most of the time)."""
        from ...conditional import forward_stepwise, fs_inference

        path = forward_stepwise(x, y, maxsteps=self.steps)
        kw = {"type": "active", "alternative": "two-sided"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            valid = None
            if interval:
                valid = fs_inference(path, sigma_method="interval", sigma_delta=self.sigma_delta, **kw)
            plugin = fs_inference(path, sigma_method="plugin", **kw)
        return path, valid, plugin

    def replicate_many(self, rngs):
        from ...conditional import forward_stepwise

        r = len(rngs)
        p, pc, pp, ps, po = (np.full(r, np.nan) for _ in range(5))
        tested, tested_s = np.zeros(r, dtype=int), np.zeros(r, dtype=int)
        ns = int(round(self.split_fraction * self.n_obs))
        k = len(self.coefficients)
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            y = g.standard_normal(self.n_obs)
            if k:
                x = orthogonal_signal(x, k, ns)
                y = y + x[:, :k] @ np.asarray(self.coefficients)
                po[i] = _marginal_t_pvalue(x[:, 0], y)
            path, valid, plugin = self.conditional(x, y)
            j = tested[i] = int(path.action[0])
            p[i] = _marginal_t_pvalue(x[:, j], y)
            pc[i], pp[i] = valid.pvalue[0], plugin.pvalue[0]
            js = tested_s[i] = int(forward_stepwise(x[:ns], y[:ns], maxsteps=1).action[0])
            ps[i] = _marginal_t_pvalue(x[ns:, js], y[ns:])
        return finish(self, p, tested, tested_s,
                      {"pvalue_split": ps, "pvalue_conditional": pc, _PLUGIN: pp, _ORACLE: po})
