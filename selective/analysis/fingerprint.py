"""The data fingerprint of an audit record: SHA-256 of a frame's values, in bounded memory.

Version 3 (audit version 3) hashes each column's stream of values on its own and then the
column digests, so that it can be computed in one pass over the rows in any chunks: over the
partitions of a Dask DataFrame, in order, as well as over an in-memory frame. A pandas frame
and a Dask frame of the same values, column names and dtypes give the same fingerprint,
whatever the partitions. Version 2 (one stream, column after column) is kept to verify older
audits of in-memory data.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from .sources import open_data

__all__ = ["data_fingerprint", "data_fingerprint_v2", "FINGERPRINT_VERSION"]

FINGERPRINT_VERSION = 3
_FINGERPRINT_TAG = b"selective.data-fingerprint.v3\x00"
_FINGERPRINT_TAG_V2 = b"selective.data-fingerprint.v2\x00"
_WINDOW = 4  # Dask partitions held at a time by the driver while hashing
_CHUNK_BYTES = 1 << 20  # about 1 MiB of values at a time: memory independent of the data size
_END = b"\xff"  # ends every cell of a non-numeric column: UTF-8 and the ASCII payloads never hold it


def _put(h, payload: bytes) -> None:
    """Length-prefixed bytes, so that no two sequences of values give the same stream."""
    h.update(struct.pack("<Q", len(payload)))
    h.update(payload)


def _value_bytes(v: Any) -> bytes:
    """One cell of a non-numeric column, tagged by its type (exact for every type listed); the
    payload never holds the byte 0xFF, which ends each cell in the stream."""
    if isinstance(v, str):
        return b"s" + v.encode("utf-8", "surrogatepass")
    if v is None or v is pd.NA or v is pd.NaT:
        return b"n"
    if isinstance(v, (bool, np.bool_)):
        return b"b1" if v else b"b0"
    if isinstance(v, (int, np.integer)):
        return b"i" + format(int(v), "x").encode()  # hexadecimal: exact, no limit on the digits
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return b"n" if math.isnan(f) else b"f" + f.hex().encode()
    if isinstance(v, bytes):
        return b"y" + v.hex().encode()
    return b"o" + type(v).__name__.encode() + b":" + repr(v).encode("utf-8", "surrogatepass")


def _cells_bytes(cells: np.ndarray) -> bytes:
    """The stream of a chunk of cells: each cell's bytes then 0xFF. The same stream whatever the
    chunking; chunks of text only take a faster path to it."""
    if all(type(x) is str for x in cells):
        return b"s" + b"\xffs".join([x.encode("utf-8", "surrogatepass") for x in cells]) + _END if len(cells) else b""
    return b"".join([_value_bytes(x) + _END for x in cells])


def _numeric_kind(dtype: Any) -> str | None:
    """The canonical little-endian dtype a numpy column is hashed as, or None (cell by cell)."""
    if not isinstance(dtype, np.dtype):
        return None
    if dtype.kind == "b":
        return "|u1"
    if dtype.kind == "i":
        return "<i8"
    if dtype.kind == "u":
        return "<u8"
    if dtype.kind == "f" and dtype.itemsize <= 8:
        return "<f8"
    if dtype.kind == "c" and dtype.itemsize <= 16:
        return "<c16"
    if dtype.kind in "mM":
        return dtype.newbyteorder("<").str  # the unit is part of the dtype string
    return None


def _column_chunks(col: pd.Series, kind: str | None, chunk_bytes: int) -> Iterator[bytes | memoryview]:
    """The canonical stream of one column (of one chunk of rows), in pieces of about ``chunk_bytes``."""
    n_rows = len(col)
    if kind is not None:
        values = col.to_numpy(copy=False)
        step = max(1, chunk_bytes // 16)
        for a in range(0, n_rows, step):
            chunk = np.array(values[a:a + step], dtype=kind, copy=True)
            if chunk.dtype.kind in "fc":
                chunk[np.isnan(chunk)] = np.nan  # one NaN whatever its payload
            yield memoryview(chunk).cast("B")
    else:
        array = col.array
        step = max(1, chunk_bytes // 64)
        for a in range(0, n_rows, step):
            yield _cells_bytes(np.asarray(array[a:a + step], dtype=object))


def _kinds(dtypes: pd.Series) -> list[str | None]:
    return [_numeric_kind(t) for t in dtypes]


def _frames(data: Any) -> Iterator[pd.DataFrame]:
    """The rows of ``data`` in order: the frame itself, or a Dask frame's partitions, a few at a time."""
    if isinstance(data, pd.DataFrame):
        yield data
        return
    import dask

    parts = data.to_delayed()
    for a in range(0, len(parts), _WINDOW):
        yield from dask.compute(*parts[a:a + _WINDOW])


def data_fingerprint(data: Any, *, chunk_bytes: int = _CHUNK_BYTES) -> str:
    """SHA-256 (hex) of the values of ``data``, their column names and kinds, in order (version 3).

    Each column's values are hashed as one stream (SHA-256), in chunks of rows of about
    ``chunk_bytes`` bytes, and the fingerprint is the SHA-256 of the number of rows and
    columns and, column by column, its name, its kind and its stream's digest. Numeric columns
    are hashed as their exact little-endian values (integers as 64-bit, floats as doubles with
    every NaN made the same); other columns cell by cell, each value tagged by its type
    (strings as UTF-8, integers in hexadecimal, floats exactly, missing values as one tag) and
    ended by a byte no value uses. The index is not part of it.

    Parameters
    ----------
    data : pandas.DataFrame, dask.dataframe.DataFrame or path
        A Dask frame (or a Parquet / CSV path, read lazily) is computed partition by partition
        in order, a few partitions at a time, on the current scheduler; this machine hashes
        them, so the memory used is that of a few partitions and one hash state per column,
        whatever the number of rows.
    chunk_bytes : int
        Size of the pieces hashed at a time (the result does not depend on it).

    Notes
    -----
    The same values, column names and order, dtypes and row order give the same fingerprint
    on every platform, in memory or on Dask, whatever the chunks or partitions; any change of
    a value, even by one ulp, changes it. The hash is SHA-256 over unambiguous streams (each
    column's stream is self-delimiting given the number of rows and its kind), so two
    different frames collide only if SHA-256 does. A column read with another dtype (e.g. an
    integer column read as floats) is a different column.
    """
    data = open_data(data)
    columns = list(data.columns)
    kinds = _kinds(data.dtypes)
    hashers = [hashlib.sha256() for _ in columns]
    n_rows = 0
    for frame in _frames(data):
        if list(frame.columns) != columns:  # pragma: no cover - Dask keeps the schema of its partitions
            raise ValueError("a partition of `data` has other columns than the frame.")
        n_rows += len(frame)
        for j, h in enumerate(hashers):
            for piece in _column_chunks(frame.iloc[:, j], kinds[j], chunk_bytes):
                h.update(piece)
    out = hashlib.sha256(_FINGERPRINT_TAG)
    out.update(struct.pack("<QQ", n_rows, len(columns)))
    for name, kind, h in zip(columns, kinds, hashers, strict=True):
        _put(out, _value_bytes(name))
        _put(out, (kind or "cells").encode())
        out.update(h.digest())
    return out.hexdigest()


def data_fingerprint_v2(data: pd.DataFrame, *, chunk_bytes: int = _CHUNK_BYTES) -> str:
    """The version 2 fingerprint (audit version 2), for verifying older audits of in-memory data.

    One SHA-256 stream over the columns one after the other (name, kind, values as in
    :func:`data_fingerprint`). A column's stream must end before the next begins, so it
    cannot be computed in one pass over partitions: Dask data are refused.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame for a version 2 fingerprint; got {type(data).__name__}. "
                        "Version 2 audits cannot be verified on Dask data: re-run `selective analyze`.")
    n_rows, n_cols = data.shape
    h = hashlib.sha256(_FINGERPRINT_TAG_V2)
    h.update(struct.pack("<QQ", n_rows, n_cols))
    for j in range(n_cols):
        col = data.iloc[:, j]
        _put(h, _value_bytes(data.columns[j]))
        kind = _numeric_kind(col.dtype)
        _put(h, (kind or "cells").encode())
        for piece in _column_chunks(col, kind, chunk_bytes):
            h.update(piece)
    return h.hexdigest()
