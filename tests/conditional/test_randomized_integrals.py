"""The selection probabilities of one-shot Laplace / Gaussian noisy top-k and of Sparse Vector
(selective.conditional._randomized_events) where the integrand is hard: many candidates, a noise
scale large or small against the scores' spread, a selected score far below the others, query
noise far below the threshold noise.

References: the exact value 1 / C(m, k) when every score is tied, and 20-digit quadrature
(mpmath) of a decomposition other than the package's for top-k (over the largest unselected
noisy score) on intervals one noise scale wide. Deterministic.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from selective.conditional.randomized import NoisyTopKEvent, SparseVectorEvent
from tests.conditional.mp_noise import mp_cdf, mp_sf, svt_segments


def _mp_pdf(noise, b, x):
    x = mp.mpf(x) / b
    return mp.npdf(x) / b if noise == "gaussian" else mp.e ** (-abs(x)) / (2 * b)


def _fine(edges, step, near=(), scale=1.0):
    """``edges`` with points at most ``step`` apart added between them, and at 1, 2, 4, ..., 256
    ``scale`` from every point of ``near`` (mpmath's quadrature is then accurate on every piece,
    however narrow the integrand's mass or a bend next to a kink)."""
    graded = {p + sign * scale * 2.0 ** i for p in near for i in range(9) for sign in (-1, 1)}
    edges = sorted({*edges, *(p for p in graded if edges[0] < p < edges[-1])})
    out = []
    for a, c in zip(edges[:-1], edges[1:], strict=True):
        n = max(2, int(math.ceil((c - a) / step)) + 1)
        out += [a + (c - a) * i / (n - 1) for i in range(n - 1)]
    return out + [edges[-1]]


def _mp_log_integral(f, points):
    """log of the integral of ``f`` over [points[0], points[-1]] by mpmath's quadrature between
    consecutive ``points``, skipping the stretches where ``f`` stays below e^-60 of its largest
    value on ``points`` at both ends and at both neighbours (the integrands here are unimodal)."""
    vals = [f(p) for p in points]
    cut = max(vals) * mp.e ** -60
    keep = [i for i in range(len(points) - 1) if max(vals[max(i - 1, 0):i + 3]) >= cut]
    return mp.log(mp.fsum(mp.quad(f, [points[i], points[i + 1]]) for i in keep))


def _mp_log_pi_top_set(s, selected, noise, b):
    """log P(the candidates ``selected`` have the k largest noisy scores | s), by integrating over
    the largest unselected noisy score M: pi = int dF_M(x) prod_{i in S} P(s_i + W_i > x)."""
    rest = [j for j in range(len(s)) if j not in selected]

    def f(x):
        dens = sum(_mp_pdf(noise, b, x - s[j]) * mp.fprod(mp_cdf(noise, b, x - s[q]) for q in rest if q != j)
                   for j in rest)
        return dens * mp.fprod(mp_sf(noise, b, x - s[i]) for i in selected)
    pts = sorted({float(v) for v in s})
    return _mp_log_integral(f, _fine([pts[0] - 70 * b, *pts, pts[-1] + 70 * b], b / 2))


def _mp_log_pi_svt(s, ev):
    """log P(the Sparse Vector answers | s): per segment, an integral over the threshold noise."""
    total = mp.mpf(0)
    b1, b2 = ev.threshold_scale, ev.query_scale
    for queries, ends in svt_segments(ev):
        below = queries[:-1] if ends else queries

        def f(r, queries=queries, ends=ends, below=below):
            v = _mp_pdf("laplace", b1, r) * mp.fprod(mp_cdf("laplace", b2, ev.threshold + r - s[q]) for q in below)
            return v * mp_sf("laplace", b2, ev.threshold + r - s[queries[-1]]) if ends else v
        pts = sorted({0.0, *[float(s[q] - ev.threshold) for q in queries]})
        reach = 70 * max(b1, b2)
        total += _mp_log_integral(f, _fine([pts[0] - reach, *pts, pts[-1] + reach], max(b1, b2) / 2,
                                           [0.0, *pts], min(b1, b2)))
    return total


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize(("m", "k"), [(2, 1), (60, 1), (50, 5), (200, 3)])
@pytest.mark.parametrize("scale", [0.1, 3.0])
def test_tied_candidates_give_one_over_the_number_of_sets(noise, m, k, scale):
    assert NoisyTopKEvent((0,), noise, scale).log_prob(np.zeros((0, m))).shape == (0,)   # no rows: none
    # every score equal: by symmetry each k-set is the top one with probability 1 / C(m, k). The
    # integrand is then narrow against the noise scale (its width shrinks with m): with fixed
    # panels four scales wide the Gaussian m = 50, k = 5 value was 17% low.
    got = NoisyTopKEvent(tuple(range(k)), noise, scale).log_prob(np.zeros((1, m)))[0]
    assert got == pytest.approx(-math.log(math.comb(m, k)), abs=1e-9)


_RNG = np.random.default_rng(20261128)
TOPK = [
    # (name, scores, selected, noise, scale)
    ("gaussian_far_below", [-60.0, 0.0, 0.3], (0,), "gaussian", 1.0),
    ("laplace_far_below", [-60.0, 0.0, 0.3], (0,), "laplace", 1.0),
    ("gaussian_two_far_below", [-45.0, 2.0, -44.0, 1.0, 0.0], (0, 2), "gaussian", 1.0),
    ("gaussian_wide_spread_tail", list(_RNG.normal(size=6) * 5), (1, 4, 5), "gaussian", 1.0),
    ("laplace_small_scale", list(_RNG.normal(size=6)), (3, 1), "laplace", 0.05),
    ("gaussian_large_scale", list(_RNG.normal(size=6)), (0, 5, 2), "gaussian", 5.0),
    ("laplace_large_scale", list(_RNG.normal(size=6)), (2, 4), "laplace", 5.0),
    ("laplace_selected_far_apart", [27.5, -36.3, 38.9, 21.9, -21.2, 0.6], (0, 1), "laplace", 0.2),
]


@pytest.mark.parametrize("case", TOPK, ids=[c[0] for c in TOPK])
def test_top_k_selection_probability_agrees_with_20_digit_quadrature(case):
    _, s, selected, noise, b = case
    mp.mp.dps = 20
    ref = float(_mp_log_pi_top_set(s, list(selected), noise, b))
    got = NoisyTopKEvent(selected, noise, b).log_prob(np.array([s]))[0]
    assert got == pytest.approx(ref, abs=1e-8), ref     # 1e-8 relative in pi, down to pi = e^-1214


SVT = [
    ("query_noise_a_twentieth", 1.0 / 20),
    ("query_noise_a_hundredth", 1.0 / 100),
    ("query_noise_twenty_times", 20.0),
    ("query_noise_a_million_times", 1e6),   # the threshold noise is a spike: it was off by 2 in log pi
]


@pytest.mark.parametrize(("name", "query_scale"), SVT, ids=[c[0] for c in SVT])
def test_sparse_vector_probability_agrees_with_20_digit_quadrature(name, query_scale):
    # the query noise bends the integrand within a few of its scales of every kink: with panels
    # on the threshold noise's scale the 1/20 case was off by about 1e-2
    s = np.array([0.4, 2.3, -0.7, 1.6, 0.9, 2.8])
    ev = SparseVectorEvent(tuple(range(6)), (False, True, False, False, True, False), 1.5, 1.0, query_scale)
    mp.mp.dps = 20
    ref = float(_mp_log_pi_svt(s, ev))
    assert ev.log_prob(s[None, :])[0] == pytest.approx(ref, abs=1e-8), ref


def test_non_finite_scores_are_refused():
    # a score of -inf can never win and +inf always does: the caller decides, not the quadrature
    for ev in (NoisyTopKEvent((0,), "laplace", 1.0), SparseVectorEvent((0, 1), (False, True), 0.0, 1.0, 2.0)):
        for bad in (-np.inf, np.inf, np.nan):
            with pytest.raises(ValueError, match=r"the scores must be a finite 2-d array .* 1 non-finite value"):
                ev.log_prob(np.array([[0.5, bad, 1.0]]))


def _mp_log_gumbel_set(log_r):
    """log of int exp(v - e^v) prod_j (1 - exp(-e^(v + log r_j))) dv by 30-digit quadrature on
    pieces a quarter unit wide over 40 units left and 10 right of the integrand's mode
    (log-concave: it falls by e^-40 or more beyond, far faster on the right; at 20 digits on
    half-unit pieces the reference itself was off by 6e-9)."""
    def f(v):
        lr = [mp.mpf(float(x)) for x in log_r]
        return mp.e ** (v - mp.e ** v) * mp.fprod(1 - mp.e ** (-mp.e ** (v + x)) for x in lr)

    grid = np.linspace(-60.0, 20.0, 8001)
    x = grid[:, None] + np.asarray(log_r)[None, :]
    with np.errstate(divide="ignore"):
        logf = grid - np.exp(grid) + np.sum(np.log(-np.expm1(-np.exp(x))), axis=1)
    mode = float(grid[int(np.argmax(logf))])
    with mp.workdps(30):
        return mp.log(mp.quad(f, [mp.mpf(mode) + d for d in np.arange(-40.0, 10.01, 0.25)]))


GUMBEL_SETS = [
    # (name, log r_j): selected candidates' e^{s_j/b} over the others' sum, on the log scale
    ("k3_very_different_r", [9.0, -7.5, 0.4]),
    ("k8_mixed", list(np.random.default_rng(2).normal(0.0, 5.0, 8))),
    ("k13_likely", list(np.random.default_rng(3).normal(4.0, 2.0, 13))),
    ("k16_unlikely", list(np.random.default_rng(4).normal(-4.0, 2.0, 16))),
    ("k30_likely", list(np.random.default_rng(5).normal(4.0, 2.0, 30))),
    ("k30_mixed", list(np.random.default_rng(6).normal(0.0, 5.0, 30))),
]


@pytest.mark.parametrize(("name", "log_r"), GUMBEL_SETS, ids=[c[0] for c in GUMBEL_SETS])
def test_gumbel_set_probability_agrees_with_30_digit_quadrature(name, log_r):
    """Gumbel top-k (the exponential mechanism): inclusion-exclusion where it is accurate, the
    log-concave adaptive quadrature elsewhere; a fixed Gauss-Laguerre rule erred by 3e-3 (k > 12)
    and 6e-5 (k = 3 with very different r_j) here."""
    from selective.conditional._randomized_events import _gumbel_set_log_prob

    got = float(_gumbel_set_log_prob(np.asarray(log_r, dtype=float)[None, :])[0])
    assert got == pytest.approx(float(_mp_log_gumbel_set(log_r)), abs=1e-9)
