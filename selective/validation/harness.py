r"""Validity and power harness: repeat a whole selection-then-test pipeline many times.

Under a known truth the harness measures, for every p-value column (naive, max-information,
mutual information, best valid, Bonferroni, data splitting, exact conditional), the type-I
error, the family-wise error and the power, with Monte-Carlo standard errors and binomial
intervals, and returns them as one tidy frame (:class:`SimulationResult`). The measures, the
intervals and the per-replication seeds are defined in :mod:`selective.validation.outcomes`.

Reproducibility: replication ``i`` uses the stream ``SeedSequence(seed).spawn(n_reps)[i]``
(:func:`~selective.validation.outcomes.replication_seed`) and counts are integers, so the
result is exactly the same serially, in a local process pool (joblib) or on a Dask cluster,
whatever the chunking.

Streaming: each chunk of replications returns counts only (a few arrays of shape
``(n_columns, n_alphas)``); memory does not grow with the number of replications.

The harness knows nothing of the scenario library: it runs anything with
``replicate_many(rngs)`` or any ``pipeline(rng)``. The library run as a whole is
:func:`selective.validation.validate.validate`; the names of the other validation modules
are re-exported here.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_probability
from .outcomes import (
    COLUMN_LABELS,
    FRAME_COLUMNS,
    MEASURES,
    PVALUE_COLUMNS,
    Counts,
    Outcomes,
    clopper_pearson,
    replication_rng,
    replication_seed,
    root_sequence,
)
from .plots import plot_rejection_curves, plot_validation
from .splitting import RowSplit, data_splitting, split_rows

__all__ = [
    "PVALUE_COLUMNS",
    "MEASURES",
    "FRAME_COLUMNS",
    "DEFAULT_ALPHAS",
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
    "plot_validation",
]

DEFAULT_ALPHAS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2)


def __getattr__(name: str) -> Any:
    """Names that moved out of the harness (``validate``, ``add_validate_command``): they resolve
    with a DeprecationWarning, so that the harness never imports the scenario library or the
    command line."""
    from .._deprecated import moved_attribute

    return moved_attribute(__name__, name)


# --------------------------------------------------------------------------------------------
# Running chunks
# --------------------------------------------------------------------------------------------


def _is_scenario(target: Any) -> bool:
    return hasattr(target, "replicate_many")


def _run_chunk(target: Any, start: int, stop: int, root: np.random.SeedSequence, columns: tuple[str, ...],
               alphas: tuple[float, ...], n_tests: int | None, nonnull: frozenset) -> Counts:
    rngs = [np.random.default_rng(replication_seed(root, i)) for i in range(start, stop)]
    counts = Counts(columns, alphas)
    if _is_scenario(target):
        out = target.replicate_many(rngs)
    else:
        out = Outcomes.from_tables([target(g) for g in rngs], columns, nonnull)
    counts.add(out, n_tests)
    return counts


def _chunks(n_reps: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n_reps, size):
        yield start, min(n_reps, start + size)


# --------------------------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------------------------


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
    truth : str
        The scenario's statement of which hypotheses are null (empty for a pipeline).
    elapsed_seconds : float
        Wall time (not part of the comparison of two results).
    column_labels : dict of str to str
        Labels of the target's own columns (those not in :data:`PVALUE_COLUMNS`).
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
    column_labels: dict[str, str] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return (f"SimulationResult({self.name!r}, n_reps={self.n_reps}, alpha={self.alpha:g})\n"
                f"{self.summary().to_string()}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimulationResult):
            return NotImplemented
        return (self.name, self.n_reps, self.alpha, self.alphas, self.seed_entropy, self.confidence_level) == (
            other.name, other.n_reps, other.alpha, other.alphas, other.seed_entropy, other.confidence_level
        ) and self.frame.equals(other.frame)

    __hash__ = None  # type: ignore[assignment]

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`frame`."""
        return self.frame.copy()

    @property
    def columns(self) -> tuple[str, ...]:
        """The p-value columns measured, in order."""
        return tuple(dict.fromkeys(self.frame["column"]))

    def label(self, column: str) -> str:
        """The method label of a p-value column (its name when it has none)."""
        return COLUMN_LABELS.get(column, self.column_labels.get(column, column))

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
        out.insert(0, "method", [self.label(c) for c in out.index])
        return out

    def to_markdown(self, alpha: float | None = None, digits: int = 3) -> str:
        """:meth:`summary` as a Markdown table (type-I error and power with intervals; "n/a" where
        a column has no such rate)."""
        s = self.summary(alpha)

        def fmt(x: Any) -> str:
            if not isinstance(x, float):
                return str(x)
            return "n/a" if math.isnan(x) else f"{x:.{digits}f}"

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


# --------------------------------------------------------------------------------------------
# Simulation and its execution: serial, local processes (joblib) or a Dask cluster
# --------------------------------------------------------------------------------------------


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
        P-value columns to measure (default: the target's ``columns``, else all of
        :data:`PVALUE_COLUMNS` that occur). A scenario may add columns of its own, named with
        their labels in its ``column_labels``.
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
        raise TypeError("`target` must be a scenario (with replicate_many) or a callable pipeline(rng); "
                        f"got {target!r}.")
    if n_tests is None and _is_scenario(target):
        n_tests = getattr(target, "n_tests", None)
    if n_tests is not None:
        n_tests = check_int("n_tests", n_tests, low=1)
    cols = tuple(columns) if columns is not None else tuple(getattr(target, "columns", PVALUE_COLUMNS))
    labels = dict(getattr(target, "column_labels", {}) or {})
    bad = [c for c in cols if c not in PVALUE_COLUMNS and c not in labels]
    if bad:
        raise ValueError(f"`columns` must be among {PVALUE_COLUMNS!r} or the target's own `column_labels`; "
                         f"got {bad!r}.")
    preferred = getattr(target, "chunk_size", 250)
    workers = n_jobs if backend == "local" else _dask_workers(client)
    if chunk_size is None:
        chunk_size = max(1, min(preferred, math.ceil(n_reps / (4 * workers))))
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    root = root_sequence(seed)
    label = name or getattr(target, "name", None) or getattr(target, "__name__", "pipeline")
    nonnull = frozenset(nonnull)
    args = (root, cols, grid, n_tests, nonnull)
    total = Counts(cols, grid)
    t0 = time.perf_counter()
    from tqdm.auto import tqdm

    with tqdm(total=n_reps, desc=str(label), unit="rep", disable=not progress, file=sys.stderr, leave=False) as bar:
        for part in _execute(target, n_reps, chunk_size, n_jobs, backend, client, args):
            total.merge(part)
            bar.update(part.n_reps)
    frame = total.to_frame(str(label), level)
    return SimulationResult(frame=frame, name=str(label), n_reps=n_reps, alpha=a, alphas=grid,
                            seed_entropy=int(root.entropy), confidence_level=level,
                            truth=str(getattr(target, "truth", "")), elapsed_seconds=time.perf_counter() - t0,
                            column_labels={c: labels[c] for c in cols if c in labels})


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
        raise ValueError("backend='dask' needs a running dask.distributed Client: pass `client=` or "
                         "create one.") from exc


def _execute(target: Any, n_reps: int, chunk_size: int, n_jobs: int, backend: str, client: Any,
             args: tuple) -> Iterator[Counts]:
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
