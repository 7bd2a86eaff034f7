r"""Forward stepwise with groups of variables and its truncated chi / truncated F tests.

Loftus and Taylor (2015), "Selective inference in regression models with groups of
variables", arXiv:1511.01478 (and Loftus and Taylor 2014, arXiv:1405.3920, for the truncated
chi). At each step the group that most improves a penalised criterion enters:

* known :math:`\sigma`: minimise :math:`\mathrm{RSS}/\sigma^2 + k\,\mathrm{df}` (AIC for
  ``k = 2``), i.e. maximise :math:`\|U_g^\top y\|^2/\sigma^2 - k d_g`;
* unknown :math:`\sigma`: minimise :math:`n \log \mathrm{RSS} + k\,\mathrm{df}`,

where :math:`U_g` is an orthonormal basis of the group's columns residualised on the groups
already in, and :math:`d_g` its rank. Every comparison is a quadratic inequality
:math:`y^\top M y \ge c` with :math:`M` fixed by the path, so the selection event is an
intersection of quadratic regions (Section 2 there).

Test of group :math:`h` in the selected model (all other selected groups kept): with
:math:`\tilde P_h` the projection on :math:`X_h` residualised on the other selected groups,

* known :math:`\sigma` (``TC``): :math:`T = \|\tilde P_h y\|/\sigma`; given
  :math:`u = \tilde P_h y/\|\tilde P_h y\|` and :math:`z = y - \tilde P_h y`, under
  :math:`H_0` :math:`T` is :math:`\chi_{d_h}` truncated to :math:`\{t \ge 0: z + \sigma t u
  \in E\}`, a finite union of intervals (the roots of quadratics in :math:`t`);
* unknown :math:`\sigma` (``TF``): :math:`F = (\|\tilde P_h y\|^2/d_h)/(\mathrm{RSS}/d_2)`,
  with RSS the residual sum of squares of the selected model and :math:`d_2` given under
  *Centring* below; given the projection on the other groups,
  the two directions and :math:`\|\tilde P_h y\|^2 + \mathrm{RSS}`, :math:`F` is
  :math:`F_{d_h, d_2}` truncated to the set of angles keeping :math:`y` in :math:`E`; the
  constraints are scale-free, and each is a trigonometric polynomial in the angle whose
  roots are found numerically.

Centring and scaling (``center``, ``normalize``):

* ``center="columns"`` (default) subtracts each column's mean. With ``intercept=True`` the
  fits are exactly least squares with an intercept, the residual lies in a fixed subspace of
  dimension :math:`n - \mathrm{rank} - 1`, and that is :math:`d_2` (:math:`n - \mathrm{rank}`
  without intercept): the null distributions of Theorems 3.1 / 3.2 hold exactly.
* ``center=True`` (or ``"group"``) is the convention of selectiveInference 1.2.5's
  ``groupfs(center=TRUE)`` (its ``scaleGroups``: "Center groups"; it returns one mean per
  group): each group minus **one number, the mean of all entries of the group**, not the mean
  of each column. For a group of several columns this changes the group's span, which no
  longer contains the column-centred columns, so the fits are those of the centred y on the
  group-centred columns, with an RSS slightly above the least-squares RSS with an intercept.
  :math:`d_2` is then the package's :math:`n - \mathrm{rank} - \mathrm{intercept} - 1`, rank
  being that of the selected group-centred columns. This reproduces the package's path RSS,
  ``TF``, supports and p-values (to about 1e-10). The residual is no longer orthogonal to
  the constant, and the p-values are not exactly uniform under the global null when the
  columns have non-zero means (use it to reproduce the package, not for new analyses).
* ``center=False`` leaves the columns as they are (:math:`d_2` as for ``True``).
* ``normalize=True`` divides each (centred) group by its Frobenius norm, as the package does.
  Scaling a whole group by one number changes neither its span nor anything computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from ._checks import check_int, check_positive_real, design_and_response
from .results import GroupInferenceResult, _ro

__all__ = ["GroupStepwisePath", "group_forward_stepwise", "groupfs_inference"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupStepwisePath:
    """Grouped forward stepwise path and the quadratic constraints of its selection event."""

    action: tuple                 # group labels in entry order
    df: np.ndarray                # rank of each entered group (residualised)
    rss: np.ndarray               # RSS after each step
    criterion: np.ndarray         # AIC-type criterion after each step
    sigma: float                  # nan when the selection used n log RSS
    k: float
    index: tuple                  # group label of each column
    x_std: np.ndarray = field(repr=False)
    y_centred: np.ndarray = field(repr=False)
    intercept: bool = True
    center: str = "columns"       # "columns", "group" (R's groupfs) or "none"
    # constraints y'M y >= c, stored as (list of (weight, basis)) and c
    constraints: list = field(repr=False, default_factory=list)

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"group": list(self.action), "df": self.df, "rss": self.rss,
                             "criterion": self.criterion},
                            index=pd.RangeIndex(1, len(self.action) + 1, name="step"))


def _orth(M, tol=1e-10):
    if M.shape[1] == 0:
        return M
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    keep = s > tol * max(1.0, s[0] if s.size else 0.0)
    return U[:, keep]


def group_forward_stepwise(X, y, index, *, maxsteps: int = 10, sigma: float | None = None,
                           k: float = 2.0, intercept: bool = True,
                           center: bool | str = "columns",
                           normalize: bool = True, columns=None,
                           response=None) -> GroupStepwisePath:
    r"""Forward stepwise selection of groups of columns (Loftus and Taylor 2015, Section 4).

    Parameters
    ----------
    X, y : array_like or DataFrame (+ response name)
    index : sequence
        Group label of each column of ``X`` (same length as the number of columns).
    maxsteps : int
        Number of groups to enter.
    sigma : float, optional
        Known noise sd: the criterion is :math:`\mathrm{RSS}/\sigma^2 + k\,\mathrm{df}`;
        without it :math:`n\log\mathrm{RSS} + k\,\mathrm{df}`.
    k : float
        Penalty per degree of freedom (2: AIC, log n: BIC).
    intercept : bool
        Centre y (the intercept is not penalised and not tested).
    center : {"columns", "group"} or bool
        ``"columns"`` (default): subtract each column's mean (exact least squares with an
        intercept; exact null distributions). ``True`` / ``"group"``: subtract each group's
        overall mean, one number per group, as selectiveInference's ``groupfs(center=TRUE)``
        (use it to reproduce the package). ``False``: no centring. See the module notes: this
        choice changes the fits and the denominator df of the TF test.
    normalize : bool
        Divide each centred group by its Frobenius norm (no effect on the path or the tests).

    Returns
    -------
    GroupStepwisePath
    """
    X, y, _ = design_and_response(X, y, columns, response)
    n, p = X.shape
    index = tuple(index)
    if len(index) != p:
        raise ValueError(f"`index` must give one group label per column of `X` ({p}); got "
                         f"{len(index)}.")
    maxsteps = check_int("maxsteps", maxsteps, low=1)
    sigma = check_positive_real("sigma", sigma, allow_none=True)
    k = float(check_positive_real("k", k)) if k != 0 else 0.0
    mode = _center_mode(center)
    labels = list(dict.fromkeys(index))
    cols = {g: [j for j in range(p) if index[j] == g] for g in labels}
    Xs = np.array(X, dtype=float, copy=True)
    if mode == "columns":
        Xs -= Xs.mean(0)
    elif mode == "group":
        for g in labels:
            Xs[:, cols[g]] -= Xs[:, cols[g]].mean()
    yc = y - y.mean() if intercept else y.copy()
    if normalize:
        for g in labels:
            nrm = np.linalg.norm(Xs[:, cols[g]])
            if nrm == 0:
                raise ValueError(f"group {g!r} of `X` is zero (after centring); drop it.")
            Xs[:, cols[g]] /= nrm
    QA = np.zeros((n, 0))
    active: list = []
    dfs, rss_list, crit_list = [], [], []
    constraints: list = []
    rss = float(yc @ yc)
    steps = min(maxsteps, len(labels))
    for _ in range(steps):
        cand = [g for g in labels if g not in active]
        bases, scores = {}, {}
        for g in cand:
            R = Xs[:, cols[g]] - QA @ (QA.T @ Xs[:, cols[g]])
            U = _orth(R)
            if U.shape[1] == 0:
                continue
            bases[g] = U
            scores[g] = float(np.sum((U.T @ yc) ** 2))
        if not bases:
            break
        if sigma is not None:
            crit = {g: (rss - scores[g]) / sigma ** 2 + k * bases[g].shape[1] for g in bases}
        else:
            crit = {g: n * math.log(max(rss - scores[g], 1e-300)) + k * bases[g].shape[1]
                    for g in bases}
        best = min(crit, key=lambda g: (crit[g], labels.index(g)))
        Ub = bases[best]
        db = Ub.shape[1]
        for g in bases:
            if g == best:
                continue
            dg = bases[g].shape[1]
            if sigma is not None:
                # ||Ub'y||^2 - ||Ug'y||^2 >= sigma^2 k (db - dg)
                constraints.append(([(1.0, Ub), (-1.0, bases[g])], None, sigma ** 2 * k * (db - dg)))
            else:
                # RSS_A - S_b <= e^{k (dg - db)/n} (RSS_A - S_g), i.e.
                # c (RSS_A - S_g) - (RSS_A - S_b) >= 0 with RSS_A = y'(I - P_A)y
                cst = math.exp(k * (dg - db) / n)
                constraints.append(([(1.0, Ub), (-cst, bases[g])], (cst - 1.0, QA), 0.0))
        active.append(best)
        QA = np.column_stack([QA, Ub])
        rss -= scores[best]
        dfs.append(db)
        rss_list.append(rss)
        crit_list.append(crit[best])
    return GroupStepwisePath(action=tuple(active), df=_ro(dfs, int), rss=_ro(rss_list),
                             criterion=_ro(crit_list), sigma=math.nan if sigma is None else sigma,
                             k=k, index=index, x_std=Xs, y_centred=yc, intercept=bool(intercept),
                             center=mode, constraints=constraints)


def _center_mode(center) -> str:
    if isinstance(center, (bool, np.bool_)):
        return "group" if center else "none"
    if isinstance(center, str) and center in ("group", "columns"):
        return center
    raise ValueError(f'`center` must be True, False, "group" or "columns"; got {center!r}.')


def _quad_coeffs(con, vecs):
    """Bilinear forms v_i' M v_j of the constraint matrix M for the given vectors."""
    parts, resid, _ = con
    m = len(vecs)
    B = np.zeros((m, m))
    for w, U in parts:
        P = U.T @ np.column_stack(vecs)
        B += w * (P.T @ P)
    if resid is not None:
        w, QA = resid  # w * y'(I - P_A) y
        V = np.column_stack(vecs)
        P = QA.T @ V
        B += w * (V.T @ V - P.T @ P)
    return B


def _intervals_from_mask(grid, ok):
    """Maximal runs of True in ``ok`` on ``grid`` (endpoints refined by the caller)."""
    runs = []
    i = 0
    while i < ok.size:
        if ok[i]:
            j = i
            while j + 1 < ok.size and ok[j + 1]:
                j += 1
            runs.append((i, j))
            i = j + 1
        else:
            i += 1
    return runs


def _region(g, lo, hi, n_grid=4001):
    """{x in [lo, hi] : g(x) >= 0 for every constraint}, g vectorised returning (m, len(x))."""
    xs = np.linspace(lo, hi, n_grid)
    vals = g(xs)
    ok_all = np.all(vals >= 0, axis=0)
    out = []
    for i, j in _intervals_from_mask(xs, ok_all):
        a, b = xs[i], xs[j]
        if i > 0:
            a = optimize.brentq(lambda x: np.min(g(np.array([x]))[:, 0]), xs[i - 1], xs[i],
                                xtol=1e-14)
        if j < xs.size - 1:
            b = optimize.brentq(lambda x: np.min(g(np.array([x]))[:, 0]), xs[j], xs[j + 1],
                                xtol=1e-14)
        out.append((a, b))
    return out


def groupfs_inference(path: GroupStepwisePath, *, sigma: float | None = None) -> GroupInferenceResult:
    r"""Selective tests of each selected group (truncated chi or truncated F).

    Parameters
    ----------
    path : GroupStepwisePath
    sigma : float, optional
        Known noise sd: truncated chi tests (``TC``). Without it: truncated F tests (``TF``).

    Returns
    -------
    GroupInferenceResult
        ``support`` gives, per group, the truncation region of the statistic as rows
        ``[lower, upper]``.

    Notes
    -----
    Loftus and Taylor (2015), Theorems 3.1 (TC) and 3.2 (TF); the region is computed from the
    quadratic constraints of the path along the one-parameter family described in the module
    docstring (exact quadratic roots for TC; bracketed roots of trigonometric polynomials for
    TF). Tail probabilities are logarithms of upper tails (``scipy.stats.chi2.logsf`` /
    ``f.logsf``, and continued fractions / series where those underflow) so that small
    p-values keep their relative accuracy.
    """
    if not isinstance(path, GroupStepwisePath):
        raise TypeError(f"`path` must be a GroupStepwisePath; got {path.__class__.__name__}.")
    sigma = check_positive_real("sigma", sigma, allow_none=True)
    Xs, y = path.x_std, path.y_centred
    n = y.size
    labels = path.action
    cols = {g: [j for j in range(len(path.index)) if path.index[j] == g] for g in labels}
    allcols = [j for g in labels for j in cols[g]]
    QF = _orth(Xs[:, allcols])
    rank = QF.shape[1]
    # residual df: exact when the columns are column-centred (the residual then lies in a fixed
    # subspace of dimension n - rank - intercept); otherwise selectiveInference's
    # n - rank - intercept - 1 (module notes)
    df2 = n - rank - (1 if path.intercept else 0) - (0 if path.center == "columns" else 1)
    stat = np.empty(len(labels))
    pv = np.empty(len(labels))
    dfs = np.empty(len(labels), int)
    supports = []
    for i, h in enumerate(labels):
        other = [j for g in labels if g != h for j in cols[g]]
        Qo = _orth(Xs[:, other]) if other else np.zeros((n, 0))
        Rh = Xs[:, cols[h]] - Qo @ (Qo.T @ Xs[:, cols[h]])
        Uh = _orth(Rh)
        d = Uh.shape[1]
        dfs[i] = d
        ph = Uh @ (Uh.T @ y)
        a_norm = float(np.linalg.norm(ph))
        u = ph / a_norm
        if sigma is not None:
            T = a_norm / sigma
            z = y - ph
            coefs = []
            for con in path.constraints:
                B = _quad_coeffs(con, [u, z])
                c = con[2]
                # (z + s t u)'M(z + s t u) - c = s^2 t^2 B_uu + 2 s t B_uz + B_zz - c
                coefs.append((sigma ** 2 * B[0, 0], 2 * sigma * B[0, 1], B[1, 1] - c))
            coefs = np.array(coefs) if coefs else np.zeros((0, 3))
            region = _quadratic_region(coefs) if coefs.size else [(0.0, math.inf)]
            stat[i] = T
            pv[i] = _truncated_pvalue(T, region, lambda x, d=d: _chi2_logsf(x * x, d))
        else:
            w = y - ph  # contains P_other y and the residual
            resid = y - QF @ (QF.T @ y)
            b_norm = float(np.linalg.norm(resid))
            v = resid / b_norm
            w0 = w - resid  # projection on the other groups (+ nothing else)
            r = math.hypot(a_norm, b_norm)
            coefs = []
            for con in path.constraints:
                B = _quad_coeffs(con, [w0, u, v])
                # y(th) = w0 + r sin(th) u + r cos(th) v
                coefs.append((B[0, 0], 2 * r * B[0, 1], 2 * r * B[0, 2], r * r * B[1, 1],
                              r * r * B[2, 2], 2 * r * r * B[1, 2]))
            coefs = np.array(coefs) if coefs else np.zeros((0, 6))

            def g(th, C=coefs):
                s, c = np.sin(th)[None, :], np.cos(th)[None, :]
                return (C[:, [0]] + C[:, [1]] * s + C[:, [2]] * c + C[:, [3]] * s * s
                        + C[:, [4]] * c * c + C[:, [5]] * s * c)

            region_th = _region(g, 0.0, math.pi / 2) if coefs.size else [(0.0, math.pi / 2)]

            def to_f(th, d=d):
                if th >= math.pi / 2 - 1e-15:
                    return math.inf
                return (df2 / d) * math.tan(th) ** 2

            region = [(to_f(a), to_f(b)) for a, b in region_th]
            F = (a_norm ** 2 / d) / (b_norm ** 2 / df2)
            stat[i] = F
            pv[i] = _truncated_pvalue(F, region, lambda x, d=d: _f_logsf(x, d, df2))
        supports.append(_ro(np.array(region, dtype=float).reshape(-1, 2)))
    return GroupInferenceResult(
        groups=tuple(labels), df=_ro(dfs, int), statistic=_ro(stat),
        statistic_name="TC" if sigma is not None else "TF", pvalue=_ro(pv),
        support=tuple(supports), sigma=math.nan if sigma is None else float(sigma),
        df2=float(df2) if sigma is None else math.nan,
        method="Loftus & Taylor (2015), grouped forward stepwise, "
               + ("truncated chi" if sigma is not None else "truncated F"))


def _quadratic_region(coefs) -> list:
    """{t >= 0 : a t^2 + b t + c >= 0 for every row (a, b, c) of ``coefs``}, from exact roots.

    The real roots split [0, inf) into pieces on which no constraint changes sign; a piece is
    kept when every constraint holds at an inner point. The region may be bounded above.
    """
    cuts = {0.0}
    for qa, qb, qc in coefs:
        scale = max(abs(qa), abs(qb), abs(qc))
        if scale == 0:
            continue
        if abs(qa) <= 1e-15 * scale:
            if qb != 0:
                cuts.add(-qc / qb)
            continue
        disc = qb * qb - 4 * qa * qc
        if disc < 0:
            continue
        q = -0.5 * (qb + math.copysign(math.sqrt(disc), qb))  # stable quadratic formula
        cuts.update((q / qa, qc / q) if q != 0 else (0.0,))
    ends = sorted(t for t in cuts if t >= 0 and math.isfinite(t)) + [math.inf]
    out: list = []
    for lo, hi in zip(ends[:-1], ends[1:], strict=True):
        t = lo + max(1.0, lo) if math.isinf(hi) else 0.5 * (lo + hi)
        if np.all(coefs[:, 0] * t * t + coefs[:, 1] * t + coefs[:, 2] >= 0):
            if out and out[-1][1] == lo:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
    return out


def _chi2_logsf(x2: float, d: int) -> float:
    """log P(chi2_d >= x2); where scipy's value underflows, log Q(d/2, x2/2) from the continued
    fraction of the upper incomplete gamma function (Legendre's fraction, evaluated by the
    modified Lentz method; Press et al., Numerical Recipes, 3rd ed., Section 6.2)."""
    v = float(stats.chi2.logsf(x2, d))
    if v > -700.0 or not math.isfinite(x2):
        return v
    a, x = 0.5 * d, 0.5 * x2
    tiny = 1e-300
    b = x + 1.0 - a
    c, dd = 1.0 / tiny, 1.0 / b
    h = dd
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        dd = an * dd + b
        dd = tiny if abs(dd) < tiny else dd
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        dd = 1.0 / dd
        h *= dd * c
        if abs(dd * c - 1.0) < 1e-16:
            break
    return -x + a * math.log(x) - math.lgamma(a) + math.log(h)


def _f_logsf(x: float, d1: int, d2: float) -> float:
    """log P(F_{d1,d2} >= x) = log I_w(d2/2, d1/2), w = d2/(d2 + d1 x); where scipy's value
    underflows, from I_w(a, b) = w^a (1-w)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; w)
    (Abramowitz and Stegun 26.5.23 with 15.1.1)."""
    v = float(stats.f.logsf(x, d1, d2))
    if v > -700.0 or not math.isfinite(x):
        return v
    a, b = 0.5 * d2, 0.5 * d1
    w = d2 / (d2 + d1 * x)
    term = total = 1.0
    for n in range(100_000):
        term *= (a + b + n) / (a + 1.0 + n) * w
        total += term
        if term < 1e-17 * total:
            break
    return (a * math.log(w) + b * math.log1p(-w) - math.log(a) - float(special.betaln(a, b))
            + math.log(total))


def _truncated_pvalue(t, region, logsf) -> float:
    """P(S >= t | S in region) from log upper tails, region = [(a, b), ...]."""
    def log_mass(a, b):
        la = float(logsf(a))
        lb = float(logsf(b)) if math.isfinite(b) else -math.inf
        if lb == -math.inf:
            return la
        d = lb - la
        if d >= 0:
            return -math.inf
        return la + math.log(-math.expm1(d))

    num, den = [], []
    for a, b in region:
        m = log_mass(a, b)
        den.append(m)
        if b > t:
            num.append(log_mass(max(a, t), b))
    if not den or not num:
        return 0.0 if den else math.nan
    return float(math.exp(min(0.0, special.logsumexp(num) - special.logsumexp(den))))
