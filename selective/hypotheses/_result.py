"""The result of a confirmatory test, and the rule that rebuilds its interval at any level.

Every interval is computed here from upper-tail quantiles (``isf``), never from ``ppf(1 - x)``:
the package widens intervals to a corrected level :math:`1 - \\gamma` with :math:`\\gamma` as
small as :math:`10^{-12}` or below, where ``1 - gamma`` has lost most of its digits (and is
exactly 1.0 once :math:`\\gamma < 1.1 \\times 10^{-16}`). Pass such levels as ``alpha=gamma``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.stats

from .._validation import check_in_interval

__all__ = ["TestResult", "IntervalRule"]

_NAN = float("nan")

#: Columns of :meth:`TestResult.to_frame`, the same for every test.
FRAME_COLUMNS = (
    "estimate",
    "ci_low",
    "ci_high",
    "statistic",
    "df",
    "df_denom",
    "pvalue_naive",
    "alternative",
    "confidence_level",
    "n_obs",
    "method",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalRule:
    """How a test's confidence interval is built, so it can be rebuilt at another level.

    ``kind`` is one of

    - ``"t"``: ``params = (estimate, standard_error, df)``, estimate +- t quantile * se;
    - ``"normal"``: ``params = (estimate, standard_error)``, estimate +- normal quantile * se;
    - ``"wilson"``: ``params = (count, nobs)``, the Wilson score interval for a proportion;
    - ``"fisher_z"``: ``params = (r, n, variance_factor)``,
      ``tanh(atanh(r) +- z * sqrt(variance_factor / (n - 3)))``;
    - ``"none"``: no interval (a joint or omnibus test); both ends are NaN.

    One-sided alternatives give one-sided intervals (the ones dual to the test), whose open
    end is the matching entry of ``bounds``. Both ends are clipped to ``bounds``.
    """

    kind: str
    params: tuple[float, ...] = ()
    alternative: str = "two-sided"
    bounds: tuple[float, float] = (-math.inf, math.inf)

    def __post_init__(self) -> None:
        if self.kind not in ("t", "normal", "wilson", "fisher_z", "none"):
            raise ValueError(
                f"`kind` must be one of 't', 'normal', 'wilson', 'fisher_z', 'none'; got {self.kind!r}."
            )

    def interval(self, alpha: float) -> tuple[float, float]:
        """The interval of miscoverage ``alpha`` (confidence level ``1 - alpha``)."""
        if self.kind == "none":
            return (_NAN, _NAN)
        tail = alpha / 2.0 if self.alternative == "two-sided" else alpha
        if self.kind == "t":
            estimate, se, df = self.params
            crit = float(scipy.stats.t.isf(tail, df))
            low, high = estimate - crit * se, estimate + crit * se
        elif self.kind == "normal":
            estimate, se = self.params
            crit = float(scipy.stats.norm.isf(tail))
            low, high = estimate - crit * se, estimate + crit * se
        elif self.kind == "wilson":
            low, high = _wilson(*self.params, crit=float(scipy.stats.norm.isf(tail)))
        else:  # fisher_z
            r, n, factor = self.params
            crit = float(scipy.stats.norm.isf(tail))
            z, se = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r), math.sqrt(factor / (n - 3))
            low, high = math.tanh(z - crit * se), math.tanh(z + crit * se)
        lo_bound, hi_bound = self.bounds
        if self.alternative == "greater":
            high = hi_bound
        elif self.alternative == "less":
            low = lo_bound
        return (float(min(max(low, lo_bound), hi_bound)), float(max(min(high, hi_bound), lo_bound)))


def _wilson(count: float, nobs: float, *, crit: float) -> tuple[float, float]:
    """Wilson (1927) score interval: the proportions the score test does not reject."""
    p = count / nobs
    crit2 = crit * crit
    denom = 1.0 + crit2 / nobs
    center = (p + crit2 / (2.0 * nobs)) / denom
    half = crit * math.sqrt(p * (1.0 - p) / nobs + crit2 / (4.0 * nobs * nobs)) / denom
    return (center - half, center + half)


def miscoverage(confidence_level: float | None, alpha: float | None) -> float:
    """Turn exactly one of ``confidence_level`` / ``alpha`` into a miscoverage in (0, 1)."""
    if (confidence_level is None) == (alpha is None):
        raise TypeError(
            "Pass exactly one of `confidence_level` and `alpha` (the miscoverage, 1 - confidence_level); "
            f"got confidence_level={confidence_level!r}, alpha={alpha!r}."
        )
    if alpha is not None:
        return check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither")
    level = check_in_interval("confidence_level", confidence_level, low=0.0, high=1.0, closed="neither")
    return 1.0 - level  # exact for levels >= 0.5 (Sterbenz); tiny miscoverages should come as alpha


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    """Naive result of one confirmatory test: what the test would say had nothing been selected.

    Attributes
    ----------
    hypothesis : str
        The spec's label (or its generated description of the null hypothesis).
    estimate : float
        Point estimate of the tested quantity (NaN for joint and omnibus tests).
    statistic : float
        Test statistic (t, z, F or chi-square; t with ``n - 2`` df for correlations).
    df : float
        Degrees of freedom of the statistic's reference distribution (numerator df for an F
        test); NaN for normal (z) statistics.
    df_denom : float
        Denominator degrees of freedom of an F statistic; NaN otherwise.
    pvalue_naive : float
        The p-value ignoring any selection.
    ci_naive : tuple of float
        Confidence interval at ``confidence_level`` ignoring any selection; one-sided for a
        one-sided ``alternative``; ``(nan, nan)`` where the test has none.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    confidence_level : float
        Level of ``ci_naive``.
    n_obs : int
        Number of observations (rows) the test used.
    method : str
        The statsmodels / scipy call and options that produced the numbers.
    """

    __test__ = False  # a class named Test* must not be collected by pytest

    hypothesis: str
    estimate: float
    statistic: float
    df: float
    pvalue_naive: float
    ci_naive: tuple[float, float]
    alternative: str
    confidence_level: float
    method: str = field(repr=False)
    n_obs: int
    df_denom: float = _NAN
    interval_rule: IntervalRule = field(default=IntervalRule(kind="none"), repr=False, compare=False)

    def ci_at(self, confidence_level: float | None = None, *, alpha: float | None = None) -> tuple[float, float]:
        """Recompute the naive interval at another level.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1).
        alpha : float, optional
            Miscoverage ``1 - confidence_level`` in (0, 1). Use it for levels within about
            ``1e-10`` of 1, such as the corrected level :math:`1 - \\gamma`: the quantiles are
            upper-tail ones (``isf``), accurate for any ``alpha`` down to the smallest floats.

        Returns
        -------
        tuple of float
            ``(low, high)``; one-sided when ``alternative`` is; ``(nan, nan)`` for tests
            without an interval.
        """
        return self.interval_rule.interval(miscoverage(confidence_level, alpha))

    def to_frame(self) -> pd.DataFrame:
        """One row indexed by ``hypothesis``; the columns are the same for every test."""
        row = {
            "estimate": self.estimate,
            "ci_low": self.ci_naive[0],
            "ci_high": self.ci_naive[1],
            "statistic": self.statistic,
            "df": self.df,
            "df_denom": self.df_denom,
            "pvalue_naive": self.pvalue_naive,
            "alternative": self.alternative,
            "confidence_level": self.confidence_level,
            "n_obs": self.n_obs,
            "method": self.method,
        }
        frame = pd.DataFrame([row], index=pd.Index([self.hypothesis], name="hypothesis"))
        return frame.astype({c: float for c in FRAME_COLUMNS if c not in ("alternative", "method", "n_obs")})


def make_result(
    *,
    spec,
    estimate: float,
    statistic: float,
    pvalue: float,
    rule: IntervalRule,
    method: str,
    n_obs: int,
    df: float = _NAN,
    df_denom: float = _NAN,
) -> TestResult:
    """Assemble a TestResult from a spec and the numbers of its statsmodels / scipy call."""
    alpha = 1.0 - spec.confidence_level
    return TestResult(
        hypothesis=spec.hypothesis,
        estimate=float(estimate),
        statistic=float(statistic),
        df=float(df),
        df_denom=float(df_denom),
        pvalue_naive=float(np.clip(pvalue, 0.0, 1.0)),
        ci_naive=rule.interval(alpha),
        alternative=spec.alternative,
        confidence_level=float(spec.confidence_level),
        method=method,
        n_obs=int(n_obs),
        interval_rule=rule,
    )
