"""Input checks for the conditional subpackage (errors name argument, value and what is allowed)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

ALTERNATIVES = ("greater", "less", "two-sided")


def check_alternative(value: Any, allowed: tuple[str, ...] = ALTERNATIVES) -> str:
    if value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"`alternative` must be one of {listed}; got {value!r}.")
    return value


def check_choice(name: str, value: Any, allowed: tuple) -> Any:
    if isinstance(value, (list, dict, np.ndarray)) or value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"`{name}` must be one of {listed}; got {value!r}.")
    return value


def check_alpha(alpha: Any, name: str = "alpha") -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"`{name}` must be a real number in (0, 1); got {alpha!r} "
                        f"({type(alpha).__name__}).")
    a = float(alpha)
    if not (0 < a < 1):
        raise ValueError(f"`{name}` must be a real number in (0, 1); got {alpha!r}.")
    return a


def check_positive_real(name: str, value: Any, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    allowed = "a finite positive real number" + (" or None" if allow_none else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be {allowed}; got {value!r} ({type(value).__name__}).")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"`{name}` must be {allowed}; got {value!r}.")
    return v


#: noise scales (sigma, noise_sd) must lie in [1 / SCALE_LIMIT, SCALE_LIMIT]: their squares are formed
SCALE_LIMIT = 1e150


def check_scale(name: str, value: Any, *, allow_none: bool = False) -> float | None:
    """A positive noise scale whose square is a positive finite double (``sigma``, ``noise_sd``)."""
    v = check_positive_real(name, value, allow_none=allow_none)
    if v is not None and not 1.0 / SCALE_LIMIT <= v <= SCALE_LIMIT:
        raise ValueError(f"`{name}` must lie between {1 / SCALE_LIMIT:g} and {SCALE_LIMIT:g} (its square is used; "
                         f"rescale the data otherwise); got {value!r}.")
    return v


def check_nonneg_real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a finite non-negative real number; got {value!r} "
                        f"({type(value).__name__}).")
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"`{name}` must be a finite non-negative real number; got {value!r}.")
    return v


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None,
              allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    rng = (f"an integer in [{low}, {high}]" if low is not None and high is not None else
           f"an integer >= {low}" if low is not None else "an integer")
    if allow_none:
        rng += " or None"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be {rng}; got {value!r} ({type(value).__name__}).")
    i = int(value)
    if (low is not None and i < low) or (high is not None and i > high):
        raise ValueError(f"`{name}` must be {rng}; got {value!r}.")
    return i


def check_vector(name: str, value: Any, *, length: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a 1-d array of real numbers; got {type(value).__name__}.") from None
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be a 1-d array of real numbers; got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"`{name}` must have length {length}; got length {arr.shape[0]}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must contain only finite numbers; got a NaN or infinite entry.")
    return arr


def check_matrix(name: str, value: Any, *, n_rows: int | None = None,
                 n_cols: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a 2-d array of real numbers; got {type(value).__name__}.") from None
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be a 2-d array of real numbers; got shape {arr.shape}.")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"`{name}` must have {n_rows} rows; got {arr.shape[0]}.")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"`{name}` must have {n_cols} columns; got {arr.shape[1]}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must contain only finite numbers; got a NaN or infinite entry.")
    return arr


def design_and_response(X: Any, y: Any, columns: Sequence[str] | None = None,
                        response: str | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Accept ``(X array, y array)`` or ``(DataFrame, response column name[, predictor names])``.

    Returns the design as a float matrix, the response as a float vector and the column names
    (``x1..xp`` for arrays).
    """
    if isinstance(X, pd.DataFrame):
        df = X
        if isinstance(y, str):
            response = y
            y = None
        if y is None:
            if response is None or response not in df.columns:
                raise ValueError(f"`y` must name a column of the data frame when `X` is a DataFrame; "
                                 f"got {response!r}. Columns: {list(df.columns)}.")
            yv = df[response].to_numpy(dtype=float)
            cols = list(columns) if columns is not None else [c for c in df.columns if c != response]
        else:
            yv = y
            cols = list(columns) if columns is not None else list(df.columns)
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"`columns` must name columns of the data frame; got unknown {missing!r}.")
        Xm = df[cols].to_numpy(dtype=float)
        names = [str(c) for c in cols]
    else:
        Xm = X
        yv = y
        names = None
    Xm = check_matrix("X", Xm)
    yv = check_vector("y", yv, length=Xm.shape[0])
    if names is None:
        names = list(columns) if columns is not None else [f"x{j + 1}" for j in range(Xm.shape[1])]
        if len(names) != Xm.shape[1]:
            raise ValueError(f"`columns` must have one name per column of `X` ({Xm.shape[1]}); "
                             f"got {len(names)}.")
    if Xm.shape[0] < 2:
        raise ValueError(f"`X` must have at least 2 rows; got {Xm.shape[0]}.")
    return Xm, yv, names
