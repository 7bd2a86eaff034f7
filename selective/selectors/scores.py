"""Candidate scores for many columns in one vectorised pass.

``candidate_scores`` is what score functions of selectors usually wrap: column means,
correlations with a target, t statistics. It never loops over columns in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice
from .base import missing_columns, ordered_labels

__all__ = ["candidate_scores", "welch_t_scores", "CandidateScores"]

_CHUNK_ROWS = 65_536


def _matrix(data: pd.DataFrame, candidates: Sequence[Any]) -> np.ndarray:
    cols = list(candidates)
    problem = missing_columns(data, {"candidates": tuple(cols)})
    if problem:
        raise ValueError(problem)
    if data.columns.has_duplicates and any(c in set(data.columns[data.columns.duplicated()]) for c in cols):
        raise ValueError("`data` has more than one column with a label in `candidates`; column labels must be unique.")
    if cols == list(data.columns):
        x = data.to_numpy(copy=False)
    else:
        x = data[cols].to_numpy(copy=False)
    if x.dtype.kind not in "iufb":
        raise TypeError(f"candidate columns must be numeric; got dtype {x.dtype}.")
    return x


def _moments(x: np.ndarray, y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Column sums, sums of squares and cross products with y (float64, row chunks)."""
    p = x.shape[1]
    s = np.zeros(p)
    ss = np.zeros(p)
    sxy = np.zeros(p) if y is not None else None
    for start in range(0, x.shape[0], _CHUNK_ROWS):
        xc = np.asarray(x[start:start + _CHUNK_ROWS], dtype=np.float64)
        s += xc.sum(axis=0)
        ss += np.einsum("ij,ij->j", xc, xc)
        if y is not None:
            sxy += y[start:start + _CHUNK_ROWS] @ xc
    return s, ss, sxy


def candidate_scores(data: pd.DataFrame, candidates: Sequence[Any] | None = None, target: Any = None,
                     kind: str = "mean") -> pd.Series:
    r"""Scores of many candidate columns, computed in one vectorised pass.

    Parameters
    ----------
    data : pandas.DataFrame
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
    """
    check_choice("kind", kind, ("mean", "corr", "t"))
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    y = None
    if target is not None:
        if isinstance(target, (str, int)) and not isinstance(target, bool) and target in data.columns:
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
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "mean":
            values = np.mean(x, axis=0, dtype=np.float64)
        elif y is None:  # one-sample t
            s, ss, _ = _moments(x, None)
            mean = s / n
            var = np.maximum(ss - n * mean * mean, 0.0) / (n - 1)
            values = mean / np.sqrt(var / n)
        else:
            yc = y - y.mean()
            s, ss, sxy = _moments(x, yc)
            mean = s / n
            sxx = np.maximum(ss - n * mean * mean, 0.0)
            syy = float(yc @ yc)
            r = sxy / np.sqrt(sxx * syy)
            r = np.clip(r, -1.0, 1.0)
            values = r if kind == "corr" else r * np.sqrt(n - 2) / np.sqrt(1.0 - r * r)
    return pd.Series(np.asarray(values, dtype=np.float64), index=pd.Index(cands), name=kind)


def welch_t_scores(data: pd.DataFrame, columns: list[str], group: str, levels: tuple[str, str]) -> pd.Series:
    """``|Welch t|`` of every column between two groups, in one vectorised pass.

    The usual screen before a two-group comparison: use it as the ``score`` of a
    :class:`~selective.selectors.TopK` over declared candidate columns.

    Parameters
    ----------
    data : pandas.DataFrame
    columns : list of column labels
        The candidate columns (numeric).
    group : column label
        The column that holds the group of each row.
    levels : (str, str)
        The two groups compared: the score is ``|mean(levels[0]) - mean(levels[1])| / se``.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    columns = list(ordered_labels("columns", columns, noun="column label"))
    problem = missing_columns(data, {"columns": tuple(columns), "group": (group,)})
    if problem:
        raise ValueError(problem)
    if not isinstance(levels, (tuple, list)) or len(levels) != 2:
        raise TypeError(f"`levels` must be a pair (tuple) of the two groups compared; got {levels!r}.")
    a = data.loc[data[group] == levels[0], columns].to_numpy(dtype=float)
    b = data.loc[data[group] == levels[1], columns].to_numpy(dtype=float)
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    return pd.Series(np.abs(a.mean(axis=0) - b.mean(axis=0)) / se, index=columns)


@dataclass(frozen=True, slots=True)
class CandidateScores:
    """:func:`candidate_scores` as a score object that declares the columns it reads.

    Use it as the ``score`` of a selector whose candidates are columns, e.g.
    ``TopK(k=2, score=CandidateScores(cands, kind="t", absolute=True), candidates=cands)``:
    through :meth:`required_columns`, :class:`~selective.Analysis` refuses a missing column
    (a typo) before the data are touched, instead of charging the failure as an outcome.

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

    def __call__(self, data: pd.DataFrame) -> pd.Series:
        s = candidate_scores(data, self.candidates, target=self.target, kind=self.kind)
        return s.abs() if self.absolute else s
