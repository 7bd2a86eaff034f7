"""Every selector followed by a test on the same data, under a global null: the best corrected
p-value holds alpha.

Each pipeline runs the real path (selector -> Analysis.select -> test spec -> report) on fresh
null data. For each one, the share of replications whose best corrected p-value is at most
alpha is checked with a one-sided binomial test (false-failure rate FALSE_FAILURE_RATE = 1e-6).
With 400 replications that check fails any pipeline whose true rate exceeds about 0.10, which
every pipeline below does when its correction is dropped (their naive rates are recorded in the
table; the description-length pipelines are also checked to be biased naively).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from stats_helpers import assert_rate_at_least, assert_rate_at_most

from selective import Analysis, BudgetExhausted, Selection
from selective.hypotheses import CoefficientTest, OneSampleProportionTest, TwoSampleTTest
from selective.selectors import (
    FiniteChoice,
    ForwardStepwise,
    LassoSupport,
    NoisyStatistic,
    OrderedTopK,
    QuantizedAnswer,
    SignedMeanScore,
    SparseVectorScreen,
    Thresholdout,
)

ALPHA = 0.05
N, M = 200, 20
FEATURES = tuple(f"f{j:02d}" for j in range(M))


def null_data(rng):
    d = pd.DataFrame(rng.standard_normal((N, M)), columns=FEATURES)
    d["g"] = np.repeat(["a", "b"], N // 2)
    d["y"] = rng.standard_normal(N)
    return d


def abs_t(d):
    a, b = d.loc[d.g == "a", list(FEATURES)], d.loc[d.g == "b", list(FEATURES)]
    return ((a.mean() - b.mean()) / np.sqrt(a.var() / len(a) + b.var() / len(b))).abs()


def welch(col, alternative="two-sided"):
    return TwoSampleTTest(column=col, group="g", levels=("a", "b"), usevar="unequal", alternative=alternative)


def finite_choice(d, rng):
    a = Analysis(d, rng=rng)
    col = a.select(FiniteChoice(candidates=FEATURES, choose=lambda x: abs_t(x).idxmax())).value
    a.test(welch(col))
    return a


def ordered_topk(d, rng):
    a = Analysis(d, rng=rng)
    col = a.select(OrderedTopK(k=2, score=abs_t, candidates=FEATURES)).value[0]
    a.test(welch(col))
    return a


def quantized_direction(d, rng):
    a = Analysis(d, rng=rng)

    def t(x):
        return float(np.sign(x.loc[x.g == "a", "f00"].mean() - x.loc[x.g == "b", "f00"].mean()))

    side = a.select(QuantizedAnswer(statistic=t, bits=1, low=-1.0, high=1.0)).value
    a.test(welch("f00", alternative="greater" if side > 0 else "less"))  # one-sided in the seen direction
    return a


SCORE = SignedMeanScore(columns=FEATURES, sign_column="g", positive="a", clip=3.0)


def noisy_statistic(d, rng):
    a = Analysis(d, rng=rng)
    # vector of M scores: l1 sensitivity M * 2c/n
    noisy = a.select(NoisyStatistic(statistic=SCORE, sensitivity=M * SCORE.sensitivity(N), epsilon=30.0,
                                    index=FEATURES)).value
    a.test(welch(noisy.abs().idxmax()))
    return a


def sparse_vector(d, rng):
    a = Analysis(d, rng=rng)
    chosen = a.select(SparseVectorScreen(score=lambda x: SCORE(x).abs(), threshold=0.12, epsilon=5.0,
                                         sensitivity=SCORE.sensitivity(N), max_selected=1,
                                         candidates=FEATURES)).value
    if chosen:
        a.test(welch(chosen[0]))
    return a


def lasso_support(d, rng):
    a = Analysis(d, rng=rng)
    chosen = a.select(LassoSupport("y", FEATURES, lam=18.0, max_size=3)).value
    if chosen:
        a.test(CoefficientTest(formula="y ~ " + " + ".join(chosen), term=chosen[0], model="ols"))
    return a


def forward_stepwise(d, rng):
    a = Analysis(d, rng=rng)
    first = a.select(ForwardStepwise("y", FEATURES, steps=1)).value[0]
    a.test(CoefficientTest(formula=f"y ~ {first}", term=first, model="ols"))
    return a


def thresholdout(d, rng):
    """Queries on a 20,000-row holdout through Thresholdout, then a test on that holdout."""
    hold = pd.DataFrame(rng.standard_normal((20_000, M)) > 0, columns=FEATURES).astype(float)
    train = d[list(FEATURES)].gt(0).astype(float)
    thr = Thresholdout(train, hold, threshold=0.02, sigma=0.1, budget=2, rng=rng)
    answers = {}
    for c in FEATURES[:10]:
        try:
            answers[c] = thr.query(lambda x, c=c: x[c].to_numpy())
        except BudgetExhausted:
            break
    best = max(answers, key=answers.get)
    a = Analysis(hold, rng=rng)
    a.record(Selection(value=(best,), certificate=thr.certificate(), label="thresholdout"))
    a.test(OneSampleProportionTest(column=best, value=0.5, success=1.0, alternative="greater"))
    return a


PIPELINES = [
    # name, pipeline, replications, lower bound on the naive rate (for biased pipelines)
    ("FiniteChoice", finite_choice, 400, 0.4),
    ("OrderedTopK", ordered_topk, 400, 0.4),
    ("QuantizedAnswer", quantized_direction, 400, 0.06),
    ("NoisyStatistic", noisy_statistic, 400, 0.3),
    ("SparseVectorScreen", sparse_vector, 400, None),
    ("LassoSupport", lasso_support, 400, 0.2),
    ("ForwardStepwise", forward_stepwise, 400, 0.4),
    ("Thresholdout", thresholdout, 150, None),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,pipeline,n_reps,naive_floor", PIPELINES, ids=[p[0] for p in PIPELINES])
def test_best_corrected_pvalue_holds_alpha(name, pipeline, n_reps, naive_floor):
    rng = np.random.default_rng(20261122 + len(name))
    best_hits = naive_hits = 0
    for _ in range(n_reps):
        a = pipeline(null_data(rng), rng)
        if not a.results:
            continue
        row = a.report().frame.iloc[0]
        best_hits += row.pvalue_best <= ALPHA
        naive_hits += row.pvalue_naive <= ALPHA
    assert_rate_at_most(best_hits, n_reps, ALPHA)
    if naive_floor is not None:
        assert_rate_at_least(naive_hits, n_reps, naive_floor)
