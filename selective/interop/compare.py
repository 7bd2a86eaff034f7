r"""Lasso, stepwise and t-test-screening selection compared: naive, max-information-corrected,
conditional and R selectiveInference p-values, per selected variable, in one table.

For a selection made by the lasso at a fixed λ, forward stepwise, least angle regression or
Freedman's t-test screen on a DataFrame, :func:`compare_selection` reports for each selected
variable

* the **naive** p-value of its coefficient in the regression on the selected variables
  (statsmodels OLS t-test; logistic Wald test for ``family="binomial"``), which ignores the
  selection;
* the **max-information-corrected** p-value, treating the selection as a description-length
  step (THEORY.md 2.5, 5.8): a lasso support of size at most s among p variables has
  :math:`\sum_{j\le s}\binom pj` outcomes, a stepwise path of k ordered steps
  :math:`p!/(p-k)!`; the union-bound and max-information routes of
  :mod:`selective.corrections` (and the mutual-information column) follow;
* the **conditional** (polyhedral) p-value of :mod:`selective.conditional`, which conditions
  on the selection event (Lee, Sun, Sun and Taylor 2016; Tibshirani, Taylor, Lockhart and
  Tibshirani 2016). Its header says how valid it is: *exact conditional* when ``sigma`` is
  given; *conditional, valid for unknown sigma* when sigma is estimated from the full-model
  residuals (n > p + intercept: supremum over a confidence interval for sigma plus
  :math:`\delta`, THEORY.md 3.7); *approximate (plug-in sigma, k residual df)* when no
  independent estimate exists (n <= p + intercept, with a :class:`SelectiveWarning`) or
  ``sigma_method="plugin"`` was asked for; *approximate (binomial, asymptotic)* for the
  binomial lasso (Taylor and Tibshirani 2018). After the t-test screen (``method="screen"``) it is
  the exact conditional t-test of :func:`selective.conditional.screening_inference`, with sigma
  unknown (Loftus and Taylor 2015; THEORY.md 3.14), and has no interval;
* **R selectiveInference**'s p-value for the same analysis when R, rpy2, selectiveInference and
  glmnet are installed (:mod:`selective.interop.rcompare`), with R's plug-in of the same
  sigma value.

All p-values are two-sided (R's one-sided p-values, in the direction of the selected sign,
are converted as :math:`2\min(p, 1-p)`). The naive and max-information columns use the
t-tests (Wald tests) of the coefficient in the selected submodel, exact (asymptotic) when
that submodel holds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_positive, check_probability
from ..accounting.certificates import DescriptionLength
from ..accounting.ledger import Ledger
from ..analysis.report import RenderMixin, format_number, format_pvalue
from ..corrections import correct
from ..exceptions import SelectiveWarning

__all__ = ["compare_selection", "SelectionComparison", "COMPARISON_COLUMNS"]

METHODS = ("lasso", "fs", "lar", "screen")
FAMILIES = ("gaussian", "binomial")
COMPARISON_COLUMNS = ("estimate", "pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_conditional",
                      "pvalue_r", "ci_conditional_low", "ci_conditional_high")
_HEADERS = {"estimate": "Estimate", "pvalue_naive": "p (naive OLS)", "pvalue_maxinfo": "p (max-info)",
            "pvalue_mutual_info": "p (mutual info)", "pvalue_conditional": "p (conditional)",
            "pvalue_r": "p (R selectiveInference)", "ci_conditional_low": "CI low (conditional)",
            "ci_conditional_high": "CI high (conditional)", "pvalue_fission": "p (fission)",
            "pvalue_carving": "p (carving)", "ci_carving_low": "CI low (carving)",
            "ci_carving_high": "CI high (carving)"}
CARVING_COLUMNS = ("pvalue_carving", "ci_carving_low", "ci_carving_high")


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
    conditional_header : str
        Header of the conditional p-value column, which says how valid it is: "p (exact
        conditional)" (sigma given), "p (conditional, valid for unknown sigma)", "p
        (approximate: plug-in sigma, k residual df)" or "p (approximate: binomial, asymptotic)".
    fission_variables : tuple
        With ``fission_tau``: the variables the exploration copy selected, in the order of the
        selection; the fission column holds their p-values (and only theirs).
    carving : SelectiveInferenceResult or None
        With ``carving_noise_sd``: the randomized-response result (its own selection, made on
        :math:`y+\\omega`); the carving columns hold its variables' p-values and intervals.
    """

    frame: pd.DataFrame
    method: str
    n_outcomes: int
    conditional: Any
    r_status: str
    footnote: str = ""
    conditional_header: str = "p (conditional)"
    fission_variables: tuple = ()
    carving: Any = None

    def _display(self, columns) -> pd.DataFrame:
        cols = COMPARISON_COLUMNS if columns in ("short", "all") else tuple(columns)
        if columns in ("short", "all") and self.method == "screen":  # no interval, no R counterpart
            cols = tuple(c for c in cols if c not in ("pvalue_r", "ci_conditional_low", "ci_conditional_high"))
        if columns in ("short", "all"):
            extra = tuple(c for c in ("pvalue_fission", "pvalue_carving") if c in self.frame.columns)
            at = cols.index("pvalue_r") if "pvalue_r" in cols else len(cols)
            cols = cols[:at] + extra + cols[at:]
            cols += tuple(c for c in CARVING_COLUMNS[1:] if c in self.frame.columns)
        out = pd.DataFrame(index=self.frame.index)
        headers = {**_HEADERS, "pvalue_conditional": self.conditional_header}
        for c in cols:
            fmt = format_pvalue if c.startswith("pvalue") else format_number
            out[headers[c]] = [fmt(x) for x in self.frame[c]]
        out.index.name = "variable"
        return out

    def to_csv(self, path_or_buf=None, **kwargs):
        return self.frame.to_csv(path_or_buf, **kwargs)


def _naive_fit(X: np.ndarray, y: np.ndarray, idx: np.ndarray, intercept: bool,
               family: str) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients and two-sided p-values of the selected columns: OLS t-tests (gaussian) or
    logistic-regression Wald tests (binomial), ignoring the selection."""
    import statsmodels.api as sm

    design = X[:, idx]
    if intercept:  # centred columns: the same slopes and tests, without an offset's ill-conditioning
        design = sm.add_constant(design - design.mean(axis=0), has_constant="add")
    model = sm.OLS(y, design) if family == "gaussian" else sm.Logit(y, design)
    fit = model.fit() if family == "gaussian" else model.fit(disp=0)
    off = 1 if intercept else 0
    return np.asarray(fit.params)[off:], np.asarray(fit.pvalues)[off:]


def _fission_column(X, y, names, *, method, lam, steps, intercept, sigma, tau, rng, keep_below=0.25):
    """Gaussian fission: the variables the exploration copy selects, their p-values on the
    confirmation copy, and the footnote sentence."""
    from ..conditional.lasso import solve_lasso
    from ..conditional.screening import screen_ols
    from ..conditional.stepwise import forward_stepwise, least_angle_regression
    from ..selectors.fission import gaussian_fission

    parts = gaussian_fission(y, sigma=sigma, tau=tau, rng=rng)
    if method == "screen":
        chosen = np.flatnonzero(screen_ols(X, parts.explore, keep_below))
    elif method == "lasso":
        chosen = np.flatnonzero(solve_lasso(X, parts.explore, lam, intercept=intercept).beta != 0)
    else:
        path_fn = forward_stepwise if method == "fs" else least_angle_regression
        chosen = np.asarray(path_fn(X, parts.explore, maxsteps=steps, intercept=intercept).action[:steps], dtype=int)
    selected = tuple(names[i] for i in chosen)
    p_confirm = _naive_fit(X, parts.confirm, chosen, intercept, "gaussian")[1] if chosen.size else []
    note = (f" Fission column (its own selection): the selection rerun on y + tau Z, OLS t-tests of what it "
            f"selected on y - Z/tau (tau = {tau:g}, Z ~ N(0, sigma^2), sigma = {sigma:g} known; Leiner et al. "
            f"2023): {', '.join(map(str, selected)) or 'nothing'}; rows it did not select are empty in it, rows "
            "only it selected are empty in the others.")
    return pd.Series(p_confirm, index=list(selected), dtype=float), selected, note


_SHORT_LABELS = {"known": "exact conditional", "interval": "conditional, valid for unknown sigma",
                 "asymptotic": "approximate: binomial, asymptotic"}


def _inference_text(method: str, res) -> str:
    if method == "screen":
        return ("(exact t-tests given the screen's outcome, along the one-parameter family of Loftus & Taylor 2015 "
                "Thm 3.2; THEORY.md 3.14)")
    return f"(polyhedral lemma): {res.inference}"


def _conditional_header(res) -> str:
    if res.sigma_mode == "plugin":
        return f"p (approximate: plug-in sigma, {res.sigma_df} residual df)"
    return f"p ({_SHORT_LABELS.get(res.sigma_mode, res.sigma_mode)})"


def _screen(X, y, names, keep_below):
    """The t-test screen's exact conditional t-tests (sigma unknown) in the shape the table needs:
    (kept positions, conditional p-values, result, outcome count, label)."""
    from ..conditional.screening import screening_inference

    n, p = X.shape
    # positions as names, so that no label of the data can clash with the intercept's
    res = screening_inference(np.column_stack([np.ones(n), X]), y, keep_below=keep_below,
                              screened=list(range(1, p + 1)), test="coefficients", alternative="two-sided",
                              columns=list(range(p + 1)))
    idx = np.asarray([int(v) - 1 for v in res.tested], dtype=int)
    label = f"t-test screen at p < {keep_below:g} among {p} (Freedman's first pass)"
    return idx, np.asarray(res.pvalue, dtype=float), res, 2 ** p, label


def compare_selection(data: pd.DataFrame, response: str, *, method: str = "lasso", lam: float | None = None,
                      steps: int | None = None, columns: list[str] | None = None, sigma: float | None = None,
                      max_support: int | None = None, alpha: float = 0.05, intercept: bool = True,
                      with_r: bool | str = "auto", family: str = "gaussian", sigma_method: str = "auto",
                      sigma_delta: float | None = None, fission_tau: float | None = None,
                      carving_noise_sd: float | None = None, keep_below: float = 0.25,
                      rng: Any = None) -> SelectionComparison:
    """Select variables with the lasso / forward stepwise / LAR / the t-test screen and compare every
    p-value column.

    Parameters
    ----------
    data : pandas.DataFrame
    response : str
        Response column (0/1 for ``family="binomial"``).
    method : {"lasso", "fs", "lar", "screen"}
        ``"screen"``: Freedman's first pass, which keeps the variables whose two-sided t p-value
        in the OLS regression of the response on an intercept and all ``columns`` is below
        ``keep_below``; its conditional column is the exact t-test given the screen's outcome with
        sigma unknown (:func:`selective.conditional.screening_inference`), without an interval,
        and R selectiveInference has no counterpart (``with_r=True`` is refused). Its max-information
        column counts :math:`2^p` outcomes.
    lam : float
        Lasso penalty (scale :math:`\\frac12\\|y-Xb\\|^2 + \\lambda\\|b\\|_1`, binomial
        :math:`-\\ell + \\lambda\\|b\\|_1`; glmnet's s is lam/n); required for ``method="lasso"``.
    steps : int
        Number of path steps for "fs" / "lar" (declared before looking); every variable of the
        ``steps``-step model is tested.
    columns : list of str, optional
        Candidate predictors (default: every other numeric column).
    sigma : float, optional
        Noise sd (gaussian). Given: the conditional column is exact. Not given: see
        ``sigma_method``.
    max_support : int, optional
        Largest lasso support declared possible (default p): the description length of the lasso
        selection is :math:`\\sum_{j\\le s}\\binom pj` outcomes.
    alpha : float
        Level of the conditional intervals and of the correction's footnote.
    with_r : bool or "auto"
        Run R selectiveInference too: True (raise if unavailable), False, or "auto" (when available).
    family : {"gaussian", "binomial"}
        ``"binomial"`` sends a 0/1 response to the binomial lasso of
        :func:`selective.conditional.fixed_lasso_inference` (asymptotic; Taylor and Tibshirani
        2018) and uses logistic Wald tests for the naive column; only with ``method="lasso"``.
    sigma_method : {"auto", "interval", "plugin"}
        How an unknown sigma is handled (gaussian, ``sigma=None``), as in
        :func:`selective.conditional.fixed_lasso_inference`: ``"auto"`` uses the valid
        sup-over-an-interval construction when n > p + intercept and otherwise the plug-in with
        a :class:`SelectiveWarning`; ``"plugin"`` forces R's plug-in (approximate).
    sigma_delta : float, optional
        The :math:`\\delta` of the valid unknown-sigma construction, in (0, alpha); default
        ``alpha / 10``. The conditional p-values are never below it.
    fission_tau : float, optional
        Add the data-fission column (gaussian, ``sigma`` given; docs/THEORY.md 3.10): the same
        selection run on :math:`y + \\tau Z`, :math:`Z \\sim N(0, \\sigma^2)`, and the OLS t-tests
        of the variables *it* selects run on :math:`y - Z/\\tau`, independent of it given X. The
        column holds exactly those variables' p-values (rows it alone selected are added, empty in
        the other columns); filtering them by the full-data selection would make them depend on
        the confirmation copy.
    carving_noise_sd : float, optional
        Add the carving columns (gaussian, ``sigma`` given, ``method`` "lasso" or "fs"; docs/THEORY.md
        3.13): the same selection run on y + omega, with omega drawn from N(0, ``carving_noise_sd``
        squared) per row, and exact p-values and intervals for the variables *it*
        selects, from all of y, given that selection
        (:func:`selective.conditional.randomized_lasso_inference`,
        :func:`~selective.conditional.randomized_stepwise_inference`). ``carving_noise_sd = sigma``
        lets the selection see the data as a 50:50 split would, while the tests use every row. As
        with fission, rows it alone selected are added.
    keep_below : float
        The screen's level in (0, 1) for ``method="screen"`` (default 0.25, Freedman 1983).
    rng : numpy.random.Generator or int, optional
        Randomness of the fission and the carving (default: fresh entropy).

    Returns
    -------
    SelectionComparison
        Its ``conditional_header`` (the header of the conditional column in every rendering)
        says whether the conditional p-values are exact, valid for unknown sigma, or approximate.
    """
    method = check_choice("method", method, METHODS)
    family = check_choice("family", family, FAMILIES)
    alpha = check_probability("alpha", alpha, closed="neither")
    if with_r not in (True, False, "auto"):
        raise ValueError(f"`with_r` must be True, False or 'auto'; got {with_r!r}.")
    keep_below = check_probability("keep_below", keep_below, closed="neither")
    if fission_tau is not None:
        check_positive("fission_tau", fission_tau)
    if method == "screen" and (family != "gaussian" or not intercept or with_r is True or carving_noise_sd is not None):
        raise ValueError("method='screen' needs family='gaussian' and intercept=True (the screen regresses on an "
                         "intercept and every column), has no R counterpart (with_r=True) and no noise carving "
                         "(screening_inference(screen_rows=...) carves by rows); got "
                         f"family={family!r}, intercept={intercept!r}, with_r={with_r!r}, "
                         f"carving_noise_sd={carving_noise_sd!r}.")
    unused = {"lam": lam, "steps": steps, "max_support": max_support, "sigma_delta": sigma_delta,
              "sigma": sigma if method == "screen" and fission_tau is None else None,
              "sigma_method": None if sigma_method == "auto" else sigma_method}
    unused = {k: v for k, v in unused.items() if v is not None and (method == "screen" or k != "lam")}
    if method == "screen" and unused:
        raise ValueError(f"method='screen' does not use {', '.join(f'`{k}`={v!r}' for k, v in unused.items())}: its "
                         "conditional test estimates sigma from the first pass (a known `sigma` is used only by the "
                         "fission column, with `fission_tau`).")
    if family == "binomial" and method != "lasso":
        raise ValueError(f"`family`='binomial' is only available with method='lasso' (the binomial lasso of "
                         f"Taylor & Tibshirani 2018); forward stepwise and LAR inference assume a Gaussian "
                         f"response. Got method={method!r}.")
    if family == "binomial" and sigma is not None:
        raise ValueError(f"`sigma` must be None for family='binomial'; got {sigma!r}.")
    if fission_tau is not None and (family != "gaussian" or sigma is None):
        raise ValueError("`fission_tau` needs family='gaussian' and the known `sigma` (Gaussian fission splits y "
                         f"with noise of that sd); got family={family!r}, sigma={sigma!r}.")
    if carving_noise_sd is not None and (family != "gaussian" or sigma is None or method == "lar"):
        raise ValueError("`carving_noise_sd` needs family='gaussian', the known `sigma` and method 'lasso' or 'fs' "
                         f"(exact carving after LAR is not implemented); got family={family!r}, sigma={sigma!r}, "
                         f"method={method!r}.")
    from .. import conditional as cond
    from ..conditional._checks import design_and_response

    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    if columns is None:
        columns = [c for c in data.columns if c != response and pd.api.types.is_numeric_dtype(data[c])]
    if not list(columns) or response in list(columns):
        raise ValueError(f"`columns` must name at least one predictor and not the response {response!r}; got "
                         f"{list(columns)!r}.")
    X, y, names = design_and_response(data, response, list(columns))
    n, p = X.shape
    sigma_kw = dict(sigma=sigma, sigma_method=sigma_method, sigma_delta=sigma_delta)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SelectiveWarning)
        if method == "lasso":
            if lam is None:
                raise ValueError("`lam` is required for method='lasso'; got None.")
            s = p if max_support is None else check_int("max_support", max_support, low=1, high=p)
            if family == "binomial":
                res = cond.fixed_lasso_inference(X, y, lam, family="binomial", intercept=intercept, alpha=alpha,
                                                 alternative="two-sided", columns=names, sigma_method=sigma_method,
                                                 sigma_delta=sigma_delta)
            else:
                res = cond.fixed_lasso_inference(X, y, lam, intercept=intercept, type="partial", alpha=alpha,
                                                 alternative="two-sided", columns=names, **sigma_kw)
            if len(res.variables) > s:
                raise ValueError(f"the lasso selected {len(res.variables)} variables, more than `max_support` = "
                                 f"{s}: the declared outcome count does not cover this selection.")
            n_out = sum(math.comb(p, j) for j in range(s + 1))
            kind = "binomial lasso" if family == "binomial" else "lasso"
            label = f"{kind} support (size <= {s} of {p}) at lambda = {lam:g}"
        elif method == "screen":
            idx_screen, p_screen, res, n_out, label = _screen(X, y, names, keep_below)
        else:
            if steps is None:
                raise ValueError(f"`steps` is required for method={method!r}; got None.")
            k = check_int("steps", steps, low=1, high=p)
            path_fn = cond.forward_stepwise if method == "fs" else cond.least_angle_regression
            inf_fn = cond.fs_inference if method == "fs" else cond.lar_inference
            path = path_fn(X, y, maxsteps=k, intercept=intercept)
            res = inf_fn(path, alpha=alpha, k=k, type="all", alternative="two-sided", **sigma_kw)
            n_out = math.perm(p, k)
            label = f"{'forward stepwise' if method == 'fs' else 'LAR'} path of {k} steps among {p}"
    for w in caught:  # re-issue the conditional functions' warnings at the caller's line
        if issubclass(w.category, SelectiveWarning):
            warnings.warn(str(w.message), SelectiveWarning, stacklevel=2)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    idx = idx_screen if method == "screen" else np.asarray(res.index, dtype=int)
    variables = [names[i] for i in idx]
    if idx.size == 0:
        raise ValueError(f"the selection ({label}) chose no variable: nothing to test.")
    est, p_naive = _naive_fit(X, y, idx, intercept, family)
    ledger = Ledger(n)
    ledger.record(DescriptionLength(n_out), label)
    corr = correct(p_naive, ledger.totals(), alpha=alpha)
    frame = pd.DataFrame({
        "estimate": est, "pvalue_naive": p_naive, "pvalue_maxinfo": corr.pvalue_maxinfo,
        "pvalue_mutual_info": corr.pvalue_mutual_info,
        "pvalue_conditional": p_screen if method == "screen" else np.asarray(res.pvalue, dtype=float),
        "pvalue_r": np.nan, "ci_conditional_low": np.nan if method == "screen" else np.asarray(res.ci)[:, 0],
        "ci_conditional_high": np.nan if method == "screen" else np.asarray(res.ci)[:, 1],
    }, index=pd.Index(variables, name="variable"))
    r_status = "not requested"
    if method == "screen" and with_r == "auto":
        r_status = "R selectiveInference has no inference after t-test screening"
    elif with_r is not False:
        from .rcompare import compare_with_r, why_r_unavailable

        reason = why_r_unavailable()
        if reason is None:
            fn = {"lasso": "fixedLassoInf", "fs": "fsInf", "lar": "larInf"}[method]
            kw = dict(lam=lam, type="partial") if method == "lasso" else dict(k=steps, type="all", maxsteps=steps)
            r_sigma = None if family == "binomial" else res.sigma
            side = compare_with_r(fn, X, y, sigma=r_sigma, alpha=alpha, intercept=intercept, family=family, **kw)
            r_one = side["pvalue_r"].reindex(idx + 1).to_numpy(dtype=float)
            frame["pvalue_r"] = np.minimum(1.0, 2.0 * np.minimum(r_one, 1.0 - r_one))
            r_status = "compared"
        elif with_r is True:
            from .rbridge import RNotAvailableError

            raise RNotAvailableError(reason)
        else:
            r_status = f"R not available: {reason}"
    fission_note, fission_variables = "", ()
    rng = np.random.default_rng(rng) if fission_tau is not None or carving_noise_sd is not None else rng
    if fission_tau is not None:
        fission, fission_variables, fission_note = _fission_column(
            X, y, names, method=method, lam=lam, steps=steps, intercept=intercept, sigma=sigma, tau=fission_tau,
            rng=rng, keep_below=keep_below)
        frame = frame.reindex(list(frame.index) + [v for v in fission_variables if v not in frame.index])
        frame["pvalue_fission"] = fission.reindex(frame.index).to_numpy(dtype=float)
    carving, carving_note = None, ""
    if carving_noise_sd is not None:
        kw = dict(sigma=sigma, noise_sd=carving_noise_sd, rng=rng, intercept=intercept, alpha=alpha,
                  alternative="two-sided", columns=names)
        carving = (cond.randomized_lasso_inference(X, y, lam, **kw) if method == "lasso"
                   else cond.randomized_stepwise_inference(X, y, steps=steps, **kw))
        chosen = list(carving.variables)
        frame = frame.reindex(list(frame.index) + [v for v in chosen if v not in frame.index])
        ci = np.asarray(carving.ci).reshape(-1, 2)
        for col, vals in zip(CARVING_COLUMNS, (carving.pvalue, ci[:, 0], ci[:, 1]), strict=True):
            frame[col] = pd.Series(np.asarray(vals, dtype=float), index=chosen).reindex(frame.index).to_numpy()
        carving_note = (f" Carving columns (their own selection): the selection rerun on y + omega, omega ~ "
                        f"N(0, {carving_noise_sd:g}^2), and exact p-values and {1 - alpha:g} intervals from all of "
                        f"y given it (sigma = {sigma:g} known; Tian & Taylor 2018): "
                        f"{', '.join(map(str, chosen)) or 'nothing'}. A variable only one of the two selections "
                        "chose is empty in the other's columns.")
    if method == "screen":
        sig_note = (f"sigma unknown, the t statistic on the first pass's {res.df2} residual df (Loftus & Taylor "
                    "2015); no interval")
    elif family == "binomial":
        sig_note = "binomial one-step estimator, asymptotic normal (Taylor & Tibshirani 2018)"
    else:
        sig_note = f"sigma = {res.sigma:.4g}: {res.sigma_rule or 'given'}"
    r_note = ""
    if r_status == "compared" and family == "gaussian":
        r_note = f" R column: R's own computation with sigma = {res.sigma:.4g} plugged in."
    footnote = (f"Selection: {label}; max-information column from its description length "
                f"({n_out} outcomes, log2 = {math.log2(n_out):.3g} bits; Dwork et al. 2015 Thms 9, 13, 17). "
                f"Conditional p-values {_inference_text(method, res)}; {sig_note}. "
                "All p-values two-sided." + r_note
                + ("" if r_status == "compared" else (" No R column: " if method == "screen" else " R column empty: ")
                   + r_status.rstrip(".") + ".")
                + fission_note + carving_note)
    return SelectionComparison(frame=frame, method=method, n_outcomes=n_out, conditional=res, r_status=r_status,
                               footnote=footnote, conditional_header=(
                                   "p (exact conditional, sigma unknown)" if method == "screen"
                                   else _conditional_header(res)),
                               fission_variables=fission_variables, carving=carving)
