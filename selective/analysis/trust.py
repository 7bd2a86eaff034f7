"""Naive p-values that are accurate where the corrections use them (THEORY.md pitfall 9).

A corrected column compares the naive p-value with its threshold gamma, often alpha/N with
N in the hundreds or thousands. A test whose p-value is an asymptotic approximation is
trusted only down to its ``trusted_level``; below it the approximation can be far too small.
For each test and the threshold of the best column (the largest any column uses),
:func:`results_at_level`

1. keeps the result when it is trusted at that threshold;
2. otherwise reruns the spec through ``run_at_level`` (an exact, exact-reference or
   permutation version, when the spec has one) and uses that result;
3. otherwise marks the row so that the columns whose threshold lies below the trusted level
   are withheld with the reason (withholding can only remove rejections, so it keeps every
   column valid whatever decided it).

Tests without the ``trusted_level`` attribute (user-written specs) are taken at their word
(``0``: exact at every level).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from statsmodels.tools.sm_exceptions import PerfectSeparationError

from ..hypotheses._trust_model import VARIANCE_CHECK_MARK, shape_reason

__all__ = ["TrustedResult", "trusted_level", "results_at_level"]


@dataclass(frozen=True)
class TrustedResult:
    """One test's result for the report, and what the report must say about it."""

    result: Any
    replaced: bool = False   # the result of ``run_at_level`` replaced the naive one
    trusted_level: float = 0.0
    note: str = ""
    original: Any = None     # the test's own result when ``replaced`` (its p-value is the naive column's)


def trusted_level(result: Any) -> float:
    """The smallest level at which ``result``'s p-value is trusted (0 when not declared)."""
    level = getattr(result, "trusted_level", 0.0)
    try:
        level = float(level)
    except (TypeError, ValueError):
        return 0.0
    return level if np.isfinite(level) and level > 0 else 0.0


def _clause(err: Exception) -> str:
    """An error message as one clause of a note (notes join their parts with "; ")."""
    return " ".join(str(err).replace("; ", ", ").split())[:160]


def _variance_check(result: Any) -> str:
    """The note of a failed variance check that the test's method ends with ("" when none), as one
    clause (docs/THEORY.md 7.1: the model's variance along the tested column)."""
    method = str(getattr(result, "method", ""))
    at = method.find(VARIANCE_CHECK_MARK)
    return " ".join(method[at:].replace("; ", ", ").split()) if at >= 0 else ""


def _method(result: Any) -> str:
    """The kind of a result's p-value as the report's notes say it: "exact_under_model" (t, F and OLS
    p-values, exact under normal errors) is "normal-theory"."""
    method = str(getattr(result, "pvalue_method", "asymptotic"))
    return "normal-theory" if method == "exact_under_model" else method.replace("_", " ")


def results_at_level(tests: Sequence[tuple[Any, Any]], data: Any, level: float, *,
                     seed: np.random.SeedSequence, cache: dict | None = None) -> list[TrustedResult]:
    """Each test's result, trusted at ``level`` when possible (see the module docstring).

    Parameters
    ----------
    tests : sequence of (spec, result)
        The tests in report order.
    data : pandas.DataFrame
        The analysis' data (the resampling versions rerun the spec on it).
    level : float
        The threshold the best column compares the p-values with.
    seed : numpy.random.SeedSequence
        Randomness for resampling versions: test ``i`` uses ``seed.spawn``'s ``i``-th child, so
        the same analysis gives the same table at every call.
    cache : dict, optional
        Results of earlier calls, keyed by (test index, level).
    """
    cache = {} if cache is None else cache
    children = seed.spawn(len(tests)) if len(tests) else []
    out = []
    for i, (spec, result) in enumerate(tests):
        t = trusted_level(result)
        if t <= level:
            out.append(TrustedResult(result=result, trusted_level=t))
            continue
        runner = getattr(spec, "run_at_level", None)
        if runner is not None and level > 0:  # a threshold that underflows to 0 rejects nothing anyway
            key = (i, float(level))
            if key not in cache:
                try:
                    cache[key] = runner(data, level, rng=np.random.default_rng(children[i]))
                except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError,
                        PerfectSeparationError) as err:
                    # a version that cannot be computed on these data is no version: the cell is withheld
                    # (programming errors such as TypeError or KeyError are not caught)
                    cache[key] = err
            alt = cache[key]
            if isinstance(alt, Exception):
                note = (f"{_method(result)} p-value trusted down to {t:.2g} only, and its version for smaller "
                        f"levels failed on these data ({_clause(alt)}): corrected p-values that compare it with a "
                        "smaller threshold are withheld")
                out.append(TrustedResult(result=result, trusted_level=t, note=note))
                continue
            t_alt = trusted_level(alt)
            if t_alt <= level:
                check = _variance_check(result)  # why the test's own p-value is not trusted, when a check says so
                was = "trusted at no level below 1" if t >= 1 else f"trusted down to {t:.2g} only"
                note = (f"{_method(alt)} p-value used at the corrected level (the {_method(result)} p-value is "
                        f"{was})" + (f"; {check}" if check else ""))
                out.append(TrustedResult(result=alt, replaced=True, trusted_level=t_alt, note=note, original=result))
                continue
        hint = (getattr(spec, "version_hint", None) or _variance_check(result)
                or shape_reason(getattr(result, "method", "")))
        trust = "trusted at no level below 1" if t >= 1 else f"trusted down to {t:.2g} only"
        note = (f"{_method(result)} p-value {trust}{f' ({hint})' if hint else ''}: corrected "
                "p-values that compare it with a smaller threshold are withheld")
        out.append(TrustedResult(result=result, trusted_level=t, note=note))
    return out
