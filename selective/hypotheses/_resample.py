r"""Permutation p-values for ``run_at_level``: counts, chunks, and the resampling plans.

A Monte Carlo permutation p-value is :math:`(1 + \#\{T^* \succeq T\})/(1 + B)` over B
resamples drawn from ``rng``; when the units are exchangeable under the null hypothesis,
the observed statistic is one of B + 1 exchangeable values, so :math:`P(p \le u) \le u` at
every level u, whatever B (E. J. G. Pitman 1937; B. V. North, D. Curtis, P. C. Sham, "A note
on the calculation of empirical P values from Monte Carlo procedures", Am. J. Hum. Genet.
71 (2002), pp. 439-441). B only sets the power: the smallest attainable p-value is
:math:`1/(B + 1)`, and ``run_at_level`` takes :math:`B + 1 \ge 10/u` (at least 1,000) so that a
p-value a few times below u is found below u with high probability.

The resamples are drawn sequentially and the drawing stops at the :data:`STOP_HITS`-th
statistic at least as extreme as T: if that is the L-th drawn, :math:`p = h/L`
(:math:`h` = :data:`STOP_HITS`); if fewer than h of the B are, p is the formula above. This is
the sequential Monte Carlo p-value of J. Besag and P. Clifford, "Sequential Monte Carlo
p-values", Biometrika 78 (1991), pp. 301-304: it is as valid as the fixed-B one
(:math:`P(p \le u) \le u` at every u; a test computes its exact null law). The stop needs h
extreme draws among at most B, so it is reached only for p above about h/B: at least 40 times
the level when :math:`B + 1 = 10/u`, and above 0.4 under the 999-draw floor. Decisions at the
level are therefore those of the fixed-B p-value, and far above the level the drawing stops
after about h/p draws, with a relative standard error of about :math:`1/\sqrt h` = 5% in the
p-value shown. When the permutations can be listed (at most ``max_resamples`` of
them) they are, and the p-value is the exact :math:`\#\{T_\pi \succeq T\}/N`. Statistics
are compared with a relative tolerance of 1e-9, so a permuted statistic equal to the observed
one up to rounding counts as at least as extreme (the conservative side).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

import numpy as np

from .._validation import check_in_interval, check_int

__all__ = [
    "DEFAULT_MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "STOP_HITS",
    "MONTE_CARLO_RULE",
    "n_resamples_for",
    "check_level",
    "check_max_resamples",
    "extreme",
    "count_extreme",
    "monte_carlo_pvalue",
    "complete_pvalue",
    "two_sample_statistics",
    "random_two_sample_statistics",
    "all_subsets",
    "all_permutations",
    "stratified_permutations",
]

#: Default cap on the resamples (or listed permutations) of one ``run_at_level`` call.
DEFAULT_MAX_RESAMPLES = 1_000_000
#: Fewest Monte Carlo resamples planned, whatever the level (the sequential stop may draw fewer).
MIN_RESAMPLES = 999
#: The sequential Monte Carlo p-value stops at this many resampled statistics at least as
#: extreme as the observed one (Besag and Clifford 1991).
STOP_HITS = 400
#: How the Monte Carlo p-values are computed, for the ``method`` strings of the results.
MONTE_CARLO_RULE = (
    f"drawn until {STOP_HITS} are at least as extreme as T (the L-th drawn: p = {STOP_HITS}/L) or all B are "
    "(p = (1 + #{T* >= T})/(1 + B)), Besag and Clifford's sequential p-value"
)
#: Resampled values held in memory at once (chunk size times the row length).
_CHUNK_ELEMENTS = 1 << 22
_RELATIVE_TIE = 1e-9


def check_level(level: float) -> float:
    """``level`` must be in (0, 1]."""
    return check_in_interval("level", level, low=0.0, high=1.0, closed="right")


def check_max_resamples(max_resamples: int) -> int:
    return check_int("max_resamples", max_resamples, low=1)


def n_resamples_for(level: float, max_resamples: int) -> int | None:
    """Resamples B for a level: the least with :math:`(B + 1)\\,u \\ge 10`, at least
    :data:`MIN_RESAMPLES`; None when that exceeds ``max_resamples``."""
    needed = max(math.ceil(10.0 / level - 1e-9) - 1, 1)
    if needed > max_resamples:
        return None
    return max(needed, min(MIN_RESAMPLES, max_resamples))


def chunk_size(row_length: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(1, row_length))


def extreme(observed: float, stats: np.ndarray, alternative: str) -> np.ndarray:
    """Which ``stats`` are at least as extreme as ``observed`` in the direction of the
    alternative (``"two-sided"`` compares absolute values); a boolean array."""
    stats = np.nan_to_num(np.asarray(stats, dtype=float), nan=0.0)
    tie = _RELATIVE_TIE * max(1.0, abs(observed))
    if alternative == "two-sided":
        return np.abs(stats) >= abs(observed) - tie
    if alternative == "greater":
        return stats >= observed - tie
    return stats <= observed + tie


def count_extreme(observed: float, stats: np.ndarray, alternative: str) -> int:
    """How many ``stats`` are at least as extreme as ``observed`` (see :func:`extreme`)."""
    return int(np.count_nonzero(extreme(observed, stats, alternative)))


def monte_carlo_pvalue(
    observed: float,
    simulate: Callable[[np.random.Generator, int], np.ndarray],
    n_resamples: int,
    *,
    alternative: str,
    rng: np.random.Generator,
    chunk: int,
    stop_hits: int = STOP_HITS,
) -> float:
    """Besag and Clifford's sequential Monte Carlo p-value, at most ``n_resamples`` draws.

    ``simulate(rng, size)`` returns ``size`` resampled statistics; they are drawn ``chunk`` at a
    time, in order. If the ``stop_hits``-th statistic at least as extreme as ``observed`` is the
    L-th drawn, the p-value is ``stop_hits / L`` (later draws of its chunk are not looked at);
    otherwise it is :math:`(1 + \\#\\{T^* \\succeq T\\})/(1 + B)` over the B =
    ``n_resamples`` draws. Both are valid under exchangeability (module docstring).
    """
    if not math.isfinite(observed):
        raise ValueError(f"The observed statistic is {observed!r}: no permutation p-value can be computed.")
    check_int("stop_hits", stop_hits, low=1)
    check_int("chunk", chunk, low=1)
    hits = 0
    done = 0
    size = max(16, 2 * stop_hits)  # chunks grow from here, so that a large p stops early
    while done < n_resamples:
        size = min(size, chunk, n_resamples - done)
        mask = extreme(observed, simulate(rng, size), alternative)
        count = int(np.count_nonzero(mask))
        if hits + count >= stop_hits:
            position = int(np.flatnonzero(mask)[stop_hits - hits - 1]) + 1
            return stop_hits / (done + position)
        hits += count
        done += size
        size *= 2
    return (1.0 + hits) / (1.0 + n_resamples)


def complete_pvalue(observed: float, stats: np.ndarray, alternative: str) -> float:
    """:math:`\\#\\{T_\\pi \\succeq T\\}/N` over all N listed permutations (the identity among them)."""
    return count_extreme(observed, stats, alternative) / len(stats)


# ---------------------------------------------------------------- two samples


def two_sample_statistics(values: np.ndarray, first: np.ndarray, *, usevar: str, kind: str = "t") -> np.ndarray:
    """Two-sample t statistics of ``values`` for each row of ``first`` (indices of group 1).

    ``usevar="unequal"``: Welch's :math:`(\\bar x_1 - \\bar x_2)/\\sqrt{s_1^2/n_1 + s_2^2/n_2}`;
    ``"pooled"``: Student's, with the pooled variance. Degenerate splits (0/0) give 0.
    ``values`` should be centred and scaled (the sums of squares then keep their digits).
    """
    s1 = values[first].sum(axis=-1)
    q1 = (values[first] ** 2).sum(axis=-1)
    return _two_sample_t(values, s1, q1, first.shape[-1], usevar)


def random_two_sample_statistics(
    rng: np.random.Generator, values: np.ndarray, n1: int, size: int, *, usevar: str
) -> np.ndarray:
    """:func:`two_sample_statistics` for ``size`` uniformly random group-1 sets of ``n1`` rows.

    Each set is a row of a 0/1 membership matrix whose entries are shuffled independently per
    row (uniform over the C(n, n1) sets); the group sums are then two matrix products, about
    twice as fast as gathering indices.
    """
    n = values.shape[0]
    pattern = np.zeros(n)
    pattern[:n1] = 1.0
    members = rng.permuted(np.broadcast_to(pattern, (size, n)).copy(), axis=1)
    s1 = members @ values
    q1 = members @ (values * values)
    return _two_sample_t(values, s1, q1, n1, usevar)


def _two_sample_t(values: np.ndarray, s1: np.ndarray, q1: np.ndarray, n1: int, usevar: str) -> np.ndarray:
    n = values.shape[0]
    n2 = n - n1
    total, total_sq = values.sum(), (values * values).sum()
    s2, q2 = total - s1, total_sq - q1
    m1, m2 = s1 / n1, s2 / n2
    v1 = np.maximum(q1 - s1 * m1, 0.0) / (n1 - 1)
    v2 = np.maximum(q2 - s2 * m2, 0.0) / (n2 - 1)
    if usevar == "unequal":
        se2 = v1 / n1 + v2 / n2
    else:
        se2 = ((n1 - 1) * v1 + (n2 - 1) * v2) / (n - 2) * (1.0 / n1 + 1.0 / n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (m1 - m2) / np.sqrt(se2)
    return np.nan_to_num(t, nan=0.0)


def all_subsets(n: int, k: int) -> np.ndarray:
    """Every k-subset of range(n), one per row (C(n, k) rows)."""
    count = math.comb(n, k)
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)), dtype=np.int64,
                       count=count * k)
    return flat.reshape(count, k)


@functools.lru_cache(maxsize=4)
def all_permutations(n: int) -> np.ndarray:
    """Every permutation of range(n), one per row (n! rows; read-only, cached)."""
    out = np.zeros((1, 0), dtype=np.int8)
    for m in range(n):  # insert the value m at every position of each permutation of range(m)
        out = np.concatenate([np.insert(out, pos, m, axis=1) for pos in range(m + 1)])
    out.setflags(write=False)
    return out


def stratified_permutations(rng: np.random.Generator, strata: np.ndarray, size: int) -> np.ndarray:
    """``size`` random permutations of range(n) that map each stratum onto itself.

    ``strata`` holds integer codes 0..S-1. Each row is uniform over the permutations that
    preserve the strata: random keys sorted within the blocks of a stable sort by stratum.
    """
    codes = np.asarray(strata, dtype=np.int64)
    if codes.size == 0 or np.all(codes == codes[0]):  # one stratum: plain permutations
        return rng.permuted(np.broadcast_to(np.arange(codes.size), (size, codes.size)).copy(), axis=1)
    base = np.argsort(codes, kind="stable")
    keys = rng.random((size, codes.size)) + codes[None, :]
    within = np.argsort(keys, axis=1)
    perm = np.empty_like(within)
    perm[:, base] = within
    return perm
