"""Wald tests of regression coefficients (OLS, logit and Poisson GLMs) from model formulas.

Models are fitted with ``statsmodels.formula.api`` (``ols``; ``glm`` with the binomial family
and logit link, or the Poisson family and log link, as R's ``glm``), formulas such as
``"y ~ x1 + x2 + C(group)"``. Coefficients are named as statsmodels names them
(``"x1"``, ``"C(group)[T.b]"``, ``"Intercept"``).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats
import statsmodels.api as sm
import statsmodels.formula.api as smf

from .._validation import check_choice, exact_fit_problem, magnitude_problem
from ..exceptions import SelectiveWarning
from . import _resample, _trust, _trust_model
from ._null_fit import GLM_FIT_OPTIONS
from ._result import IntervalRule, TestResult, make_result, with_pvalue
from ._spec import TestSpec, check_frame, check_value, fmt, select

__all__ = ["CoefficientTest", "JointWaldTest"]

MODELS = ("ols", "logit", "poisson")
#: covariance estimators of the coefficients (statsmodels' names); "cluster" needs ``groups``
COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster")
#: why robust, clustered and weighted GLM p-values are trusted at no level below 1
ROBUST_NOTE = (
    "sandwich (robust or cluster) standard errors and weighted GLM fits are asymptotic and biased "
    "downward in small samples and with few clusters; no rule here bounds their tail error, so they are "
    "trusted at no level below 1 (trusted_level = 1.0) and corrected columns are withheld"
)
_RATIO_NAMES = {"logit": "odds ratio", "poisson": "rate ratio"}
_MODEL_NAMES = {"ols": "OLS", "logit": "logit", "poisson": "Poisson"}
_FAMILY_CALLS = {"logit": "sm.families.Binomial()", "poisson": "sm.families.Poisson()"}


def _check_formula(formula: Any) -> None:
    if not isinstance(formula, str):
        raise TypeError(
            f"`formula` must be a string such as 'y ~ x1 + C(group)'; got {formula!r} ({type(formula).__name__})."
        )
    if formula.count("~") != 1 or not formula.split("~")[0].strip():
        raise ValueError(f"`formula` must have the form 'outcome ~ terms'; got {formula!r}.")


def _referenced_columns(formula: str, data: pd.DataFrame) -> list[Any]:
    """Columns of ``data`` whose names occur in ``formula`` (as names or inside ``Q("...")``)."""
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    quoted = re.findall(r"""Q\(\s*(?:'([^']*)'|"([^"]*)")\s*\)""", formula)
    tokens |= {single or double for single, double in quoted}
    return [c for c in data.columns if str(c) in tokens]


def fit_model(formula: str, data: pd.DataFrame, model: str, *, missing: str, weights: Any = None,
              cov_type: str = "nonrobust", groups: Any = None):
    """Fit ``model`` ("ols", "logit" or "poisson") to ``data`` by ``formula``; return the results.

    Missing values in the columns the formula (and ``weights``, ``groups``) use are refused
    (``missing="raise"``) or their rows dropped; the outcome must be numeric (booleans count as
    0/1), in [0, 1] for a logit model and non-negative for a Poisson model; the design must
    have full column rank. ``weights`` names a column of positive finite weights (OLS: WLS;
    GLM: ``var_weights``); ``cov_type`` and ``groups`` choose the coefficient covariance.
    """
    data = check_frame(data)
    what = f"an {_MODEL_NAMES[model]} fit" if model == "ols" else f"a {_MODEL_NAMES[model]} fit"
    extra = [c for c in (weights, groups) if c is not None]
    frame = select(data, _referenced_columns(formula, data) + extra, numeric=[weights] if weights is not None else [],
                   missing=missing, what=what)
    fit_data = data.loc[frame.index]
    w = None
    if weights is not None:
        w = frame[weights].to_numpy(dtype=float)
        if not np.all(np.isfinite(w) & (w > 0)):
            bad = float(w[~(np.isfinite(w) & (w > 0))][0])
            raise ValueError(f"Column {weights!r} (the `weights`) must hold positive finite numbers; it holds {bad!r}.")
    cov_kwds = None
    if cov_type == "cluster":
        codes, uniques = pd.factorize(frame[groups], sort=True)
        if len(uniques) < 2:
            raise ValueError(f"Column {groups!r} (the `groups` of cov_type='cluster') must hold at least two "
                             f"clusters; it holds {len(uniques)}.")
        cov_kwds = {"groups": codes}
    outcome = formula.split("~")[0].strip()
    if outcome in data.columns:
        series = fit_data[outcome]
        if pd.api.types.is_bool_dtype(series.dtype):
            fit_data = fit_data.assign(**{outcome: series.astype(float)})
        elif not pd.api.types.is_numeric_dtype(series.dtype):
            raise TypeError(
                f"Column {outcome!r} (the outcome of `formula`) must hold numbers for {what}; "
                f"it has dtype {series.dtype}."
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
            mod = (smf.ols(formula, data=fit_data, missing="raise") if w is None
                   else smf.wls(formula, data=fit_data, weights=w, missing="raise"))
        else:
            family = sm.families.Binomial() if model == "logit" else sm.families.Poisson()
            with np.errstate(divide="ignore", invalid="ignore"):  # counts with no trial: refused below
                mod = smf.glm(formula, data=fit_data, family=family, missing="raise", var_weights=w)
    except Exception as err:  # patsy / formulaic errors have no common base class
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        name = re.search(r"name '([^']+)' is not defined", message)
        if name:
            raise ValueError(
                f"`formula` {formula!r} refers to {name.group(1)!r}, which is not a column of `data`; "
                f"available columns: {list(data.columns)!r}."
            ) from None
        raise ValueError(f"Cannot build the model {formula!r} from `data`: {message}") from err
    problem = _trust_model.counts_problem(mod) if model == "logit" else None
    if problem:
        raise ValueError(f"The outcome of {formula!r} (successes and failures of a logit model of counts) {problem}.")
    n_obs, n_params = mod.exog.shape
    problem = magnitude_problem(mod.wexog, mod.wendog, mod.exog_names) if model == "ols" else None
    if problem:
        raise ValueError(f"{formula!r}: {problem}.")
    if np.linalg.matrix_rank(mod.exog) < n_params:
        raise ValueError(
            f"The design matrix of {formula!r} is rank deficient (columns {mod.exog_names!r}); "
            "drop collinear terms so that each coefficient is identified."
        )
    if n_obs <= n_params:
        raise ValueError(
            f"{formula!r} has {n_params} coefficients and only {n_obs} observations; it needs more observations."
        )
    problem = exact_fit_problem(mod.wexog, mod.wendog) if model == "ols" else None
    if problem:
        raise ValueError(f"{formula!r} fits its outcome exactly up to rounding ({problem}), so no t-test can be made.")
    robust = {} if cov_type == "nonrobust" else {"cov_type": cov_type, "cov_kwds": cov_kwds}
    # OLS: t reference with robust covariance too (residual df; G - 1 for clusters), as R's coeftest
    fit = mod.fit(**robust, **({"use_t": True} if robust else {})) if model == "ols" else mod.fit(
        **GLM_FIT_OPTIONS, **robust)
    if model != "ols" and not fit.converged:
        warnings.warn(f"The {_MODEL_NAMES[model]} fit of {formula!r} did not converge.", SelectiveWarning, stacklevel=3)
    return fit


def _model_call(formula: str, model: str, spec: Any = None) -> str:
    weights = getattr(spec, "weights", None)
    cov_type = getattr(spec, "cov_type", "nonrobust")
    robust = "" if cov_type == "nonrobust" else f"cov_type={cov_type!r}" + (
        f", cov_kwds={{'groups': data[{spec.groups!r}]}}" if cov_type == "cluster" else "")
    if model == "ols":
        call = "ols" if weights is None else "wls"
        w = "" if weights is None else f", weights=data[{weights!r}]"
        return f"statsmodels.formula.api.{call}({formula!r}, data{w}).fit({robust + ', use_t=True' if robust else ''})"
    options = ", ".join(f"{k}={v!r}" for k, v in GLM_FIT_OPTIONS.items()) + (f", {robust}" if robust else "")
    w = "" if weights is None else f", var_weights=data[{weights!r}]"
    return f"statsmodels.formula.api.glm({formula!r}, data, family={_FAMILY_CALLS[model]}{w}).fit({options})"


def _check_options(spec: Any) -> None:
    """The covariance, weights and groups options shared by the regression specs."""
    check_choice("cov_type", spec.cov_type, COV_TYPES)
    if spec.cov_type == "cluster" and spec.groups is None:
        raise ValueError("`groups` must name the column of cluster labels when cov_type='cluster'; got None.")
    if spec.cov_type != "cluster" and spec.groups is not None:
        raise ValueError(f"`groups` is used only with cov_type='cluster'; got groups={spec.groups!r} with "
                         f"cov_type={spec.cov_type!r}.")
    for name in ("weights", "groups"):
        value = getattr(spec, name)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"`{name}` must be a column name (a string) or None; got {value!r}.")


def _plain(spec: Any) -> bool:
    """Whether the spec uses the ordinary covariance and no weights (the only case with trust rules)."""
    return spec.cov_type == "nonrobust" and spec.weights is None


def _fit(spec: Any, data: pd.DataFrame):
    return fit_model(spec.formula, data, spec.model, missing=spec.missing, weights=spec.weights,
                     cov_type=spec.cov_type, groups=spec.groups)


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

    OLS (and WLS) p-values are exact under normal errors (``"exact_under_model"``), trusted
    from the residuals' skewness and kurtosis and the tested column's shape
    (:func:`selective.hypotheses._trust_model.ols_trusted_level`). GLM Wald p-values are
    asymptotic, trusted by the rule of :func:`selective.hypotheses._trust.glm_trusted_level`
    (skewness, kurtosis and lattice step of the score): the p-value's at the means of the null fit, the
    interval's at the fitted means (``interval_trusted_level``), both with rule 2c's charge for 4+ coefficients
    (docs/THEORY.md 7.1). Below the trusted level, and when ``value`` is 0 with the ordinary covariance and no
    weights, ``run_at_level`` permutes the outcome within strata of rows with identical nuisance columns (all
    rows when the only other term is the intercept) and refers the standardised efficient score to that
    permutation law (sequential Monte Carlo, Besag and Clifford): exact whenever outcomes with the same
    nuisance values are exchangeable under the null (their whole law, dispersion included, free of the
    tested columns: a dispersion or error variance that varies with them breaks it, docs/THEORY.md 7.1). With a
    continuous nuisance covariate no exact version exists (residual permutation schemes
    such as Freedman and Lane's are only asymptotically valid), and the ordinary result is
    returned: withhold it.

    Variance checks (:func:`selective.hypotheses._trust_model.fit_variance_checks`, one-sided level
    0.01, docs/THEORY.md 7.1): OLS, when the squared residuals grow with the residualised tested
    column (studentised Breusch-Pagan, calibrated by permutation); Poisson, when the Pearson
    residuals are overdispersed along it. Either makes the model's variance understate the
    coefficient's: the p-value is then trusted at no level below 1 and the method says why. The
    permutation is not used when the spread grows with the tested column within strata. Logit
    has no check (a binary outcome's variance is fixed by its mean).

    Options (statsmodels' names):

    - ``cov_type``: ``"nonrobust"`` (default), ``"HC0"``-``"HC3"`` (heteroskedasticity-robust
      sandwich, as R's ``sandwich::vcovHC(type=...)``) or ``"cluster"`` with ``groups`` naming
      the column of cluster labels (``vcovCL`` with statsmodels' small-sample factor). OLS then
      keeps the t reference (residual df; G - 1 df for G clusters, as ``lmtest::coeftest``);
      GLMs the normal one.
    - ``weights``: a column of positive weights. OLS fits WLS (``Var(e_i) = sigma^2 / w_i``:
      exact under normal errors with those relative variances, as R's ``lm(weights=)``); GLMs
      pass them as ``var_weights`` (prior weights, as R's ``glm(weights=)``; not frequency
      weights: rows are not replicated and N is the number of rows).
    - ``exponentiate=True`` (logit and Poisson only): estimate and interval ends are
      ``exp`` of the coefficient's, the odds ratio or rate ratio; ``value`` stays on the
      coefficient (log) scale and the p-value is unchanged.

    Robust and cluster covariances, and weighted GLMs, give asymptotic p-values trusted at no
    level below 1 (``ROBUST_NOTE``): the report shows their naive p-values and withholds the
    corrected columns; ``run_at_level`` has no exact version for them.
    """

    formula: str
    term: str
    model: str = "ols"
    value: float = 0.0
    cov_type: str = "nonrobust"
    groups: str | None = None
    weights: str | None = None
    exponentiate: bool = False

    def _check(self) -> None:
        _check_formula(self.formula)
        if not isinstance(self.term, str):
            raise TypeError(
                f"`term` must be a coefficient name (a string); got {self.term!r} ({type(self.term).__name__})."
            )
        check_choice("model", self.model, MODELS)
        check_value("value", self.value)
        _check_options(self)
        if not isinstance(self.exponentiate, bool):
            raise TypeError(f"`exponentiate` must be True or False; got {self.exponentiate!r}.")
        if self.exponentiate and self.model == "ols":
            raise ValueError("`exponentiate=True` gives odds ratios (model='logit') or rate ratios (model='poisson'); "
                             "got model='ols'.")

    def _describe(self) -> str:
        what = f"coef[{self.term}] = {fmt(self.value)}"
        if self.exponentiate:
            what = f"{_RATIO_NAMES[self.model]} exp(coef[{self.term}]) = {fmt(math.exp(float(self.value)))}"
        return what + f" in {_MODEL_NAMES[self.model]} {self.formula}" + _options_label(self)

    def run(self, data: pd.DataFrame) -> TestResult:
        fit = _fit(self, data)
        index = _term_index(fit, self.term)
        r_matrix = np.zeros((1, len(fit.params)))
        r_matrix[0, index] = 1.0
        contrast = fit.t_test((r_matrix, np.array([float(self.value)])))
        statistic = float(np.squeeze(contrast.statistic))
        estimate = float(fit.params.iloc[index])
        se = float(fit.bse.iloc[index])
        ratio = {"transform": "exp", "bounds": (0.0, math.inf)} if self.exponentiate else {}
        if self.model == "ols":
            df = float(getattr(fit, "df_resid_inference", None) or fit.df_resid)  # G - 1 with clusters
            dist = scipy.stats.t(df)
            rule = IntervalRule(kind="t", params=(estimate, se, df), alternative=self.alternative)
        else:
            df = float("nan")
            dist = scipy.stats.norm()
            rule = IntervalRule(kind="normal", params=(estimate, se), alternative=self.alternative, **ratio)
        if self.alternative == "two-sided":
            pvalue = float(np.squeeze(contrast.pvalue))
        elif self.alternative == "greater":
            pvalue = float(dist.sf(statistic))
        else:
            pvalue = float(dist.sf(-statistic))
        reference = "t" if self.model == "ols" else "normal"
        call = _model_call(self.formula, self.model, self)
        method = f"{call}.t_test('{self.term} = {fmt(self.value)}') ({reference})"
        if self.exponentiate:
            method += f"; estimate and CI exponentiated ({_RATIO_NAMES[self.model]})"
        pvalue_method = "exact_under_model" if self.model == "ols" and self.cov_type == "nonrobust" else "asymptotic"
        if pvalue_method == "asymptotic" and not _plain(self):
            trusted, note, interval = 1.0, ROBUST_NOTE, 1.0
        else:  # OLS and WLS, plain GLMs
            trusted, note, interval = _trust_model.fit_trust(fit, self.model, [index], [self.term], self.alternative,
                                                             permutable=float(self.value) == 0.0 and _plain(self),
                                                             values=[float(self.value)])
        method += f"; {note}" if note else ""
        return make_result(
            spec=self, estimate=math.exp(estimate) if self.exponentiate else estimate, statistic=statistic,
            pvalue=pvalue, df=df, rule=rule, method=method,
            n_obs=int(fit.nobs), pvalue_method=pvalue_method, trusted_level=trusted, model_result=fit,
            interval_trusted_level=interval if interval > trusted else None,
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        if float(self.value) != 0.0 or not _plain(self):
            return None
        fit = _fit(self, data)
        return _score_permutation(self, fit, result, [self.term], level=level, rng=rng, max_resamples=max_resamples)


@dataclass(frozen=True, slots=True, kw_only=True)
class JointWaldTest(TestSpec):
    """Joint Wald test that the coefficients ``terms`` of a regression model are all zero.

    Runs ``fit.wald_test(R, use_f=use_f, scalar=True)`` with one row of ``R`` per term. By
    default (``use_f=None``) an OLS model gets the F test (``q`` and residual df, as R's
    ``anova`` of nested ``lm`` fits) and a GLM the chi-square test (``q`` df); pass ``use_f``
    to choose. ``statistic`` is F or chi-square accordingly, ``df`` its (numerator) df and
    ``df_denom`` the F denominator df. No estimate or interval: they are NaN. ``alternative``
    must be ``"two-sided"``.

    OLS with F: exact under normal errors. OLS with chi-square: asymptotic, trusted where
    its exact normal-model ratio to the F law stays within 10%; ``run_at_level`` then
    switches to the F reference. GLM: asymptotic (rule of :class:`CoefficientTest`, worst
    tested coefficient); ``run_at_level`` refers the score chi-square to the permutation
    law of the outcome within strata of identical nuisance rows, as :class:`CoefficientTest`.
    ``cov_type``, ``groups`` and ``weights`` as in :class:`CoefficientTest` (robust, cluster and
    weighted-GLM tests are trusted at no level below 1, and have no exact version).
    """

    formula: str
    terms: tuple[str, ...]
    model: str = "ols"
    use_f: bool | None = None
    cov_type: str = "nonrobust"
    groups: str | None = None
    weights: str | None = None

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
        _check_options(self)

    @property
    def uses_f(self) -> bool:
        """Whether the statistic is F (else chi-square)."""
        return self.model == "ols" if self.use_f is None else self.use_f

    def _describe(self) -> str:
        coefs = " = ".join(f"coef[{t}]" for t in self.terms)
        test = f"({'F' if self.uses_f else 'chi-square'} test)"
        return f"{coefs} = 0 in {_MODEL_NAMES[self.model]} {self.formula}{_options_label(self)} {test}"

    def _columns(self, fit) -> list[int]:
        return [_term_index(fit, t) for t in self.terms]

    def _wald(self, fit, use_f: bool):
        r_matrix = np.zeros((len(self.terms), len(fit.params)))
        for row, term in enumerate(self.terms):
            r_matrix[row, _term_index(fit, term)] = 1.0
        wald = fit.wald_test(r_matrix, use_f=use_f, scalar=True)
        method = (
            f"{_model_call(self.formula, self.model, self)}.wald_test(R, use_f={use_f}, scalar=True) "
            f"({'F' if use_f else 'chi-square'}, R selects {list(self.terms)!r})"
        )
        return wald, method

    def run(self, data: pd.DataFrame) -> TestResult:
        fit = _fit(self, data)
        use_f = self.uses_f
        wald, method = self._wald(fit, use_f)
        n_terms = len(self.terms)
        pvalue_method = "exact_under_model" if self.model == "ols" and use_f else "asymptotic"
        if self.cov_type != "nonrobust" or (self.model != "ols" and self.weights is not None):
            trusted, note = 1.0, ROBUST_NOTE
        else:  # no interval: the p-value's level only
            trusted, note, _ = _trust_model.fit_trust(fit, self.model, self._columns(fit), list(self.terms),
                                                      "two-sided", permutable=_plain(self))
            if self.model == "ols" and not use_f:
                trusted = max(trusted, _trust.chi2_vs_f_trusted_level(n_terms, float(fit.df_resid)))
        method += f"; {note}" if note else ""
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
            pvalue_method=pvalue_method,
            trusted_level=trusted,
            model_result=fit,
        )

    def _at_level(self, data, result, *, level, rng, max_resamples):
        if self.cov_type != "nonrobust" or (self.model != "ols" and self.weights is not None):
            return None
        fit = _fit(self, data)
        if self.model == "ols" and not self.uses_f:
            trusted, _, _ = _trust_model.fit_trust(fit, "ols", self._columns(fit), list(self.terms), "two-sided")
            if trusted <= level:
                wald, method = self._wald(fit, True)  # the chi-square reference: use the F law
                return with_pvalue(
                    result, pvalue=float(wald.pvalue), method=method, pvalue_method="exact_under_model",
                    statistic=float(wald.statistic), df=float(wald.df_num), df_denom=float(wald.df_denom),
                    trusted_level=trusted,
                )
        if self.weights is not None:
            return None  # the score permutation ignores weights: no exact version of a WLS test
        return _score_permutation(
            self, fit, result, list(self.terms), level=level, rng=rng, max_resamples=max_resamples
        )


def _options_label(spec: Any) -> str:
    """The options in a hypothesis label (empty for the defaults, so existing labels stay)."""
    parts = []
    if spec.weights is not None:
        parts.append(f"weights {spec.weights}")
    if spec.cov_type == "cluster":
        parts.append(f"cluster-robust SE by {spec.groups}")
    elif spec.cov_type != "nonrobust":
        parts.append(f"{spec.cov_type} SE")
    return f" [{', '.join(parts)}]" if parts else ""


def _score_permutation(spec, fit, result: TestResult, terms: list[str], *, level, rng, max_resamples):
    """Permutation version of a GLM coefficient test: the efficient score of the tested
    coefficients under the null fit, over permutations of the outcome within strata of
    identical nuisance rows.

    Under H0 (tested coefficients zero, independent rows, and an outcome law that depends on its
    row only through the nuisance columns: a common dispersion) outcomes of rows with the same
    nuisance values are exchangeable whatever that law. The null fit depends on the
    outcomes only through their stratum totals (canonical link), which the permutations keep,
    so the score :math:`U = \\tilde X^\\top (y_\\pi - \\hat\\mu_0)` is linear in the permuted
    outcomes. Returns None when fewer than half of the rows share their nuisance values with
    another row (the permutations could then barely move anything), and for counts of successes:
    counts are exchangeable only with equal trials and equal dispersion, and an adversarial review
    measured the within-strata check missing a dispersion that differs between groups (a
    beta-binomial in 12 of 60 rows: 2.6% at 0.01), so counts have no exact version.
    """
    exog = np.asarray(fit.model.exog, dtype=float)
    y = np.asarray(fit.model.endog, dtype=float)
    tested = [_term_index(fit, t) for t in terms]
    others = [c for c in range(exog.shape[1]) if c not in tested]
    n = len(y)
    nuisance = exog[:, others]
    strata = _trust_model.nuisance_strata(exog, tested)
    sizes = np.bincount(strata)
    if np.mean(sizes[strata] >= 2) < 0.5:
        return None
    if _trust_model.binomial_trials(fit) is not None:
        return None  # counts of successes: no permutation (docs/THEORY.md 7.1)
    n_resamples = _resample.n_resamples_for(level, max_resamples)
    if n_resamples is None:
        return None
    family = {"poisson": sm.families.Poisson(), "ols": sm.families.Gaussian()}.get(spec.model, sm.families.Binomial())
    if nuisance.shape[1]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                mu0 = np.asarray(sm.GLM(y, nuisance, family=family).fit(**GLM_FIT_OPTIONS).mu, dtype=float)
            except (ValueError, np.linalg.LinAlgError):  # e.g. a constant outcome: the deviance is 0/0
                return None
        if not np.all(np.isfinite(mu0)):
            return None
    else:
        mu0 = np.full(n, float(family.link.inverse(np.zeros(1))[0]))
    weights = {"poisson": mu0, "ols": np.ones(n)}.get(spec.model, mu0 * (1.0 - mu0))
    x_tested = exog[:, tested]
    if nuisance.shape[1]:
        zw = nuisance * weights[:, None]
        coef, *_ = np.linalg.lstsq(nuisance.T @ zw, zw.T @ x_tested, rcond=None)
        x_tested = x_tested - nuisance @ coef
    info = x_tested.T @ (x_tested * weights[:, None])
    resid = y - mu0
    if not np.any(np.abs(resid) > 1e-12 * (1.0 + np.max(np.abs(y)))):
        return None  # the null fit is exact: every permutation gives the same statistic
    if not _trust_model.fit_variance_checks(fit, spec.model, tested, terms)[2]:
        return None  # the outcome's spread grows with a tested column within strata (the result's method says so)
    if len(tested) == 1:
        scale = math.sqrt(float(info[0, 0]))
        if not scale > 0:
            return None

        def statistic(r: np.ndarray) -> np.ndarray:
            return (r @ x_tested)[..., 0] / scale

        alternative = spec.alternative
        name = "standardised score"
    else:
        inverse = np.linalg.pinv(info)

        def statistic(r: np.ndarray) -> np.ndarray:
            u = r @ x_tested
            return np.einsum("...i,ij,...j->...", u, inverse, u)

        alternative = "greater"
        name = "score chi-square"
    observed = float(statistic(resid))

    def simulate(gen: np.random.Generator, size: int) -> np.ndarray:
        return statistic(resid[_resample.stratified_permutations(gen, strata, size)])

    pvalue = _resample.monte_carlo_pvalue(
        observed, simulate, n_resamples, alternative=alternative, rng=rng, chunk=_resample.chunk_size(n)
    )
    method = (
        f"{name} of {terms!r} at the null {_MODEL_NAMES[spec.model]} fit against at most B = {n_resamples} permutations"
        f" of the outcome within {len(sizes)} strata of identical nuisance rows, {_resample.MONTE_CARLO_RULE}; exact "
        "when outcomes with the same nuisance values are exchangeable under H0"
    )
    return with_pvalue(result, pvalue=pvalue, method=method, pvalue_method="permutation", statistic=observed)
