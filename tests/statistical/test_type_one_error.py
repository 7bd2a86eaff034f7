"""Under a global null, select the best-looking of many noise features and test it on the same
data: every corrected column holds its level, the naive one does not.

The correction is a fixed function of the naive p-value and of the ledger (whose certificate
does not depend on the data), so the Monte-Carlo loop computes naive p-values in vectorised
form and applies ``selective.corrections.correct`` once; a smaller loop through the real
``Analysis`` pipeline checks that the vectorised naive p-values are the pipeline's.

False-failure rate of each rate assertion: FALSE_FAILURE_RATE = 1e-6 (one-sided binomial test
against alpha; the corrected columns' true rates here are at most about 0.049, which makes the
real false-failure rate far smaller).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import assert_rate_at_least, assert_rate_at_most

from selective import Analysis
from selective.accounting import DescriptionLength, Ledger, PureDP
from selective.corrections import correct
from selective.hypotheses import TwoSampleTTest
from selective.selectors.topk import NoisyTopK, SignedMeanScore, TopK

ALPHA = 0.05
N_ROWS = 200  # 100 per group
N_FEATURES = 50


def welch_abs_t(a: np.ndarray, b: np.ndarray):
    """|t| and Welch df along the last-but-one axis: a, b have shape (..., n, m)."""
    va, vb = a.var(axis=-2, ddof=1) / a.shape[-2], b.var(axis=-2, ddof=1) / b.shape[-2]
    t = (a.mean(axis=-2) - b.mean(axis=-2)) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.shape[-2] - 1) + vb**2 / (b.shape[-2] - 1))
    return np.abs(t), df


def simulate_selected_pvalues(n_reps: int, rng: np.random.Generator, chunk: int = 1000) -> np.ndarray:
    half = N_ROWS // 2
    out = []
    for start in range(0, n_reps, chunk):
        r = min(chunk, n_reps - start)
        x = rng.standard_normal((r, N_ROWS, N_FEATURES))
        t, df = welch_abs_t(x[:, :half], x[:, half:])
        j = t.argmax(axis=1)
        rows = np.arange(r)
        out.append(2 * scipy.stats.t.sf(t[rows, j], df[rows, j]))
    return np.concatenate(out)


def null_frame(rng: np.random.Generator) -> pd.DataFrame:
    x = rng.standard_normal((N_ROWS, N_FEATURES))
    d = pd.DataFrame(x, columns=[f"f{j:02d}" for j in range(N_FEATURES)])
    d["group"] = ["a"] * (N_ROWS // 2) + ["b"] * (N_ROWS // 2)
    return d


def abs_t_scores(d: pd.DataFrame) -> pd.Series:
    cols = [c for c in d.columns if c.startswith("f")]
    a = d.loc[d.group == "a", cols].to_numpy()
    b = d.loc[d.group == "b", cols].to_numpy()
    t, _ = welch_abs_t(a, b)
    return pd.Series(t, index=cols)


def test_vectorised_naive_pvalues_match_the_pipeline():
    rng = np.random.default_rng(11)
    for _ in range(5):
        d = null_frame(rng)
        analysis = Analysis(d, rng=1)
        candidates = tuple(f"f{j:02d}" for j in range(N_FEATURES))
        col = analysis.select(TopK(k=1, score=abs_t_scores, candidates=candidates)).value[0]
        res = analysis.test(TwoSampleTTest(column=col, group="group", levels=("a", "b"), usevar="unequal"))
        x = d[[c for c in d.columns if c.startswith("f")]].to_numpy()[None]
        t, df = welch_abs_t(x[:, : N_ROWS // 2], x[:, N_ROWS // 2:])
        j = int(t.argmax())
        assert f"f{j:02d}" == col
        assert res.pvalue_naive == pytest.approx(2 * scipy.stats.t.sf(t[0, j], df[0, j]), rel=1e-10)


@pytest.mark.slow
def test_top1_of_many_noise_features_description_length():
    """20,000 null replications; the naive column rejects about 92% of the time."""
    n_reps = 20_000
    p = simulate_selected_pvalues(n_reps, np.random.default_rng(20_261_122))
    ledger = Ledger(N_ROWS)
    ledger.record(DescriptionLength(N_FEATURES), "top-1 of 50")
    for n_candidates in (None, N_FEATURES):
        c = correct(p, ledger.totals(), alpha=ALPHA, n_candidates=n_candidates)
        for name in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_best"):
            col = getattr(c, name)
            assert not np.isnan(col).any(), name
            assert_rate_at_most(int((col <= ALPHA).sum()), n_reps, ALPHA)
        if n_candidates:
            assert_rate_at_most(int((c.pvalue_bonferroni <= ALPHA).sum()), n_reps, ALPHA)
    # the naive p-value is far from valid after selection (true rate 1 - 0.95^50 ~ 0.92)
    assert_rate_at_least(int((p <= ALPHA).sum()), n_reps, 0.5)


@pytest.mark.slow
def test_top1_with_the_dp_selector_through_the_pipeline():
    """2,000 null replications through Analysis with NoisyTopK (exact sampler). epsilon is large
    enough that the selection finds the best-looking feature most of the time (the naive column
    rejects often) and the certificate-only corrections are valid."""
    rng = np.random.default_rng(20_261_123)
    n_reps, eps, clip = 2_000, 2.0, 3.0
    naive, best = [], []
    for _ in range(n_reps):
        d = null_frame(rng)
        cols = tuple(c for c in d.columns if c.startswith("f"))
        score = SignedMeanScore(columns=cols, sign_column="group", positive="a", clip=clip)
        analysis = Analysis(d, rng=rng)
        col = analysis.select(NoisyTopK(k=1, epsilon=eps, sensitivity=score.sensitivity(N_ROWS),
                                        score=lambda df, score=score: score(df).abs(), candidates=cols)).value[0]
        analysis.test(TwoSampleTTest(column=col, group="group", levels=("a", "b"), usevar="unequal"))
        row = analysis.report().frame.iloc[0]
        naive.append(row.pvalue_naive)
        best.append(row.pvalue_best)
    naive, best = np.array(naive), np.array(best)
    assert isinstance(analysis.ledger.certificates[0], PureDP)
    assert_rate_at_most(int((best <= ALPHA).sum()), n_reps, ALPHA)
    assert_rate_at_least(int((naive <= ALPHA).sum()), n_reps, 0.2)
