"""Differentially private selection on two groups of features, null by default: threshold
chasing with Sparse Vector (:class:`SparseVectorThreshold`) and noisy top-k followed by a
description-length step (:class:`DPThenDescriptionLength`); and the check of the real effects
of the signal variants (:func:`check_effects`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._validation import check_int, check_positive, check_real
from ...accounting.certificates import DescriptionLength
from ..outcomes import Outcomes
from .base import _STANDARD, Scenario, _corrected, _pooled_t, _two_sided_t, as_reported

__all__ = ["SparseVectorThreshold", "DPThenDescriptionLength"]


#: the label of the oracle column of the signal variants (the same as the sharp scenarios')
ORACLE_LABELS: dict[str, str] = {"pvalue_oracle": "oracle (feature 0, no selection)"}


def check_effects(name: str, values: Any, *, limit: int, what: str) -> tuple[float, ...]:
    """The real effects of a signal variant as a tuple of floats.

    Parameters
    ----------
    name : str
        The argument's name, for the error messages.
    values : sequence of float
        At most ``limit`` finite, non-zero real numbers (a zero effect would be a null labelled
        as a real effect).
    limit : int
        The largest number of entries.
    what : str
        What ``limit`` is, for the error message (e.g. ``"n_features"``).

    Returns
    -------
    tuple of float
    """
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"`{name}` must be a sequence of finite non-zero real numbers; got {values!r}.")
    out = tuple(check_real(f"{name}[{i}]", v) for i, v in enumerate(values))
    if len(out) > limit:
        raise ValueError(f"`{name}` must have at most {what} = {limit} entries; got {len(out)}.")
    if 0.0 in out:
        raise ValueError(f"`{name}` must hold non-zero effects (a zero effect is a null); got {values!r}.")
    return out


def with_oracle(outcomes: Outcomes, p_oracle: np.ndarray) -> Outcomes:
    """``outcomes`` with the column ``pvalue_oracle`` added, every slot of it a real effect."""
    r = outcomes.n_reps
    return Outcomes(pvalues={**outcomes.pvalues, "pvalue_oracle": np.asarray(p_oracle, dtype=float).reshape(r, 1)},
                    null={**outcomes.null, "pvalue_oracle": np.zeros((r, 1), dtype=bool)})


# --------------------------------------------------------------------------------------------
# The two-group base
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _TwoGroupNoise(Scenario):
    """Shared part of the scenarios on ``n_features`` N(0, 1) features in two groups of rows (the
    first half of the rows is group "a"), null except that the first ``len(effects)`` features
    have mean ``effects[j]`` in group "a". Subclasses choose one feature, or none (-1), from the
    rows of the two groups with :meth:`_select`; the chosen feature is t-tested on the same
    data, and the data-splitting baseline selects on the first ``split_fraction`` of each group
    and tests on the rest. With real effects, ``pvalue_oracle`` is Student's t-test of feature
    0 on all rows, without selection."""

    n_obs: int = 200
    n_features: int = 50
    epsilon: float = 2.0
    clip: float = 3.0
    effects: tuple[float, ...] = ()
    column_labels: ClassVar[dict[str, str]] = ORACLE_LABELS

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_int("n_features", self.n_features, low=1)
        check_positive("epsilon", self.epsilon)
        check_positive("clip", self.clip)
        object.__setattr__(self, "effects", check_effects("effects", self.effects, limit=self.n_features,
                                                          what="n_features"))

    #: whether the scenario has a ``pvalue_randomized`` column (:meth:`_randomized`)
    randomized_column: ClassVar[bool] = False

    @property
    def columns(self) -> tuple[str, ...]:
        extra = ("pvalue_randomized",) if self.randomized_column else ()
        return _STANDARD + extra + (("pvalue_oracle",) if self.effects else ())

    def _randomized(self, a: np.ndarray, b: np.ndarray, j: int) -> float:  # pragma: no cover
        raise NotImplementedError

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: all {self.n_features} features have equal group means."
        return (f"Features 0..{k - 1} have real group differences {self.effects}; the other "
                f"{self.n_features - k} are null.")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def _clipped_score(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """|sum of clipped values in group a - in group b| / n: replace-one sensitivity 2c/n."""
        c = self.clip
        return np.abs(np.clip(a, -c, c).sum(axis=0) - np.clip(b, -c, c).sum(axis=0)) / (a.shape[0] + b.shape[0])

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:  # pragma: no cover
        raise NotImplementedError

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        k = int(round(self.split_fraction * half))
        r, m = len(rngs), len(self.effects)
        p, ps, po, pr = (np.full(r, np.nan) for _ in range(4))
        j, js = np.full(r, -1), np.full(r, -1)
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            if m:
                x[:half, :m] += np.asarray(self.effects)
                t, df = _pooled_t(x[:half, :1], x[half:, :1])
                po[i] = _two_sided_t(t[0], df)
            j[i] = self._select(x[:half], x[half:], g)
            if j[i] >= 0:
                t, df = _pooled_t(x[:half, j[i]:j[i] + 1], x[half:, j[i]:j[i] + 1])
                p[i] = _two_sided_t(t[0], df)
            js[i] = self._select(x[:k], x[half:half + k], g)
            if js[i] >= 0:
                t, df = _pooled_t(x[k:half, js[i]:js[i] + 1], x[half + k:, js[i]:js[i] + 1])
                ps[i] = _two_sided_t(t[0], df)
            if self.randomized_column and j[i] >= 0:
                pr[i] = self._randomized(x[:half], x[half:], int(j[i]))
        extra = {"pvalue_split": ps, "pvalue_randomized": pr}
        if not m:
            return self._finish(p, np.ones(r, dtype=bool), extra)
        cols = {"pvalue_naive": p, **_corrected(p, self.certificates(), self.n_rows, self.n_candidates), **extra}
        shared = [c for c in self.columns if c != "pvalue_oracle"]
        out = Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in shared}, (j >= m).reshape(r, 1),
                                   null_by_column={"pvalue_split": (js >= m).reshape(r, 1)})
        return with_oracle(out, po)



# --------------------------------------------------------------------------------------------
# 2. Threshold chasing with Sparse Vector
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SparseVectorThreshold(_TwoGroupNoise):
    r"""Threshold chasing: screen features in order with Sparse Vector, test the first that crosses.

    Data as :class:`TopKNoise` under the global null. Score of feature j:
    :math:`|\frac1n\sum_i \mathrm{clip}(x_{ij},-c,c)s_i|` with :math:`s_i=\pm1` by group,
    replace-one sensitivity :math:`2c/n`. The analyst asks Sparse (Dwork and Roth 2014,
    Algorithm 2, cut-off 1; :class:`selective.mechanisms.Sparse`, exact discrete Laplace noise)
    whether each score exceeds ``threshold``, and t-tests the first feature reported above it;
    if none is, nothing is tested. Certificate ``PureDP(epsilon)``.

    ``pvalue_randomized``: the answers conditioned on with the exact sampler's Laplace scales
    (:func:`selective.conditional.randomized_inference` with ``SparseVectorEvent``, the scores the
    signed clipped scores with their estimated variances, ``absolute=True``): the p-value for the
    chosen feature's signed clipped score, asymptotic (normal scores), with the report's trust
    rule (:func:`~selective.validation.scenarios.base.as_reported`: withheld where the test
    relies on the normal tail below the two-sample z-test's trusted level). Its null value is 0
    exactly when the feature's groups have the same symmetric law (every null feature here).
    Without the rule it rejected about 1.2 times the level at 0.0025 (the plug-in variance's
    normal tail, 72,000 replications).

    Signal variant: with ``effects``, the first ``len(effects)`` features have mean
    ``effects[j]`` in group "a" (they are also the first screened: the analyst's order is the
    features' order), and ``pvalue_oracle`` t-tests feature 0 on all rows without selection.

    Truth: with ``effects=()`` (the default) global null (every feature has equal group means).
    Otherwise feature j's hypothesis (equal group means) is null iff j >= ``len(effects)``,
    exactly, since the features are independent: each column carries the label of the feature it
    tested (the one chosen on all rows, data splitting's own choice, feature 0 for the oracle).
    """

    name: str = "sparse_vector_threshold"
    threshold: float = 0.2
    description: ClassVar[str] = "threshold chasing: first feature above a threshold by Sparse Vector (pure DP)"
    chunk_size: ClassVar[int] = 100
    randomized_column: ClassVar[bool] = True
    column_labels: ClassVar[dict[str, str]] = {
        **ORACLE_LABELS, "pvalue_randomized": "conditional on the Sparse Vector answers (randomized, clipped score)"}

    def _randomized(self, a: np.ndarray, b: np.ndarray, j: int) -> float:
        """The conditional p-value of the chosen feature's signed clipped score given the answers
        (randomized_inference with SparseVectorEvent and the exact sampler's scales)."""
        from ...conditional import SparseVectorEvent, randomized_inference
        from ...hypotheses.means import two_sample_trusted_level
        from ...mechanisms.sparse_vector import sparse_exact_noise_scales

        c, n = self.clip, a.shape[0] + b.shape[0]
        ca, cb = np.clip(a, -c, c), np.clip(b, -c, c)
        score = (ca.sum(axis=0) - cb.sum(axis=0)) / n
        var = (a.shape[0] * ca.var(axis=0, ddof=1) + b.shape[0] * cb.var(axis=0, ddof=1)) / n**2
        sc = sparse_exact_noise_scales(epsilon=self.epsilon, sensitivity=2.0 * c / n, c=1)
        event = SparseVectorEvent(tuple(range(j + 1)), (False,) * j + (True,), self.threshold, sc.threshold_scale,
                                  sc.query_scale)
        res = randomized_inference(score, np.diag(var), event, targets=[j], absolute=True, intervals=False)
        trusted = two_sample_trusted_level(ca[:, j], cb[:, j], "two-sided", kind="z", usevar="unequal")
        return as_reported(res, float(trusted))

    def certificates(self) -> tuple[Any, ...]:
        from ...accounting.certificates import PureDP

        return (PureDP(self.epsilon),)

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:
        from ...mechanisms.sparse_vector import Sparse

        n = a.shape[0] + b.shape[0]
        sv = Sparse(self.threshold, epsilon=self.epsilon, sensitivity=2.0 * self.clip / n, c=1, rng=g)
        hits = sv.screen(self._clipped_score(a, b))
        return int(hits[0]) if hits.size else -1


# --------------------------------------------------------------------------------------------
# 7. DP steps, then description-length steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DPThenDescriptionLength(_TwoGroupNoise):
    r"""NoisyTopK narrows the features, then TopK picks one of them by ``|t|``; it is t-tested.

    Data as :class:`TopKNoise`. Step 1: report noisy top-``k_dp`` of the clipped signed-mean
    scores :math:`|\frac1n\sum_i\mathrm{clip}(x_{ij},-c,c)s_i|` (sensitivity :math:`2c/n`) with
    budget ``epsilon`` (exact exponential-mechanism peeling, certificate ``PureDP``). Step 2:
    the feature with the largest ``|Student t|`` among those k (``DescriptionLength(k_dp)``). The
    ledger composes them (THEORY.md 2.7; union route 3.6). Bonferroni over all ``n_features``.

    Signal variant: with ``effects``, the first ``len(effects)`` features have mean
    ``effects[j]`` in group "a", and ``pvalue_oracle`` t-tests feature 0 on all rows without
    selection.

    Truth: with ``effects=()`` (the default) global null (every feature has equal group means).
    Otherwise feature j's hypothesis (equal group means) is null iff j >= ``len(effects)``,
    exactly, since the features are independent: each column carries the label of the feature it
    tested (the one chosen on all rows, data splitting's own choice, feature 0 for the oracle).
    """

    name: str = "dp_then_dl"
    k_dp: int = 5
    description: ClassVar[str] = "noisy top-k (pure DP) then top-1 by |t| (description length)"
    chunk_size: ClassVar[int] = 100

    def __post_init__(self) -> None:
        _TwoGroupNoise.__post_init__(self)
        check_int("k_dp", self.k_dp, low=1, high=self.n_features)

    def certificates(self) -> tuple[Any, ...]:
        from ...mechanisms.exponential import report_noisy_topk_certificate

        return (report_noisy_topk_certificate(self.k_dp, epsilon=self.epsilon), DescriptionLength(self.k_dp))

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:
        from ...mechanisms.exponential import report_noisy_topk

        n = a.shape[0] + b.shape[0]
        idx = np.sort(np.asarray(report_noisy_topk(self._clipped_score(a, b), self.k_dp, epsilon=self.epsilon,
                                                   sensitivity=2 * self.clip / n, rng=g, exact=True)))
        t, _ = _pooled_t(a[:, idx], b[:, idx])
        return int(idx[np.abs(t).argmax()])
