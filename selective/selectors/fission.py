r"""Data fission and data thinning: two independent copies of an outcome, one to explore, one to test.

An alternative to data splitting that keeps every row in both parts. From each outcome value
:math:`X_i` and external randomness, build :math:`f(X_i)` (for the exploration) and
:math:`g(X_i)` (for the confirmation) such that, under the stated model, :math:`f(X)` and
:math:`g(X)` are independent and :math:`g(X)` has a known law with the same parameter. Anything
chosen by looking at :math:`f(X)` (and at covariates treated as fixed) is then independent of
:math:`g(X)`, and a test computed on :math:`g(X)` with its known law is valid as it is: no
correction, like data splitting, but with every row.

Decompositions (each exact under its model, rows independent, covariates fixed):

- **Poisson thinning** (Neufeld, Dharamshi, Gao and Witten, "Data thinning for convolution-closed
  distributions", JMLR 25, 2024; Leiner, Duan, Wasserman and Ramdas, "Data fission: splitting a
  single data point", JASA 2023, Section 2): :math:`X \sim \text{Poisson}(\mu)`,
  :math:`f \mid X \sim \text{Binomial}(X, \varepsilon)`, :math:`g = X - f`. Then
  :math:`f \sim \text{Poisson}(\varepsilon\mu)` and :math:`g \sim \text{Poisson}((1-\varepsilon)\mu)`
  are independent (the thinning property of the Poisson law). A model for :math:`g` is the model
  for :math:`X` with the exposure multiplied by :math:`1 - \varepsilon`.
- **Binomial thinning** (Neufeld et al. 2024): :math:`X \sim \text{Binomial}(m, p)` with
  :math:`m \ge 2` trials, :math:`f \mid X \sim \text{Hypergeometric}(m, X, m_1)` (successes among
  :math:`m_1` of the :math:`m` trials drawn without replacement), :math:`g = X - f`. Then
  :math:`f \sim \text{Binomial}(m_1, p)` and :math:`g \sim \text{Binomial}(m - m_1, p)` are
  independent (the trials are exchangeable given :math:`X`). Single Bernoulli outcomes
  (:math:`m = 1`) cannot be thinned this way: use data splitting.
- **Gaussian fission** (Leiner et al. 2023, their decomposition P1): :math:`X \sim N(\mu, \sigma^2)`
  with :math:`\sigma` **known**, :math:`Z \sim N(0, \sigma^2)` independent, :math:`f = X + \tau Z`,
  :math:`g = X - Z/\tau`. :math:`(f, g)` is jointly normal with
  :math:`\operatorname{Cov}(f, g) = \sigma^2 - \sigma^2 = 0`, so they are independent;
  :math:`g \sim N(\mu, \sigma^2(1 + \tau^{-2}))`. Inference on :math:`g` must use that known
  variance (a z test). With :math:`\sigma` estimated the decomposition is approximate (the two
  parts are not independent); a larger :math:`\tau` keeps more information for the confirmation.

The three agree in law with R datathin (Neufeld and Dharamshi), the reference implementation of
data thinning; Gaussian fission with ``tau`` is its normal thinning with ``K = 2`` and
``epsilon = (1 / (1 + tau**2), tau**2 / (1 + tau**2))``, rescaled: ``f = X1 / epsilon``,
``g = X2 / (1 - epsilon)`` (checked through the rpy2 bridge in the test suite; docs/THEORY.md 3.10).

What breaks them: overdispersion (Poisson thinning of negative-binomial counts leaves the parts
dependent), a wrong :math:`\sigma`, dependent rows, or choosing :math:`\varepsilon` / :math:`\tau`
after looking at the data. Each function's result records the model it assumes so that a report
can state it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_in_interval, check_rng

__all__ = ["Fission", "poisson_thinning", "binomial_thinning", "gaussian_fission"]


@dataclass(frozen=True, slots=True)
class Fission:
    """The two parts of an outcome and what their independence assumes.

    Attributes
    ----------
    explore : numpy.ndarray
        :math:`f(X)`, for the exploration (selection).
    confirm : numpy.ndarray
        :math:`g(X)`, for the tests.
    method : str
        ``"poisson_thinning"``, ``"binomial_thinning"`` or ``"gaussian_fission"``.
    parameter : float
        :math:`\\varepsilon` (thinning: the share of the mean or of the trials given to the
        exploration) or :math:`\\tau` (Gaussian fission).
    confirm_scale : numpy.ndarray
        What the confirmation's model needs: the exposure multiplier :math:`1-\\varepsilon`
        (Poisson), the confirmation's trials :math:`m - m_1` (binomial), or the known standard
        deviation :math:`\\sigma\\sqrt{1 + \\tau^{-2}}` (Gaussian).
    assumption : str
        The model under which the parts are independent, for a report's note.
    """

    explore: np.ndarray
    confirm: np.ndarray
    method: str
    parameter: float
    confirm_scale: np.ndarray
    assumption: str


def _vector(name: str, values: Any, *, integer: bool = False) -> np.ndarray:
    x = np.asarray(values)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"`{name}` must be a non-empty one-dimensional array; got shape {x.shape}.")
    if integer:
        if x.dtype.kind == "f":
            bad = ~np.isfinite(x) | (x != np.round(x))
            if bad.any():
                raise ValueError(f"`{name}` must hold non-negative integers; entry {int(np.flatnonzero(bad)[0])} "
                                 f"is {float(x[bad][0])!r}.")
        elif x.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must hold non-negative integers; got dtype {x.dtype}.")
        x = x.astype(np.int64)
        if (x < 0).any():
            raise ValueError(f"`{name}` must hold non-negative integers; entry {int(np.flatnonzero(x < 0)[0])} "
                             f"is {int(x[x < 0][0])}.")
        return x
    x = x.astype(float)
    if not np.isfinite(x).all():
        raise ValueError(f"`{name}` must be finite; entry {int(np.flatnonzero(~np.isfinite(x))[0])} is "
                         f"{float(x[~np.isfinite(x)][0])!r}.")
    return x


def poisson_thinning(counts: Any, *, epsilon: float = 0.5, rng: Any = None) -> Fission:
    r"""Split Poisson counts into two independent Poisson parts (binomial thinning of each count).

    Parameters
    ----------
    counts : array_like of int, shape (n,)
        Counts :math:`X_i \sim \text{Poisson}(\mu_i)`, independent (the means may differ by row).
    epsilon : float
        Share of each mean given to the exploration, ``0 < epsilon < 1``.
    rng : numpy.random.Generator or seed

    Returns
    -------
    Fission
        ``explore`` :math:`\sim \text{Poisson}(\varepsilon\mu_i)`, ``confirm``
        :math:`\sim \text{Poisson}((1-\varepsilon)\mu_i)`, independent; ``confirm_scale`` is
        :math:`1-\varepsilon` (multiply the exposure of a Poisson model for ``confirm`` by it,
        or add :math:`\log(1-\varepsilon)` to its offset).
    """
    x = _vector("counts", counts, integer=True)
    eps = check_in_interval("epsilon", epsilon, low=0.0, high=1.0, closed="neither")
    f = check_rng(rng).binomial(x, eps)
    return Fission(explore=f, confirm=x - f, method="poisson_thinning", parameter=eps,
                   confirm_scale=np.full(x.shape, 1.0 - eps),
                   assumption=f"Poisson counts, independent rows (thinning with epsilon = {eps:g}); "
                              "overdispersion makes the parts dependent")


def binomial_thinning(successes: Any, trials: Any, *, epsilon: float = 0.5, rng: Any = None) -> Fission:
    r"""Split binomial counts into two independent binomial parts (hypergeometric thinning).

    Parameters
    ----------
    successes, trials : array_like of int, shape (n,)
        :math:`X_i \sim \text{Binomial}(m_i, p_i)`; every :math:`m_i \ge 2`.
    epsilon : float
        Share of each row's trials given to the exploration: :math:`m_{1,i} =
        \lfloor \varepsilon m_i \rceil`, clipped to ``[1, m_i - 1]`` so both parts have trials.

    Returns
    -------
    Fission
        ``explore`` :math:`\sim \text{Binomial}(m_{1,i}, p_i)`, ``confirm``
        :math:`\sim \text{Binomial}(m_i - m_{1,i}, p_i)`, independent; ``confirm_scale`` holds the
        confirmation's trials :math:`m_i - m_{1,i}`.
    """
    x = _vector("successes", successes, integer=True)
    m = _vector("trials", trials, integer=True)
    if m.shape != x.shape:
        raise ValueError(f"`trials` must have one entry per success count ({x.size}); got {m.size}.")
    if (m < 2).any():
        i = int(np.flatnonzero(m < 2)[0])
        raise ValueError(f"`trials` must be at least 2 in every row to thin (row {i} has {int(m[i])}); single "
                         "Bernoulli outcomes cannot be thinned: use data splitting.")
    if (x > m).any():
        i = int(np.flatnonzero(x > m)[0])
        raise ValueError(f"`successes` must not exceed `trials`; row {i} has {int(x[i])} > {int(m[i])}.")
    eps = check_in_interval("epsilon", epsilon, low=0.0, high=1.0, closed="neither")
    m1 = np.clip(np.rint(eps * m).astype(np.int64), 1, m - 1)
    f = check_rng(rng).hypergeometric(x, m - x, m1)
    return Fission(explore=f, confirm=x - f, method="binomial_thinning", parameter=eps,
                   confirm_scale=(m - m1).astype(float),
                   assumption=f"binomial counts with exchangeable trials, independent rows (thinning with "
                              f"epsilon = {eps:g})")


def gaussian_fission(values: Any, *, sigma: Any, tau: float = 1.0, rng: Any = None) -> Fission:
    r"""Split Gaussian outcomes with a known noise level into two independent Gaussian parts.

    Parameters
    ----------
    values : array_like, shape (n,)
        :math:`X_i \sim N(\mu_i, \sigma_i^2)`, independent.
    sigma : float or array_like, shape (n,)
        The **known** standard deviation(s) :math:`\sigma_i` (not estimated from these data).
    tau : float
        Fission parameter, ``tau > 0``: the exploration sees :math:`X + \tau Z` (larger ``tau``:
        noisier exploration, sharper confirmation).

    Returns
    -------
    Fission
        ``explore`` :math:`= X + \tau Z`, ``confirm`` :math:`= X - Z/\tau`, independent;
        ``confirm_scale`` holds the confirmation's known standard deviation
        :math:`\sigma_i\sqrt{1 + \tau^{-2}}` (use a z test with it, not a t test).
    """
    x = _vector("values", values)
    s = np.broadcast_to(np.asarray(sigma, dtype=float), x.shape) if np.ndim(sigma) <= 1 else None
    if s is None or s.shape != x.shape or not (np.isfinite(s).all() and (s > 0).all()):
        raise ValueError(f"`sigma` must be one positive finite number or one per value ({x.size}); got {sigma!r}.")
    tau = check_in_interval("tau", tau, low=0.0, high=np.inf, closed="neither")
    z = check_rng(rng).normal(0.0, 1.0, x.shape) * s
    return Fission(explore=x + tau * z, confirm=x - z / tau, method="gaussian_fission", parameter=tau,
                   confirm_scale=s * np.sqrt(1.0 + tau**-2),
                   assumption=f"Gaussian outcomes with the known sigma given, independent rows (fission with "
                              f"tau = {tau:g}); an estimated sigma makes the parts dependent")
