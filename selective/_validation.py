"""Argument checks shared by the whole package.

Every check raises an error that names the argument, shows the value it got and says what is
allowed, e.g. ``ValueError: `beta` must be a real number in (0, 1); got 1.5.``  Validation uses
``raise``, never ``assert``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "check_real",
    "check_in_interval",
    "check_positive",
    "check_probability",
    "check_int",
    "check_choice",
    "check_rng",
    "check_pvalues",
]


def _is_real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


def check_real(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float; refuse booleans, non-numbers and NaN (and infinities)."""
    allowed = "a real number" if allow_inf else "a finite real number"
    if not _is_real(value):
        raise TypeError(f"`{name}` must be {allowed}; got {value!r} ({type(value).__name__}).")
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ValueError(f"`{name}` must be {allowed}; got {value!r}.")
    return x


def check_in_interval(
    name: str, value: Any, *, low: float, high: float, closed: str = "both"
) -> float:
    """Return ``value`` as a float after checking that it lies in the stated interval.

    ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``.
    """
    if closed not in ("both", "left", "right", "neither"):
        raise ValueError(f"`closed` must be 'both', 'left', 'right' or 'neither'; got {closed!r}.")
    lo = "[" if closed in ("both", "left") else "("
    hi = "]" if closed in ("both", "right") else ")"
    allowed = f"a real number in {lo}{low:g}, {high:g}{hi}"
    if not _is_real(value):
        raise TypeError(f"`{name}` must be {allowed}; got {value!r} ({type(value).__name__}).")
    x = float(value)
    ok_low = x >= low if lo == "[" else x > low
    ok_high = x <= high if hi == "]" else x < high
    if not (ok_low and ok_high):  # NaN fails both comparisons and lands here
        raise ValueError(f"`{name}` must be {allowed}; got {value!r}.")
    return x


def check_positive(name: str, value: Any, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking that it is > 0 (or >= 0)."""
    if allow_inf:
        closed = "left" if allow_zero else "neither"
        return check_in_interval(name, value, low=0.0, high=math.inf, closed=closed)
    return _check_finite_positive(name, value, allow_zero)


def _check_finite_positive(name: str, value: Any, allow_zero: bool) -> float:
    word = "non-negative" if allow_zero else "positive"
    allowed = f"a finite {word} real number"
    if not _is_real(value):
        raise TypeError(f"`{name}` must be {allowed}; got {value!r} ({type(value).__name__}).")
    x = float(value)
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"`{name}` must be {allowed}; got {value!r}.")
    return x


def check_probability(name: str, value: Any, *, closed: str = "both") -> float:
    """A probability in [0, 1] (or the open / half-open version given by ``closed``)."""
    return check_in_interval(name, value, low=0.0, high=1.0, closed=closed)


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as a Python int (any size) within ``[low, high]``."""
    if low is not None and high is not None:
        allowed = f"an integer in [{low}, {high}]"
    elif low is not None:
        allowed = f"an integer >= {low}"
    elif high is not None:
        allowed = f"an integer <= {high}"
    else:
        allowed = "an integer"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be {allowed}; got {value!r} ({type(value).__name__}).")
    i = int(value)
    if (low is not None and i < low) or (high is not None and i > high):
        raise ValueError(f"`{name}` must be {allowed}; got {value!r}.")
    return i


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` must be one of ``choices``."""
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be one of {listed}; got {value!r}.")
    return value


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Turn ``rng`` (a Generator, a seed, a SeedSequence or None) into a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, bool):
        raise TypeError(f"`{name}` must be a numpy Generator, a non-negative integer seed or None; got {rng!r}.")
    if rng is None or isinstance(rng, (np.random.SeedSequence, numbers.Integral)):
        if isinstance(rng, numbers.Integral) and rng < 0:
            raise ValueError(f"`{name}` must be a numpy Generator, a non-negative integer seed or None; got {rng!r}.")
        return np.random.default_rng(rng)
    raise TypeError(
        f"`{name}` must be a numpy Generator, a non-negative integer seed or None; "
        f"got {rng!r} ({type(rng).__name__})."
    )


def check_pvalues(name: str, value: Any) -> np.ndarray:
    """Return a float array of p-values, each in [0, 1]; NaN and other values are refused."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a p-value or an array of p-values in [0, 1]; got {value!r}.") from None
    if arr.size and (np.isnan(arr).any() or (arr < 0).any() or (arr > 1).any()):
        bad = float(arr[np.isnan(arr) | (arr < 0) | (arr > 1)].ravel()[0])
        raise ValueError(f"`{name}` must hold p-values in [0, 1]; got {bad!r}.")
    return arr
