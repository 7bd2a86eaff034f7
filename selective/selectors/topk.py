"""Top-k selectors: description-length top-k of m declared candidates, and DP noisy top-k."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive, check_rng
from ..accounting.certificates import DescriptionLength, PureDP
from ..exceptions import SelectiveWarning
from .base import NonFiniteScoreError, Selection, declared_columns, ordered_labels

__all__ = ["TopK", "NoisyTopK", "SignedMeanScore", "ScoreFunction"]

ScoreFunction = Callable[[pd.DataFrame], pd.Series]


def _check_candidates(candidates, k: int) -> tuple:
    if candidates is None:
        raise TypeError(
            f"`candidates` must be a sequence of candidate names declared before the data are seen; got {candidates!r}."
        )
    cands = ordered_labels("candidates", candidates)
    if k > len(cands):
        raise ValueError(f"`k` must be at most the number of candidates ({len(cands)}); got {k}.")
    return cands


def _check_name(name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string; got {name!r} ({type(name).__name__}).")


def _scores(score: ScoreFunction, data: pd.DataFrame, candidates: Sequence[str]) -> pd.Series:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    s = score(data)
    if not isinstance(s, pd.Series):
        s = pd.Series(np.asarray(s, dtype=float), index=list(candidates) if candidates is not None else None)
    if candidates is not None:
        if set(s.index) != set(candidates) or len(s) != len(candidates):
            # no names in the message: the score's index could carry information about the data
            raise ValueError(
                "`score` must return one score for each declared candidate and nothing else "
                f"({len(candidates)} names); the names it returned differ from `candidates`."
            )
        s = s.loc[list(candidates)]
    if s.index.has_duplicates:
        raise ValueError("`score` returned duplicate candidate names.")
    values = s.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        raise non_finite_score_error("score", s.index, bad)
    return s


def non_finite_score_error(name: str, labels: Sequence[Any], bad: np.ndarray,
                           what: str = "score") -> NonFiniteScoreError:
    """The error for NaN or infinite scores: it names the first such candidate in the declared order.

    The message takes one of ``len(labels)`` forms, each counted by :class:`~selective.Analysis`
    as one more outcome of a description-length step.
    """
    first = labels[int(np.flatnonzero(bad)[0])]
    return NonFiniteScoreError(
        f"`{name}` returned a NaN or infinite {what} for {first!r} (the first such in the declared order; "
        f"others may follow); it must return finite {what}s. Check that candidate on other data (a constant "
        "column, a missing value or a group with fewer than 2 rows gives NaN correlations and t statistics).",
        n_messages=len(labels),
    )


def _score_columns(score: Any) -> dict[str, tuple]:
    """The columns a score object declares (``score.required_columns()``), under ``score.<argument>``."""
    return {f"score.{k}": v for k, v in declared_columns(score).items()}


@dataclass(frozen=True, slots=True)
class TopK:
    """Keep the ``k`` declared candidates with the largest score (description length).

    Parameters
    ----------
    k : int
        How many candidates to keep, >= 1.
    score : callable
        ``score(data) -> pandas.Series`` of scores indexed by candidate name. Any function of
        the data: the guarantee comes from the number of possible outcomes, not from noise.
    candidates : sequence of str
        The declared candidate set (m names), fixed before the data are seen. The scores are
        read in this order; a score series with other names is refused. (Taking the candidate
        set from the data would make the outcome count, hence the certificate, data-dependent.)
    ordered : bool, default False
        If False the output is a set (returned in input order): :math:`\\binom mk` outcomes.
        If True the output is ranked (best first): :math:`m!/(m-k)!` outcomes.

    Notes
    -----
    Certificate ``DescriptionLength(C(m, k))`` (or ``m!/(m-k)!`` ordered): DFHPRR Theorem 17
    (THEORY.md 2.5, outcome counts).
    """

    k: int
    score: ScoreFunction
    candidates: tuple[str, ...]
    ordered: bool = False
    name: str = field(default="top-k", compare=False)

    def __post_init__(self) -> None:
        check_int("k", self.k, low=1)
        if not callable(self.score):
            raise TypeError(f"`score` must be a callable data -> pandas.Series; got {self.score!r}.")
        object.__setattr__(self, "candidates", _check_candidates(self.candidates, self.k))
        if not isinstance(self.ordered, bool):
            raise TypeError(f"`ordered` must be True or False; got {self.ordered!r}.")
        _check_name(self.name)

    def n_outcomes(self, m: int) -> int:
        return math.perm(m, self.k) if self.ordered else math.comb(m, self.k)

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``score`` declares it reads (if it has ``required_columns()``), checked before the data."""
        return _score_columns(self.score)

    def certificate(self) -> DescriptionLength:
        """``DescriptionLength(C(m, k))`` (or ``m!/(m-k)!`` ordered), known before the data."""
        return DescriptionLength(self.n_outcomes(len(self.candidates)))

    def select(self, data: pd.DataFrame, rng: np.random.Generator | None = None) -> Selection:
        scores = _scores(self.score, data, self.candidates)
        m = len(scores)
        if self.k > m:
            raise ValueError(f"`k` must be at most the number of candidates ({m}); got {self.k}.")
        order = np.argsort(-scores.to_numpy(dtype=float), kind="stable")[: self.k]
        if self.ordered:
            chosen = tuple(scores.index[i] for i in order)
        else:
            top = set(order.tolist())
            chosen = tuple(c for i, c in enumerate(scores.index) if i in top)  # input order: C(m, k) outcomes
        kind = "ordered " if self.ordered else ""
        return Selection(
            value=chosen,
            certificate=DescriptionLength(self.n_outcomes(m)),
            label=f"{kind}top-{self.k} of {m} by {self.name}",
            details={"n_candidates": m, "k": self.k, "ordered": self.ordered},
        )


@dataclass(frozen=True, slots=True)
class NoisyTopK:
    r"""ε-DP top-k of candidate scores with declared sensitivity (report noisy top-k).

    k peeling rounds of the exponential mechanism with ε/k each, sampled exactly (no
    floating-point noise: :func:`selective.mechanisms.report_noisy_topk`); equal in law to the
    one-shot Gumbel top-k with scale :math:`2\Delta k/\varepsilon` (Durfee and Rogers,
    NeurIPS 2019, Thm 1; THEORY.md 5.3). Only the chosen candidates are released, never the
    noisy scores.

    Parameters
    ----------
    k : int
        Number of candidates to keep.
    epsilon : float
        Total privacy budget ε in nats, > 0.
    sensitivity : float
        Declared sensitivity Δ of every score under replace-one neighbours, > 0. The guarantee
        is void if the score can change by more than Δ when one row is replaced.
    score : callable
        ``score(data) -> pandas.Series`` indexed by candidate.
    candidates : sequence of str
        Declared candidate set; scores are read in this order and the chosen candidates are
        returned in it (an order taken from the data would leak through the output).

    Notes
    -----
    Certificate ``PureDP(epsilon, rho=k (ε/k)²/8)``: basic composition of k ε/k-DP rounds (DR
    Thm 3.16), and the bounded-range zCDP of each round (THEORY.md 5.3), which tightens the
    mutual-information bound.

    The cost grows with :math:`\varepsilon\sqrt n`: :meth:`select` warns
    (:class:`~selective.SelectiveWarning`) when, on the rows it is given, the threshold the step
    leaves the DP columns at α = 0.05 (:func:`~selective.selectors.epsilon.noisy_topk_threshold`,
    declared in advance, the most favourable case) is below ``0.05 / C(m, k)``, the threshold
    the same choice gets from its number of possible outputs without noise, or below the
    smallest positive double (then the DP columns exceed α for every naive p-value above 0). Choose
    ε with :func:`~selective.suggest_epsilon`.
    """

    k: int
    epsilon: float
    sensitivity: float
    score: ScoreFunction
    candidates: tuple[str, ...]
    name: str = field(default="noisy score", compare=False)

    def __post_init__(self) -> None:
        check_int("k", self.k, low=1)
        check_positive("epsilon", self.epsilon)
        check_positive("sensitivity", self.sensitivity)
        if not callable(self.score):
            raise TypeError(f"`score` must be a callable data -> pandas.Series; got {self.score!r}.")
        object.__setattr__(self, "candidates", _check_candidates(self.candidates, self.k))
        _check_name(self.name)
        if not self.epsilon / self.k > 0:
            raise ValueError(f"`epsilon` / `k` (the budget of each of the k rounds) must be a positive double; got "
                             f"epsilon = {self.epsilon!r} with k = {self.k}.")
        self.certificate()  # refuses parameters without a certificate before any data are seen

    def certificate(self) -> PureDP:
        """``PureDP(epsilon, rho=k (epsilon/k)^2/8)``, known before the data."""
        from ..mechanisms.exponential import report_noisy_topk_certificate

        return report_noisy_topk_certificate(self.k, epsilon=self.epsilon)

    def required_columns(self) -> dict[str, tuple]:
        """The columns ``score`` declares it reads (if it has ``required_columns()``), checked before the data."""
        return _score_columns(self.score)

    def select(self, data: pd.DataFrame, rng: np.random.Generator | None = None) -> Selection:
        from ..mechanisms.exponential import report_noisy_topk

        rng = check_rng(rng)
        if isinstance(data, pd.DataFrame) and len(data) >= 1:
            _warn_if_epsilon_too_large(self, len(data))
        scores = _scores(self.score, data, self.candidates)
        m = len(scores)
        if self.k > m:
            raise ValueError(f"`k` must be at most the number of candidates ({m}); got {self.k}.")
        idx = report_noisy_topk(scores.to_numpy(dtype=float), self.k, epsilon=self.epsilon,
                                sensitivity=self.sensitivity, rng=rng, exact=True)
        picked = set(int(i) for i in idx)
        chosen = tuple(c for i, c in enumerate(scores.index) if i in picked)
        return Selection(
            value=chosen,
            certificate=self.certificate(),
            label=f"noisy top-{self.k} of {m} by {self.name} (epsilon={self.epsilon:g})",
            details={"n_candidates": m, "k": self.k, "epsilon": self.epsilon, "sensitivity": self.sensitivity},
        )


#: the level at which :meth:`NoisyTopK.select` judges its epsilon
WARNING_ALPHA = 0.05


def epsilon_warning(epsilon: float, n_rows: int, *, k: int, n_candidates: int) -> str | None:
    """The warning :meth:`NoisyTopK.select` gives for ``epsilon`` on ``n_rows`` rows, or None.

    Fires when the threshold at α = 0.05 of the DP columns (declared in advance: the most
    favourable case) is below ``0.05 / C(m, k)``, the union-bound threshold of the same choice
    described by its :math:`\binom mk` possible outputs (DFHPRR Thm 17; THEORY.md 3.6), or
    below the smallest positive double. Both conditions are computed, not approximated: the
    threshold is the one a report computes (:func:`~selective.selectors.epsilon.noisy_topk_threshold`).
    With ``Analysis(units=...)`` the step costs at least as much (group privacy raises
    :math:`\varepsilon^2 n`), so a step without a warning on the rows may still be costly on units.
    """
    from .epsilon import noisy_topk_threshold, suggest_epsilon

    t = noisy_topk_threshold(epsilon, n_rows, k=k, alpha=WARNING_ALPHA)
    n_outcomes = math.comb(n_candidates, k)
    log2_without = math.log2(WARNING_ALPHA) - math.log2(n_outcomes)
    log2_gamma = t.threshold.log2_gamma
    if not (t.rejects_nothing or log2_gamma < log2_without):
        return None
    head = (f"NoisyTopK with epsilon = {epsilon:g} on n = {n_rows} rows: epsilon*sqrt(n) = "
            f"{epsilon * math.sqrt(n_rows):.3g}, so the step costs {t.maxinfo_bits:.4g} bits of max-information "
            f"(at beta = 0.001) and {t.mutual_info_bits:.4g} bits of mutual information.")
    if t.rejects_nothing:
        what = (f" At alpha = {WARNING_ALPHA:g} the max-information and mutual-information columns reject only "
                f"naive p-values below 2^{log2_gamma:.5g} (2^-inf: none), smaller than any positive p-value a "
                "double can hold: these columns exceed alpha for every naive p-value above 0.")
    else:
        what = (f" At alpha = {WARNING_ALPHA:g} the max-information and mutual-information columns reject only "
                f"naive p-values below 2^{log2_gamma:.4g} = {2.0**log2_gamma:.3g}.")
    what += (f" The same choice without noise (TopK: C({n_candidates}, {k}) = {n_outcomes} possible outputs) "
             f"rejects below {2.0**log2_without:.3g}.")
    if n_outcomes > 10:
        s = suggest_epsilon(n_rows, k=k, alpha=WARNING_ALPHA, max_cost=10.0)
        what += (f" epsilon <= {s.epsilon:.3g} keeps the threshold at alpha/10 or above "
                 f"(selective.suggest_epsilon({n_rows}, k={k})).")
    else:
        what += " TopK keeps the threshold at alpha/10 or above without noise."
    return head + what


def _warn_if_epsilon_too_large(selector: NoisyTopK, n_rows: int) -> None:
    message = epsilon_warning(selector.epsilon, n_rows, k=selector.k, n_candidates=len(selector.candidates))
    if message is not None:
        warnings.warn(message, SelectiveWarning, stacklevel=3)


@dataclass(frozen=True, slots=True)
class SignedMeanScore:
    r"""Scores :math:`\frac1n\sum_i \mathrm{clip}(x_{ij}, -c, c)\, s_i` with a ±1 sign per row.

    With ``sign`` = +1 for one group and -1 for the other this is (up to group sizes) half the
    difference of group means of the clipped column. Replacing one row changes each score by
    at most :math:`2c/n` (replace-one neighbours), the sensitivity declared to a DP selector.

    Parameters
    ----------
    columns : sequence of str
        Candidate columns (numeric), standardised beforehand with data-independent constants
        if needed (values are clipped around 0).
    sign_column : str
        Column holding the groups.
    positive : value
        The group given sign +1 (every other value gets -1).
    clip : float
        c > 0; values are clipped to [-c, c].
    """

    columns: tuple[str, ...]
    sign_column: str
    positive: object
    clip: float = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ordered_labels("columns", self.columns))
        check_positive("clip", self.clip)

    def required_columns(self) -> dict[str, tuple]:
        """``{"columns": columns, "sign_column": (sign_column,)}``: checked before the data are touched."""
        return {"columns": self.columns, "sign_column": (self.sign_column,)}

    def sensitivity(self, n_rows: int) -> float:
        """Replace-one sensitivity :math:`2c/n`."""
        return 2.0 * self.clip / check_int("n_rows", n_rows, low=1)

    def __call__(self, data: pd.DataFrame) -> pd.Series:
        missing = [c for c in (*self.columns, self.sign_column) if c not in data.columns]
        if missing:
            raise ValueError(f"column(s) {missing[:5]!r} not in the data; available: {list(data.columns)[:10]!r}...")
        x = data.loc[:, list(self.columns)].to_numpy(dtype=float)
        if np.isnan(x).any():
            raise ValueError("candidate columns must not hold missing values for a DP score.")
        s = np.where(data[self.sign_column].to_numpy() == self.positive, 1.0, -1.0)
        vals = np.clip(x, -self.clip, self.clip).T @ s / len(s)
        return pd.Series(vals, index=list(self.columns))
