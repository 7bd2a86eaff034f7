"""Speed of the exact mechanisms against bare numpy (plain script; prints ratios, no assertions).

1. Noisy top-k over many candidate columns (default 10,000 columns x 100,000 rows float32;
   ``--full`` asks for the brief's 1,000,000 rows, i.e. 40 GB; ``--quick`` for a small run):
   ``candidate_scores`` (column means) + ``report_noisy_topk`` (exact, k peeling rounds)
   against a bare ``numpy.mean(X, axis=0)``. Target ratio <= 1.5.
2. One Thresholdout query against a bare numpy mean of the query on both sets. Target <= 2.

    python benchmarks/bench_mechanisms.py [--quick | --full] [--rows R] [--cols C] [--k K]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from selective.mechanisms import report_noisy_topk
from selective.selectors.scores import candidate_scores
from selective.selectors.thresholdout import Thresholdout


def _best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_topk(rows: int, cols: int, k: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = np.empty((rows, cols), dtype=np.float32)
    for start in range(0, rows, 10_000):  # fill in chunks to keep peak memory at the matrix
        stop = min(rows, start + 10_000)
        x[start:stop] = rng.standard_normal((stop - start, cols), dtype=np.float32)
    df = pd.DataFrame(x, copy=False)
    sensitivity = 2.0 / rows  # scores clipped to [-1, 1] would have this; fine for timing

    def bare():
        return np.mean(x, axis=0, dtype=np.float64)

    def ours():
        s = candidate_scores(df, kind="mean")
        return report_noisy_topk(s.to_numpy(), k, epsilon=1.0, sensitivity=sensitivity, rng=rng)

    t_bare = _best_of(bare, repeat)
    t_ours = _best_of(ours, repeat)
    precomputed = bare()
    t_sel = _best_of(lambda: report_noisy_topk(precomputed, k, epsilon=1.0, sensitivity=sensitivity, rng=rng), repeat)
    print(f"noisy top-{k} over {cols:,} columns x {rows:,} rows (float32)")
    print(f"  bare numpy column means      {t_bare:8.3f} s")
    print(f"  candidate_scores + top-k     {t_ours:8.3f} s   (exact selection alone {t_sel:.3f} s)")
    print(f"  ratio                        {t_ours / t_bare:8.2f}   (target <= 1.5)")


def bench_thresholdout(rows: int, repeat: int) -> None:
    rng = np.random.default_rng(1)
    train = pd.DataFrame({"x": rng.random(rows)})
    hold = pd.DataFrame({"x": rng.random(rows)})
    tr, ho = train["x"].to_numpy(), hold["x"].to_numpy()

    def phi(d):
        return d["x"].to_numpy()

    def bare():
        return float(np.mean(phi(train))), float(np.mean(phi(hold)))

    t = Thresholdout(train, hold, threshold=0.5, sigma=0.01, budget=10**9, rng=rng)
    t_bare = _best_of(bare, repeat)
    t_ours = _best_of(lambda: t.query(phi), repeat)
    print(f"one Thresholdout query, {rows:,} rows in each set")
    print(f"  bare numpy means on both sets {t_bare * 1e3:8.3f} ms")
    print(f"  Thresholdout.query            {t_ours * 1e3:8.3f} ms")
    print(f"  ratio                         {t_ours / t_bare:8.2f}   (target <= 2)")
    del tr, ho


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    size.add_argument("--full", action="store_true", help="1,000,000 rows x 10,000 columns (needs ~40 GB)")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--cols", type=int, default=None)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows, cols, hold_rows = 100_000, 10_000, 1_000_000
    if args.quick:
        rows, cols, hold_rows = 20_000, 2_000, 200_000
    if args.full:
        rows = 1_000_000
    rows = args.rows or rows
    cols = args.cols or cols
    bench_topk(rows, cols, args.k, args.repeat)
    bench_thresholdout(hold_rows, max(args.repeat, 5))


if __name__ == "__main__":
    main()
