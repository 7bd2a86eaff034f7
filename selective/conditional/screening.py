r"""Exact inference after screening by t-tests, sigma unknown (Freedman's two passes; THEORY.md 3.14).

The first pass regresses y on every column of ``X`` and keeps the screened columns whose
two-sided t p-value is below ``keep_below``; the second pass refits on the kept columns (and
the unscreened ones, e.g. an intercept) and tests them. Freedman (1983) showed the second
pass's F-test then rejects true nulls far too often.

Model: :math:`y \sim N(\mu, \sigma^2 I)` with :math:`\mu` in the column space of ``X`` and
:math:`\sigma` unknown. A test concerns a group G of kept columns inside the refit model M:
its hypothesis is that the projection of :math:`\mu` on
:math:`U = \mathrm{span}((I - P_{M \setminus G}) X_G)` (dimension d) is zero, i.e. the
partial coefficients of G in the regression of :math:`\mu` on M are zero. Under it, the
projection :math:`w_0` of y on :math:`\mathrm{col}(X) \ominus U` is independent of
:math:`y - w_0 = P_U y + (I - P_X) y`, which is spherical with mean zero. Write
:math:`y(\theta) = w_0 + r \sin\theta\, u + r \cos\theta\, v` with :math:`r = \|y - w_0\|`,
:math:`v` the direction of the residual and :math:`u` that of :math:`P_U y` (d > 1,
:math:`\theta \in [0, \pi/2]`) or the fixed unit vector of U (d = 1,
:math:`\theta \in (-\pi/2, \pi/2)`, so the sign is not conditioned on). Given
:math:`(w_0, r, u, v)`, :math:`\theta` keeps its null law: :math:`F = (n - p)\tan^2\theta / d`
is :math:`F_{d, n-p}` and, for d = 1, :math:`T = \sqrt{n - p}\tan\theta` is :math:`t_{n-p}`
(Loftus and Taylor 2015, Theorem 3.2, with the full model as the known superset).

Along the curve the full-model estimates are :math:`\hat\beta_k(\theta) = a_k + r \sin\theta\,
b_k` and the residual sum of squares is :math:`r^2 \cos^2\theta`, so column k passes the
screen iff :math:`(a_k + r b_k \sin\theta)^2 - c^2 G_{kk} r^2 \cos^2\theta / (n - p) > 0`
(c the two-sided critical t value, G = (X'X)^{-1}): a trigonometric polynomial of degree 2.
The screening event is the set of :math:`\theta` where every kept column passes and every other
screened column does not; the p-value is the statistic's null tail within that set, from log
tail probabilities. Exact for Gaussian errors; the errors' normality is what must hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, special, stats

from .._validation import check_probability, exact_fit_problem
from ._checks import check_alternative, check_choice, design_and_response
from ._group_regions import _f_logsf, _trig_region, _truncated_pvalue
from .groupfs import _orth
from .results import _ro, _table

__all__ = ["ScreeningResult", "screening_inference", "TTestScreen"]

_TESTS = ("overall", "coefficients")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScreeningResult:
    """Exact conditional tests after t-test screening (:func:`screening_inference`).

    ``kept``: names of the screened columns that passed; ``model``: the refit model's columns
    (kept plus unscreened). One row per test: ``tested`` (``"overall"`` or a column name), its
    ``df`` (d), ``statistic`` (the full-model F, or t for d = 1, named in
    ``statistic_name``), the conditional ``pvalue``, the refit's own (naive) ``pvalue_naive``
    and the ``support``: the screening event on the statistic's scale, rows [lower, upper].
    """

    __test__ = False
    kept: tuple[str, ...]
    model: tuple[str, ...]
    tested: tuple[str, ...]
    df: np.ndarray
    statistic: np.ndarray
    statistic_name: tuple[str, ...]
    pvalue: np.ndarray
    pvalue_naive: np.ndarray
    support: tuple
    df2: int
    keep_below: float
    critical_t: float
    alternative: str
    screen_rows: int
    method: str = field(repr=False, default="")

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "tested": list(self.tested), "df": np.asarray(self.df, dtype=int),
            "statistic_name": list(self.statistic_name),
            "statistic": self.statistic, "pvalue": self.pvalue, "pvalue_naive": self.pvalue_naive,
            "n_support_intervals": [len(s) for s in self.support], "df2": [self.df2] * len(self.tested)})

    def summary(self) -> str:
        head = (f"t-test screening at p < {self.keep_below:g} (|t| > {self.critical_t:.4g}, df {self.df2}); "
                f"kept {len(self.kept)}: {', '.join(self.kept) or 'none'}")
        return _table(head, self.to_frame())


def _t_logsf(t: float, df: int) -> float:
    """log P(T_df >= t), accurate far in both tails (upper tail from the F tail of t^2)."""
    if t > 0:
        return math.log(0.5) + _f_logsf(t * t, 1, df)
    if t == 0:
        return math.log(0.5)
    return math.log1p(-0.5 * math.exp(_f_logsf(t * t, 1, df))) if math.isfinite(t) else 0.0


def _event_coefficients(X1, L1, kappa, rows, w0, u, v, r, screened, kept_mask):
    """Rows C of g_k(th) = C0 + C1 sin + C2 cos + C3 sin^2 + C4 cos^2 + C5 sin cos >= 0 (module docstring).

    The screen's estimates on its rows are A + B sin + D cos, its residual e0 + eu sin + ev cos;
    g_k = (A_k + B_k sin + D_k cos)^2 - kappa_k ||e0 + eu sin + ev cos||^2 for a kept column,
    its negative for a screened column that was not kept.
    """
    w1, u1, v1 = w0[rows], r * u[rows], r * v[rows]
    A, B, D = L1 @ w1, L1 @ u1, L1 @ v1
    e0, eu, ev = w1 - X1 @ A, u1 - X1 @ B, v1 - X1 @ D
    q = np.array([e0 @ e0, 2 * e0 @ eu, 2 * e0 @ ev, eu @ eu, ev @ ev, 2 * eu @ ev])
    A, B, D = A[screened], B[screened], D[screened]
    C = np.column_stack([A * A, 2 * A * B, 2 * A * D, B * B, D * D, 2 * B * D]) - kappa[:, None] * q[None, :]
    return np.where(kept_mask[:, None], C, -C)


def screening_inference(X, y, *, keep_below: float = 0.25, screened=None, test: str = "overall",
                        alternative: str = "two-sided", kept=None, screen_rows=None,
                        columns=None) -> ScreeningResult:
    r"""Exact selective tests after screening the columns of ``X`` by their t p-values (sigma unknown).

    Parameters
    ----------
    X, y
        The first pass's design (n x p, full column rank, n > p; add an intercept column yourself
        if the fit has one) and response; or a DataFrame and the response's column name.
    keep_below
        Screening level in (0, 1): a screened column is kept iff its two-sided t p-value in the
        regression of y on all of ``X`` is below it.
    screened
        Names (or 0-based positions) of the columns subject to screening; the others (e.g. an
        intercept) are always in the refit model. An entry that is a column name is read as the
        name (names may be integers), otherwise as a position. Default: every column.
    test
        ``"overall"``: one F-test that the kept columns' partial coefficients in the refit
        model are all zero (Freedman's test); ``"coefficients"``: one t-test per kept column.
    alternative
        For the t-tests (d = 1): ``"two-sided"``, ``"greater"`` or ``"less"``. The F-test
        (d > 1) is one-sided in F whatever this says.
    kept
        Optional: the names the screen is recorded to have kept; a ValueError if the data
        give another set.
    screen_rows
        Optional boolean mask or row positions: the screen ran on these rows only (its own
        first pass, residual df ``len(screen_rows) - p``), the test on all rows given its
        outcome. This is data carving (Fithian, Sun and Taylor 2014): the held-out rows add
        power that data splitting's test on them alone does not have. Default: all rows.

    Returns
    -------
    ScreeningResult
        Empty (no rows) when nothing is kept.

    Notes
    -----
    Exact under :math:`y \sim N(\mu, \sigma^2 I)`, :math:`\mu \in \mathrm{col}(X)`: the
    p-value is uniform given the screening outcome (module docstring; THEORY.md 3.14). The
    residual degrees of freedom are those of the full first pass, n - p, and the statistic
    uses its residual, so this F differs from the refit's own F (``pvalue_naive``).
    """
    Xm, yv, names = design_and_response(X, y, columns)
    keep_below = check_probability("keep_below", keep_below, closed="neither")
    test = check_choice("test", test, _TESTS)
    alternative = check_alternative(alternative)
    n, p = Xm.shape
    if not (np.all(np.isfinite(Xm)) and np.all(np.isfinite(yv))):
        raise ValueError("`X` and `y` must be finite; got NaN or infinite values.")
    dup = sorted({str(c) for c in names if names.count(c) > 1})
    if dup:
        raise ValueError(f"`columns` must be distinct names; got {dup!r} more than once.")
    scr = _screened_mask(screened, names)
    # every statistic is invariant to the scale of y and of each column, and to adding multiples of the
    # unscreened columns (which every model holds) to a screened one: work on unit scales with the screened
    # columns residualized on the unscreened ones, so that neither squares overflow nor a column far from 0
    # (an offset of 1e9 times its spread) makes the design ill-conditioned
    Xm, yv = _prepared(Xm, scr), _unit_scale(yv[:, None])[:, 0]
    rows = _screen_rows(screen_rows, n)
    n1 = int(rows.sum())
    for what, m in (("`X`", n), ("`X[screen_rows]`", n1)):
        if m <= p:
            raise ValueError(f"{what} must have more rows than columns (the fit estimates sigma from its residual); "
                             f"got {m} rows and {p} columns.")
    X1, y1 = Xm[rows], yv[rows]
    for what, M in (("`X`", Xm), ("`X[screen_rows]`", X1)):
        rank = np.linalg.matrix_rank(M)
        if rank < p:
            raise ValueError(f"{what} must have full column rank (the first pass fits every column); got rank "
                             f"{rank} for {p} columns.")
    df1, df2 = n1 - p, n - p
    problem = exact_fit_problem(X1, y1) or exact_fit_problem(Xm, yv)
    if problem:
        raise ValueError(f"`y` must not be fitted exactly by `X` up to rounding ({problem}): sigma cannot be "
                         "estimated.")
    G1, L1, rss1, tstat = _first_pass(X1, y1)
    beta = np.linalg.lstsq(Xm, yv, rcond=None)[0]
    resid = yv - Xm @ beta
    rss = float(resid @ resid)
    crit = float(stats.t.isf(keep_below / 2, df1))
    passed = scr & (2 * stats.t.sf(np.abs(tstat), df1) < keep_below)
    kept_names = tuple(names[j] for j in np.nonzero(passed)[0])
    if kept is not None:
        want = tuple(str(k) for k in kept)
        if set(want) != {str(k) for k in kept_names}:
            raise ValueError(f"`kept` must be the set the screen keeps on these data; got {sorted(want)!r}, the data "
                             f"keep {sorted(kept_names)!r}.")
    model = [j for j in range(p) if passed[j] or not scr[j]]
    groups = ([("overall", [j for j in model if passed[j]])] if test == "overall"
              else [(names[j], [j]) for j in model if passed[j]])
    if not passed.any():
        groups = []
    v = resid / math.sqrt(rss)
    kappa = crit * crit / df1 * np.diag(G1)[scr]
    out = {k: [] for k in ("tested", "df", "stat", "name", "p", "naive", "support")}
    naive_df = n - len(model)
    for label, cols in groups:
        other = [j for j in model if j not in cols]
        Qo = _orth(Xm[:, other]) if other else np.zeros((n, 0))
        R = Xm[:, cols] - Qo @ (Qo.T @ Xm[:, cols])
        U = _orth(R)
        d = U.shape[1]
        ph = U @ (U.T @ yv)
        a_norm = float(np.linalg.norm(ph))
        r = math.hypot(a_norm, math.sqrt(rss))
        if d == 1:
            u = U[:, 0] * (np.sign(R[:, 0] @ U[:, 0]) or 1.0)   # oriented like the column's own coefficient
            lo, hi = -math.pi / 2, math.pi / 2
        else:
            u = ph / a_norm if a_norm > 0 else U[:, 0]
            lo, hi = 0.0, math.pi / 2
        w0 = yv - (u @ yv) * u - resid
        C = _event_coefficients(X1, L1, kappa, rows, w0, u, v, r, scr, passed[scr])
        region_th = _trig_region(C, lo, hi)
        if d == 1:
            stat = math.sqrt(df2) * float(u @ yv) / math.sqrt(rss)
            region = _with_observed([(_tan_scale(a, df2), _tan_scale(b, df2)) for a, b in region_th], stat)
            pv = _t_pvalue(stat, region, df2, alternative)
            sname = "TT"
            pnaive = _t_naive_p(_naive_t(Xm[:, model], yv, model.index(cols[0])), naive_df, alternative)
        else:
            stat = (a_norm ** 2 / d) / (rss / df2)
            region = _with_observed([(_f_scale(a, df2, d), _f_scale(b, df2, d)) for a, b in region_th], stat)
            pv = _truncated_pvalue(stat, region, lambda x, d=d: _f_logsf(x, d, df2))
            sname = "TF"
            pnaive = float(stats.f.sf((a_norm ** 2 / d) / (_rss(Xm[:, model], yv) / naive_df), d, naive_df))
        out["tested"].append(label)
        out["df"].append(d)
        out["stat"].append(stat)
        out["name"].append(sname)
        out["p"].append(min(1.0, max(0.0, pv)))
        out["naive"].append(pnaive)
        out["support"].append(_ro(np.array(region, dtype=float).reshape(-1, 2)))
    return ScreeningResult(
        kept=kept_names, model=tuple(names[j] for j in model), tested=tuple(out["tested"]),
        df=_ro(out["df"], int), statistic=_ro(out["stat"]), statistic_name=tuple(out["name"]),
        pvalue=_ro(out["p"]), pvalue_naive=_ro(out["naive"]), support=tuple(out["support"]), df2=df2,
        keep_below=keep_below, critical_t=crit, alternative=alternative, screen_rows=n1,
        method=("exact conditional after t-test screening (Loftus & Taylor 2015, Thm 3.2): truncated "
                + ("F" if test == "overall" else "t") + f" on the full model's {df2} residual df"
                + ("" if n1 == n else f"; the screen used {n1} of the {n} rows (carving)")))


def _unit_scale(M: np.ndarray) -> np.ndarray:
    """Each column divided by its largest absolute value (columns of zeros left alone)."""
    top = np.max(np.abs(M), axis=0)
    return M / np.where(top > 0, top, 1.0)


def _prepared(X: np.ndarray, screened: np.ndarray) -> np.ndarray:
    """``X`` on unit scales with each screened column replaced by its residual on the unscreened
    ones (then rescaled): an exact reparametrization for every model the screen fits, all of which
    hold the unscreened columns, so the t statistics, the F statistics and the event are unchanged,
    while a screened column far from 0 no longer nearly repeats the intercept."""
    X = _unit_scale(np.asarray(X, dtype=float))
    if screened.all() or not screened.any():
        return X
    U = X[:, ~screened]
    S = X[:, screened]
    X = X.copy()
    X[:, screened] = _unit_scale(S - U @ np.linalg.lstsq(U, S, rcond=None)[0])
    return X


def _first_pass(X1: np.ndarray, y1: np.ndarray):
    """(X1'X1)^-1, (X1'X1)^-1 X1', the RSS and the t statistics of the screen's regression: one computation,
    shared by the selector and the inference, so both see the same kept set even at a tie."""
    # through a QR factorization: inverting X'X would square the condition number
    Q, R = np.linalg.qr(X1)
    Rinv = linalg.solve_triangular(R, np.eye(R.shape[0]))
    G1 = Rinv @ Rinv.T
    L1 = Rinv @ Q.T
    beta1 = L1 @ y1
    rss1 = float(np.sum((y1 - X1 @ beta1) ** 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = beta1 / np.sqrt(rss1 / (X1.shape[0] - X1.shape[1]) * np.diag(G1))
    return G1, L1, rss1, tstat


def _with_observed(region: list, stat: float) -> list:
    """The support with the observed statistic inside it: at a tie with the screen's threshold the
    roots can land a rounding error on the wrong side of it; the nearest interval is stretched to it
    (as the winners' limits are)."""
    if not region:
        raise ValueError("the screening event could not be resolved along the one-parameter family (no interval "
                         "contains the observed statistic)")
    if any(a <= stat <= b for a, b in region):
        return region
    gap = [min(abs(a - stat), abs(b - stat)) for a, b in region]
    i = int(np.argmin(gap))
    if gap[i] > 1e-6 * (1.0 + abs(stat)):
        raise ValueError(f"the screening event along the one-parameter family misses the observed statistic {stat:.6g} "
                         f"by {gap[i]:.3g}, more than rounding")
    a, b = region[i]
    return region[:i] + [(min(a, stat), max(b, stat))] + region[i + 1:]


def _screen_rows(screen_rows, n: int) -> np.ndarray:
    if screen_rows is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(screen_rows)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"`screen_rows` as a boolean mask must have one entry per row ({n}); got shape "
                             f"{arr.shape}.")
        return arr.copy()
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or arr.size == 0:
        raise TypeError(f"`screen_rows` must be a boolean mask or a list of row positions; got {screen_rows!r:.80}.")
    if arr.min() < 0 or arr.max() >= n or np.unique(arr).size != arr.size:
        raise ValueError(f"`screen_rows` must hold distinct row positions in [0, {n - 1}]; got {screen_rows!r:.80}.")
    mask = np.zeros(n, dtype=bool)
    mask[arr] = True
    return mask


def _screened_mask(screened, names) -> np.ndarray:
    p = len(names)
    if screened is None:
        return np.ones(p, dtype=bool)
    if isinstance(screened, (str, bytes)) or not hasattr(screened, "__iter__"):
        raise TypeError(f"`screened` must be a list of column names or positions; got {screened!r}.")
    mask = np.zeros(p, dtype=bool)
    for s in screened:
        if not isinstance(s, bool) and s in names:          # a name first (column names may be integers)
            mask[names.index(s)] = True
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= int(s) < p:
            mask[int(s)] = True
        else:
            raise ValueError(f"`screened` must name columns of `X` ({names[:5]}{'...' if p > 5 else ''}) or give "
                             f"positions in [0, {p - 1}]; got {s!r}.")
    if not mask.any():
        raise ValueError("`screened` must name at least one column; got an empty list.")
    return mask


def _tan_scale(th: float, df2: int) -> float:
    if th >= math.pi / 2 - 1e-15:
        return math.inf
    if th <= -math.pi / 2 + 1e-15:
        return -math.inf
    return math.sqrt(df2) * math.tan(th)


def _f_scale(th: float, df2: int, d: int) -> float:
    return math.inf if th >= math.pi / 2 - 1e-15 else (df2 / d) * math.tan(th) ** 2


def _t_pvalue(t: float, region, df2: int, alternative: str) -> float:
    upper = _truncated_pvalue(t, region, lambda x: _t_logsf(x, df2))
    lower = _truncated_pvalue(-t, [(-b, -a) for a, b in reversed(region)], lambda x: _t_logsf(x, df2))
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2 * min(upper, lower))


def _rss(Xm, y) -> float:
    b, *_ = np.linalg.lstsq(Xm, y, rcond=None)
    e = y - Xm @ b
    return float(e @ e)


def _naive_t(Xm, y, j) -> float:
    G = np.linalg.inv(Xm.T @ Xm)
    b = G @ (Xm.T @ y)
    e = y - Xm @ b
    df = Xm.shape[0] - Xm.shape[1]
    return float(b[j] / math.sqrt(float(e @ e) / df * G[j, j]))


def _t_naive_p(t: float, df: int, alternative: str) -> float:
    if alternative == "greater":
        return float(stats.t.sf(t, df))
    if alternative == "less":
        return float(stats.t.cdf(t, df))
    return float(2 * stats.t.sf(abs(t), df))


def screen_ols(x: np.ndarray, y: np.ndarray, keep_below: float) -> np.ndarray:
    """Which columns of ``x`` the screen keeps (OLS of y on an intercept and x, two-sided t p < keep_below)."""
    n, p = x.shape
    # the same unit scales and the same computation as screening_inference: the same kept set at a tie
    X = _prepared(np.column_stack([np.ones(n), x]), np.arange(p + 1) > 0)
    y = _unit_scale(np.asarray(y, dtype=float)[:, None])[:, 0]
    if n <= p + 1 or np.linalg.matrix_rank(X) < p + 1:
        raise ValueError(f"`data`: the t-test screen regresses the target on an intercept and all {p} features, which "
                         f"needs more than {p + 1} rows and linearly independent features; got {n} rows, rank "
                         f"{np.linalg.matrix_rank(X)} of {p + 1}.")
    problem = exact_fit_problem(X, y)
    if problem:
        raise ValueError(f"`data`: the features fit the target exactly up to rounding ({problem}), so no t-test "
                         "can be made.")
    _, _, rss, tstat = _first_pass(X, y)
    return 2 * stats.t.sf(np.abs(tstat[1:]), n - p - 1) < keep_below


def boundary_log_tail(support, df2: int, alpha: float, alternative: str) -> float:
    """Log of the unconditional t tail beyond the point where the conditional test at ``alpha``
    starts to reject (the farther side for a two-sided test): how deep into the t tail the
    conditional test reaches, for the report's trust rule.

    With the support's intervals of log masses m_i, the boundary t* has conditional upper tail
    ``alpha`` (alpha/2 each side when two-sided): walking down from the top interval until the
    mass above reaches alpha * total, t* lies in interval i and its unconditional tail is
    P(T >= b_i) + (alpha * total - mass above b_i), so no inversion is needed.
    """
    region = [(float(a), float(b)) for a, b in np.asarray(support, dtype=float).reshape(-1, 2)]
    flipped = [(-b, -a) for a, b in reversed(region)]
    sides = {"greater": [(region, alpha)], "less": [(flipped, alpha)],
             "two-sided": [(region, alpha / 2), (flipped, alpha / 2)]}[alternative]

    def logsf(x):
        return _t_logsf(x, df2) if math.isfinite(x) else (0.0 if x < 0 else -math.inf)

    out = 0.0
    for reg, level in sides:
        masses = []
        for lo, hi in reg:
            la, lb = logsf(lo), logsf(hi)
            masses.append(la + math.log(-math.expm1(lb - la)) if lb < la else -math.inf)
        if not masses:
            continue
        target = math.log(level) + float(special.logsumexp(masses))
        above = -math.inf
        for (_lo, hi), m in zip(reversed(reg), reversed(masses), strict=True):
            if np.logaddexp(above, m) >= target:
                need = target + (math.log(-math.expm1(above - target)) if above > -math.inf else 0.0)
                out = min(out, float(np.logaddexp(logsf(hi), need)))
                break
            above = float(np.logaddexp(above, m))
    return out


@dataclass(frozen=True, slots=True)
class TTestScreen:
    r"""Keep the features whose two-sided t p-value, in the OLS regression of ``target`` on all of
    ``features`` with an intercept, is below ``keep_below`` (Freedman's first pass).

    The value is the tuple of kept features (in the order given). Certificate
    ``DescriptionLength(2**p)``: the kept set is one of :math:`2^p` subsets. A regression of the
    target on exactly the kept features with an intercept, run with
    ``Analysis.test(CoefficientTest(...), conditional_on=selection)``, gets the exact conditional
    p-value of :func:`screening_inference` for its coefficient (sigma unknown; docs/THEORY.md 3.14).

    Parameters
    ----------
    target : column label
        The response.
    features : sequence of column labels
        The screened predictors; more rows than ``len(features) + 1`` are needed.
    keep_below : float
        The screening level in (0, 1); default 0.25 (Freedman 1983).
    label : str
        Shown in the ledger.
    """

    target: Any
    features: tuple
    keep_below: float = 0.25
    label: str = "t-test screen"

    def __post_init__(self) -> None:
        from ..selectors.description import _check_label, _features

        object.__setattr__(self, "features", _features(self.target, self.features))
        object.__setattr__(self, "keep_below", check_probability("keep_below", self.keep_below, closed="neither"))
        _check_label(self.label)

    def certificate(self):
        from ..accounting.certificates import DescriptionLength

        return DescriptionLength(2 ** len(self.features))

    def required_columns(self) -> dict[str, tuple]:
        """``{"target": (target,), "features": features}``: checked before the data are touched."""
        from ..selectors.description import _model_columns

        return _model_columns(self.target, self.features)

    def select(self, data: pd.DataFrame, rng: Any = None):
        from ..selectors.base import Selection
        from ..selectors.description import _design

        x, y, feats = _design(data, self.target, self.features)
        res = screen_ols(x, y, self.keep_below)
        value = tuple(f for f, k in zip(feats, res, strict=True) if k)
        return Selection(value=value, certificate=self.certificate(), label=self.label,
                         details=MappingProxyType({"keep_below": self.keep_below, "n_features": len(feats),
                                                   "df": x.shape[0] - len(feats) - 1}))
