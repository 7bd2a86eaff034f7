r"""The conditional column after a lasso or stepwise selection on a randomized response (carving).

A :class:`~selective.hypotheses.CoefficientTest` of an OLS regression of the selector's target on
exactly the selected features (with an intercept), run with
``Analysis.test(spec, conditional_on=selection)`` after a
:class:`~selective.conditional.RandomizedLassoSupport` or
:class:`~selective.conditional.RandomizedForwardStepwise` step, gets the p-value and interval of
:func:`selective.conditional.randomized_lasso_inference` /
:func:`~selective.conditional.randomized_stepwise_inference` for that coefficient, conditional on
the selection (active set and signs; ordered path and signs) made on :math:`y+\omega` with the
:math:`\omega` the step recorded (docs/THEORY.md 3.13). It is exact when the errors are Gaussian
with the selector's declared ``sigma``. The test's ``value`` is the null value and its alternative
the p-value's; the interval is equal-tailed at the report's 1 - alpha whatever the alternative
(as the other conditional columns).

When the column is withheld (with its reason in the note):

* the ledger holds another step than this one, or its corrections are void (the event is that
  of this step alone), or the analysis declares ``units`` (the law assumes independent rows), or
  the data are a Dask frame (the design is needed in memory);
* the lasso selected more than ``max_size`` variables (the kept ones are not the lasso's event),
  or the selection recomputed from the rows and the recorded :math:`\omega` is not the one made;
* the declared ``sigma`` is implausibly small: with more than :data:`MIN_SIGMA_DF` residual
  degrees of freedom in the regression on every feature, its residual sum of squares over
  :math:`\sigma^2` is :math:`\chi^2` under the model, and an upper tail below
  :data:`SIGMA_CHECK_P` withholds the column (a sigma stated too small makes every conditional
  p-value too small; a mean not linear in the features also inflates the residuals, and then
  withholding is merely conservative);
* the normal tails are not trusted where the test uses them: as for inference on winners
  (:mod:`.conditional_rows`), the p-value is shown when the conditional test at the report's
  alpha rejects beyond a point whose normal tail is at least the trusted level of the OLS
  t-test of the same coefficient (its residuals' skewness and kurtosis), or when the naive
  p-value is itself at or above that level; the interval follows the first condition only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..conditional.carving_selectors import RandomizedForwardStepwise, RandomizedLassoSupport
from ..conditional.screening import TTestScreen
from .report import CONDITIONAL_COLUMNS

__all__ = ["CarvingLink", "CARVING_SELECTORS", "link_carving", "carving_cell", "SIGMA_CHECK_P", "MIN_SIGMA_DF"]

CARVING_SELECTORS = (RandomizedLassoSupport, RandomizedForwardStepwise, TTestScreen)
#: a declared sigma whose residual chi-square upper tail is below this is not used
SIGMA_CHECK_P = 1e-3
#: the declared sigma is checked when the regression on every feature has more residual df than this
MIN_SIGMA_DF = 10

_QUOTED = re.compile(r"""^Q\(\s*(['"])(.*)\1\s*\)$""")  # Q("name"), spaces allowed inside the parentheses


@dataclass(frozen=True)
class CarvingLink:
    """A regression coefficient test tied to a randomized lasso or stepwise step."""

    step: int
    selection: Any
    selector: Any
    feature: Any        # the tested feature (a column label)
    value: float
    alternative: str
    spec: Any


def _column_of(code: str) -> str:
    m = _QUOTED.match(code)
    return m.group(2) if m else code


def _formula_columns(formula: str) -> tuple[list, list, bool]:
    """(response columns, right-hand columns, has intercept) of a formula whose terms are plain
    columns; raises ValueError when a term is not one column."""
    from patsy import ModelDesc

    desc = ModelDesc.from_formula(formula)
    lhs, rhs, intercept = [], [], False
    for side, out in ((desc.lhs_termlist, lhs), (desc.rhs_termlist, rhs)):
        for term in side:
            if not term.factors:
                intercept = intercept or side is desc.rhs_termlist
                continue
            if len(term.factors) != 1:
                raise ValueError(f"the term {term.name()!r} is an interaction")
            code = term.factors[0].code
            if not (code.isidentifier() or _QUOTED.match(code)):
                raise ValueError(f"the term {code!r} is not a plain column")
            out.append(_column_of(code))
    return lhs, rhs, intercept


def link_carving(spec: Any, selection: Any, step: int, selector: Any) -> CarvingLink:
    """Check that ``spec`` tests a coefficient of the OLS regression of the selector's target on
    exactly the selected features, with an intercept; return the link (raises otherwise)."""
    from ..hypotheses.regression import CoefficientTest

    want = (f"y ~ x1 + x2 + ... with the target {selector.target!r} as y and exactly the selected features "
            f"{_names(selection)!r}")
    if not isinstance(spec, CoefficientTest) or spec.model != "ols":
        raise TypeError(f"`conditional_on`: after a {type(selector).__name__} step the test must be a "
                        f"CoefficientTest with model='ols' (a regression {want}); got {spec!r}.")
    if spec.cov_type != "nonrobust" or spec.weights is not None:
        raise ValueError(f"`conditional_on`: the conditional column assumes independent errors of equal variance; "
                         f"the test must use cov_type='nonrobust' and no weights; got cov_type={spec.cov_type!r}, "
                         f"weights={spec.weights!r}.")
    try:
        lhs, rhs, intercept = _formula_columns(spec.formula)
    except Exception as exc:  # patsy's errors and ours
        raise ValueError(f"`conditional_on`: the formula {spec.formula!r} must be {want}: {exc}.") from None
    chosen = _names(selection)
    odd = [c for c in [selector.target, *chosen] if not isinstance(c, str)]
    if odd:
        raise ValueError(f"`conditional_on`: a formula names columns by strings, and the columns {odd!r} are not "
                         "strings; give the data string column labels.")
    if lhs != [selector.target] or set(rhs) != set(chosen) or not intercept:
        raise ValueError(f"`conditional_on`: the formula must be {want}, with an intercept; got {spec.formula!r}.")
    feature = _column_of(spec.term)
    if feature not in chosen:
        raise ValueError(f"`conditional_on`: the term {spec.term!r} is not one of the selected features {chosen!r}.")
    return CarvingLink(step=step, selection=selection, selector=selector, feature=feature, value=float(spec.value),
                       alternative=spec.alternative, spec=spec)


def _names(selection: Any) -> list:
    return [v[0] if isinstance(v, tuple) else v for v in selection.value]


def _scope(link: CarvingLink, data: Any, *, n_steps: int, void: bool, units: Any) -> str | None:
    if void:
        return "conditional withheld: the ledger is void"
    if units is not None:
        return f"conditional withheld: rows are grouped in units ({units!r}), and the law assumes independent rows"
    if n_steps != 1:
        return f"conditional withheld: it conditions on step {link.step + 1} only, and the ledger has {n_steps} steps"
    if not isinstance(data, pd.DataFrame):
        return "conditional withheld: the carving column needs the design in memory (a pandas DataFrame)"
    if link.selection.details.get("truncated"):
        return (f"conditional withheld: the lasso selected more than max_size = {link.selector.max_size} variables, "
                "and the kept ones are not its selection event")
    return None


def _sigma_reason(x: np.ndarray, y: np.ndarray, sigma: float) -> tuple[str | None, str]:
    """Why the declared sigma is not used (or None), and what was checked."""
    n, p = x.shape
    df = n - p - 1
    if df <= MIN_SIGMA_DF:
        return None, f"declared sigma {sigma:.4g} not checked ({n} rows, {p} features)"
    design = np.column_stack([np.ones(n), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    rss = float(np.sum((y - design @ coef) ** 2))
    pv = float(stats.chi2.sf((math.sqrt(rss) / sigma) ** 2, df))
    s = math.sqrt(rss / df)
    if pv < SIGMA_CHECK_P:
        return (f"conditional withheld: the declared sigma {sigma:.4g} is implausibly small: the regression on every "
                f"feature leaves residual sd {s:.4g} (chi-square upper tail {pv:.2g} on {df} df)"), ""
    return None, f"declared sigma {sigma:.4g} (residual sd of the full regression {s:.4g})"


def carving_cell(link: CarvingLink, data: Any, *, alpha: float, n_steps: int, void: bool,
                 units: Any, cache: dict) -> dict[str, Any]:
    """The conditional cells and note of one test linked to a randomized lasso / stepwise step."""
    cell: dict[str, Any] = {c: math.nan for c in CONDITIONAL_COLUMNS}
    cell["note"] = _scope(link, data, n_steps=n_steps, void=void, units=units) or _fill(
        cell, link, data, alpha, cache)
    return cell


def _fill(cell: dict, link: CarvingLink, data: pd.DataFrame, alpha: float, cache: dict) -> str:
    if isinstance(link.selector, TTestScreen):
        return _fill_screen(cell, link, data, alpha, cache)
    from ..conditional.randomized_response import (
        lasso_active_set,
        randomized_lasso_inference,
        randomized_stepwise_inference,
    )
    from ..conditional.stepwise import forward_stepwise

    sel, selection = link.selector, link.selection
    feats = list(sel.features)
    x = data[feats].to_numpy(dtype=float)
    y = data[sel.target].to_numpy(dtype=float)
    omega = np.asarray(selection.details["randomization"], dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))) or omega.shape != y.shape:
        return "conditional withheld: the rows are not those the selection saw"
    reason, checked = _sigma_reason(x, y, sel.sigma)
    if reason:
        return reason
    lasso = isinstance(sel, RandomizedLassoSupport)
    if lasso:
        _, active = lasso_active_set(x, y + omega, sel.lam)
        order = [feats[j] for j in active]
    else:
        path = forward_stepwise(x, y + omega, maxsteps=sel.steps, intercept=True)
        order = [feats[int(j)] for j in path.action[: sel.steps]]
    chosen = _names(selection)
    if (set(order) != set(chosen) or len(order) != len(chosen)) if lasso else order != chosen:
        return "conditional withheld: the selection recomputed from the rows and the recorded randomization differs"
    pos = order.index(link.feature)
    key = ("carving", id(selection), link.feature, link.value, link.alternative, alpha)
    if key not in cache:
        common = dict(sigma=sel.sigma, noise_sd=sel.noise_sd, randomization=omega, alpha=alpha,
                      alternative=link.alternative, targets=[pos], null_value=link.value, columns=feats)
        try:
            cache[key] = (randomized_lasso_inference(x, y, sel.lam, **common) if lasso
                          else randomized_stepwise_inference(x, y, steps=sel.steps, **common))
        except ValueError as exc:
            cache[key] = str(exc)
    res = cache[key]
    if isinstance(res, str):
        return f"conditional withheld: {res}"
    event = "active set and signs of the lasso" if lasso else f"ordered path and signs of {sel.steps} stepwise steps"
    what = (f"conditional: given the {event} on the response plus the recorded randomization (sd {sel.noise_sd:.4g}) "
            f"of step {link.step + 1} (carving; Tian and Taylor 2018), exact for Gaussian errors of sd sigma; "
            f"{checked}")
    u0 = float(getattr(link.spec.run(data), "trusted_level", 0.0) or 0.0)
    u0 = u0 if math.isfinite(u0) else 1.0
    log_level = float(res.extra["log_boundary_tail"][0])
    level_ok = u0 <= 0 or log_level >= math.log(u0)
    if level_ok or float(res.pvalue_naive[0]) >= u0:
        cell["pvalue_conditional"] = float(res.pvalue[0])
    if level_ok:
        cell["ci_conditional_low"], cell["ci_conditional_high"] = (float(v) for v in res.ci[0])
        return what
    shown = "interval" if cell["pvalue_conditional"] == cell["pvalue_conditional"] else "p-value and interval"
    return (f"{what}; conditional {shown} withheld: a test at {alpha:g} rejects beyond a point where the normal tail "
            f"is {math.exp(log_level):.2g}, below {u0:.2g} where the t-test is trusted")


def _fill_screen(cell: dict, link: CarvingLink, data: pd.DataFrame, alpha: float, cache: dict) -> str:
    """The exact conditional p-value after a t-test screen (sigma unknown; THEORY.md 3.14); no interval."""
    from ..conditional.screening import boundary_log_tail, screen_ols, screening_inference

    sel, selection = link.selector, link.selection
    feats = list(sel.features)
    x = data[feats].to_numpy(dtype=float)
    y = data[sel.target].to_numpy(dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return "conditional withheld: the rows are not those the selection saw"
    try:
        kept = screen_ols(x, y, sel.keep_below)
    except ValueError as exc:
        return f"conditional withheld: {exc}"
    if tuple(f for f, k in zip(feats, kept, strict=True) if k) != tuple(_names(selection)):
        return "conditional withheld: the screen recomputed from the rows keeps another set"
    if link.value != 0:
        return (f"conditional withheld: the screening column tests a coefficient of 0 only (the null law is that of "
                f"the full regression's residual direction); the test's value is {link.value!r}")
    key = ("screen", id(selection), link.alternative)
    if key not in cache:
        names = ["(intercept)", *[f"f{j}" for j in range(len(feats))]]
        try:
            cache[key] = screening_inference(np.column_stack([np.ones(len(y)), x]), y, keep_below=sel.keep_below,
                                             screened=names[1:], test="coefficients", alternative=link.alternative,
                                             columns=names, kept=[f"f{j}" for j in np.nonzero(kept)[0]])
        except ValueError as exc:
            cache[key] = str(exc)
    res = cache[key]
    if isinstance(res, str):
        return f"conditional withheld: {res}"
    row = list(res.tested).index(f"f{feats.index(link.feature)}")
    what = (f"conditional: given the t-test screen of step {link.step + 1} (kept set at p < {sel.keep_below:g}), "
            f"exact for Gaussian errors with a mean linear in the {len(feats)} features, sigma unknown (truncated t "
            f"on the full regression's {res.df2} residual df; Loftus and Taylor 2015); p-value only, no interval")
    u0 = float(getattr(link.spec.run(data), "trusted_level", 0.0) or 0.0)
    u0 = u0 if math.isfinite(u0) else 1.0
    log_level = boundary_log_tail(res.support[row], res.df2, alpha, link.alternative)
    if u0 <= 0 or log_level >= math.log(u0) or float(res.pvalue_naive[row]) >= u0:
        cell["pvalue_conditional"] = float(res.pvalue[row])
        return what
    return (f"{what}; conditional p-value withheld: a test at {alpha:g} rejects beyond a point where the t tail is "
            f"{math.exp(log_level):.2g}, below {u0:.2g} where the t-test is trusted")
