r"""Exponential mechanism, report noisy max and noisy top-k (THEORY.md 5.3).

Exact samplers (default): utilities are rounded to a power-of-two grid g <= Δ/2^20 (so the
rounded utilities have sensitivity at most Δ + g) and the selection probabilities
:math:`\propto e^{-\gamma_r}`, :math:`\gamma_r=\varepsilon'(\tilde u_{\max}-\tilde u_r)/(2(\Delta+3g))`
with :math:`\varepsilon'\le\varepsilon` a dyadic rational, are realised with exact
Bernoulli(:math:`e^{-\gamma}`) coins (Canonne, Kamath, Steinke 2020, Algorithm 1). The
certificate is therefore exactly ε. Rounding shifts all utilities relative to the maximum,
which cancels in the normalisation, so only per-candidate rounding (at most g/2) matters. The
*computed* utilities must have sensitivity at most Δ; two grid steps of slack (the 3g instead
of g above, about 2Δ/2^20) cover floating-point rounding in computing them; larger numerical
errors are not covered.

Fast path (``exact=False``): numpy Gumbel / exponential noise on doubles, for simulations
only; it carries no certificate (Mironov 2012; THEORY.md 7.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from .._validation import check_choice, check_int, check_positive, check_rng
from ..accounting.certificates import PureDP
from . import _grid
from .samplers import _bernoulli_exp_general, _py_bernoulli_exp_general, _py_uniform_below, _split_ratio

__all__ = [
    "exponential_mechanism_probabilities",
    "UtilityGap",
    "exponential_mechanism_utility_gap",
    "exponential_mechanism",
    "permute_and_flip",
    "report_noisy_max",
    "report_noisy_topk",
    "report_noisy_topk_certificate",
    "report_noisy_topk_gumbel_scale",
    "OneshotLaplaceTopK",
    "oneshot_laplace_topk_scale",
]

_EPS_BITS = 30  # epsilon is rounded down to 30 significant bits (relative change < 2^-29)
_UTILITY_GRID_BITS = 20
_SCALAR_CANDIDATES = 16


def _check_utilities(utilities: Any, name: str = "utilities") -> np.ndarray:
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 1 or u.size == 0:
        raise ValueError(f"`{name}` must be a non-empty one-dimensional array; got shape {u.shape}.")
    if not np.all(np.isfinite(u)):
        bad = float(u[~np.isfinite(u)][0])
        raise ValueError(f"`{name}` must be finite; got {bad!r}.")
    return u


def exponential_mechanism_probabilities(utilities: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    r"""Output law of the exponential mechanism: :math:`P[r]\propto\exp(\varepsilon u_r/(2\Delta_u))`.

    Dwork and Roth (2014), Theorem 3.10 (THEORY.md 5.3). Returns a float array summing to 1.
    """
    u = _check_utilities(utilities)
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    z = e * u / (2.0 * d)
    return np.exp(z - special.logsumexp(z))


@dataclass(frozen=True, slots=True)
class UtilityGap:
    """Utility guarantee of the exponential mechanism: P[u(out) <= OPT - utility_gap] <= failure_probability."""

    utility_gap: float
    failure_probability: float


def exponential_mechanism_utility_gap(*, epsilon: float, sensitivity: float, n_outcomes: int,
                                      t: float, n_optimal: int = 1) -> UtilityGap:
    r"""Utility gap :math:`\frac{2\Delta_u}{\varepsilon}(\ln\frac{|R|}{|R_{OPT}|}+t)`, failing w.p. <= :math:`e^{-t}`.

    Dwork and Roth (2014), Theorem 3.11 (THEORY.md 5.3).
    """
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    m = check_int("n_outcomes", n_outcomes, low=1)
    k = check_int("n_optimal", n_optimal, low=1, high=m)
    tt = check_positive("t", t, allow_zero=True)
    return UtilityGap(utility_gap=2.0 * d / e * (math.log(m / k) + tt), failure_probability=math.exp(-tt))


# ------------------------------------------------------------------------------------------
# exact exponents
# ------------------------------------------------------------------------------------------


def _exact_numerators(u: np.ndarray, epsilon: float, sensitivity: float) -> tuple[np.ndarray, int]:
    """gamma_r = num_r / den >= 0 with P[r] proportional to exp(-gamma_r), exactly.

    Rounded utilities M_r = rint(u_r / g) (g a power of two <= Δ/2^20: exact); the integer
    sensitivity of M is at most floor(Δ/g) + 1, taken as floor(Δ/g) + 3 (2 steps of slack for
    floating-point error in the computed utilities); coefficient c = eps'/(2(floor(Δ/g) + 1)) with
    eps' <= eps a dyadic rational, so exp(-gamma_r) is an eps'-DP exponential mechanism on M.
    Subtracting any common constant from all num_r leaves the law unchanged.
    """
    m_, e_ = math.frexp(sensitivity)
    g = math.ldexp(1.0, e_ - 1 - _UTILITY_GRID_BITS)
    with np.errstate(over="ignore"):  # beyond 2^61 grid steps the clip applies
        scaled = np.clip(u / g, -(2.0**61), 2.0**61)
    grid = np.rint(scaled).astype(np.int64)
    diff = grid.max() - grid  # in [0, 2^62]
    bits = max(0, _EPS_BITS - math.frexp(epsilon)[1])
    eps_num = math.floor(Fraction(epsilon) * 2**bits)
    if eps_num <= 0:  # pragma: no cover - bits adapt to epsilon
        raise ValueError(f"`epsilon` is too small for the exact sampler; got {epsilon!r}.")
    d_grid = math.floor(Fraction(sensitivity) / Fraction(g)) + 1 + _grid.FLOAT_SLACK_STEPS  # sensitivity of M
    c = Fraction(eps_num, 2**bits) / (2 * d_grid)
    num_c, den = c.numerator, c.denominator
    if int(diff.max()) * num_c < 2**62 and num_c < 2**62 and den < 2**62:
        num = diff * num_c
    else:
        num = np.array([int(v) * num_c for v in diff], dtype=object)
    return num, den


_GAMMA_CAP = 2**62 - 1  # exponents are capped here: exp(-2^62) is far below anything observable


def _capped_split(num: np.ndarray, den: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer and fractional parts of min(gamma_r, _GAMMA_CAP), gamma_r = num_r / den.

    Capping is exact, not an approximation: with gamma_r = c (M_max - M_r),
    min(gamma_r, G) = c (M_max - max(M_r, M_max - G/c)), and r -> max(M_r, M_max - G/c) is again a
    utility of sensitivity at most that of M (a maximum of two such functions), so the capped
    weights are an exponential mechanism with the same epsilon. It only matters where a weight
    is below exp(-2^62), and it keeps the exact sampler within 64-bit integers.
    """
    cap = _GAMMA_CAP * den
    if num.dtype == object or den >= 2**62 or int(num.max(initial=0)) >= cap:
        num = np.array([min(int(v), cap) for v in num], dtype=object)
    return _split_ratio(num, den)


def _exact_exponents(u: np.ndarray, epsilon: float, sensitivity: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(whole, rem, den) with gamma_r = whole_r + rem_r/den (capped at 2^62 - 1), min_r gamma_r = 0."""
    num, den = _exact_numerators(u, epsilon, sensitivity)
    whole, rem = _capped_split(num, den)
    return whole, rem, den


def _sample_from_exponents(whole: np.ndarray, rem: np.ndarray, den: int, n: int,
                           rng: np.random.Generator) -> np.ndarray:
    """n i.i.d. draws with P[r] proportional to exp(-(whole_r + rem_r/den)), by rejection.

    Proposals r are uniform; each is accepted with an exact Bernoulli(exp(-gamma_r)) coin.
    Accepted proposals are i.i.d. with the target law.
    """
    m = whole.size
    if n == 1 and m <= _SCALAR_CANDIDATES:  # pure-Python path: same law, less overhead
        while True:
            r = _py_uniform_below(m, rng)
            if _py_bernoulli_exp_general(int(whole[r]), int(rem[r]), den, rng):
                return np.array([r], dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        batch = max(m, 256, 2 * (n - filled))
        prop = rng.integers(0, m, size=batch)
        ok = _bernoulli_exp_general(whole[prop], rem[prop], den, rng)
        acc = prop[ok]
        take = min(acc.size, n - filled)
        out[filled:filled + take] = acc[:take]
        filled += take
    return out


def _exact_indices(u: np.ndarray, epsilon: float, sensitivity: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n i.i.d. exact draws of the exponential mechanism."""
    whole, rem, den = _exact_exponents(u, epsilon, sensitivity)
    return _sample_from_exponents(whole, rem, den, n, rng)


def _exact_index(u: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator) -> int:
    return int(_exact_indices(u, epsilon, sensitivity, 1, rng)[0])


def exponential_mechanism(utilities: Any, *, epsilon: float, sensitivity: float, rng: Any = None,
                          exact: bool = True, size: int | None = None) -> Any:
    r"""Draw an index r with probability :math:`\propto\exp(\varepsilon u_r/(2\Delta_u))`.

    Parameters
    ----------
    utilities : array_like of float
        Utility of each candidate (finite), computed on the data.
    epsilon : float
        ε > 0, nats.
    sensitivity : float
        Sensitivity Δ_u > 0 of every utility (replace-one neighbours).
    rng : numpy.random.Generator or seed, optional
    exact : bool
        True (default): exact sampler, certificate ``PureDP(epsilon, rho=epsilon**2/8)``.
        False: argmax of utilities plus numpy Gumbel noise of scale 2Δ/ε, for simulations only
        (no certificate).
    size : int, optional
        Number of independent draws (each is a separate ε-DP release); default one.

    Returns
    -------
    int or numpy.ndarray of int

    Notes
    -----
    ε-DP by Dwork and Roth (2014), Theorem 3.10; :math:`\varepsilon^2/8`-zCDP by bounded range
    (Durfee and Rogers 2019). The exact sampler proposes r uniformly and accepts with an exact
    Bernoulli(:math:`e^{-\gamma_r}`) coin (see the module notes for the rounding).
    """
    u = _check_utilities(utilities)
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    rng = check_rng(rng)
    n = 1 if size is None else check_int("size", size, low=0)
    if exact:
        out = _exact_indices(u, e, d, n, rng)
    else:
        out = np.argmax(u + rng.gumbel(0.0, 2.0 * d / e, size=(n, u.size)), axis=1)
    return int(out[0]) if size is None else out


def permute_and_flip(utilities: Any, *, epsilon: float, sensitivity: float, rng: Any = None,
                     exact: bool = True, size: int | None = None) -> Any:
    r"""Report noisy max with exponential noise (= permute-and-flip), ε-DP.

    Visits the candidates in a uniformly random order and stops at the first r whose coin
    Bernoulli(:math:`\exp(-\varepsilon(u_{\max}-u_r)/(2\Delta))`) comes up; equal in law to the
    argmax of :math:`u_r+\mathrm{Expo}(2\Delta/\varepsilon)` (McKenna and Sheldon 2020; THEORY.md
    5.3). ``exact=False`` uses numpy exponential noise (simulations only, no certificate).
    ``size`` draws independent copies (default one, returned as an int).
    """
    u = _check_utilities(utilities)
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    rng = check_rng(rng)
    n = 1 if size is None else check_int("size", size, low=0)
    if not exact:
        out = np.argmax(u + rng.exponential(2.0 * d / e, size=(n, u.size)), axis=1)
        return int(out[0]) if size is None else out
    whole, rem, den = _exact_exponents(u, e, d)
    order = rng.permuted(np.broadcast_to(np.arange(u.size), (n, u.size)), axis=1)
    flat = order.ravel()
    ok = _bernoulli_exp_general(whole[flat], rem[flat], den, rng).reshape(n, u.size)
    first = np.argmax(ok, axis=1)  # the maximiser has gamma = 0: every row has a hit
    out = order[np.arange(n), first]
    return int(out[0]) if size is None else out


def report_noisy_max(scores: Any, *, epsilon: float, sensitivity: float, rng: Any = None,
                     noise: str = "gumbel", exact: bool = True) -> int:
    r"""Index of the largest noisy score (the value is **not** released).

    Parameters
    ----------
    scores : array_like
        Scores of sensitivity Δ each (replace-one neighbours, any direction).
    epsilon, sensitivity : float
        ε > 0 (nats), Δ > 0.
    noise : {"gumbel", "exponential"}
        "gumbel": Gumbel noise of scale 2Δ/ε (the exponential mechanism, also
        :math:`\varepsilon^2/8`-zCDP); "exponential": exponential noise of scale 2Δ/ε
        (permute-and-flip).
    exact : bool
        Exact sampler (default) or numpy noise for simulations (no certificate).

    Notes
    -----
    THEORY.md 5.3 and 7.3: Lap(1/ε) would only be valid for monotone counting queries under
    add/remove neighbours, so it is not offered. Certificate ``PureDP(epsilon)`` (with
    ``rho=epsilon**2/8`` for Gumbel noise).
    """
    check_choice("noise", noise, ("gumbel", "exponential"))
    if noise == "gumbel":
        return exponential_mechanism(scores, epsilon=epsilon, sensitivity=sensitivity, rng=rng, exact=exact)
    return permute_and_flip(scores, epsilon=epsilon, sensitivity=sensitivity, rng=rng, exact=exact)


def report_noisy_topk(scores: Any, k: int, *, epsilon: float, sensitivity: float, rng: Any = None,
                      exact: bool = True) -> np.ndarray:
    r"""Indices of k candidates chosen by k peeling rounds of the exponential mechanism.

    Parameters
    ----------
    scores : array_like
        Scores (finite), each of sensitivity Δ.
    k : int
        Number of candidates, 1 <= k <= number of scores.
    epsilon : float
        TOTAL privacy budget ε > 0 (nats): each round uses ε/k.
    sensitivity : float
        Δ > 0.
    rng : numpy.random.Generator or seed, optional
    exact : bool
        True: k exact exponential-mechanism rounds, each excluding the earlier choices.
        False: one-shot Gumbel top-k (scale 2Δk/ε) with numpy noise, equal in law (Durfee and
        Rogers 2019, Theorem 1), for simulations only (no certificate).

    Returns
    -------
    numpy.ndarray of int
        The chosen indices in the order they were picked (best first).

    Notes
    -----
    Certificate (:func:`report_noisy_topk_certificate`): ``PureDP(epsilon, rho=k*(epsilon/k)**2/8)``
    by basic composition of k ε/k-DP rounds, and zCDP composition of their bounded-range
    :math:`(\varepsilon/k)^2/8` (THEORY.md 5.3).
    """
    u = _check_utilities(scores, "scores")
    kk = check_int("k", k, low=1)
    if kk > u.size:
        raise ValueError(f"`k` must be at most the number of candidates ({u.size}); got {k!r}.")
    e = check_positive("epsilon", epsilon)
    d = check_positive("sensitivity", sensitivity)
    rng = check_rng(rng)
    if not exact:
        noisy = u + rng.gumbel(0.0, 2.0 * d * kk / e, size=u.size)
        top = np.argpartition(-noisy, kk - 1)[:kk]
        return top[np.argsort(-noisy[top], kind="stable")]
    num, den = _exact_numerators(u, e / kk, d)  # every round uses the same grid and eps/k
    remaining = np.arange(u.size)
    chosen = np.empty(kk, dtype=np.int64)
    for j in range(kk):
        sub = num[remaining]
        sub = sub - sub.min()  # a common shift: same law, better acceptance rate
        whole, rem = _capped_split(sub, den)  # each round is an exponential mechanism: capping is exact
        i = int(_sample_from_exponents(whole, rem, den, 1, rng)[0])
        chosen[j] = remaining[i]
        remaining = np.delete(remaining, i)
    return chosen


def report_noisy_topk_gumbel_scale(k: int, *, epsilon: float, sensitivity: float) -> float:
    r"""The Gumbel scale :math:`b` whose one-shot top-k has the law of :func:`report_noisy_topk`.

    Each exact round draws candidate r with probability proportional to :math:`\exp(-c M_r)`,
    with :math:`M_r` the utility rounded to the grid step g and c the dyadic coefficient of
    :func:`_exact_numerators` (ε/k rounded down to 30 significant bits, the grid sensitivity
    with its slack), i.e. an exponential mechanism :math:`\propto e^{u_r/b}` with
    :math:`b = g/c`, slightly above the nominal :math:`2\Delta k/\varepsilon` (relative
    :math:`3\cdot2^{-20}`). Peeling with it equals Gumbel top-k at scale b (Durfee and Rogers
    2019, Theorem 1). The rounding of the utilities to the grid (at most g/2, with
    :math:`g\le\Delta 2^{-20}`) is not part of b: randomized selective inference treats it as
    negligible.
    """
    kk = check_int("k", k, low=1)
    e = check_positive("epsilon", epsilon) / kk
    d = check_positive("sensitivity", sensitivity)
    g = math.ldexp(1.0, math.frexp(d)[1] - 1 - _UTILITY_GRID_BITS)
    bits = max(0, _EPS_BITS - math.frexp(e)[1])
    eps_num = math.floor(Fraction(e) * 2**bits)
    d_grid = math.floor(Fraction(d) / Fraction(g)) + 1 + _grid.FLOAT_SLACK_STEPS
    c = Fraction(eps_num, 2**bits) / (2 * d_grid)
    return float(Fraction(g) / c)


def report_noisy_max_certificate(*, epsilon: float, noise: str = "gumbel") -> PureDP:
    """Certificate of :func:`report_noisy_max`: ``PureDP(epsilon, rho=epsilon**2/8)`` for Gumbel
    noise (bounded range, Durfee and Rogers 2019), ``PureDP(epsilon)`` for exponential noise."""
    check_choice("noise", noise, ("gumbel", "exponential"))
    e = check_positive("epsilon", epsilon)
    return PureDP(e, rho=_bounded_range_rho(e, 1)) if noise == "gumbel" else PureDP(e)


def report_noisy_topk_certificate(k: int, *, epsilon: float) -> PureDP:
    """Certificate of :func:`report_noisy_topk`: ``PureDP(epsilon, rho=k*(epsilon/k)**2/8)``."""
    kk = check_int("k", k, low=1)
    e = check_positive("epsilon", epsilon)
    return PureDP(e, rho=_bounded_range_rho(e, kk))


def _bounded_range_rho(epsilon: float, k: int) -> float | None:
    """k (epsilon/k)^2 / 8, the zCDP of k bounded-range rounds of epsilon/k; None when it is not a
    positive finite double (the optional rho is then omitted: PureDP(epsilon) alone stays valid)."""
    per_round = epsilon / k
    rho = k * (per_round * per_round) / 8.0 if per_round < 1e150 else math.inf
    return rho if 0.0 < rho < math.inf else None


@dataclass(frozen=True, slots=True)
class OneshotLaplaceTopK:
    """Calibration of one-shot Laplace top-k with released noisy counts (QSZ Thm 2.2)."""

    laplace_scale: float
    laplace_std: float


def oneshot_laplace_topk_scale(*, k: int, n_candidates: int, epsilon: float, delta: float) -> OneshotLaplaceTopK:
    r"""Laplace scale :math:`8\sqrt{k\ln(d/\delta)}/\varepsilon` for one-shot top-k (ε < 0.2, δ < 0.05).

    Qiao, Su and Zhang (ICML 2021), Theorem 2.2, via Durfee and Rogers' blog (THEORY.md 5.3,
    secondary source). Counts of sensitivity 1; d = ``n_candidates``. Outside ε < 0.2 and
    δ < 0.05 the theorem does not apply and a ValueError is raised.
    """
    kk = check_int("k", k, low=1)
    d = check_int("n_candidates", n_candidates, low=kk)
    e = check_positive("epsilon", epsilon)
    dl = check_positive("delta", delta)
    if not e < 0.2:
        raise ValueError(f"`epsilon` must be a real number in (0, 0.2) for this theorem; got {epsilon!r}.")
    if not dl < 0.05:
        raise ValueError(f"`delta` must be a real number in (0, 0.05) for this theorem; got {delta!r}.")
    lam = 8.0 * math.sqrt(kk * math.log(d / dl)) / e
    return OneshotLaplaceTopK(laplace_scale=lam, laplace_std=math.sqrt(2.0) * lam)
