"""Set-up helpers of :class:`~selective.analysis.facade.Analysis`: units, budgets, seeds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..accounting.ledger import Ledger
from ..selectors.streaming import is_dask_frame

__all__ = ["budget_kwargs", "units_of", "child_seed", "check_declared_candidates", "bonferroni_family"]


def budget_kwargs(ledger: Ledger) -> dict[str, Any]:
    b = ledger.budget
    return {"budget_bits": b["bits"], "budget_beta": b["beta"], "budget_epsilon": b["epsilon"]}


def units_of(data: Any, units: Any, n_rows: int) -> tuple[Any, int, int]:
    """(units label, number of units, rows of the largest unit) for ``Analysis(units=...)``."""
    if units is None:
        return None, n_rows, 1
    if isinstance(units, (list, tuple, set, dict, np.ndarray, pd.Series)) or units not in data.columns:
        raise ValueError(f"`units` must be the label of a column of `data` naming each row's unit; got {units!r}. "
                         f"The columns are {list(map(str, data.columns))[:12]}.")
    col = data[units]
    n_missing, counts = col.isna().sum(), col.value_counts(sort=False)
    if is_dask_frame(data):
        import dask

        n_missing, counts = dask.compute(n_missing, counts)
    if n_missing:
        raise ValueError(f"`units` column {units!r} has {int(n_missing)} missing value(s); every row needs "
                         "a unit.")
    return units, int(len(counts)), int(counts.max())


def child_seed(rng: np.random.Generator) -> np.random.SeedSequence:
    """A seed sequence for the tests' resampling, derived from ``rng`` without drawing from it."""
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if isinstance(seq, np.random.SeedSequence):
        return seq.spawn(1)[0]
    return np.random.SeedSequence(2026)  # a Generator without a seed sequence: a fixed, documented stream


def frame_digest(data: Any) -> int | None:
    """A digest of an in-memory frame's labels, dtypes and values (pandas' row hashes), or None
    for Dask data and for values pandas cannot hash (then nothing is checked)."""
    if is_dask_frame(data):
        return None
    try:
        rows = pd.util.hash_pandas_object(data, index=True).to_numpy()
    except (TypeError, ValueError):
        return None
    return hash((rows.tobytes(), tuple(map(repr, data.columns)), tuple(map(str, data.dtypes))))


def check_unchanged(data: Any, digest: int | None, where: str) -> None:
    """Raise when ``data`` no longer has the digest it had when the analysis was created: a
    selection made on other values would be reported as if made on these."""
    if digest is not None and frame_digest(data) != digest:
        raise ValueError(f"`data` was modified in place after the Analysis was created (found at {where}): the "
                         "selections and tests would be about different values. Prepare the data first, then "
                         "create the Analysis (or give it a copy: Analysis(df.copy(), ...)).")


def check_declared_candidates(n_candidates: int | None, step: Any, where: str) -> None:
    """Refuse, before the data are read, a step that chooses among more candidates than the
    hypotheses declared with ``n_candidates``: Bonferroni over them could not cover the test of
    what it chooses (each candidate is at least one hypothesis that could have been tested)."""
    cands = getattr(step, "candidates", None)
    if n_candidates is None or cands is None or isinstance(cands, str) or not hasattr(cands, "__len__"):
        return
    if len(cands) > n_candidates:
        raise ValueError(f"`n_candidates`={n_candidates} declares fewer hypotheses than the {len(cands)} candidates "
                         f"{where} ({type(step).__name__}) chooses among; declare at least {len(cands)} (one per "
                         "candidate, more if each can be tested several ways). Nothing was recorded.")


def bonferroni_family(n_candidates: int | None, hypotheses: list[str]) -> tuple[int | None, str]:
    """``n_candidates`` for the Bonferroni column, or None with the reason when more distinct
    hypotheses were tested than declared (the tested ones cannot all be among the declared)."""
    n = len(dict.fromkeys(hypotheses))
    if n_candidates is None or n <= n_candidates:
        return n_candidates, ""
    return None, (f"Bonferroni withheld: {n} distinct hypotheses were tested but n_candidates = {n_candidates} were "
                  "declared, so the tested ones are not all among the declared.")
