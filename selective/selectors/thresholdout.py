r"""Thresholdout: the reusable holdout (DFHPRR Fig. 1, Lemma 23, Thm 25 [NIPS Thm 9]; THEORY.md 5.5).

:class:`Thresholdout` is the analysed algorithm: Laplace noise Lap(2σ) on the threshold
(refreshed after every over-threshold answer), Lap(4σ) on each comparison, Lap(σ) on each
released holdout answer, and a budget B of over-threshold answers. Noise is exact discrete
Laplace on an integer-scaled holdout sum: H = rint(2^20 * sum(φ(x))) over the holdout, the
floating-point sum rounded to a grid of 2^-20. Replacing one row moves the exact sum by at most
1 and the floating-point sum by at most a further 2 γ_{n-1} n (γ_k = k u/(1 - k u),
u = 2^-53, any summation order), so H has integer sensitivity
Δ_H = 2^20 + 1 + ceil(2^21 γ_{n-1} n), a data-independent bound (Δ_H/2^20 - 1 < 1e-4 for
n <= 10^6). Noise of scales 2σ n Δ_H, 4σ n Δ_H and σ n Δ_H in units of H gives exactly the
analysed privacy; the answers are (H + ξ)/(n 2^20).
The certificate is ``PureDP(2B/(σ n))`` with respect to the holdout (the training set is
public).

:class:`ThresholdoutExperiment` is the variant of the paper's experiments (Gaussian noise, no
certificate).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive, check_real, check_rng
from ..accounting.certificates import PureDP
from ..exceptions import BudgetExhausted, NoBoundError
from ..mechanisms.reuse import (
    ThresholdoutParameters,
    ThresholdoutPrivacy,
    thresholdout_parameters,
    thresholdout_privacy,
)
from ..mechanisms.samplers import _discrete_laplace_array, _scale_at_least
from ._frames import FrozenFrame

__all__ = [
    "Thresholdout",
    "ThresholdoutExperiment",
    "ThresholdoutParameters",
    "ThresholdoutPrivacy",
    "thresholdout_parameters",
    "thresholdout_privacy",
]

_QUANT_BITS = 20
_Q = 2**_QUANT_BITS
_ONE_BITS = int(np.array(1.0).view(np.uint64))
_NOISE_LIMIT = 2**56  # the exact discrete Laplace sampler needs scales below this


def _check_frame(name: str, df: Any) -> FrozenFrame:
    """A private read-only copy of ``df`` (queries get fresh read-only views of it)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame; got {type(df).__name__}.")
    if len(df) == 0:
        raise ValueError(f"`{name}` must have at least one row; got 0.")
    if df.columns.has_duplicates:
        dup = list(dict.fromkeys(df.columns[df.columns.duplicated()]))
        raise ValueError(f"`{name}` has more than one column labelled {dup[:5]!r}; column labels must be unique.")
    return FrozenFrame(df)


def _private_generator(rng: Any) -> np.random.Generator:
    """A child generator spawned from ``rng`` at construction, used only for the mechanism's noise.

    The caller's generator is not used directly, so its later state (or another object built
    from it) does not predict the noise. A seed still reproduces the run, and whoever knows the
    seed can recompute the noise: pass no seed when the analyst must not be able to.
    """
    parent = check_rng(rng)
    try:
        return parent.spawn(1)[0]
    except (TypeError, ValueError, AttributeError):  # a bit generator without a seed sequence
        return np.random.default_rng(parent.integers(0, 2**63, size=4))


def _laplace_source(gen: np.random.Generator) -> Callable[[Fraction], int]:
    """draw(scale) -> one exact discrete Laplace draw; ``gen`` lives only in this closure."""

    def draw(scale: Fraction) -> int:
        return int(_discrete_laplace_array(scale.numerator, scale.denominator, 1, gen)[0])

    return draw


def _sparse_comparator(draw: Callable[[Fraction], int], gamma_scale: Fraction, eta_scale: Fraction,
                       xi_scale: Fraction) -> Callable[[Fraction, Fraction], int | None]:
    """The noisy part of Thresholdout, kept in a closure (threshold noise included).

    ``compare(gap, threshold)`` draws eta; if gap > threshold + gamma + eta it draws xi, redraws
    gamma and returns xi, else returns None (all in units of H). Draw order: gamma at
    construction; per query eta, then (over the threshold) xi and the new gamma.
    """
    state = [draw(gamma_scale)]

    def compare(gap: Fraction, threshold: Fraction) -> int | None:
        eta = draw(eta_scale)
        if gap > threshold + state[0] + eta:
            xi = draw(xi_scale)
            state[0] = draw(gamma_scale)
            return xi
        return None

    return compare


_CHUNK = 1 << 18  # values per chunk of the one-pass reductions below (2 MiB: fits in a CPU cache, few calls)


def _evaluate_training(phi: Callable[[pd.DataFrame], Any], rows: pd.DataFrame) -> float:
    """The mean of phi on the (public) training set, validated: one value in [0, 1] per row, else
    ValueError. One pass over the values, in cache-sized chunks (check and sum together)."""
    vals = np.asarray(phi(rows), dtype=np.float64).ravel()
    if vals.shape[0] != len(rows):
        raise ValueError(f"`phi` must return one value per row ({len(rows)} on the training set); got {vals.shape[0]}.")
    vals = np.ascontiguousarray(vals)
    bits = vals.view(np.uint64)
    total, top = 0.0, 0
    for start in range(0, vals.size, _CHUNK):
        total += float(np.add.reduce(vals[start:start + _CHUNK]))
        top = max(top, int(np.maximum.reduce(bits[start:start + _CHUNK])))
    # the IEEE-754 bit patterns of +0.0 ... 1.0 are exactly the integers 0 ... _ONE_BITS;
    # negatives (sign bit), values above 1, infinities and NaN all lie above as unsigned integers
    if top > _ONE_BITS:
        ok = (vals >= 0.0) & (vals <= 1.0)  # slow path: also accepts -0.0
        if not ok.all():
            bad = float(vals[~ok][0])
            raise ValueError(f"`phi` must map every row into [0, 1]; got {bad!r} on the training set.")
    return total / vals.size


def _clipped_sum(vals: np.ndarray) -> float:
    """Sum of the values clipped to [0, 1] (NaN -> 0, +inf -> 1, -inf -> 0), in one pass over
    cache-sized chunks: a chunk whose bit patterns all lie in [+0.0, 1.0] (see
    :func:`_evaluate_training`) is summed as it is, any other through fmax(v, 0) (NaN and -inf
    to 0) and fmin(., 1) (+inf to 1). The answer is the same function of the values either
    way; only the running time depends on whether some value needed clipping, which φ, running
    on the holdout, could reveal by its own running time anyway (the guarantee covers the
    answers, not timing). A floating-point sum in another order than ``numpy.sum``'s, covered
    by the error bound of the module docstring (any summation order)."""
    vals = np.ascontiguousarray(vals)
    bits = vals.view(np.uint64)
    total = 0.0
    for start in range(0, vals.size, _CHUNK):
        chunk = vals[start:start + _CHUNK]
        if int(np.maximum.reduce(bits[start:start + _CHUNK])) > _ONE_BITS:
            chunk = np.fmin(np.fmax(chunk, 0.0), 1.0)
        total += float(np.add.reduce(chunk))
    return total


def _evaluate_holdout(phi: Callable[[pd.DataFrame], Any], rows: pd.DataFrame) -> float:
    """The sum of phi over the holdout, without any exit that depends on the holdout's values.

    Values are clipped to [0, 1] (NaN -> 0). If ``phi(rows)`` raises, or does not return one
    number per row, phi is evaluated row by row and a row whose evaluation raises or does not
    give one number counts as 0. Warnings raised inside are suppressed (their presence would
    depend on the holdout). For a row-wise phi (the contract), the result is the sum of the
    row-wise query x -> clip(phi(x)) with failures as 0, which has sensitivity 1: the privacy
    analysis is unchanged.
    """
    n = len(rows)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            vals = np.asarray(phi(rows), dtype=np.float64).ravel()
            whole_ok = vals.shape[0] == n
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - any failure on the holdout (SystemExit too) must stay silent
            whole_ok = False
        if not whole_ok:
            vals = np.zeros(n, dtype=np.float64)
            for i in range(n):
                try:
                    v = np.asarray(phi(rows.iloc[i:i + 1]), dtype=np.float64).ravel()
                    vals[i] = v[0] if v.shape[0] == 1 else 0.0
                except KeyboardInterrupt:
                    raise
                except BaseException:  # noqa: BLE001
                    vals[i] = 0.0
        return _clipped_sum(vals)


class Thresholdout:
    r"""The reusable holdout of Dwork et al. (2015), exactly as analysed.

    Parameters
    ----------
    train : pandas.DataFrame
        Training set S_t (public to the analyst).
    holdout : pandas.DataFrame
        Holdout S_h (n rows); only reachable through :meth:`query`.
    threshold : float
        T > 0 (on the scale of means in [0, 1]).
    sigma : float
        Noise rate σ > 0.
    budget : int
        B >= 1: number of over-threshold answers before :class:`BudgetExhausted`.
    rng : numpy.random.Generator or seed, optional
        A private child generator is spawned from it at construction (the caller's stream is
        not consumed). A seed makes the answers reproducible, and the noise recomputable by
        whoever knows it.
    one_sided : bool
        Test :math:`E_{S_h}-E_{S_t}>\hat T+\eta` only (Remark 26).

    Notes
    -----
    For each query φ: draw η ~ Lap(4σ); if :math:`|E_{S_h}[\phi]-E_{S_t}[\phi]|>\hat T+\eta`
    answer :math:`E_{S_h}[\phi]+\xi`, ξ ~ Lap(σ), use one unit of budget and redraw
    :math:`\hat T=T+\mathrm{Lap}(2\sigma)`; else answer :math:`E_{S_t}[\phi]`.
    Privacy (Lemma 23): ``PureDP(2B/(sigma n))`` on the holdout. Use
    :func:`thresholdout_parameters` for the T and σ of Theorem 25.

    Queries are validated on the training set only; on the holdout their values are clipped
    to [0, 1] (NaN -> 0) and failures count as 0, so no error depends on the holdout (see
    :meth:`query`).

    **What the guarantee covers.** The certificate bounds what an analyst can learn about the
    holdout *through the answers of* :meth:`query`. It assumes that the analyst learns the
    holdout only that way and that every φ is row-wise. The class protects against accidents on
    that path: it keeps private copies of both frames, made at construction (later changes to
    the frames passed in do not reach it), and gives each query a fresh read-only view, so a
    query cannot overwrite rows (writes to numeric and other numpy-typed columns raise
    ``ValueError``; columns of pandas extension types are fresh copies per query) or change what
    later queries see. Its noise comes from a private child generator spawned from ``rng`` at
    construction and held, with the noisy threshold, inside a closure rather than an attribute.
    None of this is a security boundary: φ is arbitrary Python code that runs in the same
    process, and it can copy the rows it receives, inspect the interpreter's frames or reach
    any object. Someone who holds the holdout, or the seed (which makes the noise
    reproducible), is outside what the certificate describes.
    """

    __slots__ = ("__train", "__holdout", "__compare", "_threshold", "_sigma", "_budget", "_remaining",
                 "_one_sided", "_n", "_sens", "_n_queries")

    def __init__(self, train: pd.DataFrame, holdout: pd.DataFrame, *, threshold: float, sigma: float, budget: int,
                 rng: Any = None, one_sided: bool = False) -> None:
        self._threshold = check_positive("threshold", threshold)
        self._sigma = check_positive("sigma", sigma)
        self._budget = check_int("budget", budget, low=1)
        if not isinstance(one_sided, bool):
            raise TypeError(f"`one_sided` must be True or False; got {one_sided!r}.")
        self._one_sided = one_sided
        self.__train = _check_frame("train", train)
        self.__holdout = _check_frame("holdout", holdout)
        self._remaining = self._budget
        self._n = len(holdout)
        n = self._n
        u = Fraction(1, 2**53)
        gamma = (n - 1) * u / (1 - (n - 1) * u)
        self._sens = _Q + 1 + math.ceil(2 * _Q * gamma * n)  # integer sensitivity of H
        unit = Fraction(self._sigma) * n * self._sens  # σ on the mean scale, in units of H
        if _scale_at_least(4 * unit) >= _NOISE_LIMIT:  # the largest scale drawn (eta), checked before any query
            raise ValueError(f"`sigma` must be below {float(_NOISE_LIMIT / (4 * n * self._sens)):.3g} for a holdout of "
                             f"{n} rows (the exact sampler draws noise scales below 2^56 units); got {sigma!r}.")
        draw = _laplace_source(_private_generator(rng))
        self.__compare = _sparse_comparator(draw, _scale_at_least(2 * unit), _scale_at_least(4 * unit),
                                            _scale_at_least(unit))
        self._n_queries = 0

    def __repr__(self) -> str:
        return (f"Thresholdout(n_holdout={self._n}, threshold={self._threshold!r}, sigma={self._sigma!r}, "
                f"budget={self._budget}, remaining={self._remaining}, n_queries={self._n_queries})")

    def __reduce__(self) -> Any:
        raise TypeError("Thresholdout objects cannot be pickled (the holdout must stay behind the mechanism).")

    @property
    def budget_remaining(self) -> int:
        """Over-threshold answers still available."""
        return self._remaining

    @property
    def n_queries(self) -> int:
        return self._n_queries

    @property
    def n_holdout(self) -> int:
        return self._n

    def certificate(self) -> PureDP:
        """``PureDP(2 B / (sigma n))`` with respect to the holdout (DFHPRR Lemma 23)."""
        return PureDP(2.0 * self._budget / (self._sigma * self._n))

    def query(self, phi: Callable[[pd.DataFrame], Any]) -> float:
        """Answer the statistical query φ: rows -> [0, 1] (an estimate of its expectation).

        φ must be row-wise: ``phi(rows)`` returns one value per row, the value of a row
        depending on that row only (the privacy analysis assumes it; it cannot be checked).
        ``rows`` is a fresh read-only view (see the class notes): φ must not try to modify it.

        On the training set (public) φ is validated: a value outside [0, 1], NaN, or a wrong
        number of values raises ValueError, and exceptions of φ propagate. On the holdout
        nothing is validated, so that no exception, message or warning depends on the holdout:
        φ's values are clipped to [0, 1] (NaN -> 0, +inf -> 1, -inf -> 0); if φ raises, or
        does not return one number per row, on the holdout, it is evaluated row by row and a
        failing row counts as 0 (``SystemExit`` included); warnings inside φ are suppressed. The
        clipped φ is itself a query into [0, 1], the case analysed by Dwork et al., so the
        certificate holds. A ``KeyboardInterrupt`` (Ctrl-C) is not swallowed: the query is then
        not answered, and an interrupt raised by φ itself is outside the guarantee.

        Raises
        ------
        BudgetExhausted
            When the B over-threshold answers have been used.
        ValueError
            When φ returns a value outside [0, 1] (or NaN), or the wrong number of values, on
            the training set.
        """
        if not callable(phi):
            raise TypeError(f"`phi` must be callable; got {phi!r}.")
        if self._remaining < 1:
            raise BudgetExhausted(f"Thresholdout has used its budget of B = {self._budget} over-threshold answers.")
        train_mean = _evaluate_training(phi, self.__train.view())
        hold_total = _evaluate_holdout(phi, self.__holdout.view())
        self._n_queries += 1
        nq = self._n * _Q
        hold_sum = int(np.rint(hold_total * _Q))  # H: integer, sensitivity self._sens
        gap = Fraction(hold_sum) - Fraction(train_mean) * nq
        if not self._one_sided:
            gap = abs(gap)
        xi = self.__compare(gap, Fraction(self._threshold) * nq)
        if xi is not None:
            self._remaining -= 1
            return (hold_sum + xi) / nq
        return train_mean


class ThresholdoutExperiment:
    r"""EXPERIMENT VARIANT of Thresholdout with Gaussian noise. **No certificate.**

    The paper's experiments (DFHPRR §5; THEORY.md 6.1) use Gaussian noise and small constants,
    for which none of the guarantees apply (THEORY.md 7.11). Same structure as
    :class:`Thresholdout` with N(0, (2σ)²) threshold noise (refreshed after each
    over-threshold answer), N(0, (4σ)²) comparison noise and N(0, σ²) answer noise, numpy
    floating-point samplers, and an optional budget (``None``: unlimited).
    :meth:`certificate` raises :class:`~selective.exceptions.NoBoundError`.

    Queries get read-only views of private copies of the frames, as in :class:`Thresholdout`.
    The noise is drawn from ``rng`` itself (so that an experiment can replay the same stream):
    with no guarantee to protect, it is not hidden.
    """

    __slots__ = ("__train", "__holdout", "_threshold", "_sigma", "_budget", "_remaining", "_rng", "_gamma",
                 "_n_queries")

    def __init__(self, train: pd.DataFrame, holdout: pd.DataFrame, *, threshold: float, sigma: float,
                 budget: int | None = None, rng: Any = None) -> None:
        self.__train = _check_frame("train", train)
        self.__holdout = _check_frame("holdout", holdout)
        self._threshold = check_real("threshold", threshold)
        self._sigma = check_positive("sigma", sigma)
        self._budget = None if budget is None else check_int("budget", budget, low=1)
        self._remaining = math.inf if budget is None else self._budget
        self._rng = check_rng(rng)
        self._gamma = self._rng.normal(0.0, 2.0 * self._sigma)
        self._n_queries = 0

    def __repr__(self) -> str:
        return (f"ThresholdoutExperiment(threshold={self._threshold!r}, sigma={self._sigma!r}, "
                f"budget={self._budget}, n_queries={self._n_queries}; no certificate)")

    def __reduce__(self) -> Any:
        raise TypeError("ThresholdoutExperiment objects cannot be pickled.")

    @property
    def budget_remaining(self) -> float:
        return self._remaining

    def certificate(self) -> Any:
        raise NoBoundError("ThresholdoutExperiment (Gaussian noise, experiment constants) has no certificate; "
                           "use Thresholdout for a PureDP guarantee.")

    def query(self, phi: Callable[[pd.DataFrame], Any]) -> float:
        """Answer φ: rows -> [0, 1]; raises BudgetExhausted when a finite budget is used up."""
        if not callable(phi):
            raise TypeError(f"`phi` must be callable; got {phi!r}.")
        if self._remaining < 1:
            raise BudgetExhausted(f"ThresholdoutExperiment has used its budget of B = {self._budget}.")
        train_mean = _evaluate_training(phi, self.__train.view())
        hold_mean = _evaluate_holdout(phi, self.__holdout.view()) / len(self.__holdout)
        self._n_queries += 1
        eta = self._rng.normal(0.0, 4.0 * self._sigma)
        if abs(hold_mean - train_mean) > self._threshold + self._gamma + eta:
            self._remaining -= 1
            self._gamma = self._rng.normal(0.0, 2.0 * self._sigma)
            return hold_mean + self._rng.normal(0.0, self._sigma)
        return train_mean
