"""The result of a confirmatory test, and the rule that rebuilds its interval at any level.

Every interval is computed here from upper-tail quantiles (``isf``), never from ``ppf(1 - x)``:
the package widens intervals to a corrected level :math:`1 - \\gamma` with :math:`\\gamma` as
small as :math:`10^{-12}` or below, where ``1 - gamma`` has lost most of its digits (and is
exactly 1.0 once :math:`\\gamma < 1.1 \\times 10^{-16}`). Pass such levels as ``alpha=gamma``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats
from statsmodels.stats.proportion import proportion_confint

from .._validation import check_in_interval

__all__ = ["TestResult", "IntervalRule", "PVALUE_METHODS"]

_NAN = float("nan")

#: How a p-value is obtained, from the strongest guarantee to the weakest (see :class:`TestResult`).
PVALUE_METHODS = ("exact", "exact_under_model", "permutation", "asymptotic")

INTERVAL_KINDS = ("t", "normal", "wilson", "fisher_z", "clopper_pearson", "none")

#: Columns of :meth:`TestResult.to_frame`, the same for every test.
FRAME_COLUMNS = (
    "estimate",
    "ci_low",
    "ci_high",
    "statistic",
    "df",
    "df_denom",
    "pvalue_naive",
    "pvalue_method",
    "trusted_level",
    "alternative",
    "confidence_level",
    "n_obs",
    "method",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalRule:
    """How a test's confidence interval is built, so it can be rebuilt at another level.

    ``kind`` is one of

    - ``"t"``: ``params = (estimate, standard_error, df)``, estimate +- t quantile * se;
    - ``"normal"``: ``params = (estimate, standard_error)``, estimate +- normal quantile * se;
    - ``"wilson"``: ``params = (count, nobs)``, the Wilson (1927) score interval for a proportion
      (statsmodels ``proportion_confint(method="wilson")``, whose critical value is an upper
      quantile, ``norm.isf``, so it stays accurate for tiny miscoverages);
    - ``"fisher_z"``: ``params = (r, n, variance_factor)``,
      ``tanh(atanh(r) +- z * sqrt(variance_factor / (n - 3)))``;
    - ``"clopper_pearson"``: ``params = (count, nobs)``, the exact interval of Clopper and
      Pearson (1934), dual to the exact binomial test (beta quantiles);
    - ``"none"``: no interval (a joint or omnibus test); both ends are NaN.

    One-sided alternatives give one-sided intervals (the ones dual to the test), whose open
    end is the matching entry of ``bounds``. Both ends are clipped to ``bounds``.
    ``transform="exp"`` reports ``exp`` of both ends (odds and rate ratios from a coefficient
    interval on the link scale; exp is increasing, so coverage is unchanged); ``bounds`` are
    then on the ratio scale.

    ``min_alpha`` is the smallest miscoverage at which the interval is trusted: below it
    :meth:`interval` returns ``(nan, nan)`` instead of a number. It is 0 for the intervals of
    :meth:`TestSpec.run <selective.hypotheses.TestSpec.run>` (whose results carry their
    ``trusted_level`` and ``interval_trusted_level``); results of ``run_at_level`` whose p-value comes
    from an exact or permutation test, but whose interval is still the ordinary asymptotic one, set it
    to the ordinary result's :attr:`~TestResult.interval_level`.
    """

    kind: str
    params: tuple[float, ...] = ()
    alternative: str = "two-sided"
    bounds: tuple[float, float] = (-math.inf, math.inf)
    min_alpha: float = 0.0
    transform: str = "identity"

    def __post_init__(self) -> None:
        if self.transform not in ("identity", "exp"):
            raise ValueError(f"`transform` must be 'identity' or 'exp'; got {self.transform!r}.")
        if self.kind not in INTERVAL_KINDS:
            allowed = ", ".join(repr(k) for k in INTERVAL_KINDS)
            raise ValueError(f"`kind` must be one of {allowed}; got {self.kind!r}.")
        check_in_interval("min_alpha", self.min_alpha, low=0.0, high=1.0)

    def interval(self, alpha: float) -> tuple[float, float]:
        """The interval of miscoverage ``alpha`` (confidence level ``1 - alpha``)."""
        if self.kind == "none" or alpha < self.min_alpha:
            return (_NAN, _NAN)
        tail = alpha / 2.0 if self.alternative == "two-sided" else alpha
        if self.kind == "t":
            estimate, se, df = self.params
            crit = float(scipy.stats.t.isf(tail, df))
            low, high = estimate - crit * se, estimate + crit * se
        elif self.kind == "normal":
            estimate, se = self.params
            crit = float(scipy.stats.norm.isf(tail))
            low, high = estimate - crit * se, estimate + crit * se
        elif self.kind == "wilson":
            count, nobs = self.params  # statsmodels' Wilson interval, two-sided at 2 * tail (upper quantiles)
            low, high = (float(v) for v in proportion_confint(count, nobs, alpha=2.0 * tail, method="wilson"))
        elif self.kind == "clopper_pearson":
            low, high = _clopper_pearson(*self.params, tail=tail)
        else:  # fisher_z
            r, n, factor = self.params
            crit = float(scipy.stats.norm.isf(tail))
            z, se = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r), math.sqrt(factor / (n - 3))
            low, high = math.tanh(z - crit * se), math.tanh(z + crit * se)
        if self.transform == "exp":
            with np.errstate(over="ignore"):
                low, high = float(np.exp(low)), float(np.exp(high))
        lo_bound, hi_bound = self.bounds
        if self.alternative == "greater":
            high = hi_bound
        elif self.alternative == "less":
            low = lo_bound
        return (float(min(max(low, lo_bound), hi_bound)), float(max(min(high, hi_bound), lo_bound)))


def _clopper_pearson(count: float, nobs: float, *, tail: float) -> tuple[float, float]:
    """Clopper-Pearson (1934) interval: lower end the ``tail`` quantile of Beta(k, n - k + 1),
    upper end the upper ``tail`` quantile of Beta(k + 1, n - k) (both by direct quantiles, so
    accurate for tiny ``tail``)."""
    k, n = count, nobs
    low = 0.0 if k <= 0 else float(scipy.stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k >= n else float(scipy.stats.beta.isf(tail, k + 1, n - k))
    return (low, high)


def miscoverage(confidence_level: float | None, alpha: float | None) -> float:
    """Turn exactly one of ``confidence_level`` / ``alpha`` into a miscoverage in (0, 1)."""
    if (confidence_level is None) == (alpha is None):
        raise TypeError(
            "Pass exactly one of `confidence_level` and `alpha` (the miscoverage, 1 - confidence_level); "
            f"got confidence_level={confidence_level!r}, alpha={alpha!r}."
        )
    if alpha is not None:
        return check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither")
    level = check_in_interval("confidence_level", confidence_level, low=0.0, high=1.0, closed="neither")
    return 1.0 - level  # exact for levels >= 0.5 (Sterbenz); tiny miscoverages should come as alpha


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    """Naive result of one confirmatory test: what the test would say had nothing been selected.

    Attributes
    ----------
    hypothesis : str
        The spec's label (or its generated description of the null hypothesis).
    estimate : float
        Point estimate of the tested quantity (NaN for joint and omnibus tests).
    statistic : float
        Test statistic (t, z, F or chi-square; t with ``n - 2`` df for correlations).
    df : float
        Degrees of freedom of the statistic's reference distribution (numerator df for an F
        test); NaN for normal (z) statistics.
    df_denom : float
        Denominator degrees of freedom of an F statistic; NaN otherwise.
    pvalue_naive : float
        The p-value ignoring any selection.
    ci_naive : tuple of float
        Confidence interval at ``confidence_level`` ignoring any selection; one-sided for a
        one-sided ``alternative``; ``(nan, nan)`` where the test has none.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    confidence_level : float
        Level of ``ci_naive``.
    n_obs : int
        Number of observations (rows) the test used.
    method : str
        The statsmodels / scipy call and options that produced the numbers.
    pvalue_method : str
        How ``pvalue_naive`` is obtained, one of :data:`PVALUE_METHODS`:

        - ``"exact"``: :math:`P(p \\le u) \\le u` at every level :math:`u` for every distribution
          of the null hypothesis (independent rows): the exact binomial test, Fisher's exact
          test (conditionally on the margins, hence also unconditionally), Spearman's exact
          null distribution by complete enumeration.
        - ``"exact_under_model"``: exact at every level when the parametric model the spec
          names holds (normal samples for the t-tests, normal errors for OLS and its F test,
          bivariate normality or one normal variable for Pearson's test); outside that model
          it is an approximation this package does not bound. The model is an assumption of
          the analysis, to be stated with the result.
        - ``"permutation"``: a permutation (randomisation) p-value, complete,
          :math:`\\#\\{T_\\pi \\ge T\\}/N`, or Monte Carlo, :math:`(1 + \\#\\{T^* \\ge T\\})/(1 + B)`
          or, stopped at the h-th resample at least as extreme (the L-th), h/L (Besag and Clifford);
          valid at every level when the permuted units are exchangeable under the null
          hypothesis (each spec's ``run_at_level`` names the exchangeability it rests on).
        - ``"asymptotic"``: the reference distribution comes from a limit theorem (central
          limit theorem, Wilks); accurate in the bulk, not in the far tail.
    trusted_level : float
        The smallest level :math:`u_0` such that, for every level :math:`u \\ge u_0`, the
        rejection rate :math:`P(p \\le u)` under the null hypothesis is trusted to be at most
        :math:`u` (for an asymptotic p-value: at most :math:`1.1\\,u`, Bradley's stringent
        criterion). 0.0 for exact, exact-under-model and permutation p-values (under their
        stated assumptions); for asymptotic ones the documented rule of
        :mod:`selective.hypotheses._trust` (1.0: trusted at no level below 1). A p-value must
        not be compared with a threshold below ``trusted_level``; neither may the interval
        ``ci_at(alpha=gamma)`` with ``gamma`` below :attr:`interval_level` be reported as valid.
    interval_trusted_level : float or None
        The smallest miscoverage at which the interval is trusted, when it differs from the
        p-value's: a GLM coefficient's p-value is trusted from the law of its score under the null
        (the null fit's means), its interval, which must cover the true coefficient whatever it is,
        from the fitted means, where a strong effect makes the level larger (docs/THEORY.md 7.1).
        None: the same as ``trusted_level``.
    model_result : object or None
        The fitted statsmodels results object behind the numbers where one exists
        (``RegressionResults`` / ``GLMResults`` of :class:`~selective.hypotheses.CoefficientTest`
        and :class:`~selective.hypotheses.JointWaldTest`), for its ``summary()``, residuals and
        diagnostics; None otherwise. Not compared, not shown by ``repr``, not written by
        :meth:`to_dict` and not pickled (a formula fit does not survive unpickling in
        patsy): a result read back or unpickled has None.

    Notes
    -----
    statsmodels / scipy names are available too: :attr:`pvalue` (= ``pvalue_naive``),
    ``statistic``, :meth:`conf_int` (= ``ci_at(alpha=...)``) and :meth:`summary` (a text block);
    notebooks show :meth:`_repr_html_`. Every number is naive: it ignores any selection
    (:meth:`selective.Analysis.report` gives the corrected ones).
    """

    __test__ = False  # a class named Test* must not be collected by pytest

    hypothesis: str
    estimate: float
    statistic: float
    df: float
    pvalue_naive: float
    ci_naive: tuple[float, float]
    alternative: str
    confidence_level: float
    method: str = field(repr=False)
    n_obs: int
    df_denom: float = _NAN
    pvalue_method: str = "asymptotic"
    trusted_level: float = 1.0
    interval_trusted_level: float | None = field(default=None, repr=False)
    interval_rule: IntervalRule = field(default=IntervalRule(kind="none"), repr=False, compare=False)
    model_result: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.pvalue_method not in PVALUE_METHODS:
            allowed = ", ".join(repr(m) for m in PVALUE_METHODS)
            raise ValueError(f"`pvalue_method` must be one of {allowed}; got {self.pvalue_method!r}.")
        check_in_interval("trusted_level", self.trusted_level, low=0.0, high=1.0)
        if self.interval_trusted_level is not None:
            check_in_interval("interval_trusted_level", self.interval_trusted_level, low=0.0, high=1.0)

    @property
    def interval_level(self) -> float:
        """The smallest miscoverage at which ``ci_at`` is trusted: the larger of ``trusted_level``
        and ``interval_trusted_level``."""
        return max(self.trusted_level, self.interval_trusted_level or 0.0)

    def __reduce__(self):
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "model_result"}
        return (_rebuild_result, (state,))

    @property
    def pvalue(self) -> float:
        """The naive p-value (``pvalue_naive``), under the name statsmodels and scipy use."""
        return self.pvalue_naive

    def conf_int(self, alpha: float = 0.05) -> tuple[float, float]:
        """The naive interval of miscoverage ``alpha`` (statsmodels' name): ``ci_at(alpha=alpha)``.

        One-sided when ``alternative`` is; ``(nan, nan)`` for a test without an interval.
        """
        return self.ci_at(alpha=alpha)

    def _rows(self) -> list[tuple[str, str]]:
        level = f"{100 * self.confidence_level:.4g}%"
        side = "" if self.alternative == "two-sided" else f", one-sided ({self.alternative})"
        low, high = self.ci_naive
        ci = "n/a" if math.isnan(low) or math.isnan(high) else f"[{_num(low)}, {_num(high)}]"
        df = "" if math.isnan(self.df) else _num(self.df)
        df += "" if math.isnan(self.df_denom) else f", {_num(self.df_denom)}"
        trust = ("trusted at every level" if self.trusted_level == 0 else "trusted at no level below 1"
                 if self.trusted_level >= 1 else f"trusted down to {self.trusted_level:.3g}")
        rows = [("estimate", _num(self.estimate)), (f"{level} CI{side}", ci), ("statistic", _num(self.statistic))]
        rows += [("df", df)] if df else []
        rows += [("p-value", _pvalue_text(self.pvalue_naive)), ("alternative", self.alternative),
                 ("N", str(self.n_obs)), ("p-value method", f"{self.pvalue_method} ({trust})"),
                 ("method", self.method)]
        return rows

    def summary(self) -> str:
        """A plain-text block of the result (as statsmodels' or R's print), headed by the hypothesis."""
        rows = self._rows()
        width = max(len(k) for k, _ in rows)
        lines = [f"{k:<{width}}  {v}" for k, v in rows]
        rule = "=" * min(100, max(len(self.hypothesis), *(len(line) for line in lines)))
        return "\n".join([self.hypothesis, rule, *lines, rule, _NAIVE_NOTE])

    def __repr__(self) -> str:
        ci = ", ".join(_num(v) for v in self.ci_naive)
        return (f"TestResult({self.hypothesis!r}: estimate={_num(self.estimate)}, ci=({ci}), "
                f"statistic={_num(self.statistic)}, pvalue={_pvalue_text(self.pvalue_naive)}, "
                f"n_obs={self.n_obs}, pvalue_method={self.pvalue_method!r})")

    def _repr_html_(self) -> str:
        import html

        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                       f"{html.escape(v)}</td></tr>" for k, v in self._rows())
        return (f"<table><caption style='text-align:left'><b>{html.escape(self.hypothesis)}</b></caption>{body}"
                f"</table><p><i>{html.escape(_NAIVE_NOTE)}</i></p>")

    def trusted_at(self, level: float) -> bool:
        """Whether ``pvalue_naive`` may be compared with the threshold ``level``."""
        return self.trusted_level <= level

    def ci_at(self, confidence_level: float | None = None, *, alpha: float | None = None) -> tuple[float, float]:
        """Recompute the naive interval at another level.

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1).
        alpha : float, optional
            Miscoverage ``1 - confidence_level`` in (0, 1). Use it for levels within about
            ``1e-10`` of 1, such as the corrected level :math:`1 - \\gamma`: the quantiles are
            upper-tail ones (``isf``), accurate for any ``alpha`` down to the smallest floats.

        Returns
        -------
        tuple of float
            ``(low, high)``; one-sided when ``alternative`` is; ``(nan, nan)`` for tests
            without an interval.
        """
        return self.interval_rule.interval(miscoverage(confidence_level, alpha))

    def to_frame(self) -> pd.DataFrame:
        """One row indexed by ``hypothesis``; the columns are the same for every test."""
        row = {
            "estimate": self.estimate,
            "ci_low": self.ci_naive[0],
            "ci_high": self.ci_naive[1],
            "statistic": self.statistic,
            "df": self.df,
            "df_denom": self.df_denom,
            "pvalue_naive": self.pvalue_naive,
            "pvalue_method": self.pvalue_method,
            "trusted_level": self.trusted_level,
            "alternative": self.alternative,
            "confidence_level": self.confidence_level,
            "n_obs": self.n_obs,
            "method": self.method,
        }
        frame = pd.DataFrame([row], index=pd.Index([self.hypothesis], name="hypothesis"))
        return frame.astype({c: float for c in FRAME_COLUMNS if c not in _NON_FLOAT_COLUMNS})

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-able values (non-finite floats as the strings ``"nan"``,
        ``"inf"``, ``"-inf"``); :meth:`from_dict` reads it back, interval rule included."""
        rule = self.interval_rule
        return {
            "hypothesis": self.hypothesis,
            "estimate": _json_float(self.estimate),
            "statistic": _json_float(self.statistic),
            "df": _json_float(self.df),
            "df_denom": _json_float(self.df_denom),
            "pvalue_naive": _json_float(self.pvalue_naive),
            "pvalue_method": self.pvalue_method,
            "trusted_level": _json_float(self.trusted_level),
            "interval_trusted_level": None if self.interval_trusted_level is None
            else _json_float(self.interval_trusted_level),
            "ci_naive": [_json_float(v) for v in self.ci_naive],
            "alternative": self.alternative,
            "confidence_level": _json_float(self.confidence_level),
            "method": self.method,
            "n_obs": int(self.n_obs),
            "interval_rule": {
                "kind": rule.kind,
                "params": [_json_float(v) for v in rule.params],
                "alternative": rule.alternative,
                "bounds": [_json_float(v) for v in rule.bounds],
                "min_alpha": _json_float(rule.min_alpha),
                "transform": rule.transform,
            },
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TestResult:
        """Rebuild a result written by :meth:`to_dict`.

        Records written before ``pvalue_method`` and ``trusted_level`` existed read back as
        ``"asymptotic"`` and 1.0 (trusted at no level): nothing then says where they hold.
        """
        if not isinstance(d, dict):
            raise TypeError(f"`d` must be a dict written by TestResult.to_dict; got {type(d).__name__}.")
        missing = [k for k in _REQUIRED_KEYS if k not in d]
        if missing:
            raise ValueError(f"`d` is not a TestResult record: it lacks {missing!r}.")
        r = d.get("interval_rule") or {"kind": "none"}
        rule = IntervalRule(
            kind=r["kind"],
            params=tuple(float(v) for v in r.get("params", ())),
            alternative=r.get("alternative", "two-sided"),
            bounds=tuple(float(v) for v in r.get("bounds", (-math.inf, math.inf))),  # type: ignore[arg-type]
            min_alpha=float(r.get("min_alpha", 0.0)),
            transform=r.get("transform", "identity"),
        )
        return cls(
            hypothesis=d["hypothesis"],
            estimate=float(d["estimate"]),
            statistic=float(d["statistic"]),
            df=float(d["df"]),
            df_denom=float(d.get("df_denom", _NAN)),
            pvalue_naive=float(d["pvalue_naive"]),
            pvalue_method=d.get("pvalue_method", "asymptotic"),
            trusted_level=float(d.get("trusted_level", 1.0)),
            interval_trusted_level=None if d.get("interval_trusted_level") is None
            else float(d["interval_trusted_level"]),
            ci_naive=(float(d["ci_naive"][0]), float(d["ci_naive"][1])),
            alternative=d.get("alternative", "two-sided"),
            confidence_level=float(d.get("confidence_level", _NAN)),
            method=d["method"],
            n_obs=int(d["n_obs"]),
            interval_rule=rule,
        )


def _rebuild_result(state: dict[str, Any]) -> TestResult:
    """Unpickle a :class:`TestResult` (without its ``model_result``)."""
    return TestResult(**state)


_NAIVE_NOTE = "Naive result: it ignores any selection; Analysis.report() gives the corrected p-values."


def _num(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.4g}"


def _pvalue_text(p: float) -> str:
    return "nan" if math.isnan(p) else f"{p:.3g}"


_NON_FLOAT_COLUMNS = ("alternative", "method", "n_obs", "pvalue_method")
_REQUIRED_KEYS = ("hypothesis", "estimate", "statistic", "df", "pvalue_naive", "ci_naive", "method", "n_obs")


def _json_float(x: float) -> float | str:
    f = float(x)
    return f if math.isfinite(f) else str(f)  # "nan", "inf", "-inf"; float() reads them back


def make_result(
    *,
    spec,
    estimate: float,
    statistic: float,
    pvalue: float,
    rule: IntervalRule,
    method: str,
    n_obs: int,
    pvalue_method: str,
    trusted_level: float,
    df: float = _NAN,
    df_denom: float = _NAN,
    model_result: Any = None,
    interval_trusted_level: float | None = None,
) -> TestResult:
    """Assemble a TestResult from a spec and the numbers of its statsmodels / scipy call."""
    alpha = 1.0 - spec.confidence_level
    return TestResult(
        pvalue_method=pvalue_method,
        trusted_level=float(trusted_level),
        interval_trusted_level=None if interval_trusted_level is None else float(interval_trusted_level),
        hypothesis=spec.hypothesis,
        estimate=float(estimate),
        statistic=float(statistic),
        df=float(df),
        df_denom=float(df_denom),
        pvalue_naive=float(np.clip(pvalue, 0.0, 1.0)),
        ci_naive=rule.interval(alpha),
        alternative=spec.alternative,
        confidence_level=float(spec.confidence_level),
        method=method,
        n_obs=int(n_obs),
        interval_rule=rule,
        model_result=model_result,
    )


def with_pvalue(
    result: TestResult,
    *,
    pvalue: float,
    method: str,
    pvalue_method: str,
    trusted_level: float = 0.0,
    statistic: float | None = None,
    df: float = _NAN,
    df_denom: float = _NAN,
    rule: IntervalRule | None = None,
) -> TestResult:
    """``result`` with the p-value of another version of the same test (for ``run_at_level``).

    Hypothesis, estimate, level and ``n_obs`` stay. Without a ``rule`` dual to the new
    version, the ordinary interval stays but is withheld (NaN) at miscoverages below the
    ordinary result's :attr:`~TestResult.interval_level`.
    """
    if rule is None:
        old = result.interval_rule
        rule = dataclasses.replace(old, min_alpha=max(old.min_alpha, result.interval_level))
    return dataclasses.replace(
        result,
        pvalue_naive=float(np.clip(pvalue, 0.0, 1.0)),
        method=method,
        pvalue_method=pvalue_method,
        trusted_level=float(trusted_level),
        statistic=result.statistic if statistic is None else float(statistic),
        df=float(df),
        df_denom=float(df_denom),
        interval_rule=rule,
        ci_naive=rule.interval(1.0 - result.confidence_level),
    )
