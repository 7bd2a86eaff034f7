"""Tests of proportions (one and two samples) and the chi-square test of independence.

Numbers come from ``statsmodels.stats.proportion.proportions_ztest`` and
``statsmodels.stats.contingency_tables.Table``; by default none uses a continuity correction, so
they agree with R's ``prop.test(..., correct = FALSE)`` and ``chisq.test(..., correct = FALSE)``.
``ChiSquareIndependenceTest(correction=True)`` applies Yates' correction to 2x2 tables, as R's
``chisq.test`` does by default.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats
from statsmodels.stats.contingency_tables import Table
from statsmodels.stats.proportion import proportions_ztest

from .._validation import check_choice, check_probability
from ..exceptions import SelectiveWarning
from . import _resample, _trust
from ._result import IntervalRule, TestResult, make_result, with_pvalue
from ._spec import (
    SM_ALTERNATIVE,
    TestSpec,
    as_float,
    check_column_name,
    check_levels,
    fmt,
    group_label,
    require_n,
    select,
    two_groups,
)

__all__ = ["OneSampleProportionTest", "TwoSampleProportionTest", "ChiSquareIndependenceTest"]

VARIANCE = ("null", "sample")


def _successes(series: pd.Series, success: Any, column: Any) -> np.ndarray:
    """Boolean array: which rows count as successes."""
    if success is not None:
        return (series == success).to_numpy(dtype=bool)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = as_float(series)
        if np.all((values == 0) | (values == 1)):
            return values == 1
    shown = list(pd.unique(series.to_numpy(dtype=object))[:5])
    raise ValueError(
        f"Column {column!r} must hold 0/1 or True/False for a proportion test, or pass `success=` "
        f"(the value counted as a success); its values include {shown!r}."
    )


def _check_success(success: Any) -> None:
    if isinstance(success, float) and math.isnan(success):
        raise ValueError("`success` must be a value of the column, not NaN.")


@dataclass(frozen=True, slots=True, kw_only=True)
class OneSampleProportionTest(TestSpec):
    """z-test that the proportion of successes in ``column`` equals ``value``.

    ``column`` holds 0/1 or booleans, or any values with ``success`` naming the one counted.
    ``variance="null"`` (default) is the score test, variance from ``value`` (statsmodels
    ``proportions_ztest(count, nobs, value, prop_var=value)``, R ``prop.test(x, n, p,
    correct = FALSE)``) with its dual Wilson interval. ``variance="sample"`` is the Wald test,
    variance from the sample proportion (``prop_var=False``), with the dual Wald interval
    (``proportion_confint(method="normal")``).

    Asymptotic; its ``trusted_level`` is exact: the rejection rate under
    Binomial(n, ``value``) computed at every attainable p-value (rare events and lattice
    steps make it large). Below it, ``run_at_level`` gives the exact binomial test
    (``scipy.stats.binomtest``, as R's ``binom.test``) with the Clopper-Pearson interval.
    """

    column: str
    value: float = 0.5
    success: Any = None
    variance: str = "null"

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_probability("value", self.value, closed="neither")
        _check_success(self.success)
        check_choice("variance", self.variance, VARIANCE)

    def _describe(self) -> str:
        event = f"{self.column}" if self.success is None else f"{self.column} == {self.success!r}"
        test = "score z-test" if self.variance == "null" else "Wald z-test"
        return f"P({event}) = {fmt(self.value)} ({test})"

    def _counts(self, data: pd.DataFrame) -> tuple[int, int]:
        frame = select(data, [self.column], missing=self.missing, what="a proportion test")
        hits = _successes(frame[self.column], self.success, self.column)
        nobs = len(hits)
        require_n(nobs, 2, where=f"Column {self.column!r}", what="a proportion test")
        return int(hits.sum()), nobs

    def run(self, data: pd.DataFrame) -> TestResult:
        count, nobs = self._counts(data)
        proportion = count / nobs
        alternative = SM_ALTERNATIVE[self.alternative]
        if self.variance == "null":
            prop_var: float | bool = float(self.value)
            rule = IntervalRule(kind="wilson", params=(count, nobs), alternative=self.alternative, bounds=(0.0, 1.0))
            interval = "proportion_confint(method='wilson')"
        else:
            if count in (0, nobs):
                raise ValueError(
                    f"Column {self.column!r} has {count} successes in {nobs}: with variance='sample' the "
                    "standard error is 0 and the Wald z statistic is undefined. Use variance='null'."
                )
            prop_var = False
            se = math.sqrt(proportion * (1.0 - proportion) / nobs)
            rule = IntervalRule(kind="normal", params=(proportion, se), alternative=self.alternative, bounds=(0.0, 1.0))
            interval = "proportion_confint(method='normal')"
        statistic, pvalue = proportions_ztest(count, nobs, value=self.value, alternative=alternative, prop_var=prop_var)
        method = (
            f"statsmodels proportions_ztest(count, nobs, value={self.value!r}, alternative={alternative!r}, "
            f"prop_var={prop_var!r}); CI {interval}"
        )
        trusted = _trust.one_proportion_trusted_level(nobs, float(self.value), alternative=self.alternative,
                                                      variance=self.variance)
        return make_result(
            spec=self, estimate=proportion, statistic=statistic, pvalue=pvalue, rule=rule, method=method, n_obs=nobs,
            pvalue_method="asymptotic", trusted_level=trusted,
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        count, nobs = self._counts(data)
        test = scipy.stats.binomtest(count, nobs, float(self.value), alternative=self.alternative)
        rule = IntervalRule(
            kind="clopper_pearson", params=(count, nobs), alternative=self.alternative, bounds=(0.0, 1.0)
        )
        method = (
            f"scipy.stats.binomtest(count, nobs, p={self.value!r}, alternative={self.alternative!r}) (exact; "
            "two-sided: outcomes no more likely than the observed one); CI Clopper-Pearson"
        )
        return with_pvalue(result, pvalue=test.pvalue, method=method, pvalue_method="exact", statistic=count, rule=rule)


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoSampleProportionTest(TestSpec):
    """z-test that two groups have the same proportion of successes.

    Long form: ``column`` holds the outcome (as in :class:`OneSampleProportionTest`) and
    ``group`` the sample; ``levels=(a, b)`` as in :class:`~selective.hypotheses.TwoSampleTTest`.
    Runs ``proportions_ztest([c1, c2], [n1, n2])`` (pooled variance under the null; equal to R's
    ``prop.test(c(c1, c2), c(n1, n2), correct = FALSE)``). Estimate: ``p1 - p2``, with the
    Wald interval ``confint_proportions_2indep(method="wald", compare="diff")`` clipped to
    [-1, 1] as R does.

    Asymptotic; its ``trusted_level`` is the exact conditional one given the group sizes and
    the total number of successes (the first group's count is then hypergeometric whatever
    the common proportion). Below it, ``run_at_level`` gives Fisher's exact test
    (``scipy.stats.fisher_exact``, as R's ``fisher.test``; exact given the margins, hence
    unconditionally). Boschloo's unconditional test would be more powerful but costs a
    maximisation over the nuisance proportion; it is not used.
    """

    column: str
    group: str
    levels: tuple[Any, Any] | None = None
    success: Any = None

    def _check(self) -> None:
        check_column_name("column", self.column)
        check_column_name("group", self.group)
        check_levels(self.levels)
        _check_success(self.success)

    def _describe(self) -> str:
        event = f"{self.column}" if self.success is None else f"{self.column} == {self.success!r}"
        if self.levels is None:
            return f"P({event}) equal in the two {self.group} groups (z-test)"
        a, b = self.levels
        return f"P({event} | {self.group}={a!r}) = P({event} | {self.group}={b!r}) (z-test)"

    def _counts(self, data: pd.DataFrame, order: list | None = None) -> tuple[list[int], list[int]]:
        what = "a two-sample proportion test"
        frame = select(data, [self.column, self.group], missing=self.missing, what=what)
        level_1, level_2 = two_groups(frame, self.group, self.levels)
        if order is not None:
            order[:] = [level_1, level_2]
        counts, nobs = [], []
        for level in (level_1, level_2):
            rows = frame[self.group] == level
            hits = _successes(frame.loc[rows, self.column], self.success, self.column)
            require_n(len(hits), 2, where=f"Group {group_label(self.column, self.group, level)}", what=what)
            counts.append(int(hits.sum()))
            nobs.append(len(hits))
        if sum(counts) in (0, sum(nobs)):
            raise ValueError(
                f"Column {self.column!r} has {sum(counts)} successes in {sum(nobs)} rows: the pooled "
                f"standard error is 0 and {what} is undefined."
            )
        return counts, nobs

    def run(self, data: pd.DataFrame) -> TestResult:
        order: list = []
        counts, nobs = self._counts(data, order)
        p1, p2 = counts[0] / nobs[0], counts[1] / nobs[1]
        alternative = SM_ALTERNATIVE[self.alternative]
        statistic, pvalue = proportions_ztest(np.array(counts), np.array(nobs), alternative=alternative)
        se = math.sqrt(p1 * (1.0 - p1) / nobs[0] + p2 * (1.0 - p2) / nobs[1])
        rule = IntervalRule(kind="normal", params=(p1 - p2, se), alternative=self.alternative, bounds=(-1.0, 1.0))
        method = (
            f"statsmodels proportions_ztest([c1, c2], [n1, n2], alternative={alternative!r}) (pooled variance); "
            "CI confint_proportions_2indep(method='wald', compare='diff')"
        )
        if self.levels is None:  # the estimate's sign depends on the order: say it
            method += f"; levels in sorted order: {self.group}={order[0]!r} minus {self.group}={order[1]!r}"
        trusted = _trust.two_proportion_trusted_level(nobs[0], nobs[1], sum(counts), alternative=self.alternative)
        return make_result(
            spec=self, estimate=p1 - p2, statistic=statistic, pvalue=pvalue, rule=rule, method=method, n_obs=sum(nobs),
            pvalue_method="asymptotic", trusted_level=trusted,
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        (c1, c2), (n1, n2) = self._counts(data)
        _, pvalue = scipy.stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative=self.alternative)
        method = (
            f"scipy.stats.fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative={self.alternative!r}) (exact "
            "given the margins; two-sided: tables no more likely than the observed one); statistic c1; "
            "CI confint_proportions_2indep(method='wald', compare='diff')"
        )
        return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="exact", statistic=c1)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChiSquareIndependenceTest(TestSpec):
    """Pearson chi-square test that ``column1`` and ``column2`` are independent.

    Cross-tabulates the two columns (observed values only) and runs
    ``statsmodels Table(table, shift_zeros=False).test_nominal_association()``: no continuity
    correction, ``(r - 1)(c - 1)`` df. Warns (``SelectiveWarning``) when an expected count is
    below 5. The test has no direction and no estimate: ``alternative`` must be
    ``"two-sided"``; estimate and interval are NaN.

    ``correction=True`` applies Yates' continuity correction to a 2x2 table
    (``scipy.stats.chi2_contingency(table, correction=True)``: each :math:`|O - E|` is reduced
    by :math:`\\min(0.5, |O - E|)`, as R's ``chisq.test(correct = TRUE)``, R's default); larger
    tables are never corrected (as in R).

    Asymptotic. ``trusted_level``: for a 2x2 table the exact conditional rule of
    :class:`TwoSampleProportionTest` (applied to the Yates p-values when corrected: rule 1 of
    :mod:`~selective.hypotheses._trust` over the hypergeometric law given the margins); for
    larger tables a Monte Carlo certificate from
    tables drawn with the observed margins (fixed seed per margins; it cannot certify below
    about 0.025). Below it, ``run_at_level`` gives Fisher's exact test for 2x2 tables, and
    otherwise the chi-square statistic against Monte Carlo tables with the observed margins
    (exact under independence given the margins).
    """

    column1: str
    column2: str
    correction: bool = False

    def _check(self) -> None:
        check_column_name("column1", self.column1)
        check_column_name("column2", self.column2)
        if not isinstance(self.correction, bool):
            raise TypeError(f"`correction` (Yates' continuity correction for 2x2 tables) must be True or False; "
                            f"got {self.correction!r}.")
        if self.column1 == self.column2:
            raise ValueError(f"`column1` and `column2` must differ; both are {self.column1!r}.")
        if self.alternative != "two-sided":
            raise ValueError(
                f"`alternative` must be 'two-sided' for a chi-square test of independence (it has no "
                f"direction); got {self.alternative!r}."
            )

    def _describe(self) -> str:
        return f"{self.column1} independent of {self.column2} (chi-square test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        frame = select(data, [self.column1, self.column2], missing=self.missing, what="a chi-square test")
        require_n(len(frame), 2, where=f"The pair ({self.column1!r}, {self.column2!r})", what="a chi-square test")
        table = self.table(frame)
        for axis, column in ((0, self.column1), (1, self.column2)):
            if table.shape[axis] < 2:
                raise ValueError(
                    f"Column {column!r} takes a single value; a chi-square test of independence needs at least two."
                )
        yates = self.correction and table.shape == (2, 2)
        if yates:
            statistic, pvalue, df, _ = scipy.stats.chi2_contingency(table, correction=True)
            method = ("scipy.stats.chi2_contingency(pd.crosstab(column1, column2), correction=True) (Yates' "
                      "continuity correction, as R's chisq.test(correct = TRUE))")
            trusted = yates_trusted_level(table)
        else:
            result = Table(table, shift_zeros=False).test_nominal_association()
            statistic, pvalue, df = result.statistic, result.pvalue, result.df
            method = "statsmodels Table(pd.crosstab(column1, column2), shift_zeros=False).test_nominal_association()"
            trusted = _trust.chi_square_table_trusted_level(table)
        expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
        if expected.min() < 5:
            warnings.warn(
                f"Chi-square test of {self.column1!r} and {self.column2!r}: smallest expected count is "
                f"{expected.min():.3g} (< 5); the chi-square approximation may be poor.",
                SelectiveWarning,
                stacklevel=2,
            )
        return make_result(
            spec=self,
            estimate=float("nan"),
            statistic=statistic,
            pvalue=pvalue,
            df=df,
            rule=IntervalRule(kind="none"),
            method=method,
            n_obs=int(table.sum()),
            pvalue_method="asymptotic",
            trusted_level=trusted,
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        table = self.table(data).astype(np.int64)
        if table.shape == (2, 2):
            _, pvalue = scipy.stats.fisher_exact(table, alternative="two-sided")
            method = (
                "scipy.stats.fisher_exact(pd.crosstab(column1, column2)) (exact given the margins; tables no "
                "more likely than the observed one); statistic: the chi-square"
            )
            return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="exact")
        n_resamples = _resample.n_resamples_for(level, max_resamples)
        if n_resamples is None:
            return None
        rows, cols = table.sum(axis=1), table.sum(axis=0)
        expected = np.outer(rows, cols) / table.sum()
        observed = float(_trust.chi_square_statistics(table.astype(float), expected))
        law = scipy.stats.random_table(rows, cols)

        def simulate(gen: np.random.Generator, size: int) -> np.ndarray:
            return _trust.chi_square_statistics(law.rvs(size=size, random_state=gen), expected)

        pvalue = _resample.monte_carlo_pvalue(
            observed, simulate, n_resamples, alternative="greater", rng=rng, chunk=_resample.chunk_size(table.size)
        )
        method = (
            f"chi-square statistic of pd.crosstab(column1, column2) against at most B = {n_resamples} tables drawn "
            f"with its margins (scipy.stats.random_table, Patefield), {_resample.MONTE_CARLO_RULE}; exact under "
            "independence given the margins (the rows are exchangeable)"
        )
        return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="permutation", statistic=observed)

    def table(self, data: pd.DataFrame) -> np.ndarray:
        """The contingency table (rows: values of ``column1``, columns: of ``column2``)."""
        frame = select(data, [self.column1, self.column2], missing=self.missing, what="a chi-square test")
        rows, _ = pd.factorize(frame[self.column1], sort=False)
        cols, _ = pd.factorize(frame[self.column2], sort=False)
        counts = np.zeros((rows.max() + 1 if len(rows) else 0, cols.max() + 1 if len(cols) else 0))
        np.add.at(counts, (rows, cols), 1.0)
        return counts


def yates_trusted_level(table: np.ndarray) -> float:
    """Exact conditional trusted level of the Yates-corrected chi-square p-value of a 2x2 table.

    Given the margins, the (1, 1) count :math:`x` is hypergeometric under independence whatever
    the proportions; every cell then has the same :math:`|O - E| = |x - E_{11}|`, and the
    corrected statistic is :math:`\\max(|x - E_{11}| - 1/2, 0)^2\\sum 1/E`. Rule 1 of
    :mod:`~selective.hypotheses._trust` (:func:`~selective.hypotheses._trust.discrete_trusted_level`)
    on these p-values and probabilities. Margins with a zero make the test undefined: 0.0.
    """
    table = np.asarray(table, dtype=float)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    total = float(table.sum())
    if rows.min() == 0 or cols.min() == 0:
        return 0.0
    n1, s = int(rows[0]), int(cols[0])
    x = np.arange(max(0, s - int(rows[1])), min(n1, s) + 1, dtype=float)
    expected = np.outer(rows, cols) / total
    statistic = np.maximum(np.abs(x - expected[0, 0]) - 0.5, 0.0) ** 2 * float(np.sum(1.0 / expected))
    log_w = scipy.stats.hypergeom.logpmf(x, int(total), s, n1)
    return _trust.discrete_trusted_level(scipy.stats.chi2.logsf(statistic, 1), log_w)
