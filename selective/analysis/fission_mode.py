r"""Data fission inside an analysis: explore one copy of an outcome, test the other.

``Analysis.fission(column, method=...)`` splits an outcome column into two parts that are
independent under a stated model (:mod:`selective.selectors.fission`: Gaussian fission with a
known sigma, Poisson thinning, binomial thinning of counts of successes with their ``trials``
column, which is split with them: the exploration copy holds the trials given to the exploration,
the confirmation copy the rest, so a logit model of counts, ``"s + I(m - s) ~ x"``, fits either).
From then on the selectors see the *exploration* copy, the tests
the *confirmation* copy, and the report adds a column ``pvalue_fission``: the test's own
p-value, valid as it is (no correction) when the selection could not have seen the data the
test uses.

When that holds (Leiner, Duan, Wasserman and Ramdas 2023, Section 2; Neufeld et al. 2024): the
rows are independent; every tested outcome was split; and every column that a selection step
read unsplit is one the test conditions on (a group label, a regressor, the other variable of
an independence test). Then, given those columns, the confirmation copy is independent of
everything the selection saw, so the selection carries no information about the test's data
and a test valid given its conditioning columns keeps its level. A selection that read an unsplit
outcome or covariate that the test does not condition on could have learnt about the tested
outcome through it (a correlated outcome, a covariate of its mean), and the column is withheld
with that reason. So it is when a step does not declare the columns it reads (a score given
as a plain function, or a recorded interactive step), when the test's outcome cannot be told
from its conditioning columns, and when the p-value is not trusted at the level the column is
read (:mod:`selective.analysis.trust`; shown when trusted at alpha or when the p-value is at or
above its trusted level).

The ledger still records every selection step, so the ledger's columns stay valid beside it
(and are needlessly conservative here).
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..hypotheses import correlation, means, proportions, regression
from ..hypotheses._trust_model import shape_reason
from ..selectors.base import missing_columns
from ..selectors.fission import binomial_thinning, gaussian_fission, poisson_thinning
from .sources import spec_columns

__all__ = ["FISSION_METHODS", "FissionRecord", "split_column", "split_frames", "spec_roles", "fission_cells"]

#: The decompositions an analysis can apply to an outcome column.
FISSION_METHODS = ("gaussian", "poisson", "binomial")
#: the method of a trials column's record: split with its counts, but fixed by its own values
#: (m1 and m - m1 are functions of m), so the tests condition on it instead of testing it
TRIALS_METHOD = "binomial_trials"


@dataclass(frozen=True)
class FissionRecord:
    """One split outcome: which column, how, and what the split assumes."""

    column: Any
    method: str
    parameter: float
    assumption: str


def _no_missing(values: pd.Series, column: Any) -> None:
    if values.isna().any():
        raise ValueError(f"column {column!r} has {int(values.isna().sum())} missing value(s); fission needs every "
                         "value (drop or impute the rows first).")


def split_column(values: pd.Series, column: Any, method: str, *, sigma: Any, tau: float, epsilon: float,
                 rng: np.random.Generator, trials: pd.Series | None = None) -> tuple[Any, FissionRecord]:
    """The split of ``values`` (a :class:`~selective.selectors.fission.Fission`) and its record."""
    check_choice("method", method, FISSION_METHODS)
    _no_missing(values, column)
    if sigma is not None and method != "gaussian":
        raise ValueError(f"`sigma` applies to method='gaussian' only; got sigma={sigma!r} with method={method!r}.")
    if method == "binomial" and trials is None:
        raise ValueError("method='binomial' needs `trials`, the name of the column of numbers of trials (at least 2 "
                         "in every row); got trials=None.")
    if method != "binomial" and trials is not None:
        raise ValueError(f"`trials` applies to method='binomial' only; got trials={trials.name!r} with "
                         f"method={method!r}.")
    if method == "gaussian":
        if sigma is None:
            raise ValueError("`sigma` is required for method='gaussian': the known noise standard deviation (from the "
                             "instrument or independent data; estimating it on these data makes the parts dependent).")
        parts = gaussian_fission(values.to_numpy(), sigma=sigma, tau=tau, rng=rng)
    elif method == "poisson":
        parts = poisson_thinning(values.to_numpy(), epsilon=epsilon, rng=rng)
    else:
        _no_missing(trials, trials.name)
        try:
            parts = binomial_thinning(values.to_numpy(), trials.to_numpy(), epsilon=epsilon, rng=rng)
        except (TypeError, ValueError) as exc:  # name the columns, not the function's arguments
            message = str(exc).replace("`successes`", f"column {column!r} (the counts)").replace(
                "`trials`", f"column {trials.name!r} (the trials)")
            raise type(exc)(message) from None
    record = FissionRecord(column=column, method=parts.method, parameter=parts.parameter, assumption=parts.assumption)
    return parts, record


def split_frames(data: pd.DataFrame, explore: pd.DataFrame | None, confirm: pd.DataFrame | None, split: dict,
                 columns: Any, **kwargs: Any) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The analysis' exploration and confirmation frames with ``columns`` (a label or a list of
    labels) split, and the records by column (``kwargs``: those of :func:`split_column`). A
    missing or already split column is refused before anything is drawn."""
    columns = list(columns) if isinstance(columns, (list, tuple)) else [columns]
    trials = kwargs.pop("trials", None)
    if isinstance(trials, (list, tuple, set, dict, pd.Series, pd.Index, np.ndarray)):
        raise TypeError(f"`trials` must be the label of one column of numbers of trials; got {trials!r}.")
    problem = missing_columns(data, {"column": tuple(columns), **({} if trials is None else {"trials": (trials,)})})
    again = [c for c in columns if c in split or columns.count(c) > 1]
    if problem or again or not columns:
        raise ValueError(problem or (f"`column` {again[0]!r} is split twice." if again else
                                     "`column` must name at least one column; got an empty list."))
    if trials is not None and (trials in split or trials in columns):
        raise ValueError(f"`trials` {trials!r} must be a column of numbers of trials that is not split itself "
                         f"(it is {'split already' if trials in split else 'also in `column`'}).")
    explore = (data if explore is None else explore).copy()
    confirm = (data if confirm is None else confirm).copy()
    records = {}
    for c in columns:
        parts, records[c] = split_column(data[c], c, trials=None if trials is None else data[trials], **kwargs)
        explore[c], confirm[c] = parts.explore, parts.confirm
    if trials is not None:  # every row's trials split as its counts' were (the same share of the same m)
        explore[trials], confirm[trials] = data[trials] - parts.confirm_scale, parts.confirm_scale
        records[trials] = FissionRecord(column=trials, method=TRIALS_METHOD, parameter=parts.parameter,
                                        assumption="the numbers of trials, split with the counts")
    return explore, confirm, records


def _formula_names(text: str, columns: list) -> set:
    return set(spec_columns(types.SimpleNamespace(text=text), columns))


def spec_roles(spec: Any, columns: list, split: set) -> tuple[set, set] | None:
    """(outcome columns, conditioning columns) of ``spec``, or None when they cannot be told apart."""
    if isinstance(spec, (means.OneSampleTTest, means.OneSampleZTest, proportions.OneSampleProportionTest)):
        return {spec.column}, set()
    if isinstance(spec, means.PairedTTest):
        return {spec.column1, spec.column2}, set()
    if isinstance(spec, (means.TwoSampleTTest, means.TwoSampleZTest, proportions.TwoSampleProportionTest)):
        return {spec.column}, {spec.group}
    if isinstance(spec, (proportions.ChiSquareIndependenceTest, correlation.PearsonCorrelationTest,
                         correlation.SpearmanCorrelationTest)):
        # a test of independence is valid given either variable: the split one is the outcome
        pair = {spec.column1, spec.column2}
        outcomes = pair & split or pair
        return outcomes, pair - outcomes
    if isinstance(spec, (regression.CoefficientTest, regression.JointWaldTest)) and "~" in spec.formula:
        lhs, rhs = spec.formula.split("~", 1)
        extra = {c for c in (spec.groups, spec.weights) if c is not None and c in columns}
        return _formula_names(lhs, columns), _formula_names(rhs, columns) | extra
    return None


def _withheld(spec: Any, columns: list, records: dict, step_columns: list) -> str | None:
    trials = {c for c, r in records.items() if r.method == TRIALS_METHOD}
    split = set(records) - trials
    roles = spec_roles(spec, columns, split)
    if roles is None:
        return f"{type(spec).__name__} is not one whose outcome the package can tell from its conditioning columns"
    outcomes, conditioning = roles
    # a trials column on the outcome side (successes and failures) is conditioned on, not tested
    outcomes, conditioning = outcomes - trials, conditioning | (outcomes & trials)
    if not outcomes or not outcomes <= split:
        if not outcomes and roles[0] & trials:
            return (f"the tested outcome {', '.join(sorted(map(str, roles[0] & trials)))} is a column of numbers of "
                    "trials, which fission does not split (both copies are fixed by it)")
        rest = sorted(map(str, outcomes - split)) or ["(none found)"]
        return f"the tested outcome {', '.join(rest)} was not split"
    read: set = set()
    for i, cols in enumerate(step_columns):
        if cols is None:
            return f"selection step {i + 1} does not declare the columns it reads"
        read |= cols
    unsplit = sorted(map(str, read - split - conditioning))
    if unsplit:
        return (f"the selection read {', '.join(unsplit)} unsplit, which this test does not condition on (it could "
                "carry information about the tested outcome)")
    return None


def fission_cells(tests: list, columns: list, records: dict, step_columns: list, *, alpha: float) -> list[dict]:
    """The ``pvalue_fission`` cell and the note of each test."""
    out = []
    for spec, result in tests:
        reason = _withheld(spec, columns, records, step_columns)
        cell = {"pvalue_fission": math.nan}
        if reason is not None:
            cell["note"] = f"fission withheld: {reason}"
            out.append(cell)
            continue
        outcomes, _ = spec_roles(spec, columns, set(records))
        used = [records[c] for c in columns if c in outcomes]
        what = "; ".join(f"{r.column!r}: {r.assumption}" for r in used)
        note = f"fission: tested on the confirmation copy ({what})"
        if any(r.method == "poisson_thinning" for r in used):
            note += "; estimates are on the confirmation copy's scale (means times 1 - epsilon)"
        p = float(result.pvalue_naive)
        trusted = float(getattr(result, "trusted_level", 0.0) or 0.0)
        if trusted <= alpha or p >= trusted:
            cell["pvalue_fission"] = p
        else:
            why = shape_reason(getattr(result, "method", ""))
            note += (f"; fission p-value withheld: trusted down to {trusted:.2g} only, above alpha = {alpha:g}"
                     + (f" ({why})" if why else ""))
        cell["note"] = note
        out.append(cell)
    return out
