r"""Sharper routes than the ledger, run through the report: inference on winners and data fission.

Design (:class:`SharpTopK`): ``n_features`` outcomes measured on two arms of ``n_per_arm`` rows,
equicorrelated normal (correlation ``rho``, unit variance, so the noise sd 1 is known), the first
``len(effects)`` shifted by ``effects`` in arm "a". One selection: ``TopK(k=1)`` by ``|Welch t|``
(:class:`~selective.selectors.TwoGroupScores`); the winner is tested with Welch's t-test.
Columns, each a whole :class:`~selective.Analysis` and its report:

- ``pvalue_naive`` ... ``pvalue_best``: the report's ledger columns;
- ``pvalue_winners``: the report's conditional column (``Analysis.test(..., conditional_on=)``,
  inference on winners, docs/THEORY.md 3.9; NaN where the report withholds it);
- ``pvalue_hybrid``: the report's hybrid column (AKM Section 4 with beta = alpha / 10 and a
  Bonferroni projection; NaN where the report withholds it);
- ``pvalue_fission``: a second analysis that splits every outcome by Gaussian fission
  (``Analysis.fission``, sigma = 1 known, tau = 1), screens the exploration copies and tests the
  winner's confirmation copy (the report's fission column, docs/THEORY.md 3.10);
- ``pvalue_split``: the screen on half of the rows (per arm), Welch's test of its winner on the
  other half;
- ``pvalue_oracle``: Welch's test of feature 0 on all rows with no selection, what an analyst who
  knew where the effect is would do (a reference for power: valid, but not available in practice).

Truth: the hypothesis of feature j is null iff j >= len(effects); each column has the truth of the
feature it tested (the winner, the fission winner, the split winner, feature 0).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._validation import check_in_interval, check_int
from ...accounting.certificates import DescriptionLength
from ..outcomes import Outcomes
from ..splitting import split_rows
from .base import _STANDARD, Scenario

__all__ = ["SharpTopK"]


def welch_test(column: str):
    """Welch's t-test of ``column`` between arms "a" and "b" (the sharp scenarios' test); the arms
    have the same distribution under the null, declared (``exchangeable``) for the permutation
    version."""
    from ...hypotheses import TwoSampleTTest

    return TwoSampleTTest(column=column, group="arm", levels=("a", "b"), usevar="unequal", exchangeable=True)


def replicate_by_feature(scenario, rngs) -> Outcomes:
    """Replications of a scenario whose ``analyse`` returns, per column, (p-value, index of the
    feature tested): a column's hypothesis is null iff that index is >= len(effects)."""
    r, k = len(rngs), len(scenario.effects)
    p = {c: np.full(r, np.nan) for c in scenario.columns}
    null = {c: np.ones(r, dtype=bool) for c in scenario.columns}
    for i, g in enumerate(rngs):
        for c, (value, j) in scenario.analyse(g).items():
            p[c][i], null[c][i] = value, j >= k
    return Outcomes.from_shared({c: v.reshape(r, 1) for c, v in p.items()}, null["pvalue_naive"].reshape(r, 1),
                                null_by_column={c: v.reshape(r, 1) for c, v in null.items()})

_EXTRA = ("pvalue_winners", "pvalue_hybrid", "pvalue_fission", "pvalue_oracle")


class TwoArmOutcomes:
    """Properties shared by the scenarios of many outcomes in two arms (fields ``n_per_arm``,
    ``n_features``, ``effects``): rows, candidates, outcome names and the stated truth."""

    __slots__ = ()

    def _truth(self, law: str, detail: str = "") -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: all {self.n_features} outcomes have equal {law} in both arms."
        return (f"Outcomes 0..{k - 1} have real differences {self.effects}{detail}; the other {self.n_features - k} "
                "are null.")

    @property
    def n_rows(self) -> int:
        return 2 * self.n_per_arm

    @property
    def n_candidates(self) -> int:
        return self.n_features

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"y{j:02d}" for j in range(self.n_features))


@dataclass(frozen=True, slots=True, kw_only=True)
class SharpTopK(TwoArmOutcomes, Scenario):
    """Top-1 of correlated normal outcomes by ``|Welch t|``: ledger, winners, fission, splitting, oracle.

    Data, selection and columns as in the module docstring (one replication: :meth:`analyse`).

    Truth: outcome j is null iff j >= ``len(effects)``; with ``effects=()`` (the default) every
    outcome is null (a global null).
    """

    name: str = "sharp_topk_winners_fission"
    n_features: int = 30
    n_per_arm: int = 100
    rho: float = 0.5
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = ("top-1 of correlated normal outcomes by |Welch t|, through the report: "
                                  "ledger, inference on winners, data fission, splitting, oracle")
    chunk_size: ClassVar[int] = 20
    column_labels: ClassVar[dict[str, str]] = {
        "pvalue_winners": "conditional on the ranking (inference on winners)",
        "pvalue_hybrid": "hybrid inference on winners (beta = alpha / 10)",
        "pvalue_fission": "data fission (Gaussian, sigma known)",
        "pvalue_oracle": "oracle (feature 0, no selection)",
    }

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=2)
        check_int("n_per_arm", self.n_per_arm, low=4)
        check_in_interval("rho", self.rho, low=0.0, high=1.0, closed="left")
        object.__setattr__(self, "effects", tuple(float(e) for e in self.effects))
        if len(self.effects) > self.n_features:
            raise ValueError(f"`effects` must have at most n_features = {self.n_features} entries; "
                             f"got {len(self.effects)}.")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + _EXTRA

    @property
    def naive_is_biased(self) -> bool:  # type: ignore[override]
        """Under the global null the naive p-value of the winner is biased; with real effects the
        winner is mostly a real one, so the null slots are rare."""
        return not self.effects

    @property
    def truth(self) -> str:
        return self._truth("means")

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(self.n_features),)

    def draw(self, rng: np.random.Generator) -> pd.DataFrame:
        n, m = self.n_rows, self.n_features
        x = math.sqrt(self.rho) * rng.standard_normal((n, 1)) + math.sqrt(1 - self.rho) * rng.standard_normal((n, m))
        if self.effects:
            x[: self.n_per_arm, : len(self.effects)] += np.asarray(self.effects)
        frame = pd.DataFrame(x, columns=list(self.names))
        frame["arm"] = np.repeat(["a", "b"], self.n_per_arm)
        return frame

    def _screen(self):
        from ...selectors.scores import TwoGroupScores
        from ...selectors.topk import TopK

        return TopK(k=1, score=TwoGroupScores(self.names, "arm", ("a", "b")), candidates=self.names)

    _welch = staticmethod(welch_test)

    def analyse(self, rng: np.random.Generator) -> dict[str, tuple[float, int]]:
        """One replication: for each column, (p-value, index of the feature it tested)."""
        from ...analysis.facade import Analysis

        frame = self.draw(rng)
        out: dict[str, tuple[float, int]] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = Analysis(frame, rng=rng, n_candidates=self.n_features)
            screen = self._screen()
            a.preregister(screen)
            sel = a.select(screen)
            j = self.names.index(sel.value[0])
            a.test(self._welch(sel.value[0]), conditional_on=sel)
            row = a.report().frame.iloc[0]
            for c in ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best"):
                out[c] = (float(row[c]), j)
            out["pvalue_winners"] = (float(row["pvalue_conditional"]), j)
            out["pvalue_hybrid"] = (float(row["pvalue_hybrid"]), j)
            f = Analysis(frame, rng=rng, n_candidates=self.n_features).fission(list(self.names), method="gaussian",
                                                                               sigma=1.0)
            sel_f = f.select(self._screen())
            f.test(self._welch(sel_f.value[0]))
            p_fission = float(f.report().frame["pvalue_fission"].iloc[0])
            out["pvalue_fission"] = (p_fission, self.names.index(sel_f.value[0]))
            parts = split_rows(self.n_rows, fraction=self.split_fraction, rng=rng, stratify=frame["arm"].to_numpy())
            first, second = frame.iloc[parts.select], frame.iloc[parts.test]
            chosen = self._screen().select(first).value[0]
            out["pvalue_split"] = (float(self._welch(chosen).run(second).pvalue_naive), self.names.index(chosen))
            out["pvalue_oracle"] = (float(self._welch(self.names[0]).run(frame).pvalue_naive), 0)
        return out

    def replicate_many(self, rngs):
        return replicate_by_feature(self, rngs)
