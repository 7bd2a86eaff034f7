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
    "exact_fit_problem",
    "magnitude_problem",
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


def exact_fit_problem(X: Any, y: Any) -> str | None:
    """Why least squares of ``y`` on ``X`` leaves a residual of rounding noise only, or None.

    The residual of an exactly fitted outcome (a constant outcome with an intercept) is not 0 in
    floating point but of order eps · cond(X) · |y|, and t statistics computed from it are noise.
    The residual counts as noise when its norm is at most 1000 · eps · max(1, cond(X)) times y's
    (both measured on unit scales, so no square over- or underflows). An outcome varying on a
    tiny scale around a large value is well above that level until about 1e12 times its spread.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    top = float(np.max(np.abs(y))) if y.size else 0.0
    if not top > 0:
        return "the outcome is 0 in every row"
    y = y / top
    cols = np.max(np.abs(X), axis=0)
    X = X / np.where(cols > 0, cols, 1.0)
    sv = np.linalg.svd(X, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv.size and sv[-1] > 0 else math.inf
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    rel = float(np.linalg.norm(resid) / np.linalg.norm(y))
    level = 1e3 * np.finfo(float).eps * max(1.0, cond)
    if rel > level:
        return None
    return (f"its residual is {rel:.1e} of the outcome's size, at or below the rounding level {level:.1e} of this "
            f"design (condition number {cond:.2g}): e.g. a constant outcome, or one that varies only in its last "
            "digits around a large value (subtract that value first)")


def magnitude_problem(X: Any, y: Any, names: Any = None) -> str | None:
    """Why an OLS fit of ``y`` on ``X`` cannot be computed in double precision, or None: a column
    or the outcome so large or small that its squares over- or underflow (statsmodels then
    returns p-values of 1 or NaN, or calls the design rank deficient)."""
    X = np.asarray(X, dtype=float)
    names = list(names) if names is not None else [f"column {j}" for j in range(X.shape[1])]
    for what, values in (("the outcome", np.asarray(y, dtype=float)), *zip(names, X.T, strict=True)):
        top = float(np.max(np.abs(values))) if np.size(values) else 0.0
        if top > 0 and not 1e-150 < top < 1e150:
            return (f"{what if what == 'the outcome' else repr(what)} has largest absolute value {top:.1e} (after "
                    "any weighting), whose square under- or overflows in double precision: rescale it (a t-test "
                    "does not depend on the scale)")
    return None
