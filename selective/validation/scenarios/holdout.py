"""Repeated reuse of a holdout set (:class:`HoldoutReuse`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._validation import check_int
from ...accounting.certificates import DescriptionLength
from .base import Scenario, _two_sided_t

__all__ = ["HoldoutReuse"]


# --------------------------------------------------------------------------------------------
# 3. Repeated holdout reuse
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutReuse(Scenario):
    r"""The analyst reuses a holdout: validates features on it one by one, then tests on it.

    Protocol after DFHPRR §5 (THEORY.md 6.1), scaled down: training and holdout sets of
    ``n_obs`` rows each, ``n_features`` attributes i.i.d. N(0, 1), labels ±1 uniform and
    independent of them. With :math:`w_j` the mean of :math:`x_jy` on a set, the analyst ranks
    features by training :math:`|w^t_j|` and, for the top ``n_queries`` in turn, asks the
    holdout the bit ":math:`w^h_j` has the sign of :math:`w^t_j` and
    :math:`|w^h_j|\ge 1/\sqrt n`", stopping at the first 1 (SparseValidate with m =
    ``n_queries``, budget 1; DFHPRR Thm 27). The feature validated (or, if none is, the top
    training feature) is then t-tested on the holdout (one-sample t of :math:`x_jy`, exact here).
    Naive: that holdout p-value, reused after the holdout chose the feature. Certificate:
    ``DescriptionLength(1 + n_queries)`` on the holdout (the training set is independent of it).
    Data splitting: the single-use holdout, i.e. test the top training feature without consulting
    the holdout first.

    Truth: global null (no attribute is related to the label).
    """

    name: str = "holdout_reuse"
    n_obs: int = 100
    n_features: int = 50
    n_queries: int = 10
    description: ClassVar[str] = "holdout reused to validate features one by one, then to test the chosen one"
    chunk_size: ClassVar[int] = 250

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)
        check_int("n_features", self.n_features, low=1)
        check_int("n_queries", self.n_queries, low=1, high=self.n_features)

    @property
    def truth(self) -> str:
        return f"Global null: none of the {self.n_features} attributes is related to the label."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def certificates(self) -> tuple[Any, ...]:
        from ...mechanisms.reuse import sparsevalidate_n_outcomes

        return (DescriptionLength(sparsevalidate_n_outcomes(self.n_queries, 1)),)

    def replicate_many(self, rngs):
        n, m = self.n_obs, self.n_features
        r = len(rngs)
        zt = np.empty((r, n, m))
        zh = np.empty((r, n, m))
        for i, g in enumerate(rngs):
            xt = g.standard_normal((n, m))
            yt = 2.0 * g.integers(0, 2, n) - 1.0
            xh = g.standard_normal((n, m))
            yh = 2.0 * g.integers(0, 2, n) - 1.0
            zt[i] = xt * yt[:, None]
            zh[i] = xh * yh[:, None]
        wt, wh = zt.mean(axis=1), zh.mean(axis=1)
        order = np.argsort(-np.abs(wt), axis=1, kind="stable")[:, : self.n_queries]
        rows = np.arange(r)[:, None]
        bit = (np.sign(wh[rows, order]) == np.sign(wt[rows, order])) & (np.abs(wh[rows, order]) >= 1 / math.sqrt(n))
        first = np.where(bit.any(axis=1), bit.argmax(axis=1), 0)
        j = order[np.arange(r), first]
        sd = zh.std(axis=1, ddof=1)
        tstat = wh / (sd / math.sqrt(n))
        p = _two_sided_t(tstat[np.arange(r), j], n - 1)
        ps = _two_sided_t(tstat[np.arange(r), order[:, 0]], n - 1)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps})
