r"""Outcomes of replications, their streaming counts, rates and intervals, and replication seeds.

The lowest module of the validation layer: the scenarios build :class:`Outcomes`, the harness
(:mod:`selective.validation.harness`) accumulates them in :class:`Counts` and turns the counts
into rates with Monte-Carlo errors.

Reproducibility: one seed gives replication ``i`` the stream
``numpy.random.SeedSequence(seed).spawn(n_reps)[i]``, built directly as
``SeedSequence(entropy, spawn_key=(i,))`` (identical, without holding ``n_reps`` objects), so
a replication sees the same numbers whether it runs serially, in a local process pool or on a
Dask cluster, and whatever the chunking. Counts are accumulated as integers, so the merged
result is exactly the same in every execution mode.

Definitions (per p-value column and level α; a replication declares ``n_tests`` test slots):

* ``type_one_error``: false rejections / (replications × ``n_tests``). For one test per
  replication this is :math:`P[\tilde p_T\le\alpha,\ H_T\text{ true}]`, the probability every
  valid correction bounds by α (THEORY.md 1.6, 3.1); a replication that tests nothing counts
  as no rejection. With several slots it is the mean per slot, also at most α.
* ``fwer``: replications with at least one false rejection / replications.
* ``power``: true rejections / tested false hypotheses (conditional on testing a real effect).
* ``discovery_rate``: true rejections / (replications × ``n_tests``), the chance per slot of a
  correct discovery (compares columns whose selections differ, e.g. data splitting).

Intervals: Clopper-Pearson (exact) when each replication contributes at most one trial to the
measure; otherwise the Korn-Graubard version with the effective sample size of the ratio
estimator (E. L. Korn, B. I. Graubard, "Confidence intervals for proportions with small
expected number of positive counts estimated from survey data", Survey Methodology 24, 1998).
Monte-Carlo standard errors: the ratio-estimator (delta-method) standard error over
replications, which reduces to :math:`\sqrt{r(1-r)/n}` for one trial per replication.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_probability

__all__ = [
    "PVALUE_COLUMNS",
    "MEASURES",
    "FRAME_COLUMNS",
    "COLUMN_LABELS",
    "root_sequence",
    "replication_seed",
    "replication_rng",
    "Outcomes",
    "Counts",
    "clopper_pearson",
]

PVALUE_COLUMNS = (
    "pvalue_naive",
    "pvalue_maxinfo",
    "pvalue_mutual_info",
    "pvalue_bonferroni",
    "pvalue_best",
    "pvalue_split",
    "pvalue_conditional",
    "pvalue_min_unmerged",
    "pvalue_maxinfo_rows",
)
MEASURES = ("type_one_error", "fwer", "power", "discovery_rate")
FRAME_COLUMNS = ("scenario", "column", "measure", "alpha", "n_reps", "n_trials", "n_events", "rate", "mc_se",
                 "ci_low", "ci_high", "ci_method")
COLUMN_LABELS = {
    "pvalue_naive": "naive",
    "pvalue_maxinfo": "max-information",
    "pvalue_mutual_info": "mutual information",
    "pvalue_bonferroni": "Bonferroni",
    "pvalue_best": "best valid",
    "pvalue_split": "data splitting",
    "pvalue_conditional": "exact conditional",
    "pvalue_min_unmerged": "min of routes, not merged (diagnostic)",
    "pvalue_maxinfo_rows": "max-information, rows as units (diagnostic)",
}


# --------------------------------------------------------------------------------------------
# Per-replication streams
# --------------------------------------------------------------------------------------------


def root_sequence(seed: Any) -> np.random.SeedSequence:
    """The root seed sequence of a run: ``seed`` itself if it is a ``SeedSequence``, else
    ``SeedSequence(seed)`` (fresh entropy for ``None``).

    Parameters
    ----------
    seed : int, numpy SeedSequence or None
        A non-negative integer, a seed sequence, or None.

    Returns
    -------
    numpy.random.SeedSequence
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise TypeError(f"`seed` must be a non-negative integer, a numpy SeedSequence or None; got {seed!r}.")
    return np.random.SeedSequence(int(seed))


def replication_seed(seed: Any, i: int) -> np.random.SeedSequence:
    """The seed sequence of replication ``i``: ``SeedSequence(seed).spawn(i + 1)[i]``.

    Built directly from the parent's entropy and spawn key, so no list of ``n_reps`` children
    is ever held; equal to the spawned child whatever the execution mode.
    """
    root = root_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (int(i),),
                                  pool_size=root.pool_size)


def replication_rng(seed: Any, i: int) -> np.random.Generator:
    """``numpy.random.default_rng(replication_seed(seed, i))``: the stream of replication ``i``."""
    return np.random.default_rng(replication_seed(seed, i))


# --------------------------------------------------------------------------------------------
# Outcomes of a block of replications
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcomes:
    """P-values and truth of a block of replications, as arrays of shape ``(n_reps, n_slots)``.

    Attributes
    ----------
    pvalues : dict of str to ndarray
        One array per p-value column; NaN where the column tested nothing in that slot.
    null : dict of str to ndarray of bool
        True where the hypothesis tested in that slot by that column is a true null. Columns
        whose selection differs (data splitting) have their own truth.
    rows : ndarray of int, optional
        Tests per replication (the rows a pipeline returned), if known.
    """

    pvalues: dict[str, np.ndarray]
    null: dict[str, np.ndarray]
    rows: np.ndarray | None = None

    @classmethod
    def from_shared(cls, pvalues: dict[str, Any], null: Any, *,
                    null_by_column: dict[str, Any] | None = None) -> Outcomes:
        """Build from one truth array shared by every column (overridden per column)."""
        ps = {c: np.atleast_2d(np.asarray(v, dtype=float)) if np.ndim(v) else np.array([[float(v)]])
              for c, v in pvalues.items()}
        shared = np.asarray(null, dtype=bool)
        nulls = {}
        for c, p in ps.items():
            src = (null_by_column or {}).get(c, shared)
            nulls[c] = np.broadcast_to(np.asarray(src, dtype=bool).reshape(p.shape[0], -1), p.shape)
        return cls(pvalues=ps, null=nulls)

    def tests_per_replication(self) -> np.ndarray:
        """``rows`` if known, else the slots in which some column tested something."""
        if self.rows is not None:
            return np.asarray(self.rows, dtype=np.int64)
        tested = np.zeros(next(iter(self.pvalues.values())).shape, dtype=bool)
        for p in self.pvalues.values():
            tested[:, : p.shape[1]] |= ~np.isnan(p)
        return tested.sum(axis=1)

    @property
    def n_reps(self) -> int:
        return next(iter(self.pvalues.values())).shape[0] if self.pvalues else 0


    @classmethod
    def from_tables(cls, tables: Sequence[Any], columns: Sequence[str], nonnull: frozenset) -> Outcomes:
        """Turn one table per replication (CorrectedTable or DataFrame) into padded arrays.

        Parameters
        ----------
        tables : sequence of CorrectedTable or pandas.DataFrame
            One table per replication, one row per test, with the p-value columns present.
        columns : sequence of str
            The p-value columns to keep.
        nonnull : frozenset of str
            Row names with a real effect, used for tables without an ``is_null`` column.
        """
        frames = []
        for t in tables:
            f = getattr(t, "frame", t)
            if not isinstance(f, pd.DataFrame):
                raise TypeError("a pipeline must return a CorrectedTable or a pandas DataFrame; "
                                f"got {type(t).__name__}.")
            frames.append(f)
        width = max(1, max(len(f) for f in frames))
        r = len(frames)
        pv = {c: np.full((r, width), np.nan) for c in columns}
        nl = {c: np.ones((r, width), dtype=bool) for c in columns}
        for i, f in enumerate(frames):
            k = len(f)
            if k == 0:
                continue
            if "is_null" in f.columns:
                shared = f["is_null"].to_numpy(dtype=bool)
            else:
                shared = np.array([h not in nonnull for h in f.index], dtype=bool)
            for c in columns:
                if c in f.columns:
                    pv[c][i, :k] = f[c].to_numpy(dtype=float)
                    own = f"is_null_{c.removeprefix('pvalue_')}"
                    nl[c][i, :k] = f[own].to_numpy(dtype=bool) if own in f.columns else shared
        return cls(pvalues=pv, null=nl, rows=np.array([len(f) for f in frames], dtype=np.int64))


# --------------------------------------------------------------------------------------------
# Streaming counts
# --------------------------------------------------------------------------------------------

_SUMS = ("x", "xx", "n", "nn", "xn", "y", "yy", "m", "mm", "ym", "f", "d", "dd", "dn")


@dataclass
class Counts:
    """Integer sums over replications, per (column, alpha). Merging is exact addition.

    Attributes
    ----------
    columns : tuple of str
        The p-value columns counted.
    alphas : tuple of float
        The levels.
    n_reps : int
        Replications added so far.
    sums : dict of str to ndarray of int
        The sums behind the rates, each of shape ``(n_columns, n_alphas)``.
    present : ndarray of int
        Replications in which each column tested something.
    max_n : int
        Largest number of slots (type-I trials) in a replication.
    max_m : ndarray of int
        Largest number of non-null tests of each column in a replication.
    """

    columns: tuple[str, ...]
    alphas: tuple[float, ...]
    n_reps: int = 0
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    present: np.ndarray | None = None
    max_n: int = 0
    max_m: np.ndarray | None = None

    def __post_init__(self) -> None:
        shape = (len(self.columns), len(self.alphas))
        for s in _SUMS:
            self.sums.setdefault(s, np.zeros(shape, dtype=np.int64))
        if self.present is None:
            self.present = np.zeros(len(self.columns), dtype=np.int64)
        if self.max_m is None:
            self.max_m = np.zeros(len(self.columns), dtype=np.int64)

    def add(self, out: Outcomes, n_tests: int | None) -> None:
        """Count the rejections of a block of replications; ``n_tests`` declared slots per
        replication (None: the tests each replication returned)."""
        a = np.asarray(self.alphas)
        r = out.n_reps
        if r == 0:
            return
        self.n_reps += r
        per_rep = out.tests_per_replication() if n_tests is None else np.full(r, int(n_tests), dtype=np.int64)
        for ci, c in enumerate(self.columns):
            if c not in out.pvalues:
                continue
            p = out.pvalues[c]
            null = out.null[c]
            tested = ~np.isnan(p)
            n_r = per_rep
            with np.errstate(invalid="ignore"):
                rej = (p[:, :, None] <= a) & tested[:, :, None]
            false = (rej & null[:, :, None]).sum(axis=1)  # (r, n_alpha)
            true = (rej & ~null[:, :, None]).sum(axis=1)
            m_r = (tested & ~null).sum(axis=1)
            n2 = n_r[:, None]
            m2 = m_r[:, None]
            s = self.sums
            s["x"][ci] += false.sum(axis=0)
            s["xx"][ci] += (false * false).sum(axis=0)
            s["n"][ci] += int(n_r.sum())
            s["nn"][ci] += int((n_r * n_r).sum())
            s["xn"][ci] += (false * n2).sum(axis=0)
            s["y"][ci] += true.sum(axis=0)
            s["yy"][ci] += (true * true).sum(axis=0)
            s["m"][ci] += int(m_r.sum())
            s["mm"][ci] += int((m_r * m_r).sum())
            s["ym"][ci] += (true * m2).sum(axis=0)
            s["f"][ci] += (false > 0).sum(axis=0)
            s["d"][ci] += true.sum(axis=0)
            s["dd"][ci] += (true * true).sum(axis=0)
            s["dn"][ci] += (true * n2).sum(axis=0)
            self.present[ci] += int(tested.any(axis=1).sum())
            self.max_n = max(self.max_n, int(n_r.max(initial=0)))
            self.max_m[ci] = max(int(self.max_m[ci]), int(m_r.max(initial=0)))

    def merge(self, other: Counts) -> None:
        """Add the counts of another block of replications (of the same columns and levels)."""
        self.n_reps += other.n_reps
        for s in _SUMS:
            self.sums[s] += other.sums[s]
        self.present += other.present
        self.max_n = max(self.max_n, other.max_n)
        self.max_m = np.maximum(self.max_m, other.max_m)

    def to_frame(self, name: str, level: float) -> pd.DataFrame:
        """The tidy frame of rates: one row per (column, measure, alpha), columns :data:`FRAME_COLUMNS`.

        Parameters
        ----------
        name : str
            Scenario or pipeline name (the ``scenario`` column).
        level : float
            Coverage of the intervals.
        """
        rows = []
        s = self.sums
        R = self.n_reps
        for ci, c in enumerate(self.columns):
            if self.present[ci] == 0:
                continue  # the column never tested anything: not part of this scenario
            for ai, a in enumerate(self.alphas):
                g = {k: int(v[ci, ai]) for k, v in s.items()}
                specs = (
                    ("type_one_error", g["x"], g["xx"], g["n"], g["nn"], g["xn"], self.max_n <= 1),
                    ("fwer", g["f"], g["f"], R, R, g["f"], True),
                    ("power", g["y"], g["yy"], g["m"], g["mm"], g["ym"], int(self.max_m[ci]) <= 1),
                    ("discovery_rate", g["d"], g["dd"], g["n"], g["nn"], g["dn"], self.max_n <= 1),
                )
                for measure, x, xx, n, nn, xn, exact in specs:
                    rate, se, lo, hi, method = _ratio(x, xx, n, nn, xn, R, exact, level)
                    rows.append({"scenario": name, "column": c, "measure": measure, "alpha": float(a), "n_reps": R,
                                 "n_trials": n, "n_events": x, "rate": rate, "mc_se": se, "ci_low": lo,
                                 "ci_high": hi, "ci_method": method})
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


# --------------------------------------------------------------------------------------------
# Rates and intervals
# --------------------------------------------------------------------------------------------


def clopper_pearson(n_events: float, n_trials: float, *, confidence_level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) binomial interval; non-integer counts are allowed (Korn-Graubard).

    Parameters
    ----------
    n_events, n_trials : float
        Successes and trials (0 <= n_events <= n_trials, n_trials > 0).
    confidence_level : float
        Two-sided coverage.
    """
    level = check_probability("confidence_level", confidence_level, closed="neither")
    if not n_trials > 0:
        return (math.nan, math.nan)
    if not 0 <= n_events <= n_trials:
        raise ValueError(f"`n_events` must be in [0, n_trials = {n_trials!r}]; got {n_events!r}.")
    tail = (1 - level) / 2
    lo = 0.0 if n_events == 0 else float(stats.beta.ppf(tail, n_events, n_trials - n_events + 1))
    hi = 1.0 if n_events == n_trials else float(stats.beta.isf(tail, n_events + 1, n_trials - n_events))
    return (lo, hi)


def _ratio(num: int, num2: int, den: int, den2: int, cross: int, n_reps: int, exact: bool,
           level: float) -> tuple[float, float, float, float, str]:
    """Rate, Monte-Carlo standard error and interval of sum(X)/sum(N) over replications."""
    if den <= 0:
        return (math.nan, math.nan, math.nan, math.nan, "")
    r = num / den
    resid = max(num2 - 2 * r * cross + r * r * den2, 0.0)  # sum over replications of (X - r N)^2
    se = math.sqrt(resid * n_reps / max(n_reps - 1, 1)) / den
    if exact:
        lo, hi = clopper_pearson(num, den, confidence_level=level)
        return (r, se, lo, hi, "clopper-pearson")
    n_eff = den if se == 0 else min(den, r * (1 - r) / (se * se)) if 0 < r < 1 else den
    lo, hi = clopper_pearson(r * n_eff, n_eff, confidence_level=level)
    return (r, se, lo, hi, "korn-graubard")
