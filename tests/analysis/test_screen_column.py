"""The report's conditional column after a t-test screen (Freedman's first pass), through Analysis
and plan files (docs/THEORY.md 3.14, conditional.screening.TTestScreen, analysis/carving_rows)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from selective import Analysis
from selective.accounting.certificates import DescriptionLength
from selective.analysis.plan import parse_plan, run_plan
from selective.analysis.plan_format import PlanError
from selective.conditional import TTestScreen, screening_inference
from selective.hypotheses import CoefficientTest
from selective.selectors import TopK
from selective.selectors.scores import CandidateScores
from tests.conditional_helpers import assert_null_column_holds

P = 10
FEATURES = [f"x{i}" for i in range(P)]


def _frame(rng, n=80, beta=(0.5, 0.0, 0.3)):
    x = rng.normal(size=(n, P))
    frame = pd.DataFrame(x, columns=FEATURES)
    frame["y"] = x[:, : len(beta)] @ np.asarray(beta, dtype=float) + rng.normal(size=n)
    return frame


def _run(frame, selector, **test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(selector)
        for v in sel.value:
            a.test(CoefficientTest(formula="y ~ " + " + ".join(sel.value), term=v, **test), conditional_on=sel)
        return a, sel, a.report().frame


def test_column_is_screening_inference_with_an_unscreened_intercept():
    frame = _frame(np.random.default_rng(2))
    a, sel, f = _run(frame, TTestScreen("y", FEATURES, keep_below=0.25))
    assert len(sel.value) >= 2
    X = np.column_stack([np.ones(len(frame)), frame[FEATURES].to_numpy()])
    res = screening_inference(X, frame["y"].to_numpy(), keep_below=0.25, screened=list(range(1, P + 1)),
                              test="coefficients", columns=["1", *FEATURES])
    assert res.kept == sel.value
    shown = f.pvalue_conditional.notna().to_numpy()
    assert shown.any()
    np.testing.assert_allclose(f.pvalue_conditional.to_numpy()[shown], res.pvalue[shown], rtol=1e-12)
    np.testing.assert_allclose(f.pvalue_naive.to_numpy(), res.pvalue_naive, rtol=1e-8)
    assert f.ci_conditional_low.isna().all()  # p-value only
    assert "t-test screen of step 1" in f.note.iloc[0] and "no interval" in f.note.iloc[0]


def test_screen_keeps_what_statsmodels_calls_significant():
    import statsmodels.api as sm

    frame = _frame(np.random.default_rng(3), n=60)
    sel = TTestScreen("y", FEATURES, keep_below=0.3).select(frame)
    fit = sm.OLS(frame["y"], sm.add_constant(frame[FEATURES])).fit()
    assert sel.value == tuple(c for c in FEATURES if fit.pvalues[c] < 0.3)
    assert sel.certificate == DescriptionLength(2**P)


def test_one_sided_tests_use_the_one_sided_conditional_pvalue():
    frame = _frame(np.random.default_rng(4))
    _, sel, two = _run(frame, TTestScreen("y", FEATURES))
    _, _, up = _run(frame, TTestScreen("y", FEATURES), alternative="greater")
    _, _, low = _run(frame, TTestScreen("y", FEATURES), alternative="less")
    # rows in the same order; their labels differ by the one-sided direction
    two, up, low = (f.pvalue_conditional.to_numpy() for f in (two, up, low))
    assert up.shape == low.shape == two.shape
    both = ~np.isnan(two) & ~np.isnan(up) & ~np.isnan(low)
    assert both.any()
    np.testing.assert_allclose((up + low)[both], 1.0, atol=1e-12)


def test_withheld_for_a_value_other_than_zero_and_for_a_second_step():
    frame = _frame(np.random.default_rng(5))
    _, _, f = _run(frame, TTestScreen("y", FEATURES), value=0.2)
    assert f.pvalue_conditional.isna().all() and "coefficient of 0 only" in f.note.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(TTestScreen("y", FEATURES))
        a.select(TopK(k=1, score=CandidateScores(["x5", "x6"], kind="mean", absolute=True), candidates=["x5", "x6"]))
        a.test(CoefficientTest(formula="y ~ " + " + ".join(sel.value), term=sel.value[0]), conditional_on=sel)
        g = a.report().frame
    assert math.isnan(g.pvalue_conditional.iloc[0]) and "ledger has 2 steps" in g.note.iloc[0]


def test_tests_that_are_not_the_kept_regression_are_refused():
    frame = _frame(np.random.default_rng(6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(TTestScreen("y", FEATURES))
        with pytest.raises(ValueError, match="exactly the selected features"):
            a.test(CoefficientTest(formula="y ~ x9", term="x9"), conditional_on=sel)


@pytest.mark.parametrize("kwargs, err, match", [
    ({"keep_below": 1.0}, ValueError, "keep_below"),
    ({"keep_below": "0.2"}, TypeError, "keep_below"),
    ({"features": ["x0", "y"]}, ValueError, "target"),
    ({"label": 3}, TypeError, "label"),
])
def test_selector_arguments_are_checked(kwargs, err, match):
    args = {"target": "y", "features": FEATURES, **kwargs}
    with pytest.raises(err, match=match):
        TTestScreen(**args)


def test_too_few_rows_is_an_error_naming_the_data():
    frame = _frame(np.random.default_rng(7), n=11)
    with pytest.raises(ValueError, match="`data`.*more than 11 rows"):
        TTestScreen("y", FEATURES).select(frame)


def _null_frames(reps, seed):
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        frame = _frame(rng, n=40, beta=())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = Analysis(frame, rng=1)
            sel = a.select(TTestScreen("y", FEATURES, keep_below=0.25))
            if not sel.value:
                continue
            a.test(CoefficientTest(formula="y ~ " + " + ".join(sel.value), term=sel.value[0]), conditional_on=sel)
            yield a.report().frame


def test_the_column_holds_its_level_under_the_global_null():
    """200 global-null replications through Analysis: the naive test of a kept coefficient rejects too
    often, the conditional column holds 0.05 and 0.01 (false-failure rate 1e-6 per level)."""
    assert_null_column_holds(_null_frames(200, seed=21), naive_above=0.2, max_withheld=0.3)


PLAN = {
    "analysis": {"alpha": 0.05, "seed": 1},
    "select": [{"selector": "t_screen", "target": "y", "candidates_like": "x*", "keep_below": 0.25}],
    "test": [{"kind": "ols", "for_each": 1, "formula": "y ~ {support}", "term": "{selected}", "conditional": True}],
}


def test_plan_file_runs_the_screen_column_as_the_analysis_does():
    frame = _frame(np.random.default_rng(8))
    a = run_plan(parse_plan(PLAN), frame)
    f = a.report().frame
    _, sel, g = _run(frame, TTestScreen("y", FEATURES, keep_below=0.25))
    assert a.selections[0].value == sel.value
    pd.testing.assert_series_equal(f.pvalue_conditional, g.pvalue_conditional)
    assert f.pvalue_conditional.notna().any()


@pytest.mark.parametrize("change, match", [
    ({"keep_below": 1.5}, "keep_below"),
    ({"sigma": 1.0}, "unknown"),
    ({"target": None}, "needs the field `target`"),
])
def test_plan_fields_of_the_screen_are_checked(change, match):
    block = {k: v for k, v in {**PLAN["select"][0], **change}.items() if v is not None}
    with pytest.raises(PlanError, match=match):
        parse_plan({**PLAN, "select": [block]})


def test_a_tie_at_the_threshold_neither_crashes_nor_leaves_the_observation_outside_the_event():
    """Found by review: y moved until a kept column's |t| equals the critical value to the last bit. The
    selector and the inference used different solvers and could disagree about the kept set (the report
    raised), and the support could miss the observed statistic by a rounding error."""
    from scipy import optimize, stats

    rng = np.random.default_rng(11)
    n, p = 15, 4
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p))])
    y = X @ np.r_[0, 0.6, 0.4, 0, 0] + rng.normal(size=n)
    G = np.linalg.inv(X.T @ X)
    crit = stats.t.isf(0.125, n - p - 1)

    def excess(s):
        yy = y + s * X[:, 1]
        b = G @ X.T @ yy
        e = yy - X @ b
        return abs(b[1] / np.sqrt(e @ e / (n - p - 1) * G[1, 1])) - crit

    grid = np.linspace(-1, 1, 2001)
    vals = np.array([excess(s) for s in grid])
    i = int(np.nonzero(vals[:-1] * vals[1:] < 0)[0][0])
    s0 = optimize.brentq(excess, grid[i], grid[i + 1], xtol=1e-300, rtol=1e-15)
    feats = ["x1", "x2", "x3", "x4"]
    for shift in (-2e-15, 0.0, 2e-15):
        frame = pd.DataFrame(X[:, 1:], columns=feats)
        frame["y"] = y + (s0 + shift) * X[:, 1]
        names = ["c0", *feats]
        res = screening_inference(np.column_stack([np.ones(n), frame[feats]]), frame["y"], screened=feats,
                                  test="coefficients", columns=names)
        for stat, support in zip(res.statistic, res.support, strict=True):
            assert any(lo <= stat <= hi for lo, hi in support)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = Analysis(frame, rng=1)
            sel = a.select(TTestScreen("y", feats))
            assert sel.value == res.kept
            for v in sel.value:
                a.test(CoefficientTest(formula="y ~ " + " + ".join(sel.value), term=v), conditional_on=sel)
            if sel.value:
                assert len(a.report().frame) == len(sel.value)
