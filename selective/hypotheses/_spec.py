"""Shared base of the test specs and the checks they make on the data frame."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_in_interval, check_real, check_rng
from ._resample import DEFAULT_MAX_RESAMPLES, check_level, check_max_resamples
from ._result import TestResult

ALTERNATIVES = ("two-sided", "less", "greater")
MISSING = ("raise", "drop")
# statsmodels spells the one-sided alternatives "smaller" / "larger".
SM_ALTERNATIVE = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}


@dataclass(frozen=True, slots=True, kw_only=True)
class TestSpec:
    """Base of every confirmatory test spec.

    Parameters
    ----------
    label : str, optional
        Name of the hypothesis in results and reports; by default a description of the null.
    alternative : {"two-sided", "less", "greater"}
        Direction of the alternative hypothesis.
    confidence_level : float
        Level of the naive confidence interval, in (0, 1).
    missing : {"raise", "drop"}
        What to do with rows holding missing values in the columns the test uses: refuse them
        (the default, with a message saying how many and where) or drop them.
    """

    __test__ = False  # a class named Test* must not be collected by pytest

    label: str | None = None
    alternative: str = "two-sided"
    confidence_level: float = 0.95
    missing: str = "raise"

    def __post_init__(self) -> None:
        if self.label is not None and not isinstance(self.label, str):
            raise TypeError(f"`label` must be a string or None; got {self.label!r} ({type(self.label).__name__}).")
        check_choice("alternative", self.alternative, ALTERNATIVES)
        check_in_interval("confidence_level", self.confidence_level, low=0.0, high=1.0, closed="neither")
        check_choice("missing", self.missing, MISSING)
        self._check()

    def _check(self) -> None:
        """Checks of the subclass's own fields (a hook: ``super()`` breaks with slots)."""

    @property
    def hypothesis(self) -> str:
        """The label, or a description of the null hypothesis (with the direction of a one-sided
        alternative, so that two tests differing only in it are told apart)."""
        if self.label is not None:
            return self.label
        return self._describe() + ("" if self.alternative == "two-sided" else f" [one-sided: {self.alternative}]")

    def _describe(self) -> str:  # pragma: no cover - every spec overrides it
        raise NotImplementedError

    def run(self, data: pd.DataFrame) -> TestResult:  # pragma: no cover - every spec overrides it
        """Run the test on ``data`` and return its naive result."""
        raise NotImplementedError

    def run_at_level(
        self,
        data: pd.DataFrame,
        level: float,
        *,
        rng: np.random.Generator | int | None = None,
        max_resamples: int = DEFAULT_MAX_RESAMPLES,
    ) -> TestResult:
        """Run the test so that its p-value can be compared with the threshold ``level``.

        Parameters
        ----------
        data : pandas.DataFrame
            As for :meth:`run`.
        level : float
            The threshold the p-value will be compared with, in (0, 1]: typically a corrected
            :math:`\\gamma`.
        rng : numpy.random.Generator or int, optional
            Source of the resamples of a permutation p-value (a Generator, or a seed for
            ``numpy.random.default_rng``); fresh entropy when None. Unused when no
            resampling is needed.
        max_resamples : int
            Most resamples (or listed permutations) allowed; a permutation p-value needs
            :math:`B + 1 \\ge 10/\\text{level}` of them.

        Returns
        -------
        TestResult
            :meth:`run`'s result when its ``trusted_level`` is at most ``level``. Otherwise
            the spec's exact or permutation version (see the class docstring) when one
            applies to the data and fits in ``max_resamples``: same hypothesis, estimate and
            ``n_obs``; ``pvalue_naive``, ``statistic``, ``df``, ``method``, ``pvalue_method``
            and ``trusted_level`` of the version used; an interval dual to that version where
            the spec has one, else the ordinary interval, which then gives ``(nan, nan)`` at
            miscoverages below the ordinary ``trusted_level``. When neither applies,
            :meth:`run`'s result: its ``trusted_level > level`` says that the p-value must
            not be compared with ``level`` (withhold it).
        """
        level = check_level(level)
        max_resamples = check_max_resamples(max_resamples)
        generator = check_rng(rng)
        result = self.run(data)
        if result.trusted_level <= level:
            return result
        better = self._at_level(data, result, level=level, rng=generator, max_resamples=max_resamples)
        if better is not None and better.trusted_level <= level:
            return better
        return result

    def _at_level(
        self, data: pd.DataFrame, result: TestResult, *, level: float, rng: np.random.Generator, max_resamples: int
    ) -> TestResult | None:
        """The spec's version trusted at ``level``, or None (a hook; the default has none)."""
        return None

    def with_level(self, confidence_level: float) -> TestSpec:
        """A copy of this spec with another confidence level."""
        return dataclasses.replace(self, confidence_level=confidence_level)


def confidence_interval(
    spec: TestSpec, data: pd.DataFrame, confidence_level: float | None = None, *, alpha: float | None = None
) -> tuple[float, float]:
    """Naive interval of ``spec`` on ``data`` at another level (or miscoverage ``alpha``).

    Same as ``spec.run(data).ci_at(confidence_level, alpha=alpha)``; pass tiny miscoverages
    (such as a corrected :math:`\\gamma = 10^{-12}`) as ``alpha``.
    """
    if not isinstance(spec, TestSpec):
        raise TypeError(f"`spec` must be a test spec (a TestSpec); got {spec!r} ({type(spec).__name__}).")
    return spec.run(data).ci_at(confidence_level, alpha=alpha)


# ---------------------------------------------------------------- checks of spec fields


def check_column_name(name: str, value: Any) -> None:
    if not isinstance(value, (str, numbers.Integral)) or isinstance(value, bool):
        raise TypeError(f"`{name}` must be a column name (a string); got {value!r} ({type(value).__name__}).")


def check_value(name: str, value: Any) -> float:
    return check_real(name, value)


def check_levels(levels: Any) -> None:
    if levels is None:
        return
    if not isinstance(levels, (tuple, list)) or len(levels) != 2:
        raise TypeError(f"`levels` must be None or a pair (level_1, level_2) of group values; got {levels!r}.")
    if levels[0] == levels[1]:
        raise ValueError(f"`levels` must name two different groups; got {levels!r}.")


def fmt(value: float) -> str:
    return f"{value:g}"


# ---------------------------------------------------------------- checks of the data


def check_frame(data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    return data


def require_columns(data: pd.DataFrame, columns: Sequence[Any]) -> None:
    for column in columns:
        if column not in data.columns:
            raise ValueError(
                f"Column {column!r} is not in `data`; available columns: {list(data.columns)!r}."
            )


def select(
    data: Any,
    columns: Sequence[Any],
    *,
    numeric: Sequence[Any] = (),
    missing: str,
    what: str,
) -> pd.DataFrame:
    """The rows of ``data[columns]`` the test uses, after checking presence, type and missingness.

    ``numeric`` columns must hold numbers (booleans count as 0/1) and no infinities. Rows with
    missing values in any of ``columns`` are refused (``missing="raise"``) or dropped.
    """
    data = check_frame(data)
    columns = list(dict.fromkeys(columns))
    require_columns(data, columns)
    frame = data[columns]
    for column in numeric:
        series = frame[column]
        if not (pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype)):
            raise TypeError(
                f"Column {column!r} must hold numbers for {what}; it has dtype {series.dtype}."
            )
    n_missing = {c: int(frame[c].isna().sum()) for c in columns}
    if any(n_missing.values()):
        if missing == "raise":
            where = ", ".join(f"{n} in column {c!r}" for c, n in n_missing.items() if n)
            n_rows = int(frame.isna().any(axis=1).sum())
            raise ValueError(
                f"`data` has missing values ({where}; {n_rows} of {len(frame)} rows incomplete). "
                "Pass missing='drop' to drop the incomplete rows, or fill them first."
            )
        frame = frame.dropna()
    for column in numeric:
        values = as_float(frame[column])
        n_inf = int(np.isinf(values).sum())
        if n_inf:
            raise ValueError(f"Column {column!r} has {n_inf} infinite value(s); {what} needs finite numbers.")
    return frame


def as_float(series: pd.Series) -> np.ndarray:
    return series.to_numpy(dtype=float, na_value=np.nan)


def require_n(n: int, minimum: int, *, where: str, what: str) -> None:
    if n < minimum:
        raise ValueError(f"{where} has {n} observation(s); {what} needs at least {minimum}.")


def two_groups(frame: pd.DataFrame, group: Any, levels: Any) -> tuple[Any, Any]:
    """The two compared values of the ``group`` column: ``levels``, or its only two values."""
    present = pd.unique(frame[group].to_numpy(dtype=object))
    if levels is None:
        if len(present) != 2:
            shown = _sorted(present)
            raise ValueError(
                f"Column {group!r} must have exactly two distinct values to compare, or pass "
                f"`levels=(a, b)`; it has {len(present)}: {shown!r}."
            )
        return tuple(_sorted(present))  # type: ignore[return-value]
    for level in levels:
        if not any(level == p for p in present):
            raise ValueError(
                f"Level {level!r} of `levels` does not occur in column {group!r}; its values are {_sorted(present)!r}."
            )
    return levels[0], levels[1]


def _sorted(values) -> list:
    values = list(values)
    try:
        return sorted(values)
    except TypeError:
        return values


def group_values(
    values: np.ndarray, labels: np.ndarray, level: Any, *, column: Any, group: Any, what: str, minimum: int = 2
) -> np.ndarray:
    """The entries of ``values`` whose ``labels`` equal ``level``; at least ``minimum`` of them."""
    chosen = values[labels == level]
    require_n(len(chosen), minimum, where=f"Group {group}={level!r} of column {column!r}", what=what)
    return chosen


def group_label(column: Any, group: Any, level: Any) -> str:
    return f"{column} | {group}={level!r}"


def is_nan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)
