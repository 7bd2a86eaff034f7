"""Data splitting, the baseline that needs no correction: select on one part of the rows, test on the other.

Rows are i.i.d., so the test part is independent of any selection made on the selection part,
and a naive p-value computed on the test part is valid as it is. The scenarios use
:func:`split_rows` for their vectorised data-splitting column (``pvalue_split``);
:func:`data_splitting` runs a selector and its tests through the same split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_probability, check_rng

__all__ = ["RowSplit", "split_rows", "data_splitting"]


@dataclass(frozen=True, slots=True)
class RowSplit:
    """Row positions of the selection part and of the test part (disjoint, sorted).

    Attributes
    ----------
    select : ndarray of int
        Rows for the selection.
    test : ndarray of int
        Rows for the test.
    fraction : float
        The declared share of rows for selection.
    """

    select: np.ndarray
    test: np.ndarray
    fraction: float


def split_rows(n_rows: int, *, fraction: float = 0.5, rng: Any = None, stratify: Any = None) -> RowSplit:
    """Split ``n_rows`` row positions at random: ``round(fraction * n)`` for selection, the rest for the test.

    Parameters
    ----------
    n_rows : int
        At least 2.
    fraction : float
        Declared share of rows used for selection, in (0, 1). Both parts get at least one row.
    rng : numpy Generator or seed
    stratify : array_like, optional
        Labels (length ``n_rows``): the split is done within each label, so both parts keep
        the group proportions (e.g. the arms of a two-sample test).
    """
    n = check_int("n_rows", n_rows, low=2)
    f = check_probability("fraction", fraction, closed="neither")
    g = check_rng(rng)
    labels = np.zeros(n, dtype=int) if stratify is None else pd.factorize(np.asarray(stratify))[0]
    if len(labels) != n:
        raise ValueError(f"`stratify` must have one label per row ({n}); got {len(labels)}.")
    sel, tst = [], []
    for lab in np.unique(labels):
        idx = np.flatnonzero(labels == lab)
        perm = g.permutation(idx)
        k = int(round(f * len(idx)))
        if len(idx) >= 2:
            k = min(max(k, 1), len(idx) - 1)
        sel.append(perm[:k])
        tst.append(perm[k:])
    s, t = np.sort(np.concatenate(sel)), np.sort(np.concatenate(tst))
    if len(s) == 0 or len(t) == 0:
        raise ValueError(f"`fraction` = {f!r} leaves one part empty for {n} rows.")
    return RowSplit(select=s, test=t, fraction=f)


def data_splitting(data: pd.DataFrame, *, select: Any, tests: Callable[[Any], Iterable[Any]], fraction: float = 0.5,
                   rng: Any = None, stratify: str | None = None) -> pd.DataFrame:
    """Select on one part of the rows, test on the other: p-values that need no correction.

    The test part is independent of the selection (rows are i.i.d.), so for every selected
    hypothesis the naive p-value computed on the test part is valid as it is.

    Parameters
    ----------
    data : pandas.DataFrame
    select : selector or callable
        A selector (``select(data, rng) -> Selection``; its ``value`` is used) or a function
        ``data -> value``, run on the selection part only.
    tests : callable
        ``tests(value) -> iterable of test specs`` (:mod:`selective.hypotheses`), run on the
        test part.
    fraction : float
        Declared share of rows for selection.
    rng : numpy Generator or seed
        Drives the split (and a randomised selector).
    stratify : str, optional
        Column whose groups are split separately.

    Returns
    -------
    pandas.DataFrame
        Indexed by hypothesis: ``estimate``, ``statistic``, ``pvalue_split``, ``n_select_rows``,
        ``n_test_rows``.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    g = check_rng(rng)
    parts = split_rows(len(data), fraction=fraction, rng=g,
                       stratify=None if stratify is None else data[stratify].to_numpy())
    sel_data, test_data = data.iloc[parts.select], data.iloc[parts.test]
    value = select.select(sel_data, g).value if hasattr(select, "select") else select(sel_data)
    rows, names = [], []
    for spec in tests(value):
        res = spec.run(test_data)
        names.append(res.hypothesis)
        rows.append({"estimate": res.estimate, "statistic": res.statistic, "pvalue_split": res.pvalue_naive,
                     "n_select_rows": len(parts.select), "n_test_rows": len(parts.test)})
    return pd.DataFrame(rows, index=pd.Index(names, name="hypothesis"),
                        columns=["estimate", "statistic", "pvalue_split", "n_select_rows", "n_test_rows"])
