"""Inference on winners (Andrews, Kitagawa and McCloskey 2024): conditional and hybrid."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from selective.conditional import truncation_limits
from selective.conditional.winners import winners_inference


def _equicorrelated(sd, rho):
    sd = np.asarray(sd, dtype=float)
    corr = np.full((sd.size, sd.size), rho)
    np.fill_diagonal(corr, 1.0)
    return corr * np.outer(sd, sd)


def test_two_independent_candidates_match_the_closed_form():
    # Winner of two independent N(mu, 1): X_1 given X_1 >= x_2 is N(mu, 1) truncated to [x_2, inf).
    res = winners_inference([1.7, 0.4], [1.0, 1.0], alpha=0.1)
    law = scipy.stats.truncnorm(0.4, np.inf)
    expected = 2 * min(law.sf(1.7), law.cdf(1.7))
    assert res.candidates == (0,)
    assert res.vlo[0] == pytest.approx(0.4) and res.vup[0] == np.inf
    assert res.pvalue_conditional[0] == pytest.approx(expected, rel=1e-10)
    # median-unbiased estimate: P_mu(X >= 1.7 | X >= 0.4) = 1/2
    mu = res.median_unbiased[0]
    assert scipy.stats.truncnorm(0.4 - mu, np.inf, loc=mu).sf(1.7) == pytest.approx(0.5, abs=1e-9)
    assert mu < 1.7  # shrunk towards the runner-up


@pytest.mark.parametrize("by", ["value", "abs"])
def test_limits_agree_with_the_polyhedral_lemma(by):
    rng = np.random.default_rng(11)
    sd = rng.uniform(0.5, 2.0, 7)
    cov = _equicorrelated(sd, 0.35)
    x = rng.multivariate_normal(np.zeros(7), cov)
    res = winners_inference(x, cov, k=3, by=by)
    key = x if by == "value" else np.abs(x)
    for r, j in enumerate(res.candidates):
        rows = []
        for i in range(7):
            if i == j:
                continue
            a = np.zeros(7)
            if by == "value":
                a[j], a[i] = (1.0, -1.0) if key[i] > key[j] else (-1.0, 1.0)
                rows.append(a)
            else:
                s, si = np.sign(x[j]), np.sign(x[i])
                if key[i] > key[j]:
                    a[j], a[i] = s, -si
                    b = np.zeros(7)
                    b[i] = -si
                    rows += [a, b]
                else:
                    a[i], a[j] = 1.0, -s
                    b = np.zeros(7)
                    b[i], b[j] = -1.0, -s
                    rows += [a, b]
        if by == "abs":
            a = np.zeros(7)
            a[j] = -np.sign(x[j])
            rows.append(a)
        A = np.array(rows)
        lim = truncation_limits(A, np.zeros(len(A)), x, np.eye(7)[j], cov=cov)
        assert res.vlo[r] == pytest.approx(lim.vlo, rel=1e-9, abs=1e-12)
        assert res.vup[r] == pytest.approx(lim.vup, rel=1e-9, abs=1e-12)
        assert res.sd[r] == pytest.approx(lim.sd)


def _simulate(mu, cov, *, k, by, reps, seed):
    """Null p-values and coverage for each selected rank, testing its own true mean."""
    rng = np.random.default_rng(seed)
    draws = rng.multivariate_normal(mu, cov, size=reps)
    p_cond, p_hyb, p_naive, cover_c, cover_h = [], [], [], [], []
    for x in draws:
        res = winners_inference(x, cov, k=k, by=by, alpha=0.1, null_value=mu)
        for r, j in enumerate(res.candidates):
            p_cond.append(res.pvalue_conditional[r])
            p_hyb.append(res.pvalue_hybrid[r])
            p_naive.append(res.pvalue_naive[r])
            cover_c.append(res.ci_conditional[r, 0] <= mu[j] <= res.ci_conditional[r, 1])
            cover_h.append(res.ci_hybrid[r, 0] <= mu[j] <= res.ci_hybrid[r, 1])
    return (np.array(p_cond), np.array(p_hyb), np.array(p_naive), np.array(cover_c), np.array(cover_h))


def _not_above(count, n, level):
    """One-sided exact binomial p-value for 'rejection rate <= level'."""
    return scipy.stats.binom.sf(count - 1, n, level)


@pytest.mark.parametrize(("mu", "rho", "k", "by"), [
    (np.zeros(8), 0.0, 1, "value"),                           # all null, independent
    (np.array([0.6, 0.5, 0.4, 0, 0, 0, 0, -0.3]), 0.5, 1, "value"),   # near-ties, correlated
    (np.array([1.0, 0.2, 0, 0, 0, 0]), 0.3, 2, "abs"),        # top-2 by |x|, unequal effects
])
def test_conditional_is_uniform_and_hybrid_holds_its_level(mu, rho, k, by):
    # 1200 draws x k p-values. False-failure rate: KS at 1e-4, the binomial checks at 1e-6 each
    # (6 checks): about 1e-4 per case.
    sd = np.linspace(0.7, 1.6, mu.size)
    cov = _equicorrelated(sd, rho)
    p_cond, p_hyb, p_naive, cover_c, cover_h = _simulate(mu, cov, k=k, by=by, reps=1200, seed=2024)
    assert scipy.stats.kstest(p_cond, "uniform").pvalue > 1e-4
    n = p_cond.size
    for level in (0.05, 0.01):
        assert _not_above(int((p_cond <= level).sum()), n, level) > 1e-6
        assert _not_above(int((p_hyb <= level).sum()), n, level) > 1e-6
    assert _not_above(int((~cover_c).sum()), n, 0.1) > 1e-6
    assert _not_above(int((~cover_h).sum()), n, 0.1) > 1e-6
    assert (p_hyb >= 0.01 / 10 - 1e-15).all()  # never below beta = alpha / 10 (alpha = 0.1 here)


def test_naive_winner_is_anti_conservative_in_the_same_setting():
    # The check above can fail: the naive p-value of the winner of 8 nulls rejects far above 0.05.
    p_cond, _, p_naive, _, _ = _simulate(np.zeros(8), np.eye(8), k=1, by="value", reps=400, seed=7)
    assert (p_naive <= 0.05).mean() > 0.2
    assert abs((p_cond <= 0.05).mean() - 0.05) < 0.04


def test_hybrid_interval_is_bounded_when_the_winner_barely_wins():
    res = winners_inference([2.0, 1.999, 0.0], [1.0, 1.0, 1.0], alpha=0.05)
    low_c, high_c = res.ci_conditional[0]
    low_h, high_h = res.ci_hybrid[0]
    lo_p, hi_p = res.ci_projection[0]
    assert lo_p <= low_h < high_h <= hi_p
    assert high_c - low_c > high_h - low_h  # the conditional interval is much longer here
    assert res.pvalue_hybrid[0] >= res.beta


def test_hybrid_pvalue_is_beta_plus_scaled_conditional():
    res = winners_inference([3.1, 1.0, 0.2], [1.0, 1.0, 1.0], alpha=0.05, beta=0.01)
    crit = scipy.stats.norm.isf(0.01 / 6)
    lo, hi = max(res.vlo[0], -crit), min(res.vup[0], crit)
    law = scipy.stats.truncnorm(lo, hi)
    pc = min(1.0, 2 * min(law.sf(3.1), law.cdf(3.1)))
    assert res.pvalue_hybrid[0] == pytest.approx(0.01 + 0.99 * pc, rel=1e-9)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"estimates": [1.0]}, "at least 2"),
    ({"estimates": [1.0, np.nan]}, "finite"),
    ({"cov": [1.0, -1.0]}, "standard error"),
    ({"cov": np.ones((3, 3))}, "2 x 2"),
    ({"cov": [[1.0, 0.5], [0.4, 1.0]]}, "symmetric"),
    ({"k": 3}, "`k` must be"),
    ({"by": "rank"}, "`by`"),
    ({"beta": 0.2}, "`beta` must satisfy"),
    ({"labels": ["a", "a"]}, "distinct"),
])
def test_errors_name_the_argument(kwargs, match):
    args = {"estimates": [1.0, 0.5], "cov": [1.0, 1.0]} | kwargs
    with pytest.raises((ValueError, TypeError), match=match):
        winners_inference(args.pop("estimates"), args.pop("cov"), **args)


def test_series_labels_and_frame():
    import pandas as pd

    est = pd.Series([0.2, 1.4, -2.2], index=["a", "b", "c"])
    res = winners_inference(est, [1.0, 1.0, 1.0], k=2, by="abs")
    frame = res.to_frame()
    assert list(frame.index) == ["c", "b"] and list(frame["rank"]) == [1, 2]
    assert "Inference on winners" in res.summary()


def test_one_sided_hybrid_does_not_reject_in_the_wrong_direction():
    # x far below the null: the two-sided projection test would reject, the 'greater' one must not
    res = winners_inference([-6.0, -7.0], [1.0, 1.0], alternative="greater")
    assert res.pvalue_hybrid[0] == 1.0
    assert winners_inference([-6.0, -7.0], [1.0, 1.0], alternative="less").pvalue_hybrid[0] <= 0.005 + 1e-12


def test_hybrid_interval_found_when_narrower_than_the_grid():
    # An adversarial review's case: a near-tie among 8 candidates at correlation 0.9, top-2 by
    # |x|. Each winner's accepted set is narrower than the 201-point grid's spacing; it was
    # reported as NaN beside a shown p-value. The interval must be found and be the accepted set.
    from selective.conditional.winners import _hybrid_pvalue

    x = [-0.18642841, -0.22509566, -0.40586840, 0.40654816, 0.09273924, -0.24446268, -0.13777264, 0.14300686]
    cov = 0.9 * np.ones((8, 8)) + 0.1 * np.eye(8)
    res = winners_inference(x, cov, k=2, by="abs", alpha=0.05)
    crit = float(scipy.stats.norm.isf(res.beta / 16))
    for r in range(2):
        lo, hi = res.ci_hybrid[r]
        assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
        xj, sd = res.estimate[r], res.sd[r]
        assert xj - crit * sd - 1e-9 <= lo and hi <= xj + crit * sd + 1e-9  # inside the projection interval

        def p(m, r=r, xj=xj, sd=sd):
            return _hybrid_pvalue(xj, sd, res.vlo[r], res.vup[r], np.array([m]), crit, res.beta, "two-sided")[0]

        assert p((lo + hi) / 2) > 0.05  # accepted inside
        assert p(lo - 1e-6 * sd) <= 0.05 and p(hi + 1e-6 * sd) <= 0.05  # rejected just outside
