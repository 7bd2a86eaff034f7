r"""Streaming sufficient statistics for candidate scores, merged over row chunks.

A score over many candidate columns is a function of a few per-column statistics: counts,
means, sums of squared deviations, co-moments with a target, or integer sums of clipped
values. Each statistic here is computed on one chunk of rows (:meth:`of`) and merged with the
statistic of the next chunk (:meth:`merge`), so a score can be computed over the partitions
of a Dask DataFrame (:func:`reduce_frame`) with only the per-chunk reductions distributed and
memory independent of the number of rows.

Two kinds of merge, for two purposes:

* :class:`Moments` and :class:`CoMoments` (floating point) use the pairwise updates of Chan,
  Golub and LeVeque (1979, 1983): for chunks A and B with counts :math:`n_A, n_B`, means
  :math:`\bar x_A, \bar x_B` and sums of squared deviations :math:`M_A, M_B`,

  .. math:: n = n_A + n_B,\quad \delta = \bar x_B - \bar x_A,\quad
            \bar x = \bar x_A + \delta\, n_B / n,\quad M = M_A + M_B + \delta^2 n_A n_B / n,

  and for co-moments :math:`C = C_A + C_B + \delta_x \delta_y n_A n_B / n`. Within a chunk the
  mean is numpy's pairwise sum and :math:`M` is taken about the chunk mean (two passes), so no
  sum of squares is ever differenced. The result agrees with the one-pass in-memory value to a
  few units in the last place, but not bit for bit: floating-point addition is not
  associative, so the partitioning changes the last bits.
* :class:`GridSums` (exact) rounds each clipped value :math:`\mathrm{clip}(x, -c, c)` toward
  zero onto a fixed grid of spacing :math:`u` (the largest power of two :math:`\le c/2^{31}`),
  sums the integers :math:`q = \mathrm{trunc}(\mathrm{clip}(x,-c,c)/u)` exactly (in doubles
  within blocks of :math:`2^{20}` rows, where every partial sum is an integer below
  :math:`2^{53}`; Python integers across blocks and chunks) and converts once, with correct
  rounding, at the end.
  Integer addition is associative, so the statistic is the same to the last bit whatever the
  chunks, their order of merging, or the backend. This is what the exact DP samplers need:
  they read a score through :math:`\mathrm{rint}(s/g)` on their own grid
  (:mod:`selective.mechanisms.exponential`), so only bit-identical scores give the same
  selection from the same seed. The grid scores have exactly the sensitivity of the clipped
  statistic they stand for: rounding toward zero keeps :math:`|q u| \le c` even when
  :math:`c/u` is not an integer (rounding to nearest could reach :math:`c + u/2`), and the
  final conversion adds at most half an ulp, inside the samplers' floating-point slack
  (THEORY.md 7.1). Each grid value is within :math:`u < c/2^{31}` of the clipped value.

References
----------
T. F. Chan, G. H. Golub, R. J. LeVeque, "Updating formulae and a pairwise algorithm for
computing sample variances", Stanford CS report STAN-CS-79-773 (1979); "Algorithms for
computing the sample variance: analysis and recommendations", The American Statistician 37
(1983), 242-247.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from ..mechanisms._grid import grid_unit

__all__ = ["Moments", "CoMoments", "GridSums", "GRID_BITS", "is_dask_frame", "reduce_frame", "numeric_block"]

GRID_BITS = 31  # clip / unit is in [2^31, 2^32): a grid step of at most c / 2^31
CHUNK_ROWS = 65_536  # rows per chunk of an in-memory frame
_EXACT_ROWS = 2**20  # grid values (|q| <= 2^32) summed in doubles: exact for up to 2^21 rows


def is_dask_frame(obj: Any) -> bool:
    """Whether ``obj`` is a Dask DataFrame (checked without importing dask)."""
    mod = type(obj).__module__ or ""
    return mod.split(".")[0] in ("dask", "dask_expr") and callable(getattr(obj, "to_delayed", None))


def numeric_block(chunk: pd.DataFrame, columns: Sequence[Any]) -> np.ndarray:
    """The candidate columns of ``chunk`` as a float64 array (rows x columns)."""
    x = chunk[list(columns)].to_numpy()
    if x.dtype.kind not in "iufb":
        raise TypeError(f"candidate columns must be numeric; got dtype {x.dtype}.")
    return np.asarray(x, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Moments:
    """Count, means and sums of squared deviations of p columns over some rows."""

    n: int
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> Moments:
        """Moments of the rows of ``x`` (rows x p, float64); two passes over the chunk."""
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        if n == 0:
            return cls(0, np.zeros(x.shape[1]), np.zeros(x.shape[1]))
        mean = x.mean(axis=0)
        d = x - mean
        return cls(n, mean, np.einsum("ij,ij->j", d, d))

    def merge(self, other: Moments) -> Moments:
        """Chan-Golub-LeVeque pairwise update (see the module notes)."""
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return Moments(n, mean, m2)

    @property
    def var(self) -> np.ndarray:
        """Sample variances (ddof = 1); NaN with fewer than 2 rows."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.m2 / (self.n - 1) if self.n > 1 else np.full_like(self.m2, np.nan)


@dataclass(frozen=True, slots=True)
class CoMoments:
    """Moments of p columns x and of a target y, and their co-moments :math:`\\sum (x-\\bar x)(y-\\bar y)`."""

    x: Moments
    y_mean: float
    y_m2: float
    cxy: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray) -> CoMoments:
        mx = Moments.of(x)
        y = np.asarray(y, dtype=np.float64)
        if mx.n == 0:
            return cls(mx, 0.0, 0.0, np.zeros_like(mx.mean))
        ym = float(y.mean())
        dy = y - ym
        return cls(mx, ym, float(dy @ dy), dy @ (np.asarray(x, dtype=np.float64) - mx.mean))

    def merge(self, other: CoMoments) -> CoMoments:
        if other.x.n == 0:
            return self
        if self.x.n == 0:
            return other
        na, nb = self.x.n, other.x.n
        n = na + nb
        dy = other.y_mean - self.y_mean
        dx = other.x.mean - self.x.mean
        w = na * nb / n
        return CoMoments(self.x.merge(other.x), self.y_mean + dy * (nb / n),
                         self.y_m2 + other.y_m2 + dy * dy * w, self.cxy + other.cxy + dx * dy * w)


@dataclass(frozen=True, slots=True)
class GridSums:
    """Exact sums of clipped values on a fixed power-of-two grid, per column and per group.

    ``sums[g][j]`` is :math:`\\sum_i q_{ij}` over the rows of group ``g`` (a Python integer),
    ``counts[g]`` their number, ``missing[j]`` whether column j held a NaN (its score is then
    NaN, which the selectors refuse by name).
    """

    unit: float
    counts: tuple[int, ...]
    sums: tuple[tuple[int, ...], ...]
    missing: tuple[bool, ...]

    @classmethod
    def of(cls, x: np.ndarray, clip: float, groups: Sequence[np.ndarray] | None = None) -> GridSums:
        """Integer grid sums of ``clip(x, -clip, clip)``; ``groups`` are boolean row masks (default: one, all rows).

        The grid values are integers of magnitude at most 2^32 held in doubles; sums of at most
        2^20 of them stay below 2^53, where every double partial sum is an exact integer, so
        they are summed in blocks of 2^20 rows (in any order: exact) and the blocks added as
        Python integers.
        """
        unit = grid_unit(clip, GRID_BITS)
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        missing = nan.any(axis=0)
        q = np.minimum(x, clip)  # a new array: the caller's is left alone
        np.maximum(q, -clip, out=q)
        if missing.any():
            q[nan] = 0.0
        q *= 1.0 / unit  # exact: unit is a power of two
        np.trunc(q, out=q)  # toward zero, so that |q unit| <= clip (the sensitivity)
        masks = None if groups is None else np.column_stack([np.asarray(g, dtype=np.float64) for g in groups])
        n_groups = 1 if groups is None else masks.shape[1]
        sums = [[0] * x.shape[1] for _ in range(n_groups)]
        for a in range(0, x.shape[0], _EXACT_ROWS):
            block = q[a:a + _EXACT_ROWS]
            part = block.sum(axis=0)[None, :] if masks is None else masks[a:a + _EXACT_ROWS].T @ block
            for g in range(n_groups):
                sums[g] = [s + int(v) for s, v in zip(sums[g], part[g].tolist(), strict=True)]
        counts = (x.shape[0],) if groups is None else tuple(int(np.count_nonzero(g)) for g in groups)
        return cls(unit, counts, tuple(tuple(s) for s in sums), tuple(bool(v) for v in missing))

    def merge(self, other: GridSums) -> GridSums:
        """Exact: integer addition (associative, so any chunking gives the same result)."""
        if other.unit != self.unit or len(other.counts) != len(self.counts):
            raise ValueError("cannot merge grid sums of different grids or groups.")
        sums = tuple(tuple(a + b for a, b in zip(sa, sb, strict=True)) for sa, sb in zip(self.sums, other.sums,
                                                                                         strict=True))
        return GridSums(self.unit, tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)), sums,
                        tuple(a or b for a, b in zip(self.missing, other.missing, strict=True)))

    def exact_means(self, group: int = 0) -> list[Fraction | None]:
        """Exact rational mean of the grid values of each column in ``group`` (None if no rows)."""
        n = self.counts[group]
        if n == 0:
            return [None] * len(self.missing)
        u = Fraction(self.unit)
        return [Fraction(s, n) * u for s in self.sums[group]]

    def to_floats(self, values: Sequence[Fraction | None]) -> np.ndarray:
        """Correctly rounded doubles of exact values; NaN for missing columns or empty groups."""
        return np.array([np.nan if (v is None or bad) else float(v) for v, bad in zip(values, self.missing,
                                                                                         strict=True)])


def _fold(stats: list, merge: Callable[[Any, Any], Any]) -> Any:
    out = stats[0]
    for s in stats[1:]:
        out = merge(out, s)
    return out


def _merge(a: Any, b: Any) -> Any:
    return a.merge(b)


def reduce_frame(data: Any, columns: Sequence[Any], chunk_fn: Callable[[pd.DataFrame], Any], *,
                 chunk_rows: int = CHUNK_ROWS) -> Any:
    """``chunk_fn`` over row chunks of ``data[columns]``, merged in row order.

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        In memory: chunks of ``chunk_rows`` rows, merged left to right. Dask: one chunk per
        partition, reduced on the cluster (the current scheduler, e.g. a
        ``dask.distributed.Client``) by a balanced tree of pairwise merges that keeps the
        partition order; only the merged statistic comes back.
    columns : sequence of column labels
        The only columns read (a Dask frame reads only these from Parquet).
    chunk_fn : callable pandas.DataFrame -> statistic
        The statistic of one chunk; it has a ``merge`` method.

    Returns
    -------
    The merged statistic.
    """
    cols = list(dict.fromkeys(columns))
    if isinstance(data, pd.DataFrame):
        sub = data[cols]
        stats = [chunk_fn(sub.iloc[a:a + chunk_rows]) for a in range(0, max(len(sub), 1), chunk_rows)]
        return _fold(stats, _merge)
    if not is_dask_frame(data):
        raise TypeError(f"`data` must be a pandas or Dask DataFrame; got {type(data).__name__}.")
    import dask

    level = [dask.delayed(chunk_fn)(part) for part in data[cols].to_delayed()]
    while len(level) > 1:
        pairs = [dask.delayed(_merge)(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    (out,) = dask.compute(level[0])
    return out
