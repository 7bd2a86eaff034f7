"""Read-only views of a held-out DataFrame for user queries (private).

A mechanism that runs user code on its holdout must not hand that code the holdout itself: a
query could overwrite rows (changing every later answer) or keep a reference that later code
mutates. :class:`FrozenFrame` keeps a private copy made at construction and gives every query a
fresh DataFrame over it whose numpy-typed columns are read-only arrays, so that a write raises
``ValueError: assignment destination is read-only`` and the stored holdout never changes.
Columns of pandas extension types (nullable integers, strings, categoricals), whose storage
cannot be flagged read-only through the public API, are copied afresh for each query instead:
a write then changes only that query's copy.

This is protection against accidents, not a sandbox: code that receives the rows can copy
them, and Python code can reach any object of the process.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FrozenFrame"]


class FrozenFrame:
    """A private copy of ``frame`` that hands out fresh read-only views (see the module notes)."""

    __slots__ = ("_index", "_columns", "_block", "_arrays", "_n")

    def __init__(self, frame: pd.DataFrame) -> None:
        self._index = frame.index.copy()
        self._columns = frame.columns.copy()
        self._n = len(frame)
        dtypes = list(frame.dtypes)
        self._block: np.ndarray | None = None
        self._arrays: list[tuple[Any, bool]] = []
        if dtypes and all(isinstance(d, np.dtype) for d in dtypes) and len(set(dtypes)) == 1:
            block = frame.to_numpy(copy=True)
            block.flags.writeable = False
            self._block = block
            return
        for i in range(frame.shape[1]):
            col = frame.iloc[:, i]
            if isinstance(col.dtype, np.dtype):
                arr = col.to_numpy(copy=True)
                arr.flags.writeable = False
                self._arrays.append((arr, False))
            else:
                self._arrays.append((col.array.copy(), True))

    def __len__(self) -> int:
        return self._n

    def __reduce__(self) -> Any:
        raise TypeError("held-out data cannot be pickled.")

    def view(self) -> pd.DataFrame:
        """A new DataFrame over the stored copy: numpy columns read-only, extension columns fresh copies."""
        if self._block is not None:
            return pd.DataFrame(self._block, index=self._index, columns=self._columns, copy=False)
        cols = {}
        for i, (arr, ext) in enumerate(self._arrays):
            data = arr.copy() if ext else arr
            cols[i] = pd.Series(data, index=self._index, dtype=arr.dtype, copy=False)
        out = pd.DataFrame(cols, index=self._index, copy=False)
        out.columns = self._columns
        return out
