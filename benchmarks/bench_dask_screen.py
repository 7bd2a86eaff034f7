"""Screening data larger than memory on Dask (plain script; prints ratios, no assertions).

A DP screen (noisy top-k of m candidate columns by their clipped mean, exact grid scores,
through ``Analysis.select``) over n rows generated chunk by chunk inside the Dask tasks: the
data are never materialised, on the workers or here.

1. Speed: seconds of the screen against a bare ``dask.array`` column mean over the same chunks
   (same generator, same scheduler). Target: a ratio of at most 1.5.
2. Memory: peak traced allocation (tracemalloc, synchronous scheduler, so every allocation is
   in this thread) of the screen at n rows and at 4n rows. Target: a ratio near 1 (flat in
   the number of rows: only one chunk and the per-column integer sums are held).

    python benchmarks/bench_dask_screen.py [--quick | --full]

Default: 1,000 candidates x 64,000 rows in chunks of 4,000; ``--quick``: 200 x 16,000;
``--full``: 10,000 candidates x 1,000,000 rows in chunks of 10,000 (about 80 GB generated;
minutes on two cores).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd

from selective import Analysis, NoisyTopK
from selective.selectors import ClippedMeanScores

CLIP = 3.0


def chunk(i: int, rows: int, m: int) -> pd.DataFrame:
    """Rows [i rows, (i + 1) rows) of the synthetic data: a few columns with a shifted mean."""
    rng = np.random.default_rng([2026, i])
    x = rng.standard_normal((rows, m))
    x[:, :5] += 0.05
    return pd.DataFrame(x, columns=[f"c{j:05d}" for j in range(m)])


def frame(n_chunks: int, rows: int, m: int) -> dd.DataFrame:
    meta = chunk(0, 0, m)
    return dd.from_delayed([dask.delayed(chunk)(i, rows, m) for i in range(n_chunks)], meta=meta,
                           verify_meta=False)


def array(n_chunks: int, rows: int, m: int) -> da.Array:
    parts = [da.from_delayed(dask.delayed(lambda i: chunk(i, rows, m).to_numpy())(i), shape=(rows, m),
                             dtype=float) for i in range(n_chunks)]
    return da.concatenate(parts, axis=0)


def screen(n_chunks: int, rows: int, m: int) -> tuple[float, tuple]:
    ddf = frame(n_chunks, rows, m)
    cols = tuple(ddf.columns)
    n = n_chunks * rows
    a = Analysis(ddf, rng=1)
    sel = NoisyTopK(k=5, epsilon=1.0, sensitivity=2 * CLIP / n, candidates=cols,
                    score=ClippedMeanScores(cols, clip=CLIP, absolute=True))
    t0 = time.perf_counter()
    chosen = a.select(sel).value
    return time.perf_counter() - t0, chosen


def bare_mean(n_chunks: int, rows: int, m: int) -> float:
    t0 = time.perf_counter()
    array(n_chunks, rows, m).mean(axis=0).compute()
    return time.perf_counter() - t0


def peak_bytes(n_chunks: int, rows: int, m: int) -> int:
    with dask.config.set(scheduler="synchronous"):
        tracemalloc.start()
        screen(n_chunks, rows, m)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true")
    size.add_argument("--full", action="store_true")
    args, _ = parser.parse_known_args()
    m, rows, n_chunks = (200, 4_000, 4) if args.quick else (10_000, 10_000, 100) if args.full else (1_000, 4_000, 16)
    print(f"{m} candidates x {n_chunks * rows:,} rows in {n_chunks} chunks of {rows:,}, generated in the tasks")
    with dask.config.set(scheduler="threads", num_workers=2):
        bare_mean(2, rows, m)  # warm-up
        t_screen, chosen = screen(n_chunks, rows, m)
        t_mean = bare_mean(n_chunks, rows, m)
    print(f"noisy top-5 by exact clipped mean: {t_screen:.2f} s (chose {', '.join(chosen)})")
    print(f"bare dask.array mean:              {t_mean:.2f} s")
    print(f"ratio screen / bare mean: {t_screen / t_mean:.2f} (target <= 1.5)")
    small, large = peak_bytes(max(1, n_chunks // 4), rows, m), peak_bytes(n_chunks, rows, m)
    print(f"peak traced memory: {small / 2**20:.1f} MiB at {max(1, n_chunks // 4) * rows:,} rows, "
          f"{large / 2**20:.1f} MiB at {n_chunks * rows:,} rows")
    print(f"ratio 4x rows / 1x rows: {large / small:.2f} (target near 1: flat in rows)")


if __name__ == "__main__":
    main()
