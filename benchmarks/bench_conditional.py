"""Speed and memory of exact conditional inference at n = 2000, p = 500.

Run with ``python benchmarks/bench_conditional.py``. Prints a small table: seconds for
fixed-lambda lasso inference (solver included) and for forward stepwise (20 steps) + fs
inference, and the bytes of the constraint matrices (the lasso's dense ``A``; for fs the
compact representation actually stored and the dense ``Gamma`` it stands for).
R's reference timings for context (2 cores): glmnet + fixedLassoInf 1.7 to 4.0 s; fs + fsInf
for 20 steps 12.4 to 14.3 s. No assertions: this is a measurement, not a test.
"""

from __future__ import annotations

import time

import numpy as np

from selective.conditional import (fixed_lasso_inference, forward_stepwise, fs_inference,
                                   solve_lasso)


def _data(n=2000, p=500, seed=2026):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:10] = np.linspace(1.0, 0.2, 10)
    y = X @ beta + rng.standard_normal(n)
    return X, y


def main() -> None:
    X, y = _data()
    n, p = X.shape
    rows = []

    lam = 2.0 * np.sqrt(2 * n * np.log(p))  # a moderately sparse fit
    t0 = time.perf_counter()
    fit = solve_lasso(X, y, lam)
    t1 = time.perf_counter()
    res = fixed_lasso_inference(X, y, lam, beta=fit.beta, sigma=1.0)
    t2 = time.perf_counter()
    rows.append(("lasso solve (sklearn, tol 1e-12)", t1 - t0, "", ""))
    rows.append((f"fixedLasso inference ({len(res.variables)} selected)", t2 - t1,
                 res.constraint_bytes, res.constraint_bytes))
    rows.append(("lasso total", t2 - t0, "", ""))

    t0 = time.perf_counter()
    path = forward_stepwise(X, y, maxsteps=20)
    t1 = time.perf_counter()
    inf = fs_inference(path, sigma=1.0)
    t2 = time.perf_counter()
    rows.append(("fs path, 20 steps", t1 - t0, "", ""))
    rows.append(("fs inference, type active", t2 - t1, inf.extra["constraint_bytes_compact"],
                 inf.extra["constraint_bytes_dense"]))
    rows.append(("fs total", t2 - t0, "", ""))

    print(f"n = {n}, p = {p}")
    print(f"{'step':<42} {'seconds':>9} {'stored bytes':>14} {'dense bytes':>14}")
    for name, sec, stored, dense in rows:
        s1 = f"{stored:,}" if stored != "" else ""
        s2 = f"{dense:,}" if dense != "" else ""
        print(f"{name:<42} {sec:>9.3f} {s1:>14} {s2:>14}")


if __name__ == "__main__":
    main()
