"""Correlation tests (scipy: statsmodels has no Pearson or Spearman test of zero correlation)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats

from . import _resample, _trust, _trust_model
from ._result import IntervalRule, TestResult, make_result, with_pvalue
from ._spec import TestSpec, as_float, check_column_name, require_n, select

__all__ = ["PearsonCorrelationTest", "SpearmanCorrelationTest"]

# Fieller, Hartley & Pearson (1957): var(atanh(rho_s)) ~ 1.06 / (n - 3) for Spearman's rho.
SPEARMAN_VARIANCE_FACTOR = 1.06


def _pairs(spec: TestSpec, data: pd.DataFrame, what: str) -> tuple[np.ndarray, np.ndarray]:
    columns = [spec.column1, spec.column2]
    frame = select(data, columns, numeric=columns, missing=spec.missing, what=what)
    x, y = as_float(frame[spec.column1]), as_float(frame[spec.column2])
    require_n(len(x), 4, where=f"The pair ({spec.column1!r}, {spec.column2!r})", what=what)
    for column, values in ((spec.column1, x), (spec.column2, y)):
        if np.all(values == values[0]):
            raise ValueError(f"Column {column!r} is constant ({float(values[0])!r}): its correlation is undefined.")
    return x, y


def _t_statistic(r: float, n: int) -> float:
    """The t statistic (n - 2 df) of the test of zero correlation, as R's cor.test reports it."""
    if abs(r) >= 1.0:
        return math.copysign(math.inf, r)
    return r * math.sqrt((n - 2) / (1.0 - r * r))


def _joined(note: str) -> str:
    """A variance check's note as the last clause of a method ("" when it passed)."""
    return f"; {note}" if note else ""


def _check_columns(spec: TestSpec) -> None:
    check_column_name("column1", spec.column1)
    check_column_name("column2", spec.column2)
    if spec.column1 == spec.column2:
        raise ValueError(f"`column1` and `column2` must differ; both are {spec.column1!r}.")


@dataclass(frozen=True, slots=True, kw_only=True)
class PearsonCorrelationTest(TestSpec):
    """Test that the Pearson correlation of ``column1`` and ``column2`` is zero.

    Runs ``scipy.stats.pearsonr(x, y, alternative=...)`` (p-value exact under bivariate
    normality). Estimate: ``r``; statistic: ``t = r sqrt((n - 2) / (1 - r^2))`` with ``n - 2``
    df, as R's ``cor.test`` reports it; interval: Fisher's z, as
    ``PearsonRResult.confidence_interval`` and R give it. The p-value is exact when the two
    variables are independent and one of them is normal (``"exact_under_model"``); neither
    can be checked at the levels the corrections use, so ``trusted_level`` bounds the error of
    the t law against the permutation law of the observed values (exact under independence,
    whatever their distribution) by Pitman's moments
    (:func:`selective.hypotheses._trust_model.correlation_trusted_level`). Below it,
    ``run_at_level`` refers r to that permutation law (all n! permutations when at most
    ``max_resamples``, else sequential Monte Carlo (Besag and Clifford)).

    Both assume independence, which a zero correlation does not imply: when the squared
    deviations of the two variables grow together (a variance check at one-sided level 0.01,
    :func:`selective.hypotheses._trust_model.correlation_variance_note`; e.g. y = x e), the
    variance of r exceeds its null value, and the p-value is trusted at no level below 1.
    """

    column1: str
    column2: str

    def _check(self) -> None:
        _check_columns(self)

    def _describe(self) -> str:
        return f"pearson_r({self.column1}, {self.column2}) = 0"

    def run(self, data: pd.DataFrame) -> TestResult:
        x, y = _pairs(self, data, "a Pearson correlation test")
        n = len(x)
        result = scipy.stats.pearsonr(x, y, alternative=self.alternative)
        r = float(result.statistic)
        rule = IntervalRule(kind="fisher_z", params=(r, n, 1.0), alternative=self.alternative, bounds=(-1.0, 1.0))
        note = _trust_model.correlation_variance_note(x, y)
        return make_result(
            spec=self, estimate=r, statistic=_t_statistic(r, n), df=n - 2, pvalue=result.pvalue, rule=rule,
            method=f"scipy.stats.pearsonr(x, y, alternative={self.alternative!r}); CI Fisher z" + _joined(note),
            n_obs=n, pvalue_method="exact_under_model",
            trusted_level=1.0 if note else _trust_model.correlation_trusted_level(x, y, alternative=self.alternative),
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        x, y = _pairs(self, data, "a Pearson correlation test")
        if _trust_model.correlation_variance_note(x, y):
            return None  # dependent though uncorrelated: the pairs are not exchangeable (the method says so)
        return _permutation_correlation(self, result, x - x.mean(), y - y.mean(), "Pearson's r", "the values of y",
                                        level=level, rng=rng, max_resamples=max_resamples, ci="CI Fisher z")


@dataclass(frozen=True, slots=True, kw_only=True)
class SpearmanCorrelationTest(TestSpec):
    """Test that the Spearman rank correlation of ``column1`` and ``column2`` is zero.

    Runs ``scipy.stats.spearmanr(x, y, alternative=...)``: the p-value is the t approximation
    with ``n - 2`` df (R's ``cor.test(method = "spearman", exact = FALSE)``). Estimate: rho;
    statistic: that t. Interval: Fisher's z with the variance ``1.06 / (n - 3)`` of Fieller,
    Hartley and Pearson (Biometrika 44, 1957, pp. 470-481); approximate, and not exactly the
    dual of the test.

    Asymptotic; ``trusted_level`` from the permutation skewness and kurtosis of the ranks
    and their lattice step (:func:`selective.hypotheses._trust.spearman_trusted_level`;
    untied n = 15: from about 0.04). Below it, ``run_at_level`` gives the permutation law
    of rho given the ranks (midranks with ties): exact, over all n! permutations, when
    n! <= ``max_resamples`` (n <= 9 by default; R's ``cor.test(..., exact = TRUE)`` is
    exact there too), else sequential Monte Carlo (Besag and Clifford). Both are exact under
    independence; the variance check of :class:`PearsonCorrelationTest`, on the ranks, withholds
    them when the ranks' spreads grow together.
    """

    column1: str
    column2: str

    def _check(self) -> None:
        _check_columns(self)

    def _describe(self) -> str:
        return f"spearman_rho({self.column1}, {self.column2}) = 0"

    def run(self, data: pd.DataFrame) -> TestResult:
        x, y = _pairs(self, data, "a Spearman correlation test")
        n = len(x)
        result = scipy.stats.spearmanr(x, y, alternative=self.alternative)
        rho = float(result.statistic)
        rule = IntervalRule(
            kind="fisher_z", params=(rho, n, SPEARMAN_VARIANCE_FACTOR), alternative=self.alternative, bounds=(-1.0, 1.0)
        )
        rank_x, rank_y = scipy.stats.rankdata(x), scipy.stats.rankdata(y)
        note = _trust_model.correlation_variance_note(rank_x, rank_y)
        return make_result(
            spec=self, estimate=rho, statistic=_t_statistic(rho, n), df=n - 2, pvalue=result.pvalue, rule=rule,
            method=(
                f"scipy.stats.spearmanr(x, y, alternative={self.alternative!r}); "
                "CI Fisher z with variance 1.06/(n-3) (Fieller et al. 1957)" + _joined(note)
            ),
            n_obs=n, pvalue_method="asymptotic",
            trusted_level=1.0 if note else _trust.spearman_trusted_level(rank_x, rank_y, alternative=self.alternative),
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        x, y = _pairs(self, data, "a Spearman correlation test")
        n = len(x)
        a = scipy.stats.rankdata(x) - (n + 1) / 2.0
        b = scipy.stats.rankdata(y) - (n + 1) / 2.0
        if _trust_model.correlation_variance_note(a + (n + 1) / 2.0, b + (n + 1) / 2.0):
            return None  # dependent though uncorrelated: the pairs are not exchangeable (the method says so)
        return _permutation_correlation(self, result, a, b, "Spearman's rho", "the ranks of y (midranks for ties)",
                                        level=level, rng=rng, max_resamples=max_resamples,
                                        ci="CI Fisher z with variance 1.06/(n-3)")


def _permutation_correlation(spec, result, a, b, name, what, *, level, rng, max_resamples, ci):
    """``result`` with the permutation p-value of :math:`T = \\sum a_i b_{\\pi(i)}` (centred
    ``a`` and ``b``): all n! permutations when at most ``max_resamples`` (exact), else Monte
    Carlo (sequential, Besag and Clifford); None when the level needs more resamples than allowed."""
    n = len(a)
    observed = float(np.dot(a, b))
    if math.factorial(n) <= max_resamples:
        stats = b[_resample.all_permutations(n)] @ a
        pvalue = _resample.complete_pvalue(observed, stats, spec.alternative)
        how = f"its exact null law: all {math.factorial(n)} permutations, p = #{{T_pi >= T}}/N"
        pvalue_method = "exact"
    else:
        n_resamples = _resample.n_resamples_for(level, max_resamples)
        if n_resamples is None:
            return None

        def simulate(gen: np.random.Generator, size: int) -> np.ndarray:
            rows = np.broadcast_to(b, (size, n)).copy()
            return gen.permuted(rows, axis=1) @ a

        pvalue = _resample.monte_carlo_pvalue(
            observed, simulate, n_resamples, alternative=spec.alternative, rng=rng, chunk=_resample.chunk_size(n)
        )
        how = f"at most B = {n_resamples} random permutations, {_resample.MONTE_CARLO_RULE}"
        pvalue_method = "permutation"
    method = (f"{name} ({spec.alternative}) against {how} of {what}; exact under independence (the pairs are "
              f"exchangeable); {ci}")
    return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method=pvalue_method)
