r"""Counts of successes: the report's columns beside binomial thinning, the baseline that keeps every row.

:class:`BinomialCountsThinning` runs the design of :mod:`selective.validation.scenarios.trusted`
(each replication a whole :class:`~selective.Analysis`, the corrected columns read from its
report) on counts of successes out of known numbers of trials, and adds the data-thinning
baseline of docs/THEORY.md 3.10: a second analysis that splits every count with its trials
(``Analysis.fission(method="binomial", trials="m")``), selects on the exploration copies and
tests on the confirmation copies; its column is the report's ``pvalue_fission``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._validation import check_in_interval, check_int
from .trusted import _DIAGNOSTIC, _STANDARD, _ThroughReport

__all__ = ["BinomialCountsThinning"]

_FISSION = "pvalue_fission"


@dataclass(frozen=True, slots=True, kw_only=True)
class BinomialCountsThinning(_ThroughReport):
    r"""Logit test of the count outcome most correlated with a covariate, and binomial thinning.

    Data: ``n_obs`` rows (clinics, say), each with :math:`m_i` trials drawn uniformly from
    ``trials`` (inclusive), a covariate :math:`x_i \sim N(0, 1)` and ``n_features`` count outcomes
    :math:`s_{ij} \sim \text{Binomial}(m_i, p_{ij})`, independent given :math:`(m, x)`, with
    :math:`\operatorname{logit} p_{ij} = \operatorname{logit}(\text{rate}) + \beta_j x_i`
    (:math:`\beta_j` = ``effects[j]`` for :math:`j <` ``len(effects)``, else 0). Selection:
    ``TopK(k=1)`` by :math:`|\operatorname{corr}(s_j, x)|`
    (:class:`~selective.selectors.CandidateScores`, ``kind="corr"``; it declares the columns it
    reads). Test: the logit of the counts on x, ``CoefficientTest("s + I(m - s) ~ x")``
    (Wald; the trials differ between rows, so the report has no permutation version and
    withholds its corrected columns below the trusted level).

    ``pvalue_fission``: the same selection and test in an analysis that first splits every
    outcome with its trials (``epsilon``; the exploration copy gets about ``epsilon`` of each
    row's trials); the report's fission column, valid as it is: the selection read only split
    outcomes and x, which the test conditions on (shown where the Wald p-value is trusted at
    0.05). ``pvalue_split``, ``pvalue_oracle`` and the diagnostic column as in
    :mod:`~selective.validation.scenarios.trusted`.

    Truth: with ``effects=()`` (the default) global null (every outcome is independent of x).
    Otherwise outcome j's hypothesis (coefficient of x zero) is null iff j >= ``len(effects)``,
    exactly, since the outcomes are independent given (m, x): each column carries the label of
    the outcome it tested (its own analysis' choice for splitting and thinning, outcome 0 for the
    oracle).
    """

    name: str = "thinning_binomial_counts"
    n_features: int = 30
    n_obs: int = 1000
    trials: tuple[int, int] = (3, 20)
    rate: float = 0.3
    epsilon: float = 0.5
    column_labels: ClassVar[dict[str, str]] = {
        **_ThroughReport.column_labels,
        _FISSION: "binomial thinning (explore half of each row's trials, test the other half)"}

    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"counts of successes, {self.trials[0]} to {self.trials[1]} trials a row: top-1 of {self.n_features}"
                f" by |corr| with x, logit of counts through the report; binomial thinning beside it")

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n_obs", self.n_obs, low=20)
        lo, hi = (self.trials if isinstance(self.trials, tuple) and len(self.trials) == 2 else (None, None))
        if not (isinstance(lo, int) and isinstance(hi, int) and 2 <= lo <= hi):
            raise ValueError(f"`trials` must be a pair of integers 2 <= low <= high; got {self.trials!r}.")
        check_in_interval("rate", self.rate, low=0.0, high=1.0, closed="neither")
        check_in_interval("epsilon", self.epsilon, low=0.0, high=1.0, closed="neither")

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: every count outcome is Binomial(m, {self.rate:g}), independent of x.",
                           "have log-odds slopes on x of")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + (_DIAGNOSTIC, _FISSION) + (("pvalue_oracle",) if self.effects else ())

    @property
    def n_rows(self) -> int:
        return self.n_obs

    def draw(self, rng):
        m = rng.integers(self.trials[0], self.trials[1] + 1, size=self.n_obs)
        x = rng.standard_normal(self.n_obs)
        slopes = np.zeros(self.n_features)
        slopes[: len(self.effects)] = self.effects
        p = 1.0 / (1.0 + np.exp(-(math.log(self.rate / (1.0 - self.rate)) + np.outer(x, slopes))))
        frame = pd.DataFrame(rng.binomial(m[:, None], p), columns=list(self.names))
        frame["m"], frame["x"] = m, x
        return frame

    def _score(self) -> Any:
        from ...selectors.scores import CandidateScores

        return CandidateScores(list(self.names), kind="corr", target="x", absolute=True)

    def _selector(self) -> Any:
        from ...selectors.topk import TopK

        return TopK(k=1, candidates=self.names, score=self._score(), name="|corr with x|")

    def scores(self, frame):
        return self._score()(frame)

    def spec(self, name):
        from ...hypotheses import CoefficientTest

        return CoefficientTest(formula=f"{name} + I(m - {name}) ~ x", term="x", model="logit")

    def _thinned(self, frame: pd.DataFrame, rng: np.random.Generator) -> tuple[float, str]:
        """The fission column of an analysis that thins every outcome with its trials, and its choice."""
        from ...analysis.facade import Analysis

        analysis = Analysis(frame, alpha=0.05, rng=rng, n_candidates=self.n_features)
        analysis.fission(list(self.names), method="binomial", trials="m", epsilon=self.epsilon)
        chosen = analysis.select(self._selector()).value[0]
        try:
            analysis.test(self.spec(chosen))
        except ValueError:  # the confirmation copy refused (no success at all): nothing tested
            return math.nan, chosen
        return float(analysis.report().frame[_FISSION].iloc[0]), chosen

    def replicate_many(self, rngs):
        r = len(rngs)
        thinned, null_thinned, reps = np.full(r, np.nan), np.ones(r, dtype=bool), []
        for i, g in enumerate(rngs):
            frame = self.draw(g)
            reps.append(self.analyse(g, frame))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                thinned[i], chosen = self._thinned(frame, g)
            null_thinned[i] = self.names.index(chosen) >= len(self.effects)
        out = self._tally(reps)
        out.pvalues[_FISSION], out.null[_FISSION] = thinned.reshape(r, 1), null_thinned.reshape(r, 1)
        return out
