"""Where an analysis' data come from: a pandas frame, a Dask frame, or a Parquet / CSV path.

A path is read lazily with Dask (``pip install 'selective[dask]'``), so data larger than
memory are screened partition by partition (:mod:`selective.selectors.streaming`). A
confirmatory test needs rows: only the columns a test names are collected, and never more than
``max_collect_bytes`` (:data:`DEFAULT_MAX_COLLECT_BYTES`, 1 GiB, overridable in
:class:`~selective.Analysis`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..selectors.streaming import is_dask_frame

__all__ = ["DEFAULT_MAX_COLLECT_BYTES", "CollectTooLargeError", "open_data", "count_rows", "spec_columns",
           "collect_columns", "estimate_bytes", "is_dask_frame"]

DEFAULT_MAX_COLLECT_BYTES = 2**30  # 1 GiB of collected columns
OBJECT_CELL_BYTES = 64  # assumed size of one cell of a text or object column in the estimate
_PARQUET = (".parquet", ".pq", ".parq")
_CSV = (".csv", ".tsv", ".txt")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_QUOTED = re.compile(r"""Q\(\s*(['"])(.*?)\1\s*\)""")


class CollectTooLargeError(ValueError):
    """The columns a test needs would not fit under the analysis' ``max_collect_bytes``."""


def _dask_dataframe():
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - the dask extra is installed in the tests
        raise ImportError("reading a Parquet or CSV path lazily needs Dask: pip install 'selective[dask]' "
                          f"(dask[distributed,dataframe]); {exc}") from None
    return dd


def open_data(data: Any) -> Any:
    """``data`` as a frame: a pandas or Dask DataFrame as it is, a path read lazily with Dask.

    Parameters
    ----------
    data : pandas.DataFrame, dask.dataframe.DataFrame, str or path
        A path ending in ``.parquet`` / ``.pq`` / ``.parq`` or naming a folder is read with
        ``dask.dataframe.read_parquet``; one ending in ``.csv`` / ``.tsv`` / ``.txt`` (glob
        patterns such as ``"data/part-*.csv"`` allowed) with ``dask.dataframe.read_csv``
        (tab-separated for ``.tsv``).

    Raises
    ------
    TypeError
        ``data`` is none of these.
    ValueError
        The path has another suffix, or does not exist.
    """
    if isinstance(data, pd.DataFrame) or is_dask_frame(data):
        return data
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"`data` must be a pandas DataFrame, a Dask DataFrame or the path of a Parquet or CSV file; "
                        f"got {type(data).__name__}.")
    path = Path(data)
    suffix = path.suffix.lower()
    has_glob = any(ch in str(path) for ch in "*?[")
    if not has_glob and not path.exists():
        raise ValueError(f"`data` names the path {str(path)!r}, which does not exist.")
    if path.is_dir() or suffix in _PARQUET:
        return _dask_dataframe().read_parquet(str(path))
    if suffix in _CSV:
        return _dask_dataframe().read_csv(str(path), sep="\t" if suffix == ".tsv" else ",")
    raise ValueError(f"`data` must be a Parquet path (suffix {', '.join(_PARQUET)}, or a folder) or a CSV path "
                     f"(suffix {', '.join(_CSV)}); got {str(path)!r}.")


def count_rows(frame: Any) -> int:
    """The number of rows (one pass over a Dask frame's partitions, reading no column for Parquet)."""
    return int(len(frame))


def _names_in(value: Any, present: set) -> Iterable[Any]:
    if isinstance(value, str):
        if value in present:
            yield value
        for m in _QUOTED.finditer(value):
            if m.group(2) in present:
                yield m.group(2)
        for tok in _IDENTIFIER.findall(value):
            if tok in present:
                yield tok
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _names_in(v, present)
    else:
        try:
            if value in present:
                yield value
        except TypeError:  # unhashable: not a column label
            return


def spec_columns(spec: Any, columns: Iterable[Any]) -> list[Any]:
    """The columns of the data a test spec names, in the data's column order.

    Every field of the spec is read: a value equal to a column label, labels in a list or
    tuple, and the names in a formula (identifiers and ``Q("...")``). A name that is also an
    ordinary word of a formula is collected too: collecting too much costs memory only.
    """
    present = list(columns)
    lookup = set(present)
    if dataclasses.is_dataclass(spec):
        values = [getattr(spec, f.name) for f in dataclasses.fields(spec)]
    else:
        values = list(getattr(spec, "__dict__", {}).values())
    named = set()
    for v in values:
        named.update(_names_in(v, lookup))
    return [c for c in present if c in named]


def _cell_bytes(dtype: Any) -> int:
    return int(dtype.itemsize) if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM" else OBJECT_CELL_BYTES


def estimate_bytes(frame: Any, columns: Iterable[Any], n_rows: int) -> int:
    """Estimated memory of ``columns`` in memory: rows x (bytes of the dtype, or
    :data:`OBJECT_CELL_BYTES` for text and other objects)."""
    return n_rows * sum(_cell_bytes(frame[c].dtype) for c in columns)


def collect_columns(frame: Any, columns: list[Any], *, n_rows: int, max_bytes: int,
                    already: int = 0) -> pd.DataFrame:
    """``frame[columns]`` as a pandas DataFrame with a fresh RangeIndex, if it fits under ``max_bytes``.

    The size is estimated before anything is read (:func:`estimate_bytes`), plus the estimate
    ``already`` of the columns collected earlier.

    Raises
    ------
    CollectTooLargeError
        The estimate exceeds ``max_bytes``; the message names the columns, the rows and the size.
    """
    need = already + estimate_bytes(frame, columns, n_rows)
    if need > max_bytes:
        shown = list(columns)[:8]
        raise CollectTooLargeError(
            f"the test needs the rows of column(s) {shown!r}{' ...' if len(columns) > 8 else ''}: {n_rows:,} rows, "
            f"about {need / 2**20:,.1f} MiB in memory with the columns already collected, above `max_collect_bytes` "
            f"= {max_bytes / 2**20:,.1f} MiB. Raise it (Analysis(..., max_collect_bytes=...)) if the machine has the "
            "memory, or test on fewer columns.")
    out = frame[list(columns)]
    if is_dask_frame(out):
        out = out.compute()
    return out.reset_index(drop=True)
