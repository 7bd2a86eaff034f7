r"""The conditional column of the report: inference on winners after a top-k screen.

After a :class:`~selective.selectors.NoisyTopK` screen (the exponential mechanism) or a
:class:`~selective.selectors.SparseVectorScreen` over the same scores, the column is the
randomized conditional p-value and interval instead:
:func:`selective.conditional.randomized_inference` with the mechanism's Gumbel law
(docs/THEORY.md 3.12), under the same scope rules and the same trust rule (with the selection's
probability in place of the truncation interval's mass). After a screen by signed clipped means
the tested difference of the groups' means is not a ranked score: its law given the screen is
:func:`selective.conditional.randomized_target_inference` (``_signed_target``).

A test run with ``Analysis.test(spec, conditional_on=selection)`` gets, beside the ledger's
corrected columns, a p-value and interval *conditional on the selection*: the candidate was
one of the top k of a :class:`~selective.selectors.TopK` screen whose scores are normal
statistics with a covariance the data estimate (differences of group means and their t
statistics, :class:`~selective.selectors.TwoGroupScores`; means and one-sample t statistics,
:class:`~selective.selectors.CandidateScores`). The p-value is the truncated-normal pivot of
:func:`selective.conditional.winners_inference` (Andrews, Kitagawa and McCloskey 2024, Section 3;
docs/THEORY.md 3.9): exact given the ranking when the statistics are jointly normal with the
covariance used, asymptotically valid when the covariance is estimated.

When the column is withheld (with its reason in the note):

* the ledger holds another step than this screen (the pivot conditions on one step only: an
  earlier look that chose the family, or a later one, is not accounted for), or the ledger's
  corrections are void;
* on Dask data, the screen's columns (every candidate and the group) would not fit under the
  analysis' ``max_collect_bytes`` (the statistics' covariance needs them in memory; within it
  they are collected, and the column is the same as on the pandas frame);
* the analysis declares ``units`` (the covariance assumes independent rows);
* more than :data:`MAX_CANDIDATES` candidates (the covariance matrix is not formed);
* the normal approximation is not trusted where the test is used: a conditional test at level
  alpha rejects on an event of unconditional probability alpha times :math:`P_0(V^- \le X_j \le
  V^+)` (the mass of the truncation interval), so the column is shown when the large-sample
  z-test of the same hypothesis (normal reference, same data) is trusted at that level, or
  when the unconditional normal p-value of the statistic is itself at or above that z-test's
  trusted level (every rejection the conditional p-value implies then happens in trusted
  tails); the rule of docs/THEORY.md 7.1 applied to the conditional tail. The interval follows
  the first condition only.

The statistics are recomputed from the rows at report time; if their ranking does not give the
selection that was made (ties, or a score that is not the one described), the column is
withheld rather than conditioned on an event that did not happen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.special

from ..conditional.winners import winners_inference
from ..hypotheses.means import OneSampleTTest, OneSampleZTest, TwoSampleTTest, TwoSampleZTest
from ..selectors.base import declared_columns
from ..selectors.clipped_scores import ClippedMeanScores, SignedClippedMeanScores
from ..selectors.dp import NoisyStatistic, SparseVectorScreen
from ..selectors.scores import CandidateScores, TwoGroupScores
from ..selectors.streaming import is_dask_frame
from ..selectors.topk import NoisyTopK, TopK
from ._signed_target import check_signed_test, signed_scores, signed_target
from .carving_rows import CARVING_SELECTORS, CarvingLink, carving_cell, link_carving
from .report import CONDITIONAL_COLUMNS, HYBRID_COLUMNS
from .sources import CollectTooLargeError, collect_columns
from .transcript_rows import TranscriptLink, link_transcript, transcript_cell, transcript_of

__all__ = ["CONDITIONAL_COLUMNS", "MAX_CANDIDATES", "WinnersLink", "link_winners", "conditional_cells"]

#: Screens over more candidates are not conditioned on (their covariance matrix would be formed).
MAX_CANDIDATES = 4000

_TWO_SAMPLE = (TwoSampleTTest, TwoSampleZTest)
_SCREENS = (TopK, NoisyTopK, SparseVectorScreen, NoisyStatistic)
_RANDOMIZED = (NoisyTopK, SparseVectorScreen, NoisyStatistic)


def _score_of(selector: Any) -> Any:
    """The score a screen ranked (the statistic a NoisyStatistic released)."""
    return selector.statistic if isinstance(selector, NoisyStatistic) else selector.score


def _candidates_of(selector: Any) -> tuple:
    """The declared candidates of a screen (the declared index of a NoisyStatistic)."""
    return tuple(selector.index or ()) if isinstance(selector, NoisyStatistic) else tuple(selector.candidates)
_ONE_SAMPLE = (OneSampleTTest, OneSampleZTest)


@dataclass(frozen=True)
class WinnersLink:
    """A test tied to a top-k step: which step, which candidate, and the hypothesis."""

    step: int            # position of the selection among the analysis' selections
    selection: Any
    selector: Any
    candidate: Any
    value: float         # the tested value on the parameter's scale
    alternative: str
    levels: tuple | None = None   # the test's group levels, after a signed clipped mean screen


def _supported(score: Any, selector: Any) -> str | None:
    """Why ``score`` cannot be conditioned on, or None."""
    if isinstance(score, (TwoGroupScores, ClippedMeanScores)):
        return None
    if isinstance(score, SignedClippedMeanScores):
        return None if isinstance(selector, _RANDOMIZED) else (
            "after a TopK screen by signed clipped means, inference on winners is not available (it tests the "
            "ranked scores themselves); a NoisyTopK or SparseVectorScreen screen by the same score has its "
            "randomized conditional column")
    if isinstance(score, CandidateScores):
        if score.target is not None or score.kind not in ("mean", "t"):
            return (f"CandidateScores(kind={score.kind!r}, target={score.target!r}) is not supported (only kind 'mean' "
                    "or 't' without a target: means and one-sample t statistics)")
        return None
    return (f"the screen's score is {type(score).__name__}; inference on winners needs a TwoGroupScores, a "
            "CandidateScores(kind='mean' or 't') or a ClippedMeanScores score, whose statistics are normal with a "
            "covariance the data give")


def link_winners(spec: Any, selection: Any, selections: list,
                 selectors: list) -> WinnersLink | CarvingLink | TranscriptLink:
    """Check that ``selection`` is one of ``selections`` (made by the matching one of
    ``selectors``), a screen this module supports, and that ``spec`` tests the parameter it ranked
    for one of its winners; return the link (raises with the reason otherwise)."""
    step = next((i for i, s in enumerate(selections) if s is selection), None)
    if step is None:
        raise ValueError("`conditional_on` must be a selection returned by this analysis' select(); got "
                         f"{selection!r}.")
    selector = selectors[step]
    if selector is None and transcript_of(selection) is not None:
        return link_transcript(spec, selection, step)
    if isinstance(selector, CARVING_SELECTORS):
        return link_carving(spec, selection, step, selector)
    if not isinstance(selector, _SCREENS):
        made = "Analysis.record" if selector is None else type(selector).__name__
        raise TypeError(f"`conditional_on` must be the selection of a TopK, NoisyTopK, SparseVectorScreen, "
                        f"NoisyStatistic, RandomizedLassoSupport, RandomizedForwardStepwise or TTestScreen step, or "
                        f"a recorded SparseValidate.selection(); "
                        f"step {step + 1} was made by {made}.")
    if isinstance(selector, NoisyStatistic) and selector.index is None:
        raise TypeError("`conditional_on`: the NoisyStatistic released a single number; the conditional column "
                        "needs a vector release with a declared `index` of candidates.")
    problem = _supported(_score_of(selector), selector)
    if problem:
        raise TypeError(f"`conditional_on`: {problem}.")
    score = _score_of(selector)
    column, levels = getattr(spec, "column", None), None
    if isinstance(score, SignedClippedMeanScores):
        levels = check_signed_test(spec, score)
    elif isinstance(score, TwoGroupScores):
        if not isinstance(spec, _TWO_SAMPLE) or spec.group != score.group or spec.levels != score.levels:
            raise ValueError(
                f"`conditional_on`: the screen ranked differences of means of group {score.group!r} levels "
                f"{score.levels!r}, so the test must be a TwoSampleTTest or TwoSampleZTest with group={score.group!r} "
                f"and levels={score.levels!r}; got {spec!r}.")
    elif not isinstance(spec, _ONE_SAMPLE):
        raise ValueError(f"`conditional_on`: the screen ranked column means, so the test must be a OneSampleTTest or "
                         f"OneSampleZTest; got {spec!r}.")
    elif (spec.clip is None) != (not isinstance(score, ClippedMeanScores)) or (
            spec.clip is not None and float(spec.clip) != float(score.clip)):
        want = f"clip={float(score.clip)!r}" if isinstance(score, ClippedMeanScores) else "clip=None"
        raise ValueError(f"`conditional_on`: the screen ranked means of the values clipped at "
                         f"{getattr(score, 'clip', None)!r} (None: not clipped), so the test must test the same mean: "
                         f"give the test {want}; got clip={spec.clip!r}.")
    chosen = _candidates_of(selector) if isinstance(selector, NoisyStatistic) else tuple(selection.value)
    if column not in chosen:
        raise ValueError(f"`conditional_on`: the test's column {column!r} is not among the selected candidates "
                         f"{chosen!r}.")
    return WinnersLink(step=step, selection=selection, selector=selector, candidate=column,
                       value=float(spec.value), alternative=spec.alternative, levels=levels)


def _two_group(score: TwoGroupScores, data: pd.DataFrame):
    cols = list(score.columns)
    g = data[score.group].to_numpy()
    a = data.loc[g == score.levels[0], cols].to_numpy(dtype=float)
    b = data.loc[g == score.levels[1], cols].to_numpy(dtype=float)
    na, nb = a.shape[0], b.shape[0]
    if na < 2 or nb < 2:
        return None
    sa, sb = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    cov_d = sa / na + sb / nb
    diff = a.mean(axis=0) - b.mean(axis=0)
    if score.kind == "difference":
        scale = np.ones(len(cols))
    elif score.kind == "welch_t":
        scale = np.sqrt(np.diag(cov_d))
    else:  # student_t: the pooled standard error
        sp2 = ((na - 1) * np.diag(sa) + (nb - 1) * np.diag(sb)) / (na + nb - 2)
        scale = np.sqrt(sp2 * (1.0 / na + 1.0 / nb))
    return diff, cov_d, scale


def _labels(score: Any) -> list:
    """The score's candidates in the order of its statistics."""
    return list(score.candidates if isinstance(score, CandidateScores) else score.columns)


def _one_sample(score: Any, data: pd.DataFrame):
    x = data[_labels(score)].to_numpy(dtype=float)
    if isinstance(score, ClippedMeanScores):
        x = np.clip(x, -score.clip, score.clip)
    n = x.shape[0]
    if n < 2:
        return None
    cov_m = np.atleast_2d(np.cov(x, rowvar=False)) / n
    scale = np.sqrt(np.diag(cov_m)) if getattr(score, "kind", "mean") == "t" else np.ones(x.shape[1])
    return x.mean(axis=0), cov_m, scale


def _z_trusted(link: WinnersLink, data: pd.DataFrame) -> float:
    """The trusted level of the large-sample z-test of the same hypothesis on the same rows."""
    score = _score_of(link.selector)
    if isinstance(score, SignedClippedMeanScores):
        z = TwoSampleZTest(column=link.candidate, group=score.sign_column, levels=link.levels, usevar="unequal",
                           value=link.value, alternative=link.alternative)
    elif isinstance(score, TwoGroupScores):
        usevar = "pooled" if score.kind == "student_t" else "unequal"
        z = TwoSampleZTest(column=link.candidate, group=score.group, levels=score.levels, usevar=usevar,
                           value=link.value, alternative=link.alternative)
    else:
        z = OneSampleZTest(column=link.candidate, value=link.value, alternative=link.alternative,
                           clip=getattr(score, "clip", None) if isinstance(score, ClippedMeanScores) else None)
    level = float(getattr(z.run(data), "trusted_level", 0.0) or 0.0)
    return level if math.isfinite(level) else 1.0


def _log_mass(vlo: float, vup: float, mu: float, sd: float) -> float:
    """log P(vlo <= X <= vup) for X ~ N(mu, sd^2), accurate in either tail."""
    a, b = (vlo - mu) / sd, (vup - mu) / sd
    if a > 0:  # upper tail: Phi(-a) - Phi(-b)
        a, b = -b, -a
    la, lb = scipy.special.log_ndtr(a), scipy.special.log_ndtr(b)
    if lb == -math.inf:
        return -math.inf
    return float(lb + np.log1p(-np.exp(min(la - lb, 0.0)))) if la > -math.inf else float(lb)


def _rows(links: list, data: Any, n_rows: int, max_collect_bytes: int) -> tuple[Any, str | None]:
    """The rows the statistics are recomputed from: ``data``, or on Dask data the screens'
    columns collected (within ``max_collect_bytes``), or None and the reason."""
    if not is_dask_frame(data):
        return data, None
    cols: list = []
    for link in links:
        if link is not None and not isinstance(link, (CarvingLink, TranscriptLink)):
            cols += [c for v in declared_columns(_score_of(link.selector)).values() for c in v if c not in cols]
    try:
        return collect_columns(data, cols, n_rows=n_rows, max_bytes=max_collect_bytes), None
    except CollectTooLargeError as exc:
        return None, f"conditional withheld: the screen's columns are not collected from the Dask data ({exc})"


def conditional_cells(links: list[WinnersLink | None], data: Any, *, alpha: float, n_steps: int, n_rows: int,
                      void: bool, units: Any = None, max_collect_bytes: int = 2**30) -> list[dict[str, Any] | None]:
    """The conditional columns and a note for each test (None for a test without a link)."""
    out: list[dict[str, Any] | None] = []
    cache: dict = {}
    rows, too_large = _rows(links, data, n_rows, max_collect_bytes)
    for link in links:
        if link is None:
            out.append(None)
            continue
        cell = _cell(link, data, rows, too_large, alpha=alpha, n_steps=n_steps, void=void, units=units, cache=cache)
        if link.alternative != "two-sided" and cell.get("ci_conditional_low") == cell.get("ci_conditional_low"):
            _one_sided_bound(cell, link, data, rows, too_large, alpha=alpha, n_steps=n_steps, void=void, units=units,
                             cache=cache)
        out.append(cell)
    return out


def _cell(link, data, rows, too_large, *, alpha, n_steps, void, units, cache) -> dict[str, Any]:
    if isinstance(link, TranscriptLink):
        return transcript_cell(link, data if rows is None else rows, alpha=alpha, n_steps=n_steps, void=void,
                               columns=CONDITIONAL_COLUMNS)
    if isinstance(link, CarvingLink):
        return carving_cell(link, data if rows is None else rows, alpha=alpha, n_steps=n_steps, void=void,
                            units=units, cache=cache)
    hybrid = () if isinstance(link.selector, _RANDOMIZED) else HYBRID_COLUMNS  # winners of a TopK screen
    cell = {c: math.nan for c in CONDITIONAL_COLUMNS + hybrid}
    reason = _scope_reason(link, n_steps=n_steps, void=void, units=units) or too_large
    cell["note"] = reason if reason is not None else _fill(cell, link, rows, alpha, cache)
    return cell


def _one_sided_bound(cell, link, data, rows, too_large, *, alpha, **kw) -> None:
    """A one-sided test's conditional interval: the one-sided 1 - alpha bound, i.e. the matching end of
    the equal-tailed 1 - 2 alpha interval of the same exact pivot (each of its tails has probability
    alpha), the other end infinite, as the naive column's one-sided interval."""
    if 2 * alpha >= 1:
        cell["note"] += (f"; the conditional interval is two-sided (equal tails, {1 - alpha:g}) while the test is "
                         f"one-sided ({link.alternative})")
        return
    wide = _cell(link, data, rows, too_large, alpha=2 * alpha, **kw)
    lo, hi = wide["ci_conditional_low"], wide["ci_conditional_high"]
    if link.alternative == "greater":
        cell["ci_conditional_low"], cell["ci_conditional_high"] = lo, math.inf
    else:
        cell["ci_conditional_low"], cell["ci_conditional_high"] = -math.inf, hi
    cell["note"] += (f"; the conditional interval is the one-sided {1 - alpha:g} bound of the test's direction "
                     f"({link.alternative}): the end of the equal-tailed {1 - 2 * alpha:g} interval")


def _scope_reason(link: WinnersLink, *, n_steps: int, void: bool, units: Any) -> str | None:
    if void:
        return "conditional withheld: the ledger is void"
    if units is not None:
        return (f"conditional withheld: rows are grouped in units ({units!r}), and the statistics' covariance "
                "assumes independent rows")
    if n_steps != 1:
        return (f"conditional withheld: it conditions on step {link.step + 1} only, and the ledger has {n_steps} "
                "steps")
    n = len(_candidates_of(link.selector))
    if n > MAX_CANDIDATES:
        return f"conditional withheld: {n} candidates, more than {MAX_CANDIDATES}"
    return None


def _fill(cell: dict, link: WinnersLink, data: pd.DataFrame, alpha: float, cache: dict) -> str:
    if isinstance(link.selector, _RANDOMIZED):
        return _fill_randomized(cell, link, data, alpha, cache)
    score = link.selector.score
    key = (id(link.selection), link.candidate, link.value, link.alternative, alpha)
    stats = _stats(link, data, cache)
    if stats is None:
        return "conditional withheld: a group has fewer than 2 rows"
    est, cov, scale = stats
    labels = _labels(score)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = est / scale
        sigma = cov / np.outer(scale, scale)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(sigma)) and np.all(np.diag(sigma) > 0)):
        return _degenerate(x, sigma, labels)
    k = link.selector.k
    by = "abs" if score.absolute else "value"
    keyed = np.abs(x) if by == "abs" else x
    top = set(np.argsort(-keyed, kind="stable")[:k].tolist())
    if {labels[i] for i in top} != set(link.selection.value):
        return "conditional withheld: the recomputed statistics do not rank as the selection did"
    j = labels.index(link.candidate)
    nulls = np.zeros(len(labels))
    nulls[j] = link.value / scale[j]
    if key not in cache:
        cache[key] = winners_inference(pd.Series(x, index=labels), sigma, k=k, by=by, alpha=alpha,
                                       null_value=nulls, alternative=link.alternative)
    res = cache[key]
    r = list(res.candidates).index(link.candidate)
    u0 = _z_trusted(link, data)
    log_level = math.log(alpha) + _log_mass(res.vlo[r], res.vup[r], nulls[j], res.sd[r])
    level_ok = u0 <= 0 or log_level >= math.log(u0)
    what = (f"conditional: given the top-{k} ranking of step {link.step + 1} (inference on winners, Andrews, "
            "Kitagawa and McCloskey 2024), assumes the candidates' statistics jointly normal with the estimated "
            "covariance")
    hybrid = _fill_hybrid(cell, res, r, nulls[j], scale[j], u0, alpha, link.alternative)
    if level_ok or res.pvalue_naive[r] >= u0:
        cell["pvalue_conditional"] = float(res.pvalue_conditional[r])
    if level_ok:
        cell["ci_conditional_low"], cell["ci_conditional_high"] = (float(v) * scale[j] for v in res.ci_conditional[r])
        return f"{what}; {hybrid}"
    shown = "interval" if cell["pvalue_conditional"] == cell["pvalue_conditional"] else "p-value and interval"
    return (f"{what}; conditional {shown} withheld: the selection event has null probability "
            f"{math.exp(log_level) / alpha:.2g}, so a test at {alpha:g} uses the normal tail at "
            f"{math.exp(log_level):.2g}, below {u0:.2g} where the z-test is trusted; {hybrid}")


def _degenerate(x: np.ndarray, sigma: np.ndarray, labels: list) -> str:
    """The withheld note when a candidate's statistic or variance is not finite or is zero, naming them."""
    bad = [labels[i] for i in range(len(labels))
           if not (np.isfinite(x[i]) and np.all(np.isfinite(sigma[i])) and sigma[i, i] > 0)]
    return (f"conditional withheld: the statistic or variance of candidate(s) {bad[:5]!r} is not finite or is zero "
            "(a constant column?), and the covariance of the candidates' statistics needs every one")


def _fill_hybrid(cell: dict, res: Any, r: int, mu0: float, scale: float, u0: float, alpha: float,
                 alternative: str) -> str:
    """The hybrid cells of inference on winners (AKM Section 4, docs/THEORY.md 3.9) and their note.

    The hybrid test at ``alpha`` rejects on two events: the projection test (the normal tail
    beyond the Bonferroni critical value, null probability beta / K, or beta / (2K) one-sided),
    and the conditional test at (alpha - beta) / (1 - beta) within the projection interval (null
    probability that level times the normal mass of the truncation interval cut to the projection
    interval). Both must lie in tails where the z-test is trusted, or the cells are withheld.
    """
    beta, n = float(res.beta), int(res.n_candidates)
    crit = float(scipy.special.ndtri(1.0 - beta / (2.0 * n)))
    sd = float(res.sd[r])
    lo, hi = max(float(res.vlo[r]), mu0 - crit * sd), min(float(res.vup[r]), mu0 + crit * sd)
    log_proj = math.log(beta / n if alternative == "two-sided" else beta / (2.0 * n))
    log_cond = math.log((alpha - beta) / (1.0 - beta)) + (_log_mass(lo, hi, mu0, sd) if lo < hi else -math.inf)
    what = f"hybrid: beta = {beta:g}, Bonferroni projection over {n} candidates"
    worst = min(log_proj, log_cond)
    if u0 > 0 and worst < math.log(u0):
        return (f"{what}, withheld: a hybrid test at {alpha:g} uses the normal tail at {math.exp(worst):.2g}, below "
                f"{u0:.2g} where the z-test is trusted")
    cell["pvalue_hybrid"] = float(res.pvalue_hybrid[r])
    cell["ci_hybrid_low"], cell["ci_hybrid_high"] = (float(v) * scale for v in res.ci_hybrid[r])
    if not np.all(np.isfinite(res.ci_hybrid[r])):
        what += " (hybrid interval empty: no value in the projection interval is accepted)"
    return what


def _stats(link: WinnersLink, data: pd.DataFrame, cache: dict):
    score = _score_of(link.selector)
    if id(link.selection) not in cache:
        cache[id(link.selection)] = (_two_group(score, data) if isinstance(score, TwoGroupScores) else
                                     signed_scores(score, data) if isinstance(score, SignedClippedMeanScores) else
                                     _one_sample(score, data))
    return cache[id(link.selection)]


def _fill_randomized(cell: dict, link: WinnersLink, data: pd.DataFrame, alpha: float, cache: dict) -> str:
    """The column after a randomized screen: the law of the tested statistic given the noisy top-k
    selection (exponential mechanism = Gumbel top-k), the Sparse Vector answers, or the noisy
    release itself (NoisyStatistic), docs/THEORY.md 3.12."""
    from ..conditional.randomized import randomized_inference

    sel, score = link.selector, _score_of(link.selector)
    stats = _stats(link, data, cache)
    if stats is None:
        return "conditional withheld: a group has fewer than 2 rows"
    est, cov, scale = stats
    # the mechanism ranked the selector's candidates, in their declared order: restrict to them
    score_labels = _labels(score)
    labels = list(_candidates_of(sel))
    if not set(labels) <= set(score_labels):
        return "conditional withheld: the screen's candidates are not all columns of its score"
    idx = [score_labels.index(c) for c in labels]
    est, cov, scale = est[idx], cov[np.ix_(idx, idx)], scale[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = est / scale
        sigma = cov / np.outer(scale, scale)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(sigma)) and np.all(np.diag(sigma) > 0)):
        return _degenerate(x, sigma, labels)
    seen = np.abs(x) if score.absolute else x
    raw = score(data) if isinstance(data, pd.DataFrame) else seen
    used = np.asarray(raw.reindex(labels) if isinstance(raw, pd.Series) else raw, dtype=float)
    # clipped means are read from an exact grid of spacing at most clip / 2^31 (rounded toward 0)
    atol = float(score.clip) * 2.0**-30 if isinstance(score, (ClippedMeanScores, SignedClippedMeanScores)) else 1e-12
    if not np.allclose(used, seen, rtol=1e-9, atol=atol):
        return "conditional withheld: the recomputed statistics are not the scores the screen used"
    event, how = _event(sel, labels, link.selection.value)
    j = labels.index(link.candidate)
    nulls = np.zeros(len(labels))
    nulls[j] = link.value / scale[j]
    key = ("randomized", id(link.selection), link.candidate, link.value, link.alternative, alpha, link.levels)
    if key not in cache:
        try:
            if isinstance(score, SignedClippedMeanScores):
                cache[key] = _signed_inference(score, data, link, x, sigma, event, idx, alpha)
            else:
                cache[key] = randomized_inference(pd.Series(x, index=labels), sigma, event,
                                                  targets=[j], null_value=nulls, alpha=alpha,
                                                  alternative=link.alternative, absolute=bool(score.absolute))
        except ValueError as exc:
            cache[key] = str(exc)
    res = cache[key]
    if isinstance(res, str):
        return f"conditional withheld: {res}"
    u0 = _z_trusted(link, data)
    release = isinstance(sel, NoisyStatistic)
    # the normal tail the test relies on: alpha times the selection's null probability, or for
    # a release (a density, not a probability) the null tail beyond the rejection boundary
    log_level = (float(res.log_boundary_tail[0]) if release
                 else math.log(alpha) + float(res.log_selection_probability[0]))
    level_ok = u0 <= 0 or log_level >= math.log(u0)
    jointly = ("the candidates' signed clipped means and the tested difference of means" if
               isinstance(score, SignedClippedMeanScores) else "the candidates' statistics")
    what = (f"conditional: given the {how} of step {link.step + 1} (randomized selective inference; Tian and Taylor "
            f"2018), assumes {jointly} jointly normal with the estimated covariance")
    if level_ok or res.pvalue_naive[0] >= u0:
        cell["pvalue_conditional"] = float(res.pvalue[0])
    if level_ok:
        cell["ci_conditional_low"], cell["ci_conditional_high"] = (float(v) * scale[j] for v in res.ci[0])
        return what
    shown = "interval" if cell["pvalue_conditional"] == cell["pvalue_conditional"] else "p-value and interval"
    if release:
        return (f"{what}; conditional {shown} withheld: given the release, a test at {alpha:g} rejects beyond a "
                f"point where the null normal tail is {math.exp(log_level):.2g}, below {u0:.2g} where the z-test "
                "is trusted")
    return (f"{what}; conditional {shown} withheld: the selection has null probability "
            f"{math.exp(log_level) / alpha:.2g}, so a test at {alpha:g} uses the normal tail at "
            f"{math.exp(log_level):.2g}, below {u0:.2g} where the z-test is trusted")


def _signed_inference(score, data, link, x, sigma, event, idx, alpha):
    """The law of the tested difference of means given a screen by signed clipped means."""
    from ..conditional.randomized_target import randomized_target_inference

    target = signed_target(score, data, link.candidate, link.levels)
    if isinstance(target, str):
        return target
    d, v, g = target
    return randomized_target_inference(x, sigma, event, d, v, g[idx], null_value=link.value, alpha=alpha,
                                       alternative=link.alternative, absolute=bool(score.absolute),
                                       name=link.candidate)


def _event(sel: Any, labels: list, value: tuple):
    """The randomized selection a screen made, with the noise law its exact sampler used."""
    from ..conditional.randomized import NoisyTopKEvent, ReleaseEvent, SparseVectorEvent

    if isinstance(sel, NoisyStatistic):
        b = sel.noise_scale()
        r = pd.Series(value).reindex(labels).to_numpy(dtype=float)
        return (ReleaseEvent(r, sel.noise, b),
                f"noisy release ({sel.noise} noise of scale {b:.4g} on every candidate's statistic)")
    if isinstance(sel, NoisyTopK):
        from ..mechanisms.exponential import report_noisy_topk_gumbel_scale

        b = report_noisy_topk_gumbel_scale(sel.k, epsilon=sel.epsilon, sensitivity=sel.sensitivity)
        chosen = tuple(labels.index(c) for c in value)
        return (NoisyTopKEvent(chosen, "gumbel", b),
                f"noisy top-{sel.k} selection (the exponential mechanism's Gumbel law at scale {b:.4g})")
    from ..mechanisms.sparse_vector import sparse_exact_noise_scales

    scales = sparse_exact_noise_scales(epsilon=sel.epsilon, sensitivity=sel.sensitivity, c=sel.max_selected)
    hits = [labels.index(c) for c in value]            # in the order the queries were asked
    last = hits[-1] if len(hits) >= sel.max_selected else len(labels) - 1   # halted at the c-th above
    asked = tuple(range(last + 1))
    above = tuple(i in set(hits) for i in asked)
    return (SparseVectorEvent(asked, above, sel.threshold, scales.threshold_scale, scales.query_scale),
            f"sparse vector screen ({len(asked)} queries asked, threshold {sel.threshold:g}, Laplace noise of "
            f"scales {scales.threshold_scale:.4g} and {scales.query_scale:.4g})")
