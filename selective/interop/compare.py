r"""Lasso and stepwise selection compared: naive, max-information-corrected, exact conditional
and R selectiveInference p-values, per selected variable, in one table.

For a selection made by the lasso at a fixed λ, forward stepwise or least angle regression on
a DataFrame, :func:`compare_selection` reports for each selected variable

* the **naive** OLS t-test p-value of its coefficient in the regression on the selected
  variables (statsmodels), which ignores the selection;
* the **max-information-corrected** p-value, treating the selection as a description-length
  step (THEORY.md 2.5, 5.8): a lasso support of size at most s among p variables has
  :math:`\sum_{j\le s}\binom pj` outcomes, a stepwise path of k ordered steps
  :math:`p!/(p-k)!`; the union-bound and max-information routes of
  :mod:`selective.corrections` (and the mutual-information column) follow;
* the **exact conditional** (polyhedral) p-value of :mod:`selective.conditional`, which
  conditions on the selection event (Lee, Sun, Sun and Taylor 2016; Tibshirani, Taylor,
  Lockhart and Tibshirani 2016);
* **R selectiveInference**'s p-value for the same analysis when R, rpy2, selectiveInference and
  glmnet are installed (:mod:`selective.interop.rcompare`).

All p-values are two-sided (R's one-sided p-values, in the direction of the selected sign,
are converted as :math:`2\min(p, 1-p)`). The naive and max-information columns use OLS t-tests
of the coefficient in the selected submodel, exact when that submodel holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_probability
from ..accounting.certificates import DescriptionLength
from ..accounting.ledger import Ledger
from ..analysis.report import RenderMixin, format_number, format_pvalue
from ..corrections import correct

__all__ = ["compare_selection", "SelectionComparison", "COMPARISON_COLUMNS"]

METHODS = ("lasso", "fs", "lar")
COMPARISON_COLUMNS = ("estimate", "pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_conditional",
                      "pvalue_r", "ci_conditional_low", "ci_conditional_high")
_HEADERS = {"estimate": "Estimate", "pvalue_naive": "p (naive OLS)", "pvalue_maxinfo": "p (max-info)",
            "pvalue_mutual_info": "p (mutual info)", "pvalue_conditional": "p (exact conditional)",
            "pvalue_r": "p (R selectiveInference)", "ci_conditional_low": "CI low (conditional)",
            "ci_conditional_high": "CI high (conditional)"}


@dataclass(frozen=True)
class SelectionComparison(RenderMixin):
    """One row per selected variable; columns :data:`COMPARISON_COLUMNS` (NaN where absent).

    Attributes
    ----------
    frame : pandas.DataFrame
    method : str
    n_outcomes : int
        Outcome count of the description-length certificate used by the max-information column.
    conditional : SelectiveInferenceResult
        The full exact-inference result.
    r_status : str
        "compared" or why R's column is empty.
    footnote : str
    """

    frame: pd.DataFrame
    method: str
    n_outcomes: int
    conditional: Any
    r_status: str
    footnote: str = ""

    def _display(self, columns) -> pd.DataFrame:
        cols = COMPARISON_COLUMNS if columns in ("short", "all") else tuple(columns)
        out = pd.DataFrame(index=self.frame.index)
        for c in cols:
            fmt = format_pvalue if c.startswith("pvalue") else format_number
            out[_HEADERS[c]] = [fmt(x) for x in self.frame[c]]
        out.index.name = "variable"
        return out

    def to_csv(self, path_or_buf=None, **kwargs):
        return self.frame.to_csv(path_or_buf, **kwargs)


def _naive_ols(X: np.ndarray, y: np.ndarray, idx: np.ndarray, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.api as sm

    design = X[:, idx]
    if intercept:
        design = sm.add_constant(design, has_constant="add")
    fit = sm.OLS(y, design).fit()
    off = 1 if intercept else 0
    return np.asarray(fit.params)[off:], np.asarray(fit.pvalues)[off:]


def compare_selection(data: pd.DataFrame, response: str, *, method: str = "lasso", lam: float | None = None,
                      steps: int | None = None, columns: list[str] | None = None, sigma: float | None = None,
                      max_support: int | None = None, alpha: float = 0.05, intercept: bool = True,
                      with_r: bool | str = "auto") -> SelectionComparison:
    """Select variables with the lasso / forward stepwise / LAR and compare every p-value column.

    Parameters
    ----------
    data : pandas.DataFrame
    response : str
        Response column.
    method : {"lasso", "fs", "lar"}
    lam : float
        Lasso penalty (scale :math:`\\frac12\\|y-Xb\\|^2 + \\lambda\\|b\\|_1`; glmnet's s is lam/n);
        required for ``method="lasso"``.
    steps : int
        Number of path steps for "fs" / "lar" (declared before looking); every variable of the
        ``steps``-step model is tested.
    columns : list of str, optional
        Candidate predictors (default: every other numeric column).
    sigma : float, optional
        Noise sd for the exact conditional inference (default: R selectiveInference's rule).
    max_support : int, optional
        Largest lasso support declared possible (default p): the description length of the lasso
        selection is :math:`\\sum_{j\\le s}\\binom pj` outcomes.
    alpha : float
        Level of the conditional intervals and of the correction's footnote.
    with_r : bool or "auto"
        Run R selectiveInference too: True (raise if unavailable), False, or "auto" (when available).
    """
    method = check_choice("method", method, METHODS)
    alpha = check_probability("alpha", alpha, closed="neither")
    if with_r not in (True, False, "auto"):
        raise ValueError(f"`with_r` must be True, False or 'auto'; got {with_r!r}.")
    from .. import conditional as cond
    from ..conditional._checks import design_and_response

    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    if columns is None:
        columns = [c for c in data.columns if c != response and pd.api.types.is_numeric_dtype(data[c])]
    X, y, names = design_and_response(data, response, list(columns))
    n, p = X.shape
    if method == "lasso":
        if lam is None:
            raise ValueError("`lam` is required for method='lasso'; got None.")
        s = p if max_support is None else check_int("max_support", max_support, low=1, high=p)
        res = cond.fixed_lasso_inference(X, y, lam, sigma=sigma, intercept=intercept, type="partial",
                                         alpha=alpha, alternative="two-sided", columns=names)
        if len(res.variables) > s:
            raise ValueError(f"the lasso selected {len(res.variables)} variables, more than `max_support` = {s}: "
                             "the declared outcome count does not cover this selection.")
        n_out = sum(math.comb(p, j) for j in range(s + 1))
        label = f"lasso support (size <= {s} of {p}) at lambda = {lam:g}"
    else:
        if steps is None:
            raise ValueError(f"`steps` is required for method={method!r}; got None.")
        k = check_int("steps", steps, low=1, high=p)
        path_fn = cond.forward_stepwise if method == "fs" else cond.least_angle_regression
        inf_fn = cond.fs_inference if method == "fs" else cond.lar_inference
        path = path_fn(X, y, maxsteps=k, intercept=intercept)
        res = inf_fn(path, sigma=sigma, alpha=alpha, k=k, type="all", alternative="two-sided")
        n_out = math.perm(p, k)
        label = f"{'forward stepwise' if method == 'fs' else 'LAR'} path of {k} steps among {p}"
    idx = np.asarray(res.index, dtype=int)
    variables = [names[i] for i in idx]
    if idx.size == 0:
        raise ValueError("the selection chose no variable: nothing to test.")
    est, p_naive = _naive_ols(X, y, idx, intercept)
    ledger = Ledger(n)
    ledger.record(DescriptionLength(n_out), label)
    corr = correct(p_naive, ledger.totals(), alpha=alpha)
    frame = pd.DataFrame({
        "estimate": est, "pvalue_naive": p_naive, "pvalue_maxinfo": corr.pvalue_maxinfo,
        "pvalue_mutual_info": corr.pvalue_mutual_info, "pvalue_conditional": np.asarray(res.pvalue, dtype=float),
        "pvalue_r": np.nan, "ci_conditional_low": np.asarray(res.ci)[:, 0], "ci_conditional_high": np.asarray(res.ci)[:, 1],
    }, index=pd.Index(variables, name="variable"))
    r_status = "not requested"
    if with_r is not False:
        from .rcompare import compare_with_r, why_r_unavailable

        reason = why_r_unavailable()
        if reason is None:
            fn = {"lasso": "fixedLassoInf", "fs": "fsInf", "lar": "larInf"}[method]
            kw = dict(lam=lam, type="partial") if method == "lasso" else dict(k=steps, type="all", maxsteps=steps)
            side = compare_with_r(fn, X, y, sigma=res.sigma, alpha=alpha, intercept=intercept, **kw)
            r_one = side["pvalue_r"].reindex(idx + 1).to_numpy(dtype=float)
            frame["pvalue_r"] = np.minimum(1.0, 2.0 * np.minimum(r_one, 1.0 - r_one))
            r_status = "compared"
        elif with_r is True:
            from .rbridge import RNotAvailableError

            raise RNotAvailableError(reason)
        else:
            r_status = f"R not available: {reason}"
    footnote = (f"Selection: {label}; max-information column from its description length "
                f"({n_out} outcomes, log2 = {math.log2(n_out):.3g} bits; Dwork et al. 2015 Thms 9, 13, 17). "
                f"Exact conditional p-values: polyhedral lemma, sigma = {res.sigma:.4g} ({res.sigma_rule or 'given'}). "
                "All p-values two-sided." + ("" if r_status == "compared" else " R column empty: " + r_status))
    return SelectionComparison(frame=frame, method=method, n_outcomes=n_out, conditional=res, r_status=r_status,
                               footnote=footnote)
