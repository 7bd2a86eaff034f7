"""Differentially private selection on two groups of null features: threshold chasing with
Sparse Vector (:class:`SparseVectorThreshold`) and noisy top-k followed by a
description-length step (:class:`DPThenDescriptionLength`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._validation import check_int, check_positive
from ...accounting.certificates import DescriptionLength
from .base import Scenario, _pooled_t, _two_sided_t

__all__ = ["SparseVectorThreshold", "DPThenDescriptionLength"]


# --------------------------------------------------------------------------------------------
# The two-group noise base
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _TwoGroupNoise(Scenario):
    """Shared part of the scenarios on ``n_features`` null features in two groups of rows (the
    first half of the rows is group "a"). Subclasses choose one feature, or none (-1), from the
    rows of the two groups with :meth:`_select`; the chosen feature is t-tested on the same
    data, and the data-splitting baseline selects on the first ``split_fraction`` of each group
    and tests on the rest."""

    n_obs: int = 200
    n_features: int = 50
    epsilon: float = 2.0
    clip: float = 3.0

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_int("n_features", self.n_features, low=1)
        check_positive("epsilon", self.epsilon)
        check_positive("clip", self.clip)

    @property
    def truth(self) -> str:
        return f"Global null: all {self.n_features} features have equal group means."

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
        r = len(rngs)
        p, ps = np.full(r, np.nan), np.full(r, np.nan)
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            j = self._select(x[:half], x[half:], g)
            if j >= 0:
                t, df = _pooled_t(x[:half, j:j + 1], x[half:, j:j + 1])
                p[i] = _two_sided_t(t[0], df)
            js = self._select(x[:k], x[half:half + k], g)
            if js >= 0:
                t, df = _pooled_t(x[k:half, js:js + 1], x[half + k:, js:js + 1])
                ps[i] = _two_sided_t(t[0], df)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps})



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

    Truth: global null (every feature has equal group means).
    """

    name: str = "sparse_vector_threshold"
    threshold: float = 0.2
    description: ClassVar[str] = "threshold chasing: first feature above a threshold by Sparse Vector (pure DP)"
    chunk_size: ClassVar[int] = 100

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

    Truth: global null (every feature has equal group means).
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
