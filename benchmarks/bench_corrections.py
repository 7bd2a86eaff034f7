"""Throughput of the corrections, as ratios against numpy baselines of the same size.

Baselines: a vectorised Bonferroni (one multiply and a clip) for the closed-form routes, and one
scalar bisection written in plain numpy (200 halvings over the same array) for the routes that
solve a first-order condition per p-value.
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

from selective import corrections as C
from selective.accounting import ANY_DISTRIBUTION, MaxInfoFamily, MutualInfo


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 10_000 if args.quick else 1_000_000
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n) ** 3
    base_mul = timed(lambda: np.minimum(1.0, 50 * p))

    def bisect_baseline():
        lo, hi = np.zeros_like(p), np.ones_like(p)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            pos = np.exp(mid) - 1 - p > 0
            hi = np.where(pos, mid, hi)
            lo = np.where(pos, lo, mid)
        return lo

    base_bis = timed(bisect_baseline, repeat=1)
    fam = MaxInfoFamily(n_rows=10_000, prefix_epsilon=0.01, dl_log2_outcomes=(10.0,))
    mi = MutualInfo(0.5, ANY_DISTRIBUTION)
    rows = [
        ("bonferroni", C.corrected_pvalue_bonferroni, (50,), base_mul, "multiply"),
        ("pure DP, Thm 19", C.corrected_pvalue_pure_dp_all_distributions, (0.01, 1000), base_mul, "multiply"),
        ("pure DP, Thm 20 optimal beta", C.corrected_pvalue_pure_dp_product, (0.01, 1000), base_bis, "bisection"),
        ("max-info family (DP + DL)", C.corrected_pvalue_maxinfo, (fam,), base_bis, "bisection"),
        ("mutual information (3 routes)", C.corrected_pvalue_mutual_info, (mi,), base_bis, "bisection"),
    ]
    print(f"{n:,} p-values; baselines: multiply {base_mul * 1e3:.2f} ms, bisection {base_bis * 1e3:.1f} ms")
    print(f"{'route':34s} {'ms':>10s} {'ratio':>8s}  baseline")
    for name, fn, extra, base, bname in rows:
        t = timed(functools.partial(fn, p, *extra), repeat=1)
        print(f"{name:34s} {t * 1e3:10.2f} {t / base:8.2f}  {bname}")


if __name__ == "__main__":
    main()
