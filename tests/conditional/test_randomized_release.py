"""Randomized selective inference after a release of noisy scores (``ReleaseEvent``): the
p-values against an independent quadrature of the conditional density, and their null law when
the target is chosen from the release."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from selective.conditional import ReleaseEvent, randomized_inference


def _reference_tails(z, cov, r, noise, b, k, mu, absolute=False):
    """(P(X >= x_obs), P(X <= x_obs)) for X the k-th score given U and the release, by adaptive
    quadrature of phi((x - mu)/sd) prod_j f_W(r_j - s_j(x)), s = u + c x (or |u + c x| when the
    release is of absolute scores), split at every kink."""
    sig = math.sqrt(cov[k, k])
    c = cov[:, k] / cov[k, k]
    u = z - c * z[k]

    def logf(x):
        s = u + c * x
        w = (r - (np.abs(s) if absolute else s)) / b
        lw = -np.abs(w).sum() if noise == "laplace" else -0.5 * float(w @ w)
        return lw - 0.5 * ((x - mu) / sig) ** 2

    lo, hi = min(z[k], mu) - 40 * sig, max(z[k], mu) + 40 * sig
    top = max(logf(x) for x in np.linspace(lo, hi, 40001))
    nz = c != 0
    kinks = ((r - u)[nz] / c[nz]).tolist() if noise == "laplace" else []
    if absolute:
        kinks += (-u[nz] / c[nz]).tolist() + (((-r - u)[nz] / c[nz]).tolist() if noise == "laplace" else [])
    kinks = sorted(kinks)

    def integral(a, e):
        cuts = [a] + [p for p in kinks if a < p < e] + [e]
        return math.fsum(integrate.quad(lambda x: math.exp(logf(x) - top), cuts[i], cuts[i + 1], epsabs=0,
                                        epsrel=1e-13, limit=500)[0] for i in range(len(cuts) - 1))

    up, low = integral(z[k], hi), integral(lo, z[k])
    return up / (up + low), low / (up + low)


CASES = [(m, noise, ratio, push) for m, noise, ratio, push in [
    (1, "laplace", 0.1, 0.0), (3, "gaussian", 0.4, 2.0), (5, "laplace", 2.0, 4.0), (1, "gaussian", 0.1, -3.0),
    (3, "laplace", 0.5, 0.0), (5, "gaussian", 3.0, 2.0), (1, "laplace", 0.1, 6.0), (3, "gaussian", 0.4, -3.0),
    (5, "laplace", 2.0, 0.0), (1, "gaussian", 0.25, 20.0), (3, "laplace", 0.7, 4.0), (4, "laplace", 0.05, -5.0),
]]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_tails_match_an_independent_quadrature(case):
    m, noise, ratio, push = CASES[case]
    rng = np.random.default_rng(100 + case)
    a = rng.standard_normal((m, m))
    cov = a @ a.T / m + 0.5 * np.eye(m)
    z = rng.multivariate_normal(np.zeros(m), cov)
    b = ratio * math.sqrt(cov[0, 0])
    r = z + (rng.laplace(0, b, m) if noise == "laplace" else rng.normal(0, b, m))
    z[0] += push * math.sqrt(cov[0, 0])     # the target's score far in a tail in some cases
    up_ref, low_ref = _reference_tails(z, cov, r, noise, b, 0, 0.0)
    event = ReleaseEvent(r, noise, b)
    up = randomized_inference(z, cov, event, targets=[0], alternative="greater").pvalue[0]
    low = randomized_inference(z, cov, event, targets=[0], alternative="less").pvalue[0]
    # the cells' quadratics are exact between kinks: only rounding and the quadrature's 1e-13
    for got, ref in ((up, up_ref), (low, low_ref)):
        if ref > 1e-300 and ref < 0.5:
            assert got == pytest.approx(ref, rel=1e-9)
        else:
            assert got == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("r0, b, z0", [(1.0, 1.0, -1.0), (2.0, 0.05, -2.004), (3.0, 0.02, -3.0001),
                                        (0.5, 0.3, -0.49), (1.5, 0.4, 1.6)])
def test_release_of_absolute_scores_has_its_kinks_at_both_signs(r0, b, z0):
    # |s| released with Laplace noise: log pi has kinks where s = r, s = 0 and s = -r; an
    # observed score next to -r is where a missing node shows (it did: 5e-6 relative)
    cov = np.array([[1.0, 0.4], [0.4, 1.0]])
    z, r = np.array([z0, 0.3]), np.array([r0, 0.8])
    up_ref, low_ref = _reference_tails(z, cov, r, "laplace", b, 0, 0.0, absolute=True)
    event = ReleaseEvent(r, "laplace", b)
    up = randomized_inference(z, cov, event, targets=[0], alternative="greater", absolute=True).pvalue[0]
    low = randomized_inference(z, cov, event, targets=[0], alternative="less", absolute=True).pvalue[0]
    assert up == pytest.approx(up_ref, rel=1e-9)
    assert low == pytest.approx(low_ref, rel=1e-9)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_null_p_values_are_uniform_when_the_target_is_chosen_from_the_release(noise):
    # 1,500 null replications: 6 equicorrelated scores, noise at 0.7 sd, the target the score
    # with the largest |released value|. Its naive p-value is far too small; the conditional
    # one must be uniform: a KS test at 1e-6 (a correct implementation fails with probability
    # 1e-6), and the rate at 0.05 within its exact binomial 1e-6 band.
    rng = np.random.default_rng(20261127 + (noise == "gaussian"))
    m, rho, b = 6, 0.5, 0.7
    cov = rho * np.ones((m, m)) + (1 - rho) * np.eye(m)
    chol = np.linalg.cholesky(cov)
    pv, naive = [], []
    for _ in range(1500):
        z = chol @ rng.standard_normal(m)
        r = z + (rng.laplace(0, b, m) if noise == "laplace" else rng.normal(0, b, m))
        k = int(np.argmax(np.abs(r)))
        res = randomized_inference(z, cov, ReleaseEvent(r, noise, b), targets=[k])
        pv.append(res.pvalue[0])
        naive.append(res.pvalue_naive[0])
    pv = np.array(pv)
    naive_hits = int(np.sum(np.array(naive) <= 0.05))   # the choice matters: naive rejects too often
    assert stats.binomtest(naive_hits, len(naive), 0.05, alternative="greater").pvalue < 1e-6
    assert stats.kstest(pv, "uniform").pvalue > 1e-6
    hits = int(np.sum(pv <= 0.05))
    assert stats.binomtest(hits, pv.size, 0.05).pvalue > 1e-6


def test_interval_covers_and_release_errors():
    rng = np.random.default_rng(7)
    cov = np.array([[1.0, 0.3], [0.3, 1.0]])
    theta = np.array([1.5, -0.5])
    cover = 0
    for _ in range(300):
        z = theta + np.linalg.cholesky(cov) @ rng.standard_normal(2)
        r = z + rng.laplace(0, 0.5, 2)
        lo, hi = randomized_inference(z, cov, ReleaseEvent(r, "laplace", 0.5), targets=[0], alpha=0.1).ci[0]
        cover += lo <= theta[0] <= hi
    # 90% intervals, 300 draws: the exact binomial band at 1e-6 is about [0.81, 0.96]
    assert stats.binomtest(cover, 300, 0.9).pvalue > 1e-6
    with pytest.raises(ValueError, match="No target"):
        randomized_inference([0.1, 0.2], np.eye(2), ReleaseEvent([0.3, 0.1]))
    with pytest.raises(ValueError, match=r"`values` must hold one released value per score \(2\); got 3"):
        randomized_inference([0.1, 0.2], np.eye(2), ReleaseEvent([0.3, 0.1, 0.0]), targets=[0])
    with pytest.raises(ValueError, match="`noise` must be 'laplace' or 'gaussian' for a release"):
        ReleaseEvent([0.3], "gumbel")
    with pytest.raises(ValueError, match="`values` must be a non-empty sequence of finite numbers"):
        ReleaseEvent([math.nan])
    with pytest.raises(ValueError, match="`scale` must be a positive finite number"):
        ReleaseEvent([0.3], "laplace", 0.0)
