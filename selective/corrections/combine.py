r"""The rule that combines the routes into a report's columns (THEORY.md 3.2), and intervals at
the level a threshold certifies (THEORY.md 3.1).

The **minimum of several valid corrected p-values is valid**: :math:`\{\min_j \tilde p_j \le
\alpha\} = \{p \le \max_j\gamma_j(\alpha)\}`, a fixed threshold that route :math:`j^*(\alpha)`
certifies; :func:`correct` reports each route's column and their minimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import optimize, special, stats

from .._validation import check_int, check_pvalues
from ..accounting.totals import LedgerTotals
from ._common import LN2, Threshold, _alpha
from .bonferroni import corrected_pvalue_bonferroni, gamma_bonferroni
from .maxinfo import corrected_pvalue_maxinfo, gamma_maxinfo
from .mutual_info import corrected_pvalue_mutual_info, gamma_mutual_info
from .union import corrected_pvalue_union, gamma_union

__all__ = ["Corrections", "correct", "interval_at_level"]


# --------------------------------------------------------------------------------------------
# The full set of columns for a report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Corrections:
    """Corrected p-values of a set of naive p-values under one ledger (arrays, same order).

    Columns are NaN where a route does not apply; ``best_route`` names the column giving
    ``pvalue_best``; ``gamma_best`` is the largest valid threshold at ``alpha``, the level
    1 - ``gamma_best`` at which intervals are widened (THEORY.md 3.1). ``thresholds`` holds the
    threshold at ``alpha`` of every column shown (keys ``"maxinfo"``, ``"mutual_info"``,
    ``"bonferroni"``, ``"best"``): the naive p-values must be accurate down to the smallest of
    them. ``adaptive`` says whether the best column paid for combining routes (THEORY.md 3.2a).
    """

    alpha: float
    pvalue_naive: np.ndarray
    pvalue_maxinfo: np.ndarray
    pvalue_mutual_info: np.ndarray
    pvalue_bonferroni: np.ndarray
    pvalue_best: np.ndarray
    best_route: tuple[str, ...]
    maxinfo_route: tuple[str, ...]
    gamma_best: Threshold | None
    notes: tuple[str, ...]
    thresholds: dict = field(default_factory=dict)
    adaptive: bool = False

    @property
    def gamma_smallest(self) -> Threshold | None:
        """The smallest threshold any shown column compares a naive p-value with at ``alpha``."""
        finite = [t for t in self.thresholds.values() if t is not None]
        return min(finite, key=lambda t: t.log2_gamma) if finite else None


ADAPTIVE_NOTE = ("adaptive steps: each route is computed from what the steps turned out to be, so the best "
                 "column pays for combining them (Bonferroni merge, Vovk and Wang 2020; docs/THEORY.md 3.2a); "
                 "a step declared before the data are read (Analysis.preregister with the selector, before "
                 "select) is not adaptive")


def _adaptive_totals(totals: LedgerTotals) -> tuple[LedgerTotals, list[str]]:
    """The one max-information route that stays valid when the steps' counts, epsilons or
    number may depend on earlier outputs (THEORY.md 3.2a): the union route with the realized
    counts and Theorem 19 (beta = 0) for the DP steps. The composition route (Lemma 14 needs
    counts that bound every history) and the mutual-information routes (the chain rule needs
    expected, not realized, counts) are withheld."""
    notes = []
    if totals.maxinfo is not None and totals.union is not None:
        notes.append("adaptive steps: the max-information column uses the union route with the realized counts "
                     "and Theorem 19 (the composition route needs counts declared in advance)")
    union = None if totals.union is None else replace(totals.union, allow_product=False)
    union_reason = totals.union_reason or totals.maxinfo_reason
    mi_reason = None
    if totals.mutual_info is not None:
        mi_reason = ("adaptive steps: the mutual-information routes need the expected, not the realized, "
                     "counts (chain rule, docs/THEORY.md 4.4); declare the steps in advance (Analysis.preregister)")
    adapted = replace(totals, maxinfo=None, union=union, mutual_info=None, maxinfo_reason=None,
                      union_reason=union_reason, mutual_info_reason=mi_reason or totals.mutual_info_reason)
    return adapted, notes


def correct(pvalues, totals: LedgerTotals, *, alpha: float = 0.05, n_candidates: int | None = None,
            adaptive: bool = False) -> Corrections:
    r"""Every valid correction of ``pvalues`` under ``totals``, and the best of them.

    Parameters
    ----------
    pvalues : array_like
        Naive p-values of the selected tests.
    totals : LedgerTotals
        From :meth:`Ledger.totals`.
    alpha : float
        Level used for the thresholds (the corrected p-values themselves do not depend on it).
    n_candidates : int, optional
        Number of hypotheses declared before selection; enables the Bonferroni column.
    adaptive : bool, default False
        Whether the steps' certificates (counts, epsilons, their number) may depend on earlier
        outputs, i.e. were not all declared in advance. Then only the routes valid under
        adaptivity are computed (the union route with realized counts and Theorem 19, and
        Bonferroni), and the best column is :math:`\min(1, R\min_j\tilde p_j)` with
        :math:`R` = 1 + (1 if ``n_candidates`` is given): a number fixed before the data are
        seen, as the merge of Vovk and Wang (2020) requires. The plain minimum is valid only for
        thresholds fixed in advance (docs/THEORY.md 3.2, 3.2a).
    """
    p = check_pvalues("pvalues", pvalues).ravel()
    a = _alpha(alpha)
    if n_candidates is not None:
        n_candidates = check_int("n_candidates", n_candidates, low=1)
    if not isinstance(adaptive, bool):
        raise TypeError(f"`adaptive` must be True or False; got {adaptive!r}.")
    notes = list(totals.notes)
    if adaptive:
        totals, extra = _adaptive_totals(totals)
        notes.extend(extra)
    nan = np.full_like(p, np.nan)
    thresholds: dict[str, Threshold | None] = {}
    # max-information column: the better of the composition route and the union route (both
    # fixed thresholds when not adaptive; when adaptive at most one of them is left)
    mi_route = ["" for _ in p]
    p_mx = nan.copy()
    t_mx = []
    if totals.maxinfo is not None:
        p_mx = np.asarray(corrected_pvalue_maxinfo(p, totals.maxinfo), dtype=float).reshape(p.shape)
        mi_route = ["composition" if totals.n_steps else "0-bit"] * len(p)
        t_mx.append(gamma_maxinfo(a, totals.maxinfo))
    elif totals.maxinfo_reason:
        notes.append(totals.maxinfo_reason)
    if totals.union is not None:
        p_un = np.asarray(corrected_pvalue_union(p, totals.union), dtype=float).reshape(p.shape)
        better = ~(p_mx <= p_un)  # NaN-safe: union wins where max-info is NaN
        mi_route = [("union" if b else r) for b, r in zip(better, mi_route, strict=True)]
        p_mx = np.where(better, p_un, p_mx)
        t_mx.append(gamma_union(a, totals.union))
    elif totals.union_reason and totals.maxinfo is None:
        notes.append(totals.union_reason)
    if t_mx:
        thresholds["maxinfo"] = max(t_mx, key=lambda t: t.log2_gamma)
    p_mut = nan.copy()
    if totals.mutual_info is not None:
        p_mut = np.asarray(corrected_pvalue_mutual_info(p, totals.mutual_info), dtype=float).reshape(p.shape)
        thresholds["mutual_info"] = gamma_mutual_info(a, totals.mutual_info)
    elif totals.mutual_info_reason:
        notes.append(totals.mutual_info_reason)
    p_bon = nan.copy()
    if n_candidates is not None:
        p_bon = np.asarray(corrected_pvalue_bonferroni(p, n_candidates), dtype=float).reshape(p.shape)
        thresholds["bonferroni"] = gamma_bonferroni(a, n_candidates)
    stack = np.vstack([p_mx, p_mut, p_bon])
    names = ("max-information", "mutual information", "Bonferroni")
    # the merge factor must not depend on the path: the union route and the declared Bonferroni
    n_routes = 1 + (n_candidates is not None)
    merge = adaptive and n_routes > 1
    with np.errstate(invalid="ignore"):
        all_nan = np.all(np.isnan(stack), axis=0)
        best = np.where(all_nan, np.nan, np.nanmin(np.where(np.isnan(stack), np.inf, stack), axis=0))
    if merge:
        best = np.minimum(1.0, n_routes * best)
        notes.append(ADAPTIVE_NOTE)

    def route_of(i: int) -> str:
        if all_nan[i] or best[i] >= 1.0:  # nothing below 1: no route "produced" it
            return ""
        j = int(np.argmin(np.where(np.isnan(stack[:, i]), np.inf, stack[:, i])))
        if j < 2 and totals.n_steps == 0:  # nothing selected: 0 bits, and the information routes give the naive p
            name = "no selection step (0 bits)"
        else:
            name = f"max-information ({mi_route[i]})" if j == 0 else names[j]
        return f"{n_routes} x {name} (adaptive merge)" if merge else name

    best_route = tuple(route_of(i) for i in range(len(p)))
    gamma_best = _best_threshold(a, totals, n_candidates, thresholds, n_routes if merge else 1)
    thresholds["best"] = gamma_best
    if gamma_best is None:
        notes.append("no valid correction applies: every corrected column is NaN")
    return Corrections(alpha=a, pvalue_naive=p, pvalue_maxinfo=p_mx, pvalue_mutual_info=p_mut,
                       pvalue_bonferroni=p_bon, pvalue_best=best, best_route=best_route,
                       maxinfo_route=tuple(mi_route), gamma_best=gamma_best, notes=tuple(dict.fromkeys(notes)),
                       thresholds=thresholds, adaptive=merge)


def _best_threshold(a: float, totals: LedgerTotals, n_candidates: int | None, thresholds: dict,
                    n_merge: int) -> Threshold | None:
    """The largest threshold at ``a`` of the routes shown; with a merge of ``n_merge`` routes,
    the largest threshold at ``a / n_merge`` (THEORY.md 3.2a)."""
    if n_merge == 1:
        shown = [t for t in thresholds.values() if t is not None]
        return max(shown, key=lambda t: t.log2_gamma) if shown else None
    level = a / n_merge
    if level <= 0.0:  # alpha / R underflows: no positive threshold is representable, and 0 is always valid
        return Threshold(alpha=a, log2_gamma=-math.inf,
                         route=f"alpha/{n_merge} below the double range (adaptive merge)")
    shown = []
    if "maxinfo" in thresholds:
        cands = []
        if totals.maxinfo is not None:
            cands.append(gamma_maxinfo(level, totals.maxinfo))
        if totals.union is not None:
            cands.append(gamma_union(level, totals.union))
        shown.extend(cands)
    if "mutual_info" in thresholds and totals.mutual_info is not None:
        shown.append(gamma_mutual_info(level, totals.mutual_info))
    if "bonferroni" in thresholds and n_candidates is not None:
        shown.append(gamma_bonferroni(level, n_candidates))
    if not shown:
        return None
    t = max(shown, key=lambda t: t.log2_gamma)
    return replace(t, alpha=a, route=f"{t.route} at alpha/{n_merge} (adaptive merge)")


def interval_at_level(estimate: float, std_error: float, level_log2_tail: float, *,
                      df: float | None = None) -> tuple[float, float]:
    r"""Two-sided interval :math:`\hat\theta \pm q\,\mathrm{se}` whose total tail mass is
    :math:`2^{\ell}` (``level_log2_tail`` = ℓ = log2 γ), with q from the normal or Student t
    inverse survival function evaluated in log space, so γ far below 1e-300 still works.

    A naive interval at level 1 - γ(α) for the selected parameter covers with probability at
    least 1 - α (THEORY.md 3.1, same argument as for p-values).
    """
    if level_log2_tail == -math.inf:
        return (-math.inf, math.inf)
    log_half_tail = (level_log2_tail - 1.0) * LN2
    if df is None or not math.isfinite(df):
        q = float(-special.ndtri_exp(log_half_tail)) if log_half_tail < -1e-300 else 0.0
    else:
        half = math.exp(log_half_tail)
        if half > 1e-300:
            q = float(stats.t.isf(half, df))
        else:  # t tail ~ C |t|^{-df}: invert the log survival function by root finding
            q = math.exp(optimize.brentq(lambda u: stats.t.logsf(math.exp(u), df) - log_half_tail,
                                         0.0, 700.0, xtol=1e-14, maxiter=500))
    return (estimate - q * std_error, estimate + q * std_error)
