r"""Asymptotic p-values compared with a corrected level: scenarios run through the report.

A corrected column compares the naive p-value with a threshold :math:`\gamma` near
:math:`\alpha/N`; with N in the hundreds that is about 1e-4, where normal and chi-square
approximations can reject several times too often (docs/THEORY.md pitfall 9 and 7.1). The
report (:func:`selective.analysis.trust.results_at_level`) therefore reruns such a test at
:math:`\gamma` with its exact or permutation version, or withholds the columns. The scenarios
of this module validate that fallback: each replication is a whole
:class:`~selective.Analysis` (``preregister``, ``select``, ``test``, ``report``), and the
corrected columns are read from the report.

Common design (:class:`_ThroughReport`): global null, N = ``n_features`` candidate outcomes
(or covariates) drawn under an adverse null, ``TopK(k=1)`` by the absolute test statistic
(``DescriptionLength(N)``, Bonferroni over the N declared hypotheses), the chosen one tested
on the same data. Columns:

- ``pvalue_naive``: the asymptotic p-value the test returned (what a user would see);
- ``pvalue_maxinfo`` ... ``pvalue_best``: the report's corrected columns, after the fallback
  (NaN where the report withholds them: no rejection);
- ``pvalue_split``: the same selection on half of the rows, the test on the other half through
  an analysis without selection at ``alpha`` = 0.01, so the p-value is trusted at every level
  from 0.01 on (rerun or withheld as above);
- ``pvalue_bonferroni_asymptotic``: :math:`\min(1, N p)` on the asymptotic p-value, the
  Bonferroni column as it would be without the fallback. A diagnostic: it shows what the
  fallback prevents.

A test that refuses the data (for instance no success at all in the tested half) tests nothing
in that replication, which counts as no rejection.

Signal variants (``effects``; empty by default, drawing exactly as before): candidates j <
``len(effects)`` carry a real effect of the scenario's kind (see each class), the others keep exactly
the null law, jointly with the outcome; a column's hypothesis is null iff the candidate it tested
(data splitting: its own winner) is not among them. They add ``pvalue_oracle``: candidate 0 tested on
all rows without selection at ``alpha`` = 0.01 as the split half is (for power; not available in practice).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from ..._validation import check_in_interval, check_int, check_positive
from ...accounting.certificates import DescriptionLength
from ..outcomes import Outcomes
from ..splitting import split_rows
from .base import _STANDARD, Scenario

__all__ = ["TwoProportionRare", "WelchSkewed", "StudentisedMeanSkewed", "SpearmanSmallN", "PoissonExposure",
           "TrustedReplication"]

#: Level of the analysis that tests the data-splitting half (its p-value is trusted from there on).
SPLIT_ALPHA = 0.01
_DIAGNOSTIC = "pvalue_bonferroni_asymptotic"


@dataclass(frozen=True)
class TrustedReplication:
    """One replication: the report of the analysis, the asymptotic result and the split p-value.

    Attributes
    ----------
    report : CorrectedTable or None
        The report of the selection-then-test analysis (None if the test refused the data).
    asymptotic : TestResult or None
        The result of ``Analysis.test`` (the asymptotic p-value, before any fallback).
    pvalue_split : float
        Data splitting's p-value (NaN when nothing was tested).
    chosen, chosen_split, pvalue_oracle : str, str, float
        The candidates selected on all rows and on the selection half; the oracle's p-value (NaN without
        ``effects``).
    """

    report: Any
    asymptotic: Any
    pvalue_split: float
    chosen: str = ""
    chosen_split: str = ""
    pvalue_oracle: float = math.nan


@dataclass(frozen=True, slots=True, kw_only=True)
class _ThroughReport(Scenario):
    """Base of the scenarios run through the report (see the module docstring)."""

    n_features: int = 300
    effects: tuple[float, ...] = ()
    effect_range: ClassVar[tuple[float, float]] = (-math.inf, math.inf)
    naive_is_biased: ClassVar[bool] = True
    chunk_size: ClassVar[int] = 10
    default_reps: ClassVar[int] = 2000
    column_labels: ClassVar[dict[str, str]] = {
        _DIAGNOSTIC: "Bonferroni on the asymptotic p-value, no fallback (diagnostic)",
        "pvalue_oracle": "oracle (feature 0, no selection)"}
    invalid_columns: ClassVar[dict[str, str]] = {
        _DIAGNOSTIC: "the asymptotic p-value compared with alpha/N, below the level where it is trusted "
                     "(THEORY.md 7.1)"}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=2)
        lo, hi = self.effect_range
        if not isinstance(self.effects, (tuple, list)) or len(self.effects) > self.n_features or not all(
                isinstance(e, numbers.Real) and type(e) is not bool and e != 0 and lo < e < hi for e in self.effects):
            raise ValueError(f"`effects` must be a tuple of at most n_features = {self.n_features} nonzero numbers "
                             f"in ({lo:g}, {hi:g}); got {self.effects!r}.")
        object.__setattr__(self, "effects", tuple(float(e) for e in self.effects))

    def _truth(self, null: str, signal: str) -> str:
        k = len(self.effects)
        return null if not k else (f"Candidates 0..{k - 1} {signal} {self.effects}; the other {self.n_features - k} "
                                   f"are null (without effects: {null})")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + (_DIAGNOSTIC,) + (("pvalue_oracle",) if self.effects else ())

    @property
    def names(self) -> tuple[str, ...]:
        """The declared candidates, in order."""
        return tuple(f"v{j:03d}" for j in range(self.n_features))

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(self.n_features),)

    # ---- what each scenario provides (draw, scores and spec: every scenario overrides them)
    def draw(self, rng: np.random.Generator) -> pd.DataFrame:  # pragma: no cover
        raise NotImplementedError

    def scores(self, frame: pd.DataFrame) -> pd.Series:  # pragma: no cover
        """Absolute test statistic of every candidate (the selection score)."""
        raise NotImplementedError

    def spec(self, name: str) -> Any:  # pragma: no cover
        raise NotImplementedError

    def strata(self, frame: pd.DataFrame) -> Any:
        """Labels within which the data-splitting halves are drawn (None: none)."""
        return None

    def _selector(self) -> Any:
        from ...selectors.topk import TopK

        return TopK(k=1, candidates=self.names, score=self.scores, name="|statistic|")

    def analyse(self, rng: np.random.Generator, frame: pd.DataFrame | None = None) -> TrustedReplication:
        """One replication through :class:`~selective.Analysis` and its report (of ``frame``, or a new draw)."""
        from ...analysis.facade import Analysis

        frame = self.draw(rng) if frame is None else frame
        selector = self._selector()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analysis = Analysis(frame, alpha=0.05, rng=rng, n_candidates=self.n_features)
            analysis.preregister(selector)
            chosen = analysis.select(selector).value[0]
            try:
                asymptotic = analysis.test(self.spec(chosen))
            except ValueError:
                report = asymptotic = None
            else:
                report = analysis.report()
            parts = split_rows(len(frame), fraction=self.split_fraction, rng=rng, stratify=self.strata(frame))
            first = frame.iloc[parts.select].reset_index(drop=True)
            second = frame.iloc[parts.test].reset_index(drop=True)
            chosen_split = selector.select(first).value[0]
            p_split = self._unselected(second, chosen_split, rng)
            p_oracle = self._unselected(frame, self.names[0], rng) if self.effects else math.nan
        return TrustedReplication(report=report, asymptotic=asymptotic, pvalue_split=p_split, chosen=chosen,
                                  chosen_split=chosen_split, pvalue_oracle=p_oracle)

    def _unselected(self, frame: pd.DataFrame, name: str, rng: np.random.Generator) -> float:
        """The report's p-value of ``name`` tested without selection at ``SPLIT_ALPHA`` (NaN: refused)."""
        from ...analysis.facade import Analysis

        analysis = Analysis(frame, alpha=SPLIT_ALPHA, rng=rng, n_candidates=1)
        try:
            analysis.test(self.spec(name))
        except ValueError:
            return math.nan
        return float(analysis.report().frame["pvalue_best"].iloc[0])

    def replicate_many(self, rngs):
        return self._tally([self.analyse(g) for g in rngs])

    def _tally(self, reps: list[TrustedReplication]) -> Outcomes:
        """The outcomes of replications already run (the columns of this base class)."""
        r = len(reps)
        cols = {c: np.full(r, np.nan) for c in self.columns}
        k, null, null_split = len(self.effects), np.ones(r, dtype=bool), np.ones(r, dtype=bool)
        for i, rep in enumerate(reps):
            null[i], null_split[i] = self.names.index(rep.chosen) >= k, self.names.index(rep.chosen_split) >= k
            for c in ("pvalue_split", "pvalue_oracle")[: 1 + bool(k)]:
                cols[c][i] = getattr(rep, c)
            if rep.report is None:
                continue
            row = rep.report.frame.iloc[0]
            p = float(rep.asymptotic.pvalue_naive)
            cols["pvalue_naive"][i] = p
            cols[_DIAGNOSTIC][i] = min(1.0, self.n_features * p)
            for c in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best"):
                cols[c][i] = float(row[c])
        by = {"pvalue_split": null_split.reshape(r, 1), "pvalue_oracle": np.zeros((r, 1), dtype=bool)}
        return Outcomes.from_shared({c: v.reshape(r, 1) for c, v in cols.items()}, null.reshape(r, 1),
                                    null_by_column={c: v for c, v in by.items() if c in cols})


def _arms(n1: int, n2: int) -> np.ndarray:
    return np.array(["a"] * n1 + ["b"] * n2, dtype=object)


def _frame(values: np.ndarray, names: tuple[str, ...], **extra: Any) -> pd.DataFrame:
    frame = pd.DataFrame(values, columns=list(names))
    for key, col in extra.items():
        frame[key] = col
    return frame


# --------------------------------------------------------------------------------------------
# (a) pooled two-proportion z on rare outcomes, unbalanced arms
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoProportionRare(_ThroughReport):
    r"""Pooled two-proportion z-test of the rare outcome with the largest ``|z|``.

    ``n_features`` binary outcomes, each Bernoulli(``prob``) in both arms of ``n1`` and ``n2``
    rows (unbalanced). Selection: the outcome with the largest pooled ``|z|`` (0 without any
    success). Test: :class:`~selective.hypotheses.TwoSampleProportionTest`; the report uses
    Fisher's exact test below the z-test's exact conditional trusted level.

    Truth: global null (every outcome has the same proportion in both arms). With ``effects``,
    outcome j < ``len(effects)`` has probability ``prob + effects[j]`` in arm "a" (the same
    uniform draws, compared with that threshold) and ``prob`` in arm "b": its difference in
    proportions is exactly ``effects[j]``; every other outcome is Bernoulli(``prob``) in both arms.
    """

    name: str = "trusted_two_proportion_rare"
    n1: int = 100
    n2: int = 1400
    prob: float = 0.015
    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"rare binary outcomes, unbalanced arms: top-1 of {self.n_features} by pooled |z|,"
                f" tested through the report (Fisher fallback)")

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n1", self.n1, low=2)
        check_int("n2", self.n2, low=2)
        check_in_interval("prob", self.prob, low=0.0, high=1.0, closed="neither")

    @property
    def effect_range(self) -> tuple[float, float]:  # type: ignore[override]
        return -self.prob, 1.0 - self.prob

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: all {self.n_features} outcomes have probability {self.prob:g} in both arms.",
                           "have arm-a minus arm-b differences in proportion")

    @property
    def n_rows(self) -> int:
        return self.n1 + self.n2

    def draw(self, rng):
        u = rng.random((self.n_rows, self.n_features))
        y, k = (u < self.prob).astype(np.int8), len(self.effects)
        y[: self.n1, :k] = u[: self.n1, :k] < self.prob + np.asarray(self.effects)  # no-op without effects
        return _frame(y, self.names, arm=_arms(self.n1, self.n2))

    def scores(self, frame):
        arm = frame["arm"].to_numpy() == "a"
        y = frame[list(self.names)].to_numpy(dtype=float)
        n1, n2 = arm.sum(), (~arm).sum()
        c1, c = y[arm].sum(axis=0), y.sum(axis=0)
        pooled = c / (n1 + n2)
        se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
        with np.errstate(invalid="ignore", divide="ignore"):
            z = (c1 / n1 - (c - c1) / n2) / se
        return pd.Series(np.abs(np.nan_to_num(z, nan=0.0)), index=list(self.names))

    def spec(self, name):
        from ...hypotheses import TwoSampleProportionTest

        return TwoSampleProportionTest(column=name, group="arm", levels=("a", "b"))

    def strata(self, frame):
        return frame["arm"].to_numpy()


# --------------------------------------------------------------------------------------------
# (b) Welch on skewed outcomes, unbalanced arms
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WelchSkewed(_ThroughReport):
    r"""Welch's test of the lognormal outcome with the largest ``|t|``, arms of ``n1`` and ``n2`` rows.

    ``n_features`` outcomes, each lognormal(0, 1) in both arms (same distribution: the label
    permutation is exact). Selection: largest ``|Welch t|``. Test:
    :class:`~selective.hypotheses.TwoSampleTTest` with ``usevar="unequal", exchangeable=True``; the report uses
    the label-permutation p-value with :math:`B + 1 \ge 10/\gamma` resamples.

    Truth: global null (every outcome has the same distribution in both arms). With ``effects``,
    outcome j < ``len(effects)`` is lognormal(0, 1) + ``effects[j]`` in arm "a": the skewness is
    kept and the means differ by exactly ``effects[j]``; every other outcome is as under the null.
    """

    name: str = "trusted_welch_skewed"
    n_features: int = 200
    n1: int = 15
    n2: int = 135
    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"lognormal outcomes, unbalanced arms: top-1 of {self.n_features} by |Welch t|,"
                f" tested through the report (permutation fallback)")

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n1", self.n1, low=3)
        check_int("n2", self.n2, low=3)

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: all {self.n_features} outcomes are lognormal(0, 1) in both arms.",
                           "have arm-a minus arm-b mean differences")

    @property
    def n_rows(self) -> int:
        return self.n1 + self.n2

    def draw(self, rng):
        x = rng.lognormal(size=(self.n_rows, self.n_features))
        x[: self.n1, : len(self.effects)] += np.asarray(self.effects)  # no-op without effects
        return _frame(x, self.names, arm=_arms(self.n1, self.n2))

    def scores(self, frame):
        from ...selectors import welch_t_scores

        return welch_t_scores(frame, list(self.names), "arm", ("a", "b")).abs()

    def spec(self, name):
        from ...hypotheses import TwoSampleTTest

        # the arms have the same distribution under the null: declared, so the permutation is used
        return TwoSampleTTest(column=name, group="arm", levels=("a", "b"), usevar="unequal", exchangeable=True)

    def strata(self, frame):
        return frame["arm"].to_numpy()


# --------------------------------------------------------------------------------------------
# (c) one-sample z on a studentised skewed mean
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StudentisedMeanSkewed(_ThroughReport):
    r"""One-sample z-test (studentised mean) of the exponential outcome with the largest ``|z|``.

    ``n_features`` outcomes of ``n_obs`` exponential(1) values; the null is mean 1. Selection:
    largest ``|z|``. Test: :class:`~selective.hypotheses.OneSampleZTest`. No test of a mean is
    exact without a model, and the t reference of ``run_at_level`` is itself charged the
    skewness rule, which a skewed sample of 50 never passes near 1e-4: the report withholds
    every corrected column that could reject (the split test at 0.01, on 25 rows, likewise:
    it is shown only where its p-value is at or above its trusted level, so cannot reject).

    Truth: global null (every outcome has mean 1). With ``effects``, outcome j < ``len(effects)``
    is exponential(1) + ``effects[j]``: the skewness is kept and its mean is exactly
    1 + ``effects[j]``; every other outcome is as under the null.
    """

    name: str = "trusted_studentised_mean_skewed"
    n_obs: int = 50
    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"exponential outcomes, n = {self.n_obs}: top-1 of {self.n_features} by |z| of the mean,"
                f" tested through the report (withheld where it could reject)")

    withheld_columns: ClassVar[dict[str, str]] = {
        **{c: "the report withholds it: a z (or t) p-value of a skewed mean of 50 is not trusted near alpha/N "
              "(THEORY.md 7.1)" for c in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best")}}

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: all {self.n_features} outcomes are exponential with mean 1.",
                           "have means 1 plus")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    def draw(self, rng):
        x = rng.exponential(size=(self.n_obs, self.n_features))
        x[:, : len(self.effects)] += np.asarray(self.effects)  # no-op without effects
        return _frame(x, self.names)

    def scores(self, frame):
        x = frame[list(self.names)].to_numpy()
        z = (x.mean(axis=0) - 1.0) / (x.std(axis=0, ddof=1) / math.sqrt(len(x)))
        return pd.Series(np.abs(z), index=list(self.names))

    def spec(self, name):
        from ...hypotheses import OneSampleZTest

        return OneSampleZTest(column=name, value=1.0)


# --------------------------------------------------------------------------------------------
# (d) Spearman at small n
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SpearmanSmallN(_ThroughReport):
    r"""Spearman's test of the covariate most rank-correlated with ``y``, at ``n_obs`` = 12.

    ``y`` and ``n_features`` covariates, all independent N(0, 1) on ``n_obs`` rows. Selection:
    largest ``|rho|`` with ``y``. Test: :class:`~selective.hypotheses.SpearmanCorrelationTest`
    (t approximation); the report uses the permutation law of the ranks.

    Truth: global null (every covariate is independent of y). With ``effects`` (Spearman
    correlations), covariate j < ``len(effects)`` is :math:`r_j y + \sqrt{1 - r_j^2} z_j`, :math:`z_j` its
    null draw and :math:`r_j = 2 \sin(\pi\,\text{effects}[j] / 6)`: bivariate normal with y, Spearman
    correlation exactly ``effects[j]``; every other covariate is independent of y and of them.
    """

    name: str = "trusted_spearman_small_n"
    n_obs: int = 12
    effect_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"n = {self.n_obs}: top-1 of {self.n_features} covariates by |Spearman rho| with y,"
                f" tested through the report (permutation fallback)")

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: y is independent of all {self.n_features} covariates.",
                           "have Spearman correlations with y")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    def draw(self, rng):
        x, y = rng.standard_normal((self.n_obs, self.n_features)), rng.standard_normal(self.n_obs)
        r = 2.0 * np.sin(np.pi * np.asarray(self.effects) / 6.0)
        x[:, : len(r)] = r * y[:, None] + np.sqrt(1.0 - r * r) * x[:, : len(r)]  # no-op without effects
        return _frame(x, self.names, y=y)

    def scores(self, frame):
        a = stats.rankdata(frame[list(self.names)].to_numpy(), axis=0)
        b = stats.rankdata(frame["y"].to_numpy())
        a = a - a.mean(axis=0)
        b = b - b.mean()
        rho = (b @ a) / np.sqrt((a * a).sum(axis=0) * (b @ b))
        return pd.Series(np.abs(rho), index=list(self.names))

    def spec(self, name):
        from ...hypotheses import SpearmanCorrelationTest

        return SpearmanCorrelationTest(column1=name, column2="y")


# --------------------------------------------------------------------------------------------
# (e) Poisson regression Wald with an overdispersed exposure
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PoissonExposure(_ThroughReport):
    r"""Poisson-regression Wald test of the overdispersed exposure with the largest score ``|z|``.

    ``y`` Poisson(``rate``) on ``n_obs`` rows and ``n_features`` exposures, each negative
    binomial with mean 5 and variance 30 (``rng.negative_binomial(1, 1/6)``), all independent.
    Selection: largest ``|z|`` of the score test at the intercept-only fit,
    :math:`\sum_i (x_i - \bar x)(y_i - \bar y) / \sqrt{\bar y \sum_i (x_i - \bar x)^2}`. Test:
    :class:`~selective.hypotheses.CoefficientTest` with ``model="poisson"`` (Wald); the report
    uses the permutation law of the efficient score (the only nuisance term is the intercept,
    so every outcome is exchangeable under the null).

    Truth: global null (y is independent of every exposure). With ``effects``, exposure j <
    ``len(effects)`` is the negative binomial draw + ``effects[j]`` y: its covariance with y is
    ``effects[j] * rate`` > 0, so its Poisson-regression coefficient is not 0; y stays Poisson(``rate``)
    and independent of every other exposure, as under the null (coefficient 0, permutation exact).
    """

    name: str = "trusted_poisson_exposure"
    n_features: int = 200
    n_obs: int = 150
    rate: float = 1.0
    effect_range: ClassVar[tuple[float, float]] = (0.0, math.inf)
    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"Poisson outcome, overdispersed exposures: top-1 of {self.n_features} by score |z|,"
                f" Wald test through the report (permutation fallback)")

    def __post_init__(self) -> None:
        _ThroughReport.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_positive("rate", self.rate)

    @property
    def truth(self) -> str:
        return self._truth(f"Global null: y ~ Poisson({self.rate:g}) is independent of all {self.n_features} "
                           "exposures.", "are negative binomial plus y times")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    def draw(self, rng):
        x = rng.negative_binomial(1, 1.0 / 6.0, size=(self.n_obs, self.n_features)).astype(float)
        y = rng.poisson(self.rate, size=self.n_obs).astype(float)
        x[:, : len(self.effects)] += y[:, None] * np.asarray(self.effects)  # no-op without effects
        return _frame(x, self.names, y=y)

    def scores(self, frame):
        x = frame[list(self.names)].to_numpy()
        y = frame["y"].to_numpy()
        xc = x - x.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            z = ((y - y.mean()) @ xc) / np.sqrt(y.mean() * (xc * xc).sum(axis=0))
        return pd.Series(np.abs(np.nan_to_num(z, nan=0.0)), index=list(self.names))

    def spec(self, name):
        from ...hypotheses import CoefficientTest

        return CoefficientTest(formula=f"y ~ {name}", term=name, model="poisson")
