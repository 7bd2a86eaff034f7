"""Candidate scores for many columns in one vectorised pass, in memory or over Dask partitions.

``candidate_scores`` is what score functions of selectors usually wrap: column means,
correlations with a target, t statistics. It never loops over columns in Python. On a Dask
DataFrame the same scores come from streaming sufficient statistics merged over the partitions
(:mod:`selective.selectors.streaming`); they agree with the in-memory ones to a few units in the
last place. The score objects (:class:`CandidateScores`, :class:`TwoGroupScores`) accept both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats as _stats

from .._validation import check_choice
from .base import missing_columns, ordered_labels
from .streaming import CoMoments, Moments, is_dask_frame, numeric_block, reduce_frame

__all__ = ["candidate_scores", "welch_t_scores", "CandidateScores", "TwoGroupScores"]


def _check_frame(data: Any) -> None:
    if not isinstance(data, pd.DataFrame) and not is_dask_frame(data):
        raise TypeError(f"`data` must be a pandas or Dask DataFrame; got {type(data).__name__}.")


def _check_unique(data: Any, cols: list) -> None:
    problem = missing_columns(data, {"candidates": tuple(cols)})
    if problem:
        raise ValueError(problem)
    if data.columns.has_duplicates and any(c in set(data.columns[data.columns.duplicated()]) for c in cols):
        raise ValueError("`data` has more than one column with a label in `candidates`; column labels must be unique.")


def _check_numeric(data: pd.DataFrame, cols: list, argument: str) -> None:
    """Name the non-numeric columns among ``cols`` by label and dtype (never by a value: the
    message is raised inside a selection, after the data were read)."""
    bad = {c: str(data[c].dtype) for c in cols if data[c].dtype.kind not in "iufb"}
    if bad:
        listed = ", ".join(f"{c!r} ({t})" for c, t in bad.items())
        raise TypeError(f"`{argument}` must name numeric columns; not numeric: {listed}. Convert them first, "
                        "e.g. pd.to_numeric(data[col], errors='coerce') (and drop the missing values).")


def _matrix(data: pd.DataFrame, candidates: Sequence[Any]) -> np.ndarray:
    cols = list(candidates)
    _check_unique(data, cols)
    if cols == list(data.columns):
        x = data.to_numpy(copy=False)
    else:
        x = data[cols].to_numpy(copy=False)
    if x.dtype.kind not in "iufb":
        raise TypeError(f"candidate columns must be numeric; got dtype {x.dtype}.")
    return x


def _finish(kind: str, n: int, mom: Moments | None, com: CoMoments | None) -> np.ndarray:
    """Scores from merged moments: one-sample t (``mom``) or correlation / its t (``com``)."""
    if n < 2:
        raise ValueError(f"`data` must have at least 2 rows; got {n}.")
    with np.errstate(divide="ignore", invalid="ignore"):
        if com is None:
            return mom.mean / np.sqrt(mom.var / n)
        r = np.clip(com.cxy / np.sqrt(com.x.m2 * com.y_m2), -1.0, 1.0)
        return r if kind == "corr" else r * np.sqrt(n - 2) / np.sqrt(1.0 - r * r)


def _streamed(data: Any, cols: list, target: Any, kind: str) -> np.ndarray:
    """Scores of ``cols`` from moments merged over row chunks (pandas) or partitions (Dask)."""
    if target is None or kind == "mean":
        mom = reduce_frame(data, cols, lambda c: Moments.of(numeric_block(c, cols)))
        return mom.mean if kind == "mean" else _finish(kind, mom.n, mom, None)
    com = reduce_frame(data, [*cols, target],
                       lambda c: CoMoments.of(numeric_block(c, cols), numeric_block(c, [target])[:, 0]))
    return _finish(kind, com.x.n, None, com)


def candidate_scores(data: pd.DataFrame, candidates: Sequence[Any] | None = None, target: Any = None,
                     kind: str = "mean") -> pd.Series:
    r"""Scores of many candidate columns, computed in one vectorised pass.

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        A Dask frame is reduced partition by partition (moments merged with the updates of
        Chan, Golub and LeVeque; :mod:`selective.selectors.streaming`), reading only the
        candidate and target columns.
    candidates : sequence of column labels, optional
        Default: every column except ``target``.
    target : column label or array_like, optional
        Needed for ``kind="corr"``; for ``kind="t"`` it switches from the one-sample t of the
        column mean to the t statistic of the correlation with the target.
    kind : {"mean", "corr", "t"}
        "mean": column means. "corr": Pearson correlation with ``target``. "t": without target
        :math:`\bar x/(s/\sqrt n)`; with target :math:`r\sqrt{n-2}/\sqrt{1-r^2}`.

    Returns
    -------
    pandas.Series
        Indexed by candidate, float64. Constant columns give NaN for "corr" and "t" (selectors
        refuse NaN scores).

    Notes
    -----
    "t" and "corr" use per-chunk means and sums of squared deviations merged pairwise, never a
    difference of raw sums of squares, so a column with a large mean keeps its precision.
    """
    check_choice("kind", kind, ("mean", "corr", "t"))
    _check_frame(data)
    if is_dask_frame(data):
        return _dask_candidate_scores(data, candidates, target, kind)
    y = None
    if target is not None:
        if isinstance(target, (str, int)) and not isinstance(target, bool) and target in data.columns:
            _check_numeric(data, [target], "target")
            y = data[target].to_numpy(dtype=np.float64)
            default = [c for c in data.columns if c != target]
        else:
            y = np.asarray(target, dtype=np.float64)
            default = list(data.columns)
        if y.shape != (len(data),):
            raise ValueError(f"`target` must have one value per row ({len(data)}); got shape {y.shape}.")
    else:
        default = list(data.columns)
    if kind == "corr" and y is None:
        raise ValueError("`target` is required for kind='corr'.")
    cands = default if candidates is None else list(ordered_labels("candidates", candidates, allow_empty=True))
    x = _matrix(data, cands)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"`data` must have at least 2 rows; got {n}.")
    if kind == "mean":
        values = np.mean(x, axis=0, dtype=np.float64)
    elif y is None:  # one-sample t
        values = _finish(kind, n, _chunked(lambda a, b: Moments.of(x[a:b]), n), None)
    else:
        values = _finish(kind, n, None, _chunked(lambda a, b: CoMoments.of(x[a:b], y[a:b]), n))
    return pd.Series(np.asarray(values, dtype=np.float64), index=pd.Index(cands), name=kind)


def _chunked(stat, n: int, rows: int = 65_536):
    """``stat(a, b)`` over row chunks [a, b) of an array, merged in order (memory bounded by a chunk)."""
    out = stat(0, min(rows, n))
    for a in range(rows, n, rows):
        out = out.merge(stat(a, min(a + rows, n)))
    return out


def _dask_candidate_scores(data: Any, candidates: Any, target: Any, kind: str) -> pd.Series:
    if target is not None and not (isinstance(target, (str, int)) and not isinstance(target, bool)
                                   and target in data.columns):
        raise TypeError(f"on a Dask DataFrame `target` must be the label of one of its columns; got {target!r}.")
    if kind == "corr" and target is None:
        raise ValueError("`target` is required for kind='corr'.")
    default = [c for c in data.columns if c != target]
    cands = default if candidates is None else list(ordered_labels("candidates", candidates, allow_empty=True))
    _check_unique(data, cands)
    bad = [c for c in [*cands, *([] if target is None else [target])] if data[c].dtype.kind not in "iufb"]
    if bad:
        raise TypeError(f"candidate columns must be numeric; got dtype {data[bad[0]].dtype}.")
    if kind == "mean":
        values = reduce_frame(data, cands, lambda c: Moments.of(numeric_block(c, cands))).mean
    else:
        values = _streamed(data, cands, target, kind)
    return pd.Series(np.asarray(values, dtype=np.float64), index=pd.Index(cands), name=kind)


def welch_t_scores(data: Any, columns: list[str], group: str, levels: tuple[str, str]) -> pd.Series:
    """``|Welch t|`` of every column between two groups, in one vectorised pass.

    The usual screen before a two-group comparison: use it as the ``score`` of a
    :class:`~selective.selectors.TopK` over declared candidate columns.

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        In memory: ``scipy.stats.ttest_ind(..., axis=0, equal_var=False)`` over the columns.
        Dask: the group moments are merged over the partitions (:class:`TwoGroupScores`).
    columns : list of column labels
        The candidate columns (numeric).
    group : column label
        The column that holds the group of each row.
    levels : (str, str)
        The two groups compared: the score is ``|mean(levels[0]) - mean(levels[1])| / se``.
    """
    _check_frame(data)
    columns = list(ordered_labels("columns", columns, noun="column label"))
    problem = missing_columns(data, {"columns": tuple(columns), "group": (group,)})
    if problem:
        raise ValueError(problem)
    if not isinstance(levels, (tuple, list)) or len(levels) != 2:
        raise TypeError(f"`levels` must be a pair (tuple) of the two groups compared; got {levels!r}.")
    if is_dask_frame(data):
        return TwoGroupScores(tuple(columns), group, tuple(levels))(data).rename(None)
    _check_numeric(data, columns, "columns")
    g = data[group]
    a = data.loc[g == levels[0], columns].to_numpy(dtype=float)
    b = data.loc[g == levels[1], columns].to_numpy(dtype=float)
    if len(a) < 2 or len(b) < 2:  # one message whatever the data (it is seen after they were read)
        raise ValueError(f"`levels` must name two groups of column {group!r} with at least 2 rows each; got "
                         f"{tuple(levels)!r}, and one of them has fewer (a misspelt level has none).")
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _stats.ttest_ind(a, b, axis=0, equal_var=False).statistic
    return pd.Series(np.abs(np.asarray(t, dtype=np.float64)).reshape(len(columns)), index=columns)


@dataclass(frozen=True, slots=True)
class CandidateScores:
    """:func:`candidate_scores` as a score object that declares the columns it reads.

    Use it as the ``score`` of a selector whose candidates are columns, e.g.
    ``TopK(k=2, score=CandidateScores(cands, kind="t", absolute=True), candidates=cands)``:
    through :meth:`required_columns`, :class:`~selective.Analysis` refuses a missing column
    (a typo) before the data are touched, instead of charging the failure as an outcome. It
    accepts a pandas or a Dask DataFrame (``streaming = True``), so it also screens data
    larger than memory.

    Parameters
    ----------
    candidates : list or tuple of column labels
    kind : {"mean", "corr", "t"}
        As in :func:`candidate_scores`.
    target : column label, optional
        As in :func:`candidate_scores` (a column label only).
    absolute : bool, default False
        Score by absolute value (two-sided screens).
    """

    streaming: ClassVar[bool] = True  # accepts a Dask DataFrame

    candidates: tuple
    kind: str = "mean"
    target: Any = None
    absolute: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", ordered_labels("candidates", self.candidates, noun="column label"))
        check_choice("kind", self.kind, ("mean", "corr", "t"))
        if self.kind == "corr" and self.target is None:
            raise ValueError("`target` is required for kind='corr'.")
        if self.target is not None and self.target in self.candidates:
            raise ValueError(f"`target` {self.target!r} must not be one of `candidates`.")
        if not isinstance(self.absolute, bool):
            raise TypeError(f"`absolute` must be True or False; got {self.absolute!r}.")

    def required_columns(self) -> dict[str, tuple]:
        """``{"candidates": ..., "target": ...}``: checked before the data are touched."""
        out = {"candidates": self.candidates}
        if self.target is not None:
            out["target"] = (self.target,)
        return out

    def __call__(self, data: Any) -> pd.Series:
        s = candidate_scores(data, self.candidates, target=self.target, kind=self.kind)
        return s.abs() if self.absolute else s


_TWO_GROUP_KINDS = ("welch_t", "student_t", "difference")


@dataclass(frozen=True, slots=True)
class TwoGroupScores:
    r"""Two-group scores of many columns from group moments merged over chunks or partitions.

    Parameters
    ----------
    columns : list or tuple of column labels
        The candidate columns (numeric).
    group : column label
        The column holding each row's group; rows in neither of ``levels`` are ignored.
    levels : (value, value)
        The groups compared, a and b.
    kind : {"welch_t", "student_t", "difference"}, default "welch_t"
        :math:`(\bar x_a-\bar x_b)/\sqrt{s_a^2/n_a+s_b^2/n_b}` (Welch),
        :math:`(\bar x_a-\bar x_b)/(s_p\sqrt{1/n_a+1/n_b})` with the pooled
        :math:`s_p^2=(M_a+M_b)/(n_a+n_b-2)` (Student), or :math:`\bar x_a-\bar x_b`.
    absolute : bool, default True
        Score by absolute value (two-sided screens).

    Notes
    -----
    Means and sums of squared deviations :math:`M` per group are merged with the updates of
    Chan, Golub and LeVeque (:class:`~selective.selectors.streaming.Moments`). On a pandas
    frame the Welch and Student statistics agree with ``scipy.stats.ttest_ind(axis=0)`` to a
    few units in the last place; a group with fewer than 2 rows, or a constant column, gives a
    NaN score (selectors refuse it by name).
    """

    streaming: ClassVar[bool] = True  # accepts a Dask DataFrame

    columns: tuple
    group: Any
    levels: tuple
    kind: str = "welch_t"
    absolute: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ordered_labels("columns", self.columns, noun="column label"))
        if not isinstance(self.levels, (tuple, list)) or len(self.levels) != 2:
            raise TypeError(f"`levels` must be a pair (tuple) of the two groups compared; got {self.levels!r}.")
        object.__setattr__(self, "levels", tuple(self.levels))
        check_choice("kind", self.kind, _TWO_GROUP_KINDS)
        if self.group in self.columns:
            raise ValueError(f"`group` {self.group!r} must not be one of `columns`.")
        if not isinstance(self.absolute, bool):
            raise TypeError(f"`absolute` must be True or False; got {self.absolute!r}.")

    def required_columns(self) -> dict[str, tuple]:
        """``{"columns": ..., "group": (group,)}``: checked before the data are touched."""
        return {"columns": self.columns, "group": (self.group,)}

    def statistics(self, chunk: pd.DataFrame) -> _GroupMoments:
        """The group moments of one chunk of rows."""
        x = numeric_block(chunk, self.columns)
        g = chunk[self.group].to_numpy()
        return _GroupMoments(Moments.of(x[g == self.levels[0]]), Moments.of(x[g == self.levels[1]]))

    def finish(self, stats: _GroupMoments) -> pd.Series:
        """The scores from the merged group moments."""
        a, b = stats.a, stats.b
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = a.mean - b.mean if a.n and b.n else np.full(len(self.columns), np.nan)
            if self.kind == "welch_t":
                values = diff / np.sqrt(a.var / a.n + b.var / b.n)
            elif self.kind == "student_t":
                dof = a.n + b.n - 2
                sp2 = (a.m2 + b.m2) / dof if dof > 0 else np.nan
                values = diff / np.sqrt(sp2 * (1.0 / a.n + 1.0 / b.n))
            else:
                values = diff
        values = np.asarray(values, dtype=np.float64)
        return pd.Series(np.abs(values) if self.absolute else values, index=list(self.columns), name=self.kind)

    def __call__(self, data: Any) -> pd.Series:
        _check_frame(data)
        problem = missing_columns(data, self.required_columns())
        if problem:
            raise ValueError(problem)
        return self.finish(reduce_frame(data, [*self.columns, self.group], self.statistics))


@dataclass(frozen=True, slots=True)
class _GroupMoments:
    a: Moments
    b: Moments

    def merge(self, other: _GroupMoments) -> _GroupMoments:
        return _GroupMoments(self.a.merge(other.a), self.b.merge(other.b))
