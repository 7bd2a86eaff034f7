"""Truncation regions and tail probabilities of grouped forward stepwise inference
(Loftus and Taylor 2015): the sets where quadratic or trigonometric constraints hold, and
chi / F tail logarithms that do not underflow."""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__: list[str] = []


def _trig_region(C, lo, hi):
    r"""{x in [lo, hi] : g_i(x) >= 0 for every row i}, g_i(x) = C_i0 + C_i1 sin x + C_i2 cos x
    + C_i3 sin^2 x + C_i4 cos^2 x + C_i5 sin x cos x.

    Each :math:`g_i` is a trigonometric polynomial of degree 2: with
    :math:`z = e^{ix}`, :math:`z^2 g_i(x)` is a polynomial of degree 4 in z, whose roots on the
    unit circle give the zeros of :math:`g_i` (companion-matrix eigenvalues, all rows at once).
    The candidate zeros in [lo, hi] are polished by Newton's method on :math:`g_i` itself, and
    the region is read off between consecutive candidates (every constraint keeps its sign
    there), so no zero is missed however close two of them are.
    """
    m = C.shape[0]
    if m == 0:
        return [(lo, hi)]
    a0 = C[:, 0] + 0.5 * (C[:, 3] + C[:, 4])
    b, c = C[:, 1], C[:, 2]
    e2, f2 = 0.5 * (C[:, 4] - C[:, 3]), 0.5 * C[:, 5]   # coefficients of cos 2x and sin 2x
    # z^2 g = (e2 - i f2)/2 z^4 + (c - i b)/2 z^3 + a0 z^2 + (c + i b)/2 z + (e2 + i f2)/2
    poly = np.stack([0.5 * (e2 - 1j * f2), 0.5 * (c - 1j * b), a0 + 0j, 0.5 * (c + 1j * b),
                     0.5 * (e2 + 1j * f2)], axis=1)
    scale = np.max(np.abs(poly), axis=1)
    cands = [np.array([lo, hi])]
    for deg in (4, 3, 2, 1):
        lead = 4 - deg
        sel = ((np.abs(poly[:, lead]) > 1e-13 * scale)
               & np.all(np.abs(poly[:, :lead]) <= 1e-13 * scale[:, None], axis=1))
        if not sel.any():
            continue
        P = poly[sel, lead:] / poly[sel, lead][:, None]
        comp = np.zeros((P.shape[0], deg, deg), dtype=complex)
        comp[:, 0, :] = -P[:, 1:]
        if deg > 1:
            comp[:, np.arange(1, deg), np.arange(deg - 1)] = 1.0
        z = np.linalg.eigvals(comp).ravel()
        rows = np.repeat(np.nonzero(sel)[0], deg)
        near = np.abs(np.abs(z) - 1.0) < 1e-6
        x = np.angle(z[near])
        rows = rows[near]
        keep = (x >= lo - 1e-6) & (x <= hi + 1e-6)
        x, rows = x[keep], rows[keep]
        for _ in range(8):  # Newton polish on the real function
            sn, cs = np.sin(x), np.cos(x)
            Cr = C[rows]
            g = Cr[:, 0] + Cr[:, 1] * sn + Cr[:, 2] * cs + Cr[:, 3] * sn * sn + Cr[:, 4] * cs * cs + Cr[:, 5] * sn * cs
            dg = (Cr[:, 1] * cs - Cr[:, 2] * sn + 2 * (Cr[:, 3] - Cr[:, 4]) * sn * cs
                  + Cr[:, 5] * (cs * cs - sn * sn))
            step = np.where(dg != 0, g / np.where(dg != 0, dg, 1.0), 0.0)
            x = x - np.clip(step, -1e-3, 1e-3)
        cands.append(np.clip(x, lo, hi))
    cuts = np.unique(np.concatenate(cands))
    mids = 0.5 * (cuts[:-1] + cuts[1:])
    sn, cs = np.sin(mids)[None, :], np.cos(mids)[None, :]
    vals = (C[:, [0]] + C[:, [1]] * sn + C[:, [2]] * cs + C[:, [3]] * sn * sn + C[:, [4]] * cs * cs
            + C[:, [5]] * sn * cs)
    ok = np.all(vals >= 0, axis=0)
    out: list = []
    for j in np.nonzero(ok)[0]:
        a, bb = float(cuts[j]), float(cuts[j + 1])
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], bb)
        else:
            out.append((a, bb))
    return out


def _quadratic_region(coefs) -> list:
    """{t >= 0 : a t^2 + b t + c >= 0 for every row (a, b, c) of ``coefs``}, from exact roots.

    The real roots split [0, inf) into pieces on which no constraint changes sign; a piece is
    kept when every constraint holds at an inner point. The region may be bounded above.
    Roots by the stable quadratic formula (all rows at once).
    """
    qa, qb, qc = coefs[:, 0], coefs[:, 1], coefs[:, 2]
    scale = np.max(np.abs(coefs), axis=1) if coefs.size else np.zeros(0)
    linear = (scale > 0) & (np.abs(qa) <= 1e-15 * scale)
    quad = (scale > 0) & ~linear
    cuts = [np.zeros(1)]
    lin = linear & (qb != 0)
    cuts.append(-qc[lin] / qb[lin])
    with np.errstate(invalid="ignore", divide="ignore"):
        disc = qb * qb - 4 * qa * qc
        real = quad & (disc >= 0)
        q = -0.5 * (qb[real] + np.copysign(np.sqrt(disc[real]), qb[real]))
        nz = q != 0
        cuts.append((q / qa[real])[nz])
        cuts.append((qc[real] / q)[nz])
    ends = np.unique(np.concatenate(cuts))
    ends = np.append(ends[(ends >= 0) & np.isfinite(ends)], math.inf)
    lo, hi = ends[:-1], ends[1:]
    t = np.where(np.isinf(hi), lo + np.maximum(1.0, lo), 0.5 * (lo + hi))
    ok = np.all(qa[:, None] * t * t + qb[:, None] * t + qc[:, None] >= 0, axis=0)
    out: list = []
    for j in np.nonzero(ok)[0]:
        a, b = float(lo[j]), float(hi[j])
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _chi2_logsf(x2: float, d: int) -> float:
    """log P(chi2_d >= x2); where scipy's value underflows, log Q(d/2, x2/2) from the continued
    fraction of the upper incomplete gamma function (Legendre's fraction, evaluated by the
    modified Lentz method; Press et al., Numerical Recipes, 3rd ed., Section 6.2)."""
    v = float(stats.chi2.logsf(x2, d))
    if v > -700.0 or not math.isfinite(x2):
        return v
    a, x = 0.5 * d, 0.5 * x2
    tiny = 1e-300
    b = x + 1.0 - a
    c, dd = 1.0 / tiny, 1.0 / b
    h = dd
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        dd = an * dd + b
        dd = tiny if abs(dd) < tiny else dd
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        dd = 1.0 / dd
        h *= dd * c
        if abs(dd * c - 1.0) < 1e-16:
            break
    return -x + a * math.log(x) - math.lgamma(a) + math.log(h)


def _f_logsf(x: float, d1: int, d2: float) -> float:
    """log P(F_{d1,d2} >= x) = log I_w(d2/2, d1/2), w = d2/(d2 + d1 x); where scipy's value
    underflows, from I_w(a, b) = w^a (1-w)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; w)
    (Abramowitz and Stegun 26.5.23 with 15.1.1)."""
    v = float(stats.f.logsf(x, d1, d2))
    if v > -700.0 or not math.isfinite(x):
        return v
    a, b = 0.5 * d2, 0.5 * d1
    w = d2 / (d2 + d1 * x)
    term = total = 1.0
    for n in range(100_000):
        term *= (a + b + n) / (a + 1.0 + n) * w
        total += term
        if term < 1e-17 * total:
            break
    return (a * math.log(w) + b * math.log1p(-w) - math.log(a) - float(special.betaln(a, b))
            + math.log(total))


def _truncated_pvalue(t, region, logsf) -> float:
    """P(S >= t | S in region) from log upper tails, region = [(a, b), ...]."""
    def log_mass(a, b):
        la = float(logsf(a))
        lb = float(logsf(b)) if math.isfinite(b) else -math.inf
        if lb == -math.inf:
            return la
        d = lb - la
        if d >= 0:
            return -math.inf
        return la + math.log(-math.expm1(d))

    num, den = [], []
    for a, b in region:
        m = log_mass(a, b)
        den.append(m)
        if b > t:
            num.append(log_mass(max(a, t), b))
    if not den or not num:
        return 0.0 if den else math.nan
    return float(math.exp(min(0.0, special.logsumexp(num) - special.logsumexp(den))))
