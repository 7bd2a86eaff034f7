"""The randomized conditional column after a DP screen by signed clipped means (plan score
``signed_mean``): the winner's test is a two-sample test of the groups' raw means, which the
screen did not rank, so the column is the law of that difference given the noisy choice of the
signed scores (selective.conditional.randomized_target_inference; docs/THEORY.md 3.12)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from selective import Analysis
from selective.hypotheses import OneSampleZTest, TwoSampleTTest, TwoSampleZTest
from selective.selectors import NoisyTopK, SparseVectorScreen, TopK
from selective.selectors.clipped_scores import SignedClippedMeanScores
from tests.conditional_helpers import assert_null_column_holds, assert_refused_without_a_row, run_conditioned

COLS = [f"m{i}" for i in range(10)]
CLIP = 2.0
LEVELS = ("t", "c")


def _frame(rng, *, n=400, p_treated=0.4, shift=0.0):
    """Normal columns with unequal means (the signed scores' nuisance: under no group difference
    E S_j = (2 p - 1) mu_j), m0 shifted by ``shift`` in the treated group."""
    g = rng.random(n) < p_treated
    x = rng.normal(size=(n, len(COLS))) + np.linspace(-0.3, 0.3, len(COLS))
    x[:, 0] += shift * g
    frame = pd.DataFrame(x, columns=COLS)
    frame["arm"] = np.where(g, "t", "c")
    return frame


def _score():
    return SignedClippedMeanScores(COLS, "arm", "t", clip=CLIP, absolute=True)


def _screen(n, epsilon=1.0, k=1):
    score = _score()
    return NoisyTopK(k=k, epsilon=epsilon, sensitivity=score.sensitivity(n), score=score, candidates=COLS)


def _welch(column, levels=LEVELS, **kw):
    return TwoSampleTTest(column=column, group="arm", levels=levels, usevar="unequal", **kw)


def _run(frame, seed, spec_of, screen=None):
    return run_conditioned(frame, seed, screen or _screen(len(frame)), spec_of)


def _reference(frame, chosen, column, scale, levels=LEVELS, alternative="two-sided"):
    """The column computed here from the formulas of docs/THEORY.md 3.12 (pandas group by)."""
    from selective.conditional import NoisyTopKEvent, randomized_target_inference

    x = frame[COLS].clip(-CLIP, CLIP)
    sign = np.where(frame.arm == "t", 1.0, -1.0)
    n = len(frame)
    scores = (x.to_numpy() * sign[:, None]).mean(axis=0)
    cov = sum(len(part) * part.cov().to_numpy() for _, part in x.groupby(frame.arm)) / n**2
    y = frame[column]
    a, b = (y[frame.arm == lv] for lv in levels)
    d, v = a.mean() - b.mean(), a.var() / len(a) + b.var() / len(b)
    cross = sum(x[frame.arm == lv].apply(lambda col, lv=lv: col.cov(y[frame.arm == lv])).to_numpy()
                for lv in LEVELS) / n
    cross = cross * (1.0 if levels[0] == "t" else -1.0)
    event = NoisyTopKEvent(tuple(COLS.index(c) for c in chosen), "gumbel", scale)
    return randomized_target_inference(scores, cov, event, d, v, cross, absolute=True, alternative=alternative)


def test_signed_screen_gets_the_law_of_the_difference_of_means():
    from selective.mechanisms.exponential import report_noisy_topk_gumbel_scale

    frame = _frame(np.random.default_rng(5), n=600, shift=0.4)
    sel, f = _run(frame, 3, _welch, _screen(600, epsilon=0.5, k=2))
    scale = report_noisy_topk_gumbel_scale(2, epsilon=0.5, sensitivity=2 * CLIP / 600)
    shown = 0
    for r, c in enumerate(sel.value):
        assert "noisy top-2 selection" in f.note.iloc[r]
        assert "signed clipped means and the tested difference of means jointly normal" in f.note.iloc[r]
        if math.isnan(f.pvalue_conditional.iloc[r]):
            continue
        shown += 1
        ref = _reference(frame, sel.value, c, scale)
        assert f.pvalue_conditional.iloc[r] == pytest.approx(ref.pvalue[0], rel=1e-8)
        assert f.ci_conditional_low.iloc[r] == pytest.approx(ref.ci[0, 0], rel=1e-7)
        assert f.ci_conditional_high.iloc[r] == pytest.approx(ref.ci[0, 1], rel=1e-7)
        # the interval is for the tested difference of means, around its estimate
        assert f.ci_conditional_low.iloc[r] < f.estimate.iloc[r] < f.ci_conditional_high.iloc[r]
    assert shown >= 1


def test_the_level_order_flips_the_difference_not_the_evidence():
    frame = _frame(np.random.default_rng(6), n=600, shift=0.4)
    _, f = _run(frame, 4, _welch, _screen(600, epsilon=0.5))
    _, g = _run(frame, 4, lambda c: _welch(c, levels=("c", "t")), _screen(600, epsilon=0.5))
    assert not math.isnan(f.pvalue_conditional.iloc[0])
    assert g.pvalue_conditional.iloc[0] == pytest.approx(f.pvalue_conditional.iloc[0], rel=1e-6)
    assert g.ci_conditional_low.iloc[0] == pytest.approx(-f.ci_conditional_high.iloc[0], rel=1e-5)


def test_signed_screen_null_winner_holds_its_level():
    # 300 null replications (no group difference in any column; unbalanced groups, 40% treated,
    # and unequal column means, so the signed scores' nuisance means drive part of the choice),
    # NoisyTopK(k=1) by |signed clipped mean| at epsilon 1 on 400 rows, the winner Welch-tested.
    # The naive p-value rejects at 0.05 in more than 7% (measured 17%); the conditional
    # column (withheld = no rejection; 3% here) is shown in most and must hold 0.05 and 0.01 (measured
    # 2.3% and 0: the trust rule withholds near the boundary, docs/THEORY.md 3.12): a correct
    # implementation fails with probability below 1e-6 per level (one-sided exact binomial).
    rng = np.random.default_rng(20261128)
    frames = (_run(_frame(rng), rng, _welch)[1] for _ in range(300))
    assert_null_column_holds(frames, naive_above=0.07)


def test_a_sparse_vector_screen_by_signed_means_gets_the_column():
    frame = _frame(np.random.default_rng(9), n=600, shift=0.5)
    score = _score()
    screen = SparseVectorScreen(score, threshold=0.1, epsilon=1.0, sensitivity=score.sensitivity(600),
                                max_selected=1, candidates=COLS)
    sel, f = _run(frame, 2, _welch, screen)
    assert len(sel.value) == 1
    assert "sparse vector screen" in f.note.iloc[0]
    assert "conditional withheld" not in f.note.iloc[0]


@pytest.mark.parametrize("spec, error, match", [
    (OneSampleZTest(column="m0"), ValueError, r"ranked signed clipped means .* TwoSampleTTest or TwoSampleZTest"),
    (TwoSampleZTest(column="m0", group="arm"), ValueError, r"got levels=None"),
    (TwoSampleZTest(column="m0", group="arm", levels=("c", "x")), ValueError, r"got levels=\('c', 'x'\)"),
])
def test_the_test_must_compare_the_screens_groups(spec, error, match):
    frame = _frame(np.random.default_rng(1), shift=1.5)
    assert_refused_without_a_row(frame, _screen(len(frame), epsilon=5.0), spec, error, match)


def test_a_third_group_withholds_the_column_with_its_reason():
    frame = _frame(np.random.default_rng(1), shift=1.5)
    frame.loc[frame.index[:30], "arm"] = "other"     # signed -1 by the score, outside the test's levels
    sel, f = _run(frame, 2, _welch, _screen(len(frame), epsilon=5.0))
    assert math.isnan(f.pvalue_conditional.iloc[0])
    assert "30 rows are in neither of the test's levels ('t', 'c')" in f.note.iloc[0]


def test_a_deterministic_top_k_by_signed_means_is_refused_with_the_reason():
    frame = _frame(np.random.default_rng(1), shift=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=2)
        sel = a.select(TopK(k=1, score=_score(), candidates=COLS))
    with pytest.raises(TypeError, match="after a TopK screen by signed clipped means"):
        a.test(_welch("m0"), conditional_on=sel)


def test_a_plan_with_a_signed_mean_screen_gets_the_column():
    from selective.analysis.plan import parse_plan, run_plan

    frame = _frame(np.random.default_rng(8), n=600, shift=0.5)
    block = {"selector": "noisy_top_k", "candidates": COLS, "score": "signed_mean", "group": "arm",
             "positive": "t", "clip": CLIP, "epsilon": 1.0, "k": 1}
    test = {"kind": "welch_t", "for_each": 1, "column": "{selected}", "group": "arm", "levels": list(LEVELS),
            "conditional": True}
    a = run_plan(parse_plan({"analysis": {"seed": 12}, "select": [block], "test": [test]}), frame)
    got = a.report().frame
    sel, want = _run(frame, 12, _welch, _screen(600))
    assert a.selections[0].value == sel.value
    assert not math.isnan(want.pvalue_conditional.iloc[0])
    pd.testing.assert_series_equal(got.pvalue_conditional, want.pvalue_conditional)


def test_a_constant_candidate_is_named_when_it_withholds_the_column():
    frame = _frame(np.random.default_rng(1), shift=1.5)
    frame["m3"] = 1.0           # its signed score has variance 0: no joint normal law of the scores
    sel, f = _run(frame, 2, _welch, _screen(len(frame), epsilon=5.0))
    assert sel.value == ("m0",)
    assert math.isnan(f.pvalue_conditional.iloc[0])
    assert "the statistic or variance of candidate(s) ['m3'] is not finite or is zero" in f.note.iloc[0]
