r"""Scores of bounded sensitivity for DP selectors, exact to the last bit over any chunking.

Clipped means, signed clipped means (half a difference of group means) and proportions, each
computed from exact integer sums on a fixed grid (:class:`~selective.selectors.streaming.GridSums`):
a pandas frame and a Dask frame of the same rows give the same doubles, whatever the partitions,
so a DP selector given the same seed makes the same selection on both (the exact samplers read
the scores through their own integer grid, :mod:`selective.mechanisms.exponential`).

Each score's replace-one sensitivity is stated by :meth:`sensitivity`; it is that of the
clipped statistic itself (every grid value lies in :math:`[-c, c]`), and the correctly rounded
final division adds at most half an ulp, inside the samplers' floating-point slack
(THEORY.md 7.1). Values are rounded toward zero on a grid of spacing at most :math:`c/2^{31}`,
so the grid score differs from the exact clipped mean by less than :math:`c/2^{31}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive
from .base import missing_columns, ordered_labels
from .streaming import GridSums, is_dask_frame, numeric_block, reduce_frame

__all__ = ["ClippedMeanScores", "SignedClippedMeanScores", "ProportionScores"]


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be True or False; got {value!r}.")


def _run(score: Any, data: Any, columns: list) -> pd.Series:
    if not isinstance(data, pd.DataFrame) and not is_dask_frame(data):
        raise TypeError(f"`data` must be a pandas or Dask DataFrame; got {type(data).__name__}.")
    problem = missing_columns(data, score.required_columns())
    if problem:
        raise ValueError(problem)
    return score.finish(reduce_frame(data, columns, score.statistics))


def _series(score: Any, stats: GridSums, values: list, name: str) -> pd.Series:
    out = stats.to_floats(values)
    return pd.Series(np.abs(out) if score.absolute else out, index=list(score.columns), name=name)


@dataclass(frozen=True, slots=True)
class ClippedMeanScores:
    r"""Means :math:`\frac1n\sum_i \mathrm{clip}(x_{ij}, -c, c)` of many columns, on an exact grid.

    Parameters
    ----------
    columns : list or tuple of column labels
        The candidate columns (numeric), standardised beforehand with data-independent
        constants if needed (values are clipped around 0).
    clip : float
        c > 0.
    absolute : bool, default False
        Score by absolute value.

    Notes
    -----
    Replace-one sensitivity :math:`2c/n` (:meth:`sensitivity`). A column with a missing value
    gets a NaN score, which the selectors refuse by name.
    """

    streaming: ClassVar[bool] = True  # accepts a Dask DataFrame

    columns: tuple
    clip: float = 3.0
    absolute: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ordered_labels("columns", self.columns, noun="column label"))
        object.__setattr__(self, "clip", check_positive("clip", self.clip))
        _check_bool("absolute", self.absolute)

    def required_columns(self) -> dict[str, tuple]:
        """``{"columns": columns}``: checked before the data are touched."""
        return {"columns": self.columns}

    def sensitivity(self, n_rows: int) -> float:
        """Replace-one sensitivity :math:`2c/n`."""
        return 2.0 * self.clip / check_int("n_rows", n_rows, low=1)

    def statistics(self, chunk: pd.DataFrame) -> GridSums:
        """Exact grid sums of one chunk."""
        return GridSums.of(numeric_block(chunk, self.columns), self.clip)

    def finish(self, stats: GridSums) -> pd.Series:
        return _series(self, stats, stats.exact_means(0), "clipped mean")

    def __call__(self, data: Any) -> pd.Series:
        return _run(self, data, list(self.columns))


@dataclass(frozen=True, slots=True)
class SignedClippedMeanScores:
    r"""Scores :math:`\frac1n\sum_i \mathrm{clip}(x_{ij}, -c, c)\, s_i`, :math:`s_i=\pm1`, on an exact grid.

    The statistic of :class:`~selective.selectors.SignedMeanScore` (with ``sign`` = +1 for one
    group and -1 for every other row: up to group sizes, half the difference of the groups'
    clipped means), computed from exact integer sums, so that it is the same to the last bit on
    a pandas and on a Dask frame.

    Parameters
    ----------
    columns : list or tuple of column labels
        Candidate columns (numeric).
    sign_column : column label
        The column holding the groups.
    positive : value
        The group given sign +1 (every other value, missing included, gets -1).
    clip : float, default 3.0
        c > 0.
    absolute : bool, default False
        Score by absolute value.

    Notes
    -----
    Replace-one sensitivity :math:`2c/n` (:meth:`sensitivity`): one row moves one term by at
    most 2c, whichever group it is in.
    """

    streaming: ClassVar[bool] = True  # accepts a Dask DataFrame

    columns: tuple
    sign_column: Any
    positive: Any
    clip: float = 3.0
    absolute: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ordered_labels("columns", self.columns, noun="column label"))
        object.__setattr__(self, "clip", check_positive("clip", self.clip))
        if self.sign_column in self.columns:
            raise ValueError(f"`sign_column` {self.sign_column!r} must not be one of `columns`.")
        _check_bool("absolute", self.absolute)

    def required_columns(self) -> dict[str, tuple]:
        """``{"columns": columns, "sign_column": (sign_column,)}``: checked before the data are touched."""
        return {"columns": self.columns, "sign_column": (self.sign_column,)}

    def sensitivity(self, n_rows: int) -> float:
        """Replace-one sensitivity :math:`2c/n`."""
        return 2.0 * self.clip / check_int("n_rows", n_rows, low=1)

    def statistics(self, chunk: pd.DataFrame) -> GridSums:
        """Exact grid sums of one chunk: the positive group's and the other rows'."""
        pos = (chunk[self.sign_column] == self.positive).to_numpy(dtype=bool, na_value=False)
        return GridSums.of(numeric_block(chunk, self.columns), self.clip, groups=(pos, ~pos))

    def finish(self, stats: GridSums) -> pd.Series:
        n = stats.counts[0] + stats.counts[1]
        u = Fraction(stats.unit)
        values = [None if n == 0 else Fraction(a - b, n) * u for a, b in zip(*stats.sums, strict=True)]
        return _series(self, stats, values, "signed clipped mean")

    def __call__(self, data: Any) -> pd.Series:
        return _run(self, data, [*self.columns, self.sign_column])


@dataclass(frozen=True, slots=True)
class ProportionScores:
    r"""Proportions :math:`\frac1n\#\{i: x_{ij} = v\}` of many columns, exactly rounded.

    Parameters
    ----------
    columns : list or tuple of column labels
    value : default True
        The value counted (``True`` also counts 1 in a numeric column).
    absolute : bool, default False
        Score by absolute value (a proportion is non-negative; kept for symmetry).

    Notes
    -----
    Replace-one sensitivity :math:`1/n` (:meth:`sensitivity`). The counts are integers, so the
    proportion is the correctly rounded :math:`k/n` on any chunking. A missing value gives the
    column a NaN score (selectors refuse it by name): count it or not explicitly beforehand.
    """

    streaming: ClassVar[bool] = True  # accepts a Dask DataFrame

    columns: tuple
    value: Any = True
    absolute: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ordered_labels("columns", self.columns, noun="column label"))
        _check_bool("absolute", self.absolute)

    def required_columns(self) -> dict[str, tuple]:
        """``{"columns": columns}``: checked before the data are touched."""
        return {"columns": self.columns}

    def sensitivity(self, n_rows: int) -> float:
        """Replace-one sensitivity :math:`1/n`."""
        return 1.0 / check_int("n_rows", n_rows, low=1)

    def statistics(self, chunk: pd.DataFrame) -> GridSums:
        """Exact counts of one chunk (grid sums of the indicators)."""
        sub = chunk[list(self.columns)]
        hit = (sub == self.value).to_numpy(dtype=np.float64, na_value=0.0)
        hit[sub.isna().to_numpy()] = np.nan
        return GridSums.of(hit, 1.0)

    def finish(self, stats: GridSums) -> pd.Series:
        return _series(self, stats, stats.exact_means(0), "proportion")

    def __call__(self, data: Any) -> pd.Series:
        return _run(self, data, list(self.columns))
