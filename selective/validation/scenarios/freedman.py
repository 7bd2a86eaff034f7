"""Freedman's paradox (THEORY.md 6.3): the screening scenario (:class:`FreedmanScreening`)
and the reference experiment (:func:`freedman_paradox`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from ..._validation import check_int, check_probability
from ...accounting.certificates import DescriptionLength
from ..outcomes import Outcomes, replication_rng
from .base import _STANDARD, Scenario, _corrected, _two_sided_t
from .dp import ORACLE_LABELS, check_effects, with_oracle

__all__ = ["FreedmanScreening", "FreedmanSummary", "freedman_paradox"]


# --------------------------------------------------------------------------------------------
# 4. Freedman's screening
# --------------------------------------------------------------------------------------------


def _first_pass(x: np.ndarray, y: np.ndarray):
    """Batched OLS without intercept: x (r, n, p), y (r, n). Returns t, df, rss, tss."""
    n, p = x.shape[1], x.shape[2]
    g = np.linalg.inv(np.einsum("rni,rnj->rij", x, x))
    b = np.einsum("rij,rj->ri", g, np.einsum("rni,rn->ri", x, y))
    resid = y - np.einsum("rni,ri->rn", x, b)
    rss = (resid**2).sum(axis=1)
    s2 = rss / (n - p)
    t = b / np.sqrt(s2[:, None] * np.einsum("rii->ri", g))
    return t, n - p, rss, (y**2).sum(axis=1)


def _second_pass(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """OLS without intercept on the kept columns: uncentred R², overall F and its p-value, t p-values."""
    n, k = x.shape
    g = np.linalg.inv(x.T @ x)
    b = g @ (x.T @ y)
    rss = float(((y - x @ b) ** 2).sum())
    tss = float((y**2).sum())
    r2 = 1.0 - rss / tss
    f = (r2 / k) / ((1.0 - r2) / (n - k))
    t = b / np.sqrt(rss / (n - k) * np.diag(g))
    return {"r2": r2, "f": f, "pvalue_f": float(stats.f.sf(f, k, n - k)),
            "pvalues_t": _two_sided_t(t, n - k)}


def _orthogonal_signal(x: np.ndarray, k: int) -> np.ndarray:
    """x (r, n, p) with its first k columns made orthogonal to each other and the other columns
    orthogonal to them (uncentred, as the fits have no intercept), each column keeping its norm."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    q, rr = np.linalg.qr(x[:, :, :k])
    q = q * np.sign(np.diagonal(rr, axis1=1, axis2=2))[:, None, :]
    rest = x[:, :, k:] - q @ (q.transpose(0, 2, 1) @ x[:, :, k:])
    out = np.concatenate([q, rest], axis=2)
    return out * norms / np.linalg.norm(out, axis=1, keepdims=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class FreedmanScreening(Scenario):
    r"""Freedman's paradox (THEORY.md 6.3): screen 50 noise predictors at p < 0.25, refit, F-test.

    Data: ``n_obs`` x (``n_features`` + 1) i.i.d. N(0, 1); the last column is y. First pass:
    regress y on all predictors (no intercept) and keep those whose two-sided t p-value is below
    ``keep_below``. Second pass: regress y on the kept predictors (no intercept); the test is the
    overall F-test of that model. Naive: its p-value. Certificate: the kept set is one of
    :math:`2^p` subsets, ``DescriptionLength(2**p)``; Bonferroni over the :math:`2^p - 1`
    possible F-tests. Data splitting: the first pass on the first ``split_fraction`` of the rows
    (rows are exchangeable), the F-test on the others. Exact conditional: the same hypothesis
    tested on all rows given the screening outcome,
    :func:`selective.conditional.screening.screening_inference` (truncated F on the first pass's
    residual; exact here, since y is Gaussian with mean in the span of the predictors). Carving:
    data splitting's screen (its first-pass rows), with the F hypothesis of its kept model tested
    on all rows given that screen's outcome (``screen_rows``). Nothing is tested if nothing is
    kept.

    Signal variant: with ``coefficients``, the predictors are first made orthogonal in the sample,
    separately in data splitting's first-pass rows and in its test rows: the first
    ``len(coefficients)`` (the signal) are replaced by an orthogonal basis of their span, the
    others by their residuals on it, each column keeping its norm in that part. Then
    :math:`y = \sum_j \beta_j x_j + e` with :math:`\beta_j` = ``coefficients[j]`` and e the
    N(0, 1) column drawn as before. ``pvalue_oracle`` is the t-test of predictor 0 in the
    regression of y on the signal predictors, without selection.

    Truth: with ``coefficients=()`` (the default) global null (y is independent of every
    predictor), so the overall F hypothesis is true in every replication. Otherwise, given the
    predictors, the F hypothesis of a kept model M (its partial coefficients in the regression of
    :math:`E[y]` on M are all 0) is null iff M holds no signal predictor, exactly: the signal is
    orthogonal to every other predictor within each part, hence on all rows, so its projection on
    a model of noise predictors is 0, while in a model holding signal predictor j the partial
    coefficient of j is :math:`\beta_j`. Data splitting's model is judged on its test rows.
    """

    name: str = "freedman"
    n_obs: int = 100
    n_features: int = 50
    keep_below: float = 0.25
    split_fraction: float = 0.7
    coefficients: tuple[float, ...] = ()
    description: ClassVar[str] = "Freedman's paradox: screen predictors at p < 0.25, refit, overall F-test"
    chunk_size: ClassVar[int] = 200
    column_labels: ClassVar[dict[str, str]] = {
        **ORACLE_LABELS, "pvalue_conditional": "exact conditional (truncated F, sigma unknown)",
        "pvalue_carving": "carving (screen on data splitting's rows, exact conditional F on all rows)"}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("n_obs", self.n_obs, low=self.n_features + 2)
        check_probability("keep_below", self.keep_below, closed="neither")
        if round(self.split_fraction * self.n_obs) <= self.n_features:
            raise ValueError(f"`split_fraction` must leave more than n_features = {self.n_features} rows for the "
                             f"first pass; got {self.split_fraction!r} of {self.n_obs} rows.")
        n_test = self.n_obs - round(self.split_fraction * self.n_obs)
        coefs = check_effects("coefficients", self.coefficients, limit=min(self.n_features, n_test - 1),
                              what="min(n_features, data splitting's test rows - 1)")
        object.__setattr__(self, "coefficients", coefs)

    @property
    def columns(self) -> tuple[str, ...]:
        base = _STANDARD + ("pvalue_conditional", "pvalue_carving")
        return base + ("pvalue_oracle",) if self.coefficients else base

    @property
    def truth(self) -> str:
        k = len(self.coefficients)
        if k == 0:
            return f"Global null: y is independent of all {self.n_features} predictors."
        return (f"y depends on predictors 0..{k - 1} (coefficients {self.coefficients}, orthogonal to the other "
                f"{self.n_features - k}); the F hypothesis of a kept model is null iff it holds none of them.")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return 2**self.n_features - 1

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(2**self.n_features),)

    def draw_many(self, rngs) -> tuple[np.ndarray, np.ndarray]:
        d = np.stack([g.standard_normal((self.n_obs, self.n_features + 1)) for g in rngs])
        x, y = d[:, :, :-1], d[:, :, -1]
        k = len(self.coefficients)
        if k:
            ns = int(round(self.split_fraction * self.n_obs))
            x = np.concatenate([_orthogonal_signal(x[:, :ns], k), _orthogonal_signal(x[:, ns:], k)], axis=1)
            y = y + x[:, :, :k] @ np.asarray(self.coefficients)
        return x, y

    def conditional(self, x: np.ndarray, y: np.ndarray, screen_rows: int | None = None) -> float:
        """The exact conditional p-value of the overall F hypothesis of the kept model, given the screen
        on all rows or on the first ``screen_rows`` (carving); nan if nothing is kept."""
        from ...conditional.screening import screening_inference

        rows = None if screen_rows is None else np.arange(screen_rows)
        res = screening_inference(x, y, keep_below=self.keep_below, screen_rows=rows)
        return float(res.pvalue[0]) if len(res.tested) else math.nan

    def replicate_many(self, rngs):
        x, y = self.draw_many(rngs)
        r = len(rngs)
        t, df, _, _ = _first_pass(x, y)
        kept = _two_sided_t(t, df) < self.keep_below
        ns = int(round(self.split_fraction * self.n_obs))
        ts, dfs, _, _ = _first_pass(x[:, :ns], y[:, :ns])
        kept_s = _two_sided_t(ts, dfs) < self.keep_below
        p = np.full(r, np.nan)
        ps = np.full(r, np.nan)
        pc = np.full(r, np.nan)
        pk = np.full(r, np.nan)
        for i in range(r):
            if kept[i].any():
                p[i] = _second_pass(x[i][:, kept[i]], y[i])["pvalue_f"]
                pc[i] = self.conditional(x[i], y[i])
            k = int(kept_s[i].sum())
            if 0 < k < self.n_obs - ns:
                ps[i] = _second_pass(x[i, ns:][:, kept_s[i]], y[i, ns:])["pvalue_f"]
            if k:
                pk[i] = self.conditional(x[i], y[i], screen_rows=ns)
        extra = {"pvalue_split": ps, "pvalue_conditional": pc, "pvalue_carving": pk}
        m = len(self.coefficients)
        if not m:
            return self._finish(p, np.ones(r, dtype=bool), extra)
        cols = {"pvalue_naive": p, **_corrected(p, self.certificates(), self.n_rows, self.n_candidates), **extra}
        null = ~kept[:, :m].any(axis=1, keepdims=True)  # the kept model holds no signal predictor
        null_s = ~kept_s[:, :m].any(axis=1, keepdims=True)
        shown = _STANDARD + ("pvalue_conditional", "pvalue_carving")
        out = Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in shown}, null,
                                   null_by_column={"pvalue_split": null_s, "pvalue_carving": null_s})
        return with_oracle(out, [_second_pass(x[i, :, :m], y[i])["pvalues_t"][0] for i in range(r)])


@dataclass(frozen=True, slots=True)
class FreedmanSummary:
    """Means (and Monte-Carlo standard errors) of Freedman's statistics; see :func:`freedman_paradox`."""

    n_reps: int
    values: dict[str, float]
    std_errors: dict[str, float]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"value": self.values, "mc_se": self.std_errors})


def freedman_paradox(n_reps: int, *, seed: Any = None, n_obs: int = 100, n_features: int = 50,
                     keep_below: float = 0.25) -> FreedmanSummary:
    """Freedman's two-pass experiment (THEORY.md 6.3, no intercept), ``n_reps`` times.

    Returns the statistics of the reference table: first pass ``kept``, ``r2_first``,
    ``significant_05_first``, ``prob_f_below_05_first``; second pass ``r2``, ``f``,
    ``median_pvalue_f``, ``prob_f_below_05``, ``significant_05``, ``significant_25``. Standard
    errors are those of the means (for the median: from the binomial order-statistic interval).
    Replication i uses ``SeedSequence(seed).spawn(n_reps)[i]``.
    """
    n_reps = check_int("n_reps", n_reps, low=2)
    sc = FreedmanScreening(n_obs=n_obs, n_features=n_features, keep_below=keep_below)
    acc: dict[str, list] = {k: [] for k in ("kept", "r2_first", "significant_05_first", "f_below_05_first", "r2",
                                            "f", "pvalue_f", "significant_05", "significant_25")}
    for start in range(0, n_reps, 500):
        rngs = [replication_rng(seed, i) for i in range(start, min(n_reps, start + 500))]
        x, y = sc.draw_many(rngs)
        t, df, rss, tss = _first_pass(x, y)
        pv = _two_sided_t(t, df)
        kept = pv < keep_below
        r2 = 1.0 - rss / tss
        f1 = (r2 / n_features) / ((1 - r2) / (n_obs - n_features))
        acc["kept"].append(kept.sum(axis=1))
        acc["r2_first"].append(r2)
        acc["significant_05_first"].append((pv < 0.05).sum(axis=1))
        acc["f_below_05_first"].append(stats.f.sf(f1, n_features, n_obs - n_features) < 0.05)
        for i in range(len(rngs)):
            if not kept[i].any():
                continue
            s = _second_pass(x[i][:, kept[i]], y[i])
            acc["r2"].append([s["r2"]])
            acc["f"].append([s["f"]])
            acc["pvalue_f"].append([s["pvalue_f"]])
            acc["significant_05"].append([(s["pvalues_t"] < 0.05).sum()])
            acc["significant_25"].append([(s["pvalues_t"] < 0.25).sum()])
    arr = {k: np.concatenate([np.atleast_1d(np.asarray(v, dtype=float)) for v in vs]) for k, vs in acc.items()}
    values, ses = {}, {}
    for k, v in arr.items():
        if k == "pvalue_f":
            continue
        name = "prob_f_below_05_first" if k == "f_below_05_first" else k
        values[name] = float(v.mean())
        ses[name] = float(v.std(ddof=1) / math.sqrt(len(v)))
    pf = arr["pvalue_f"]
    values["prob_f_below_05"] = float((pf < 0.05).mean())
    ses["prob_f_below_05"] = float(math.sqrt(values["prob_f_below_05"] * (1 - values["prob_f_below_05"]) / len(pf)))
    med = float(np.median(pf))
    lo, hi = np.quantile(pf, [0.5 - 1 / math.sqrt(len(pf)), 0.5 + 1 / math.sqrt(len(pf))])
    values["median_pvalue_f"] = med
    ses["median_pvalue_f"] = float((hi - lo) / 2)  # order statistics at 0.5 +- 1/sqrt(n): about one SE each side
    return FreedmanSummary(n_reps=n_reps, values=values, std_errors=ses)
