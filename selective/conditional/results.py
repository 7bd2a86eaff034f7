"""Frozen result objects of the conditional (polyhedral) inference functions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._sigma import inference_label

__all__ = ["SelectiveInferenceResult", "ManyMeansResult", "GroupInferenceResult"]

_COLUMNS = ("variable", "index", "sign", "estimate", "sd", "statistic", "vlo", "vup", "pvalue",
            "ci_low", "ci_high", "tailarea_low", "tailarea_high", "pvalue_naive",
            "pvalue_spacing", "pvalue_modspac", "pvalue_covtest")


def _conf_int(ci: np.ndarray, level_alpha: float, alpha: float | None) -> np.ndarray:
    """The stored intervals (miscoverage ``level_alpha``); another ``alpha`` needs a new run."""
    if alpha is not None and not math.isclose(float(alpha), float(level_alpha), rel_tol=1e-12):
        raise ValueError(f"`alpha` must be the miscoverage the intervals were computed at ({level_alpha!r}); got "
                         f"{alpha!r}. Rerun the inference with alpha={alpha!r} for other intervals.")
    return np.asarray(ci, dtype=float)


def _table(head: str, frame: pd.DataFrame) -> str:
    return head + "\n" + frame.to_string(float_format=lambda v: f"{v:.4g}")


def _ro(a, dtype=float) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectiveInferenceResult:
    """Per-variable selective (truncated-normal) inference after lasso / FS / LAR selection.

    Each row concerns one selected variable: its target coefficient ``estimate`` (``coef0``
    in R, on the scale of the original columns), standard deviation ``sd``, truncation limits
    ``vlo``, ``vup`` of ``sign * estimate``, the selective p-value, the interval and the tail
    areas at its ends. ``to_frame()`` always has the same columns; NaN where a column does not
    apply (e.g. spacing p-values outside ``lar_inference(..., type="active")``).

    ``sigma_mode`` says how valid the p-values are (``inference`` spells it out):
    ``"known"`` (sigma supplied: exact conditional), ``"interval"`` (sigma unknown, estimated
    from the full-model residuals: sup over the ``sigma_interval`` of the conditional p-value
    plus ``sigma_delta``, valid), ``"plugin"`` (approximate: an estimate plugged in, with
    ``sigma_df`` degrees of freedom) or ``"asymptotic"`` (binomial family).
    """

    __test__ = False
    procedure: str               # "fixed-lambda lasso", "forward stepwise", "least angle regression"
    type: str                    # "partial", "full", "active", "all", "aic"
    variables: tuple[str, ...]
    index: np.ndarray            # 0-based column indices of the selected variables
    sign: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    vlo: np.ndarray
    vup: np.ndarray
    pvalue: np.ndarray
    ci: np.ndarray               # shape (k, 2)
    tailarea: np.ndarray         # shape (k, 2)
    alpha: float
    sigma: float
    alternative: str
    pvalue_naive: np.ndarray | None = None
    pvalue_spacing: np.ndarray | None = None
    pvalue_modspac: np.ndarray | None = None
    pvalue_covtest: np.ndarray | None = None
    lam: float = math.nan        # lasso lambda (scale of (1/2)||y - Xb||^2 + lam ||b||_1)
    k: int | None = None         # number of path steps used
    khat: int | None = None      # ForwardStop (type "active") or AIC (type "aic") size
    sigma_rule: str = ""
    sigma_mode: str = "known"    # "known", "interval", "plugin" or "asymptotic"
    sigma_interval: tuple[float, float] | None = None  # 1 - sigma_delta interval ("interval")
    sigma_delta: float | None = None
    sigma_df: int | None = None  # degrees of freedom of the estimate ("interval", "plugin")
    contrasts: np.ndarray = field(repr=False, default=None)      # vmat, shape (k, n)
    constraints_A: np.ndarray = field(repr=False, default=None)  # selection event A y <= b
    constraints_b: np.ndarray = field(repr=False, default=None)
    extra: dict = field(repr=False, default_factory=dict)
    method: str = field(repr=False, default="")

    @property
    def statistic(self) -> np.ndarray:
        """Standardised statistic ``sign * estimate / sd``."""
        return self.sign * self.estimate / self.sd

    @property
    def inference(self) -> str:
        """What the p-values are: "exact conditional (sigma known)", "conditional, valid for
        unknown sigma (...)", "approximate (plug-in sigma, k residual df)", ..."""
        return inference_label(self.sigma_mode, self.sigma_df, self.sigma_delta)

    def __repr__(self) -> str:
        return (f"SelectiveInferenceResult(procedure={self.procedure!r}, type={self.type!r}, "
                f"variables={self.variables!r}, alternative={self.alternative!r}, "
                f"sigma={self.sigma:.6g}, inference={self.inference!r})")

    def summary(self) -> str:
        """A plain-text table of the results headed by what the p-values are."""
        head = (f"{self.procedure}, type={self.type}: {len(self.variables)} variable(s); "
                f"p-values: {self.inference}; sigma: {self.sigma_rule or 'supplied'}")
        cols = ["variable", "estimate", "sd", "pvalue", "ci_low", "ci_high"]
        body = self.to_frame()[cols].to_string(float_format=lambda v: f"{v:.4g}")
        return head + "\n" + body

    def conf_int(self, alpha: float | None = None) -> np.ndarray:
        """The selective intervals, shape ``(k, 2)`` (statsmodels' name); ``alpha`` may only
        repeat the miscoverage they were computed at."""
        return _conf_int(self.ci, self.alpha, alpha)

    @property
    def constraint_bytes(self) -> int:
        """Bytes held by the constraint matrix and offsets."""
        a = 0 if self.constraints_A is None else self.constraints_A.nbytes
        b = 0 if self.constraints_b is None else self.constraints_b.nbytes
        return int(a + b)

    def to_frame(self) -> pd.DataFrame:
        k = len(self.variables)

        def col(v):
            return np.full(k, np.nan) if v is None else np.asarray(v, dtype=float)

        data = {
            "variable": list(self.variables),
            "index": np.asarray(self.index, dtype=int),
            "sign": np.asarray(self.sign, dtype=int),
            "estimate": col(self.estimate),
            "sd": col(self.sd),
            "statistic": col(self.statistic),
            "vlo": col(self.vlo),
            "vup": col(self.vup),
            "pvalue": col(self.pvalue),
            "ci_low": self.ci[:, 0] if k else [],
            "ci_high": self.ci[:, 1] if k else [],
            "tailarea_low": self.tailarea[:, 0] if k else [],
            "tailarea_high": self.tailarea[:, 1] if k else [],
            "pvalue_naive": col(self.pvalue_naive),
            "pvalue_spacing": col(self.pvalue_spacing),
            "pvalue_modspac": col(self.pvalue_modspac),
            "pvalue_covtest": col(self.pvalue_covtest),
        }
        frame = pd.DataFrame(data, columns=list(_COLUMNS))
        frame.index = pd.RangeIndex(1, k + 1, name="step")
        return frame


@dataclass(frozen=True, slots=True, kw_only=True)
class ManyMeansResult:
    """Selective estimates, intervals and p-values for means selected from a Gaussian sample."""

    __test__ = False
    method: str                  # "BH(q)" or "top-K"
    selected: np.ndarray         # 0-based indices, increasing
    observed: np.ndarray
    mu_hat: np.ndarray           # per selected mean (conditional MLE)
    pvalue: np.ndarray
    ci: np.ndarray
    threshold: float
    sigma: float
    alpha: float
    bh_q: float | None
    k: int | None
    mu_hat_full: np.ndarray = field(repr=False, default=None)  # length n, 0 outside selection

    @property
    def estimate(self) -> np.ndarray:
        """The conditional estimates ``mu_hat``, under the name the other results use."""
        return self.mu_hat

    def conf_int(self, alpha: float | None = None) -> np.ndarray:
        """The selective intervals, shape ``(k, 2)``; ``alpha`` may only repeat their miscoverage."""
        return _conf_int(self.ci, self.alpha, alpha)

    def summary(self) -> str:
        """A plain-text table of the selected means, headed by the selection rule."""
        return _table(f"{self.method}: {len(self.selected)} mean(s) selected; sigma {self.sigma:.4g}; "
                      f"{100 * (1 - self.alpha):.4g}% selective intervals", self.to_frame())

    def to_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame({
            "index": np.asarray(self.selected, dtype=int),
            "observed": self.observed,
            "mu_hat": self.mu_hat,
            "pvalue": self.pvalue,
            "ci_low": self.ci[:, 0] if len(self.selected) else [],
            "ci_high": self.ci[:, 1] if len(self.selected) else [],
            "threshold": np.full(len(self.selected), self.threshold),
        })
        frame.index = pd.RangeIndex(1, len(self.selected) + 1, name="rank")
        return frame


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupInferenceResult:
    """Truncated chi (known sigma) or truncated F (unknown sigma) tests after grouped FS."""

    __test__ = False
    groups: tuple             # group labels in entry order
    df: np.ndarray
    statistic: np.ndarray     # TC (chi scale) or TF
    statistic_name: str       # "TC" or "TF"
    pvalue: np.ndarray
    support: tuple            # per group: array of rows [lower, upper]
    sigma: float              # nan when unknown
    df2: float                # denominator df (TF) or nan
    method: str = field(repr=False, default="")

    def summary(self) -> str:
        """A plain-text table of the group tests."""
        sigma = "unknown (truncated F)" if math.isnan(self.sigma) else f"{self.sigma:.4g} (truncated chi)"
        cols = ["group", "df", "statistic_name", "statistic", "pvalue"]
        return _table(f"grouped forward stepwise: {len(self.groups)} group(s); sigma {sigma}", self.to_frame()[cols])

    def to_frame(self) -> pd.DataFrame:
        lows = [float(np.min(s[:, 0])) for s in self.support]
        highs = [float(np.max(s[:, 1])) for s in self.support]
        frame = pd.DataFrame({
            "group": list(self.groups),
            "df": np.asarray(self.df, dtype=int),
            "statistic_name": [self.statistic_name] * len(self.groups),
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "support_low": lows,
            "support_high": highs,
            "n_support_intervals": [len(s) for s in self.support],
            "sigma": [self.sigma] * len(self.groups),
            "df2": [self.df2] * len(self.groups),
        })
        frame.index = pd.RangeIndex(1, len(self.groups) + 1, name="step")
        return frame
