r"""Randomized selective inference after a DP screen, run through the report.

Design (:class:`SharpNoisyTopK`): ``n_features`` outcomes on two arms of ``n_per_arm`` rows,
equicorrelated normal (correlation ``rho``, unit variance), the first ``len(effects)`` shifted by
``effects`` in arm "a", every value clipped to [-``clip``, ``clip``] before the analysis (so the
difference of arm means has replace-one sensitivity :math:`2c/n_a` with the arms fixed: the DP
certificate is honest). One selection: :class:`~selective.selectors.NoisyTopK` (k = 1, budget
``epsilon``) by the absolute difference of arm means; the winner is tested with Welch's t-test
of its (clipped) column. Columns, each from a whole :class:`~selective.Analysis` and its report:

- ``pvalue_naive`` ... ``pvalue_best``: the report's ledger columns (the DP max-information and
  mutual-information routes);
- ``pvalue_randomized``: the report's conditional column (``Analysis.test(...,
  conditional_on=)``): conditional on the noisy selection with the exponential mechanism's
  Gumbel law (docs/THEORY.md 3.12; NaN where the report withholds it);
- ``pvalue_split``: the same noisy screen on half of the rows (per arm), Welch's test of its
  winner on the other half;
- ``pvalue_oracle``: Welch's test of feature 0 on all rows with no selection (a reference for
  power, not available in practice).

Truth: the hypothesis of feature j is null iff j >= len(effects) (clipping keeps equal laws
equal); each column has the truth of the feature it tested.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._validation import check_in_interval, check_int, check_positive
from ..splitting import split_rows
from .base import _STANDARD, Scenario
from .sharp import TwoArmOutcomes, replicate_by_feature, welch_test

__all__ = ["SharpNoisyTopK", "SharpSignedNoisyTopK"]

_EXTRA = ("pvalue_randomized", "pvalue_oracle")


@dataclass(frozen=True, slots=True, kw_only=True)
class SharpNoisyTopK(TwoArmOutcomes, Scenario):
    """Noisy top-1 (exponential mechanism) of clipped normal outcomes by the absolute difference of means:
    ledger, randomized conditional inference, splitting, oracle (module docstring).

    Truth: outcome j is null iff j >= ``len(effects)``; with ``effects=()`` (the default) every
    outcome is null (a global null).
    """

    name: str = "sharp_noisy_topk_randomized"
    n_features: int = 30
    n_per_arm: int = 100
    rho: float = 0.5
    clip: float = 3.0
    epsilon: float = 1.0
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = ("noisy top-1 (exponential mechanism) of clipped normal outcomes by |difference "
                                  "of means|, through the report: ledger, randomized conditional inference, "
                                  "splitting, oracle")
    chunk_size: ClassVar[int] = 20
    column_labels: ClassVar[dict[str, str]] = {
        "pvalue_randomized": "conditional on the noisy selection (randomized)",
        "pvalue_oracle": "oracle (feature 0, no selection)",
    }

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=2)
        check_int("n_per_arm", self.n_per_arm, low=4)
        check_in_interval("rho", self.rho, low=0.0, high=1.0, closed="left")
        check_positive("clip", self.clip)
        check_positive("epsilon", self.epsilon)
        object.__setattr__(self, "effects", tuple(float(e) for e in self.effects))
        if len(self.effects) > self.n_features:
            raise ValueError(f"`effects` must have at most n_features = {self.n_features} entries; "
                             f"got {len(self.effects)}.")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + _EXTRA

    #: The noise hides much of the choice: at epsilon 0.2 on 2,000 rows the naive p-value of
    #: the winner rejects about 0.11 at 0.05 under the global null (1,000 replications), a bias
    #: too small to be shown reliably in short runs.
    naive_is_biased: ClassVar[bool] = False

    @property
    def truth(self) -> str:
        return self._truth("laws", f" (before clipping at +-{self.clip:g})")

    @property
    def sensitivity(self) -> float:
        """Replace-one sensitivity of a difference of arm means of values in [-c, c] (arms fixed)."""
        return 2.0 * self.clip / self.n_per_arm

    def certificates(self) -> tuple[Any, ...]:
        from ...mechanisms.exponential import report_noisy_topk_certificate

        return (report_noisy_topk_certificate(1, epsilon=self.epsilon),)

    def draw(self, rng: np.random.Generator) -> pd.DataFrame:
        n, m = self.n_rows, self.n_features
        x = math.sqrt(self.rho) * rng.standard_normal((n, 1)) + math.sqrt(1 - self.rho) * rng.standard_normal((n, m))
        if self.effects:
            x[: self.n_per_arm, : len(self.effects)] += np.asarray(self.effects)
        frame = pd.DataFrame(np.clip(x, -self.clip, self.clip), columns=list(self.names))
        frame["arm"] = np.repeat(["a", "b"], self.n_per_arm)
        return frame

    def _screen(self, n_per_arm: int, n_rows: int | None = None):
        from ...selectors.scores import TwoGroupScores
        from ...selectors.topk import NoisyTopK

        return NoisyTopK(k=1, epsilon=self.epsilon, sensitivity=2.0 * self.clip / n_per_arm,
                         score=TwoGroupScores(self.names, "arm", ("a", "b"), kind="difference"),
                         candidates=self.names)

    _welch = staticmethod(welch_test)

    def analyse(self, rng: np.random.Generator) -> dict[str, tuple[float, int]]:
        """One replication: for each column, (p-value, index of the feature it tested)."""
        from ...analysis.facade import Analysis

        frame = self.draw(rng)
        out: dict[str, tuple[float, int]] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = Analysis(frame, rng=rng, n_candidates=self.n_features)
            screen = self._screen(self.n_per_arm, self.n_rows)
            a.preregister(screen)
            sel = a.select(screen)
            j = self.names.index(sel.value[0])
            a.test(self._welch(sel.value[0]), conditional_on=sel)
            row = a.report().frame.iloc[0]
            for c in ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best"):
                out[c] = (float(row[c]), j)
            out["pvalue_randomized"] = (float(row["pvalue_conditional"]), j)
            parts = split_rows(self.n_rows, fraction=self.split_fraction, rng=rng, stratify=frame["arm"].to_numpy())
            first, second = frame.iloc[parts.select], frame.iloc[parts.test]
            half = int(min(np.sum(first["arm"].to_numpy() == "a"), np.sum(first["arm"].to_numpy() == "b")))
            chosen = self._screen(max(half, 1), len(first)).select(first, rng).value[0]
            out["pvalue_split"] = (float(self._welch(chosen).run(second).pvalue_naive), self.names.index(chosen))
            out["pvalue_oracle"] = (float(self._welch(self.names[0]).run(frame).pvalue_naive), 0)
        return out

    def replicate_many(self, rngs):
        return replicate_by_feature(self, rngs)


@dataclass(frozen=True, slots=True, kw_only=True)
class SharpSignedNoisyTopK(SharpNoisyTopK):
    """As :class:`SharpNoisyTopK`, with unequal arms and outcome means, the screen ranking signed
    clipped means (:class:`~selective.selectors.clipped_scores.SignedClippedMeanScores`, +1 in
    arm "a" and -1 in arm "b": the plan score ``signed_mean``; replace-one sensitivity 2c/n over
    all rows). Arm "a" holds ``treated_fraction`` of the ``2 n_per_arm`` rows, and outcome j has
    mean ``offsets[j]`` in both arms, evenly spaced over +-``offset``: under the null a signed
    score then has mean (2 f - 1) times the outcome's clipped mean, which drives part of the
    choice. The winner's Welch test of the difference of arm means is not a ranked score: its
    conditional column is the law of that difference given the noisy choice of the signed scores
    (:func:`selective.conditional.randomized_target_inference`, docs/THEORY.md 3.12). With equal
    arms and no offsets it is :class:`SharpNoisyTopK` exactly (the signed score is half the
    difference, its sensitivity half as large).

    Truth: outcome j is null iff j >= ``len(effects)`` (the offsets are the same in both arms);
    with ``effects=()`` (the default) every outcome is null.
    """

    name: str = "sharp_signed_noisy_topk"
    treated_fraction: float = 0.25
    offset: float = 0.5
    description: ClassVar[str] = ("noisy top-1 (exponential mechanism) of clipped normal outcomes with unequal means "
                                  "by |signed clipped mean| (+1 in one arm, -1 in the other; arms of unequal size), "
                                  "through the report: ledger, randomized conditional inference of the difference of "
                                  "means, splitting, oracle")

    def __post_init__(self) -> None:
        SharpNoisyTopK.__post_init__(self)
        check_in_interval("treated_fraction", self.treated_fraction, low=0.0, high=1.0, closed="neither")
        check_positive("offset", self.offset, allow_zero=True)
        n_a = round(self.treated_fraction * self.n_rows)
        if min(n_a, self.n_rows - n_a) < 4:
            small = min(n_a, self.n_rows - n_a)
            raise ValueError(f"`treated_fraction` {self.treated_fraction!r} leaves an arm of {small} of the "
                             f"{self.n_rows} rows; each arm needs at least 4.")

    @property
    def sensitivity(self) -> float:
        """Replace-one sensitivity of a signed clipped mean over all rows: 2c/n."""
        return 2.0 * self.clip / self.n_rows

    def draw(self, rng: np.random.Generator) -> pd.DataFrame:
        n, m = self.n_rows, self.n_features
        n_a = round(self.treated_fraction * n)
        x = math.sqrt(self.rho) * rng.standard_normal((n, 1)) + math.sqrt(1 - self.rho) * rng.standard_normal((n, m))
        x += np.linspace(-self.offset, self.offset, m)
        if self.effects:
            x[:n_a, : len(self.effects)] += np.asarray(self.effects)
        frame = pd.DataFrame(np.clip(x, -self.clip, self.clip), columns=list(self.names))
        frame["arm"] = np.where(np.arange(n) < n_a, "a", "b")
        return frame

    def _screen(self, n_per_arm: int, n_rows: int | None = None):
        from ...selectors.clipped_scores import SignedClippedMeanScores
        from ...selectors.topk import NoisyTopK

        score = SignedClippedMeanScores(self.names, "arm", "a", clip=self.clip, absolute=True)
        return NoisyTopK(k=1, epsilon=self.epsilon, sensitivity=score.sensitivity(n_rows or 2 * n_per_arm),
                         score=score, candidates=self.names)
