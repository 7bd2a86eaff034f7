"""The carving column of the report: a regression after a lasso or stepwise selection made on a
randomized response, through Analysis and plan files (docs/THEORY.md 3.13, analysis/carving_rows)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selective import Analysis
from selective.accounting.certificates import DescriptionLength
from selective.analysis.plan import parse_plan, run_plan
from selective.analysis.plan_format import PlanError
from selective.conditional import (
    RandomizedForwardStepwise,
    RandomizedLassoSupport,
    randomized_lasso_inference,
    randomized_stepwise_inference,
)
from selective.hypotheses import CoefficientTest, OneSampleTTest
from selective.selectors import ForwardStepwise, LassoSupport, TopK
from selective.selectors.scores import CandidateScores
from tests.conditional_helpers import assert_null_column_holds

P = 8
FEATURES = [f"x{i}" for i in range(P)]


def _frame(rng, n=200, beta=(0.6, 0.0, 0.4), sd=1.0):
    x = rng.normal(size=(n, P))
    mean = x[:, : len(beta)] @ np.asarray(beta)
    frame = pd.DataFrame(x, columns=FEATURES)
    frame["y"] = mean + sd * rng.normal(size=n)
    return frame


def _formula(selection):
    return "y ~ " + " + ".join(selection.value)


def _run(frame, selector, seed=5, term=None, **test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=seed)
        sel = a.select(selector)
        for v in sel.value if term is None else [term]:
            a.test(CoefficientTest(formula=_formula(sel), term=v, **test), conditional_on=sel)
        return a, sel, a.report().frame


def test_lasso_column_is_the_carving_function_on_the_recorded_randomization():
    frame = _frame(np.random.default_rng(1), n=400)
    selector = RandomizedLassoSupport("y", FEATURES, lam=30.0, max_size=P, sigma=1.0)
    a, sel, f = _run(frame, selector)
    assert len(sel.value) >= 2
    omega = sel.details["randomization"]
    assert omega.shape == (400,) and not omega.flags.writeable
    ref = randomized_lasso_inference(frame[FEATURES], frame["y"].to_numpy(), 30.0, sigma=1.0, noise_sd=1.0,
                                     randomization=omega, alpha=a.alpha, columns=FEATURES)
    assert set(ref.variables) == set(sel.value)
    shown = 0
    for i, v in enumerate(sel.value):
        r = list(ref.variables).index(v)
        p = f.pvalue_conditional.iloc[i]
        if not math.isnan(p):
            shown += 1
            assert p == pytest.approx(ref.pvalue[r], rel=1e-9, abs=1e-15)
        if not math.isnan(f.ci_conditional_low.iloc[i]):
            assert (f.ci_conditional_low.iloc[i], f.ci_conditional_high.iloc[i]) == pytest.approx(tuple(ref.ci[r]))
        assert "carving" in f.note.iloc[i] and "declared sigma 1" in f.note.iloc[i]
    assert shown >= 1


def test_stepwise_column_tests_a_value_and_a_direction():
    frame = _frame(np.random.default_rng(2), n=400)
    selector = RandomizedForwardStepwise("y", FEATURES, steps=3, sigma=1.0, noise_sd=0.7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=9)
        sel = a.select(selector)
    term = sel.value[-1]
    a.test(CoefficientTest(formula=_formula(sel), term=term, value=0.1, alternative="less"), conditional_on=sel)
    f = a.report().frame
    ref = randomized_stepwise_inference(frame[FEATURES], frame["y"].to_numpy(), steps=3, sigma=1.0, noise_sd=0.7,
                                        randomization=sel.details["randomization"], alpha=a.alpha,
                                        alternative="less", null_value=0.1, columns=FEATURES, targets=[2])
    assert ref.variables == (term,)
    assert f.pvalue_conditional.iloc[0] == pytest.approx(ref.pvalue[0], rel=1e-9)
    # a one-sided test shows the one-sided 1 - alpha bound: the upper end of the equal-tailed 1 - 2 alpha interval
    wide = randomized_stepwise_inference(frame[FEATURES], frame["y"].to_numpy(), steps=3, sigma=1.0, noise_sd=0.7,
                                         randomization=sel.details["randomization"], alpha=2 * a.alpha,
                                         alternative="less", null_value=0.1, columns=FEATURES, targets=[2])
    assert f.ci_conditional_low.iloc[0] == -math.inf
    assert f.ci_conditional_high.iloc[0] == pytest.approx(wide.ci[0][1], rel=1e-9)
    assert wide.ci[0][1] < ref.ci[0][1]  # shorter on the side that matters than the two-sided interval
    # a null value moves the p-value, not the interval; "less" and "greater" are complementary
    plain = randomized_stepwise_inference(frame[FEATURES], frame["y"].to_numpy(), steps=3, sigma=1.0, noise_sd=0.7,
                                          randomization=sel.details["randomization"], alternative="greater",
                                          null_value=0.1, columns=FEATURES, targets=[2])
    assert ref.pvalue[0] + plain.pvalue[0] == pytest.approx(1.0, abs=1e-6)


def test_the_same_seed_gives_the_same_randomization_and_column():
    frame = _frame(np.random.default_rng(3))
    selector = RandomizedLassoSupport("y", FEATURES, lam=12.0, max_size=P, sigma=1.0)
    _, s1, f1 = _run(frame, selector, seed=21)
    _, s2, f2 = _run(frame, selector, seed=21)
    _, s3, _ = _run(frame, selector, seed=22)
    assert np.array_equal(s1.details["randomization"], s2.details["randomization"])
    assert not np.array_equal(s1.details["randomization"], s3.details["randomization"])
    pd.testing.assert_frame_equal(f1, f2)


def test_randomized_selectors_carry_the_unrandomized_certificate():
    lasso = RandomizedLassoSupport("y", FEATURES, lam=5.0, max_size=3, sigma=2.0)
    assert lasso.certificate() == LassoSupport("y", FEATURES, lam=5.0, max_size=3).certificate()
    assert lasso.noise_sd == 2.0                      # default: sigma
    fs = RandomizedForwardStepwise("y", FEATURES, steps=2, sigma=1.0, noise_sd=0.5)
    assert fs.certificate() == ForwardStepwise("y", FEATURES, steps=2).certificate()
    assert isinstance(fs.certificate(), DescriptionLength)


@pytest.mark.parametrize("kwargs, match", [
    ({"sigma": 0.0}, "`sigma`"),
    ({"sigma": -1.0}, "`sigma`"),
    ({"sigma": 1.0, "noise_sd": 0.001}, "`noise_sd` must be at least 0.01"),
    ({"sigma": 1.0, "noise_sd": math.nan}, "`noise_sd`"),
    ({"sigma": "one"}, "`sigma`"),
])
def test_selector_arguments_are_checked(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        RandomizedLassoSupport("y", FEATURES, lam=5.0, max_size=3, **kwargs)
    with pytest.raises((TypeError, ValueError), match=match):
        RandomizedForwardStepwise("y", FEATURES, steps=2, **kwargs)


@settings(max_examples=60, deadline=None)
@given(sigma=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.none(), st.text()),
       noise=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3)))
def test_any_sigma_and_noise_either_build_or_raise_naming_the_argument(sigma, noise):
    try:
        sel = RandomizedLassoSupport("y", FEATURES, lam=5.0, max_size=3, sigma=sigma, noise_sd=noise)
    except (TypeError, ValueError) as exc:
        assert "`sigma`" in str(exc) or "`noise_sd`" in str(exc)
    else:
        assert 0 < sel.sigma < math.inf and sel.noise_sd >= 0.01 * sel.sigma


@pytest.mark.parametrize("formula, term, kw, match", [
    ("y ~ {rest}", "{first}", {}, "exactly the selected features"),                  # one selected missing
    ("y ~ {all} + x7 + x6", "{first}", {}, "exactly the selected features"),         # extra features
    ("y ~ {all} - 1", "{first}", {}, "with an intercept"),
    ("np.log(y + 10) ~ {all}", "{first}", {}, "exactly the selected features"),
    ("y ~ {all} + {first}:{second}", "{first}", {}, "interaction"),
    ("y ~ {all}", "x7", {}, "not one of the selected features"),
    ("y ~ {all}", "{first}", {"cov_type": "HC1"}, "cov_type='nonrobust'"),
    ("y ~ {all}", "{first}", {"model": "poisson"}, "model='ols'"),
])
def test_tests_that_are_not_the_selected_regression_are_refused(formula, term, kw, match):
    frame = _frame(np.random.default_rng(4), n=300, beta=(0.8, 0.7, 0.6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(RandomizedForwardStepwise("y", FEATURES[:6], steps=3, sigma=1.0))
    first, second = sel.value[0], sel.value[1]
    fill = {"all": " + ".join(sel.value), "rest": " + ".join(sel.value[1:]), "first": first, "second": second}
    frame_formula, frame_term = formula.format(**fill), term.format(**fill)
    with pytest.raises((TypeError, ValueError), match=match):
        a.test(CoefficientTest(formula=frame_formula, term=frame_term, **kw), conditional_on=sel)
    with pytest.raises(TypeError, match="CoefficientTest"):
        a.test(OneSampleTTest(column=first), conditional_on=sel)
    assert len(a.ledger.rows()) == 1                  # the refused tests left the ledger as it was


def _note(frame):
    return frame.note.iloc[0]


def test_withheld_when_the_declared_sigma_is_implausibly_small():
    frame = _frame(np.random.default_rng(5), n=300, sd=1.0)
    _, _, f = _run(frame, RandomizedLassoSupport("y", FEATURES, lam=20.0, max_size=P, sigma=0.7))
    assert f.pvalue_conditional.isna().all()
    assert "declared sigma 0.7 is implausibly small" in _note(f)
    _, _, ok = _run(frame, RandomizedLassoSupport("y", FEATURES, lam=20.0, max_size=P, sigma=1.0))
    assert ok.pvalue_conditional.notna().any()


def test_withheld_when_the_lasso_selected_more_than_max_size():
    frame = _frame(np.random.default_rng(6), n=300, beta=(0.8, 0.7, 0.6))
    _, sel, f = _run(frame, RandomizedLassoSupport("y", FEATURES, lam=5.0, max_size=2, sigma=1.0))
    assert sel.details["truncated"] and len(sel.value) == 2
    assert f.pvalue_conditional.isna().all() and "more than max_size = 2" in _note(f)


def test_withheld_when_another_step_is_on_the_ledger():
    frame = _frame(np.random.default_rng(7), n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=3)
        a.select(TopK(k=1, score=CandidateScores(FEATURES, kind="mean", absolute=True), candidates=FEATURES))
        sel = a.select(RandomizedLassoSupport("y", FEATURES, lam=20.0, max_size=P, sigma=1.0))
        a.test(CoefficientTest(formula=_formula(sel), term=sel.value[0]), conditional_on=sel)
        f = a.report().frame
    assert math.isnan(f.pvalue_conditional.iloc[0])
    assert "conditions on step 2 only, and the ledger has 2 steps" in _note(f)


def test_withheld_when_the_rows_are_grouped_in_units():
    frame = _frame(np.random.default_rng(8), n=300)
    frame["unit"] = np.repeat(np.arange(150), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=3, units="unit")
        sel = a.select(RandomizedLassoSupport("y", FEATURES, lam=20.0, max_size=P, sigma=1.0))
        a.test(CoefficientTest(formula=_formula(sel), term=sel.value[0]), conditional_on=sel)
        f = a.report().frame
    assert math.isnan(f.pvalue_conditional.iloc[0]) and "grouped in units" in _note(f)


def _null_frames(selector, reps, seed):
    """Report frames of global-null replications, testing the first selected feature (chosen
    from the selection only); replications that select nothing are skipped."""
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        frame = _frame(rng, n=60, beta=())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = Analysis(frame, rng=int(rng.integers(2**31)))
            sel = a.select(selector)
            if not sel.value:
                continue
            a.test(CoefficientTest(formula=_formula(sel), term=sel.value[0]), conditional_on=sel)
            yield a.report().frame


@pytest.mark.parametrize("selector", [
    RandomizedLassoSupport("y", FEATURES, lam=8.0, max_size=P, sigma=1.0, noise_sd=0.5),
    RandomizedForwardStepwise("y", FEATURES, steps=2, sigma=1.0, noise_sd=0.5),
], ids=["lasso", "stepwise"])
def test_the_column_holds_its_level_under_the_global_null(selector):
    """300 global-null replications through Analysis: the naive test of a selected coefficient
    rejects too often, the carving column holds 0.05 and 0.01 (false-failure rate 1e-6 per level)."""
    assert_null_column_holds(_null_frames(selector, 300, seed=17), naive_above=0.1, max_withheld=0.2)


PLAN = {
    "analysis": {"alpha": 0.05, "seed": 13},
    "select": [{"selector": "randomized_lasso", "target": "y", "candidates_like": "*", "lam": 20.0, "max_size": 8,
                "sigma": 1.0}],
    "test": [{"kind": "ols", "for_each": 1, "formula": "y ~ {support}", "term": "{selected}", "conditional": True}],
}


def test_plan_file_runs_the_carving_column_as_the_analysis_does():
    frame = _frame(np.random.default_rng(9), n=400)
    a = run_plan(parse_plan(PLAN), frame)
    sel = a.selections[0]
    f = a.report().frame
    assert list(f.index) == [f"coef[{v}] = 0 in OLS y ~ {' + '.join(sel.value)}" for v in sel.value]
    _, _, g = _run(frame, RandomizedLassoSupport("y", FEATURES, lam=20.0, max_size=8, sigma=1.0), seed=13)
    pd.testing.assert_series_equal(f.pvalue_conditional, g.pvalue_conditional)
    assert f.pvalue_conditional.notna().any()


@pytest.mark.parametrize("change, match", [
    ({"sigma": None}, "needs the field `sigma`"),
    ({"lam": -1.0}, "lam"),
    ({"max_size": 0}, "max_size"),
    ({"steps": 2}, "unknown"),
    ({"noise_sd": "big"}, "noise_sd"),
    ({"target": 3}, "target"),
])
def test_plan_fields_of_the_randomized_lasso_are_checked(change, match):
    block = {**PLAN["select"][0], **change}
    block = {k: v for k, v in block.items() if v is not None}
    with pytest.raises(PlanError, match=match):
        parse_plan({**PLAN, "select": [block]})


def test_plan_stepwise_steps_beyond_the_features_name_the_field():
    frame = _frame(np.random.default_rng(10), n=100)
    plan = {**PLAN, "select": [{"selector": "randomized_stepwise", "target": "y", "candidates": ["x0", "x1", "y"],
                                "steps": 3, "sigma": 1.0}]}
    with pytest.raises(PlanError, match=r"steps.*at most the number of features \(2\)"):
        run_plan(parse_plan(plan), frame)


def test_the_recorded_randomization_cannot_be_swapped():
    """The conditional column integrates over the recorded omega: the details are read-only and
    the array cannot be made writeable (a re-drawn omega that keeps the selection could otherwise
    be shopped for a small p-value)."""
    frame = _frame(np.random.default_rng(11))
    _, sel, _ = _run(frame, RandomizedLassoSupport("y", FEATURES, lam=12.0, max_size=P, sigma=1.0))
    with pytest.raises(TypeError):
        sel.details["randomization"] = np.zeros(len(frame))
    with pytest.raises(ValueError):
        sel.details["randomization"].setflags(write=True)


def test_labels_that_are_not_strings_are_refused_not_matched_by_their_text():
    """An integer column 0 and a string column "0" are different columns: a formula can only name
    the string one, so a selection holding the integer label is refused with the reason."""
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({0: rng.normal(size=200), "0": rng.normal(size=200), "x": rng.normal(size=200)})
    frame["y"] = 0.6 * frame[0] + 0.5 * frame["x"] + rng.normal(size=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(RandomizedForwardStepwise("y", [0, "x"], steps=2, sigma=1.0))
    with pytest.raises(ValueError, match=r"columns \[0\] are not strings"):
        a.test(CoefficientTest(formula="y ~ Q('0') + x", term="x"), conditional_on=sel)


def test_data_edited_in_place_after_the_selection_are_refused():
    frame = _frame(np.random.default_rng(13))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=1)
        sel = a.select(RandomizedLassoSupport("y", FEATURES, lam=12.0, max_size=P, sigma=1.0))
        a.test(CoefficientTest(formula=_formula(sel), term=sel.value[0]), conditional_on=sel)
    frame["y"] += 0.25 * frame[sel.value[0]]
    with pytest.raises(ValueError, match="modified in place after the Analysis was created"):
        a.report()
    with pytest.raises(ValueError, match="modified in place"):
        a.select(LassoSupport("y", FEATURES, lam=12.0, max_size=P))
    assert len(a.ledger.rows()) == 1      # the refused step recorded nothing


def test_plan_quotes_names_that_are_not_identifiers():
    rng = np.random.default_rng(14)
    names = ["x a", "x-1", "x.1", "class"]
    frame = pd.DataFrame(rng.normal(size=(200, 4)), columns=names)
    frame["y"] = 0.5 * frame["x a"] + 0.4 * frame["x-1"] + rng.normal(size=200)
    plan = {"analysis": {"seed": 3}, "select": [{"selector": "randomized_stepwise", "target": "y",
                                                  "candidates": names, "steps": 3, "sigma": 1.0}],
            "test": [{"kind": "ols", "for_each": 1, "formula": "y ~ {support}", "term": "{selected}",
                      "conditional": True}]}
    a = run_plan(parse_plan(plan), frame)
    f = a.report().frame
    assert f.index[0] == 'coef[Q("x a")] = 0 in OLS y ~ ' + " + ".join(f'Q("{v}")' for v in a.selections[0].value)
    assert f.pvalue_conditional.notna().any()


def test_a_one_sided_test_gets_a_one_sided_conditional_bound():
    frame = _frame(np.random.default_rng(15), n=400)
    _, sel, f = _run(frame, RandomizedForwardStepwise("y", FEATURES, steps=2, sigma=1.0), alternative="greater")
    shown = f.ci_conditional_low.notna()
    assert shown.any()
    assert (f.ci_conditional_high[shown] == math.inf).all()
    for note in f.note[shown]:
        assert "one-sided 0.95 bound of the test's direction (greater): the end of the equal-tailed 0.9" in note
    _, _, two = _run(frame, RandomizedForwardStepwise("y", FEATURES, steps=2, sigma=1.0))
    assert not any("one-sided" in note for note in two.note)
    both = shown & two.ci_conditional_low.notna()
    assert (f.ci_conditional_low[both] > two.ci_conditional_low[both]).all()


def test_scales_whose_squares_are_not_finite_positive_doubles_are_refused():
    """Found by the plan fuzzer: sigma = 3.6e-263 passed, and its square (0) was divided by."""
    for bad in (3.557495372281764e-263, 1e200):
        with pytest.raises(ValueError, match=r"`sigma` must lie between 1e-150 and 1e\+150"):
            RandomizedLassoSupport("y", FEATURES, lam=5.0, max_size=3, sigma=bad)
        with pytest.raises(ValueError, match=r"`noise_sd` must lie between"):
            RandomizedForwardStepwise("y", FEATURES, steps=2, sigma=1.0, noise_sd=bad * 1e-10 if bad > 1 else bad)
    block = {**PLAN["select"][0], "sigma": 3.557495372281764e-263}
    with pytest.raises(PlanError, match="sigma"):
        run_plan(parse_plan({**PLAN, "select": [block]}), _frame(np.random.default_rng(16)))
