r"""Differentially private selectors: noisy statistics and sparse-vector screening.

Each selector is a frozen dataclass whose certificate depends on its parameters only
(THEORY.md 5.8). Sensitivities are declared by the user for replace-one neighbours
(THEORY.md 0.4); the selector cannot check them, so they are part of the contract.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_positive, check_real, check_rng
from ..accounting.certificates import ZCDP, PureDP
from ..mechanisms.gaussian import gaussian_mechanism
from ..mechanisms.laplace import laplace_mechanism
from ..mechanisms.sparse_vector import Sparse
from .base import Selection, declared_columns, ordered_labels
from .topk import non_finite_score_error

__all__ = ["NoisyStatistic", "SparseVectorScreen", "as_score_series"]


def as_score_series(scores: Any, name: str = "score") -> pd.Series:
    """Turn a score function's output into a float Series; NaN or infinite scores raise."""
    if isinstance(scores, pd.Series):
        s = scores.astype(np.float64)
    else:
        arr = np.asarray(scores, dtype=np.float64)
        if arr.ndim != 1:
            raise TypeError(f"`{name}` must return a pandas Series or a 1-d array; got shape {arr.shape}.")
        s = pd.Series(arr)
    bad = ~np.isfinite(s.to_numpy())
    if bad.any():
        label = s.index[np.flatnonzero(bad)[0]]
        raise ValueError(f"`{name}` returned a NaN or infinite score for candidate {label!r}; scores must be finite.")
    if s.index.has_duplicates:
        raise ValueError(f"`{name}` returned duplicate candidate labels.")
    return s


def _check_sampler(run: Callable[[np.random.Generator], Any], params: str) -> None:
    """Run a mechanism once on zeros (no data, a throwaway generator) so that parameters the exact
    samplers cannot handle are refused when the selector is built, not after the data are read."""
    try:
        run(np.random.default_rng(0))
    except (ValueError, OverflowError) as exc:
        text = str(exc)
        if "noise scale" in text and "too large" in text:
            why = "the noise scale would exceed what the exact sampler can draw (2^56 grid steps)"
        elif isinstance(exc, OverflowError):
            why = "the noise would be too small for the exact sampler (its exponents would exceed 2^62)"
        else:  # already names the argument, the value and what is allowed
            raise ValueError(text) from None
        raise ValueError(f"{params} cannot be used: {why}. Choose parameters with a moderate noise scale.") from None


def _declared_candidates(name: str, candidates: Any) -> tuple:
    """Validate a declared, ordered candidate set (non-empty, distinct, hashable); return it as a tuple."""
    if candidates is None:
        raise TypeError(f"`{name}` must be a sequence of candidate names declared before seeing the data; "
                        f"got {candidates!r}.")
    return ordered_labels(name, candidates, noun="candidate")


def _aligned_values(raw: Any, labels: tuple, name: str, what: str = "score") -> np.ndarray:
    """Values of a score or statistic in the DECLARED order of ``labels``, as float64.

    ``raw`` is a pandas Series indexed by exactly the declared labels (any order) or a 1-d
    array of the same length (taken in the declared order). Every error message is fixed
    (data-free): it never quotes a value, a label or a length computed from the data.
    """
    m = len(labels)
    shape_msg = (f"`{name}` must return one {what} per declared name: a pandas Series indexed by exactly the "
                 f"{m} declared names, or a one-dimensional array of length {m}.")
    arr = None
    if isinstance(raw, pd.Series):
        idx = raw.index
        ok = False
        try:
            ok = len(idx) == m and not idx.has_duplicates and bool(idx.isin(list(labels)).all())
            if ok:
                arr = raw.reindex(pd.Index(list(labels), tupleize_cols=False)).to_numpy(dtype=np.float64)
        except Exception:  # noqa: BLE001 - any failure gets the fixed message below
            arr = None
    else:
        try:
            arr = np.asarray(raw, dtype=np.float64)
        except Exception:  # noqa: BLE001
            arr = None
        if arr is not None and arr.shape != (m,):
            arr = None
    if arr is None or arr.shape != (m,):
        raise ValueError(shape_msg)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise non_finite_score_error(name, labels, bad, what)
    return arr


@dataclass(frozen=True, slots=True)
class NoisyStatistic:
    r"""Release a statistic of the data with exact Laplace or discrete Gaussian noise.

    Parameters
    ----------
    statistic : callable DataFrame -> float, array or Series
        The statistic (e.g. a vector of column means).
    sensitivity : float
        Declared sensitivity under replace-one neighbours: l1 for Laplace, l2 for Gaussian
        (a mean of a [0, 1]-valued column over n rows has 1/n).
    epsilon : float, optional
        ε > 0 (nats) for ``noise="laplace"``: certificate ``PureDP(epsilon)``.
    rho : float, optional
        ρ > 0 (nats) for ``noise="gaussian"``: certificate ``ZCDP(rho)``.
    noise : {"laplace", "gaussian"}
    integer : bool
        The statistic is integer-valued (counts) with an integer sensitivity: noise is added on
        the integers directly. Otherwise the statistic is rounded to a fine power-of-two grid
        (see :mod:`selective.mechanisms.laplace`).
    label : str
    index : sequence of labels, optional (keyword only)
        The declared names of the statistic's coordinates, fixed before seeing the data. The
        statistic must then return a pandas Series indexed by exactly these names (any order;
        it is reindexed to the declared order) or a 1-d array of this length (taken in the
        declared order), and the release is a Series with this index. Without ``index`` the
        statistic must return a single number and the release is a number. Anything else
        raises a ValueError whose message does not depend on the data, so the shape and labels
        of the release never come from the data.

    Notes
    -----
    Laplace: Dwork and Roth (2014), Theorem 3.6, realised with the discrete Laplace of Canonne,
    Kamath and Steinke (2020). Gaussian: discrete Gaussian, :math:`\Delta^2/(2\sigma^2)`-zCDP
    (CKS 2020; THEORY.md 5.2).
    """

    statistic: Callable[[pd.DataFrame], Any]
    sensitivity: float
    epsilon: float | None = None
    rho: float | None = None
    noise: str = "laplace"
    integer: bool = False
    label: str = "noisy statistic"
    index: tuple | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        check_choice("noise", self.noise, ("laplace", "gaussian"))
        if self.index is not None:
            object.__setattr__(self, "index", _declared_candidates("index", self.index))
        if not callable(self.statistic):
            raise TypeError(f"`statistic` must be callable; got {self.statistic!r}.")
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        if self.noise == "laplace":
            if self.epsilon is None or self.rho is not None:
                raise ValueError("noise='laplace' needs `epsilon` (and no `rho`).")
            object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        else:
            if self.rho is None or self.epsilon is not None:
                raise ValueError("noise='gaussian' needs `rho` (and no `epsilon`).")
            object.__setattr__(self, "rho", check_positive("rho", self.rho))
        if not isinstance(self.integer, bool):
            raise TypeError(f"`integer` must be True or False; got {self.integer!r}.")
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a string; got {self.label!r} ({type(self.label).__name__}).")
        zeros = np.zeros(1 if self.index is None else len(self.index),
                         dtype=np.int64 if self.integer else np.float64)
        if self.noise == "laplace":
            _check_sampler(lambda g: laplace_mechanism(zeros, sensitivity=self.sensitivity, epsilon=self.epsilon,
                                                       rng=g, integer=self.integer),
                           f"`epsilon` = {self.epsilon!r} with `sensitivity` = {self.sensitivity!r}")
        else:
            _check_sampler(lambda g: gaussian_mechanism(zeros, sensitivity=self.sensitivity, rho=self.rho, rng=g,
                                                        integer=self.integer),
                           f"`rho` = {self.rho!r} with `sensitivity` = {self.sensitivity!r}")

    def certificate(self) -> PureDP | ZCDP:
        """``PureDP(epsilon)`` (Laplace) or ``ZCDP(rho)`` (Gaussian)."""
        return PureDP(self.epsilon) if self.noise == "laplace" else ZCDP(self.rho)

    def noise_scale(self) -> float:
        """The scale of the noise :meth:`select` adds, in the statistic's units, known before the
        data: the discrete Laplace scale (Laplace) or the discrete Gaussian's sigma (Gaussian)
        times the grid step. On that fine grid the continuous law of the same scale describes
        the release (randomized selective inference, docs/THEORY.md 3.12)."""
        zeros = np.zeros(1 if self.index is None else len(self.index), dtype=np.int64 if self.integer else np.float64)
        g = np.random.default_rng(0)  # the scale does not depend on the draw
        if self.noise == "laplace":
            rel = laplace_mechanism(zeros, sensitivity=self.sensitivity, epsilon=self.epsilon, rng=g,
                                    integer=self.integer)
            return float(rel.scale) * float(rel.unit)
        rel = gaussian_mechanism(zeros, sensitivity=self.sensitivity, rho=self.rho, rng=g, integer=self.integer)
        return math.sqrt(float(rel.sigma2)) * float(rel.unit)

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``statistic`` declares it reads (if it has ``required_columns()``)."""
        return {f"statistic.{k}": v for k, v in declared_columns(self.statistic).items()}

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        """Compute the statistic and return it with noise; the un-noised value is not kept."""
        rng = check_rng(rng)
        raw = self.statistic(data)
        if self.index is not None:
            arr = _aligned_values(raw, self.index, "statistic", "value")
        else:
            arr = _single_value(raw)
            if not np.all(np.isfinite(arr)):
                raise ValueError("`statistic` returned a NaN or infinite value; it must be finite.")
        if self.integer:
            if not np.all(arr == np.rint(arr)):
                raise ValueError("`statistic` must return integers when `integer=True`.")
            arr = arr.astype(np.int64)
        if self.noise == "laplace":
            rel = laplace_mechanism(arr, sensitivity=self.sensitivity, epsilon=self.epsilon, rng=rng,
                                    integer=self.integer)
        else:
            rel = gaussian_mechanism(arr, sensitivity=self.sensitivity, rho=self.rho, rng=rng, integer=self.integer)
        values: Any = rel.values
        if self.index is not None:
            values = pd.Series(values, index=pd.Index(list(self.index), tupleize_cols=False), name="noisy")
        else:
            values = values.item()
        details = {"noise": self.noise, "sensitivity": self.sensitivity, "grid_unit": rel.unit,
                   "n_values": 1 if self.index is None else len(self.index)}
        return Selection(value=values, certificate=rel.certificate, label=self.label, details=details)


def _single_value(raw: Any) -> np.ndarray:
    """A statistic declared scalar (no ``index``): a 0-d float array, else a data-free error."""
    msg = ("`statistic` must return a single number when no `index` is declared; declare `index` "
           "(the names of its values) for a vector statistic.")
    arr = None
    if not isinstance(raw, (pd.Series, pd.DataFrame)):
        try:
            arr = np.asarray(raw, dtype=np.float64)
        except Exception:  # noqa: BLE001 - the fixed message below
            arr = None
    if arr is None or arr.ndim != 0:
        raise ValueError(msg)
    return arr


@dataclass(frozen=True, slots=True)
class SparseVectorScreen:
    r"""All candidates whose noisy score crosses a threshold, at most ``max_selected`` of them.

    Runs Sparse (Dwork and Roth 2014, Algorithm 2) over the candidates in their DECLARED
    order, with c = ``max_selected``; stops at the c-th crossing. Certificate
    ``PureDP(epsilon)`` whatever the number of candidates. The candidates and their order are
    declared in advance: the order of the queries must not depend on the data.

    Parameters
    ----------
    score : callable DataFrame -> pandas.Series
        One score per candidate (finite), each of sensitivity ``sensitivity``: a Series indexed
        by exactly the declared candidates (any order; reindexed to the declared one) or a 1-d
        array in the declared order. Other labels, a wrong length or a NaN raise a ValueError
        whose message does not depend on the data.
    threshold : float
    epsilon : float
        ε > 0, nats.
    sensitivity : float
        Δ > 0 of every score (replace-one neighbours).
    max_selected : int
        c >= 1.
    label : str
    candidates : sequence of labels (keyword only, required)
        The declared candidate names, in the order in which they are queried.
    """

    score: Callable[[pd.DataFrame], pd.Series]
    threshold: float
    epsilon: float
    sensitivity: float
    max_selected: int
    label: str = "sparse vector screen"
    candidates: tuple = field(kw_only=True)

    def __post_init__(self) -> None:
        if not callable(self.score):
            raise TypeError(f"`score` must be callable; got {self.score!r}.")
        object.__setattr__(self, "candidates", _declared_candidates("candidates", self.candidates))
        object.__setattr__(self, "threshold", check_real("threshold", self.threshold))
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "max_selected", check_int("max_selected", self.max_selected, low=1))
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a string; got {self.label!r} ({type(self.label).__name__}).")
        _check_sampler(lambda g: Sparse(self.threshold, epsilon=self.epsilon, sensitivity=self.sensitivity,
                                        c=self.max_selected, rng=g).screen(np.zeros(1)),
                       f"`epsilon` = {self.epsilon!r} with `sensitivity` = {self.sensitivity!r}")

    def certificate(self) -> PureDP:
        """``PureDP(epsilon)``."""
        return PureDP(self.epsilon)

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``score`` declares it reads (if it has ``required_columns()``)."""
        return {f"score.{k}": v for k, v in declared_columns(self.score).items()}

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        rng = check_rng(rng)
        scores = _aligned_values(self.score(data), self.candidates, "score")
        sv = Sparse(self.threshold, epsilon=self.epsilon, sensitivity=self.sensitivity, c=self.max_selected, rng=rng)
        hits = sv.screen(scores)
        chosen = [self.candidates[i] for i in hits]
        details = {"n_candidates": len(self.candidates), "threshold": self.threshold,
                   "max_selected": self.max_selected}
        return Selection(value=tuple(chosen), certificate=sv.certificate(), label=self.label, details=details)
