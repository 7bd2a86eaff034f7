r"""Randomized-response (carving) inference after the lasso and forward stepwise
(selective.conditional.randomized_response).

Three independent checks of the numbers, and the null law by simulation:

* lassoinf 0.2.1 (optional test dependency): ``LassoInference`` with ``Sigma_noise`` computes the
  same conditional law for the randomized lasso (it integrates out :math:`\eta^\top\omega` only,
  as we do), with closed-form bivariate-normal probabilities. P-values agree to 1e-6 relative
  (measured: about 1e-8). Its interval ends are not compared: measured, they agree to 1e-8 except
  where an end reaches values of the target at which the selection probability is tiny (e.g.
  -1.52313 ours against -1.52243), its documented weak regime; the ends are arbitrated by the next
  check instead.
* 30-digit quadrature (mpmath) of the conditional law written out from the module's formula,
  given the limits :math:`V^\pm`: p-values to 1e-6 relative and every interval end bracketed
  within 1e-5 target sds, for the lasso and for forward stepwise.
* The limits :math:`V^\pm` themselves: the selection must be unchanged when :math:`\eta^\top U`
  moves inside them and must change just outside (re-running the lasso or the path on the
  perturbed randomized response).
* Simulation under the global null: the first selected variable's p-value is uniform (one
  p-value per replication, so the counts are binomial). False-failure rate of each rate check:
  1e-6 (tests/stats_helpers.py).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selective.conditional import IntervalEvent, solve_lasso, truncated_normal_pvalue
from selective.conditional.randomized_response import (
    draw_randomization,
    randomized_lasso_inference,
    randomized_stepwise_inference,
)
from selective.conditional.stepwise import forward_stepwise
from tests.conditional.mp_noise import mp_cdf, mp_sf
from tests.stats_helpers import assert_rate_at_most, assert_rate_near


def _design(seed, n=50, p=6, effect=0.3, sigma=1.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[0] = effect
    return X, X @ beta + sigma * rng.normal(size=n), rng


def _mp_tails(stat, sd, tau, vlo, vup, mu):
    """(upper, lower) conditional tails at the observed statistic, by 30-digit quadrature."""
    with mp.workdps(30):
        return _mp_tails_at(stat, sd, tau, vlo, vup, mu)


def _mp_tails_at(stat, sd, tau, vlo, vup, mu):
    mu, sd, tau = mp.mpf(mu), mp.mpf(sd), mp.mpf(tau)

    def dens(t):
        g = (mp.ncdf((vup - t) / tau) if math.isfinite(vup) else 1) - (mp.ncdf((vlo - t) / tau)
                                                                        if math.isfinite(vlo) else 0)
        return mp.npdf(t, mu, sd) * g

    lo, hi = mu - 40 * sd, mu + 40 * sd
    pts = sorted({lo, mp.mpf(stat), hi, *(mp.mpf(v) for v in (vlo, vup) if math.isfinite(v) and lo < v < hi)})
    up = mp.quad(dens, [p for p in pts if p >= stat])
    low = mp.quad(dens, [p for p in pts if p <= stat])
    return up / (up + low), low / (up + low)


def _check_against_quadrature(res, alpha):
    tau_unit = res.extra["noise_sd"]
    for i in range(len(res.variables)):
        eta = np.asarray(res.contrasts[i])
        nrm = math.sqrt(float(eta @ eta))
        stat, sd, tau = res.estimate[i], res.sd[i], tau_unit * nrm
        up, low = _mp_tails(stat, sd, tau, res.vlo[i], res.vup[i], 0.0)
        want = min(1.0, 2 * min(up, low))
        assert res.pvalue[i] == pytest.approx(float(want), rel=1e-6, abs=1e-14)
        lo_end, hi_end = res.ci[i]
        step = 1e-5 * sd
        # the lower end: the upper tail crosses alpha/2 there (increasing in mu)
        assert _mp_tails(stat, sd, tau, res.vlo[i], res.vup[i], lo_end - step)[0] < alpha / 2
        assert _mp_tails(stat, sd, tau, res.vlo[i], res.vup[i], lo_end + step)[0] > alpha / 2
        assert _mp_tails(stat, sd, tau, res.vlo[i], res.vup[i], hi_end - step)[1] > alpha / 2
        assert _mp_tails(stat, sd, tau, res.vlo[i], res.vup[i], hi_end + step)[1] < alpha / 2


@pytest.mark.parametrize("seed", range(4))
def test_lasso_matches_quadrature(seed):
    X, y, rng = _design(seed)
    res = randomized_lasso_inference(X, y, 12.0, sigma=1.3, noise_sd=[0.6, 1.3, 2.6, 0.3][seed], rng=rng,
                                     alpha=0.05)
    assert len(res.variables) >= 1
    _check_against_quadrature(res, 0.05)


@pytest.mark.parametrize("seed", range(3))
def test_stepwise_matches_quadrature(seed):
    X, y, rng = _design(10 + seed, n=40, p=8, effect=0.5, sigma=1.0)
    res = randomized_stepwise_inference(X, y, steps=3, sigma=1.0, noise_sd=[0.5, 1.0, 2.0][seed], rng=rng,
                                        alpha=0.1)
    assert res.k == 3 and len(res.variables) == 3
    _check_against_quadrature(res, 0.1)


def _lasso_support(X, u, lam):
    beta = solve_lasso(X, u, lam, intercept=True).beta
    E = np.nonzero(np.abs(beta) > 1e-8)[0]
    return tuple(E), tuple(np.sign(beta[E]).astype(int))


@pytest.mark.parametrize("seed", range(3))
def test_lasso_limits_bound_the_selection(seed):
    X, y, rng = _design(20 + seed)
    res = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=rng)
    u = y + np.asarray(res.extra["randomization"])
    event = (tuple(res.index), tuple(res.sign))
    for i in range(len(res.variables)):
        eta = np.asarray(res.contrasts[i])
        c = eta / float(eta @ eta)
        now = float(eta @ (u - u.mean()))
        for end, inward in ((res.vlo[i], 1.0), (res.vup[i], -1.0)):
            if not math.isfinite(end):
                continue
            width = 1e-4 * max(1.0, abs(end))
            assert _lasso_support(X, u + c * (end + inward * width - now), 12.0) == event
            assert _lasso_support(X, u + c * (end - inward * width - now), 12.0) != event


def test_stepwise_limits_bound_the_selection():
    X, y, rng = _design(31, n=40, p=8, effect=0.5, sigma=1.0)
    res = randomized_stepwise_inference(X, y, steps=2, sigma=1.0, rng=rng)
    u = y + np.asarray(res.extra["randomization"])

    def path_of(v):
        pth = forward_stepwise(X, v, maxsteps=2)
        return tuple(pth.action), tuple(pth.sign)

    event = path_of(u)
    for i in range(2):
        eta = np.asarray(res.contrasts[i])
        c = eta / float(eta @ eta)
        now = float(eta @ (u - u.mean()))
        for end, inward in ((res.vlo[i], 1.0), (res.vup[i], -1.0)):
            if math.isfinite(end):
                width = 1e-4 * max(1.0, abs(end))
                assert path_of(u + c * (end + inward * width - now)) == event
                assert path_of(u + c * (end - inward * width - now)) != event


def test_lassoinf_agrees():
    pytest.importorskip("lassoinf", reason="the optional cross-check package lassoinf (0.2.1) is not installed")
    from lassoinf.lasso import LassoInference

    compared = 0
    for seed in range(6):
        X, y, rng = _design(40 + seed)
        sigma, tau = 1.3, [0.5, 1.0, 2.0][seed % 3] * 1.3
        omega = rng.normal(scale=tau, size=y.size)
        ours = randomized_lasso_inference(X, y, 12.0, sigma=sigma, noise_sd=tau, randomization=omega,
                                          intercept=False, alpha=0.05)
        b = np.asarray(ours.extra["noisy_beta"])
        Q, zn = X.T @ X, X.T @ (y + omega)
        theirs = LassoInference(beta_hat=b.copy(), G_hat=Q @ b - zn, Q_hat=Q, D=np.full(X.shape[1], 12.0), L=None,
                                U=None, Z_full=X.T @ y, Sigma=sigma ** 2 * Q, Sigma_noise=tau ** 2 * Q).summary_
        assert list(theirs.index) == list(ours.index)
        np.testing.assert_allclose(ours.pvalue, theirs["p_value"].to_numpy(float), rtol=1e-6)
        compared += len(ours.index)
    assert compared >= 10


def test_intercept_is_centring():
    X, y, rng = _design(5)
    omega = draw_randomization(y.size, 1.3, rng)
    a = randomized_lasso_inference(X, y + 7.0, 12.0, sigma=1.3, noise_sd=1.3, randomization=omega)
    b = randomized_lasso_inference(X - X.mean(0), y - y.mean(), 12.0, sigma=1.3, noise_sd=1.3,
                                   randomization=omega - omega.mean(),
                                   intercept=False)
    assert a.index.tolist() == b.index.tolist()
    np.testing.assert_allclose(a.pvalue, b.pvalue, rtol=1e-9)
    np.testing.assert_allclose(a.ci, b.ci, rtol=1e-7)


def test_large_noise_gives_the_naive_test_and_small_noise_the_polyhedral_one():
    X, y, rng = _design(6)
    omega = rng.normal(size=y.size)
    big = randomized_lasso_inference(X, y, 12.0 * 1e4, sigma=1.3, noise_sd=1e4 * 1.3,
                                     randomization=1e4 * 1.3 * omega)
    assert len(big.variables) >= 1
    # the selection sees almost only noise: the conditional law is the unconditional normal one
    np.testing.assert_allclose(big.pvalue, big.pvalue_naive, rtol=1e-3)
    # with little noise the truncation sharpens to the polyhedral one at the same limits (measured
    # errors 0.06, 0.007, 0.001 at noise 0.08, 0.04, 0.02 sigma)
    errs = []
    for f in (0.04, 0.02):
        small = randomized_lasso_inference(X, y, 12.0, sigma=1.3, noise_sd=f * 1.3, randomization=f * 1.3 * omega)
        sharp = truncated_normal_pvalue(small.estimate, sd=small.sd, vlo=small.vlo, vup=small.vup,
                                        alternative="two-sided")
        errs.append(float(np.max(np.abs(small.pvalue - sharp))))
    assert errs[1] < 0.005 and errs[1] < errs[0]


def test_reproducible_and_records_the_noise():
    X, y, _ = _design(7)
    a = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=11)
    b = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=11)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    np.testing.assert_array_equal(a.extra["randomization"], draw_randomization(y.size, 1.3, 11))
    c = randomized_lasso_inference(X, y, 12.0, sigma=1.3, noise_sd=1.3, randomization=a.extra["randomization"])
    np.testing.assert_array_equal(a.pvalue, c.pvalue)
    assert a.extra["noise_ratio"] == pytest.approx(1.0)
    assert "randomized response" in a.method and a.inference.startswith("exact")


@pytest.mark.parametrize("kwargs, match", [
    (dict(sigma=None), "`sigma` must be"),
    (dict(sigma=-1.0), "`sigma` must be"),
    (dict(sigma=1.0, noise_sd=0.0), "`noise_sd` must be"),
    (dict(sigma=1.0, noise_sd=0.005), "`noise_sd` must be at least 0.01"),
    (dict(sigma=1.0, noise_sd=1.0, randomization=np.zeros(3)), "`randomization`"),
    (dict(sigma=1.0, noise_sd=1.0, randomization=np.ones(50), rng=1), "`rng` must be None"),
    (dict(sigma=1.0, randomization=np.ones(50)), "`noise_sd` must be given with `randomization`"),
    (dict(sigma=1.0, noise_sd=1.0, randomization=np.full(50, 2.0)), "does not look drawn from N"),
    (dict(sigma=1.0, noise_sd=1.0, randomization=np.full(50, 0.3)), "does not look drawn from N"),
    (dict(sigma=1.0, alternative="upper"), "`alternative`"),
    (dict(sigma=1.0, alpha=1.5), "`alpha`"),
])
def test_errors_name_the_argument(kwargs, match):
    X, y, _ = _design(8)
    with pytest.raises((ValueError, TypeError), match=match):
        randomized_lasso_inference(X, y, 12.0, **kwargs)


def test_stepwise_errors():
    X, y, _ = _design(8)
    with pytest.raises(ValueError, match="`steps`"):
        randomized_stepwise_inference(X, y, steps=0, sigma=1.0)
    with pytest.raises(ValueError, match="`steps`"):
        randomized_stepwise_inference(X, y, steps=7, sigma=1.0)


def test_empty_selection():
    X, y, _ = _design(9)
    res = randomized_lasso_inference(X, y, 1e6, sigma=1.3, rng=1)
    assert res.variables == () and res.pvalue.size == 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["lasso", "stepwise"])
def test_uniform_under_the_global_null(kind):
    """Global null, n = 30: one p-value per replication (the first selected variable). 1,000
    replications; each rate check has false-failure rate 1e-6 (binomial, two-sided at 0.05 and
    0.2, one-sided at 0.01)."""
    rng = np.random.default_rng(2024 if kind == "lasso" else 2025)
    n, p = 30, 4
    X = rng.normal(size=(n, p))
    pv = []
    for _ in range(1000):
        y = rng.normal(size=n) * 2.0 + 3.0
        if kind == "lasso":
            res = randomized_lasso_inference(X, y, 12.0, sigma=2.0, noise_sd=1.0, rng=rng)
        else:
            res = randomized_stepwise_inference(X, y, steps=1, sigma=2.0, noise_sd=3.0, rng=rng)
        if res.pvalue.size:
            pv.append(res.pvalue[0])
    pv = np.asarray(pv)
    assert pv.size > 400
    assert_rate_near(int(np.sum(pv < 0.05)), pv.size, 0.05)
    assert_rate_near(int(np.sum(pv < 0.2)), pv.size, 0.2)
    assert_rate_at_most(int(np.sum(pv < 0.01)), pv.size, 0.01)


# ---------------------------------------------------------------- the interval event's probability


_ends = st.floats(-30, 30, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(noise=st.sampled_from(["gaussian", "laplace", "gumbel"]), scale=st.floats(0.05, 20),
       a=_ends, width=st.floats(1e-3, 60), s=st.floats(-40, 40), lower_inf=st.booleans(), upper_inf=st.booleans())
def test_interval_event_probability_matches_60_digits(noise, scale, a, width, s, lower_inf, upper_inf):
    """log P(lower <= s + W <= upper) to 1e-9 relative in the probability (1e-9 absolute in its log)
    wherever the probability is above 1e-250, against 60-digit arithmetic; -inf only where it underflows."""
    lo = -math.inf if lower_inf else a
    hi = math.inf if upper_inf else a + width
    ev = IntervalEvent(lo, hi, noise, scale)
    got = float(ev.log_prob(np.array([[s]]))[0])
    with mp.workdps(60):  # from the side of the median where the difference does not cancel
        if lo - s > 0:
            want = mp_sf(noise, scale, lo - s) - mp_sf(noise, scale, hi - s)
        else:
            want = mp_cdf(noise, scale, hi - s) - mp_cdf(noise, scale, lo - s)
    if want > mp.mpf("1e-250"):
        assert got == pytest.approx(float(mp.log(want)), abs=1e-9, rel=1e-9)
    else:
        assert got < -500 or got == -math.inf
    assert got <= 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(lower=1.0, upper=1.0), "`lower` must be below `upper`"),
    (dict(lower=float("nan"), upper=1.0), "`lower` must not be NaN"),
    (dict(lower=0.0, upper=1.0, scale=0.0), "`scale` must be a positive finite number"),
    (dict(lower=0.0, upper=1.0, noise="cauchy"), "`noise` must be one of"),
    (dict(lower=0.0, upper=1.0, position=-1), "`position` must hold distinct non-negative positions"),
])
def test_interval_event_errors(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        IntervalEvent(**kwargs)


def test_targets_argument():
    X, y, _ = _design(3)
    full = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=4)
    assert len(full.variables) >= 2
    one = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=4, targets=[1])
    assert one.variables == full.variables[1:2] and one.pvalue[0] == full.pvalue[1]
    np.testing.assert_array_equal(one.extra["selected"], full.index)
    none = randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=4, targets=[])
    assert none.pvalue.size == 0 and none.extra["selected"].size == full.index.size
    for bad, err in (([5], ValueError), ([0, 0], ValueError), (["a"], TypeError)):
        with pytest.raises(err, match="`targets`"):
            randomized_lasso_inference(X, y, 12.0, sigma=1.3, rng=4, targets=bad)


def test_an_estimate_too_far_out_for_the_noise_is_named_as_such():
    """An estimate thousands of sd from 0 with noise 0.02 sigma: the grid would be too fine; the error
    says the estimate is too far out (it used to blame the noise scale alone)."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(15, 4))
    y = 500.0 * X[:, 0] + rng.normal(size=15)
    with pytest.raises(ValueError, match=r"lies .* sd from 0 .* too far out"):
        randomized_lasso_inference(X, y, 4.0, sigma=1.0, noise_sd=0.02, rng=1)
    ok = randomized_lasso_inference(X, y, 4.0, sigma=1.0, noise_sd=1.0, rng=1)   # p-value 0, no error
    assert ok.pvalue[list(ok.index).index(0)] < 1e-300


def test_a_supplied_randomization_is_refused_only_when_its_spread_is_implausible():
    """A correct N(0, 1) draw passes the spread check (false-refusal rate 1e-9 per call, 200 calls);
    one drawn with sd 2 is refused at n = 50."""
    X, y, _ = _design(13)
    g = np.random.default_rng(14)
    for _ in range(200):
        randomized_lasso_inference(X, y, 1e6, sigma=1.3, noise_sd=1.0, randomization=g.normal(size=y.size))
    with pytest.raises(ValueError, match="does not look drawn from N"):
        randomized_lasso_inference(X, y, 12.0, sigma=1.3, noise_sd=1.0, randomization=2.0 * g.normal(size=y.size))


@pytest.mark.parametrize("bad", [1e-200, 3.557495372281764e-263, 1e200])
def test_every_exact_route_refuses_a_sigma_whose_square_is_not_a_positive_finite_double(bad):
    """The lasso, stepwise, many-means and carving routes name `sigma` (scipy's root finder used to
    report "The function value at x=... is NaN")."""
    from selective.conditional import fixed_lasso_inference, forward_stepwise, fs_inference, many_means

    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 4))
    y = x[:, 0] + rng.normal(size=40)
    calls = [lambda: fixed_lasso_inference(x, y, 5.0, sigma=bad),
             lambda: fs_inference(forward_stepwise(x, y, maxsteps=2), sigma=bad),
             lambda: many_means(y, alpha=0.1, sigma=bad),
             lambda: randomized_lasso_inference(x, y, 5.0, sigma=bad, rng=1)]
    for call in calls:
        with pytest.raises(ValueError, match=r"`sigma` must lie between 1e-150 and 1e\+150"):
            call()
