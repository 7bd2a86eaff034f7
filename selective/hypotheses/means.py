"""Tests of means: one-sample, paired and two-sample t-tests; one- and two-sample z-tests.

All numbers come from ``statsmodels.stats.weightstats`` (``DescrStatsW``, ``CompareMeans``,
``ztest``); intervals are rebuilt from the same estimate, standard error and df with
upper-tail quantiles (see :mod:`selective.hypotheses._result`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ztest

from .._validation import check_choice, check_real
from . import _resample, _trust, _trust_model
from ._result import IntervalRule, TestResult, make_result, with_pvalue
from ._spec import (
    SM_ALTERNATIVE,
    TestSpec,
    as_float,
    check_column_name,
    check_levels,
    check_value,
    fmt,
    group_label,
    group_values,
    require_n,
    select,
    two_groups,
)

__all__ = ["OneSampleTTest", "PairedTTest", "TwoSampleTTest", "OneSampleZTest", "TwoSampleZTest"]

USEVAR = ("pooled", "unequal")


def _constant(values: np.ndarray) -> bool:
    return bool(np.all(values == values[0]))


def _pow2_exponent(*arrays: np.ndarray, value: float = 0.0) -> int:
    """k with max |values| * 2**-k in [0.5, 1): dividing by 2**k is exact for normal floats and
    keeps sums of squares inside the double range, so the same data times any constant give
    the same statistic and p-value (a scale of 1e+-155 no longer over- or underflows)."""
    top = max([float(np.max(np.abs(a))) for a in arrays if a.size] + [abs(float(value))])
    return int(np.frexp(top)[1]) if top > 0 and np.isfinite(top) else 0


def _check_clip(spec: Any) -> None:
    """``clip`` is None or a finite c > 0 with ``|value| < c`` (a clipped mean lies in [-c, c])."""
    if spec.clip is None:
        return
    c = check_real("clip", spec.clip)
    if not (math.isfinite(c) and c > 0):
        raise ValueError(f"`clip` must be None or a finite number > 0; got {spec.clip!r}.")
    if not abs(spec.value) < c:
        raise ValueError(f"`value` must lie strictly inside (-clip, clip) = ({-c:g}, {c:g}) when `clip` is given "
                         f"(the mean of clipped values cannot be outside it); got value={spec.value!r}.")


def _clipped(spec: Any, x: np.ndarray) -> np.ndarray:
    return x if spec.clip is None else np.clip(x, -float(spec.clip), float(spec.clip))


def _mean_of(spec: Any) -> str:
    return f"mean({spec.column})" if spec.clip is None else f"mean(clip({spec.column}, ±{fmt(spec.clip)}))"


def _one_sample(spec: TestSpec, x: np.ndarray, *, kind: str, where: str, call: str) -> TestResult:
    """t (``kind="t"``) or z test that the mean of ``x`` is ``spec.value``."""
    what = "a t-test" if kind == "t" else "a z-test"
    require_n(len(x), 2, where=where, what=what)
    if _constant(x):
        raise ValueError(f"{where} is constant ({float(x[0])!r}): its standard error is 0 and {what} is undefined.")
    k = _pow2_exponent(x, value=spec.value)
    x = np.ldexp(x, -k)
    value = float(np.ldexp(spec.value, -k))
    stats = DescrStatsW(x)
    mean, std_mean = float(np.ldexp(stats.mean, k)), float(np.ldexp(stats.std_mean, k))
    alternative = SM_ALTERNATIVE[spec.alternative]
    if kind == "t":
        statistic, pvalue, df = stats.ttest_mean(value, alternative=alternative)
        rule = IntervalRule(kind="t", params=(mean, std_mean, df), alternative=spec.alternative)
        method = f"statsmodels DescrStatsW({call}).ttest_mean(value={spec.value!r}, alternative={alternative!r})"
        pvalue_method = "exact_under_model"
        trusted = _trust_model.studentised_mean_trusted_level(x, spec.alternative, reference="t")
    else:
        statistic, pvalue = ztest(x, value=value, alternative=alternative)
        df = float("nan")
        rule = IntervalRule(kind="normal", params=(mean, std_mean), alternative=spec.alternative)
        method = f"statsmodels ztest({call}, value={spec.value!r}, alternative={alternative!r}, ddof=1)"
        pvalue_method, trusted = "asymptotic", one_sample_z_trusted_level(x, spec.alternative)
    return make_result(
        spec=spec, estimate=mean, statistic=statistic, pvalue=pvalue, df=df, rule=rule, method=method,
        n_obs=len(x), pvalue_method=pvalue_method, trusted_level=trusted,
    )


def one_sample_z_trusted_level(x: np.ndarray, alternative: str, *, reference: str = "normal") -> float:
    """Trusted level of a studentised mean of ``x`` with a normal (or ``"t"``) reference.

    Edgeworth rule of :mod:`selective.hypotheses._trust` with the skewness bound of the mean;
    a normal reference also pays its exact normal-model ratio against :math:`t_{n-1}`.
    Vectorised: ``x`` of shape ``(..., n)`` gives one level per row.
    """
    return _trust_model.studentised_mean_trusted_level(x, alternative, reference=reference)


def two_sample_trusted_level(x1: np.ndarray, x2: np.ndarray, alternative: str, *, kind: str, usevar: str):
    """Trusted level of a two-sample studentised difference.

    Student's t: the pooled t is Pearson's t of the outcome against the group indicator, so
    :func:`~selective.hypotheses._trust_model.correlation_trusted_level` bounds its error
    against the label-permutation law (exact when the two groups have the same distribution).
    Welch: :func:`~selective.hypotheses._trust_model.welch_trusted_level` (Edgeworth, second
    order when two-sided). z-tests pay in addition their normal-model ratio against t
    (Welch-Satterthwaite df for unequal variances, :math:`n_1 + n_2 - 2` pooled). Vectorised
    over leading axes."""
    if kind == "t" and usevar == "pooled":
        n1, n2 = np.shape(x1)[-1], np.shape(x2)[-1]
        indicator = np.concatenate([np.ones(n1), np.zeros(n2)])
        values = np.concatenate([np.asarray(x1, dtype=float), np.asarray(x2, dtype=float)], axis=-1)
        return _trust_model.correlation_trusted_level(indicator, values, alternative=alternative)
    if kind == "t":
        return _trust_model.welch_trusted_level(x1, x2, alternative)
    n1, n2 = np.shape(x1)[-1], np.shape(x2)[-1]
    if usevar == "pooled":
        df = n1 + n2 - 2.0
    else:
        a, b = np.var(x1, axis=-1, ddof=1) / n1, np.var(x2, axis=-1, ddof=1) / n2
        with np.errstate(invalid="ignore", divide="ignore"):
            df = np.nan_to_num((a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1)), nan=1.0)
    ratio = _trust.t_reference_ratio(df, alternative=alternative)
    return _trust_model.welch_trusted_level(x1, x2, alternative, reference_ratio=ratio)


def _two_sample_arrays(spec: Any, data: pd.DataFrame, *, kind: str,
                       order: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The two samples; ``order``, when given, receives the two compared levels (first minus second)."""
    what = "a two-sample t-test" if kind == "t" else "a two-sample z-test"
    frame = select(data, [spec.column, spec.group], numeric=[spec.column], missing=spec.missing, what=what)
    level_1, level_2 = two_groups(frame, spec.group, spec.levels)
    if order is not None:
        order[:] = [level_1, level_2]
    values, labels = as_float(frame[spec.column]), frame[spec.group].to_numpy(dtype=object)
    x1, x2 = (group_values(values, labels, level, column=spec.column, group=spec.group, what=what)
              for level in (level_1, level_2))
    if _constant(np.concatenate([x1 - x1[0], x2 - x2[0]])):
        raise ValueError(
            f"Column {spec.column!r} is constant within both groups: the standard error is 0 and {what} is undefined."
        )
    return x1, x2


def _two_sample(spec: Any, data: pd.DataFrame, *, kind: str) -> TestResult:
    order: list = []
    x1, x2 = _two_sample_arrays(spec, data, kind=kind, order=order)
    k = _pow2_exponent(x1, x2, value=spec.value)  # scale-free statistic and p-value (see _pow2_exponent)
    x1, x2, value = np.ldexp(x1, -k), np.ldexp(x2, -k), float(np.ldexp(spec.value, -k))
    compare = CompareMeans(DescrStatsW(x1), DescrStatsW(x2))
    alternative = SM_ALTERNATIVE[spec.alternative]
    se = compare.std_meandiff_pooledvar if spec.usevar == "pooled" else compare.std_meandiff_separatevar
    se = float(np.ldexp(se, k))
    estimate = float(np.ldexp(compare.d1.mean - compare.d2.mean, k))
    if kind == "t":
        statistic, pvalue, df = compare.ttest_ind(alternative=alternative, usevar=spec.usevar, value=value)
        rule = IntervalRule(kind="t", params=(estimate, se, df), alternative=spec.alternative)
        method = (
            "statsmodels CompareMeans(DescrStatsW(x1), DescrStatsW(x2)).ttest_ind("
            f"usevar={spec.usevar!r}, value={spec.value!r}, alternative={alternative!r})"
        )
    else:
        statistic, pvalue = ztest(x1, x2, value=value, alternative=alternative, usevar=spec.usevar)
        df = float("nan")
        rule = IntervalRule(kind="normal", params=(estimate, se), alternative=spec.alternative)
        method = (
            f"statsmodels ztest(x1, x2, usevar={spec.usevar!r}, value={spec.value!r}, "
            f"alternative={alternative!r}, ddof=1)"
        )
    if spec.levels is None:  # say which group came first: 0/1 coding gives group 0 minus group 1
        method += f"; levels in sorted order: {spec.group}={order[0]!r} minus {spec.group}={order[1]!r}"
    exact_model = kind == "t" and spec.usevar == "pooled"
    note = _trust_model.pooled_variance_note(x1, x2, exchangeable=spec.exchangeable) if spec.usevar == "pooled" else ""
    return make_result(
        spec=spec, estimate=estimate, statistic=statistic, pvalue=pvalue, df=df, rule=rule,
        method=f"{method}; {note}" if note else method, n_obs=len(x1) + len(x2),
        pvalue_method="exact_under_model" if exact_model else "asymptotic",
        trusted_level=1.0 if note else two_sample_trusted_level(x1 - value, x2, spec.alternative, kind=kind,
                                                                usevar=spec.usevar),
    )


def _permutation_two_sample(
    spec: Any, data: pd.DataFrame, result: TestResult, *, kind: str, level: float, rng: np.random.Generator,
    max_resamples: int,
) -> TestResult | None:
    """Label-permutation version of a two-sample test: the studentised statistic of the spec
    (Welch's for ``usevar="unequal"``, the pooled one otherwise) over reassignments of the
    group labels of ``(x1 - value, x2)``."""
    if spec.usevar == "unequal" and not spec.exchangeable:
        # the null allows different distributions: the permutation law is only asymptotically
        # right, no better in the far tail than the test's own (measured: Exp(1) - 1 arms of 15 and
        # 90 rows, sd 3 and 1, equal means: 1.8% at 0.001)
        return None
    x1, x2 = _two_sample_arrays(spec, data, kind=kind)
    if spec.usevar == "pooled" and not spec.exchangeable and _trust_model.pooled_variance_note(x1, x2):
        return None  # the smaller group is the more spread out: the labels are not exchangeable (method says so)
    pooled = np.concatenate([x1 - spec.value, x2])
    scale = pooled.std()
    pooled = (pooled - pooled.mean()) / (scale if scale > 0 else 1.0)
    n, n1 = len(pooled), len(x1)
    observed = float(_resample.two_sample_statistics(pooled, np.arange(n1)[None, :], usevar=spec.usevar)[0])
    name = "Welch" if spec.usevar == "unequal" else "pooled-variance"
    if math.comb(n, n1) <= max_resamples:
        stats = _resample.two_sample_statistics(pooled, _resample.all_subsets(n, n1), usevar=spec.usevar)
        pvalue = _resample.complete_pvalue(observed, stats, spec.alternative)
        how = f"all {math.comb(n, n1)} reassignments of the group labels, p = #{{T_pi >= T}}/N"
    else:
        n_resamples = _resample.n_resamples_for(level, max_resamples)
        if n_resamples is None:
            return None

        def simulate(gen: np.random.Generator, size: int) -> np.ndarray:
            return _resample.random_two_sample_statistics(gen, pooled, n1, size, usevar=spec.usevar)

        pvalue = _resample.monte_carlo_pvalue(
            observed, simulate, n_resamples, alternative=spec.alternative, rng=rng, chunk=_resample.chunk_size(n)
        )
        how = f"at most B = {n_resamples} random reassignments of the group labels, {_resample.MONTE_CARLO_RULE}"
    method = (
        f"label permutation of the {name} t statistic of (x1 - {fmt(spec.value)}, x2) ({spec.alternative}): {how}; "
        "exchangeable when both groups have the same distribution (up to the shift) under H0"
    )
    return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="permutation")


def _check_two_sample(spec: Any) -> None:
    check_column_name("column", spec.column)
    check_column_name("group", spec.group)
    check_levels(spec.levels)
    check_choice("usevar", spec.usevar, USEVAR)
    check_value("value", spec.value)
    if not isinstance(spec.exchangeable, (bool, np.bool_)):
        raise TypeError(f"`exchangeable` must be True or False; got {spec.exchangeable!r}.")


def _two_sample_hint(spec: Any) -> str | None:
    """How to get a version trusted at smaller levels, when the spec as declared has none."""
    if spec.usevar == "unequal" and not spec.exchangeable:
        return ("the label-permutation version needs exchangeable=True: the same distribution in both groups "
                "under the null, not only equal means")
    return None


def _two_sample_describe(spec: Any, test: str) -> str:
    if spec.levels is None:
        null = (f"mean({spec.column}) difference between the two {spec.group} groups (first minus second, sorted)"
                f" = {fmt(spec.value)}")
    else:
        a, b = spec.levels
        null = (
            f"mean({group_label(spec.column, spec.group, a)}) - mean({group_label(spec.column, spec.group, b)})"
            f" = {fmt(spec.value)}"
        )
    return f"{null} ({test})"


@dataclass(frozen=True, slots=True, kw_only=True)
class OneSampleTTest(TestSpec):
    """t-test that the mean of ``column`` equals ``value``.

    Runs ``statsmodels.stats.weightstats.DescrStatsW(x).ttest_mean``; ``n - 1`` df. The
    estimate is the sample mean and the interval the t interval for the mean (one-sided for a
    one-sided alternative), as in R's ``t.test(x, mu = value)``.

    The p-value is exact under the model of normal observations (``pvalue_method
    "exact_under_model"``); with skewed data it is an approximation whose error grows in the
    far tail (exponential, n = 50: 20 times the level at 1e-4; docs/calibration.md), so its
    ``trusted_level`` comes from the sample's skewness and kurtosis
    (:func:`selective.hypotheses._trust_model.studentised_mean_trusted_level`). No test of a
    mean is exact without a model (Bahadur and Savage, Ann. Math. Stat. 27, 1956), so
    ``run_at_level`` returns the result of :meth:`run` and the report withholds corrected
    p-values below the trusted level.

    ``clip=c`` tests the mean of the values clipped to [-c, c] instead (the target of a
    :class:`~selective.selectors.ClippedMeanScores` screen, so that a test conditional on a DP
    screen by clipped means tests what the screen ranked); ``|value| < c`` is required.
    """

    column: str
    value: float = 0.0
    clip: float | None = None

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_value("value", self.value)
        _check_clip(self)

    def _describe(self) -> str:
        return f"{_mean_of(self)} = {fmt(self.value)} (t-test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        frame = select(data, [self.column], numeric=[self.column], missing=self.missing, what="a t-test")
        x = _clipped(self, as_float(frame[self.column]))
        return _one_sample(self, x, kind="t", where=f"Column {self.column!r}", call="x")


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedTTest(TestSpec):
    """Paired t-test that the mean of ``column1 - column2`` equals ``value``.

    Runs ``DescrStatsW(x1 - x2).ttest_mean`` (the same numbers as ``scipy.stats.ttest_rel``
    and R's ``t.test(x1, x2, paired = TRUE)``). Estimate: the mean difference. Exact under
    normal differences, like :class:`OneSampleTTest`.
    """

    column1: str
    column2: str
    value: float = 0.0

    def _check(self) -> None:
        check_column_name("column1", self.column1)
        check_column_name("column2", self.column2)
        if self.column1 == self.column2:
            raise ValueError(f"`column1` and `column2` must differ; both are {self.column1!r}.")
        check_value("value", self.value)

    def _describe(self) -> str:
        return f"mean({self.column1} - {self.column2}) = {fmt(self.value)} (paired t-test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        columns = [self.column1, self.column2]
        frame = select(data, columns, numeric=columns, missing=self.missing, what="a paired t-test")
        x = as_float(frame[self.column1]) - as_float(frame[self.column2])
        where = f"The difference {self.column1!r} - {self.column2!r}"
        return _one_sample(self, x, kind="t", where=where, call="x1 - x2")


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoSampleTTest(TestSpec):
    """Two-sample t-test that ``mean(column | group=a) - mean(column | group=b) = value``.

    Data in long form: ``column`` holds the outcome and ``group`` the sample. ``levels=(a, b)``
    names the two compared groups (other rows are ignored); by default ``group`` must have
    exactly two values, taken in sorted order. ``usevar="pooled"`` is Student's test
    (``n1 + n2 - 2`` df), ``"unequal"`` Welch's (Welch-Satterthwaite df). Runs
    ``statsmodels CompareMeans(...).ttest_ind``. Estimate: the difference of means.

    Student's p-value is exact under normal samples with equal variances
    (``"exact_under_model"``); its ``trusted_level`` bounds its error against the
    label-permutation law of the observed values (Pitman's moments,
    :func:`selective.hypotheses._trust_model.correlation_trusted_level`). Welch's is
    asymptotic even under normality; its ``trusted_level`` comes from the Edgeworth rules
    (second order when two-sided) with bounds on the skewness and kurtosis of the difference
    of means (skewed data in a small arm make it large). Below either, ``run_at_level`` permutes
    the group labels of ``(x1 - value, x2)`` and recomputes the studentised statistic of
    ``usevar`` (all reassignments when at most ``max_resamples``, else sequential Monte Carlo,
    Besag and Clifford). That p-value is exact when the two groups have the same distribution up
    to the shift ``value`` under the null (exchangeable labels); under equal means with
    unequal variances or shapes it is only asymptotically valid, the studentised statistic
    making it so (Janssen, Stat. Probab. Lett. 36, 1997; Chung and Romano, Ann. Stat. 41,
    2013), and in the far tail no better than the test's own p-value. So Welch's test
    (whose null allows different distributions) uses it only with ``exchangeable=True``: the
    null is that the groups have the same distribution up to the shift (no effect of a
    randomised treatment on the outcome at all); by default its corrected p-values below its
    trusted level are withheld. Student's test assumes that already (equal variances, normal);
    when the smaller group is the more spread out (a variance check at one-sided level 0.01,
    :func:`selective.hypotheses._trust_model.pooled_variance_note`) its p-value is trusted at no
    level below 1 and the permutation is used only with ``exchangeable=True`` (the same
    distribution in both groups under the null, as a selected outcome with an outlier in the small
    group can look); otherwise use Welch's test.
    """

    column: str
    group: str
    levels: tuple[Any, Any] | None = None
    usevar: str = "pooled"
    value: float = 0.0
    exchangeable: bool = False

    def _check(self) -> None:
        _check_two_sample(self)

    version_hint = property(_two_sample_hint)

    def _describe(self) -> str:
        return _two_sample_describe(self, "Student t-test" if self.usevar == "pooled" else "Welch t-test")

    def run(self, data: pd.DataFrame) -> TestResult:
        return _two_sample(self, data, kind="t")

    def _at_level(self, data, result, *, level, rng, max_resamples):
        return _permutation_two_sample(self, data, result, kind="t", level=level, rng=rng, max_resamples=max_resamples)


@dataclass(frozen=True, slots=True, kw_only=True)
class OneSampleZTest(TestSpec):
    """Large-sample z-test that the mean of ``column`` equals ``value``.

    Runs ``statsmodels.stats.weightstats.ztest(x, value=value)``: the standard error uses the
    sample standard deviation (``ddof=1``) and the reference distribution is standard normal.

    Asymptotic (``trusted_level`` from the Edgeworth rule with a bound on the skewness of the
    data, times the exact normal-model ratio of the normal to the :math:`t_{n-1}` tail: at
    n = 50 the z reference rejects 1.3 times too often at 1e-2 even for normal data). Below
    it, ``run_at_level`` refers the same statistic to :math:`t_{n-1}`, itself asymptotic
    without a normal model and trusted where the skewness rule allows; otherwise the
    ordinary result comes back (withhold it).

    ``clip=c`` tests the mean of the values clipped to [-c, c], as in :class:`OneSampleTTest`.
    """

    column: str
    value: float = 0.0
    clip: float | None = None

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_value("value", self.value)
        _check_clip(self)

    def _describe(self) -> str:
        return f"{_mean_of(self)} = {fmt(self.value)} (z-test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        return _one_sample(self, self._values(data), kind="z", where=f"Column {self.column!r}", call="x")

    def _values(self, data: pd.DataFrame) -> np.ndarray:
        frame = select(data, [self.column], numeric=[self.column], missing=self.missing, what="a z-test")
        return _clipped(self, as_float(frame[self.column]))

    def _at_level(self, data, result, *, level, rng, max_resamples):
        x = self._values(data)
        stats = DescrStatsW(x)
        alternative = SM_ALTERNATIVE[self.alternative]
        statistic, pvalue, df = stats.ttest_mean(self.value, alternative=alternative)
        trusted = one_sample_z_trusted_level(x, self.alternative, reference="t")
        rule = IntervalRule(
            kind="t", params=(stats.mean, stats.std_mean, df), alternative=self.alternative, min_alpha=trusted
        )
        method = (
            f"statsmodels DescrStatsW(x).ttest_mean(value={self.value!r}, alternative={alternative!r}): "
            "the z statistic against t(n - 1)"
        )
        return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="asymptotic", trusted_level=trusted,
                           statistic=statistic, df=df, rule=rule)


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoSampleZTest(TestSpec):
    """Large-sample z-test that ``mean(column | group=a) - mean(column | group=b) = value``.

    Same data layout and ``usevar`` as :class:`TwoSampleTTest`; runs
    ``statsmodels.stats.weightstats.ztest(x1, x2, usevar=usevar)`` with a normal reference.
    Asymptotic, trusted like Welch's test times the normal-model ratio of the normal to the
    t tail; ``run_at_level`` permutes the labels as :class:`TwoSampleTTest` does (with
    ``usevar="unequal"`` only when ``exchangeable=True``).
    """

    column: str
    group: str
    levels: tuple[Any, Any] | None = None
    usevar: str = "pooled"
    value: float = 0.0
    exchangeable: bool = False

    def _check(self) -> None:
        _check_two_sample(self)

    version_hint = property(_two_sample_hint)

    def _describe(self) -> str:
        return _two_sample_describe(self, f"z-test, {self.usevar} variances")

    def run(self, data: pd.DataFrame) -> TestResult:
        return _two_sample(self, data, kind="z")

    def _at_level(self, data, result, *, level, rng, max_resamples):
        return _permutation_two_sample(self, data, result, kind="z", level=level, rng=rng, max_resamples=max_resamples)
