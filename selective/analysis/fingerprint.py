"""The data fingerprint of an audit record: SHA-256 of a frame's values, in bounded memory."""

from __future__ import annotations

import hashlib
import math
import struct
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["data_fingerprint"]

_FINGERPRINT_TAG = b"selective.data-fingerprint.v2\x00"
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


def data_fingerprint(data: pd.DataFrame, *, chunk_bytes: int = _CHUNK_BYTES) -> str:
    """SHA-256 (hex) of the values of ``data``, their column names and kinds, in order.

    The frame is hashed column by column, in chunks of rows of about ``chunk_bytes`` bytes, so
    the extra memory does not grow with the data (the result does not depend on the chunks).
    Numeric columns are hashed as their exact little-endian values (integers as 64-bit, floats
    as doubles with every NaN made the same); other columns cell by cell, each value tagged by
    its type (strings as UTF-8, integers in hexadecimal, floats exactly, missing values as one
    tag) and ended by a byte no value uses. The index is not part of it.

    The same values, column names and order, and row order give the same fingerprint on every
    platform; any change of a value, even by one ulp, changes it. The hash is SHA-256 over an
    unambiguous stream, so two different frames collide only if SHA-256 does.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    n_rows, n_cols = data.shape
    h = hashlib.sha256(_FINGERPRINT_TAG)
    h.update(struct.pack("<QQ", n_rows, n_cols))
    for j in range(n_cols):
        col = data.iloc[:, j]
        _put(h, _value_bytes(data.columns[j]))
        kind = _numeric_kind(col.dtype)
        _put(h, (kind or "cells").encode())
        if kind is not None:
            values = col.to_numpy(copy=False)
            step = max(1, chunk_bytes // 16)
            for a in range(0, n_rows, step):
                chunk = np.array(values[a:a + step], dtype=kind, copy=True)
                if chunk.dtype.kind in "fc":
                    chunk[np.isnan(chunk)] = np.nan  # one NaN whatever its payload
                h.update(memoryview(chunk).cast("B"))
        else:
            array = col.array
            step = max(1, chunk_bytes // 64)
            for a in range(0, n_rows, step):
                h.update(_cells_bytes(np.asarray(array[a:a + step], dtype=object)))
    return h.hexdigest()
