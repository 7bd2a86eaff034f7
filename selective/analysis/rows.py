"""Assembly of the corrected table: from ledger totals, corrections and test results to rows.

:func:`build_table` is the report layer's one entry point. It takes what the analysis knows
(the test results, the ledger's totals, the corrections of the naive p-values, the declared
family size and any reason the ledger is void) and returns a :class:`CorrectedTable`: one
row per test, the note column (which bound, which scope) and the footnote (which theorems).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..accounting.certificates import PRODUCT
from ..accounting.totals import LedgerTotals
from ..exceptions import NoBoundError
from ..hypotheses._trust_model import VARIANCE_CHECK_MARK
from .report import CONDITIONAL_COLUMNS, FISSION_COLUMNS, HYBRID_COLUMNS, TABLE_COLUMNS, CorrectedTable
from .trust import _method

__all__ = ["ADJUST_METHODS", "void_totals", "build_table"]

#: Multiple-testing adjustments offered on top of the selection correction (statsmodels names).
ADJUST_METHODS = ("holm", "bonferroni", "fdr_bh", "fdr_by")


def void_totals(totals: LedgerTotals, reasons: Sequence[str]) -> LedgerTotals:
    """The totals with every information route removed: a look at the data is missing from the
    ledger, so no information bound covers the analysis (Bonferroni over declared hypotheses
    does not depend on the ledger and stays)."""
    reason = "corrections from the ledger are void: " + "; ".join(reasons)
    return LedgerTotals(n_rows=totals.n_rows, n_steps=totals.n_steps, maxinfo=None, union=None, mutual_info=None,
                        maxinfo_reason=reason, notes=totals.notes)


def _uses_product_scope(totals: LedgerTotals) -> bool:
    """Whether a max-information route rests on Theorem 20 (or a product-scope certificate),
    which holds for independent records (rows or units) only, as under the null."""
    fam = totals.maxinfo
    return (fam is not None and ((fam.prefix_epsilon > 0 and fam.allow_product) or fam.product_scope_fixed)) or (
        totals.union is not None and totals.union.dp_epsilon > 0 and totals.union.allow_product)


def _corrected_interval(result: Any, gamma) -> tuple[float, float]:
    if gamma is None or not math.isfinite(gamma.log2_gamma) or gamma.gamma < getattr(result, "interval_level", 0.0):
        return (math.nan, math.nan)  # (a GLM interval is trusted only down to its own level, THEORY 7.1)
    if gamma.gamma > 0:
        return result.ci_at(alpha=gamma.gamma) if hasattr(result, "ci_at") else (math.nan, math.nan)
    return (-math.inf, math.inf)  # gamma below the double range: no finite interval to report


def _scope_phrase(units: Any) -> str:
    return "independent units" + (f" ({units!r})" if units is not None else " (rows)")


def _row_note(corr, i: int, *, product_scope: bool, fallback: bool, units: Any = None) -> str:
    notes = []
    if np.isnan(corr.pvalue_maxinfo[i]) and np.isnan(corr.pvalue_mutual_info[i]):
        notes.append("no information bound applies")
    elif not np.isnan(corr.pvalue_maxinfo[i]) and corr.maxinfo_route[i] == "0-bit":
        notes.append("max-info: 0 bits, no selection step (the naive p-value)")
    elif not np.isnan(corr.pvalue_maxinfo[i]):
        notes.append(f"max-info: {corr.maxinfo_route[i]} bound" + (f", assumes {_scope_phrase(units)}"
                                                                   if product_scope else ""))
    if fallback:
        notes.append("DP after selection: Theorem 19")
    return "; ".join(notes)


_ROUTE_COLUMNS = {"maxinfo": "pvalue_maxinfo", "mutual_info": "pvalue_mutual_info",
                  "bonferroni": "pvalue_bonferroni", "best": "pvalue_best"}


_ROUTE_NAMES = {"maxinfo": "max-info", "mutual_info": "mutual-information", "bonferroni": "Bonferroni",
                "best": "best valid"}


def _withhold(row: dict[str, Any], corr, trusted: float, naive: float) -> list[str]:
    r"""Withhold every corrected column whose threshold lies below the level at which the
    row's naive p-value is trusted (and the corrected interval with the best column), unless
    the naive p-value itself is at or above that level.

    A corrected p-value :math:`\tilde p` rejects at a level :math:`a` exactly when the naive
    :math:`p \le \gamma(a)`, with :math:`\gamma` increasing in :math:`a`; so every rejection
    it implies compares p with a threshold of at least p. When :math:`p \ge u_0` (the trusted
    level) those thresholds are all trusted and :math:`\tilde p` is shown, whatever the
    report's own threshold (it then does not reject at alpha); a corrected p-value of 1 rejects
    at no level and is always shown. Displayed only when
    :math:`p \ge u_0`, the column's rejection events are :math:`\{u_0 \le p \le \gamma(a)\}`,
    empty whenever :math:`\gamma(a) < u_0` (docs/THEORY.md 7.1). The interval at
    :math:`1 - \gamma` has no such reading and follows the threshold."""
    withheld = []
    for key, col in _ROUTE_COLUMNS.items():
        t = corr.thresholds.get(key)
        below = t is not None and t.log2_gamma < np.log2(trusted)
        if below and key == "best":
            row["ci_corrected_low"] = row["ci_corrected_high"] = math.nan
        if below and not (naive >= trusted or row[col] >= 1.0) and not np.isnan(row[col]):
            row[col] = math.nan
            withheld.append(_ROUTE_NAMES[key])
            if key == "best":
                row["best_route"] = ""
    return withheld


def _method_of(result: Any) -> str:
    return _method(result)


def _rows(results: Sequence[Any], totals: LedgerTotals, corr, units: Any = None,
          trust: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    product_scope = _uses_product_scope(totals)
    fallback = any("Theorem 19" in note for note in totals.notes)
    rows = []
    for i, r in enumerate(results):
        ci_c = _corrected_interval(r, corr.gamma_best)
        tr = trust[i] if trust is not None else None
        note = _row_note(corr, i, product_scope=product_scope, fallback=fallback, units=units)
        if tr is not None and tr.note:
            note = "; ".join(x for x in (note, tr.note) if x)
        # the naive columns are the test's own output; a version used at the corrected level (an
        # exact or permutation p-value) feeds the corrections only
        own = tr.original if tr is not None and tr.original is not None else r
        rows.append({
            "estimate": own.estimate, "ci_low": own.ci_naive[0], "ci_high": own.ci_naive[1],
            "statistic": own.statistic, "df": own.df, "n_obs": getattr(own, "n_obs", math.nan),
            "pvalue_naive": own.pvalue_naive,
            "pvalue_maxinfo": corr.pvalue_maxinfo[i], "pvalue_mutual_info": corr.pvalue_mutual_info[i],
            "pvalue_bonferroni": corr.pvalue_bonferroni[i], "pvalue_best": corr.pvalue_best[i],
            "best_route": corr.best_route[i], "pvalue_adjusted": math.nan,
            "ci_corrected_low": ci_c[0], "ci_corrected_high": ci_c[1],
            "note": note,
        })
        extra = []
        if tr is not None and tr.trusted_level > 0:
            withheld = _withhold(rows[-1], corr, tr.trusted_level, r.pvalue_naive)
            if "max-info" in withheld:  # no route to name for a withheld max-info cell
                rows[-1]["note"] = "; ".join(x for x in rows[-1]["note"].split("; ") if not x.startswith("max-info: "))
            if withheld and "withheld" not in tr.note:
                extra.append(f"{', '.join(withheld)} withheld: threshold below {tr.trusted_level:.2g}, the smallest "
                             f"level at which the {_method_of(tr.result)} p-value is trusted")
            elif not withheld and tr.note.endswith(_TRUST_WITHHELD):
                # nothing of this row compares the p-value with a smaller threshold: say so, not "withheld"
                rows[-1]["note"] = rows[-1]["note"].removesuffix(_TRUST_WITHHELD) + (
                    ", but none of this row's corrected p-values needs a smaller threshold")
        if math.isnan(rows[-1]["ci_corrected_low"]) and corr.gamma_best is not None \
                and math.isfinite(corr.gamma_best.log2_gamma):
            extra.append(_interval_reason(r, corr.gamma_best.gamma, tr))
        rows[-1]["note"] = "; ".join(x for x in (rows[-1]["note"], *extra) if x)
    return rows


#: The note of a test without ``conditional_on`` in a table that has the conditional column.
_NOT_CONDITIONAL = ("conditional withheld: the test was not declared conditional on a selection "
                    "(test(..., conditional_on=...)), so it has no conditional or hybrid p-value")

#: The end of the trust rule's note for a p-value without a trusted version (selective.analysis.trust).
_TRUST_WITHHELD = ": corrected p-values that compare it with a smaller threshold are withheld"


#: where a variance check's note turns from what it saw to how it judged it
_CHECK_HOW = re.compile(r" \((?:studentised|z = )")


def _interval_reason(result: Any, gamma: float, tr: Any) -> str:
    """Why the corrected interval of a row is withheld (NaN) although the level is finite."""
    rule = getattr(result, "interval_rule", None)
    if not hasattr(result, "ci_at") or getattr(rule, "kind", "") == "none":
        return "corrected interval withheld: the test gives no interval"
    trusted = tr.trusted_level if tr is not None else 0.0
    floor = max(float(getattr(rule, "min_alpha", 0.0)), trusted, float(getattr(result, "interval_level", 0.0)))
    if floor > gamma:
        own = (f" (the {_method_of(result).replace('_', ' ')} p-value used at the corrected level has no interval "
               "of its own)" if tr is not None and tr.replaced else "")
        if floor >= 1.0:
            method = str(getattr(result, "method", ""))
            at = method.find(VARIANCE_CHECK_MARK)
            why = f" ({_CHECK_HOW.split(method[at:])[0]})" if at >= 0 else ""
            return f"corrected interval withheld: the test's interval is trusted at no miscoverage below 1{why}{own}"
        glm = getattr(result, "interval_trusted_level", None)  # a GLM's, read where the effect is (THEORY 7.1);
        # the reasons are joined by ", and " ("; " separates a row's notes)
        effect = ("" if glm != floor else "the many-columns charge, rule 2c, which grows with the fitted effect"
                  if "rule 2c" in str(getattr(result, "method", "")) else
                  "read at the fitted means, where the fitted effect skews the score")
        why = ", and ".join(x for x in (effect, own.strip()[1:-1]) if x)
        return (f"corrected interval withheld: the test's interval is trusted down to miscoverage {floor:.2g} only, "
                f"above {gamma:.2g}" + (f" ({why})" if why else ""))
    return f"corrected interval withheld: the test's interval is not defined at miscoverage {gamma:.2g}"


def _adjusted(best: np.ndarray, method: str) -> np.ndarray:
    from statsmodels.stats.multitest import multipletests

    # a withheld p-value enters the family as 1 (it rejects nothing): the family keeps every test,
    # as the footnote says, and a procedure monotone in the p-values stays valid
    ok = ~np.isnan(best)
    adj = np.full_like(best, np.nan)
    if ok.any():
        adj[ok] = multipletests(np.where(ok, best, 1.0), method=method)[1][ok]
    return adj


def footnote(totals: LedgerTotals, corr, *, alpha: float, n_candidates: int | None, adjust: str | None,
             n_tests: int, units: Any = None, group_size: int = 1, bonferroni_reason: str = "") -> str:
    """The theorems behind each column, the ledger's totals and the corrected level."""
    if units is None:
        parts = [f"Selection ledger: {totals.n_steps} step(s) on n = {totals.n_rows} rows."]
    else:
        parts = [f"Selection ledger: {totals.n_steps} step(s) on n = {totals.n_rows} independent units "
                 f"({units!r}, up to {group_size} rows each; DP steps pay for group privacy)."]
    beta = min(1e-3, alpha / 10) or alpha  # alpha / 10 underflows to 0 below about 5e-323
    if totals.maxinfo is not None:
        try:
            b = totals.maxinfo.bound(beta)
            scope = "product (i.i.d.) data only" if b.scope == PRODUCT else "any distribution"
            parts.append(f"Max-information {b.bits:.3g} bits at beta = {beta:g} ({scope}; Dwork et al. 2015 "
                         "Thms 13, 17, 19, 20 and Lemma 14).")
        except NoBoundError as exc:
            parts.append(str(exc))
    if totals.union is not None:
        parts.append("Union-bound route over description-length outcomes (docs/THEORY.md 3.6).")
    if totals.mutual_info is not None:
        parts.append(f"Mutual information {totals.mutual_info.bits:.3g} bits (binary-KL, Russo-Zou and "
                     "max-information routes; the smallest is reported).")
    if n_candidates is not None:
        parts.append(f"Bonferroni over {n_candidates} declared hypotheses.")
    elif bonferroni_reason:
        parts.append(bonferroni_reason)
    elif np.isnan(np.asarray(corr.pvalue_bonferroni, dtype=float)).any():
        parts.append("Bonferroni withheld: no number of candidate hypotheses was declared "
                     "(Analysis(n_candidates=...), before looking at the data).")
    if corr.gamma_best is not None and math.isfinite(corr.gamma_best.log2_gamma):
        parts.append(f"Corrected intervals at level 1 - gamma, gamma = {corr.gamma_best.gamma:.3g} "
                     f"({corr.gamma_best.route}) for alpha = {alpha:g}.")
    if adjust is not None:
        parts.append(f"Adjusted p-values: {adjust} across the {n_tests} tests, on the best valid p-values.")
    parts.extend(n[:1].upper() + n[1:] + ("" if n.endswith(".") else ".") for n in corr.notes if n)
    return " ".join(parts)


def build_table(results: Sequence[Any], totals: LedgerTotals, corr, *, alpha: float,
                n_candidates: int | None = None, adjust: str | None = None,
                ledger_rows: list[dict[str, Any]] | None = None, units: Any = None,
                group_size: int = 1, trust: Sequence[Any] | None = None,
                conditional: Sequence[dict[str, Any] | None] | None = None,
                fission: Sequence[dict[str, Any]] | None = None, bonferroni_reason: str = "") -> CorrectedTable:
    """The corrected table of ``results`` (test results, in order) under ``totals`` and ``corr``
    (the corrections of their naive p-values, :func:`selective.corrections.correct`).
    ``trust`` (from :func:`selective.analysis.trust.results_at_level`) adds each row's note on
    how its p-value was obtained and withholds the columns used below its trusted level.
    ``conditional`` (from :func:`selective.analysis.conditional_rows.conditional_cells`) and
    ``fission`` (from :func:`selective.analysis.fission_mode.fission_cells`) add their columns,
    with their notes, to the rows that have them."""
    index = pd.Index(_unique([r.hypothesis for r in results]), name="hypothesis")
    rows = _rows(results, totals, corr, units, trust)
    columns = list(TABLE_COLUMNS)
    for names, cells in ((FISSION_COLUMNS, fission), (CONDITIONAL_COLUMNS, conditional)):
        if cells is None:
            continue
        if any(cell is not None and HYBRID_COLUMNS[0] in cell for cell in cells):  # a test after a TopK screen
            names = names + HYBRID_COLUMNS
        columns = columns[:columns.index("note")] + list(names) + ["note"]
        for row, cell in zip(rows, cells, strict=True):
            row.update({c: math.nan if cell is None else cell.get(c, math.nan) for c in names})
            if cell is not None:
                row["note"] = "; ".join(x for x in (row["note"], cell["note"]) if x)
            elif names is CONDITIONAL_COLUMNS or HYBRID_COLUMNS[0] in names:
                row["note"] = "; ".join(x for x in (row["note"], _NOT_CONDITIONAL) if x)
    frame = pd.DataFrame(rows, index=index, columns=columns)
    if adjust is not None:
        frame["pvalue_adjusted"] = _adjusted(frame["pvalue_best"].to_numpy(dtype=float), adjust)
    note = footnote(totals, corr, alpha=alpha, n_candidates=n_candidates, adjust=adjust, n_tests=len(results),
                    units=units, group_size=group_size, bonferroni_reason=bonferroni_reason)
    return CorrectedTable(frame=frame, alpha=alpha, footnote=note, ledger_rows=list(ledger_rows or []))


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        if n in seen:
            seen[n] += 1
            out.append(f"{n} [{seen[n]}]")
        else:
            seen[n] = 1
            out.append(n)
    return out
