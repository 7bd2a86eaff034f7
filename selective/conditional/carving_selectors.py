r"""Lasso and forward stepwise selection on a randomized response (carving), for the report.

:class:`RandomizedLassoSupport` and :class:`RandomizedForwardStepwise` select as
:class:`~selective.selectors.LassoSupport` and :class:`~selective.selectors.ForwardStepwise` do,
but on :math:`y+\omega` with :math:`\omega\sim N(0,\tau^2 I)` drawn from the analysis' generator
(independent of the data, reproducible from the analysis' seed). Their certificate is the same
description length (the number of possible outcomes does not depend on how the choice is made),
so the ledger's corrected columns are as for the unrandomized selectors.

What the randomization buys is the exact conditional column: a regression of the target on
exactly the selected features with an intercept, run with
``Analysis.test(CoefficientTest(...), conditional_on=selection)``, gets the p-value and interval
of :func:`selective.conditional.randomized_lasso_inference` /
:func:`~selective.conditional.randomized_stepwise_inference`, which use all of :math:`y`
(docs/THEORY.md 3.13). That column is exact when the errors are Gaussian with the declared sd
``sigma``; the selector declares ``sigma`` because the inference needs it, and the selection
itself uses it only for the default ``noise_sd`` (= ``sigma``).

The selection records the :math:`\omega` it drew (``details["randomization"]``): noise, not
data, and what the conditional column integrates over. The details are a read-only mapping and
the array a view of immutable bytes, so the recorded noise cannot be swapped for a draw that
happens to give a smaller p-value.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..selectors.base import Selection
from ..selectors.description import (
    ForwardStepwise,
    LassoSupport,
    _design,
    check_path_fields,
    check_support_fields,
    support_value,
)

__all__ = ["RandomizedLassoSupport", "RandomizedForwardStepwise", "MIN_NOISE_RATIO"]

#: noise_sd / sigma below which the conditional law is not tabulated (as the inference functions)
MIN_NOISE_RATIO = 0.01


def _noise(sigma: Any, noise_sd: Any) -> tuple[float, float]:
    from ._checks import check_scale

    sigma = check_scale("sigma", sigma)
    noise_sd = sigma if noise_sd is None else check_scale("noise_sd", noise_sd)
    if noise_sd < MIN_NOISE_RATIO * sigma:
        raise ValueError(f"`noise_sd` must be at least {MIN_NOISE_RATIO:g} * sigma = {MIN_NOISE_RATIO * sigma:.4g}; "
                         f"got {noise_sd!r}. Without randomization use LassoSupport or ForwardStepwise.")
    return sigma, noise_sd


def _set_noise(sel: Any) -> None:
    """Check ``sel.sigma`` and ``sel.noise_sd`` and store them (``noise_sd`` defaults to ``sigma``)."""
    sigma, noise_sd = _noise(sel.sigma, sel.noise_sd)
    object.__setattr__(sel, "sigma", sigma)
    object.__setattr__(sel, "noise_sd", noise_sd)


def _draw(n: int, noise_sd: float, rng: Any) -> np.ndarray:
    from .randomized_response import draw_randomization

    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy Generator or None; got {type(rng).__name__}.")
    # a view of immutable bytes: it cannot be made writeable again (the report reads it back)
    return np.frombuffer(draw_randomization(n, noise_sd, rng).tobytes(), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class RandomizedLassoSupport:
    r"""Support of the lasso at a fixed λ on the randomized response :math:`y+\omega`.

    Solves :math:`\frac12\|u-a-Xb\|^2+\lambda\|b\|_1` with an unpenalised intercept on
    :math:`u=y+\omega`, :math:`\omega\sim N(0,\text{noise\_sd}^2 I)` (the solver and the
    selection rule of :func:`selective.conditional.randomized_lasso_inference`, so the report
    can recompute the event). At most ``max_size`` variables are kept (the largest in absolute
    value): the certificate is ``DescriptionLength(sum_{j<=s} C(p, j) [2^j])`` as for
    :class:`~selective.selectors.LassoSupport`. When more were selected, the conditional
    column is withheld (the kept variables are not the lasso's event).

    Parameters
    ----------
    target, features, lam, max_size, signs, label
        As :class:`~selective.selectors.LassoSupport` (``lam`` on the same scale). The noise of
        :math:`y+\omega` has sd :math:`\sqrt{\sigma^2+\tau^2}`: a ``lam`` chosen for y selects
        as strictly on :math:`y+\omega` when multiplied by :math:`\sqrt{1+\tau^2/\sigma^2}`
        (:math:`\sqrt2` at the default; unscaled, more noise variables enter: in the lasso
        scenario of the simulation library a third of the tested slots were real effects
        unscaled, three fifths scaled).
    sigma : float
        The declared sd of the errors of ``target`` given the features: the conditional
        column is exact for it (stated too small, it rejects too often; the report withholds
        the column when the residuals make the declared value implausible).
    noise_sd : float, optional
        The randomization's sd :math:`\tau` (default ``sigma``: the selection sees the data at
        the signal-to-noise of half the sample). At least ``0.01 * sigma``.
    """

    target: Any
    features: tuple
    lam: float
    max_size: int
    sigma: float
    noise_sd: float | None = None
    signs: bool = False
    label: str = "randomized lasso support"

    def __post_init__(self) -> None:
        check_support_fields(self)
        _set_noise(self)

    # the outcome count and the columns read do not depend on the randomization
    certificate = LassoSupport.certificate
    required_columns = LassoSupport.required_columns

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        from .randomized_response import lasso_active_set

        x, y, feats = _design(data, self.target, self.features)
        omega = _draw(x.shape[0], float(self.noise_sd), rng)
        fit, active = lasso_active_set(x, y + omega, self.lam)
        truncated = active.size > self.max_size
        value = support_value(feats, fit.beta, active, self.max_size, self.signs)
        return Selection(value=value, certificate=self.certificate(), label=self.label,
                         details=MappingProxyType({
                             "lam": self.lam, "max_size": self.max_size, "n_features": len(feats),
                             "sigma": self.sigma, "noise_sd": self.noise_sd, "truncated": bool(truncated),
                             "randomization": omega, "solver": "solve_lasso on y + randomization"}))


@dataclass(frozen=True, slots=True)
class RandomizedForwardStepwise:
    r"""``steps`` steps of forward stepwise regression (with intercept) on the randomized
    response :math:`y+\omega`, :math:`\omega\sim N(0,\text{noise\_sd}^2 I)`; the ordered path.

    The path is :func:`selective.conditional.forward_stepwise`'s (the one
    :func:`~selective.conditional.randomized_stepwise_inference` conditions on). Certificate
    ``DescriptionLength(p!/(p-s)!)`` as :class:`~selective.selectors.ForwardStepwise`.
    ``sigma`` and ``noise_sd`` as :class:`RandomizedLassoSupport`.
    """

    target: Any
    features: tuple
    steps: int
    sigma: float
    noise_sd: float | None = None
    label: str = "randomized forward stepwise"

    def __post_init__(self) -> None:
        check_path_fields(self)
        _set_noise(self)

    # the outcome count and the columns read do not depend on the randomization
    certificate = ForwardStepwise.certificate
    required_columns = ForwardStepwise.required_columns

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        from .stepwise import forward_stepwise

        x, y, feats = _design(data, self.target, self.features)
        omega = _draw(x.shape[0], float(self.noise_sd), rng)
        path = forward_stepwise(x, y + omega, maxsteps=self.steps, intercept=True)
        if path.n_steps < self.steps:
            raise ValueError(f"forward stepwise on the randomized response stopped after {path.n_steps} steps, fewer "
                             f"than `steps` = {self.steps} (the remaining features are linearly dependent).")
        value = tuple(feats[int(j)] for j in path.action[: self.steps])
        return Selection(value=value, certificate=self.certificate(), label=self.label,
                         details=MappingProxyType({"steps": self.steps, "n_features": len(feats), "sigma": self.sigma,
                                                   "noise_sd": self.noise_sd, "randomization": omega}))
