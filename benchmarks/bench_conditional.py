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

from selective.conditional import fixed_lasso_inference, forward_stepwise, fs_inference, solve_lasso


def _data(n=2000, p=500, seed=2026):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:10] = np.linspace(1.0, 0.2, 10)
    y = X @ beta + rng.standard_normal(n)
    return X, y


R_REFERENCE_SECONDS = {"lasso": (1.7, 4.0), "fs": (12.4, 14.3)}  # R selectiveInference, 2 cores


def _time_r(X, y, lam):
    """Seconds for glmnet + fixedLassoInf and fs + fsInf (20 steps) in R, when installed."""
    from selective.interop import rbridge
    from selective.interop.rcompare import r_available

    if not r_available():
        return None
    code = """function(x, y, lam) {
      suppressMessages(library(selectiveInference)); n <- nrow(x)
      t0 <- proc.time()[["elapsed"]]
      fit <- glmnet::glmnet(x, y, standardize = FALSE, thresh = 1e-14)
      b <- as.numeric(coef(fit, x = x, y = y, s = lam / n, exact = TRUE))[-1]
      out <- fixedLassoInf(x, y, b, lam, sigma = 1)
      t1 <- proc.time()[["elapsed"]]
      fsfit <- fs(x, y, maxsteps = 20); fo <- fsInf(fsfit, sigma = 1)
      t2 <- proc.time()[["elapsed"]]
      c(t1 - t0, t2 - t1)
    }"""
    ro = rbridge._robjects()
    f = ro.r(code)
    xm = ro.r["matrix"](ro.FloatVector(X.ravel(order="F")), nrow=X.shape[0], ncol=X.shape[1])
    out = f(xm, ro.FloatVector(y), lam)
    return float(out[0]), float(out[1])


def main() -> None:
    X, y = _data()
    n, p = X.shape
    rows = []
    # warm up: imports (scikit-learn, scipy) and first-call costs are not part of the timing
    solve_lasso(X[:200, :50], y[:200], 50.0)
    forward_stepwise(X[:200, :50], y[:200], maxsteps=2)

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

    lasso_total = rows[2][1]
    fs_total = rows[5][1]
    lo, hi = R_REFERENCE_SECONDS["lasso"]
    print(f"lasso + inference vs R's reference {lo}-{hi} s: {lo / lasso_total:.1f}x to {hi / lasso_total:.1f}x faster")
    lo, hi = R_REFERENCE_SECONDS["fs"]
    print(f"fs + fsInf (20 steps) vs R's reference {lo}-{hi} s: {lo / fs_total:.1f}x to {hi / fs_total:.1f}x faster")
    r_times = _time_r(X, y, lam)
    if r_times is None:
        print("R selectiveInference not installed: no same-run R timing (reference figures above)")
    else:
        print(f"same run, R: lasso {r_times[0]:.2f} s ({r_times[0] / lasso_total:.1f}x), "
              f"fs {r_times[1]:.2f} s ({r_times[1] / fs_total:.1f}x)")
    print(f"n = {n}, p = {p}")
    print(f"{'step':<42} {'seconds':>9} {'stored bytes':>14} {'dense bytes':>14}")
    for name, sec, stored, dense in rows:
        s1 = f"{stored:,}" if stored != "" else ""
        s2 = f"{dense:,}" if dense != "" else ""
        print(f"{name:<42} {sec:>9.3f} {s1:>14} {s2:>14}")


if __name__ == "__main__":
    main()
