"""Speed of exact conditional inference: the package against R selectiveInference, same run.

Run with ``python benchmarks/bench_conditional.py`` (``--quick`` for small sizes, ``--repeats``
for the number of timed runs). For each conditional function

* fixed-lambda lasso: solve at lambda + inference (R: glmnet with ``thresh=1e-14`` refitted with
  ``exact=TRUE`` + ``fixedLassoInf``), n = 2000, p = 500;
* forward stepwise: 20-step path + ``type="active"`` inference (R: ``fs`` + ``fsInf``);
* least angle regression: 20-step path + inference (R: ``lar`` + ``larInf``);
* many means: top-100 of 10,000 means (R: ``manyMeans``);
* grouped forward stepwise: 5 of 40 groups of 5 columns, n = 500, unknown sigma (R:
  ``groupfs(center=TRUE)`` + ``groupfsInf``),
* noise level by cross-validated lasso: ``estimate_sigma``, n = 2000, p = 500 (R:
  ``estimateSigma``, glmnet's compiled coordinate descent stopped at ``thresh = 1e-7``; the
  package solves every lasso of the 11 paths exactly, on Gram matrices, the training folds'
  obtained by subtracting the held-out rows' cross-products),
* fixed-lambda lasso, ``type="full"`` with p > n (the debiased lasso): n = 100, p = 200 (R:
  glmnet + ``fixedLassoInf(type = "full")``, its debiasing matrix in C), and the same at a
  small size, n = 25, p = 40, where the debiasing coordinate descent runs to its iteration
  limits (the package repeats R's C loop operation by operation, in Python),
* the Cox lasso (``family="cox"``), n = 1000, p = 50, 30% censored: solve at lambda + one-step
  inference (R: glmnet ``family = "cox"`` with ``thresh=1e-14`` refitted with ``exact=TRUE`` +
  ``fixedLassoInf(family = "cox")``; the package's proximal Newton uses statsmodels' ``PHReg``
  for the partial likelihood, its score and its information),

it prints the median seconds of the package and, when R, rpy2 and selectiveInference are
installed, of R on the same data, the runs interleaved (package, R, package, R, ...) so that
both see the same machine load; R's time is measured inside R (``proc.time``), without the
conversion of the data. The ratio R / package is printed. Without R, stored timings of R from
an earlier run (2 cores, the sizes above) are shown instead, marked as such.

Both sides run single-threaded: R's BLAS here is the reference BLAS (single-threaded), and the
package's BLAS is limited to ``--blas-threads`` threads (default 1, through threadpoolctl). A
multi-threaded OpenBLAS on a small, busy machine spends more time synchronising its threads
than computing on matrices of these sizes (several times slower on 2 shared cores).

Each function also gets a **bare-numpy lower bound**: the unavoidable linear algebra of the same
computation written as a few vectorised numpy calls with nothing else (no input checks, no
results objects, no root finding beyond a fixed number of vectorised bisection steps), so that
package / numpy says how far the package is from the cost of its arithmetic. The lower bound
of the lasso covers the inference only (a lasso solver has no closed form), that of grouped
stepwise its linear algebra only (not the roots of the truncated-F region); the two new rows
have none (n/a).

No assertions: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np
from scipy import special

from selective.conditional import (
    estimate_sigma,
    fixed_lasso_inference,
    forward_stepwise,
    fs_inference,
    group_forward_stepwise,
    groupfs_inference,
    lar_inference,
    least_angle_regression,
    many_means,
    solve_lasso,
)

FULL = dict(n=2000, p=500, steps=20, means_n=10_000, means_k=100, groups_n=500, groups=40, group_size=5,
            group_steps=5, sigma_n=2000, sigma_p=500, wide_n=100, wide_p=200,
            small_n=25, small_p=40, cox_n=1000, cox_p=50)
QUICK = dict(n=300, p=60, steps=5, means_n=1000, means_k=20, groups_n=100, groups=10, group_size=3,
             group_steps=3, sigma_n=100, sigma_p=20, wide_n=40, wide_p=80,
             small_n=25, small_p=40, cox_n=200, cox_p=10)

#: Median seconds of R selectiveInference 1.2.5 (R 4.2.2 from Debian 12, glmnet 4.1-6, reference
#: BLAS) at the FULL sizes, measured by this script on a busy 2-core machine; shown when R is
#: not installed.
R_REFERENCE_SECONDS = {"lasso": 2.06, "fs": 20.0, "lar": 19.4, "manyMeans": 0.081, "groupfs": 2.75,
                       "estimateSigma": 1.19, "lasso_full": 0.198,
                       "lasso_full_small": 0.044, "lasso_cox": 0.25}


# ---------------------------------------------------------------- data


def _regression(n, p, seed=2026):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:10] = np.linspace(1.0, 0.2, 10)
    return X, X @ beta + rng.standard_normal(n)


def _means(n, seed=2027):
    rng = np.random.default_rng(seed)
    mu = np.zeros(n)
    mu[: n // 50] = rng.uniform(2.0, 5.0, n // 50)
    return mu + rng.standard_normal(n)


def _groups(n, g, size, seed=2028):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, g * size))
    index = np.repeat(np.arange(1, g + 1), size)
    beta = np.where(index <= 3, 0.4, 0.0)
    return X, X @ beta + rng.standard_normal(n), index


# ---------------------------------------------------------------- the package


def _survival(n, p, seed=2031):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:3] = [0.5, -0.4, 0.3]
    t = rng.exponential(np.exp(-X @ beta))
    c = rng.exponential(np.mean(t) / 0.3 * 0.7, n)
    return X, np.minimum(t, c), (t <= c).astype(float)


def _package_lasso_cox(X, time, status, lam):
    return fixed_lasso_inference(X, time, lam, family="cox", status=status)


def _package_lasso(X, y, lam):
    fit = solve_lasso(X, y, lam)
    return fixed_lasso_inference(X, y, lam, beta=fit.beta, sigma=1.0)


def _package_fs(X, y, steps):
    return fs_inference(forward_stepwise(X, y, maxsteps=steps), sigma=1.0)


def _package_lar(X, y, steps):
    return lar_inference(least_angle_regression(X, y, maxsteps=steps), sigma=1.0)


def _package_lasso_full(X, y, lam):
    fit = solve_lasso(X, y, lam)
    return fixed_lasso_inference(X, y, lam, beta=fit.beta, sigma=1.0, type="full")


def _package_groupfs(X, y, index, steps):
    return groupfs_inference(group_forward_stepwise(X, y, list(index), maxsteps=steps, center=True))


# ---------------------------------------------------------------- bare-numpy lower bounds


def _numpy_lasso_inference(X, y, lam, active, signs):
    """Centring, the KKT product X'r, the pseudo-inverse of X_E and the limits of every
    contrast (partial target: the constraint rows are -s_j times the contrast rows)."""
    Xc = X - X.mean(0)
    yc = y - y.mean()
    XE = Xc[:, active]
    Q, R = np.linalg.qr(XE)
    V = np.linalg.solve(R, Q.T)                    # (X_E'X_E)^{-1} X_E', k x n
    beta = V @ yc - lam * np.linalg.solve(R, np.linalg.solve(R.T, signs))
    _ = Xc.T @ (yc - XE @ beta)                    # KKT check
    A = -signs[:, None] * V
    b = -lam * signs * np.linalg.solve(R, np.linalg.solve(R.T, signs))
    E = signs[:, None] * V                         # the tested contrasts eta_j
    G = A @ (E / np.sum(E * E, axis=1, keepdims=True)).T
    resid = (b - A @ yc)[:, None] + G * (E @ yc)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = resid / G
    return np.where(G < 0, ratio, -np.inf).max(0), np.where(G > 0, ratio, np.inf).min(0)


def _numpy_stepwise(X, y, steps):
    """A path of ``steps`` greedy entries on residualised columns (two n x p products per step),
    then the constraint products of every step with all contrasts (one (p x n)(n x k) product
    per step) and their minima / maxima."""
    Xr = X - X.mean(0)
    r = y - y.mean()
    U = np.empty((X.shape[0], steps))
    chosen = []
    for s in range(steps):
        norms = np.sqrt(np.einsum("ij,ij->j", Xr, Xr))
        score = np.abs(Xr.T @ r) / np.where(norms > 1e-12, norms, np.inf)
        j = int(np.argmax(score))
        chosen.append(j)
        u = Xr[:, j] / norms[j]
        U[:, s] = u
        r = r - u * (u @ r)
        Xr = Xr - np.outer(u, u @ Xr)
    C = np.linalg.qr(U)[0]                         # contrasts: one per step
    Xr = X - X.mean(0)
    lo = np.full(steps, -np.inf)
    for s in range(steps):
        G = Xr.T @ C
        lo = np.maximum(lo, np.max(-np.abs(G), axis=0))
        Xr = Xr - np.outer(U[:, s], U[:, s] @ Xr)
    return chosen, lo


def _numpy_many_means(y, k, alpha=0.1, iters=60):
    """Top-k selection, closed-form p-values and three vectorised bisections (estimate, two
    interval ends) on log tails."""
    az = np.abs(y)
    order = np.argsort(-az)
    sel = order[:k]
    c = az[order[k]]
    z = np.abs(y[sel])
    pv = np.exp(special.log_ndtr(-z) - special.log_ndtr(-c))

    def log_den(m):
        return np.logaddexp(special.log_ndtr(-c - m), special.log_ndtr(m - c))

    def mean(m):
        ld = log_den(m)
        return m + (np.exp(-0.5 * (c - m) ** 2 - ld) - np.exp(-0.5 * (c + m) ** 2 - ld)) / np.sqrt(2 * np.pi)

    def log_sf(m):
        return special.log_ndtr(m - z) - log_den(m)

    targets = [(lambda m: mean(m) - z), (lambda m: log_sf(m) - np.log(alpha / 2)),
               (lambda m: np.log(-np.expm1(log_sf(m))) - np.log(alpha / 2))]
    roots = []
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # far ends of the bracket
        for sign, f in zip((1, 1, -1), targets, strict=True):
            lo, hi = np.full(k, -50.0), np.full(k, 50.0)
            for _ in range(iters):
                mid = (lo + hi) / 2
                up = sign * f(mid) < 0
                lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
            roots.append((lo + hi) / 2)
    return pv, roots


def _numpy_groupfs(X, y, index, steps):
    """Batched per-group QR of the residualised columns at every step, the projection scores,
    and for each selected group the bilinear forms of every stored basis with the three
    directions of the truncated-F family."""
    labels = np.unique(index)
    Xc = X - X.mean(0)
    yc = y - y.mean()
    blocks = np.stack([Xc[:, index == g] for g in labels])      # G x n x d
    bases = []
    active = []
    Qa = np.zeros((X.shape[0], 0))
    for _ in range(steps):
        R = blocks - Qa @ (Qa.T @ blocks)
        Q = np.linalg.qr(R)[0]
        bases.append(Q)
        score = np.sum(np.einsum("gnd,n->gd", Q, yc) ** 2, axis=1)
        score[active] = -np.inf
        best = int(np.argmax(score))
        active.append(best)
        Qa = np.column_stack([Qa, Q[best]])
    stacked = np.stack(bases)                                     # steps x G x n x d
    forms = []
    for _ in active:
        V = np.column_stack([yc, Qa @ (Qa.T @ yc), yc - Qa @ (Qa.T @ yc)])
        P = np.einsum("sgnd,nv->sgdv", stacked, V)
        forms.append(np.einsum("sgdv,sgdw->sgvw", P, P))
    return active, forms


# ---------------------------------------------------------------- R


_R_CODE = r"""
list(
  lasso = function(x, y, lam) {
    t0 <- proc.time()[["elapsed"]]
    n <- nrow(x)
    fit <- glmnet::glmnet(x, y, family = "gaussian", standardize = FALSE, intercept = TRUE,
                          thresh = 1e-14)
    b <- as.numeric(coef(fit, x = x, y = y, s = lam / n, exact = TRUE, family = "gaussian",
                         standardize = FALSE, intercept = TRUE, thresh = 1e-14))[-1]
    out <- fixedLassoInf(x, y, b, lam, sigma = 1)
    proc.time()[["elapsed"]] - t0
  },
  fs = function(x, y, steps) {
    t0 <- proc.time()[["elapsed"]]
    out <- fsInf(fs(x, y, maxsteps = steps), sigma = 1)
    proc.time()[["elapsed"]] - t0
  },
  lar = function(x, y, steps) {
    t0 <- proc.time()[["elapsed"]]
    out <- larInf(lar(x, y, maxsteps = steps), sigma = 1)
    proc.time()[["elapsed"]] - t0
  },
  manyMeans = function(y, k) {
    t0 <- proc.time()[["elapsed"]]
    out <- manyMeans(y, k = k, sigma = 1)
    proc.time()[["elapsed"]] - t0
  },
  estimateSigma = function(x, y) {
    t0 <- proc.time()[["elapsed"]]
    set.seed(1)
    out <- estimateSigma(x, y)
    proc.time()[["elapsed"]] - t0
  },
  lasso_full = function(x, y, lam) {
    t0 <- proc.time()[["elapsed"]]
    n <- nrow(x)
    fit <- glmnet::glmnet(x, y, family = "gaussian", standardize = FALSE, intercept = TRUE,
                          thresh = 1e-14)
    b <- as.numeric(coef(fit, x = x, y = y, s = lam / n, exact = TRUE, family = "gaussian",
                         standardize = FALSE, intercept = TRUE, thresh = 1e-14))
    out <- suppressWarnings(fixedLassoInf(x, y, b, lam, sigma = 1, type = "full"))
    proc.time()[["elapsed"]] - t0
  },
  lasso_cox = function(x, time, status, lam) {
    t0 <- proc.time()[["elapsed"]]
    n <- nrow(x)
    yy <- survival::Surv(time, status)
    fit <- glmnet::glmnet(x, yy, family = "cox", standardize = FALSE, thresh = 1e-14)
    b <- as.numeric(coef(fit, x = x, y = yy, s = lam / n, exact = TRUE, family = "cox",
                         standardize = FALSE, thresh = 1e-14))
    out <- fixedLassoInf(x, time, b, lam, status = status, family = "cox")
    proc.time()[["elapsed"]] - t0
  },
  groupfs = function(x, y, index, steps) {
    t0 <- proc.time()[["elapsed"]]
    out <- groupfsInf(groupfs(x, y, index, maxsteps = steps, verbose = FALSE), verbose = FALSE)
    proc.time()[["elapsed"]] - t0
  }
)
"""


def _r_session():
    """(functions, converter) when R selectiveInference is usable, else (None, reason)."""
    from selective.interop import rbridge
    from selective.interop.rcompare import why_r_unavailable

    reason = why_r_unavailable()
    if reason is not None:
        return None, reason
    ro = rbridge._robjects()
    logging.getLogger("rpy2.rinterface_lib.callbacks").setLevel(logging.ERROR)  # R's console chatter
    ro.r("suppressPackageStartupMessages(library(selectiveInference))")
    funcs = ro.r(_R_CODE)
    return {name: funcs.rx2(name) for name in funcs.names}, rbridge.to_r


# ---------------------------------------------------------------- timing


def _seconds(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def _interleaved(package, r_call, numpy_bound, repeats):
    """Median seconds of the package, R (None without R) and the numpy bound, interleaved."""
    t_pkg, t_r, t_np = [], [], []
    for _ in range(repeats):
        t_pkg.append(_seconds(package))
        if r_call is not None:
            t_r.append(float(r_call()[0]))
        if numpy_bound is not None:
            t_np.append(_seconds(numpy_bound))
    med = statistics.median
    return med(t_pkg), (med(t_r) if t_r else None), (med(t_np) if t_np else None)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each (median reported)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads of the package (default 1, as R's reference BLAS; 0: no limit)")
    args = parser.parse_args(argv)
    if args.blas_threads > 0:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=args.blas_threads):
            _run(args)
    else:
        _run(args)


def _run(args) -> None:
    size = QUICK if args.quick else FULL
    repeats = max(1, args.repeats)
    r_funcs, to_r = _r_session()
    if r_funcs is None:
        print(f"R selectiveInference not available ({to_r.split('. ')[0]}).")
        to_r = None

    X, y = _regression(size["n"], size["p"])
    n, p = X.shape
    k = size["steps"]
    lam = 2.0 * np.sqrt(2 * n * np.log(p))
    ym = _means(size["means_n"])
    Xg, yg, index = _groups(size["groups_n"], size["groups"], size["group_size"])
    Xs, ys = _regression(size["sigma_n"], size["sigma_p"], seed=2029)
    Xw, yw = _regression(size["wide_n"], size["wide_p"], seed=2030)
    lam_w = 2.0 * np.sqrt(2 * size["wide_n"] * np.log(size["wide_p"]))
    Xq, yq = _regression(size["small_n"], size["small_p"], seed=2030)
    lam_q = 2.0 * np.sqrt(2 * size["small_n"] * np.log(size["small_p"]))
    Xc, tc, dc = _survival(size["cox_n"], size["cox_p"])
    lam_c = 2.0 * np.sqrt(0.7 * size["cox_n"] * np.log(size["cox_p"]))  # ~ 2 null sd of a score
    # warm up: imports and first-call costs are not part of the timing
    _package_lasso(X[:100, :20], y[:100], 20.0)
    _package_fs(X[:100, :20], y[:100], 2)
    many_means(ym[:100], k=5)

    lasso = _package_lasso(X, y, lam)
    active, signs = np.asarray(lasso.index), np.asarray(lasso.sign, dtype=float)
    if to_r:  # the data go to R once, before any timing
        xr, yr, xgr, ygr, ymr, ir = (to_r(v) for v in (X, y, Xg, yg, ym, index.astype(np.int64)))
        lamr, kr, mkr, gkr = (to_r(v) for v in (float(lam), int(k), int(size["means_k"]), int(size["group_steps"])))
        xsr, ysr, xwr, ywr, lamwr = (to_r(v) for v in (Xs, ys, Xw, yw, float(lam_w)))
        xqr, yqr, lamqr = (to_r(v) for v in (Xq, yq, float(lam_q)))
        xcr, tcr, dcr, lamcr = (to_r(v) for v in (Xc, tc, dc, float(lam_c)))
    cases = [
        ("lasso", f"fixed-lambda lasso + inference, n={n} p={p} ({len(active)} selected)",
         lambda: _package_lasso(X, y, lam),
         (lambda: r_funcs["lasso"](xr, yr, lamr)) if to_r else None,
         lambda: _numpy_lasso_inference(X, y, lam, active, signs)),
        ("fs", f"forward stepwise {k} steps + fsInf, n={n} p={p}",
         lambda: _package_fs(X, y, k),
         (lambda: r_funcs["fs"](xr, yr, kr)) if to_r else None,
         lambda: _numpy_stepwise(X, y, k)),
        ("lar", f"least angle regression {k} steps + larInf, n={n} p={p}",
         lambda: _package_lar(X, y, k),
         (lambda: r_funcs["lar"](xr, yr, kr)) if to_r else None,
         lambda: _numpy_stepwise(X, y, k)),
        ("manyMeans", f"many means, top {size['means_k']} of {ym.size}",
         lambda: many_means(ym, k=size["means_k"]),
         (lambda: r_funcs["manyMeans"](ymr, mkr)) if to_r else None,
         lambda: _numpy_many_means(ym, size["means_k"])),
        ("groupfs", f"grouped stepwise {size['group_steps']} of {size['groups']} groups + TF tests, "
                    f"n={size['groups_n']}",
         lambda: _package_groupfs(Xg, yg, index, size["group_steps"]),
         (lambda: r_funcs["groupfs"](xgr, ygr, ir, gkr))
         if to_r else None,
         lambda: _numpy_groupfs(Xg, yg, index, size["group_steps"])),
        ("estimateSigma", f"cross-validated sigma (estimate_sigma), n={Xs.shape[0]} p={Xs.shape[1]}",
         lambda: estimate_sigma(Xs, ys, seed=1),
         (lambda: r_funcs["estimateSigma"](xsr, ysr)) if to_r else None,
         None),
        ("lasso_full", f"lasso type='full', p > n (debiased), n={Xw.shape[0]} p={Xw.shape[1]}",
         lambda: _package_lasso_full(Xw, yw, lam_w),
         (lambda: r_funcs["lasso_full"](xwr, ywr, lamwr)) if to_r else None,
         None),
        ("lasso_full_small", f"lasso type='full', p > n (debiased), n={Xq.shape[0]} p={Xq.shape[1]}",
         lambda: _package_lasso_full(Xq, yq, lam_q),
         (lambda: r_funcs["lasso_full"](xqr, yqr, lamqr)) if to_r else None,
         None),
        ("lasso_cox", f"Cox lasso + one-step inference, n={Xc.shape[0]} p={Xc.shape[1]}",
         lambda: _package_lasso_cox(Xc, tc, dc, lam_c),
         (lambda: r_funcs["lasso_cox"](xcr, tcr, dcr, lamcr)) if to_r else None,
         None),
    ]
    threads = "no limit" if args.blas_threads <= 0 else args.blas_threads
    print(f"medians of {repeats} interleaved runs; seconds; package BLAS threads: {threads}")
    print(f"{'function':<72} {'package':>8} {'R':>8} {'R/pkg':>7} {'numpy':>8} {'pkg/np':>7}")
    for key, label, package, r_call, bound in cases:
        t_pkg, t_r, t_np = _interleaved(package, r_call, bound, repeats)
        if t_r is None:
            stored = None if args.quick else R_REFERENCE_SECONDS.get(key)
            r_text = "n/a" if stored is None else f"{stored:.2f}*"
            ratio = "" if stored is None else f"{stored / t_pkg:.1f}x*"
        else:
            r_text, ratio = f"{t_r:.3f}", f"{t_r / t_pkg:.1f}x"
        np_text = "n/a" if t_np is None else f"{t_np:.4f}"
        np_ratio = "" if t_np is None else f"{t_pkg / t_np:.1f}x"
        print(f"{label:<72} {t_pkg:>8.3f} {r_text:>8} {ratio:>7} {np_text:>8} {np_ratio:>7}")
    if to_r is None:
        print("* stored R timings from an earlier run (2 cores, full sizes), not this machine; "
              "none for --quick")
    fs = _package_fs(X, y, k)
    print(f"constraint storage: lasso {lasso.constraint_bytes:,} bytes; fs compact "
          f"{fs.extra['constraint_bytes_compact']:,} bytes for a dense Gamma of "
          f"{fs.extra['constraint_bytes_dense']:,}")


if __name__ == "__main__":
    main()
