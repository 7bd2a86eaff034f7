"""Wald tests of regression coefficients (OLS, logit and Poisson GLMs) from model formulas.

Models are fitted with ``statsmodels.formula.api`` (``ols``; ``glm`` with the binomial family
and logit link, or the Poisson family and log link, as R's ``glm``), formulas such as
``"y ~ x1 + x2 + C(group)"``. Coefficients are named as statsmodels names them
(``"x1"``, ``"C(group)[T.b]"``, ``"Intercept"``).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats
import statsmodels.api as sm
import statsmodels.formula.api as smf

from .._validation import check_choice
from ..exceptions import SelectiveWarning
from ._result import IntervalRule, TestResult, make_result
from ._spec import TestSpec, check_frame, check_value, fmt, select

__all__ = ["CoefficientTest", "JointWaldTest"]

MODELS = ("ols", "logit", "poisson")
_MODEL_NAMES = {"ols": "OLS", "logit": "logit", "poisson": "Poisson"}
_FAMILY_CALLS = {"logit": "sm.families.Binomial()", "poisson": "sm.families.Poisson()"}
# IRLS to a relative deviance change of 1e-13 rather than statsmodels' default absolute 1e-8:
# the standard errors use the weights of the last-but-one iterate, and at the default they can
# be off by ~1e-5 relative (seen on Poisson fits against R's glm run to convergence).
GLM_FIT_OPTIONS = {"atol": 1e-13, "rtol": 1e-13, "maxiter": 100}


def _check_formula(formula: Any) -> None:
    if not isinstance(formula, str):
        raise TypeError(f"`formula` must be a string such as 'y ~ x1 + C(group)'; got {formula!r} ({type(formula).__name__}).")
    if formula.count("~") != 1 or not formula.split("~")[0].strip():
        raise ValueError(f"`formula` must have the form 'outcome ~ terms'; got {formula!r}.")


def _referenced_columns(formula: str, data: pd.DataFrame) -> list[Any]:
    """Columns of ``data`` whose names occur in ``formula`` (as names or inside ``Q("...")``)."""
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    quoted = re.findall(r"""Q\(\s*(?:'([^']*)'|"([^"]*)")\s*\)""", formula)
    tokens |= {single or double for single, double in quoted}
    return [c for c in data.columns if str(c) in tokens]


def fit_model(formula: str, data: pd.DataFrame, model: str, *, missing: str):
    """Fit ``model`` ("ols", "logit" or "poisson") to ``data`` by ``formula``; return the results.

    Missing values in the columns the formula uses are refused (``missing="raise"``) or their
    rows dropped; the outcome must be numeric (booleans count as 0/1), in [0, 1] for a logit
    model and non-negative for a Poisson model; the design must have full column rank.
    """
    data = check_frame(data)
    what = f"an {_MODEL_NAMES[model]} fit" if model == "ols" else f"a {_MODEL_NAMES[model]} fit"
    frame = select(data, _referenced_columns(formula, data), missing=missing, what=what)
    fit_data = data.loc[frame.index]
    outcome = formula.split("~")[0].strip()
    if outcome in data.columns:
        series = fit_data[outcome]
        if pd.api.types.is_bool_dtype(series.dtype):
            fit_data = fit_data.assign(**{outcome: series.astype(float)})
        elif not pd.api.types.is_numeric_dtype(series.dtype):
            raise TypeError(
                f"Column {outcome!r} (the outcome of `formula`) must hold numbers for {what}; it has dtype {series.dtype}."
            )
        values = fit_data[outcome].to_numpy(dtype=float)
        if model == "logit" and np.any((values < 0) | (values > 1)):
            bad = float(values[(values < 0) | (values > 1)][0])
            raise ValueError(f"Column {outcome!r} (the outcome of a logit model) must hold 0/1; it holds {bad!r}.")
        if model == "poisson" and np.any(values < 0):
            bad = float(values[values < 0][0])
            raise ValueError(f"Column {outcome!r} (the outcome of a Poisson model) must be >= 0; it holds {bad!r}.")
    try:
        if model == "ols":
            mod = smf.ols(formula, data=fit_data, missing="raise")
        else:
            family = sm.families.Binomial() if model == "logit" else sm.families.Poisson()
            mod = smf.glm(formula, data=fit_data, family=family, missing="raise")
    except Exception as err:  # patsy / formulaic errors have no common base class
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        name = re.search(r"name '([^']+)' is not defined", message)
        if name:
            raise ValueError(
                f"`formula` {formula!r} refers to {name.group(1)!r}, which is not a column of `data`; "
                f"available columns: {list(data.columns)!r}."
            ) from None
        raise ValueError(f"Cannot build the model {formula!r} from `data`: {message}") from err
    n_obs, n_params = mod.exog.shape
    if np.linalg.matrix_rank(mod.exog) < n_params:
        raise ValueError(
            f"The design matrix of {formula!r} is rank deficient (columns {mod.exog_names!r}); "
            "drop collinear terms so that each coefficient is identified."
        )
    if n_obs <= n_params:
        raise ValueError(f"{formula!r} has {n_params} coefficients and only {n_obs} observations; it needs more observations.")
    fit = mod.fit() if model == "ols" else mod.fit(**GLM_FIT_OPTIONS)
    if model != "ols" and not fit.converged:
        warnings.warn(f"The {_MODEL_NAMES[model]} fit of {formula!r} did not converge.", SelectiveWarning, stacklevel=3)
    return fit


def _model_call(formula: str, model: str) -> str:
    if model == "ols":
        return f"statsmodels.formula.api.ols({formula!r}, data).fit()"
    options = ", ".join(f"{k}={v!r}" for k, v in GLM_FIT_OPTIONS.items())
    return f"statsmodels.formula.api.glm({formula!r}, data, family={_FAMILY_CALLS[model]}).fit({options})"


def _term_index(fit, term: str) -> int:
    names = list(fit.params.index)
    if term not in names:
        raise ValueError(f"`term` {term!r} is not a coefficient of the model; its coefficients are {names!r}.")
    return names.index(term)


@dataclass(frozen=True, slots=True, kw_only=True)
class CoefficientTest(TestSpec):
    """Wald test that the coefficient ``term`` of a regression model equals ``value``.

    ``model="ols"`` fits ``statsmodels.formula.api.ols(formula, data)`` and uses the t
    distribution with the residual df (R: ``summary(lm(...))``); ``"logit"`` and
    ``"poisson"`` fit ``glm`` with the binomial / Poisson family (canonical link) and use the
    standard normal (R: ``summary(glm(...))``); GLMs are fitted by IRLS to a relative deviance
    change of 1e-13 (``GLM_FIT_OPTIONS``). Numbers come from ``fit.t_test``; the interval is
    ``fit.conf_int``'s (one-sided for a one-sided alternative).
    """

    formula: str
    term: str
    model: str = "ols"
    value: float = 0.0

    def _check(self) -> None:
        _check_formula(self.formula)
        if not isinstance(self.term, str):
            raise TypeError(f"`term` must be a coefficient name (a string); got {self.term!r} ({type(self.term).__name__}).")
        check_choice("model", self.model, MODELS)
        check_value("value", self.value)

    def _describe(self) -> str:
        return f"coef[{self.term}] = {fmt(self.value)} in {_MODEL_NAMES[self.model]} {self.formula}"

    def run(self, data: pd.DataFrame) -> TestResult:
        fit = fit_model(self.formula, data, self.model, missing=self.missing)
        index = _term_index(fit, self.term)
        r_matrix = np.zeros((1, len(fit.params)))
        r_matrix[0, index] = 1.0
        contrast = fit.t_test((r_matrix, np.array([float(self.value)])))
        statistic = float(np.squeeze(contrast.statistic))
        estimate = float(fit.params.iloc[index])
        se = float(fit.bse.iloc[index])
        if self.model == "ols":
            df = float(fit.df_resid)
            dist = scipy.stats.t(df)
            rule = IntervalRule(kind="t", params=(estimate, se, df), alternative=self.alternative)
        else:
            df = float("nan")
            dist = scipy.stats.norm()
            rule = IntervalRule(kind="normal", params=(estimate, se), alternative=self.alternative)
        if self.alternative == "two-sided":
            pvalue = float(np.squeeze(contrast.pvalue))
        elif self.alternative == "greater":
            pvalue = float(dist.sf(statistic))
        else:
            pvalue = float(dist.sf(-statistic))
        reference = "t" if self.model == "ols" else "normal"
        method = f"{_model_call(self.formula, self.model)}.t_test('{self.term} = {fmt(self.value)}') ({reference})"
        return make_result(
            spec=self, estimate=estimate, statistic=statistic, pvalue=pvalue, df=df, rule=rule, method=method,
            n_obs=int(fit.nobs),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class JointWaldTest(TestSpec):
    """Joint Wald test that the coefficients ``terms`` of a regression model are all zero.

    Runs ``fit.wald_test(R, use_f=use_f, scalar=True)`` with one row of ``R`` per term. By
    default (``use_f=None``) an OLS model gets the F test (``q`` and residual df, as R's
    ``anova`` of nested ``lm`` fits) and a GLM the chi-square test (``q`` df); pass ``use_f``
    to choose. ``statistic`` is F or chi-square accordingly, ``df`` its (numerator) df and
    ``df_denom`` the F denominator df. No estimate or interval: they are NaN. ``alternative``
    must be ``"two-sided"``.
    """

    formula: str
    terms: tuple[str, ...]
    model: str = "ols"
    use_f: bool | None = None

    def _check(self) -> None:
        _check_formula(self.formula)
        if isinstance(self.terms, list):
            object.__setattr__(self, "terms", tuple(self.terms))
        if not isinstance(self.terms, tuple) or not self.terms or not all(isinstance(t, str) for t in self.terms):
            raise TypeError(f"`terms` must be a non-empty tuple of coefficient names; got {self.terms!r}.")
        if len(set(self.terms)) != len(self.terms):
            raise ValueError(f"`terms` must not repeat a coefficient; got {self.terms!r}.")
        check_choice("model", self.model, MODELS)
        if self.use_f is not None and not isinstance(self.use_f, bool):
            raise TypeError(f"`use_f` must be True, False or None; got {self.use_f!r}.")
        if self.alternative != "two-sided":
            raise ValueError(f"`alternative` must be 'two-sided' for a joint Wald test; got {self.alternative!r}.")

    @property
    def uses_f(self) -> bool:
        """Whether the statistic is F (else chi-square)."""
        return self.model == "ols" if self.use_f is None else self.use_f

    def _describe(self) -> str:
        coefs = " = ".join(f"coef[{t}]" for t in self.terms)
        return f"{coefs} = 0 in {_MODEL_NAMES[self.model]} {self.formula} ({'F' if self.uses_f else 'chi-square'} test)"

    def run(self, data: pd.DataFrame) -> TestResult:
        fit = fit_model(self.formula, data, self.model, missing=self.missing)
        r_matrix = np.zeros((len(self.terms), len(fit.params)))
        for row, term in enumerate(self.terms):
            r_matrix[row, _term_index(fit, term)] = 1.0
        use_f = self.uses_f
        wald = fit.wald_test(r_matrix, use_f=use_f, scalar=True)
        n_terms = len(self.terms)
        method = (
            f"{_model_call(self.formula, self.model)}.wald_test(R, use_f={use_f}, scalar=True) "
            f"({'F' if use_f else 'chi-square'}, R selects {list(self.terms)!r})"
        )
        return make_result(
            spec=self,
            estimate=float("nan"),
            statistic=float(wald.statistic),
            pvalue=float(wald.pvalue),
            df=float(wald.df_num) if use_f else float(n_terms),
            df_denom=float(wald.df_denom) if use_f else float("nan"),
            rule=IntervalRule(kind="none"),
            method=method,
            n_obs=int(fit.nobs),
        )
