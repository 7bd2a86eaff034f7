r"""Description-length selectors: the output takes at most N values (THEORY.md 2.5, 5.6).

Each returns a :class:`~selective.selectors.base.Selection` whose certificate is
``DescriptionLength(N)`` with N fixed by the selector's parameters, never by the data:
max-information :math:`\log_2(N/\beta)` bits for every distribution (DFHPRR Thm 17 [NIPS Thm 6]).

Outcome counts [THEORY.md 2.5]: choice from a declared set, ``len(set)``; ordered top-k, m!/(m-k)!;
SparseValidate(m, B), :math:`\sum_{j\le B}\binom mj`; b-bit answers, :math:`2^b` each;
lasso support of size at most s, :math:`\sum_{j\le s}\binom pj` (times :math:`2^j` with signs);
forward stepwise path of s steps, p!/(p-s)!.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive, check_real
from ..accounting.certificates import DescriptionLength
from .base import Selection, declared_columns, missing_columns, ordered_labels
from .dp import _aligned_values, _declared_candidates
from .scores import candidate_scores
from .sparse_validate import SparseValidate  # noqa: F401  (its home before 0.2)

__all__ = [
    "candidate_scores",
    "FiniteChoice",
    "OrderedTopK",
    "SparseValidate",
    "QuantizedAnswer",
    "LassoSupport",
    "ForwardStepwise",
    "n_ordered_topk",
    "n_supports",
]


def n_ordered_topk(m: int, k: int) -> int:
    """m!/(m-k)!: ordered choices of k among m."""
    return math.perm(check_int("m", m, low=1), check_int("k", k, low=0, high=m))


def n_supports(p: int, s: int, *, signs: bool = False) -> int:
    r""":math:`\sum_{j\le s}\binom pj` supports of size at most s (times :math:`2^j` with signs)."""
    pp = check_int("p", p, low=1)
    ss = check_int("s", s, low=0, high=pp)
    return sum(math.comb(pp, j) * (2**j if signs else 1) for j in range(ss + 1))


@dataclass(frozen=True, slots=True)
class FiniteChoice:
    """A user function picks one element of a finite candidate set declared in advance.

    Certificate ``DescriptionLength(len(candidates))``. The function's result is matched
    against the declared candidates (identity, then ``==``, in declared order) and the MATCHING
    DECLARED OBJECT is returned, never the function's own object: a value that merely compares
    equal (a ``str`` subclass carrying extra attributes, an object whose ``__eq__`` always says
    yes) cannot carry data out. A result that matches no candidate raises a ValueError whose
    message does not quote it (the message is the same whatever the data).
    """

    candidates: tuple
    choose: Callable[[pd.DataFrame], Any]
    label: str = "finite choice"

    def __post_init__(self) -> None:
        cands = _ordered_objects("candidates", self.candidates)
        if len(cands) == 0:
            raise ValueError("`candidates` must hold at least one candidate; got none.")
        if len(set(map(repr, cands))) != len(cands):
            raise ValueError("`candidates` must be distinct.")
        if not callable(self.choose):
            raise TypeError(f"`choose` must be callable; got {self.choose!r}.")
        _check_label(self.label)
        object.__setattr__(self, "candidates", cands)

    def certificate(self) -> DescriptionLength:
        return DescriptionLength(len(self.candidates))

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``choose`` declares it reads (if it has ``required_columns()``)."""
        return _prefixed("choose", self.choose)

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        picked = self.choose(data)
        match = _match_declared(picked, self.candidates)
        if match is None:
            raise ValueError("`choose` returned a value that is not among the declared candidates.")
        return Selection(value=self.candidates[match], certificate=self.certificate(), label=self.label,
                         details={"n_candidates": len(self.candidates)})


def _ordered_objects(name: str, value: Any) -> tuple:
    """A declared collection of candidate objects (any objects, hashable or not) in a fixed order."""
    if value is None or isinstance(value, (str, bytes, Set, Mapping)) or not isinstance(
            value, (Sequence, np.ndarray, pd.Index, pd.Series)):
        kind = "a set, whose order is arbitrary" if isinstance(value, Set) else type(value).__name__
        raise TypeError(f"`{name}` must be an ordered collection (a list or tuple) of candidates declared before the "
                        f"data are seen; got {value!r} ({kind}).")
    return tuple(value.tolist()) if isinstance(value, (np.ndarray, pd.Index, pd.Series)) else tuple(value)


def _check_label(label: Any) -> None:
    if not isinstance(label, str):
        raise TypeError(f"`label` must be a string; got {label!r} ({type(label).__name__}).")


def _prefixed(arg: str, obj: Any) -> dict[str, tuple]:
    return {f"{arg}.{k}": v for k, v in declared_columns(obj).items()}


def _match_declared(picked: Any, candidates: tuple) -> int | None:
    """Position of the first declared candidate that is ``picked`` or equals it; None if none."""
    for i, c in enumerate(candidates):
        if picked is c:
            return i
    for i, c in enumerate(candidates):
        if _equal(c, picked):
            return i
    return None


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a failing comparison is "not equal"
        return False


@dataclass(frozen=True, slots=True)
class OrderedTopK:
    """The k declared candidates with the largest scores, in score order (ties: earlier declared first).

    Parameters
    ----------
    k : int
        Number of candidates kept, 1 <= k <= m.
    score : callable DataFrame -> pandas.Series
        One finite score per declared candidate: a Series indexed by exactly the declared
        candidates (any order) or a 1-d array in the declared order. Other labels, a wrong
        length or a NaN raise a ValueError whose message does not depend on the data.
    label : str
    candidates : sequence of labels (keyword only, required)
        The m candidate names, declared before seeing the data; they fix the output space.

    Notes
    -----
    Certificate ``DescriptionLength(m!/(m-k)!)`` (ordered choices of k among the m declared
    candidates; DFHPRR Thm 17, THEORY.md 2.5), available from :meth:`certificate` before the
    data are seen.
    """

    k: int
    score: Callable[[pd.DataFrame], pd.Series]
    label: str = "ordered top-k"
    candidates: tuple = field(kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, low=1))
        if not callable(self.score):
            raise TypeError(f"`score` must be callable; got {self.score!r}.")
        cands = _declared_candidates("candidates", self.candidates)
        if self.k > len(cands):
            raise ValueError(f"`k` must be at most the number of candidates ({len(cands)}); got {self.k}.")
        _check_label(self.label)
        object.__setattr__(self, "candidates", cands)

    def certificate(self) -> DescriptionLength:
        """``DescriptionLength(m!/(m-k)!)``, m = number of declared candidates."""
        return DescriptionLength(n_ordered_topk(len(self.candidates), self.k))

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``score`` declares it reads (if it has ``required_columns()``)."""
        return _prefixed("score", self.score)

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        s = _aligned_values(self.score(data), self.candidates, "score")
        order = np.argsort(-s, kind="stable")[: self.k]
        chosen = tuple(self.candidates[i] for i in order)
        return Selection(value=chosen, certificate=self.certificate(), label=self.label,
                         details={"n_candidates": len(self.candidates), "k": self.k})


@dataclass(frozen=True, slots=True)
class QuantizedAnswer:
    """A statistic in [low, high] reported with ``bits`` bits per coordinate.

    The value is clipped to [low, high] and mapped to the midpoint of one of 2^bits equal cells.
    Certificate ``DescriptionLength(2**(bits * n_values))``; ``n_values`` (the length of the
    statistic, 1 for a scalar) is declared so the certificate does not depend on the data.
    """

    statistic: Callable[[pd.DataFrame], Any]
    bits: int
    low: float
    high: float
    n_values: int = 1
    label: str = "quantized answer"

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", check_int("bits", self.bits, low=1, high=64))
        object.__setattr__(self, "low", check_real("low", self.low))
        object.__setattr__(self, "high", check_real("high", self.high))
        if not self.high > self.low:
            raise ValueError(f"`high` must be larger than `low` ({self.low!r}); got {self.high!r}.")
        object.__setattr__(self, "n_values", check_int("n_values", self.n_values, low=1))
        if not callable(self.statistic):
            raise TypeError(f"`statistic` must be callable; got {self.statistic!r}.")
        _check_label(self.label)

    def certificate(self) -> DescriptionLength:
        return DescriptionLength(2 ** (self.bits * self.n_values))

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``statistic`` declares it reads (if it has ``required_columns()``)."""
        return _prefixed("statistic", self.statistic)

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        raw = np.asarray(self.statistic(data), dtype=np.float64).ravel()
        if raw.size != self.n_values:
            raise ValueError(f"`statistic` must return {self.n_values} value(s); got {raw.size}.")
        if not np.all(np.isfinite(raw)):
            raise ValueError("`statistic` returned a NaN or infinite value; it must be finite.")
        cells = 2**self.bits
        width = (self.high - self.low) / cells
        idx = np.clip(np.floor((np.clip(raw, self.low, self.high) - self.low) / width), 0, cells - 1)
        vals = self.low + (idx + 0.5) * width
        value: Any = float(vals[0]) if self.n_values == 1 else tuple(float(v) for v in vals)
        return Selection(value=value, certificate=self.certificate(), label=self.label,
                         details={"bits": self.bits, "low": self.low, "high": self.high})


def _design(data: pd.DataFrame, target: Any, features: tuple) -> tuple[np.ndarray, np.ndarray, list]:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    problem = missing_columns(data, {"target": (target,), "features": features})
    if problem:
        raise ValueError(problem)
    repeated = set(data.columns[data.columns.duplicated()])
    dup = [c for c in (target, *features) if c in repeated]
    if dup:
        raise ValueError(f"`data` has more than one column labelled {dup[:5]!r}; column labels must be unique.")
    feats = list(features)
    x = data[feats].to_numpy(dtype=np.float64)
    y = data[target].to_numpy(dtype=np.float64)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("`data` must not contain NaN or infinite values in the target or features.")
    return x, y, feats


def _features(target: Any, features: Any) -> tuple:
    """The declared features: an ordered collection of distinct labels, without the target."""
    feats = ordered_labels("features", features, noun="column label")
    try:
        hash(target)
    except TypeError:
        raise TypeError(f"`target` must be a column label; got {target!r} ({type(target).__name__}).") from None
    if target in feats:
        raise ValueError(f"`target` {target!r} must not be one of `features`.")
    return feats


def _model_columns(target: Any, features: tuple) -> dict[str, tuple]:
    return {"target": (target,), "features": features}


def check_support_fields(sel: Any) -> None:
    """Check and normalise the fields a lasso-support selector shares (features, lam, max_size,
    signs, label) in place."""
    feats = _features(sel.target, sel.features)
    object.__setattr__(sel, "features", feats)
    object.__setattr__(sel, "lam", check_positive("lam", sel.lam))
    object.__setattr__(sel, "max_size", check_int("max_size", sel.max_size, low=0, high=len(feats)))
    if not isinstance(sel.signs, bool):
        raise TypeError(f"`signs` must be True or False; got {sel.signs!r}.")
    _check_label(sel.label)


def check_path_fields(sel: Any) -> None:
    """Check and normalise the fields a stepwise-path selector shares (features, steps, label) in place."""
    feats = _features(sel.target, sel.features)
    object.__setattr__(sel, "features", feats)
    object.__setattr__(sel, "steps", check_int("steps", sel.steps, low=1, high=len(feats)))
    _check_label(sel.label)


def support_value(feats: tuple, coef: np.ndarray, active: np.ndarray, max_size: int, signs: bool) -> tuple:
    """The selected labels (with their signs when ``signs``), cut to the ``max_size`` largest
    ``|coef|`` (a fixed rule, so the outcome count holds)."""
    if active.size > max_size:
        active = np.sort(active[np.argsort(-np.abs(coef[active]), kind="stable")[:max_size]])
    if signs:
        return tuple((feats[j], int(np.sign(coef[j]))) for j in active)
    return tuple(feats[j] for j in active)


@dataclass(frozen=True, slots=True)
class LassoSupport:
    r"""Support of the lasso at a fixed λ, at most ``max_size`` variables among ``n_features``.

    Solves :math:`\min_b \frac1{2n}\|y-a-Xb\|^2+\frac{\lambda}{n}\|b\|_1` (the objective
    :math:`\frac12\|y-Xb\|^2+\lambda\|b\|_1` of R selectiveInference) with
    ``sklearn.linear_model.Lasso(alpha=lam/n, tol=tol, max_iter=max_iter)`` and an unpenalised
    intercept; a coefficient counts as selected when ``|b_j| > coef_tol``. If more than
    ``max_size`` are selected, the ``max_size`` largest in absolute value are kept (a fixed rule,
    so the outcome count holds). Certificate ``DescriptionLength(sum_{j<=s} C(p, j) [2^j])``.

    ``features`` must be declared as a list or tuple of column labels (its length p fixes the
    certificate; a string or a set is refused), without ``target``. Missing columns are refused
    before the data are touched when the selector runs through :class:`~selective.Analysis`
    (:meth:`required_columns`).
    """

    target: Any
    features: tuple
    lam: float
    max_size: int
    signs: bool = False
    tol: float = 1e-10
    coef_tol: float = 1e-8
    max_iter: int = 100_000
    label: str = "lasso support"

    def __post_init__(self) -> None:
        check_support_fields(self)
        object.__setattr__(self, "tol", check_positive("tol", self.tol))
        object.__setattr__(self, "coef_tol", check_positive("coef_tol", self.coef_tol, allow_zero=True))
        object.__setattr__(self, "max_iter", check_int("max_iter", self.max_iter, low=1))

    def certificate(self) -> DescriptionLength:
        return DescriptionLength(n_supports(len(self.features), self.max_size, signs=self.signs))

    def required_columns(self) -> dict[str, tuple]:
        """``{"target": (target,), "features": features}``: checked before the data are touched."""
        return _model_columns(self.target, self.features)

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        from sklearn.linear_model import Lasso

        x, y, feats = _design(data, self.target, self.features)
        n = x.shape[0]
        model = Lasso(alpha=self.lam / n, fit_intercept=True, tol=self.tol, max_iter=self.max_iter)
        model.fit(x, y)
        coef = model.coef_
        value = support_value(feats, coef, np.flatnonzero(np.abs(coef) > self.coef_tol), self.max_size, self.signs)
        return Selection(value=value, certificate=self.certificate(), label=self.label,
                         details={"lam": self.lam, "max_size": self.max_size, "n_features": len(feats),
                                  "solver": f"sklearn Lasso(alpha=lam/n, tol={self.tol})"})


@dataclass(frozen=True, slots=True)
class ForwardStepwise:
    """Forward stepwise regression path of ``steps`` steps (with intercept), ordered.

    At each step adds the feature whose inclusion most reduces the residual sum of squares
    (largest squared partial correlation with the current residual; ties to the earlier
    feature). Certificate ``DescriptionLength(p!/(p-s)!)``. ``features``: a list or tuple of
    column labels, declared (a string or a set is refused), without ``target``.
    """

    target: Any
    features: tuple
    steps: int
    label: str = "forward stepwise"

    def __post_init__(self) -> None:
        check_path_fields(self)

    def certificate(self) -> DescriptionLength:
        return DescriptionLength(n_ordered_topk(len(self.features), self.steps))

    def required_columns(self) -> dict[str, tuple]:
        """``{"target": (target,), "features": features}``: checked before the data are touched."""
        return _model_columns(self.target, self.features)

    def select(self, data: pd.DataFrame, rng: Any = None) -> Selection:
        x, y, feats = _design(data, self.target, self.features)
        xc = x - x.mean(axis=0)
        r = y - y.mean()
        path: list[int] = []
        basis = np.zeros((x.shape[0], 0))
        for _ in range(self.steps):
            xp = xc - basis @ (basis.T @ xc)
            norms = np.einsum("ij,ij->j", xp, xp)
            with np.errstate(divide="ignore", invalid="ignore"):
                gain = (xp.T @ r) ** 2 / norms
            gain[norms <= 1e-12 * max(1.0, float(norms.max(initial=0.0)))] = -np.inf
            gain[path] = -np.inf
            j = int(np.argmax(gain))
            if not np.isfinite(gain[j]):
                raise ValueError("forward stepwise: no remaining feature is linearly independent of the path.")
            q = xp[:, j] / math.sqrt(norms[j])
            basis = np.column_stack([basis, q])
            r = r - q * (q @ r)
            path.append(j)
        return Selection(value=tuple(feats[j] for j in path), certificate=self.certificate(), label=self.label,
                         details={"steps": self.steps, "n_features": len(feats)})
