"""Selection among candidates without privacy: the control with no selection at all
(:class:`Preregistered`) and the top-k among many noise features (:class:`TopKNoise`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._validation import check_int, check_real
from ...accounting.certificates import DescriptionLength
from ..splitting import data_splitting, split_rows
from .base import Scenario, _pooled_t, _two_sided_t

__all__ = ["Preregistered", "TopKNoise"]


# --------------------------------------------------------------------------------------------
# 0. Control: a pre-registered test, no selection
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Preregistered(Scenario):
    """Control: one pre-registered Student t-test, no selection at all.

    Truth: with ``effect=0`` (the default) the single hypothesis (equal means of two groups of
    ``n_rows / 2`` N(0, 1) rows) is null. Every column is the exact naive p-value (the ledger is
    empty, Bonferroni over one declared hypothesis) or, for data splitting, the same test on the
    test part; every column rejects at exactly α. Signal variant (``effect`` not 0): the first
    group's rows have mean ``effect``, a real difference, so the hypothesis is false in every
    replication and every column measures power: the naive test's in every column but data
    splitting, which tests on its share of the rows only.
    """

    name: str = "preregistered"
    n_obs: int = 100
    effect: float = 0.0
    description: ClassVar[str] = "one pre-registered two-sample t-test, no selection (every column exact)"
    naive_is_biased: ClassVar[bool] = False
    chunk_size: ClassVar[int] = 2000

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        object.__setattr__(self, "effect", check_real("effect", self.effect))

    @property
    def truth(self) -> str:
        if self.effect:
            return f"The pre-registered hypothesis (equal group means) is false: the means differ by {self.effect:g}."
        return "Global null: the pre-registered hypothesis (equal group means) is true."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return 1

    def certificates(self) -> tuple[Any, ...]:
        return ()

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        x = np.stack([g.standard_normal((self.n_obs, 1)) for g in rngs])
        if self.effect:
            x[:, :half] += self.effect
        t, df = _pooled_t(x[:, :half], x[:, half:])
        p = _two_sided_t(t[:, 0], df)
        k = int(round(self.split_fraction * half))
        ts, dfs = _pooled_t(x[:, k:half], x[:, half + k:])
        null = np.full(len(rngs), not self.effect)
        return self._finish(p, null, {"pvalue_split": _two_sided_t(ts[:, 0], dfs)})


# --------------------------------------------------------------------------------------------
# 1. Top-k among many noise features
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TopKNoise(Scenario):
    """Keep the feature with the largest ``|t|`` among ``n_features``, then t-test it on the same data.

    Data: ``n_obs`` rows, half in group "a" and half in "b"; ``n_features`` columns i.i.d.
    N(0, 1), except that the first ``len(effects)`` columns have mean ``effects[j]`` in group
    "a" (a real difference). Selection: TopK(k=1) by ``|Student t|`` (description length
    C(m, 1) = m, DFHPRR Thm 17). Test: Student's two-sample t of the chosen feature.

    Truth: the hypothesis of feature j is null iff j >= len(effects). With ``effects=()`` (the
    default) every hypothesis is null: a global null where the naive column rejects about
    :math:`1 - 0.95^{m}` of the time.
    """

    name: str = "topk_noise"
    n_obs: int = 200
    n_features: int = 50
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = "top-1 of many noise features by |t|, tested on the same data (description length)"
    chunk_size: ClassVar[int] = 100

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_int("n_features", self.n_features, low=1)
        object.__setattr__(self, "effects", tuple(float(e) for e in self.effects))
        if len(self.effects) > self.n_features:
            raise ValueError(f"`effects` must have at most n_features = {self.n_features} entries; "
                             f"got {len(self.effects)}.")

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

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(self.n_features),)

    @property
    def groups(self) -> np.ndarray:
        half = self.n_obs // 2
        return np.array(["a"] * half + ["b"] * (self.n_obs - half))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One dataset: an (n_obs, n_features) array; group "a" is the first half of the rows."""
        x = rng.standard_normal((self.n_obs, self.n_features))
        if self.effects:
            x[: self.n_obs // 2, : len(self.effects)] += np.asarray(self.effects)
        return x

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        labels = self.groups
        x = np.empty((len(rngs), self.n_obs, self.n_features))
        sel_a, sel_b, tst_a, tst_b = [], [], [], []
        for i, g in enumerate(rngs):
            x[i] = self.draw(g)
            parts = split_rows(self.n_obs, fraction=self.split_fraction, rng=g, stratify=labels)
            sel_a.append(parts.select[parts.select < half])
            sel_b.append(parts.select[parts.select >= half])
            tst_a.append(parts.test[parts.test < half])
            tst_b.append(parts.test[parts.test >= half])
        t, df = _pooled_t(x[:, :half], x[:, half:])
        rows = np.arange(len(rngs))
        j = np.abs(t).argmax(axis=1)
        p = _two_sided_t(t[rows, j], df)
        take = lambda idx: np.stack([x[i, idx[i]] for i in rows])  # noqa: E731
        ts, _ = _pooled_t(take(sel_a), take(sel_b))
        js = np.abs(ts).argmax(axis=1)
        tt, dft = _pooled_t(take(tst_a), take(tst_b))
        ps = _two_sided_t(tt[rows, js], dft)
        k = len(self.effects)
        return self._finish(p, j >= k, {"pvalue_split": ps}, null_split=js >= k)

    def pipeline(self, rng: np.random.Generator) -> pd.DataFrame:
        """The same replication through :class:`~selective.Analysis`, ``TopK``, ``TwoSampleTTest``
        and :func:`~selective.validation.splitting.data_splitting` (slow; for checking the vectorised path)."""
        from ...analysis.facade import Analysis
        from ...hypotheses import TwoSampleTTest
        from ...selectors.topk import TopK

        names = tuple(f"x{j:03d}" for j in range(self.n_features))
        d = pd.DataFrame(self.draw(rng), columns=list(names))
        d["group"] = self.groups

        def score(frame: pd.DataFrame) -> pd.Series:
            a = frame.loc[frame.group == "a", list(names)].to_numpy()[None]
            b = frame.loc[frame.group == "b", list(names)].to_numpy()[None]
            return pd.Series(np.abs(_pooled_t(a, b)[0][0]), index=list(names))

        selector = TopK(k=1, score=score, candidates=names, name="|t|")

        seen: list[tuple[str, ...]] = []

        def tests(chosen):
            seen.append(tuple(chosen))
            return [TwoSampleTTest(column=c, group="group", levels=("a", "b"), usevar="pooled") for c in chosen]

        analysis = Analysis(d, rng=rng, n_candidates=self.n_features)
        analysis.preregister(selector)  # one step, fixed in advance: the routes' thresholds are fixed
        chosen = analysis.select(selector).value
        for spec in tests(chosen):
            analysis.test(spec)
        frame = analysis.report().frame.copy()
        split = data_splitting(d, select=selector, tests=tests, fraction=self.split_fraction, rng=rng,
                               stratify="group")
        k = len(self.effects)
        frame["pvalue_split"] = split["pvalue_split"].to_numpy()
        frame["is_null"] = [names.index(c) >= k for c in chosen]
        frame["is_null_split"] = [names.index(c) >= k for c in seen[-1]]
        return frame
