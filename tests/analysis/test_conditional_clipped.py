"""The randomized conditional column after a DP screen by clipped means (the screen plan files
can run): the test of a winner must test the clipped mean the screen ranked (``clip=``), and
then gets the randomized selective p-value of that mean (docs/THEORY.md 3.12)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from selective.hypotheses import OneSampleTTest, OneSampleZTest
from selective.selectors import ClippedMeanScores, NoisyTopK
from tests.conditional_helpers import assert_null_column_holds, assert_refused_without_a_row, run_conditioned

COLS = [f"m{i}" for i in range(10)]
CLIP = 2.0


def _frame(rng, *, n=400, shift=0.0, df=3):
    """Heavy-tailed (t with ``df`` degrees of freedom) outcomes, symmetric about 0 except m0,
    shifted by ``shift``: under ``shift=0`` every clipped mean is 0."""
    x = rng.standard_t(df, size=(n, len(COLS)))
    x[:, 0] += shift
    return pd.DataFrame(x, columns=COLS)


def _screen(n, epsilon=1.0, k=1):
    score = ClippedMeanScores(COLS, clip=CLIP, absolute=True)
    return NoisyTopK(k=k, epsilon=epsilon, sensitivity=score.sensitivity(n), score=score, candidates=COLS)


def _run(frame, seed, spec_of, screen=None):
    return run_conditioned(frame, seed, screen or _screen(len(frame)), spec_of)


def test_clipped_screen_gets_the_randomized_column_of_the_clipped_means():
    from selective.conditional.randomized import NoisyTopKEvent, randomized_inference
    from selective.mechanisms.exponential import report_noisy_topk_gumbel_scale

    rng = np.random.default_rng(5)
    frame = _frame(rng, n=600, shift=0.25)
    sel, f = _run(frame, 3, lambda c: OneSampleZTest(column=c, clip=CLIP), _screen(600, epsilon=0.5, k=2))
    assert "randomized selective inference" in f.note.iloc[0]
    x = np.clip(frame[COLS].to_numpy(), -CLIP, CLIP)
    cov = np.cov(x, rowvar=False) / len(x)
    b = report_noisy_topk_gumbel_scale(2, epsilon=0.5, sensitivity=2 * CLIP / 600)
    chosen = tuple(COLS.index(c) for c in sel.value)
    shown = 0
    for r, c in enumerate(sel.value):
        ref = randomized_inference(x.mean(0), cov, NoisyTopKEvent(chosen, "gumbel", b),
                                   targets=[COLS.index(c)], absolute=True)
        # the naive column is the z-test of the clipped column, on the same scale
        assert f.estimate.iloc[r] == pytest.approx(x[:, COLS.index(c)].mean(), rel=1e-12)
        if not math.isnan(f.pvalue_conditional.iloc[r]):
            shown += 1
            assert f.pvalue_conditional.iloc[r] == pytest.approx(ref.pvalue[0], rel=1e-9)
            assert f.ci_conditional_low.iloc[r] == pytest.approx(ref.ci[0, 0], rel=1e-7)
    assert shown >= 1


def test_clipped_screen_null_winner_holds_its_level():
    # 300 null replications: heavy-tailed symmetric outcomes (t3), NoisyTopK(k=1) by |clipped
    # mean| at epsilon 1 on 400 rows, the winner z-tested on its clipped values. The naive
    # p-value rejects well above 0.05; the conditional column (withheld = no rejection) must hold
    # 0.05 and 0.01: a correct implementation fails with probability below 1e-6 per level
    # (one-sided exact binomial, tests.stats_helpers).
    rng = np.random.default_rng(20261127)
    frames = (_run(_frame(rng), rng, lambda c: OneSampleZTest(column=c, clip=CLIP))[1] for _ in range(300))
    assert_null_column_holds(frames, naive_above=0.15)


@pytest.mark.parametrize("spec, match", [
    (OneSampleZTest(column="m0"), r"give the test clip=2\.0; got clip=None"),
    (OneSampleTTest(column="m0", clip=3.0), r"give the test clip=2\.0; got clip=3\.0"),
])
def test_the_test_must_clip_as_the_screen_did(spec, match):
    frame = _frame(np.random.default_rng(1), shift=1.0)
    assert_refused_without_a_row(frame, _screen(len(frame), epsilon=5.0), spec, ValueError, match)


def test_clip_of_a_one_sample_test():
    x = pd.DataFrame({"v": [-5.0, -1.0, 0.5, 1.5, 9.0]})
    r = OneSampleTTest(column="v", clip=2.0).run(x)
    assert r.estimate == pytest.approx(np.mean([-2.0, -1.0, 0.5, 1.5, 2.0]))
    assert "clip(v, ±2)" in OneSampleTTest(column="v", clip=2.0).hypothesis
    for bad, match in [(0.0, "`clip` must be None or a finite number > 0; got 0.0"),
                       (math.inf, "`clip` must be a finite real number"),
                       ("3", "`clip` must be a finite real number")]:
        with pytest.raises((ValueError, TypeError), match=match):
            OneSampleZTest(column="v", clip=bad)
    with pytest.raises(ValueError, match=r"`value` must lie strictly inside \(-clip, clip\)"):
        OneSampleZTest(column="v", clip=1.0, value=1.0)


def test_a_sparse_vector_plan_step_gives_the_column_of_the_analysis_route():
    """``selector = "sparse_vector"`` in a plan is the SparseVectorScreen of the same score, and
    its conditional tests get the randomized column the Analysis route gives; a plan asking for
    more crossings than candidates, or with a ``k``, is refused naming the field."""
    from selective.analysis.plan import parse_plan, run_plan
    from selective.analysis.plan_format import PlanError
    from selective.selectors import SparseVectorScreen

    frame = _frame(np.random.default_rng(8), n=600, shift=0.3)
    block = {"selector": "sparse_vector", "candidates": COLS, "score": "clipped_mean", "clip": CLIP,
             "threshold": 0.15, "epsilon": 1.0, "max_selected": 2}
    plan = {"analysis": {"seed": 12}, "select": [block],
            "test": [{"kind": "z", "for_each": 1, "column": "{selected}", "clip": CLIP, "conditional": True}]}
    a = run_plan(parse_plan(plan), frame)
    got = a.report().frame
    score = ClippedMeanScores(COLS, clip=CLIP, absolute=True)
    screen = SparseVectorScreen(score, threshold=0.15, epsilon=1.0, sensitivity=score.sensitivity(600),
                                max_selected=2, candidates=COLS)
    sel, want = _run(frame, 12, lambda c: OneSampleZTest(column=c, clip=CLIP), screen)
    assert a.selections[0].value == sel.value and len(sel.value) >= 1
    assert "sparse vector screen" in got.note.iloc[0]
    pd.testing.assert_series_equal(got.pvalue_conditional, want.pvalue_conditional)
    with pytest.raises(PlanError, match="max_selected"):
        run_plan(parse_plan({**plan, "select": [{**block, "max_selected": 11}]}), frame)
    with pytest.raises(PlanError, match="unknown"):
        parse_plan({**plan, "select": [{**block, "k": 1}]})
