r"""Exact samplers for privacy noise: integer arithmetic only, no floating point in the law.

Floating-point noise (inverse-CDF Laplace on doubles) leaks the true answer through the set of
attainable outputs (Mironov, CCS 2012; THEORY.md 7.1). The samplers here draw from the exact
Bernoulli(:math:`e^{-\gamma}`), discrete Laplace and discrete Gaussian laws of Canonne, Kamath
and Steinke (NeurIPS 2020, arXiv:2004.00010, Algorithms 1-3), using only uniform integers from
a :class:`numpy.random.Generator` (``rng.integers``, which is exactly uniform) and integer or
:class:`fractions.Fraction` arithmetic. They are vectorised with numpy ``int64`` arithmetic
wherever every intermediate integer provably fits; Python integers take over otherwise, so the
law is exact for every rational parameter.

Two identities keep the integer arithmetic inside ``int64``:

* Bernoulli(R/(D K)) = [U_1 = 0] and [U_2 < R] with U_1 uniform on {0..K-1} and U_2 uniform on
  {0..D-1} independent (because U_1 D + U_2 is uniform on {0..DK-1}).
* Bernoulli(R/D) for D of any size: compare a uniform 62-bit digit with the first base-2^62
  digit of R/D, and go on to the next digit only on a tie (probability 2^-62).

The fast continuous path for simulations lives in :mod:`selective.mechanisms.continuous`.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_int, check_rng

__all__ = [
    "as_fraction",
    "fraction_at_least",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
]

_INT64_SAFE = 2**62
_INT64_LIMIT = 2**63
_SCALE_LIMIT = 2**56  # noise scales t/s must stay below this (draws then fit int64)
_SCALE_BITS = 48  # inexact scales are rounded up to 48 significant bits (relative change < 2^-47)
_DIGIT = 2**62
_MAX_ROUNDS = 10_000  # a safety valve: each round rejects with probability >= 1 - e^-1


def as_fraction(name: str, value: Any, *, positive: bool = True, allow_zero: bool = False) -> Fraction:
    """Exact rational value of an int, :class:`~fractions.Fraction`, decimal string or float.

    A float is converted exactly (``Fraction(0.1)`` is the binary double, not 1/10); use
    :func:`fraction_at_least` to get a short rational that is at least a float.
    """
    if isinstance(value, bool):
        raise TypeError(f"`{name}` must be a rational number (int, Fraction, float or decimal string); got {value!r}.")
    if isinstance(value, str):
        try:
            x = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"`{name}` must be a rational number; got {value!r}.") from None
    elif isinstance(value, (numbers.Rational, Fraction)):
        x = Fraction(value)
    elif isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"`{name}` must be a finite rational number; got {value!r}.")
        x = Fraction(f)
    else:
        raise TypeError(
            f"`{name}` must be a rational number (int, Fraction, float or decimal string); "
            f"got {value!r} ({type(value).__name__})."
        )
    if positive and (x < 0 or (x == 0 and not allow_zero)):
        word = "non-negative" if allow_zero else "positive"
        raise ValueError(f"`{name}` must be a {word} rational number; got {value!r}.")
    return x


def fraction_at_least(x: Any, *, denominator: int = 10**6) -> Fraction:
    """The smallest multiple of ``1/denominator`` that is >= ``x`` (exactly).

    Used to turn a float noise scale into a short rational without ever making the noise
    smaller than asked for (so a privacy certificate computed from the float stays valid).
    """
    q = as_fraction("x", x, positive=False)
    return Fraction(math.ceil(q * denominator), denominator)


def _scale_at_least(x: Any) -> Fraction:
    """A short rational >= ``x`` > 0 for a noise scale (private; used by every mechanism).

    ``x`` itself when its numerator and denominator are both below 2^48 (exact: no rounding);
    otherwise the smallest multiple of a power of two 2^j that is >= x and has at most 48
    significant bits (relative increase below 2^-47). Unlike ``fraction_at_least(x)`` with
    its fixed denominator 10^6, the numerator never grows with the magnitude of ``x`` times
    10^6, so large grid sensitivities do not push the sampler's integers towards 2^63.
    """
    q = as_fraction("scale", x)
    if q.numerator < 2**_SCALE_BITS and q.denominator < 2**_SCALE_BITS:
        return q
    # q in [2^(e-1), 2^e): keep _SCALE_BITS bits, i.e. round up to a multiple of 2^(e - _SCALE_BITS)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e <= q:
        e += 1
    j = _SCALE_BITS - e  # unit 2^-j
    if j >= 0:
        return Fraction(math.ceil(q * 2**j), 2**j)
    return Fraction(math.ceil(q / 2**-j) * 2**-j)


# ---------------------------------------------------------------------------------------------
# vectorised building blocks (int64 arrays; every step exact)
# ---------------------------------------------------------------------------------------------


def _bernoulli_ratio(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Independent Bernoulli(num_i / den) for integers 0 <= num_i <= den (``den`` any size)."""
    size = num.shape[0]
    if size == 0:
        return np.zeros(0, dtype=bool)
    if den < _INT64_SAFE:
        return rng.integers(0, den, size=size, dtype=np.int64) < num.astype(np.int64)
    # base-2^62 digits of num/den, compared lazily with uniform digits
    out = np.zeros(size, dtype=bool)
    rem = np.array([int(v) for v in num], dtype=object)
    undecided = np.arange(size)
    while undecided.size:
        shifted = rem[undecided] * _DIGIT
        digit = np.array([int(v) for v in shifted // den], dtype=object)
        rem[undecided] = shifted % den
        u = rng.integers(0, _DIGIT, size=undecided.size, dtype=np.int64)
        d64 = np.array([min(int(v), _DIGIT) for v in digit], dtype=np.int64)  # digit < 2^62
        out[undecided] = u < d64
        undecided = undecided[u == d64]
    return out


def _bernoulli_exp_fraction(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-num_i/den)) for 0 <= num_i <= den (CKS Algorithm 1, case gamma in [0, 1]).

    K <- 1; repeat: draw A ~ Bernoulli(gamma / K); if A = 0 stop, else K <- K + 1.
    Return [K is odd].  (P[K > k] = gamma^k / k!, so P[K odd] = exp(-gamma).)
    """
    size = num.shape[0]
    k = np.ones(size, dtype=np.int64)
    active = np.arange(size)
    sub = num
    while active.size:
        first = rng.integers(0, k[active], dtype=np.int64) == 0
        a = first.copy()
        if first.any():
            a[first] = _bernoulli_ratio(sub[first], den, rng)
        k[active[a]] += 1
        active = active[a]
        sub = sub[a]
    return (k % 2) == 1


def _bernoulli_exp_minus_one_count(size: int, rng: np.random.Generator) -> np.ndarray:
    """Number of successes before the first failure in i.i.d. Bernoulli(exp(-1)) trials.

    Geometric: P[V = v] = (1 - e^-1) e^{-v}.  Each trial is CKS Algorithm 1 with gamma = 1.
    """
    v = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        ok = _bernoulli_exp_fraction(np.ones(active.size, dtype=np.int64), 1, rng)
        v[active[ok]] += 1
        active = active[ok]
    return v


def _bernoulli_exp_general(whole: np.ndarray, frac_num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-(whole_i + frac_num_i/den))) with integers whole_i >= 0, 0 <= frac_num_i < den.

    CKS Algorithm 1, case gamma > 1: ``whole_i`` independent Bernoulli(e^-1) must all succeed
    (stop at the first failure), then one Bernoulli(exp(-frac)).
    """
    size = whole.shape[0]
    ok = np.ones(size, dtype=bool)
    done = np.zeros(size, dtype=np.int64)
    active = np.flatnonzero(whole > 0)
    while active.size:
        b = _bernoulli_exp_fraction(np.ones(active.size, dtype=np.int64), 1, rng)
        ok[active[~b]] = False
        done[active] += 1
        keep = b & (done[active] < whole[active])
        active = active[keep]
    idx = np.flatnonzero(ok)
    if idx.size:
        ok[idx] = _bernoulli_exp_fraction(frac_num[idx], den, rng)
    return ok


def _split_ratio(num: np.ndarray, den: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer and fractional parts of num/den as (whole int64, remainder array, exact)."""
    if num.dtype != object and den < _INT64_SAFE:
        return num // den, num % den
    whole = np.array([int(v) // den for v in num], dtype=object)
    rem = np.array([int(v) % den for v in num], dtype=object)
    if any(w >= _INT64_SAFE for w in whole):  # pragma: no cover - needs gamma > 2^62
        raise OverflowError("exponent too large for the exact sampler (gamma > 2^62).")
    rem_arr = rem.astype(np.int64) if den < _INT64_SAFE else rem
    return whole.astype(np.int64), rem_arr


def _check_size(size: Any) -> tuple[int, tuple[int, ...] | None]:
    if size is None:
        return 1, None
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        n = check_int("size", size, low=0)
        return n, (n,)
    shape = tuple(check_int("size", s, low=0) for s in size)
    return int(np.prod(shape, dtype=np.int64)), shape


def _shape(values: np.ndarray, shape: tuple[int, ...] | None) -> Any:
    if shape is None:
        return int(values[0])
    return values.reshape(shape)


# ---------------------------------------------------------------------------------------------
# public samplers
# ---------------------------------------------------------------------------------------------


def bernoulli_exp(gamma: Any, *, size: Any = None, rng: Any = None) -> Any:
    r"""Exact Bernoulli(:math:`e^{-\gamma}`) draws for a rational :math:`\gamma \ge 0`.

    Parameters
    ----------
    gamma : int, Fraction, decimal string or float
        The exponent, >= 0; a float is used exactly (its binary value).
    size : int or tuple of int, optional
        Output shape; ``None`` returns a single bool.
    rng : numpy.random.Generator or seed, optional

    Returns
    -------
    bool or numpy.ndarray of bool

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 1. Only uniform integers are drawn, so the
    law is exactly :math:`e^{-\gamma}`.
    """
    g = as_fraction("gamma", gamma, allow_zero=True)
    rng = check_rng(rng)
    n, shape = _check_size(size)
    whole, frac = divmod(g.numerator, g.denominator)
    if whole >= _INT64_SAFE:  # pragma: no cover - astronomically small probability
        raise OverflowError(f"`gamma` is too large for the exact sampler; got {gamma!r}.")
    out = _bernoulli_exp_general(
        np.full(n, whole, dtype=np.int64),
        np.full(n, frac, dtype=np.int64 if g.denominator < _INT64_SAFE else object),
        g.denominator,
        rng,
    )
    if shape is None:
        return bool(out[0])
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------
# scalar path: pure Python integers on uniforms from the Generator API (few draws, low overhead)
# ---------------------------------------------------------------------------------------------


def _py_uniform_below(k: int, rng: np.random.Generator) -> int:
    """Uniform integer on {0..k-1} (exact, any k >= 1), through the Generator API only.

    ``rng.integers`` for k < 2^63 (numpy's bounded sampler is exact for every bit generator);
    for larger k, rejection on ``k.bit_length()`` bits taken from ``rng.bytes`` (uniform bytes
    for every bit generator). Never reads ``bit_generator.random_raw``: its words carry 32
    random bits for MT19937 and 64 for PCG64, so treating them as 64-bit words is wrong.
    """
    if k == 1:
        return 0
    if k < _INT64_LIMIT:
        return int(rng.integers(0, k))
    bits = (k - 1).bit_length()
    n_bytes = (bits + 7) // 8
    mask = (1 << bits) - 1
    while True:  # acceptance probability > 1/2 per round
        r = int.from_bytes(rng.bytes(n_bytes), "little") & mask
        if r < k:
            return r


def _py_bernoulli_exp_fraction(num: int, den: int, rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-num/den)), 0 <= num <= den (CKS Algorithm 1)."""
    k = 1
    while _py_uniform_below(den * k, rng) < num:
        k += 1
    return k % 2 == 1


def _py_discrete_laplace(t: int, s: int, rng: np.random.Generator) -> int:
    """One draw with P[Z = z] proportional to exp(-|z| s / t) (CKS Algorithm 2)."""
    while True:
        u = _py_uniform_below(t, rng)
        if not _py_bernoulli_exp_fraction(u, t, rng):
            continue
        v = 0
        while _py_bernoulli_exp_fraction(1, 1, rng):
            v += 1
        y = (u + t * v) // s
        b = _py_uniform_below(2, rng)
        if b == 1 and y == 0:
            continue
        return -y if b else y


def _py_bernoulli_exp_general(whole: int, rem: int, den: int, rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-(whole + rem/den))), CKS Algorithm 1 with gamma > 1 split off."""
    for _ in range(int(whole)):
        if not _py_bernoulli_exp_fraction(1, 1, rng):
            return False
    return _py_bernoulli_exp_fraction(int(rem), den, rng)


_SCALAR_CUTOFF = 8  # below this many draws the pure-Python path is faster


def _discrete_laplace_array(t: int, s: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws with P[Z = z] proportional to exp(-|z| s / t)  (CKS Algorithm 2).

    Exact for every t, s >= 1 with t/s < 2^56 (so that |Z| fits int64 with overwhelming margin):
    numpy int64 arithmetic where every intermediate provably fits, Python integers otherwise.
    X = U + t V is formed in Python integers whenever (max V + 1) t could reach 2^63 (int64
    arithmetic would wrap silently and bound the noise).
    """
    if t >= _SCALE_LIMIT * s:
        raise ValueError(f"the noise scale {t}/{s} is too large for the exact sampler (must be below 2^56).")
    if n <= _SCALAR_CUTOFF or t >= _INT64_SAFE:  # pure Python integers: any size
        return np.array([_py_discrete_laplace(t, s, rng) for _ in range(n)], dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    rounds = 0
    while filled < n:
        rounds += 1
        if rounds > _MAX_ROUNDS:  # pragma: no cover - probability ~ 0
            raise RuntimeError("discrete Laplace sampler did not terminate.")
        need = n - filled
        m = int(need * 2.2) + 16
        u = rng.integers(0, t, size=m, dtype=np.int64)
        d = _bernoulli_exp_fraction(u, t, rng)  # accept U with probability exp(-U/t)
        u = u[d]
        v = _bernoulli_exp_minus_one_count(u.size, rng)
        # X = U + t V, P[X = x] proportional to exp(-x/t) on {0, 1, ...}; U < t so X < (V + 1) t
        if u.size and (int(v.max()) + 1) * t < _INT64_LIMIT:
            y = (u + t * v) // s  # P[Y = y] proportional to exp(-y s/t)
        else:
            y_py = [(int(a) + t * int(c)) // s for a, c in zip(u, v, strict=True)]
            if any(yy >= _INT64_SAFE for yy in y_py):  # pragma: no cover - needs V >= 64
                raise OverflowError("discrete Laplace draw beyond 2^62; the scale is too large.")
            y = np.array(y_py, dtype=np.int64)
        b = rng.integers(0, 2, size=y.size, dtype=np.int64)
        keep = ~((b == 1) & (y == 0))
        z = ((1 - 2 * b) * y)[keep]
        take = min(z.size, need)
        out[filled:filled + take] = z[:take]
        filled += take
    return out


def discrete_laplace(scale: Any, *, size: Any = None, rng: Any = None) -> Any:
    r"""Exact discrete Laplace draws: :math:`P[Z=z] \propto e^{-|z|/t}` on the integers.

    Parameters
    ----------
    scale : int, Fraction, decimal string or float
        0 < t < 2^56. A float is used at its exact binary value when that has at most 48
        significant bits in numerator and denominator (always, unless it is tiny), and is
        otherwise rounded *up* to 48 significant bits, so the noise is never smaller than
        requested. Pass a Fraction to control it exactly.
    size : int or tuple of int, optional
    rng : numpy.random.Generator or seed, optional

    Returns
    -------
    int or numpy.ndarray of int64

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 2: with t = num/den, draw U uniform on
    {0..num-1} accepted with probability exp(-U/num), V geometric with ratio e^-1, set
    X = U + num V (so P[X=x] is proportional to exp(-x/num)) and Y = floor(X/den); attach a
    fair sign, rejecting (-, 0). Adding it to an integer query of sensitivity Δ is
    (Δ/t)-DP (THEORY.md 5.2): the exact-arithmetic Laplace mechanism.
    """
    t = _scale_fraction("scale", scale)
    rng = check_rng(rng)
    n, shape = _check_size(size)
    if t >= _SCALE_LIMIT:
        raise ValueError(f"`scale` must be below 2^56 for the exact sampler; got {scale!r}.")
    return _shape(_discrete_laplace_array(t.numerator, t.denominator, n, rng), shape)


def _scale_fraction(name: str, value: Any) -> Fraction:
    if isinstance(value, float) or (isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational)):
        return _scale_at_least(as_fraction(name, value))  # a float is dyadic: usually exact
    return as_fraction(name, value)


def _discrete_gaussian_array(sigma2: Fraction, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws with P[Y = y] proportional to exp(-y^2 / (2 sigma2))  (CKS Algorithm 3)."""
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1  # floor(sigma) + 1
    den = 2 * a * b * t * t  # gamma = (|Y| b t - a)^2 / (2 a b t^2)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    rounds = 0
    while filled < n:
        rounds += 1
        if rounds > _MAX_ROUNDS:  # pragma: no cover
            raise RuntimeError("discrete Gaussian sampler did not terminate.")
        need = n - filled
        m = int(need * 1.9) + 16  # acceptance probability is about 0.6 or more
        y = _discrete_laplace_array(t, 1, m, rng)
        ay = np.abs(y)
        big = int(ay.max(initial=0)) * b * t + a
        if big * big < _INT64_SAFE and den < _INT64_SAFE:
            num = (ay * (b * t) - a) ** 2
        else:
            num = np.array([(int(v) * b * t - a) ** 2 for v in ay], dtype=object)
        whole, frac = _split_ratio(num, den)
        c = _bernoulli_exp_general(whole, frac, den, rng)
        z = y[c]
        take = min(z.size, need)
        out[filled:filled + take] = z[:take]
        filled += take
    return out


def discrete_gaussian(sigma: Any = None, *, sigma2: Any = None, size: Any = None, rng: Any = None) -> Any:
    r"""Exact discrete Gaussian draws: :math:`P[Y=y] \propto e^{-y^2/(2\sigma^2)}` on the integers.

    Parameters
    ----------
    sigma : float, int or decimal string, optional
        The scale σ > 0. Its square is used exactly when short, else rounded *up* to 48
        significant bits (relative change below 2^-47).
    sigma2 : int, Fraction or decimal string, optional
        The variance parameter σ² given exactly (instead of ``sigma``).
    size : int or tuple of int, optional
    rng : numpy.random.Generator or seed, optional

    Returns
    -------
    int or numpy.ndarray of int64

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 3: with t = floor(σ) + 1 draw Y from the
    discrete Laplace of scale t and accept it with probability
    :math:`\exp(-(|Y| - \sigma^2/t)^2 / (2\sigma^2))`, computed exactly with integers.
    Added to an integer query of sensitivity Δ it is :math:`\Delta^2/(2\sigma^2)`-zCDP and
    (ε, δ)-DP with δ from :func:`selective.mechanisms.discrete_gaussian_delta` (THEORY.md 5.2).
    """
    if (sigma is None) == (sigma2 is None):
        raise ValueError("give exactly one of `sigma` and `sigma2`.")
    if sigma is not None:
        s = as_fraction("sigma", sigma)
        s2 = _scale_at_least(s * s)
    else:
        s2 = as_fraction("sigma2", sigma2)
    rng = check_rng(rng)
    n, shape = _check_size(size)
    return _shape(_discrete_gaussian_array(s2, n, rng), shape)
