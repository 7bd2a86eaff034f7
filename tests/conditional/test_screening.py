"""Exact inference after t-test screening (screening_inference): the event, null uniformity, tails, inputs."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from selective.conditional.screening import TTestScreen, screening_inference
from tests.stats_helpers import assert_rate_at_least, assert_rate_near


def _curve(X, y, cols, rows, keep_below):
    """Brute force: the tested statistic and the screen's outcome along the one-parameter family."""
    n, p = X.shape
    G = np.linalg.inv(X.T @ X)
    e = y - X @ (G @ X.T @ y)
    rss = e @ e
    v = e / math.sqrt(rss)
    Q = np.linalg.qr(X[:, cols])[0]
    if len(cols) == 1:
        # a single kept column: signed t, theta in (-pi/2, pi/2)
        u = Q[:, 0] * np.sign(Q[:, 0] @ X[:, cols[0]])
        a = float(u @ y)
        ths = np.linspace(-math.pi / 2 + 1e-4, math.pi / 2 - 1e-4, 4001)
        to_stat = lambda th: math.sqrt(n - p) * np.tan(th)  # noqa: E731
    else:
        ph = Q @ (Q.T @ y)
        a = float(np.linalg.norm(ph))
        u = ph / a
        ths = np.linspace(1e-4, math.pi / 2 - 1e-4, 4001)
        to_stat = lambda th: (n - p) / len(cols) * np.tan(th) ** 2  # noqa: E731
    w0 = y - a * u - e
    r = math.hypot(a, math.sqrt(rss))
    X1 = X[rows]
    G1 = np.linalg.inv(X1.T @ X1)
    crit = stats.t.isf(keep_below / 2, len(rows) - p)
    inside = []
    for th in ths:
        yy = (w0 + r * math.sin(th) * u + r * math.cos(th) * v)[rows]
        b = G1 @ X1.T @ yy
        res = yy - X1 @ b
        t = b / np.sqrt(res @ res / (len(rows) - p) * np.diag(G1))
        inside.append(set(np.nonzero(np.abs(t) > crit)[0]) == set(cols))
    return to_stat(ths), np.array(inside)


@pytest.mark.parametrize("carve", [False, True])
def test_event_matches_the_screen_recomputed_along_the_curve(carve):
    """The support (roots of degree-2 trigonometric polynomials) is exactly where the screen keeps the same set."""
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(30):
        n, p = int(rng.integers(20, 50)), int(rng.integers(2, 7))
        X = rng.standard_normal((n, p))
        y = rng.standard_normal(n) + X[:, 0] * rng.uniform(0, 1)
        rows = np.sort(rng.choice(n, int(rng.integers(p + 4, n - 2)), replace=False)) if carve else np.arange(n)
        res = screening_inference(X, y, keep_below=0.3, screen_rows=rows if carve else None)
        if not len(res.tested):
            continue
        cols = [int(k[1:]) - 1 for k in res.kept]
        stat, inside = _curve(X, y, cols, rows, 0.3)
        in_support = np.zeros_like(inside)
        for lo, hi in res.support[0]:
            in_support |= (stat >= lo) & (stat <= hi)
        assert (inside != in_support).sum() <= 2  # grid points straddling a root
        assert inside.any()
        checked += 1
    assert checked >= 20


def _null_pvalues(seed, reps, *, carve=False):
    """Conditional p-values of true hypotheses: correlated design, real effects, intercept always kept."""
    rng = np.random.default_rng(seed)
    n, p = 30, 7
    corr = np.linalg.cholesky(0.5 * np.ones((p, p)) + 0.5 * np.eye(p))
    beta = np.zeros(p)
    beta[:2] = 0.6
    out = []
    for _ in range(reps):
        X = np.column_stack([np.ones(n), rng.standard_normal((n, p)) @ corr.T])
        mu = X[:, 1:] @ beta
        y = mu + rng.standard_normal(n)
        res = screening_inference(X, y, keep_below=0.25, screened=list(range(1, p + 1)), test="coefficients",
                                  screen_rows=np.arange(22) if carve else None)
        model = [0] + [int(k[1:]) - 1 for k in res.kept]
        for label, pv in zip(res.tested, res.pvalue, strict=True):
            j = int(label[1:]) - 1
            Q = np.linalg.qr(X[:, [m for m in model if m != j]])[0]
            eta = X[:, j] - Q @ (Q.T @ X[:, j])
            if abs(eta @ mu) < 1e-9 * np.linalg.norm(eta) * max(np.linalg.norm(mu), 1.0):
                out.append(pv)
    return np.array(out)


@pytest.mark.parametrize("carve", [False, True])
def test_pvalues_of_true_hypotheses_are_uniform(carve):
    """Exactness under the Gaussian model. False-failure rate: 4 two-sided binomial checks at 1e-6 each."""
    pv = _null_pvalues(11 + carve, 700, carve=carve)
    assert len(pv) > 400
    for level in (0.05, 0.2, 0.5, 0.8):
        assert_rate_near(int((pv <= level).sum()), len(pv), level)


def test_global_null_overall_f_holds_where_the_refit_f_does_not():
    """Freedman's test: the refit F rejects most of the time, the conditional F at the level.
    False-failure rate: 3 binomial checks at 1e-6 each."""
    rng = np.random.default_rng(5)
    cond, naive = [], []
    for _ in range(500):
        X = rng.standard_normal((40, 12))
        y = rng.standard_normal(40)
        res = screening_inference(X, y, keep_below=0.25)
        if len(res.tested):
            cond.append(res.pvalue[0])
            naive.append(res.pvalue_naive[0])
    cond, naive = np.array(cond), np.array(naive)
    assert_rate_near(int((cond <= 0.05).sum()), len(cond), 0.05)
    assert_rate_near(int((cond <= 0.25).sum()), len(cond), 0.25)
    assert_rate_at_least(int((naive <= 0.05).sum()), len(naive), 0.3)


def test_real_effects_are_detected():
    """Power is not lost entirely: a strong coefficient is rejected.
    False-failure rate: one binomial check at 1e-6 (power here is about 0.97)."""
    rng = np.random.default_rng(6)
    hits = trials = 0
    for _ in range(200):
        X = rng.standard_normal((60, 8))
        y = 0.8 * X[:, 0] + rng.standard_normal(60)
        res = screening_inference(X, y, keep_below=0.25, test="coefficients")
        if "x1" in res.tested:
            trials += 1
            hits += res.pvalue[list(res.tested).index("x1")] <= 0.05
    assert_rate_at_least(hits, trials, 0.8)


def test_one_sided_pvalues_combine_into_the_two_sided_one():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 5))
    y = 0.7 * X[:, 0] + rng.standard_normal(30)
    kw = dict(keep_below=0.3, test="coefficients")
    g = screening_inference(X, y, alternative="greater", **kw).pvalue
    le = screening_inference(X, y, alternative="less", **kw).pvalue
    two = screening_inference(X, y, **kw).pvalue
    np.testing.assert_allclose(g + le, 1.0, atol=1e-12)
    np.testing.assert_allclose(two, np.minimum(1, 2 * np.minimum(g, le)), rtol=1e-12)


def test_without_binding_constraints_the_test_is_the_full_model_t_test():
    """A screen that cannot change along the curve (the only screened column is the tested one and it
    passes everywhere it is observed, here: keep_below close to 1) leaves the plain t-test of the full model."""
    rng = np.random.default_rng(8)
    X = np.column_stack([np.ones(25), rng.standard_normal(25)])
    y = 2.0 * X[:, 1] + rng.standard_normal(25)
    res = screening_inference(X, y, keep_below=1 - 1e-12, screened=[1], test="coefficients")
    full = stats.t.sf(abs(res.statistic[0]), 23) * 2
    # the event excludes only |t| below the (tiny) critical value
    assert res.support[0].shape[0] == 2
    assert res.pvalue[0] == pytest.approx(full / (1 - 1e-12), rel=1e-9)


def test_far_tail_pvalue_matches_high_precision_integration():
    """A p-value far below what scipy's survival function resolves, against the t density integrated in mpmath."""
    rng = np.random.default_rng(9)
    n = 40
    X = rng.standard_normal((n, 3))
    y = 12.0 * X[:, 0] + 0.4 * rng.standard_normal(n)
    res = screening_inference(X, y, keep_below=0.25, test="coefficients", alternative="greater")
    i = list(res.tested).index("x1")
    t, df, support = float(res.statistic[i]), res.df2, res.support[i]
    mp.mp.dps = 50
    dens = lambda x: mp.gamma((df + 1) / mp.mpf(2)) / (mp.sqrt(df * mp.pi) * mp.gamma(df / mp.mpf(2))) * (  # noqa: E731
        1 + x * x / df) ** (-(df + 1) / mp.mpf(2))

    def mass(lo, hi):
        return mp.quad(dens, [mp.mpf(lo), mp.mpf(hi) if math.isfinite(hi) else mp.inf])

    num = sum(mass(max(lo, t), hi) for lo, hi in support if hi > t)
    den = sum(mass(lo, hi) for lo, hi in support)
    exact = float(num / den)
    assert exact < 1e-20
    assert res.pvalue[i] == pytest.approx(exact, rel=1e-6)


def test_kept_must_match_and_errors_name_the_argument():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((30, 4))
    y = X[:, 0] + rng.standard_normal(30)
    kept = screening_inference(X, y).kept
    assert screening_inference(X, y, kept=list(kept)).kept == kept
    with pytest.raises(ValueError, match="`kept` must be the set"):
        screening_inference(X, y, kept=["x4"] if "x4" not in kept else ["x1", "x2", "x3"])
    with pytest.raises(ValueError, match="`keep_below`"):
        screening_inference(X, y, keep_below=1.0)
    with pytest.raises(ValueError, match="`test` must be one of"):
        screening_inference(X, y, test="F")
    with pytest.raises(ValueError, match="`screened` must name columns"):
        screening_inference(X, y, screened=["z"])
    with pytest.raises(ValueError, match="`screen_rows` must hold distinct"):
        screening_inference(X, y, screen_rows=[0, 0, 1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match=r"`X\[screen_rows\]` must have more rows"):
        screening_inference(X, y, screen_rows=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="`X` must have full column rank"):
        screening_inference(np.column_stack([X, X[:, 0]]), y)
    with pytest.raises(ValueError, match="`X` must have more rows"):
        screening_inference(X[:4], y[:4])
    with pytest.raises(ValueError, match="finite"):
        screening_inference(X, np.where(np.arange(30) == 3, np.nan, y))
    # a constant response with an intercept: the residual is rounding noise, whose t statistics would
    # screen at random; refused by the inference and by the selector
    X1 = np.column_stack([np.ones(30), X])
    with pytest.raises(ValueError, match="fitted exactly by `X` up to rounding .* constant outcome"):
        screening_inference(X1, np.full(30, -0.05), screened=[1, 2, 3, 4])
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(y=-0.05)
    with pytest.raises(ValueError, match="`data`: the features fit the target exactly up to rounding .* constant"):
        TTestScreen("y", ["a", "b", "c", "d"]).select(frame)


def test_frame_and_summary():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((30, 4))
    y = X[:, 0] + rng.standard_normal(30)
    res = screening_inference(X, y, test="coefficients")
    frame = res.to_frame()
    assert list(frame["tested"]) == list(res.kept)
    assert (frame["statistic_name"] == "TT").all()
    assert "kept" in res.summary()
    empty = screening_inference(X, rng.standard_normal(30), keep_below=1e-9)
    assert empty.tested == () and empty.to_frame().empty


@pytest.mark.parametrize("region", [
    [(-math.inf, -1.2), (1.2, math.inf)], [(-6.1, -5.9), (1.2, 8.0)], [(2.0, 3.0)],
    [(-3.0, -2.5), (4.0, 5.0), (7.0, math.inf)]])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_boundary_tail_is_the_tail_where_the_conditional_test_starts_to_reject(region, alternative):
    """The trust rule's depth, computed from interval masses, against bisection on the conditional p-value."""
    from selective.conditional._group_regions import _truncated_pvalue
    from selective.conditional.screening import _t_logsf, boundary_log_tail

    def boundary(reg, level):
        lo, hi = math.atan(reg[0][0]), math.atan(reg[-1][1])
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            above = _truncated_pvalue(math.tan(mid), reg, lambda x: _t_logsf(x, 20)) > level
            lo, hi = (mid, hi) if above else (lo, mid)
        return _t_logsf(math.tan(hi), 20)

    flipped = [(-b, -a) for a, b in reversed(region)]
    want = {"greater": lambda: boundary(region, 0.05), "less": lambda: boundary(flipped, 0.05),
            "two-sided": lambda: min(boundary(region, 0.025), boundary(flipped, 0.025))}[alternative]()
    assert boundary_log_tail(np.array(region), 20, 0.05, alternative) == pytest.approx(want, abs=1e-9)


def test_scales_of_y_and_of_columns_change_nothing():
    """Found by review: y times 1e200 overflowed the RSS and returned 'nothing kept'; columns scaled by
    1e8 and 1e-8 were refused as rank deficient. Every statistic is scale invariant."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((30, 4))
    y = X[:, 0] + rng.standard_normal(30)
    base = screening_inference(X, y, test="coefficients")
    assert base.kept
    X2 = X * np.array([1.0, 1e8, 1e-8, 3.0])
    for Xs, ys in ((X, y * 1e200), (X, y * 1e-200), (X2, y)):
        res = screening_inference(Xs, ys, test="coefficients")
        assert res.kept == base.kept
        np.testing.assert_allclose(res.pvalue, base.pvalue, rtol=1e-10, atol=1e-300)


def test_a_screened_column_far_from_zero_changes_nothing():
    """Found by review: a column with an offset of 1e9 times its spread made X'X singular in double
    precision, and the screen silently kept another variable. With an unscreened intercept the offset
    is an exact reparametrization: the selector and the inference give the same answer at any offset."""
    rng = np.random.default_rng(15)
    X = rng.standard_normal((40, 5))
    y = 1.5 * X[:, 0] + rng.standard_normal(40)
    X1 = np.column_stack([np.ones(40), X])
    base = screening_inference(X1, y, screened=[1, 2, 3, 4, 5], test="coefficients")
    assert "x2" in base.kept  # columns are named x1 (the intercept) to x6
    # the shifted column itself keeps about 16 - log10(offset) digits, and the p-values follow them
    for offset, rtol in ((1e6, 1e-8), (1e9, 1e-5), (1e12, 1e-2)):
        shifted = X1.copy()
        shifted[:, 1] += offset
        res = screening_inference(shifted, y, screened=[1, 2, 3, 4, 5], test="coefficients")
        assert res.kept == base.kept
        np.testing.assert_allclose(res.pvalue, base.pvalue, rtol=rtol)
        frame = pd.DataFrame(shifted[:, 1:], columns=list("abcde")).assign(y=y)
        kept = TTestScreen("y", list("abcde")).select(frame).value
        assert kept == tuple("abcde"[int(k[1:]) - 2] for k in base.kept)


def test_integer_labels_are_names_first_and_duplicates_are_refused():
    rng = np.random.default_rng(14)
    X = rng.standard_normal((30, 4))
    y = X[:, 3] + rng.standard_normal(30)
    res = screening_inference(X, y, columns=[3, 2, 1, 0], screened=[0])  # the column named 0: position 3
    assert res.kept == (0,) and res.model == (3, 2, 1, 0)
    assert screening_inference(X, y, columns=[3, 2, 1, 0], kept=[0]).kept == screening_inference(
        X, y, columns=[3, 2, 1, 0]).kept
    with pytest.raises(ValueError, match=r"`columns` must be distinct names; got \['b'\]"):
        screening_inference(X, y, columns=["a", "b", "b", "c"])
