"""The selections of :mod:`selective.conditional.randomized`: noise laws and the probability of
each selection given the noiseless scores (the formulas are in that module and docs/THEORY.md
3.12)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ._checks import check_choice

NOISES = ("laplace", "gaussian", "gumbel")
_LOG_HALF = math.log(0.5)
_GL8 = np.polynomial.legendre.leggauss(8)
# the adaptive 1-d integrals (_panel_log_integral)
_REACH = 60.0          # the mode is searched over the kinks and 0 +- this many noise scales
_DROP = 40.0           # the window: where log f is within this of its maximum
_PANELS = 16           # equal panels over the window, before the split by the change of log f
_STEP = 5.0            # the most log f may change over one piece of a panel
_MAX_PIECES = 64
_WIDE = 2.0
_PROBES = 17           # points per round of the searches; each round shrinks a bracket 8-fold or more
_ROUNDS = 24           # at most (8^-24 = 2e-22 of the search range)
_TOL = 0.02            # the mode search stops when its bracket is this many noise scales wide
_WINDOW_ROUNDS = 2     # the window's ends need not be tight: the pieces follow the change of log f


# ---------------------------------------------------------------- noise laws


def _check_noise(noise: str, scale: Any) -> tuple[str, float]:
    noise = check_choice("noise", noise, NOISES)
    try:
        s = float(scale)
    except (TypeError, ValueError):
        raise TypeError(f"`scale` must be a positive number; got {scale!r}.") from None
    if not (s > 0 and math.isfinite(s)):
        raise ValueError(f"`scale` must be a positive finite number; got {scale!r}.")
    return noise, s


def _logcdf(noise: str, scale: float, x: np.ndarray) -> np.ndarray:
    """log P(W <= x) for the centred noise W."""
    z = np.asarray(x, dtype=float) / scale
    if noise == "gaussian":
        return special.log_ndtr(z)
    if noise == "gumbel":
        return -np.exp(-z)
    with np.errstate(over="ignore"):
        return np.where(z < 0, _LOG_HALF + np.minimum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z))))


def _logsf(noise: str, scale: float, x: np.ndarray) -> np.ndarray:
    """log P(W > x)."""
    z = np.asarray(x, dtype=float) / scale
    if noise == "gaussian":
        return special.log_ndtr(-z)
    if noise == "gumbel":
        with np.errstate(over="ignore"):
            e = np.exp(-z)
        return np.log(-np.expm1(-e))
    with np.errstate(over="ignore"):
        return np.where(z > 0, _LOG_HALF - np.maximum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z))))


def _logpdf(noise: str, scale: float, x: np.ndarray) -> np.ndarray:
    z = np.asarray(x, dtype=float) / scale
    if noise == "gaussian":
        return -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(scale)
    if noise == "gumbel":
        with np.errstate(over="ignore"):
            return -z - np.exp(-z) - math.log(scale)
    return -np.abs(z) - math.log(2 * scale)


def _indices(name: str, value: Any) -> tuple[int, ...]:
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"`{name}` must be a sequence of candidate positions (integers); got {value!r}.") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
        raise TypeError(f"`{name}` must be a sequence of candidate positions (integers); got {value!r}.")
    out = tuple(int(v) for v in items)
    if len(set(out)) != len(out) or any(v < 0 for v in out):
        raise ValueError(f"`{name}` must hold distinct non-negative positions; got {value!r}.")
    return out


def _finite_scores(s: Any) -> np.ndarray:
    """The scores (G, m) as floats; the quadrature needs them finite (a score of +-inf makes a
    selection certain or impossible, which the caller should decide, not the integral)."""
    s = np.asarray(s, dtype=float)
    if s.ndim != 2 or not np.isfinite(s).all():
        raise ValueError(f"the scores must be a finite 2-d array (rows, candidates); got shape {s.shape} with "
                         f"{int(np.size(s) - np.isfinite(s).sum())} non-finite value(s).")
    return s


def _finite(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a finite number; got {value!r}.") from None
    if not math.isfinite(v):
        raise ValueError(f"`{name}` must be finite; got {value!r}.")
    return v


# ---------------------------------------------------------------- events


@dataclass(frozen=True)
class NoisyTopKEvent:
    """The candidates at positions ``selected`` had the ``len(selected)`` largest noisy scores
    (order not observed), with independent ``noise`` of ``scale`` added to every score.

    ``noise="gumbel"`` with scale :math:`2\\Delta k/\\varepsilon` is the exponential mechanism run
    k times (peeling), as :class:`~selective.selectors.NoisyTopK` (Durfee and Rogers 2019);
    ``"laplace"`` is report noisy max with Laplace noise (top-k: one shot, the k largest noisy
    scores of one draw), ``"gaussian"`` its Gaussian version."""

    selected: tuple
    noise: str = "gumbel"
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "selected", _indices("selected", self.selected))
        if not self.selected:
            raise ValueError("`selected` must name at least one candidate; got an empty selection.")
        noise, scale = _check_noise(self.noise, self.scale)
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "scale", scale)

    @property
    def noise_scale(self) -> float:
        return self.scale

    def check(self, m: int) -> None:
        if max(self.selected) >= m or len(self.selected) > m:
            raise ValueError(f"`selected` {self.selected!r} must index the {m} candidates.")

    def log_prob(self, s: np.ndarray) -> np.ndarray:
        """log P(event | noiseless scores ``s``), one value per row of ``s`` (G, m, finite)."""
        s = _finite_scores(s)
        S = np.asarray(self.selected)
        rest = np.ones(s.shape[1], bool)
        rest[S] = False
        if not rest.any():   # every candidate selected: no selection at all
            return np.zeros(s.shape[0])
        b = self.scale
        if self.noise == "gumbel":
            # P = int_0^inf e^{-t} prod_{j in S} (1 - exp(-t r_j)) dt, r_j = e^{s_j/b} / sum_rest e^{s_i/b}
            log_w_rest = special.logsumexp(s[:, rest] / b, axis=1)
            log_r = s[:, S] / b - log_w_rest[:, None]                          # (G, k)
            return _gumbel_set_log_prob(log_r)
        # report noisy top-k, split by which selected candidate i has the smallest noisy score
        # (ties have probability 0): P = sum_i int f(w) prod_{j in S, j != i} (1 - F(s_i + w - s_j))
        # prod_{l not in S} F(s_i + w - s_l) dw, w the noise of i; k = 1 is report noisy max
        terms = []
        for i in S:
            si = s[:, i]
            beat = [j for j in S if j != i]

            def log_f(w, si=si, beat=beat):
                out = _logpdf(self.noise, b, w)
                for j in beat:
                    out = out + _logsf(self.noise, b, (si - s[:, j])[:, None, None] + w)
                for j in np.flatnonzero(rest):
                    out = out + _logcdf(self.noise, b, (si - s[:, j])[:, None, None] + w)
                return out
            others = np.delete(s, i, axis=1) - si[:, None]
            terms.append(_panel_log_integral(log_f, np.column_stack([np.zeros(si.size), others]), b,
                                             smooth=self.noise == "gaussian"))
        return special.logsumexp(np.stack(terms), axis=0)


def _gumbel_set_log_prob(log_r: np.ndarray) -> np.ndarray:
    r"""log P(k Gumbel-noised candidates beat all others), r_j = e^{s_j/b} / sum_rest e^{s_i/b}.

    :math:`P=\int_0^\infty e^{-t}\prod_j(1-e^{-tr_j})\,dt` (the largest other noisy score is
    Gumbel with location :math:`b\log\sum_{rest}e^{s_i/b}`). k = 1: :math:`r/(1+r)`. Otherwise
    inclusion-exclusion, :math:`P=\sum_{A\subseteq S}(-1)^{|A|}/(1+\sum_{j\in A}r_j)`, where
    it is at least 1e-3 (then at most 2^k 1e-16 / 1e-3 relative error for k <= 12), and elsewhere
    the integral in :math:`v=\log t`, whose integrand :math:`\exp(v-e^v)\prod_j(1-e^{-e^{v+\log
    r_j}})` is log-concave (a Gumbel density times Gumbel distribution functions), by the adaptive
    quadrature of :func:`_panel_log_integral`: about 1e-11 in log P against 30-digit quadrature, k up to
    30 (a 96-point Gauss-Laguerre rule in t erred by up to 3e-3 for k > 12 with large r_j and
    6e-5 for k <= 12 with r_j of very different sizes)."""
    G, k = log_r.shape
    if k == 1:
        return log_r[:, 0] - np.logaddexp(0.0, log_r[:, 0])
    out = np.full(G, np.nan)
    if k <= 12:
        masks = (np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1     # (2^k, k)
        sign = np.where(masks.sum(axis=1) % 2 == 0, 1.0, -1.0)
        with np.errstate(divide="ignore"):
            log_masks = np.where(masks[None, :, :] == 1, log_r[:, None, :], -np.inf)  # (G, 2^k, k)
        log_RA = special.logsumexp(log_masks, axis=2)                           # (G, 2^k); -inf for A empty
        ie = np.sum(sign[None, :] * np.exp(-np.logaddexp(0.0, log_RA)), axis=1)
        use = ie >= 1e-3
        out[use] = np.log(ie[use])
    rows = np.flatnonzero(np.isnan(out))
    if rows.size:
        lr = log_r[rows]

        def log_f(v):   # v (G', P, q): log of the integrand in v = log t, summed factor by factor
            total = v - np.exp(v)
            for j in range(k):
                x = v + lr[:, j, None, None]
                with np.errstate(over="ignore"):
                    total = total + np.where(x < -20.0, x - 0.5 * np.exp(np.minimum(x, -20.0)),
                                             np.log(-np.expm1(-np.exp(np.maximum(x, -20.0)))))
            return total
        out[rows] = _panel_log_integral(log_f, -lr, 1.0, smooth=True)
    return out


def _panel_log_integral(log_f, kinks: np.ndarray, scale: float, smooth: bool = False,
                        kink_scale: float | None = None) -> np.ndarray:
    """log of the integral over w of exp(log_f(w)) for each row; ``log_f`` maps nodes (G, P, q) to
    log values and must be concave in w (every integrand here is a product of log-concave noise
    densities, distribution and survival functions), ``kinks`` (G, q) are the points where it may
    not be smooth (used as panel ends unless ``smooth``), ``scale`` the largest noise scale in it,
    ``kink_scale`` the smallest scale of its factors, when smaller (the mode is then located to a
    fiftieth of it, and pieces also end 1, 3, 8 and 20 of those from every kink).

    Adaptive in the integrand, not in the noise scale: (1) a grid search for the mode over the
    kinks and 0 widened by 60 scales each side (beyond, every factor of the integrand moves the
    same way), refined around the largest value (concavity puts the mode in the two cells around
    it); (2) a grid search on each side for where log f has fallen 40 below its maximum: by
    concavity the mass outside is below e^-40 of the mass inside; (3) 16 equal panels over that
    window, split at the mode and at every kink, each cut into equal pieces over which log f
    changes by at most 5 (it is monotone on each: the change between the ends is all of it), and
    8-point Gauss-Legendre on every piece (an exponential to 1e-12). The pieces follow the
    integrand wherever and however narrow it is (many candidates, a selected score far below the
    others, small noise): docs/THEORY.md 3.12.
    """
    G = kinks.shape[0]
    if G == 0:
        return np.zeros(0)
    t = np.linspace(0.0, 1.0, _PROBES)
    lo = np.minimum(kinks.min(axis=1), 0.0) - _REACH * scale
    hi = np.maximum(kinks.max(axis=1), 0.0) + _REACH * scale
    # the mode: a grid over the bracket, then over the two grid cells around its largest value
    # (log-concavity puts the mode there), each round shrinking the bracket 2 / (_PROBES - 1)-fold
    a, c = lo, hi
    rows = np.arange(G)
    for _ in range(_ROUNDS):
        if np.all(c - a <= _TOL * min(scale, kink_scale or scale)):
            break
        w = a[:, None] + (c - a)[:, None] * t
        v = log_f(w[:, None, :])[:, 0, :]
        j = v.argmax(axis=1)
        top, mode = v[rows, j], w[rows, j]
        a, c = w[rows, np.maximum(j - 1, 0)], w[rows, np.minimum(j + 1, _PROBES - 1)]
    # the window: from the mode outwards to where log f falls below its maximum minus _DROP, on
    # each side the outermost probe above the cut and the next one out bracket the crossing
    cut = (top - _DROP)[:, None, None]
    inner = np.column_stack([mode, mode])
    outer = np.column_stack([lo, hi])
    for _ in range(_WINDOW_ROUNDS):
        w = inner[..., None] + (outer - inner)[..., None] * t            # (G, 2, probes), inner first
        above = log_f(w) >= cut
        # the outermost probe above the cut (the first probe, inner, always is unless log f is nan)
        last = np.where(above.any(axis=2), _PROBES - 1 - np.argmax(above[..., ::-1], axis=2), 0)
        nxt = np.minimum(last + 1, _PROBES - 1)
        inner = np.take_along_axis(w, last[..., None], 2)[..., 0]
        outer = np.take_along_axis(w, nxt[..., None], 2)[..., 0]
    left_end, right_end = outer[:, 0], outer[:, 1]
    parts = [left_end[:, None] + (right_end - left_end)[:, None] * np.linspace(0.0, 1.0, _PANELS + 1), mode[:, None]]
    if not smooth:
        near = kinks
        if kink_scale is not None and kink_scale < scale / 4:
            offsets = kink_scale * np.array([-20.0, -8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0, 20.0])
            near = (kinks[:, :, None] + offsets).reshape(G, -1)
        parts.append(np.clip(near, left_end[:, None], right_end[:, None]))
    bp = np.sort(np.concatenate(parts, axis=1), axis=1)                   # (G, P + 1)
    v = log_f(bp[:, None, :])[:, 0, :]
    # every panel lies on one side of the mode, where log f is monotone: the change between its
    # ends is its whole variation. Split it into equal pieces over each of which log f changes by
    # at most _STEP (8-point Gauss-Legendre then integrates an exponential to 1e-12), unless the
    # panel is negligible (below e^-60 of the peak)
    change = np.nan_to_num(np.abs(np.diff(v, axis=1)), nan=_DROP, posinf=_DROP)
    matters = np.maximum(v[:, :-1], v[:, 1:]) >= (top - _DROP - 10.0)[:, None]
    need = np.ceil(change / _STEP)
    if not smooth:   # next to a kink log f bends over a few noise scales: pieces at most _WIDE of them
        need = np.maximum(need, np.ceil(np.diff(bp, axis=1) / (_WIDE * scale)))
    pieces = np.where(matters, np.clip(need, 1, _MAX_PIECES), 1).astype(np.int64)
    P = pieces.shape[1]
    count = pieces.sum(axis=1)
    flat = np.repeat(np.arange(G * P), pieces.ravel())                    # the panel of each piece
    row, panel = np.divmod(flat, P)
    first = np.repeat(np.cumsum(pieces.ravel()) - pieces.ravel(), pieces.ravel())
    local = np.arange(flat.size) - first                                  # the piece's place in its panel
    pos = np.arange(flat.size) - np.repeat(np.cumsum(count) - count, count)   # its place in its row
    width = (bp[row, panel + 1] - bp[row, panel]) / pieces[row, panel]
    lo_p = np.repeat(left_end[:, None], count.max(), axis=1)              # padding: empty pieces
    hi_p = lo_p.copy()
    lo_p[row, pos] = bp[row, panel] + local * width
    hi_p[row, pos] = lo_p[row, pos] + width
    xg, wg = _GL8
    half = 0.5 * (hi_p - lo_p)
    nodes = (0.5 * (hi_p + lo_p))[..., None] + half[..., None] * xg
    with np.errstate(divide="ignore"):
        log_w = np.log(half[..., None] * wg)
    vals = log_f(nodes) + log_w
    out = special.logsumexp(vals.reshape(G, -1), axis=1)
    return np.where(np.isfinite(top), out, -np.inf)


@dataclass(frozen=True)
class ThresholdEvent:
    """Each candidate was reported exactly when its score plus independent ``noise`` of ``scale``
    exceeded ``threshold``; ``selected`` are the positions reported (the others were not).
    With ``above=False``, reported when below the threshold instead."""

    selected: tuple
    threshold: float
    noise: str = "laplace"
    scale: float = 1.0
    above: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "selected", _indices("selected", self.selected))
        noise, scale = _check_noise(self.noise, self.scale)
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "threshold", _finite("threshold", self.threshold))
        if not isinstance(self.above, (bool, np.bool_)):
            raise TypeError(f"`above` must be True or False; got {self.above!r}.")

    @property
    def noise_scale(self) -> float:
        return self.scale

    def kink_scores(self) -> np.ndarray | None:
        """The score at which log pi has a kink: the threshold (Laplace noise); None otherwise (smooth)."""
        return np.asarray(self.threshold) if self.noise == "laplace" else None

    def check(self, m: int) -> None:
        if self.selected and max(self.selected) >= m:
            raise ValueError(f"`selected` {self.selected!r} must index the {m} candidates.")

    def log_prob(self, s: np.ndarray) -> np.ndarray:
        sel = np.zeros(s.shape[1], bool)
        sel[list(self.selected)] = True
        d = (self.threshold - s) if self.above else (s - self.threshold)
        # reported: W > t - s (above) or -W > s - t; by symmetry both are sf of d for symmetric noise
        if self.noise == "gumbel" and not self.above:
            rep, nrep = _logcdf(self.noise, self.scale, -d), _logsf(self.noise, self.scale, -d)
        else:
            rep, nrep = _logsf(self.noise, self.scale, d), _logcdf(self.noise, self.scale, d)
        return np.sum(np.where(sel[None, :], rep, nrep), axis=1)


@dataclass(frozen=True)
class SparseVectorEvent:
    """Sparse / AboveThreshold (Dwork and Roth 2014, Algorithms 1 and 2) with Laplace noise: the
    queries at positions ``asked`` (in the order asked) got the answers ``above`` (True: the
    noisy score reached the noisy threshold, ``score + nu >= threshold + rho``), the threshold
    noise ``rho ~ Lap(threshold_scale)`` drawn afresh after every True, query noise
    ``nu ~ Lap(query_scale)`` per query. Candidates not asked play no part."""

    asked: tuple
    above: tuple
    threshold: float
    threshold_scale: float
    query_scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "asked", _indices("asked", self.asked))
        ans = tuple(bool(a) for a in self.above)
        if len(ans) != len(self.asked) or not ans:
            raise ValueError(f"`above` must give one answer per asked query ({len(self.asked)}); got {self.above!r}.")
        object.__setattr__(self, "above", ans)
        for name in ("threshold_scale", "query_scale"):
            _check_noise("laplace", getattr(self, name))
        object.__setattr__(self, "threshold", _finite("threshold", self.threshold))

    @property
    def selected(self) -> tuple:
        return tuple(q for q, a in zip(self.asked, self.above, strict=True) if a)

    @property
    def noise_scale(self) -> float:
        return min(self.threshold_scale, self.query_scale)

    def check(self, m: int) -> None:
        if max(self.asked) >= m:
            raise ValueError(f"`asked` {self.asked!r} must index the {m} candidates.")

    def log_prob(self, s: np.ndarray) -> np.ndarray:
        s = _finite_scores(s)
        total = np.zeros(s.shape[0])
        seg: list[int] = []
        for q, a in zip(self.asked, self.above, strict=True):
            seg.append(q)
            if a:
                total += self._segment(s, seg, True)
                seg = []
        if seg:
            total += self._segment(s, seg, False)
        return total

    def _segment(self, s, queries, ends_above):
        """log int p(r) prod_{below} P(nu < t + r - s_q) [P(nu >= t + r - s_last)] dr."""
        b1, b2, t = self.threshold_scale, self.query_scale, self.threshold
        below = queries[:-1] if ends_above else queries

        def log_f(r):
            out = _logpdf("laplace", b1, r)
            for q in below:
                out = out + _logcdf("laplace", b2, (t - s[:, q])[:, None, None] + r)
            if ends_above:
                out = out + _logsf("laplace", b2, (t - s[:, queries[-1]])[:, None, None] + r)
            return out
        kinks = np.column_stack([np.zeros(s.shape[0])] + [s[:, q] - t for q in queries])
        return _panel_log_integral(log_f, kinks, max(b1, b2), kink_scale=min(b1, b2))


@dataclass(frozen=True)
class ReleaseEvent:
    """The noisy scores themselves were released: ``values[j] = score_j + W_j`` with independent
    ``noise`` (Laplace or Gaussian) of ``scale`` (the noisy-statistics mechanism). Conditioning
    on the whole release makes a test chosen from it valid, whatever the choice, as long as the
    choice depends on the data only through the release (choosing by the un-noised statistics
    breaks it: measured, 0.30 at 0.05); the targets must be named (nothing is "selected").
    ``log_prob`` is the log density of the release given the
    scores, in units of the noise scale (each factor at most 1/2 or :math:`1/\\sqrt{2\\pi}`),
    not a probability."""

    values: tuple
    noise: str = "laplace"
    scale: float = 1.0

    def __post_init__(self) -> None:
        try:
            vals = tuple(float(v) for v in np.asarray(self.values, dtype=float).ravel())
        except (TypeError, ValueError):
            raise TypeError(f"`values` must be a sequence of finite numbers; got {self.values!r}.") from None
        if not vals or not all(math.isfinite(v) for v in vals):
            raise ValueError(f"`values` must be a non-empty sequence of finite numbers; got {self.values!r}.")
        object.__setattr__(self, "values", vals)
        if self.noise == "gumbel":
            raise ValueError("`noise` must be 'laplace' or 'gaussian' for a release (the noisy-statistics "
                             "mechanisms); got 'gumbel'.")
        noise, scale = _check_noise(self.noise, self.scale)
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "scale", scale)

    #: log pi is a closed form, linear (Laplace) or quadratic (Gaussian) between kinks
    closed_form = True

    @property
    def selected(self) -> tuple:
        return ()

    def kink_scores(self) -> np.ndarray | None:
        """Per score, the value at which log pi has a kink: the released one (Laplace noise);
        None for Gaussian noise (smooth)."""
        return np.asarray(self.values) if self.noise == "laplace" else None

    @property
    def noise_scale(self) -> float:
        return self.scale

    def check(self, m: int) -> None:
        if len(self.values) != m:
            raise ValueError(f"`values` must hold one released value per score ({m}); got {len(self.values)}.")

    def log_prob(self, s: np.ndarray) -> np.ndarray:
        z = (np.asarray(self.values)[None, :] - s) / self.scale
        if self.noise == "gaussian":
            return np.sum(-0.5 * z * z, axis=1) - s.shape[1] * 0.5 * math.log(2 * math.pi)
        return np.sum(-np.abs(z), axis=1) - s.shape[1] * math.log(2.0)


@dataclass(frozen=True)
class IntervalEvent:
    """The score at ``position`` plus independent ``noise`` of ``scale`` landed in
    ``[lower, upper]`` (either end may be infinite); the other scores play no part. This is the
    event left of a polyhedral selection made from a randomized response :math:`y+\\omega`, along
    the direction of one target (:mod:`selective.conditional.randomized_response`); with one
    infinite end it is a one-sided threshold."""

    lower: float
    upper: float
    noise: str = "gaussian"
    scale: float = 1.0
    position: int = 0

    def __post_init__(self) -> None:
        noise, scale = _check_noise(self.noise, self.scale)
        object.__setattr__(self, "noise", noise)
        object.__setattr__(self, "scale", scale)
        ends = []
        for name in ("lower", "upper"):
            try:
                v = float(getattr(self, name))
            except (TypeError, ValueError):
                raise TypeError(f"`{name}` must be a number (possibly infinite); "
                                f"got {getattr(self, name)!r}.") from None
            if math.isnan(v):
                raise ValueError(f"`{name}` must not be NaN; got {getattr(self, name)!r}.")
            ends.append(v)
        if not ends[0] < ends[1]:
            raise ValueError(f"`lower` must be below `upper`; got lower={self.lower!r}, upper={self.upper!r}.")
        object.__setattr__(self, "lower", ends[0])
        object.__setattr__(self, "upper", ends[1])
        pos = _indices("position", [self.position])[0]
        object.__setattr__(self, "position", pos)

    @property
    def selected(self) -> tuple:
        return (self.position,)

    @property
    def noise_scale(self) -> float:
        return self.scale

    def check(self, m: int) -> None:
        if self.position >= m:
            raise ValueError(f"`position` {self.position!r} must index the {m} candidates.")

    def log_prob(self, s: np.ndarray) -> np.ndarray:
        """log P(lower <= s + W <= upper) = log(F(upper - s) - F(lower - s)), from the side where
        the difference does not cancel: distribution functions below the noise's median, survival
        functions above it."""
        x = s[:, self.position]
        lo, hi = self.lower - x, self.upper - x
        med = 0.0 if self.noise != "gumbel" else -self.scale * math.log(math.log(2.0))
        upper_side = lo > med   # both ends above the median: P = sf(lo) - sf(hi)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a = np.where(upper_side, _logsf(self.noise, self.scale, lo), _logcdf(self.noise, self.scale, hi))
            b = np.where(upper_side, _logsf(self.noise, self.scale, hi), _logcdf(self.noise, self.scale, lo))
            out = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
        return np.where(np.isnan(out), -np.inf, out)
