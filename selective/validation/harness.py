r"""Validity and power harness: repeat a whole selection-then-test pipeline many times.

Under a known truth the harness measures, for every p-value column (naive, max-information,
mutual information, best valid, Bonferroni, data splitting, exact conditional), the type-I
error, the family-wise error and the power, with Monte-Carlo standard errors and binomial
intervals, and returns them as one tidy frame.

Reproducibility: one seed gives replication ``i`` the stream
``numpy.random.SeedSequence(seed).spawn(n_reps)[i]``, built directly as
``SeedSequence(entropy, spawn_key=(i,))`` (identical, without holding ``n_reps`` objects), so
a replication sees the same numbers whether it runs serially, in a local process pool or on a
Dask cluster, and whatever the chunking. Counts are accumulated as integers, so the merged
result is exactly the same in every execution mode.

Streaming: each chunk of replications returns counts only (a few arrays of shape
``(n_columns, n_alphas)``); memory does not grow with the number of replications.

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

import argparse
import math
import numbers
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_choice, check_int, check_probability, check_rng

__all__ = [
    "PVALUE_COLUMNS",
    "MEASURES",
    "Outcomes",
    "RowSplit",
    "SimulationResult",
    "simulate",
    "replication_seed",
    "replication_rng",
    "split_rows",
    "data_splitting",
    "clopper_pearson",
    "plot_rejection_curves",
    "validate",
    "add_validate_command",
]

PVALUE_COLUMNS = (
    "pvalue_naive",
    "pvalue_maxinfo",
    "pvalue_mutual_info",
    "pvalue_bonferroni",
    "pvalue_best",
    "pvalue_split",
    "pvalue_conditional",
)
MEASURES = ("type_one_error", "fwer", "power", "discovery_rate")
FRAME_COLUMNS = ("scenario", "column", "measure", "alpha", "n_reps", "n_trials", "n_events", "rate", "mc_se",
                 "ci_low", "ci_high", "ci_method")
_LABELS = {
    "pvalue_naive": "naive",
    "pvalue_maxinfo": "max-information",
    "pvalue_mutual_info": "mutual information",
    "pvalue_bonferroni": "Bonferroni",
    "pvalue_best": "best valid",
    "pvalue_split": "data splitting",
    "pvalue_conditional": "exact conditional",
}
DEFAULT_ALPHAS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2)


# --------------------------------------------------------------------------------------------
# Per-replication streams
# --------------------------------------------------------------------------------------------


def _root_sequence(seed: Any) -> np.random.SeedSequence:
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
    root = _root_sequence(seed)
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
    """

    pvalues: dict[str, np.ndarray]
    null: dict[str, np.ndarray]
    rows: np.ndarray | None = None  # tests per replication (rows a pipeline returned), if known

    @classmethod
    def from_shared(cls, pvalues: dict[str, Any], null: Any, *, null_by_column: dict[str, Any] | None = None) -> Outcomes:
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


def _frame_outcomes(tables: Sequence[Any], columns: Sequence[str], nonnull: frozenset) -> Outcomes:
    """Turn one table per replication (CorrectedTable or DataFrame) into padded arrays."""
    frames = []
    for t in tables:
        f = getattr(t, "frame", t)
        if not isinstance(f, pd.DataFrame):
            raise TypeError(f"a pipeline must return a CorrectedTable or a pandas DataFrame; got {type(t).__name__}.")
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
    return Outcomes(pvalues=pv, null=nl, rows=np.array([len(f) for f in frames], dtype=np.int64))


# --------------------------------------------------------------------------------------------
# Streaming counts
# --------------------------------------------------------------------------------------------

_SUMS = ("x", "xx", "n", "nn", "xn", "y", "yy", "m", "mm", "ym", "f", "d", "dd", "dn")


@dataclass
class _Counts:
    """Integer sums over replications, per (column, alpha). Merging is exact addition."""

    columns: tuple[str, ...]
    alphas: tuple[float, ...]
    n_reps: int = 0
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    present: np.ndarray | None = None  # replications in which the column tested something
    max_n: int = 0  # largest number of slots (type-I trials) in a replication
    max_m: np.ndarray | None = None  # largest number of non-null tests of a column in a replication

    def __post_init__(self) -> None:
        shape = (len(self.columns), len(self.alphas))
        for s in _SUMS:
            self.sums.setdefault(s, np.zeros(shape, dtype=np.int64))
        if self.present is None:
            self.present = np.zeros(len(self.columns), dtype=np.int64)
        if self.max_m is None:
            self.max_m = np.zeros(len(self.columns), dtype=np.int64)

    def add(self, out: Outcomes, n_tests: int | None) -> None:
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

    def merge(self, other: _Counts) -> None:
        self.n_reps += other.n_reps
        for s in _SUMS:
            self.sums[s] += other.sums[s]
        self.present += other.present
        self.max_n = max(self.max_n, other.max_n)
        self.max_m = np.maximum(self.max_m, other.max_m)


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


# --------------------------------------------------------------------------------------------
# Running chunks
# --------------------------------------------------------------------------------------------


def _is_scenario(target: Any) -> bool:
    return hasattr(target, "replicate_many")


def _run_chunk(target: Any, start: int, stop: int, root: np.random.SeedSequence, columns: tuple[str, ...],
               alphas: tuple[float, ...], n_tests: int | None, nonnull: frozenset) -> _Counts:
    rngs = [np.random.default_rng(replication_seed(root, i)) for i in range(start, stop)]
    counts = _Counts(columns, alphas)
    if _is_scenario(target):
        out = target.replicate_many(rngs)
    else:
        out = _frame_outcomes([target(g) for g in rngs], columns, nonnull)
    counts.add(out, n_tests)
    return counts


def _chunks(n_reps: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n_reps, size):
        yield start, min(n_reps, start + size)


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Rejection rates of every p-value column, from :func:`simulate`.

    Attributes
    ----------
    frame : pandas.DataFrame
        Tidy: one row per (column, measure, alpha) with columns :data:`FRAME_COLUMNS`.
    name : str
        Scenario or pipeline name.
    n_reps : int
    alpha : float
        The main level (also in ``alphas``).
    alphas : tuple of float
    seed_entropy : int
        Entropy of the root seed sequence (reproduces the run when no seed was given).
    confidence_level : float
        Coverage of the intervals.
    elapsed_seconds : float
        Wall time (not part of the comparison of two results).
    """

    frame: pd.DataFrame
    name: str
    n_reps: int
    alpha: float
    alphas: tuple[float, ...]
    seed_entropy: int
    confidence_level: float = 0.95
    truth: str = ""
    elapsed_seconds: float = field(default=math.nan, compare=False)

    def __repr__(self) -> str:
        return f"SimulationResult({self.name!r}, n_reps={self.n_reps}, alpha={self.alpha:g})\n{self.summary().to_string()}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimulationResult):
            return NotImplemented
        return (self.name, self.n_reps, self.alpha, self.alphas, self.seed_entropy, self.confidence_level) == (
            other.name, other.n_reps, other.alpha, other.alphas, other.seed_entropy, other.confidence_level
        ) and self.frame.equals(other.frame)

    __hash__ = None  # type: ignore[assignment]

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.frame["column"]))

    def rate(self, column: str, measure: str = "type_one_error", alpha: float | None = None) -> pd.Series:
        """The row of ``frame`` for one column, measure and level."""
        a = self.alpha if alpha is None else alpha
        f = self.frame
        rows = f[(f.column == column) & (f.measure == measure) & np.isclose(f.alpha, a)]
        if len(rows) != 1:
            raise KeyError(f"no row for column {column!r}, measure {measure!r}, alpha {a!r}; "
                           f"columns: {list(self.columns)!r}.")
        return rows.iloc[0]

    def summary(self, alpha: float | None = None) -> pd.DataFrame:
        """One row per p-value column at level ``alpha``: type-I error and power with intervals."""
        a = self.alpha if alpha is None else alpha
        f = self.frame[np.isclose(self.frame.alpha, a)]
        out = pd.DataFrame(index=pd.Index(self.columns, name="column"))
        for measure, short in (("type_one_error", "type_I"), ("power", "power")):
            g = f[f.measure == measure].set_index("column")
            out[short] = g["rate"]
            out[f"{short}_ci_low"] = g["ci_low"]
            out[f"{short}_ci_high"] = g["ci_high"]
        out["fwer"] = f[f.measure == "fwer"].set_index("column")["rate"]
        out.insert(0, "method", [_LABELS.get(c, c) for c in out.index])
        return out

    def to_markdown(self, alpha: float | None = None, digits: int = 3) -> str:
        s = self.summary(alpha)

        def fmt(x: Any) -> str:
            return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.{digits}f}" if isinstance(x, float) else str(x)

        head = ["column", "method", "type I", "95% CI", "power", "95% CI"] if self.confidence_level == 0.95 else \
            ["column", "method", "type I", "CI", "power", "CI"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for col, row in s.iterrows():
            ci1 = f"[{fmt(row.type_I_ci_low)}, {fmt(row.type_I_ci_high)}]"
            ci2 = f"[{fmt(row.power_ci_low)}, {fmt(row.power_ci_high)}]" if not math.isnan(row.power) else "n/a"
            lines.append(f"| {col} | {row.method} | {fmt(row.type_I)} | {ci1} | {fmt(row.power)} | {ci2} |")
        return "\n".join(lines)

    def plot(self, **kwargs: Any) -> Any:
        """:func:`plot_rejection_curves` of this result."""
        return plot_rejection_curves(self, **kwargs)


def _frame_from_counts(counts: _Counts, name: str, level: float) -> pd.DataFrame:
    rows = []
    s = counts.sums
    R = counts.n_reps
    for ci, c in enumerate(counts.columns):
        if counts.present[ci] == 0:
            continue  # the column never tested anything: not part of this scenario
        for ai, a in enumerate(counts.alphas):
            g = {k: int(v[ci, ai]) for k, v in s.items()}
            specs = (
                ("type_one_error", g["x"], g["xx"], g["n"], g["nn"], g["xn"], counts.max_n <= 1),
                ("fwer", g["f"], g["f"], R, R, g["f"], True),
                ("power", g["y"], g["yy"], g["m"], g["mm"], g["ym"], int(counts.max_m[ci]) <= 1),
                ("discovery_rate", g["d"], g["dd"], g["n"], g["nn"], g["dn"], counts.max_n <= 1),
            )
            for measure, x, xx, n, nn, xn, exact in specs:
                rate, se, lo, hi, method = _ratio(x, xx, n, nn, xn, R, exact, level)
                rows.append({"scenario": name, "column": c, "measure": measure, "alpha": float(a), "n_reps": R,
                             "n_trials": n, "n_events": x, "rate": rate, "mc_se": se, "ci_low": lo, "ci_high": hi,
                             "ci_method": method})
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def simulate(target: Any, *, n_reps: int, alpha: float = 0.05, alphas: Sequence[float] | None = None,
             seed: Any = None, n_jobs: int = 1, backend: str = "local", client: Any = None,
             chunk_size: int | None = None, n_tests: int | None = None, nonnull: Iterable[str] = (),
             columns: Sequence[str] | None = None, name: str | None = None, progress: bool = True,
             confidence_level: float = 0.95) -> SimulationResult:
    """Run a selection-then-test pipeline ``n_reps`` times and measure every p-value column.

    Parameters
    ----------
    target : scenario or callable
        A scenario of :mod:`selective.validation.scenarios` (anything with ``replicate_many(rngs) ->
        Outcomes``), or ``pipeline(rng) -> CorrectedTable or DataFrame`` whose rows are the
        tests of one replication with the p-value columns of :data:`PVALUE_COLUMNS` (those
        present). A boolean column ``is_null`` gives each row's truth (else ``nonnull``);
        ``is_null_split`` etc. override it for one column.
    n_reps : int
        Replications, >= 1.
    alpha : float
        Main level, in (0, 1).
    alphas : sequence of float, optional
        Levels at which rates are computed (the curve of :func:`plot_rejection_curves`);
        ``alpha`` is always included. Default :data:`DEFAULT_ALPHAS`.
    seed : int, SeedSequence or None
        Root seed; replication i uses ``SeedSequence(seed).spawn(n_reps)[i]``.
    n_jobs : int
        Local worker processes (joblib, loky backend), >= 1. Ignored with ``backend="dask"``.
    backend : {"local", "dask"}
        ``"dask"`` sends the chunks to a ``dask.distributed`` client (``client``, or the
        current one). Results are identical to the local run for the same seed.
    chunk_size : int, optional
        Replications per task (default: about four tasks per worker, at most the scenario's
        preferred chunk). Does not change the result.
    n_tests : int, optional
        Declared test slots per replication (the type-I denominator). Scenarios declare it;
        for a pipeline the default is the number of rows it returned in each replication.
    nonnull : iterable of str
        Hypotheses (row names) with a real effect, for pipelines without ``is_null``.
    columns : sequence of str, optional
        P-value columns to measure (default: all of :data:`PVALUE_COLUMNS` that occur).
    progress : bool
        Show a tqdm progress bar on stderr.
    confidence_level : float
        Coverage of the Monte-Carlo intervals.

    Returns
    -------
    SimulationResult
    """
    n_reps = check_int("n_reps", n_reps, low=1)
    n_jobs = check_int("n_jobs", n_jobs, low=1)
    a = check_probability("alpha", alpha, closed="neither")
    check_choice("backend", backend, ("local", "dask"))
    level = check_probability("confidence_level", confidence_level, closed="neither")
    grid = tuple(sorted({a, *(check_probability("alphas", x, closed="neither")
                              for x in (DEFAULT_ALPHAS if alphas is None else alphas))}))
    if not (_is_scenario(target) or callable(target)):
        raise TypeError(f"`target` must be a scenario (with replicate_many) or a callable pipeline(rng); got {target!r}.")
    if n_tests is None and _is_scenario(target):
        n_tests = getattr(target, "n_tests", None)
    if n_tests is not None:
        n_tests = check_int("n_tests", n_tests, low=1)
    cols = tuple(columns) if columns is not None else tuple(getattr(target, "columns", PVALUE_COLUMNS))
    bad = [c for c in cols if c not in PVALUE_COLUMNS]
    if bad:
        raise ValueError(f"`columns` must be among {PVALUE_COLUMNS!r}; got {bad!r}.")
    preferred = getattr(target, "chunk_size", 250)
    workers = n_jobs if backend == "local" else _dask_workers(client)
    if chunk_size is None:
        chunk_size = max(1, min(preferred, math.ceil(n_reps / (4 * workers))))
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    root = _root_sequence(seed)
    label = name or getattr(target, "name", None) or getattr(target, "__name__", "pipeline")
    nonnull = frozenset(nonnull)
    args = (root, cols, grid, n_tests, nonnull)
    total = _Counts(cols, grid)
    t0 = time.perf_counter()
    from tqdm.auto import tqdm

    with tqdm(total=n_reps, desc=str(label), unit="rep", disable=not progress, file=sys.stderr, leave=False) as bar:
        for part in _execute(target, n_reps, chunk_size, n_jobs, backend, client, args):
            total.merge(part)
            bar.update(part.n_reps)
    frame = _frame_from_counts(total, str(label), level)
    return SimulationResult(frame=frame, name=str(label), n_reps=n_reps, alpha=a, alphas=grid,
                            seed_entropy=int(root.entropy), confidence_level=level,
                            truth=str(getattr(target, "truth", "")), elapsed_seconds=time.perf_counter() - t0)


def _dask_workers(client: Any) -> int:
    c = _dask_client(client)
    return max(1, sum(c.nthreads().values()))


def _dask_client(client: Any) -> Any:
    if client is not None:
        return client
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("backend='dask' needs dask.distributed: pip install 'dask[distributed]'.") from exc
    try:
        return get_client()
    except ValueError as exc:
        raise ValueError("backend='dask' needs a running dask.distributed Client: pass `client=` or create one.") from exc


def _execute(target: Any, n_reps: int, chunk_size: int, n_jobs: int, backend: str, client: Any,
             args: tuple) -> Iterator[_Counts]:
    chunks = _chunks(n_reps, chunk_size)
    if backend == "dask":
        from distributed import as_completed

        c = _dask_client(client)
        window = 2 * _dask_workers(c)
        remote = c.scatter(target, broadcast=True) if _is_scenario(target) else target
        pending = [c.submit(_run_chunk, remote, s, e, *args, pure=False) for s, e in _take(chunks, window)]
        ac = as_completed(pending)
        for fut in ac:
            yield fut.result()
            fut.release()
            for s, e in _take(chunks, 1):
                ac.add(c.submit(_run_chunk, remote, s, e, *args, pure=False))
        return
    if n_jobs == 1 or n_reps <= chunk_size:
        for s, e in chunks:
            yield _run_chunk(target, s, e, *args)
        return
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered", pre_dispatch="2*n_jobs")
    yield from par(delayed(_run_chunk)(target, s, e, *args) for s, e in chunks)


def _take(it: Iterator, k: int) -> list:
    out = []
    for _ in range(k):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out


# --------------------------------------------------------------------------------------------
# Data splitting
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RowSplit:
    """Row positions of the selection part and of the test part (disjoint, sorted)."""

    select: np.ndarray
    test: np.ndarray
    fraction: float


def split_rows(n_rows: int, *, fraction: float = 0.5, rng: Any = None, stratify: Any = None) -> RowSplit:
    """Split ``n_rows`` row positions at random: ``round(fraction * n)`` for selection, the rest for the test.

    Parameters
    ----------
    n_rows : int
        At least 2.
    fraction : float
        Declared share of rows used for selection, in (0, 1). Both parts get at least one row.
    rng : numpy Generator or seed
    stratify : array_like, optional
        Labels (length ``n_rows``): the split is done within each label, so both parts keep
        the group proportions (e.g. the arms of a two-sample test).
    """
    n = check_int("n_rows", n_rows, low=2)
    f = check_probability("fraction", fraction, closed="neither")
    g = check_rng(rng)
    labels = np.zeros(n, dtype=int) if stratify is None else pd.factorize(np.asarray(stratify))[0]
    if len(labels) != n:
        raise ValueError(f"`stratify` must have one label per row ({n}); got {len(labels)}.")
    sel, tst = [], []
    for lab in np.unique(labels):
        idx = np.flatnonzero(labels == lab)
        perm = g.permutation(idx)
        k = int(round(f * len(idx)))
        if len(idx) >= 2:
            k = min(max(k, 1), len(idx) - 1)
        sel.append(perm[:k])
        tst.append(perm[k:])
    s, t = np.sort(np.concatenate(sel)), np.sort(np.concatenate(tst))
    if len(s) == 0 or len(t) == 0:
        raise ValueError(f"`fraction` = {f!r} leaves one part empty for {n} rows.")
    return RowSplit(select=s, test=t, fraction=f)


def data_splitting(data: pd.DataFrame, *, select: Any, tests: Callable[[Any], Iterable[Any]], fraction: float = 0.5,
                   rng: Any = None, stratify: str | None = None) -> pd.DataFrame:
    """Select on one part of the rows, test on the other: p-values that need no correction.

    The test part is independent of the selection (rows are i.i.d.), so for every selected
    hypothesis the naive p-value computed on the test part is valid as it is.

    Parameters
    ----------
    data : pandas.DataFrame
    select : selector or callable
        A selector (``select(data, rng) -> Selection``; its ``value`` is used) or a function
        ``data -> value``, run on the selection part only.
    tests : callable
        ``tests(value) -> iterable of test specs`` (:mod:`selective.hypotheses`), run on the
        test part.
    fraction : float
        Declared share of rows for selection.
    rng : numpy Generator or seed
        Drives the split (and a randomised selector).
    stratify : str, optional
        Column whose groups are split separately.

    Returns
    -------
    pandas.DataFrame
        Indexed by hypothesis: ``estimate``, ``statistic``, ``pvalue_split``, ``n_select_rows``,
        ``n_test_rows``.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    g = check_rng(rng)
    parts = split_rows(len(data), fraction=fraction, rng=g,
                       stratify=None if stratify is None else data[stratify].to_numpy())
    sel_data, test_data = data.iloc[parts.select], data.iloc[parts.test]
    value = select.select(sel_data, g).value if hasattr(select, "select") else select(sel_data)
    rows, names = [], []
    for spec in tests(value):
        res = spec.run(test_data)
        names.append(res.hypothesis)
        rows.append({"estimate": res.estimate, "statistic": res.statistic, "pvalue_split": res.pvalue_naive,
                     "n_select_rows": len(parts.select), "n_test_rows": len(parts.test)})
    return pd.DataFrame(rows, index=pd.Index(names, name="hypothesis"),
                        columns=["estimate", "statistic", "pvalue_split", "n_select_rows", "n_test_rows"])


# --------------------------------------------------------------------------------------------
# Plot
# --------------------------------------------------------------------------------------------


def plot_rejection_curves(result: SimulationResult, *, measure: str = "type_one_error", ax: Any = None,
                          columns: Sequence[str] | None = None, title: str | None = None) -> Any:
    """Rejection rate against α for every p-value column, with Monte-Carlo bands and the α line.

    Bands are the intervals of ``result.frame`` (Clopper-Pearson or Korn-Graubard) at
    ``result.confidence_level``. A valid column stays below the dashed line y = α (for
    ``measure="type_one_error"``) up to Monte-Carlo error.

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_choice("measure", measure, MEASURES)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.0))
    f = result.frame[result.frame.measure == measure]
    cols = result.columns if columns is None else tuple(columns)
    for c in cols:
        g = f[f.column == c].sort_values("alpha")
        if g.empty or g["rate"].isna().all():
            continue
        line, = ax.plot(g.alpha, g.rate, marker="o", ms=3, label=_LABELS.get(c, c))
        ax.fill_between(g.alpha, g.ci_low, g.ci_high, color=line.get_color(), alpha=0.2, linewidth=0)
    grid = np.asarray(result.alphas)
    if measure in ("type_one_error", "fwer"):
        ax.plot(grid, grid, color="black", linestyle="--", linewidth=1, label="alpha")
    ax.set_xlabel("alpha")
    ax.set_ylabel({"type_one_error": "type-I error", "fwer": "family-wise error", "power": "power",
                   "discovery_rate": "discovery rate"}[measure])
    ax.set_title(title if title is not None else f"{result.name} ({result.n_reps} reps, "
                 f"{int(round(100 * result.confidence_level))}% bands)", fontsize=9)
    ax.set_xlim(0, max(grid) * 1.02)
    ax.set_ylim(0, 1 if measure in ("power", "discovery_rate") else min(1.0, max(2 * max(grid), ax.get_ylim()[1])))
    ax.legend(fontsize=7, loc="best")
    return ax


# --------------------------------------------------------------------------------------------
# The scenario library run as a whole, and the CLI hook
# --------------------------------------------------------------------------------------------


def validate(scenarios: Sequence[Any] | str | None = None, *, n_reps: int | None = None, alpha: float = 0.05,
             seed: Any = 2024, n_jobs: int = 1, progress: bool = True, **kwargs: Any) -> dict[str, SimulationResult]:
    """Run scenarios of :mod:`selective.validation.scenarios` (all by default); one result per name.

    ``n_reps`` defaults to each scenario's ``default_reps``. Scenario ``i`` uses the root seed
    ``SeedSequence(seed).spawn(...)[i]`` of its position in the library, so a scenario's result
    does not depend on which others are run.
    """
    from . import scenarios as lib

    if scenarios is None:
        chosen = list(lib.SCENARIOS.values())
    elif isinstance(scenarios, str):
        chosen = [lib.get_scenario(scenarios)]
    else:
        chosen = [lib.get_scenario(s) if isinstance(s, str) else s for s in scenarios]
    if n_reps is not None:
        n_reps = check_int("n_reps", n_reps, low=1)
    order = list(lib.SCENARIOS)
    root = _root_sequence(seed)
    out = {}
    for sc in chosen:
        pos = order.index(sc.name) if sc.name in order else len(order)
        out[sc.name] = simulate(sc, n_reps=n_reps or sc.default_reps, alpha=alpha, seed=replication_seed(root, pos),
                                n_jobs=n_jobs, progress=progress, **kwargs)
    return out


def _cmd_validate(args: argparse.Namespace) -> int:
    from . import scenarios as lib

    names = [args.scenario] if args.scenario else list(lib.SCENARIOS)
    for n in names:
        lib.get_scenario(n)  # unknown names fail before anything runs
    results = validate(names, n_reps=args.reps, alpha=args.alpha, seed=args.seed, n_jobs=args.jobs,
                       progress=not args.quiet)
    for name, res in results.items():
        sc = lib.get_scenario(name)
        print(f"## {name} ({res.n_reps} replications, alpha = {res.alpha:g}, {res.elapsed_seconds:.1f} s)\n")
        print(f"{sc.truth}\n")
        print(res.to_markdown())
        print()
    if args.plot:
        fig = plot_validation(results)
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        if not args.quiet:
            print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def plot_validation(results: dict[str, SimulationResult], *, measure: str = "type_one_error", ncols: int = 3) -> Any:
    """A grid of :func:`plot_rejection_curves`, one panel per scenario; returns the figure."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(results))
    nc = min(ncols, n)
    nr = math.ceil(n / nc)
    fig, axes = plt.subplots(nr, nc, figsize=(5.0 * nc, 3.8 * nr), squeeze=False)
    for ax, res in zip(axes.ravel(), results.values()):
        plot_rejection_curves(res, measure=measure, ax=ax)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {v}")
    return v


def _level(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {v}")
    return v


def add_validate_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``validate`` on an argparse subparsers object (``parser.add_subparsers()``).

    ``selective validate [--scenario NAME] [--reps N] [--jobs J] [--alpha A] [--seed S]
    [--plot FILE] [--quiet]`` runs the scenario library (or one scenario) and prints the
    type-I error and power table of each; the handler is stored as ``func`` and returns the
    exit code 0. Unknown scenario names raise ``ValueError`` (the CLI maps it to exit code 2).
    """
    from .scenarios import SCENARIOS

    p = subparsers.add_parser("validate", help="simulate the scenario library: type-I error and power of every column",
                              description="Run the adversarial selection scenarios and report the type-I error and "
                                          "power of every p-value column with Monte-Carlo intervals. Scenarios: "
                                          + ", ".join(SCENARIOS) + ".")
    p.add_argument("--scenario", metavar="NAME", help="run only this scenario (default: all)")
    p.add_argument("--reps", type=_positive_int, help="replications per scenario (default: each scenario's own)")
    p.add_argument("--jobs", type=_positive_int, default=1, help="local worker processes (default 1)")
    p.add_argument("--alpha", type=_level, default=0.05, help="level (default 0.05)")
    p.add_argument("--seed", type=int, default=2024, help="root seed (default 2024)")
    p.add_argument("--plot", metavar="FILE", help="write the rejection-rate plot to FILE (png, pdf, svg)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_validate)
    return p
