"""Repeated reuse of a holdout set (:class:`HoldoutReuse`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ..._validation import check_int
from ...accounting.certificates import DescriptionLength
from ...corrections import corrected_pvalue_sparse_validate
from ..outcomes import Outcomes
from .base import _STANDARD, Scenario, _corrected, _two_sided_t
from .dp import ORACLE_LABELS, check_effects, with_oracle

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

    ``pvalue_transcript``: the weighted union bound over the stopping positions
    (:func:`selective.corrections.corrected_pvalue_sparse_validate`, THEORY.md 3.15): the
    validated feature's holdout p-value, one-sided in the sign of its training mean (the sign
    the query checked), divided by the weight of its position (1/2 for the first query, 1/18
    for each of the others); 1 when no query validates (nothing is tested). Beside it, the
    baseline ``pvalue_split_directional``: the single-use holdout's test of the top training
    feature made one-sided in the same sign, which is what the transcript route gives back when
    the first query validates.

    Signal variant: with ``effects``, attribute j < ``len(effects)`` is :math:`x_j = \beta_j y + e_j`
    with :math:`\beta_j` = ``effects[j]`` and :math:`e_j` N(0, 1) independent of the label, in
    both sets (so :math:`E[x_jy] = \beta_j`); ``pvalue_oracle`` is the holdout t-test of attribute
    0, without selection.

    Truth: with ``effects=()`` (the default) global null (no attribute is related to the label).
    Otherwise the hypothesis :math:`E[x_jy] = 0` of attribute j is null iff j >= ``len(effects)``,
    exactly: a null attribute is N(0, 1) independent of the label and of the other attributes, so
    :math:`x_jy` is i.i.d. N(0, 1). Each column carries the label of the attribute it tested (the
    one the holdout validated, the top training attribute for data splitting, attribute 0 for the
    oracle).
    """

    name: str = "holdout_reuse"
    n_obs: int = 100
    n_features: int = 50
    n_queries: int = 10
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = "holdout reused to validate features one by one, then to test the chosen one"
    chunk_size: ClassVar[int] = 250
    column_labels: ClassVar[dict[str, str]] = {
        **ORACLE_LABELS,
        "pvalue_transcript": "weighted union over the transcript, one-sided in the training sign",
        "pvalue_split_directional": "data splitting, one-sided in the training sign"}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)
        check_int("n_features", self.n_features, low=1)
        check_int("n_queries", self.n_queries, low=1, high=self.n_features)
        object.__setattr__(self, "effects", check_effects("effects", self.effects, limit=self.n_features,
                                                          what="n_features"))

    @property
    def columns(self) -> tuple[str, ...]:
        own = ("pvalue_transcript", "pvalue_split_directional")
        return _STANDARD + own + ("pvalue_oracle",) if self.effects else _STANDARD + own

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: none of the {self.n_features} attributes is related to the label."
        return (f"Attributes 0..{k - 1} are related to the label (E[x_j y] = {self.effects}); the other "
                f"{self.n_features - k} are not.")

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
            if self.effects:
                xt[:, : len(self.effects)] += yt[:, None] * np.asarray(self.effects)
                xh[:, : len(self.effects)] += yh[:, None] * np.asarray(self.effects)
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
        # one-sided in the sign of the training mean (fixed before the holdout is read)
        signed = np.sign(wt[rows, order]) * tstat[rows, order]
        p_dir = stats.t.sf(signed, n - 1)
        validated = bit.any(axis=1)
        transcript = np.ones(r)
        transcript[validated] = corrected_pvalue_sparse_validate(
            p_dir[validated, first[validated]], first[validated] + 1, self.n_queries)
        own = {"pvalue_split": ps, "pvalue_transcript": transcript, "pvalue_split_directional": p_dir[:, 0]}
        k = len(self.effects)
        if not k:
            return self._finish(p, np.ones(r, dtype=bool), own)
        cols = {"pvalue_naive": p, **_corrected(p, self.certificates(), self.n_rows, self.n_candidates), **own}
        top_null = order[:, :1] >= k
        out = Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in self.columns if c != "pvalue_oracle"},
                                   (j >= k).reshape(r, 1),
                                   null_by_column={"pvalue_split": top_null, "pvalue_split_directional": top_null})
        return with_oracle(out, _two_sided_t(tstat[:, 0], n - 1))
