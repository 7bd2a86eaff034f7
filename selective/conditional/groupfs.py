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

from ._checks import check_int, check_positive_real, check_scale, design_and_response
from ._group_regions import _chi2_logsf, _f_logsf, _quadratic_region, _trig_region, _truncated_pvalue
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
    # constraints y'M y >= c: each a tuple (parts, resid, c) with parts a list of
    # (weight, block) meaning weight * ||U_block' y||^2 (U_block: that block of ``bases``),
    # and resid None or (weight, t) meaning weight * y'(I - P_t) y, P_t the projection on the
    # first t entered groups
    constraints: list = field(repr=False, default_factory=list)
    bases: np.ndarray = field(repr=False, default=None)  # orthonormal bases side by side, each once
    block_sizes: np.ndarray = field(repr=False, default=None)  # columns of each basis in ``bases``
    entered: tuple = field(repr=False, default=())    # the block of each entered group, in order

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
    sigma = check_scale("sigma", sigma, allow_none=True)
    k = float(check_positive_real("k", k)) if k != 0 else 0.0
    mode = _center_mode(center)
    labels = list(dict.fromkeys(index))
    cols = _columns_of(index, labels)
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
    blocks: list = []    # every basis once; constraints refer to them by position
    entered: list = []
    rss = float(yc @ yc)
    steps = min(maxsteps, len(labels))
    for _ in range(steps):
        cand = [g for g in labels if g not in active]
        found = _residual_bases(Xs, QA, cand, cols)
        bases, scores, ids = {}, {}, {}
        for g in cand:  # in label order: the order of the blocks and constraints is fixed
            U = found[g]
            if U.shape[1] == 0:
                continue
            bases[g] = U
            scores[g] = float(np.sum((U.T @ yc) ** 2))
            ids[g] = len(blocks)
            blocks.append(U)
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
                constraints.append(([(1.0, ids[best]), (-1.0, ids[g])], None, sigma ** 2 * k * (db - dg)))
            else:
                # RSS_A - S_b <= e^{k (dg - db)/n} (RSS_A - S_g), i.e.
                # c (RSS_A - S_g) - (RSS_A - S_b) >= 0 with RSS_A = y'(I - P_A)y
                cst = math.exp(k * (dg - db) / n)
                constraints.append(([(1.0, ids[best]), (-cst, ids[g])], (cst - 1.0, len(active)), 0.0))
        active.append(best)
        entered.append(ids[best])
        QA = np.column_stack([QA, Ub])
        rss -= scores[best]
        dfs.append(db)
        rss_list.append(rss)
        crit_list.append(crit[best])
    return GroupStepwisePath(action=tuple(active), df=_ro(dfs, int), rss=_ro(rss_list),
                             criterion=_ro(crit_list), sigma=math.nan if sigma is None else sigma,
                             k=k, index=index, x_std=Xs, y_centred=yc, intercept=bool(intercept),
                             center=mode, constraints=constraints,
                             bases=np.hstack(blocks) if blocks else np.zeros((n, 0)),
                             block_sizes=_ro([b.shape[1] for b in blocks], int),
                             entered=tuple(entered))


def _columns_of(index, labels) -> dict:
    """Column positions of each group label (one pass over ``index``)."""
    cols: dict = {g: [] for g in labels}
    for j, g in enumerate(index):
        if g in cols:
            cols[g].append(j)
    return cols


def _residual_bases(Xs, QA, groups, cols, tol=1e-10) -> dict:
    """Orthonormal basis of each group's columns residualised on span(QA), as :func:`_orth`.

    The residualisation is one product for all columns; the SVDs are batched over groups of
    the same size.
    """
    R = Xs - QA @ (QA.T @ Xs) if QA.shape[1] else Xs
    by_size: dict = {}
    for g in groups:
        by_size.setdefault(len(cols[g]), []).append(g)
    out = {}
    for size, gs in by_size.items():
        if size == 0:
            for g in gs:
                out[g] = np.zeros((Xs.shape[0], 0))
            continue
        U, sv, _ = np.linalg.svd(np.stack([R[:, cols[g]] for g in gs]), full_matrices=False)
        for i, g in enumerate(gs):
            keep = sv[i] > tol * max(1.0, sv[i][0])
            out[g] = U[i][:, keep]
    return out


def _center_mode(center) -> str:
    if isinstance(center, (bool, np.bool_)):
        return "group" if center else "none"
    if isinstance(center, str) and center in ("group", "columns"):
        return center
    raise ValueError(f'`center` must be True, False, "group" or "columns"; got {center!r}.')


class _Forms:
    """Bilinear forms ``v_i' M v_j`` of every constraint matrix of a path, for given vectors.

    Every constraint is a signed sum of squared projections on stored bases, plus possibly a
    multiple of :math:`y^\top(I - P_t)y`. With :math:`P = U^\top V` for all bases stacked
    (one product), the form of basis b is :math:`P_b^\top P_b` (a sum over its columns), that
    of :math:`I - P_t` is :math:`V^\top V` minus the forms of the first t entered bases, and
    each constraint is a fixed linear combination of these, applied as one sparse product.
    """

    def __init__(self, path: GroupStepwisePath):
        import scipy.sparse as sp

        self.U = path.bases
        sizes = np.asarray(path.block_sizes, dtype=int)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        self.n_blocks = sizes.size
        self.entered = np.asarray(path.entered, dtype=int)
        rows, cols, vals = [], [], []
        self.resid_w = np.zeros(len(path.constraints))
        self.resid_t = np.zeros(len(path.constraints), dtype=int)
        self.offsets = np.zeros(len(path.constraints))
        for i, (parts, resid, c) in enumerate(path.constraints):
            for w, b in parts:
                rows.append(i)
                cols.append(b)
                vals.append(w)
            if resid is not None:
                self.resid_w[i], self.resid_t[i] = resid
            self.offsets[i] = c
        self.W = sp.csr_matrix((vals, (rows, cols)), shape=(len(path.constraints), max(self.n_blocks, 1)))

    def __call__(self, V: np.ndarray) -> np.ndarray:
        """``B[i] = V' M_i V`` for every constraint i, shape (m, k, k) for V of shape (n, k)."""
        k = V.shape[1]
        m = self.W.shape[0]
        if m == 0:
            return np.zeros((0, k, k))
        P = self.U.T @ V
        outer = P[:, :, None] * P[:, None, :]
        G = np.add.reduceat(outer, self.starts, axis=0) if self.n_blocks else np.zeros((1, k, k))
        B = np.asarray(self.W @ G.reshape(G.shape[0], k * k)).reshape(m, k, k)
        if np.any(self.resid_w != 0):
            VV = V.T @ V
            cum = np.concatenate([np.zeros((1, k, k)), np.cumsum(G[self.entered], axis=0)])
            B += self.resid_w[:, None, None] * (VV[None] - cum[self.resid_t])
        return B


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
    docstring (exact quadratic roots for TC; for TF the zeros of trigonometric polynomials of
    degree 2, from the eigenvalues of companion matrices, polished by Newton's method). Tail
    probabilities are logarithms of upper tails (``scipy.stats.chi2.logsf`` / ``f.logsf``, and
    continued fractions / series where those underflow) so that small p-values keep their
    relative accuracy.
    """
    if not isinstance(path, GroupStepwisePath):
        raise TypeError(f"`path` must be a GroupStepwisePath; got {path.__class__.__name__}.")
    sigma = check_scale("sigma", sigma, allow_none=True)
    Xs, y = path.x_std, path.y_centred
    n = y.size
    labels = path.action
    cols = _columns_of(path.index, labels)
    allcols = [j for g in labels for j in cols[g]]
    QF = _orth(Xs[:, allcols])
    rank = QF.shape[1]
    # residual df: exact when the columns are column-centred (the residual then lies in a fixed
    # subspace of dimension n - rank - intercept); otherwise selectiveInference's
    # n - rank - intercept - 1 (module notes)
    df2 = n - rank - (1 if path.intercept else 0) - (0 if path.center == "columns" else 1)
    forms = _Forms(path)
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
            B = forms(np.column_stack([u, z]))
            # (z + s t u)'M(z + s t u) - c = s^2 t^2 B_uu + 2 s t B_uz + B_zz - c
            coefs = np.column_stack([sigma ** 2 * B[:, 0, 0], 2 * sigma * B[:, 0, 1],
                                     B[:, 1, 1] - forms.offsets])
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
            B = forms(np.column_stack([w0, u, v]))
            # y(th) = w0 + r sin(th) u + r cos(th) v (the TF constraints have c = 0)
            coefs = np.column_stack([B[:, 0, 0], 2 * r * B[:, 0, 1], 2 * r * B[:, 0, 2], r * r * B[:, 1, 1],
                                     r * r * B[:, 2, 2], 2 * r * r * B[:, 1, 2]])
            region_th = _trig_region(coefs, 0.0, math.pi / 2)

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
