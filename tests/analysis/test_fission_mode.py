"""Data fission inside Analysis: the selectors see one copy, the tests the other."""

from __future__ import annotations

import html
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from selective import Analysis
from selective.analysis.audit import audit_record, dump_record, table_from_audit, validate_audit
from selective.analysis.report import FISSION_COLUMNS, TABLE_COLUMNS
from selective.hypotheses import CoefficientTest, OneSampleTTest, TwoSampleTTest
from selective.selectors import CandidateScores, TopK, TwoGroupScores
from tests.stats_helpers import assert_rate_at_most

COLS = [f"y{i}" for i in range(30)]
LEVELS = ("a", "b")


def _frame(rng, *, n=60, effect=0.0):
    x = rng.standard_normal((2 * n, len(COLS)))
    x[:n, 0] += effect
    frame = pd.DataFrame(x, columns=COLS)
    frame["arm"] = np.repeat(list(LEVELS), n)
    return frame


def _screen(k=1, columns=COLS):
    return TopK(k=k, score=TwoGroupScores(columns, "arm", LEVELS), candidates=columns)


def _t(column):
    return TwoSampleTTest(column=column, group="arm", levels=LEVELS)


def test_fission_column_holds_its_level_where_the_naive_one_does_not():
    # 500 null replications: top-1 of 30 outcomes by |Welch t| on the exploration copies, the
    # t-test on the confirmation copy. The fission column must hold 0.05 and 0.01 (a correct
    # implementation fails with probability below 1e-6 per level, one-sided exact binomial);
    # testing the explored data instead (the bug this guards against) rejects about 0.6 at 0.05.
    rng = np.random.default_rng(20261124)
    pf, naive_raw = [], []
    for _ in range(500):
        frame = _frame(rng)
        a = Analysis(frame, rng=int(rng.integers(2**31))).fission(COLS, method="gaussian", sigma=1.0)
        sel = a.select(_screen())
        a.test(_t(sel.value[0]))
        row = a.report().frame.iloc[0]
        pf.append(row.pvalue_fission)
        naive_raw.append(_t(sel.value[0]).run(a._explore).pvalue_naive)
    pf = np.array(pf)
    assert not np.isnan(pf).any()
    assert np.mean(np.array(naive_raw) <= 0.05) > 0.3
    for level in (0.05, 0.01):
        assert_rate_at_most(int(np.sum(pf <= level)), len(pf), level)


def test_fission_keeps_power_and_the_ledger_columns():
    rng = np.random.default_rng(4)
    a = Analysis(_frame(rng, n=150, effect=0.8), rng=1, n_candidates=len(COLS))
    a.fission(COLS, method="gaussian", sigma=1.0, tau=1.0)
    sel = a.select(_screen(k=2))
    assert "y0" in sel.value
    for c in sel.value:
        a.test(_t(c))
    table = a.report()
    assert list(table.frame.columns) == list(TABLE_COLUMNS[:-1]) + list(FISSION_COLUMNS) + ["note"]
    row = table.frame.loc[[i for i in table.frame.index if "(y0 " in i][0]]
    assert row.pvalue_fission < 1e-3 and row.pvalue_fission == row.pvalue_naive
    assert not math.isnan(row.pvalue_best)  # the ledger's columns are still there
    assert "confirmation copy ('y0': Gaussian outcomes with the known sigma" in row.note
    assert "p (fission)" in table.to_markdown() and "pvalue_fission" in table.columns_for("compact")
    # without the note column, what the fission rows were tested on travels as a sentence under the table
    sentence = "Fission column: tested on the confirmation copies (y0 for "  # row 1, or its label in LaTeX
    for text in (table.to_markdown(), html.unescape(table.to_html()), table.to_latex()):
        assert sentence in text and "): Gaussian outcomes with the known sigma given, independent rows" in text
        assert "the row's estimate, naive p-value and interval are those of the confirmation copy" in text
    record = validate_audit(json.loads(dump_record(audit_record(a, table))))  # the optional columns are audited
    pd.testing.assert_frame_equal(table_from_audit(record).frame, table.frame, check_dtype=False)


def test_poisson_thinning_in_an_analysis():
    rng = np.random.default_rng(8)
    frame = pd.DataFrame(rng.poisson(3.0, size=(200, 10)), columns=[f"c{i}" for i in range(10)])
    frame["x"] = rng.standard_normal(200)
    cols = [f"c{i}" for i in range(10)]
    a = Analysis(frame, rng=2).fission(cols, method="poisson", epsilon=0.5)
    explore, confirm = a._explore[cols], a._confirm[cols]
    assert (explore + confirm == frame[cols]).all().all()  # thinning splits each count
    sel = a.select(TopK(k=1, score=CandidateScores(cols, kind="corr", target="x", absolute=True), candidates=cols))
    a.test(CoefficientTest(formula=f"{sel.value[0]} ~ x", term="x", model="poisson"))
    row = a.report().frame.iloc[0]
    assert not math.isnan(row.pvalue_fission)
    assert "times 1 - epsilon" in row.note
    assert "(means times 1 - epsilon); the row's estimate" in a.report().to_markdown()


SUCCESSES = [f"s{i}" for i in range(20)]


def _counts_frame(rng, n=120):
    """20 count outcomes with per-row trials m (3 to 20) and a covariate x, all null (p = 0.3)."""
    m = rng.integers(3, 21, size=n)
    frame = pd.DataFrame(rng.binomial(m[:, None], 0.3, size=(n, len(SUCCESSES))), columns=SUCCESSES)
    frame["m"], frame["x"] = m, rng.standard_normal(n)
    return frame


def _counts_test(column):
    return CoefficientTest(formula=f"{column} + I(m - {column}) ~ x", term="x", model="logit")


def test_binomial_thinning_in_an_analysis_holds_its_level():
    # 300 null replications: top-1 of 20 count outcomes by |correlation with x| on the exploration
    # copies, a logit of the counts on x on the confirmation copies. The trials column is split
    # with the counts (each part a count of its own trials). The fission column must hold 0.05
    # (one-sided exact binomial, false-failure rate 1e-6); the same test on the explored copy
    # (the bug this guards against) rejects far more often.
    rng = np.random.default_rng(20261128)
    score = CandidateScores(SUCCESSES, kind="corr", target="x", absolute=True)
    fission, explored = [], []
    for _ in range(300):
        frame = _counts_frame(rng)
        a = Analysis(frame, rng=int(rng.integers(2**31))).fission(SUCCESSES, method="binomial", trials="m",
                                                                   epsilon=0.5)
        explore, confirm = a._explore, a._confirm
        assert (explore[SUCCESSES] + confirm[SUCCESSES] == frame[SUCCESSES]).all().all()
        assert (explore.m + confirm.m == frame.m).all() and (explore.m == np.rint(frame.m / 2).clip(1)).all()
        assert (explore[SUCCESSES].le(explore.m, axis=0)).all().all()
        sel = a.select(TopK(k=1, score=score, candidates=SUCCESSES))
        a.test(_counts_test(sel.value[0]))
        row = a.report().frame.iloc[0]
        fission.append(row.pvalue_fission)
        explored.append(_counts_test(sel.value[0]).run(explore).pvalue_naive)
        if len(fission) <= 20 and not math.isnan(row.pvalue_fission):  # the column is the confirmation copy's Wald
            s, m = confirm[sel.value[0]].to_numpy(), confirm.m.to_numpy()
            fit = sm.GLM(np.column_stack([s, m - s]), sm.add_constant(confirm.x.to_numpy()),
                         family=sm.families.Binomial()).fit()
            assert row.pvalue_fission == pytest.approx(fit.pvalues[1], rel=1e-8, abs=1e-14)
    assert "binomial counts with exchangeable trials" in row.note and "'m': the numbers of trials" in row.note
    fission = np.array(fission)
    # withheld (not a rejection) where the Wald test is trusted only above 0.05 (small counts; about 7%
    # of these samples) or the counts' variance check fires (about 3% of binomial samples)
    assert np.mean(np.isnan(fission)) < 0.25
    assert_rate_at_most(int(np.sum(fission <= 0.05)), len(fission), 0.05)
    assert np.mean(np.array(explored) <= 0.05) > 0.2


def test_binomial_thinning_errors():
    rng = np.random.default_rng(3)
    frame = _counts_frame(rng)
    a = Analysis(frame, rng=1)
    with pytest.raises(ValueError, match="`trials` applies to method='binomial' only; got trials='m' with "
                                         "method='poisson'"):
        a.fission("s0", method="poisson", trials="m")
    more = frame.copy()
    more.loc[2, "s3"] = more.loc[2, "m"] + 1
    with pytest.raises(ValueError, match="column 's3' \\(the counts\\) must not exceed column 'm' \\(the trials\\); "
                                         "row 2 has"):
        Analysis(more, rng=1).fission(["s0", "s3"], method="binomial", trials="m")
    more["s3"] = more["s3"].astype(float)
    more.loc[2, "s3"] = 1.5
    with pytest.raises(ValueError, match="column 's3' \\(the counts\\) must hold non-negative integers; entry 2 is "
                                         "1.5\\."):
        Analysis(more, rng=1).fission("s3", method="binomial", trials="m")
    with pytest.raises(ValueError, match="nope"):
        a.fission("s0", method="binomial", trials="nope")
    with pytest.raises(ValueError, match="`trials` 'm' must be a column of numbers of trials that is not split "
                                         "itself \\(it is also in `column`\\)"):
        a.fission(["s0", "m"], method="binomial", trials="m")
    one = frame.copy()
    one.loc[5, "m"] = 1
    with pytest.raises(ValueError, match="column 'm' \\(the trials\\) must be at least 2 in every row to thin "
                                         "\\(row 5 has 1\\)"):
        Analysis(one, rng=1).fission("s0", method="binomial", trials="m")
    assert a._explore is None and not a._split  # nothing half-done
    with pytest.raises(TypeError, match="`trials` must be the label of one column of numbers of trials; got \\['m'\\]"):
        a.fission("s0", method="binomial", trials=["m"])
    a.fission("s0", method="binomial", trials="m")
    with pytest.raises(ValueError, match="it is split already"):
        a.fission("s1", method="binomial", trials="m")


def test_a_trials_column_is_conditioned_on_not_tested():
    # the copies of the trials column are fixed by it (m1 = rint(epsilon m), m - m1): a test of the
    # trials themselves, or of a count that the selection could see m for without conditioning on
    # it, is withheld (an adversarial review measured 7.8% at 0.05 when m was treated as split)
    rng = np.random.default_rng(5)
    frame = _counts_frame(rng)
    a = Analysis(frame, rng=1).fission(SUCCESSES, method="binomial", trials="m")
    a.select(TopK(k=1, score=CandidateScores(SUCCESSES + ["m"], kind="corr", target="x", absolute=True),
                  candidates=SUCCESSES + ["m"]))
    a.test(CoefficientTest(formula="m ~ x", term="x", model="ols"))
    a.test(CoefficientTest(formula="s0 ~ x", term="x", model="ols"))
    a.test(_counts_test("s0"))
    notes = a.report().frame.note.tolist()
    assert "fission withheld: the tested outcome m is a column of numbers of trials" in notes[0]
    assert "fission withheld: the selection read m unsplit, which this test does not condition on" in notes[1]
    assert "fission withheld" not in notes[2]  # the logit of counts conditions on m


def test_withheld_when_the_selection_read_an_unsplit_correlated_outcome():
    # z_j is a second measurement of the same unit as y_j (correlation 0.8), left unsplit. The
    # screen ranks the means of z; the test is on the confirmation copy of y. The naive p-value
    # rejects far above alpha, and the report withholds the fission column, naming z.
    rng = np.random.default_rng(12)
    ys, zs = [f"y{i}" for i in range(20)], [f"z{i}" for i in range(20)]
    rejections, withheld = 0, 0
    for _ in range(200):
        common = rng.standard_normal((80, 20))
        frame = pd.DataFrame(np.hstack([0.8 * common + 0.6 * rng.standard_normal((80, 20)),
                                        0.8 * common + 0.6 * rng.standard_normal((80, 20))]), columns=ys + zs)
        a = Analysis(frame, rng=1).fission(ys, method="gaussian", sigma=1.0, tau=2.0)
        sel = a.select(TopK(k=1, score=CandidateScores(zs, kind="t", absolute=True), candidates=zs))
        a.test(OneSampleTTest(column="y" + sel.value[0][1:]))
        row = a.report().frame.iloc[0]
        rejections += row.pvalue_naive <= 0.05
        withheld += math.isnan(row.pvalue_fission) and "read z" in row.note
    assert withheld == 200
    assert rejections > 0.2 * 200  # what the column would have shown


def test_other_reasons_to_withhold():
    rng = np.random.default_rng(1)
    frame = _frame(rng)
    frame["w"] = rng.standard_normal(len(frame))
    a = Analysis(frame, rng=1).fission(COLS[:10], method="gaussian", sigma=1.0)
    a.select(_screen(columns=COLS[:10]))
    a.test(_t("y20"))  # an outcome that was not split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = Analysis(frame, rng=1).fission(COLS, method="gaussian", sigma=1.0)
        b.select(TopK(k=1, score=lambda d: d[COLS].mean().abs(), candidates=COLS))  # undeclared columns
        b.test(_t("y0"))
    notes = [a.report().frame.note.iloc[0], b.report().frame.note.iloc[0]]
    assert "the tested outcome y20 was not split" in notes[0]
    assert "selection step 1 does not declare the columns it reads" in notes[1]


def test_fission_errors_name_the_argument_and_leave_the_analysis_unchanged():
    rng = np.random.default_rng(2)
    frame = _frame(rng)
    a = Analysis(frame, rng=1)
    with pytest.raises(ValueError, match="`sigma` is required for method='gaussian'"):
        a.fission("y0", method="gaussian")
    with pytest.raises(ValueError, match="`sigma` applies to method='gaussian' only"):
        a.fission("y0", method="poisson", sigma=1.0)
    with pytest.raises(ValueError, match="`method` must be one of"):
        a.fission("y0", method="beta")
    with pytest.raises(ValueError, match="method='binomial' needs `trials`, the name of the column of numbers of "
                                         "trials \\(at least 2 in every row\\); got trials=None"):
        a.fission("y0", method="binomial")
    with pytest.raises(ValueError, match="nope"):
        a.fission(["y0", "nope"], method="gaussian", sigma=1.0)
    assert a._explore is None and not a._split  # nothing half-done
    a.fission("y0", method="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="`column` 'y0' is split twice"):
        a.fission("y0", method="gaussian", sigma=1.0)
    sel = a.select(_screen())
    with pytest.raises(ValueError, match="before any selection step or test; here a selection step already ran: "
                                         "call it first"):
        a.fission("y1", method="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="`conditional_on` is not for an analysis with fission"):
        a.test(_t(sel.value[0]), conditional_on=sel)
    frame.loc[3, "y2"] = np.nan
    with pytest.raises(ValueError, match="column 'y2' has 1 missing value"):
        Analysis(frame, rng=1).fission("y2", method="gaussian", sigma=1.0)
    frame["subject"] = np.arange(len(frame)) // 2
    with pytest.raises(ValueError, match="independent rows \\(no `units`\\)"):
        Analysis(frame, rng=1, units="subject").fission("y0", method="gaussian", sigma=1.0)
