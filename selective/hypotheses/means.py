"""Tests of means: one-sample, paired and two-sample t-tests; one- and two-sample z-tests.

All numbers come from ``statsmodels.stats.weightstats`` (``DescrStatsW``, ``CompareMeans``,
``ztest``); intervals are rebuilt from the same estimate, standard error and df with
upper-tail quantiles (see :mod:`selective.hypotheses._result`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ztest

from .._validation import check_choice
from ._result import IntervalRule, TestResult, make_result
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


def _one_sample(spec: TestSpec, x: np.ndarray, *, kind: str, where: str, call: str) -> TestResult:
    """t (``kind="t"``) or z test that the mean of ``x`` is ``spec.value``."""
    what = "a t-test" if kind == "t" else "a z-test"
    require_n(len(x), 2, where=where, what=what)
    if _constant(x):
        raise ValueError(f"{where} is constant ({float(x[0])!r}): its standard error is 0 and {what} is undefined.")
    stats = DescrStatsW(x)
    alternative = SM_ALTERNATIVE[spec.alternative]
    if kind == "t":
        statistic, pvalue, df = stats.ttest_mean(spec.value, alternative=alternative)
        rule = IntervalRule(kind="t", params=(stats.mean, stats.std_mean, df), alternative=spec.alternative)
        method = f"statsmodels DescrStatsW({call}).ttest_mean(value={spec.value!r}, alternative={alternative!r})"
    else:
        statistic, pvalue = ztest(x, value=spec.value, alternative=alternative)
        df = float("nan")
        rule = IntervalRule(kind="normal", params=(stats.mean, stats.std_mean), alternative=spec.alternative)
        method = f"statsmodels ztest({call}, value={spec.value!r}, alternative={alternative!r}, ddof=1)"
    return make_result(
        spec=spec, estimate=stats.mean, statistic=statistic, pvalue=pvalue, df=df, rule=rule, method=method, n_obs=len(x)
    )


def _two_sample(spec: Any, data: pd.DataFrame, *, kind: str) -> TestResult:
    what = "a two-sample t-test" if kind == "t" else "a two-sample z-test"
    frame = select(data, [spec.column, spec.group], numeric=[spec.column], missing=spec.missing, what=what)
    level_1, level_2 = two_groups(frame, spec.group, spec.levels)
    values, labels = as_float(frame[spec.column]), frame[spec.group].to_numpy(dtype=object)
    x1, x2 = (group_values(values, labels, level, column=spec.column, group=spec.group, what=what)
              for level in (level_1, level_2))
    if _constant(np.concatenate([x1 - x1[0], x2 - x2[0]])):
        raise ValueError(
            f"Column {spec.column!r} is constant within both groups: the standard error is 0 and {what} is undefined."
        )
    compare = CompareMeans(DescrStatsW(x1), DescrStatsW(x2))
    alternative = SM_ALTERNATIVE[spec.alternative]
    se = compare.std_meandiff_pooledvar if spec.usevar == "pooled" else compare.std_meandiff_separatevar
    estimate = compare.d1.mean - compare.d2.mean
    if kind == "t":
        statistic, pvalue, df = compare.ttest_ind(alternative=alternative, usevar=spec.usevar, value=spec.value)
        rule = IntervalRule(kind="t", params=(estimate, se, df), alternative=spec.alternative)
        method = (
            "statsmodels CompareMeans(DescrStatsW(x1), DescrStatsW(x2)).ttest_ind("
            f"usevar={spec.usevar!r}, value={spec.value!r}, alternative={alternative!r})"
        )
    else:
        statistic, pvalue = ztest(x1, x2, value=spec.value, alternative=alternative, usevar=spec.usevar)
        df = float("nan")
        rule = IntervalRule(kind="normal", params=(estimate, se), alternative=spec.alternative)
        method = f"statsmodels ztest(x1, x2, usevar={spec.usevar!r}, value={spec.value!r}, alternative={alternative!r}, ddof=1)"
    return make_result(
        spec=spec, estimate=estimate, statistic=statistic, pvalue=pvalue, df=df, rule=rule, method=method,
        n_obs=len(x1) + len(x2),
    )


def _two_sample_describe(spec: Any, test: str) -> str:
    if spec.levels is None:
        null = f"mean({spec.column}) difference between the two {spec.group} groups (sorted) = {fmt(spec.value)}"
    else:
        a, b = spec.levels
        null = f"mean({group_label(spec.column, spec.group, a)}) - mean({group_label(spec.column, spec.group, b)}) = {fmt(spec.value)}"
    return f"{null} ({test})"


@dataclass(frozen=True, slots=True, kw_only=True)
class OneSampleTTest(TestSpec):
    """t-test that the mean of ``column`` equals ``value``.

    Runs ``statsmodels.stats.weightstats.DescrStatsW(x).ttest_mean``; ``n - 1`` df. The
    estimate is the sample mean and the interval the t interval for the mean (one-sided for a
    one-sided alternative), as in R's ``t.test(x, mu = value)``.
    """

    column: str
    value: float = 0.0

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_value("value", self.value)

    def _describe(self) -> str:
        return f"mean({self.column}) = {fmt(self.value)} (t-test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        frame = select(data, [self.column], numeric=[self.column], missing=self.missing, what="a t-test")
        x = as_float(frame[self.column])
        return _one_sample(self, x, kind="t", where=f"Column {self.column!r}", call="x")


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedTTest(TestSpec):
    """Paired t-test that the mean of ``column1 - column2`` equals ``value``.

    Runs ``DescrStatsW(x1 - x2).ttest_mean`` (the same numbers as ``scipy.stats.ttest_rel``
    and R's ``t.test(x1, x2, paired = TRUE)``). Estimate: the mean difference.
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
    """

    column: str
    group: str
    levels: tuple[Any, Any] | None = None
    usevar: str = "pooled"
    value: float = 0.0

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_column_name("group", self.group)
        check_levels(self.levels)
        check_choice("usevar", self.usevar, USEVAR)
        check_value("value", self.value)

    def _describe(self) -> str:
        return _two_sample_describe(self, "Student t-test" if self.usevar == "pooled" else "Welch t-test")

    def run(self, data: pd.DataFrame) -> TestResult:
        return _two_sample(self, data, kind="t")


@dataclass(frozen=True, slots=True, kw_only=True)
class OneSampleZTest(TestSpec):
    """Large-sample z-test that the mean of ``column`` equals ``value``.

    Runs ``statsmodels.stats.weightstats.ztest(x, value=value)``: the standard error uses the
    sample standard deviation (``ddof=1``) and the reference distribution is standard normal.
    """

    column: str
    value: float = 0.0

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_value("value", self.value)

    def _describe(self) -> str:
        return f"mean({self.column}) = {fmt(self.value)} (z-test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        frame = select(data, [self.column], numeric=[self.column], missing=self.missing, what="a z-test")
        x = as_float(frame[self.column])
        return _one_sample(self, x, kind="z", where=f"Column {self.column!r}", call="x")


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoSampleZTest(TestSpec):
    """Large-sample z-test that ``mean(column | group=a) - mean(column | group=b) = value``.

    Same data layout and ``usevar`` as :class:`TwoSampleTTest`; runs
    ``statsmodels.stats.weightstats.ztest(x1, x2, usevar=usevar)`` with a normal reference.
    """

    column: str
    group: str
    levels: tuple[Any, Any] | None = None
    usevar: str = "pooled"
    value: float = 0.0

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_column_name("group", self.group)
        check_levels(self.levels)
        check_choice("usevar", self.usevar, USEVAR)
        check_value("value", self.value)

    def _describe(self) -> str:
        return _two_sample_describe(self, f"z-test, {self.usevar} variances")

    def run(self, data: pd.DataFrame) -> TestResult:
        return _two_sample(self, data, kind="z")
