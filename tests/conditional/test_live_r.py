"""Live agreement with R selectiveInference on fresh random cases (needs R, rpy2 and the package).

Every case below draws its data from a fixed seed, runs the same analysis through R (via
:func:`selective.interop.rcompare.compare_with_r`) and through ``selective.conditional``, and
compares the two at the tolerances of tests/reference/r-selectiveinference/README.md:

* discrete outputs (selected variables, means or groups, signs, df, df2): exact;
* linear algebra (estimate, sd, vlo, vup, TC/TF, supports, thresholds): relative 1e-8 plus
  1e-9 * sd for values that are zero in exact arithmetic; infinite limits exactly;
* truncated-normal p-values: relative 1e-6 against R where R's value is accurate;
* intervals: within 1e-6 sd of the exact (root-finding) ends and within one grid step of R's
  grid search (0.0205 sd) where R's search is faithful;
* manyMeans: p-values relative 1e-10; estimates and intervals within 2.5e-4 * sigma of R's
  ``uniroot`` roots (default tolerance) and within 1e-8 * sigma of exact roots;
* groupfsInf: p-values relative 1e-6.

R's double-precision arithmetic is inaccurate in the far tails (p = 0 where the truth is
1e-19, interval ends at spurious grid points, Riemann sums for groupfsInf). Such entries are
arbitrated by an independent high-precision evaluation (mpmath, 40 significant digits) of the
same truncated-normal (or truncated chi / F) quantity: R's value counts as accurate when it is
within the tolerance of that evaluation, otherwise the package must match the high-precision
value instead. The package's own values must always match it.

The seeds are fixed, so these are deterministic checks (no false-failure rate); cases marked
``arbitrates`` are strong-signal cases in which R is expected to be inaccurate somewhere, and
the test checks that the arbitration was used there.

selectiveInference 1.2.5's ``manyMeans`` with ``bh.q`` builds its selection event without
``q`` (threshold ``qnorm(R/(2n))`` instead of ``qnorm(qR/(2n))``); the BH cases check that R's
p-values are exactly ``q`` times the package's and check the package against the exact values.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from selective.conditional import solve_lasso
from selective.interop.rcompare import compare_with_r, why_r_unavailable

REASON = why_r_unavailable()
live = [pytest.mark.needs_r,
        pytest.mark.skipif(REASON is not None, reason=f"live comparison with R skipped: {REASON}")]

LIN_RTOL = 1e-8
LIN_ATOL_SD = 1e-9
PV_RTOL = 1e-6
MM_PV_RTOL = 1e-10
CI_ATOL_SD = 1e-6
GRID_STEP_SD = 0.0205
BOUND_SD = 100.0          # gridrange = (-100, 100): ends beyond 100 sd are reported infinite
MM_UNIROOT_ATOL = 2.5e-4   # uniroot's default tolerance (1.2e-4), absolute in mu
TF_SUPPORT_RTOL = 1e-6     # R finds the TF support ends with uniroot(tol = 1e-8)
MM_EXACT_ATOL = 1e-8
DPS = 40


# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str
    function: str
    seed: int
    data: dict
    kwargs: dict = field(default_factory=dict)
    arbitrates: bool = False      # R is expected to be inaccurate somewhere in this case


def _lasso(name, seed, n, p, signal, frac, *, sigma=1.0, type="partial", intercept=True, corr=0.0,
           arbitrates=False):
    return Case(name, "fixedLassoInf", seed, dict(kind="regression", n=n, p=p, signal=signal, corr=corr),
                dict(frac=frac, sigma=sigma, type=type, intercept=intercept), arbitrates)


def _binomial(name, seed, n, p, signal, frac):
    return Case(name, "fixedLassoInf", seed, dict(kind="binomial", n=n, p=p, signal=signal),
                dict(frac=frac, family="binomial"))


def _cox(name, seed, n, p, signal, frac, *, round_to=None, censoring=2.0):
    """Cox lasso: exponential times with hazard exp(x'beta), exponential censoring of mean
    ``censoring``; ``round_to`` rounds the times up to a grid (tied event times)."""
    return Case(name, "fixedLassoInf", seed, dict(kind="cox", n=n, p=p, signal=signal,
                                                   round_to=round_to, censoring=censoring),
                dict(frac=frac, family="cox"))


def _path(name, function, seed, n, p, signal, *, sigma=1.0, type="active", k=None, maxsteps=2000, corr=0.0,
          arbitrates=False):
    return Case(name, function, seed, dict(kind="regression", n=n, p=p, signal=signal, corr=corr),
                dict(sigma=sigma, type=type, k=k, maxsteps=maxsteps), arbitrates)


def _means(name, seed, n, n_signal, size, **kwargs):
    return Case(name, "manyMeans", seed, dict(kind="means", n=n, n_signal=n_signal, size=size), kwargs)


def _groups(name, seed, n, sizes, signal, *, sigma=None, maxsteps=3, arbitrates=False):
    return Case(name, "groupfsInf", seed, dict(kind="groups", n=n, sizes=sizes, signal=signal),
                dict(sigma=sigma, maxsteps=maxsteps), arbitrates)


CASES = [
    # fixedLassoInf, gaussian, type="partial"
    _lasso("lasso_partial_small", 101, 50, 10, 1.0, 0.4),
    _lasso("lasso_partial_sigma_est", 102, 80, 12, 0.8, 0.3, sigma=None),
    _lasso("lasso_partial_null", 103, 100, 20, 0.0, 0.5),
    _lasso("lasso_partial_corr", 104, 120, 30, 0.7, 0.25, corr=0.6),
    _lasso("lasso_partial_p_gt_n", 105, 30, 60, 1.5, 0.35),
    _lasso("lasso_partial_no_intercept", 106, 60, 10, 1.0, 0.3, intercept=False),
    _lasso("lasso_partial_strong", 107, 200, 10, 3.0, 0.2, arbitrates=True),
    _lasso("lasso_partial_sigma2", 108, 70, 15, 2.0, 0.3, sigma=2.0),
    # fixedLassoInf, gaussian, type="full"
    _lasso("lasso_full_small", 111, 50, 10, 1.0, 0.4, type="full"),
    _lasso("lasso_full_sigma_est", 112, 100, 20, 0.8, 0.3, type="full", sigma=None),
    _lasso("lasso_full_corr", 113, 150, 25, 0.6, 0.2, type="full", corr=0.5),
    _lasso("lasso_full_no_intercept", 114, 60, 8, 1.0, 0.35, type="full", intercept=False),
    _lasso("lasso_full_strong", 115, 200, 10, 3.0, 0.15, type="full", arbitrates=True),
    _lasso("lasso_full_weak", 116, 80, 12, 0.3, 0.5, type="full"),
    # fixedLassoInf, binomial (both sides from the same lasso solution)
    _binomial("binomial_small", 121, 100, 8, 1.0, 0.3),
    _binomial("binomial_wide", 122, 150, 20, 0.8, 0.25),
    _binomial("binomial_null", 123, 120, 10, 0.0, 0.6),
    _binomial("binomial_strong", 124, 300, 6, 1.5, 0.1),
    _binomial("binomial_tall", 125, 400, 12, 0.6, 0.2),
    # fixedLassoInf, cox (both sides from the same lasso solution; R's information is Efron's)
    _cox("cox_small", 171, 100, 8, 0.8, 0.3),
    _cox("cox_wide", 172, 150, 25, 0.6, 0.25),
    _cox("cox_null", 173, 120, 10, 0.0, 0.5),
    _cox("cox_strong", 174, 300, 6, 1.2, 0.1, censoring=5.0),
    _cox("cox_ties", 175, 200, 10, 0.7, 0.2, round_to=0.1),
    _cox("cox_heavy_censoring", 176, 250, 12, 0.8, 0.2, censoring=0.3),
    # fsInf
    _path("fs_active", "fsInf", 131, 50, 10, 1.0),
    _path("fs_active_sigma_est", "fsInf", 132, 100, 15, 0.8, sigma=None, maxsteps=10),
    _path("fs_all", "fsInf", 133, 60, 12, 1.0, type="all", k=5, maxsteps=5),
    _path("fs_aic", "fsInf", 134, 120, 20, 0.7, type="aic", k=12, maxsteps=12, corr=0.5),
    _path("fs_strong", "fsInf", 135, 200, 10, 3.0, type="all", k=4, maxsteps=4, arbitrates=True),
    _path("fs_null", "fsInf", 136, 80, 10, 0.0, maxsteps=6),
    _path("fs_p_gt_n", "fsInf", 137, 30, 50, 1.5, maxsteps=8),
    # larInf
    _path("lar_active", "larInf", 141, 50, 10, 1.0),
    _path("lar_active_sigma_est", "larInf", 142, 100, 15, 0.8, sigma=None, maxsteps=10),
    _path("lar_all", "larInf", 143, 60, 12, 1.0, type="all", k=5, maxsteps=5),
    _path("lar_aic", "larInf", 144, 120, 20, 0.7, type="aic", k=12, maxsteps=12, corr=0.5),
    _path("lar_strong", "larInf", 145, 200, 10, 3.0, type="all", k=4, maxsteps=4, arbitrates=True),
    _path("lar_null", "larInf", 146, 80, 10, 0.0, maxsteps=6),
    _path("lar_p_gt_n", "larInf", 147, 30, 50, 1.5, maxsteps=8),
    # manyMeans
    _means("means_topk_5", 151, 100, 10, 4.0, k=5),
    _means("means_topk_10", 152, 200, 20, 3.0, k=10),
    _means("means_topk_sigma2", 153, 80, 8, 5.0, k=6, sigma=2.0),
    _means("means_topk_far", 154, 100, 5, 9.0, k=5),
    _means("means_bh_q10", 155, 200, 15, 4.0, bh_q=0.1),
    _means("means_bh_q20", 156, 150, 10, 3.5, bh_q=0.2),
    # groupfsInf
    _groups("groups_tf", 161, 60, (3,) * 5, 1.0, maxsteps=4),
    _groups("groups_tc", 162, 60, (3,) * 5, 1.0, sigma=1.0, maxsteps=4),
    _groups("groups_tf_uneven", 163, 80, (1, 2, 3, 4, 2), 0.8, maxsteps=3),
    _groups("groups_tc_uneven", 164, 80, (1, 2, 3, 4, 2), 0.8, sigma=1.0, maxsteps=3),
    _groups("groups_tf_strong", 165, 100, (2,) * 6, 2.5, maxsteps=3),
    _groups("groups_tc_strong", 166, 100, (2,) * 6, 2.5, sigma=1.0, maxsteps=3, arbitrates=True),
]


def _regression(rng, n, p, signal, corr):
    Z = rng.standard_normal((n, p))
    X = Z.copy()
    for j in range(1, p):
        X[:, j] = corr * X[:, j - 1] + math.sqrt(1 - corr ** 2) * Z[:, j]
    X = X * rng.uniform(0.5, 2.0, p) + rng.normal(0.0, 1.0, p)  # unequal scales, non-zero means
    beta = np.zeros(p)
    m = min(3, p)
    beta[:m] = signal * rng.choice([-1.0, 1.0], m) * rng.uniform(0.5, 1.5, m)
    return X, beta


def _data(case: Case):
    d = case.data
    rng = np.random.default_rng(case.seed)
    if d["kind"] == "regression":
        X, beta = _regression(rng, d["n"], d["p"], d["signal"], d["corr"])
        sigma = case.kwargs.get("sigma") or 1.0
        return X, X @ beta + sigma * rng.standard_normal(d["n"])
    if d["kind"] == "binomial":
        X, beta = _regression(rng, d["n"], d["p"], d["signal"], 0.0)
        eta = (X - X.mean(0)) @ beta
        return X, (rng.uniform(size=d["n"]) < 1 / (1 + np.exp(-eta))).astype(float)
    if d["kind"] == "cox":
        X, beta = _regression(rng, d["n"], d["p"], d["signal"], 0.0)
        times = rng.exponential(size=d["n"]) * np.exp(-(X - X.mean(0)) @ beta)
        if d["round_to"] is not None:
            times = np.ceil(times / d["round_to"]) * d["round_to"]
        censor = rng.exponential(d["censoring"], size=d["n"])
        return X, np.minimum(times, censor), (times <= censor).astype(float)
    if d["kind"] == "means":
        mu = np.zeros(d["n"])
        mu[:d["n_signal"]] = d["size"] * rng.choice([-1.0, 1.0], d["n_signal"]) * rng.uniform(0.5, 1.5, d["n_signal"])
        return mu + case.kwargs.get("sigma", 1.0) * rng.standard_normal(d["n"]), None
    sizes = d["sizes"]
    X = rng.standard_normal((d["n"], sum(sizes))) + rng.normal(0.0, 1.0, sum(sizes))
    index = np.repeat(np.arange(1, len(sizes) + 1), sizes)
    beta = np.where(index <= 2, d["signal"], 0.0) * rng.choice([-1.0, 1.0], index.size)
    return X, X @ beta + rng.standard_normal(d["n"])


def _run(case: Case):
    if case.data["kind"] == "cox":
        from statsmodels.duration.hazard_regression import PHReg

        X, times, status = _data(case)
        kw = dict(case.kwargs)
        score0 = PHReg(times, X, status=status, ties="breslow").score(np.zeros(X.shape[1]))
        kw["lam"] = kw.pop("frac") * float(np.max(np.abs(score0)))
        return compare_with_r(case.function, X, times, status=status, **kw)
    X, y = _data(case)
    kw = dict(case.kwargs)
    if case.function == "fixedLassoInf":
        intercept = kw.get("intercept", True)
        Xc = X - X.mean(0) if intercept else X
        yc = y - y.mean() if intercept else y
        kw["lam"] = kw.pop("frac") * float(np.max(np.abs(Xc.T @ yc)))
        if kw.get("family") == "binomial":
            fit = solve_lasso(X, y, kw["lam"], family="binomial", intercept=intercept)
            kw["beta"] = np.concatenate([[fit.intercept], fit.beta])
    if case.function == "groupfsInf":
        kw["index"] = np.repeat(np.arange(1, len(case.data["sizes"]) + 1), case.data["sizes"])
    return compare_with_r(case.function, X, y, **kw)


# ---------------------------------------------------------------- high precision (mpmath)


@contextlib.contextmanager
def _high_precision():
    """mpmath at DPS significant digits, restored afterwards."""
    import mpmath

    with mpmath.workdps(DPS):
        yield mpmath


def _mass(mp, lo, hi):
    """P(lo <= Z <= hi), Z ~ N(0, 1), without cancellation (erfc of non-negative arguments)."""
    if lo >= hi:
        return mp.mpf(0)
    r2 = mp.sqrt(2)
    if lo >= 0:
        return (mp.erfc(lo / r2) - mp.erfc(hi / r2)) / 2
    if hi <= 0:
        return (mp.erfc(-hi / r2) - mp.erfc(-lo / r2)) / 2
    return 1 - (mp.erfc(-lo / r2) + mp.erfc(hi / r2)) / 2


def _tn_sf(mp, z, a, b, m):
    """P_m(Z >= z | a <= Z <= b) for Z ~ N(m, 1), z clamped into [a, b]."""
    z = min(max(z, a), b)
    return _mass(mp, z - m, b - m) / _mass(mp, a - m, b - m)


def _bisect(f, lo, hi, iters=90):
    """Root of a function increasing on [lo, hi] with f(lo) < 0 < f(hi)."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _hp_root(mp, f):
    """Root of an increasing f within [-BOUND_SD, BOUND_SD], or -inf / +inf beyond it."""
    lo, hi = mp.mpf(-BOUND_SD), mp.mpf(BOUND_SD)
    if f(lo) > 0:
        return -math.inf
    if f(hi) < 0:
        return math.inf
    return float(_bisect(f, lo, hi))


def hp_truncnorm(estimate, sign, sd, vlo, vup, alpha):
    """High-precision p-value P(T >= t | vlo <= T <= vup) (T = sign * estimate ~ N(0, sd^2)) and
    the equal-tailed (1 - alpha) interval for the estimate's mean, ends beyond 100 sd infinite."""
    with _high_precision() as mp:
        z, a, b = (mp.mpf(sign * estimate) / sd, mp.mpf(vlo) / sd, mp.mpf(vup) / sd)
        a = mp.mpf("-inf") if math.isinf(vlo) else a
        b = mp.mpf("inf") if math.isinf(vup) else b
        pv = float(_tn_sf(mp, z, a, b, 0))
        half = mp.mpf(alpha) / 2
        low = _hp_root(mp, lambda m: _tn_sf(mp, z, a, b, m) - half)        # sf increases in m
        high = _hp_root(mp, lambda m: _tn_sf(mp, z, a, b, m) - (1 - half))  # cdf = alpha/2
        low, high = low * sd, high * sd
        if sign < 0:
            low, high = -high, -low
        return pv, (low, high)


def hp_many_means(y, threshold, sigma, alpha):
    """High-precision p-value, conditional MLE and interval of one selected mean (|Y| >= c)."""
    with _high_precision() as mp:
        z, c = mp.mpf(y) / sigma, mp.mpf(threshold) / sigma

        def denom(m):
            return _mass(mp, c - m, mp.inf) + _mass(mp, -mp.inf, -c - m)

        def sf(m):  # P_m(Y >= z | |Y| >= c)
            if z >= c:
                return _mass(mp, z - m, mp.inf) / denom(m)
            return (_mass(mp, c - m, mp.inf) + _mass(mp, z - m, -c - m)) / denom(m)

        def mean(m):
            return m + (mp.npdf(c - m) - mp.npdf(-c - m)) / denom(m)

        pv = float(_mass(mp, abs(z), mp.inf) / _mass(mp, c, mp.inf))
        span = mp.mpf(10_000)
        mu = _bisect(lambda m: mean(m) - z, -span, span, iters=120)
        low = _bisect(lambda m: sf(m) - mp.mpf(alpha) / 2, -span, span, iters=120)
        high = _bisect(lambda m: sf(m) - (1 - mp.mpf(alpha) / 2), -span, span, iters=120)
        return pv, float(mu) * sigma, (float(low) * sigma, float(high) * sigma)


def hp_many_means_r_estimate(y, threshold, sigma):
    """The root of selectiveInference 1.2.5's estimating equation for manyMeans: its tn.mean is
    mu + (dnorm(c, mu, sigma) - dnorm(-c, mu, sigma)) / P_mu(|Y| >= c), the truncated mean
    with its correction divided by sigma^2 (right only for sigma = 1)."""
    with _high_precision() as mp:
        z, c, s = mp.mpf(y), mp.mpf(threshold), mp.mpf(sigma)

        def r_mean(m):
            d = _mass(mp, (c - m) / s, mp.inf) + _mass(mp, -mp.inf, (-c - m) / s)
            return m + (mp.npdf(c, m, s) - mp.npdf(-c, m, s)) / d

        span = 10_000 * s
        return float(_bisect(lambda m: r_mean(m) - z, -span, span, iters=120))


def hp_truncated_tail(statistic, region, df1, df2=None):
    """P(S >= s | S in region), S = chi_df1 (df2 None) or F(df1, df2), in high precision."""
    with _high_precision() as mp:

        def sf(x):
            x = mp.mpf(x)
            if mp.isinf(x):
                return mp.mpf(0)
            if df2 is None:  # P(chi_d >= x) = Q(d/2, x^2/2)
                return mp.gammainc(mp.mpf(df1) / 2, x * x / 2, mp.inf, regularized=True)
            return mp.betainc(mp.mpf(df2) / 2, mp.mpf(df1) / 2, 0, df2 / (df2 + df1 * x), regularized=True)

        num = den = mp.mpf(0)
        for lo, hi in np.asarray(region, dtype=float).reshape(-1, 2):
            den += sf(lo) - sf(hi)
            if hi > statistic:
                num += sf(max(lo, statistic)) - sf(hi)
        return float(num / den)


# ---------------------------------------------------------------- checks


def _rel_close(mine, ref, rtol):
    return abs(mine - ref) <= rtol * abs(ref)


def _assert_linear(name, mine, ref, sd):
    mine, ref = np.asarray(mine, dtype=float), np.asarray(ref, dtype=float)
    inf = np.isinf(ref)
    assert np.array_equal(np.isinf(mine), inf) and np.all(mine[inf] == ref[inf]), \
        f"{name}: infinite entries differ: {mine} vs R's {ref}"
    tol = LIN_RTOL * np.abs(ref[~inf]) + LIN_ATOL_SD * np.broadcast_to(sd, ref.shape)[~inf]
    err = np.abs(mine[~inf] - ref[~inf])
    assert np.all(err <= tol), f"{name}: errors {err} above {tol}; mine {mine}, R {ref}"


def _assert_close_or_inf(name, mine, ref, rtol):
    mine, ref = np.asarray(mine, dtype=float), np.asarray(ref, dtype=float)
    inf = np.isinf(ref)
    assert np.array_equal(np.isinf(mine), inf) and np.all(mine[inf] == ref[inf]), \
        f"{name}: infinite entries differ: {mine} vs R's {ref}"
    assert np.all(np.abs(mine[~inf] - ref[~inf]) <= rtol * np.abs(ref[~inf])), f"{name}: {mine} vs R's {ref}"


def _check_pvalue(name, mine, r, hp_mine, hp_r, rtol, log):
    """R's value where it is accurate (within rtol of the high-precision value of its own
    inputs), the high-precision value otherwise; the package's value always within rtol of the
    high-precision value of its inputs."""
    assert _rel_close(mine, hp_mine, rtol), f"{name}: {mine!r} vs high precision {hp_mine!r}"
    if r > 0 and _rel_close(r, hp_r, rtol):
        assert _rel_close(mine, r, rtol), f"{name}: {mine!r} vs R's accurate {r!r}"
    else:
        log.append(f"{name}: R {r!r}, high precision {hp_r!r}, package {mine!r}")


def _check_truncnorm(case, frame, log):
    py, r = frame.attrs["python"], frame.attrs["r"]
    assert frame.filter(like="_python").notna().all().all(), f"rows only in R:\n{frame}"
    assert frame.filter(regex="^(sign|estimate|pvalue)_r$").notna().all().all(), f"rows only in Python:\n{frame}"
    assert np.array_equal(frame["sign_python"], frame["sign_r"]), f"signs differ:\n{frame}"
    sd = frame["sd_r"].to_numpy()
    for key in ("sd", "estimate", "vlo", "vup"):
        _assert_linear(key, frame[f"{key}_python"], frame[f"{key}_r"], 0.0 if key == "sd" else sd)
    if case.kwargs.get("sigma", 0.0) is None and case.function != "fixedLassoInf":
        _assert_linear("sigma", [py.sigma], [r["sigma"]], 0.0)
    alpha = py.alpha
    for j, row in enumerate(frame.itertuples()):
        hp_p, hp_ci = hp_truncnorm(row.estimate_python, row.sign_python, row.sd_python, row.vlo_python,
                                   row.vup_python, alpha)
        hp_p_r, hp_ci_r = hp_truncnorm(row.estimate_r, row.sign_r, row.sd_r, row.vlo_r, row.vup_r, alpha)
        _check_pvalue(f"pv[{j}]", row.pvalue_python, row.pvalue_r, hp_p, hp_p_r, PV_RTOL, log)
        mine = (row.ci_low_python, row.ci_high_python)
        theirs = (row.ci_low_r, row.ci_high_r)
        faithful = all((math.isinf(x) and x == t) or abs(t - x) <= GRID_STEP_SD * row.sd_r
                       for t, x in zip(theirs, hp_ci_r, strict=True))
        if not faithful:
            log.append(f"ci[{j}]: R {theirs}, high precision {hp_ci_r}")
        for e in range(2):
            m, x, t = mine[e], hp_ci[e], theirs[e]
            if math.isinf(x):
                assert m == x, f"ci[{j},{e}]: {m} vs high precision {x}"
            else:
                assert abs(m - x) <= CI_ATOL_SD * row.sd_python, f"ci[{j},{e}]: {m} vs high precision {x}"
            if faithful and math.isfinite(t):
                assert abs(m - t) <= GRID_STEP_SD * row.sd_r, f"ci[{j},{e}]: {m} vs R's {t}"


def _check_many_means(case, frame, log):
    py, r = frame.attrs["python"], frame.attrs["r"]
    assert frame.filter(like="_python").notna().all().all() and frame["pvalue_r"].notna().all(), \
        f"selected sets differ:\n{frame}"
    y = _data(case)[0]
    n = y.size
    sigma = py.sigma
    alpha = py.alpha
    q = case.kwargs.get("bh_q")
    m = len(frame)
    if q is None:
        assert _rel_close(py.threshold, float(r["threshold"]), 1e-12)
    else:
        from scipy.special import ndtri

        # the package: c = sigma * Phi-bar^{-1}(q m / (2n)); R: sigma * Phi-bar^{-1}(m / (2n))
        assert _rel_close(py.threshold, -sigma * float(ndtri(q * m / (2 * n))), 1e-12)
        assert _rel_close(float(r["threshold"]), -sigma * float(ndtri(m / (2 * n))), 1e-12)
    for j, row in enumerate(frame.itertuples()):
        i = int(row.Index) - 1
        hp_p, hp_mu, hp_ci = hp_many_means(y[i], py.threshold, sigma, alpha)
        hp_p_r = hp_many_means(y[i], float(r["threshold"]), sigma, alpha)[0]
        assert abs(row.estimate_python - hp_mu) <= MM_EXACT_ATOL * sigma, f"mu_hat[{j}]"
        assert abs(row.ci_low_python - hp_ci[0]) <= MM_EXACT_ATOL * sigma, f"ci[{j}, 0]"
        assert abs(row.ci_high_python - hp_ci[1]) <= MM_EXACT_ATOL * sigma, f"ci[{j}, 1]"
        if q is None:
            _check_pvalue(f"pv[{j}]", row.pvalue_python, row.pvalue_r, hp_p, hp_p_r, MM_PV_RTOL, log)
            assert abs(row.ci_low_python - row.ci_low_r) <= MM_UNIROOT_ATOL, f"ci[{j}, 0] vs R"
            assert abs(row.ci_high_python - row.ci_high_r) <= MM_UNIROOT_ATOL, f"ci[{j}, 1] vs R"
            if sigma == 1.0:
                assert abs(row.estimate_python - row.estimate_r) <= MM_UNIROOT_ATOL, f"mu_hat[{j}] vs R"
            else:
                # R's known defect: its tn.mean omits a factor sigma^2, so mu.hat solves
                # mu + (phi_sigma(c - mu) - phi_sigma(-c - mu)) / P_mu(|Y| >= c) = y
                wrong = hp_many_means_r_estimate(y[i], py.threshold, sigma)
                assert abs(row.estimate_r - wrong) <= MM_UNIROOT_ATOL, f"R's mu_hat[{j}] {row.estimate_r} vs {wrong}"
                assert abs(row.estimate_python - row.estimate_r) > 100 * MM_UNIROOT_ATOL
        else:
            # R's known defect: its p-values are q times the correct ones
            assert _rel_close(row.pvalue_python, hp_p, MM_PV_RTOL)
            if _rel_close(row.pvalue_r, hp_p_r, MM_PV_RTOL):
                assert _rel_close(row.pvalue_r, q * row.pvalue_python, MM_PV_RTOL), \
                    f"pv[{j}]: R {row.pvalue_r} is not q = {q} times {row.pvalue_python}"
            else:
                log.append(f"pv[{j}]: R {row.pvalue_r}, high precision (R's threshold) {hp_p_r}")


def _check_groupfs(case, frame, log):
    py, r = frame.attrs["python"], frame.attrs["r"]
    groups = [int(g) for g in py.groups]
    assert groups == [int(g) for g in np.atleast_1d(r["vars"])], f"groups (in entry order) differ:\n{frame}"
    assert np.array_equal(frame["df_python"], frame["df_r"])
    _assert_linear("statistic", frame["statistic_python"], frame["statistic_r"], 0.0)
    sigma = case.kwargs.get("sigma")
    if sigma is None:
        assert py.df2 == float(r["df2"])
    else:
        assert py.sigma == float(r["sigma"])
    supports_r = r["support"] if isinstance(r["support"], list) else [r["support"]]
    assert len(py.support) == len(supports_r)
    for j, (g, mine, theirs) in enumerate(zip(groups, py.support, supports_r, strict=True)):
        theirs = np.asarray(theirs, dtype=float).reshape(-1, 2)
        assert mine.shape == theirs.shape, f"support[{j}]: {mine} vs R's {theirs}"
        if sigma is None:  # R: uniroot(tol = 1e-8) in its own parameter of the F scale
            _assert_close_or_inf(f"support[{j}]", mine, theirs, TF_SUPPORT_RTOL)
        else:  # R: closed-form roots of the quadratics
            _assert_linear(f"support[{j}]", mine, theirs, 0.0)
        d = int(py.df[j])
        hp_p = hp_truncated_tail(py.statistic[j], mine, d, py.df2 if sigma is None else None)
        hp_p_r = hp_truncated_tail(float(frame.loc[g, "statistic_r"]), theirs, d,
                                   float(r["df2"]) if sigma is None else None)
        _check_pvalue(f"pv[{j}]", float(py.pvalue[j]), float(frame.loc[g, "pvalue_r"]), hp_p, hp_p_r, PV_RTOL, log)


CHECKS = {"fixedLassoInf": _check_truncnorm, "fsInf": _check_truncnorm, "larInf": _check_truncnorm,
          "manyMeans": _check_many_means, "groupfsInf": _check_groupfs}


def test_enough_live_cases_of_every_function():
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.function for c in CASES} == set(CHECKS)
    assert {c.kwargs.get("type") for c in CASES if c.kwargs.get("family") != "binomial"} >= {"partial", "full"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=live) for c in CASES])
def test_live_case_agrees_with_r(case):
    frame = _run(case)
    assert len(frame) >= 1, "the case selects nothing: nothing compared"
    log: list[str] = []
    CHECKS[case.function](case, frame, log)
    if case.arbitrates:
        assert log, "a strong-signal case in which R was expected to be inaccurate somewhere"
