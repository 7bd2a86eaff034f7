"""The holdout-reuse experiment: one replication of the package's implementation against a bare
numpy script of the same protocol, in the same run (target ratio <= 1.5).

The bare script below is deliberately minimal: draw the three sets, compute the correlations,
select, build the classifiers for every k, and run the Thresholdout variant's answer loop; the
package adds argument checks, the tidy frame and a second selection through Thresholdout.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from selective.validation.experiments import DEFAULT_K_GRID, holdout_reuse_replication


def bare(n: int, d: int, ks: np.ndarray, seed: int) -> None:
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(3):
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(np.float32)
        sets.append((rng.standard_normal((n, d), dtype=np.float32), y))
    (xt, yt), (xh, yh), (xf, yf) = sets
    wt, wh = (yt @ xt) / n, (yh @ xh) / n
    cut = 1 / math.sqrt(n)
    for w_hold in (wh, None):
        if w_hold is None:  # Thresholdout answers for the holdout correlations
            gamma = rng.normal(0, 0.02)
            w_hold = wt.astype(np.float64).copy()
            for i in range(d):
                if abs(wh[i] - wt[i]) > 0.04 + gamma + rng.normal(0, 0.04):
                    gamma = rng.normal(0, 0.02)
                    w_hold[i] = wh[i] + rng.normal(0, 0.01)
        keep = np.flatnonzero((wt * w_hold > 0) & (np.abs(wt) >= cut) & (np.abs(w_hold) >= cut))
        order = keep[np.argsort(-np.abs(wt[keep]))][: ks.max()]
        for x, y in ((xt, yt), (xh, yh), (xf, yf)):
            m = np.cumsum(x[:, order] * np.sign(wt[order]), axis=1)
            (np.where(m[:, np.minimum(ks, order.size) - 1] >= 0, 1, -1) == y[:, None]).mean(axis=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="n = d = 2,000 instead of the paper's 10,000")
    args = parser.parse_args()
    n = d = 2_000 if args.quick else 10_000
    ks = np.array(DEFAULT_K_GRID)
    t0 = time.perf_counter()
    bare(n, d, ks, 1)
    t_bare = time.perf_counter() - t0
    t0 = time.perf_counter()
    holdout_reuse_replication(n=n, d=d, rng=1)
    t_pkg = time.perf_counter() - t0
    print(f"holdout reuse, one replication at n = d = {n:,}: package {t_pkg:.2f} s, bare numpy {t_bare:.2f} s, "
          f"ratio {t_pkg / t_bare:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
