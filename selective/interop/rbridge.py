"""Bridge to R through rpy2: the one module that touches rpy2.

rpy2 (3.5.x, in the ``r`` extra: ``pip install 'selective[r]'``) is imported lazily, on the
first call that needs R, so ``import selective`` works without R. Nothing else in the package
imports rpy2.

- :func:`r_available` / :func:`why_r_unavailable` / :func:`require_r` say whether R, rpy2 and
  some R packages can be used, and if not, what is missing and how to install it;
- :func:`to_r` / :func:`to_r_dataframe` turn Python values and pandas frames into R objects,
  :func:`to_python` turns R results back (named lists to dicts, matrices to frames, ...);
- :func:`call_r` calls one R function, :func:`r_eval` evaluates R code with Python data bound
  to names.

R finds packages in ``.libPaths()``; directories named in the environment variables
``R_LIBS_USER`` and ``R_LIBS`` (``:``-separated; ``;`` on Windows) are put in front of it
before every call, even when they were set or created after R started.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "RNotAvailableError",
    "r_available",
    "why_r_unavailable",
    "require_r",
    "to_r",
    "to_r_dataframe",
    "to_python",
    "call_r",
    "r_eval",
]

INSTALL_R = "install R (Debian/Ubuntu: apt-get install r-base-core; elsewhere https://cran.r-project.org)"
INSTALL_RPY2 = "pip install 'selective[r]' (rpy2>=3.5,<3.6)"

_INT32_MAX = 2**31 - 1
_state: dict[str, Any] = {}  # "robjects": the module once R started; "error": why it could not


class RNotAvailableError(ImportError):
    """R, rpy2 or a needed R package is missing; the message says what and how to install it."""


# ---------------------------------------------------------------- availability


def _robjects():
    """Import ``rpy2.robjects`` (which starts the embedded R) once; raise RNotAvailableError."""
    if "robjects" in _state:
        return _state["robjects"]
    if "error" in _state:
        raise RNotAvailableError(_state["error"])
    try:
        import rpy2  # noqa: F401
    except ImportError:
        _state["error"] = f"rpy2 is not installed: {INSTALL_RPY2}; rpy2 needs R itself: {INSTALL_R}."
        raise RNotAvailableError(_state["error"]) from None
    r_home = _r_home()
    if r_home is None or not os.path.isdir(os.path.join(r_home, "library", "base")):
        # Checked before starting R: an embedded R that cannot find its base package exits the
        # whole process instead of raising.
        found = "R was not found" if r_home is None else f"R_HOME={r_home!r} holds no R installation"
        _state["error"] = (
            f"{found}, so rpy2 cannot start it. To fix: {INSTALL_R}; check that `R RHOME` works "
            f"(or set R_HOME to its output); then, if needed, {INSTALL_RPY2}."
        )
        raise RNotAvailableError(_state["error"])
    saved_ld_path = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as robjects
    except Exception as err:  # rpy2 raises several types when R is absent or broken
        version = getattr(__import__("rpy2"), "__version__", "?")
        _state["error"] = (
            f"rpy2 {version} is installed but could not start R ({type(err).__name__}: {err}). "
            f"To fix: {INSTALL_R}; check that `R RHOME` works (or set R_HOME); then reinstall rpy2: "
            f"{INSTALL_RPY2}."
        )
        raise RNotAvailableError(_state["error"]) from err
    finally:
        # Starting R writes R's library path (with the system's lib directory) into
        # LD_LIBRARY_PATH. R has loaded its libraries by now; left in place, the variable makes
        # every child process (joblib and Dask workers, subprocesses) load the system's shared
        # libraries instead of this interpreter's, which breaks them.
        if saved_ld_path is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved_ld_path
    _state["robjects"] = robjects
    return robjects


def _r_home() -> str | None:
    """R's home directory as rpy2 will find it (R_HOME, else the output of `R RHOME`)."""
    try:
        from rpy2 import situation

        home = situation.get_r_home()
    except Exception:  # rpy2 may raise when neither R_HOME nor an `R` command exists
        return None
    return str(home) if home else None


def _library_dirs_from_env() -> list[str]:
    dirs = []
    for variable in ("R_LIBS_USER", "R_LIBS"):
        for entry in os.environ.get(variable, "").split(os.pathsep):
            entry = os.path.expanduser(entry.strip())
            if entry and "%" not in entry and os.path.isdir(entry):  # R itself expands %V, %p, ...
                dirs.append(os.path.abspath(entry))
    return dirs


def _sync_library_paths(ro) -> None:
    """Put the directories of R_LIBS_USER / R_LIBS in front of ``.libPaths()``."""
    wanted = _library_dirs_from_env()
    if not wanted:
        return
    current = [os.path.abspath(p) for p in ro.r(".libPaths()")]
    missing = [d for d in wanted if d not in current]
    if missing:
        ro.r[".libPaths"](ro.StrVector(missing + current))


def _missing_packages(ro, packages: Sequence[str]) -> list[str]:
    _sync_library_paths(ro)
    has = ro.r("function(p) requireNamespace(p, quietly = TRUE)")
    return [p for p in packages if not bool(has(p)[0])]


def _check_packages_arg(packages: Any) -> tuple[str, ...]:
    if isinstance(packages, str):
        packages = (packages,)
    packages = tuple(packages)
    for p in packages:
        if not isinstance(p, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9.]*", p):
            raise ValueError(f"`packages` must hold R package names; got {p!r}.")
    return packages


def why_r_unavailable(packages: Iterable[str] | str = ()) -> str | None:
    """None when R, rpy2 and the R ``packages`` can be used; otherwise what is missing and how to fix it.

    The message suits ``pytest.skip``. When R or rpy2 is what is missing, it also says how to
    install the R ``packages`` once R runs, so that one message covers every step.
    """
    packages = _check_packages_arg(packages)
    try:
        ro = _robjects()
    except RNotAvailableError as err:
        if not packages:
            return str(err)
        listed = ", ".join(f"'{p}'" for p in packages)
        return f"{err} Then install the R package(s) {listed}: in R, install.packages(c({listed}))."
    missing = _missing_packages(ro, packages)
    if not missing:
        return None
    listed = ", ".join(f"'{p}'" for p in missing)
    paths = list(ro.r(".libPaths()"))
    user_lib = os.environ.get("R_LIBS_USER")
    where = (
        f" (with R_LIBS_USER={user_lib!r} they go there; create the directory first)"
        if user_lib
        else " (or set R_LIBS_USER to a writable directory and install there)"
    )
    return (
        f"R package(s) {listed} not installed in R's library paths {paths!r}. "
        f"In R: install.packages(c({listed})){where}."
    )


def r_available(packages: Iterable[str] | str = ()) -> bool:
    """Whether R, rpy2 and the R ``packages`` can be used (see :func:`why_r_unavailable`)."""
    return why_r_unavailable(packages) is None


def require_r(packages: Iterable[str] | str = ()) -> None:
    """Raise :class:`RNotAvailableError`, saying what is missing and how to install it, unless
    R, rpy2 and the R ``packages`` can be used."""
    reason = why_r_unavailable(packages)
    if reason is not None:
        raise RNotAvailableError(reason)


# ---------------------------------------------------------------- Python -> R


def _na_mask(values: Any) -> np.ndarray:
    return np.asarray(pd.isna(values), dtype=bool)


def _series_to_r(series: pd.Series, name: Any):
    ro = _robjects()
    dtype = series.dtype
    mask = _na_mask(series)
    if isinstance(dtype, pd.CategoricalDtype):
        levels = [str(c) for c in dtype.categories]
        pairs = zip(series.astype(object), mask, strict=True)
        values = ro.StrVector([ro.NA_Character if m else str(v) for v, m in pairs])
        return ro.FactorVector(values, levels=ro.StrVector(levels), ordered=bool(dtype.ordered))
    if pd.api.types.is_bool_dtype(dtype):
        pairs = zip(series.astype(object), mask, strict=True)
        return ro.BoolVector([ro.NA_Logical if m else bool(v) for v, m in pairs])
    if pd.api.types.is_integer_dtype(dtype):
        filled = series.to_numpy(dtype=float, na_value=np.nan)
        if np.all(np.abs(filled[~mask]) <= _INT32_MAX):
            return ro.IntVector([ro.NA_Integer if m else int(v) for v, m in zip(filled, mask, strict=True)])
        return ro.FloatVector([ro.NA_Real if m else float(v) for v, m in zip(filled, mask, strict=True)])
    if pd.api.types.is_float_dtype(dtype):
        filled = series.to_numpy(dtype=float, na_value=np.nan)
        return ro.FloatVector([ro.NA_Real if m else float(v) for v, m in zip(filled, mask, strict=True)])
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        values = series.astype(object).to_numpy()
        if all(m or isinstance(v, str) for v, m in zip(values, mask, strict=True)):
            return ro.StrVector([ro.NA_Character if m else v for v, m in zip(values, mask, strict=True)])
    raise TypeError(
        f"Cannot convert column {name!r} (dtype {dtype}) to R: only numbers, booleans, strings and "
        "categoricals convert."
    )


def to_r_dataframe(frame: pd.DataFrame):
    """An R ``data.frame`` with the columns of ``frame`` (names kept as they are, index dropped).

    Floats become ``numeric``, integers ``integer`` (``numeric`` beyond 32 bits), booleans
    ``logical``, strings ``character`` and categoricals ``factor`` (same levels and order);
    missing values (NaN, None, pd.NA) become ``NA``.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    ro = _robjects()
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"`frame` has repeated column names {names!r}; an R data.frame needs unique names.")
    columns = ro.ListVector([(name, _series_to_r(frame[c], c)) for name, c in zip(names, frame.columns, strict=True)])
    as_frame = ro.r("function(columns, n) structure(columns, row.names = c(NA_integer_, -n), class = 'data.frame')")
    return as_frame(columns, ro.IntVector([len(frame)]))


def to_r(value: Any):
    """An R object for a Python value.

    DataFrame -> data.frame (:func:`to_r_dataframe`); Series -> vector; 1-D arrays, lists and
    tuples of numbers, booleans or strings -> vectors; 2-D arrays -> matrices; dicts -> named
    lists; scalars -> length-1 vectors; None -> NULL; R objects pass through.
    """
    ro = _robjects()
    import rpy2.rinterface as rinterface

    if isinstance(value, rinterface.Sexp):
        return value
    if value is None:
        return ro.NULL
    if isinstance(value, pd.DataFrame):
        return to_r_dataframe(value)
    if isinstance(value, pd.Series):
        return _series_to_r(value, value.name)
    if isinstance(value, Mapping):
        return ro.ListVector([(str(k), to_r(v)) for k, v in value.items()])
    if isinstance(value, (bool, np.bool_)):
        return ro.BoolVector([bool(value)])
    if isinstance(value, numbers.Integral) and abs(int(value)) <= _INT32_MAX:
        return ro.IntVector([int(value)])
    if isinstance(value, numbers.Real):
        return ro.FloatVector([float(value)])
    if isinstance(value, str):
        return ro.StrVector([value])
    if isinstance(value, (list, tuple, np.ndarray)):
        array = np.asarray(value)
        if array.ndim == 2:
            flat = to_r(array.ravel(order="F"))
            return ro.r["matrix"](flat, nrow=array.shape[0], ncol=array.shape[1])
        if array.ndim == 1:
            return _series_to_r(pd.Series(array), "value")
        raise TypeError(f"Cannot convert a {array.ndim}-dimensional array to R; only 1-D and 2-D convert.")
    raise TypeError(f"Cannot convert {value!r} ({type(value).__name__}) to R.")


# ---------------------------------------------------------------- R -> Python


def _vector_values(obj, ro) -> np.ndarray:
    values = list(obj)
    if isinstance(obj, ro.vectors.BoolVector):
        if any(v is ro.NA_Logical for v in values):
            return np.array([None if v is ro.NA_Logical else bool(v) for v in values], dtype=object)
        return np.array([bool(v) for v in values], dtype=bool)
    if isinstance(obj, ro.vectors.IntVector):
        if any(v is ro.NA_Integer for v in values):
            return np.array([math.nan if v is ro.NA_Integer else float(v) for v in values], dtype=float)
        return np.array([int(v) for v in values], dtype=np.int64)
    if isinstance(obj, ro.vectors.FloatVector):
        return np.array(values, dtype=float)
    if isinstance(obj, ro.vectors.StrVector):
        return np.array([None if v is ro.NA_Character else str(v) for v in values], dtype=object)
    return np.array(values, dtype=object)


def _names(obj, ro) -> list[str] | None:
    names = obj.names
    if names is ro.NULL or names is None:
        return None
    return [str(n) for n in names]


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _factor_to_python(obj, ro) -> pd.Categorical:
    levels = [str(v) for v in ro.r["levels"](obj)]  # FactorVector.levels warns in rpy2 3.5
    codes = [-1 if v is ro.NA_Integer else int(v) - 1 for v in list(ro.vectors.IntVector(obj))]
    return pd.Categorical.from_codes(codes, categories=levels, ordered=bool(ro.r["is.ordered"](obj)[0]))


def to_python(obj: Any) -> Any:
    """A Python value for an R object.

    NULL -> None; data.frame -> DataFrame (R row names kept as the index when they are not
    1..n); matrix -> DataFrame with the dimnames (ndarray without); factor -> Categorical;
    named list -> dict, unnamed list -> list; a length-1 vector -> a Python scalar (NA -> NaN
    or None); a longer vector -> ndarray, or Series when named. Anything else (functions,
    environments, formulas) comes back unchanged.
    """
    ro = _robjects()
    vectors = ro.vectors
    if obj is ro.NULL:
        return None
    if isinstance(obj, vectors.DataFrame):
        columns = {str(name): _column_to_python(col, ro) for name, col in zip(obj.colnames, obj, strict=True)}
        frame = pd.DataFrame(columns)
        rownames = [str(r) for r in obj.rownames]
        if rownames != [str(i) for i in range(1, len(rownames) + 1)]:
            frame.index = pd.Index(rownames)
        return frame
    if isinstance(obj, vectors.FactorVector):
        return _factor_to_python(obj, ro)
    if isinstance(obj, vectors.ListVector):
        names = _names(obj, ro)
        items = [to_python(v) for v in obj]
        if names is not None and all(names):
            return dict(zip(names, items, strict=True))
        return items
    if isinstance(obj, (vectors.BoolVector, vectors.IntVector, vectors.FloatVector, vectors.StrVector)):
        dim = obj.do_slot("dim") if "dim" in list(obj.list_attrs()) else None
        values = _vector_values(obj, ro)
        if dim is not None and len(dim) == 2:
            matrix = values.reshape((int(dim[0]), int(dim[1])), order="F")
            dimnames = obj.do_slot("dimnames") if "dimnames" in list(obj.list_attrs()) else None
            if dimnames is None:
                return matrix
            rows, cols = (None if d is ro.NULL else [str(x) for x in d] for d in dimnames)
            return pd.DataFrame(matrix, index=rows, columns=cols)
        names = _names(obj, ro)
        if len(values) == 1:
            value = _scalar(values[0])
            return math.nan if value is None and isinstance(obj, vectors.FloatVector) else value
        if names is not None:
            return pd.Series(values, index=names)
        return values
    return obj


def _column_to_python(col, ro) -> Any:
    if isinstance(col, ro.vectors.FactorVector):
        return _factor_to_python(col, ro)
    return _vector_values(col, ro)


# ---------------------------------------------------------------- calling R

_FUNCTION_NAME = re.compile(r"(?:[A-Za-z][A-Za-z0-9.]*:::?)?(?:[A-Za-z.][A-Za-z0-9._]*)")


def call_r(function_name: str, *args: Any, convert: bool = True, **kwargs: Any) -> Any:
    """Call the R function ``function_name`` (e.g. ``"t.test"``, ``"stats::cor.test"``).

    Arguments are converted with :func:`to_r`; R argument names that are not Python names go
    through a dict: ``call_r("t.test", x, y, **{"var.equal": True})``. Returns
    :func:`to_python` of the result, or the R object itself when ``convert=False``. Raises
    :class:`RNotAvailableError` without R; R errors propagate as rpy2's ``RRuntimeError``.
    """
    if not isinstance(function_name, str) or not _FUNCTION_NAME.fullmatch(function_name):
        raise ValueError(
            f"`function_name` must name an R function, like 't.test' or 'stats::lm'; got {function_name!r}."
        )
    ro = _robjects()
    _sync_library_paths(ro)
    function = ro.r(function_name)
    result = function(*[to_r(a) for a in args], **{k: to_r(v) for k, v in kwargs.items()})
    return to_python(result) if convert else result


def r_eval(code: str, *, convert: bool = True, **data: Any) -> Any:
    """Evaluate R ``code`` with each keyword argument bound (via :func:`to_r`) to its name.

    The code runs in a fresh environment whose parent is R's global environment; the value of
    its last expression is returned through :func:`to_python` (or as is, ``convert=False``).
    Example: ``r_eval("coef(summary(lm(y ~ x, d)))", d=frame)``.
    """
    if not isinstance(code, str):
        raise TypeError(f"`code` must be a string of R code; got {type(code).__name__}.")
    ro = _robjects()
    _sync_library_paths(ro)
    env = ro.r("new.env(parent = globalenv())")
    for name, value in data.items():
        env[name] = to_r(value)
    evaluate = ro.r("function(code, env) eval(parse(text = code), envir = env)")
    result = evaluate(ro.StrVector([code]), env)
    return to_python(result) if convert else result
