"""The vectorised bisection of the optimal-beta corrections: the in-place loop, which skips the
convergence test while it cannot hold yet, gives bit for bit the result of the plain loop
(every iteration tested), and its result lies on the requested side of the root. The
safeguarded Newton solver that replaces it for many roots ends on the same side, within a few
ulps of it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from selective.accounting._optim import _N_ITER, _bisect_increasing, _newton_increasing


def _plain_bisection(f, lo, hi, side):
    """The definition: halve every bracket until all are narrower than 4e-16 max(1, |hi|)."""
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    for _ in range(_N_ITER):
        mid = 0.5 * (lo + hi)
        pos = f(mid) > 0
        hi, lo = np.where(pos, mid, hi), np.where(pos, lo, mid)
        if np.all(hi - lo <= 4e-16 * np.maximum(1.0, np.abs(hi))):
            break
    return {"lo": lo, "hi": hi, "mid": 0.5 * (lo + hi)}[side]


@settings(max_examples=80, deadline=None)
@given(roots=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
       widths=st.lists(st.floats(1e-6, 1e8), min_size=1, max_size=40),  # brackets wider than an ulp
       side=st.sampled_from(["lo", "hi", "mid"]))
def test_same_result_as_the_plain_loop_and_on_the_valid_side(roots, widths, side):
    k = min(len(roots), len(widths))
    r, w = np.array(roots[:k]), np.array(widths[:k])
    lo, hi = r - w * 0.3, r + w * 0.7

    def f(x):
        return np.sinh((x - r) / w)   # increasing, root r

    got = _bisect_increasing(f, lo, hi, side=side)
    assert np.array_equal(got, _plain_bisection(f, lo, hi, side))
    if side == "lo":
        assert np.all(f(got) <= 0)
    if side == "hi":
        assert np.all(f(got) > 0)
    assert np.all(np.abs(got - r) <= 1e-15 * np.maximum(1.0, np.abs(r)) * 8 + 4e-16 * w)


def test_empty_and_degenerate_brackets():
    assert _bisect_increasing(lambda x: x, np.array([]), np.array([])).size == 0
    out = _bisect_increasing(lambda x: x - 1.0, np.array([1.0, 0.0]), np.array([1.0, 2.0]), side="lo")
    assert out[0] == 1.0 and abs(out[1] - 1.0) <= 4e-16


@settings(max_examples=80, deadline=None)
@given(roots=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
       widths=st.lists(st.floats(1e-6, 1e8), min_size=1, max_size=40),
       starts=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
       kind=st.sampled_from(["sinh", "cubic", "step"]),
       side=st.sampled_from(["lo", "hi", "mid"]))
def test_newton_finds_the_bisection_root_on_the_same_side(roots, widths, starts, kind, side):
    """Safeguarded Newton ends within a few ulps of the bisection's root and on the requested
    side, for increasing functions that are convex, flat at the root (a cubic: Newton converges
    only linearly), or discontinuous (a step: the derivative is useless and bisection decides)."""
    k = min(len(roots), len(widths), len(starts))
    r, w, s0 = np.array(roots[:k]), np.array(widths[:k]), np.array(starts[:k])
    lo, hi = r - w * 0.3, r + w * 0.7
    x0 = lo + s0 * (hi - lo)
    if kind == "sinh":
        def f(x, idx=slice(None)):
            return np.sinh((x - r[idx]) / w[idx])

        def fd(x, idx):
            return f(x, idx), np.cosh((x - r[idx]) / w[idx]) / w[idx]
    elif kind == "cubic":
        def f(x, idx=slice(None)):
            return ((x - r[idx]) / w[idx]) ** 3

        def fd(x, idx):
            return f(x, idx), 3 * ((x - r[idx]) / w[idx]) ** 2 / w[idx]
    else:
        def f(x, idx=slice(None)):
            return np.where(x > r[idx], 1.0, -1.0)

        def fd(x, idx):
            return f(x, idx), np.ones_like(x)

    got = _newton_increasing(f, fd, lo, hi, x0, side=side)
    ref = _bisect_increasing(f, lo, hi, side=side)
    if side == "lo":
        assert np.all(f(got) <= 0)
    if side == "hi":
        assert np.all(f(got) > 0)
    tol = 16e-16 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
    if kind == "cubic":   # flat root: f is 0 in double precision over a band around r
        tol = np.maximum(tol, 1e-5 * w)
    assert np.all(np.abs(got - ref) <= tol)
