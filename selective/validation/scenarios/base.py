"""The base of the scenarios and the pieces they share: the corrected columns for fixed
certificates and the two-sample Student t-test along an axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from ..._validation import check_probability
from ...accounting.ledger import Ledger
from ...corrections import correct
from ..outcomes import Outcomes

__all__ = ["Scenario"]

_STANDARD = ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best",
             "pvalue_split")


def _corrected(p_naive: np.ndarray, certificates: Sequence[Any], n_rows: int, n_candidates: int,
               alpha: float = 0.05) -> dict[str, np.ndarray]:
    """Every corrected column for naive p-values (NaN = no test) under fixed certificates."""
    ledger = Ledger(n_rows)
    for cert in certificates:
        ledger.record(cert)
    out = {k: np.full(p_naive.shape, np.nan) for k in
           ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best")}
    ok = ~np.isnan(p_naive)
    if ok.any():
        c = correct(np.clip(p_naive[ok], 0.0, 1.0), ledger.totals(), alpha=alpha, n_candidates=n_candidates)
        for k in out:
            out[k][ok] = getattr(c, k)
    return out


def as_reported(result: Any, trusted: float) -> float:
    """A randomized conditional p-value (:func:`selective.conditional.randomized_inference`, one
    target) as the report shows it at every level.

    The report withholds the p-value at level alpha when the test relies on the normal tail at
    alpha times the selection's null probability P below ``trusted`` (the z-test's trusted level
    on the same rows), unless the naive p-value is itself at least ``trusted``
    (``selective.analysis.conditional_rows``). So it rejects at alpha iff p <= alpha and
    alpha >= trusted / P (or naive >= trusted): iff max(p, trusted / P) <= alpha,
    one number for every alpha.
    """
    p, naive = float(result.pvalue[0]), float(result.pvalue_naive[0])
    if not trusted > 0 or naive >= trusted:
        return p
    return min(1.0, max(p, trusted / float(np.exp(result.log_selection_probability[0]))))


def _pooled_t(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """Student's pooled two-sample t along axis -2: a (..., na, m), b (..., nb, m)."""
    na, nb = a.shape[-2], b.shape[-2]
    va, vb = a.var(axis=-2, ddof=1), b.var(axis=-2, ddof=1)
    sp2 = ((na - 1) * va + (nb - 1) * vb) / (na + nb - 2)
    t = (a.mean(axis=-2) - b.mean(axis=-2)) / np.sqrt(sp2 * (1.0 / na + 1.0 / nb))
    return t, na + nb - 2


def _two_sided_t(t: np.ndarray, df: Any) -> np.ndarray:
    return 2.0 * stats.t.sf(np.abs(t), df)



@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """Base of the scenarios: common fields and the single-replication view.

    Attributes
    ----------
    name : str
    split_fraction : float
        Declared share of rows used for selection by the data-splitting baseline.
    """

    name: str = ""
    split_fraction: float = 0.5

    description: ClassVar[str] = ""
    n_tests: ClassVar[int] = 1
    default_reps: ClassVar[int] = 2000
    chunk_size: ClassVar[int] = 250
    naive_is_biased: ClassVar[bool] = True
    #: columns shown as diagnostics that are not valid in this scenario, with the reason
    invalid_columns: ClassVar[dict[str, str]] = {}
    #: columns the package withholds in this scenario (every value NaN), with the reason
    withheld_columns: ClassVar[dict[str, str]] = {}
    #: labels of the scenario's own columns (those outside ``outcomes.PVALUE_COLUMNS``)
    column_labels: ClassVar[dict[str, str]] = {}

    def __post_init__(self) -> None:
        check_probability("split_fraction", self.split_fraction, closed="neither")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD

    @property
    def truth(self) -> str:  # pragma: no cover - every scenario overrides it
        raise NotImplementedError

    @property
    def n_rows(self) -> int:  # pragma: no cover
        raise NotImplementedError

    @property
    def n_candidates(self) -> int:  # pragma: no cover
        raise NotImplementedError

    def certificates(self) -> tuple[Any, ...]:  # pragma: no cover
        raise NotImplementedError

    def ledger(self) -> Ledger:
        """A ledger holding the selection's certificates (they do not depend on the data)."""
        led = Ledger(self.n_rows)
        for c in self.certificates():
            led.record(c)
        return led

    def replicate_many(self, rngs: Sequence[np.random.Generator]) -> Outcomes:  # pragma: no cover
        raise NotImplementedError

    def replicate(self, rng: Any = None) -> pd.DataFrame:
        """One replication as a frame: one row per test slot, every p-value column and the truth."""
        g = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        out = self.replicate_many([g])
        row = {c: out.pvalues[c][0] for c in self.columns}
        row["is_null"] = out.null[self.columns[0]][0]
        row["is_null_split"] = out.null["pvalue_split"][0] if "pvalue_split" in out.null else row["is_null"]
        return pd.DataFrame(row, index=pd.Index([f"slot {i}" for i in range(self.n_tests)], name="hypothesis"))

    def _finish(self, p_naive: np.ndarray, null: np.ndarray, extra: dict[str, np.ndarray],
                null_split: np.ndarray | None = None) -> Outcomes:
        cols = {"pvalue_naive": p_naive, **_corrected(p_naive, self.certificates(), self.n_rows, self.n_candidates),
                **extra}
        by = {} if null_split is None else {"pvalue_split": null_split}
        return Outcomes.from_shared({c: cols[c].reshape(len(p_naive), -1) for c in self.columns},
                                    null.reshape(len(p_naive), -1), null_by_column=by)

