"""The report's conditional column: inference on winners after a TopK screen, through Analysis."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from selective import Analysis
from selective.analysis.audit import audit_record, dump_record, table_from_audit, validate_audit
from selective.analysis.report import CONDITIONAL_COLUMNS, HYBRID_COLUMNS, TABLE_COLUMNS
from selective.conditional import winners_inference
from selective.hypotheses import OneSampleTTest, OneSampleZTest, TwoSampleTTest, TwoSampleZTest
from selective.selectors import CandidateScores, NoisyTopK, TopK, TwoGroupScores
from tests.conditional_helpers import assert_null_column_holds, run_conditioned, two_arm_frame
from tests.stats_helpers import assert_rate_at_most

COLS = [f"x{i}" for i in range(30)]
LEVELS = ("a", "b")


def _two_group_frame(rng, *, n=150, rho=0.5, effect=0.0):
    """Equicorrelated normal candidates in two arms of n rows; ``effect`` shifts x0 in arm a."""
    return two_arm_frame(rng, COLS, n=n, rho=rho, effect=effect, levels=LEVELS)


def _screen(k=1, kind="welch_t", absolute=True):
    return TopK(k=k, score=TwoGroupScores(COLS, "arm", LEVELS, kind=kind, absolute=absolute), candidates=COLS)


def _welch(column, **kw):
    return TwoSampleTTest(column=column, group="arm", levels=LEVELS, usevar="unequal", **kw)


def test_null_winner_holds_its_level_with_correlated_candidates():
    # 600 null replications; the naive p-value of the winner rejects about half the time. The
    # conditional column (withheld counts as no rejection) must hold 0.05 and 0.01: a correct
    # implementation fails with probability below 1e-6 per level (one-sided exact binomial).
    rng = np.random.default_rng(20261124)
    pc, naive = [], []
    for _ in range(600):
        a = Analysis(_two_group_frame(rng), rng=1)
        sel = a.select(_screen())
        a.test(_welch(sel.value[0]), conditional_on=sel)
        f = a.report().frame
        pc.append(f.pvalue_conditional.iloc[0])
        naive.append(f.pvalue_naive.iloc[0])
    pc = np.array(pc)
    assert np.mean(np.array(naive) <= 0.05) > 0.3  # the selection matters: naive p-values are far too small
    assert np.mean(np.isnan(pc)) < 0.5  # the column is mostly shown with normal data
    for level in (0.05, 0.01):
        assert_rate_at_most(int(np.sum(pc <= level)), len(pc), level)


def _top2_of_correlated_means():
    """Means of 12 correlated columns (one shifted by 0.25), 400 rows, and an analysis that took the top 2."""
    rng = np.random.default_rng(7)
    cols = [f"c{i}" for i in range(12)]
    x = 0.3 * rng.standard_normal((400, 1)) + rng.standard_normal((400, 12))
    x[:, 3] += 0.25
    a = Analysis(pd.DataFrame(x, columns=cols), rng=1)
    return cols, x, a, a.select(TopK(k=2, score=CandidateScores(cols, kind="mean"), candidates=cols))


def test_one_sample_column_is_the_winners_pivot_on_the_means():
    # Cross-check of the plumbing (labels, covariance S/n, the tested value) against a direct
    # call: means of 12 correlated columns, top-2 by value, H0: mu = 0.05 for each winner.
    cols, x, a, sel = _top2_of_correlated_means()
    for c in sel.value:
        a.test(OneSampleTTest(column=c, value=0.05), conditional_on=sel)
    table = a.report(alpha=0.1)
    direct = winners_inference(pd.Series(x.mean(axis=0), index=cols), np.cov(x, rowvar=False) / 400, k=2,
                               by="value", alpha=0.1, null_value=0.05)
    for r, c in enumerate(direct.candidates):
        row = table.frame.iloc[list(sel.value).index(c)]
        assert row.pvalue_conditional == pytest.approx(direct.pvalue_conditional[r], rel=1e-9)
        if not math.isnan(row.ci_conditional_low):
            assert (row.ci_conditional_low, row.ci_conditional_high) == pytest.approx(
                tuple(direct.ci_conditional[r]), rel=1e-9)


def test_one_sided_winners_get_the_one_sided_conditional_bound():
    """alternative='greater': the lower end of the equal-tailed interval at 2 alpha, upper end infinite."""
    cols, x, a, sel = _top2_of_correlated_means()
    for c in sel.value:
        a.test(OneSampleTTest(column=c, value=0.05, alternative="greater"), conditional_on=sel)
    f = a.report(alpha=0.1).frame
    kw = dict(k=2, by="value", null_value=0.05, alternative="greater")
    est, cov = pd.Series(x.mean(axis=0), index=cols), np.cov(x, rowvar=False) / 400
    wide = winners_inference(est, cov, alpha=0.2, **kw)
    shown = 0
    for r, c in enumerate(wide.candidates):
        row = f.iloc[list(sel.value).index(c)]
        if math.isnan(row.ci_conditional_low):
            continue
        shown += 1
        assert row.ci_conditional_low == pytest.approx(wide.ci_conditional[r][0], rel=1e-9)
        assert row.ci_conditional_high == math.inf
        assert "one-sided 0.9 bound" in row.note
    assert shown


def test_t_scores_give_intervals_on_the_mean_difference_scale():
    rng = np.random.default_rng(11)
    frame = _two_group_frame(rng, n=2000, effect=0.15)
    a = Analysis(frame, rng=1)
    sel = a.select(_screen(k=2))
    assert "x0" in sel.value
    a.test(_welch("x0"), conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert row.pvalue_conditional < 0.01
    assert 0 < row.ci_conditional_low < 0.15 < row.ci_conditional_high < 0.5  # the mean difference, not a t


def test_columns_and_renderings():
    rng = np.random.default_rng(3)
    a = Analysis(_two_group_frame(rng), rng=1)
    sel = a.select(_screen(k=2))
    a.test(_welch(sel.value[0]), conditional_on=sel)
    a.test(_welch(sel.value[1]))  # not conditioned: NaN in the conditional columns
    table = a.report()
    assert list(table.frame.columns) == list(TABLE_COLUMNS[:-1]) + list(CONDITIONAL_COLUMNS + HYBRID_COLUMNS) + ["note"]
    assert math.isnan(table.frame.pvalue_conditional.iloc[1])
    assert "pvalue_conditional" in table.columns_for("short")
    assert "pvalue_conditional" in table.columns_for("compact")
    assert set(CONDITIONAL_COLUMNS) <= set(table.columns_for("all"))
    assert "p (conditional)" in table.to_markdown()
    assert "(conditional)" in table.to_latex()
    assert "inference on winners" in table.frame.note.iloc[0] and "hybrid: beta = 0.005" in table.frame.note.iloc[0]
    record = validate_audit(json.loads(dump_record(audit_record(a, table))))  # the optional columns are audited
    pd.testing.assert_frame_equal(table_from_audit(record).frame, table.frame, check_dtype=False)
    # a table without conditioned tests keeps the plain column set
    b = Analysis(_two_group_frame(rng), rng=1)
    b.select(_screen())
    b.test(_welch("x1"))
    assert list(b.report().frame.columns) == list(TABLE_COLUMNS)


def test_withheld_when_the_ledger_has_another_step():
    rng = np.random.default_rng(5)
    a = Analysis(_two_group_frame(rng), rng=1)
    a.select(TopK(k=5, score=TwoGroupScores(COLS, "arm", LEVELS), candidates=COLS), label="family")
    sel = a.select(_screen())
    a.test(_welch(sel.value[0]), conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert all(math.isnan(row[c]) for c in CONDITIONAL_COLUMNS)
    assert "conditions on step 2 only, and the ledger has 2 steps" in row.note


def test_withheld_when_rows_are_grouped_in_units():
    rng = np.random.default_rng(6)
    frame = _two_group_frame(rng)
    frame["subject"] = np.arange(len(frame)) // 2
    a = Analysis(frame, rng=1, units="subject")
    sel = a.select(_screen())
    a.test(_welch(sel.value[0]), conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert math.isnan(row.pvalue_conditional) and "rows are grouped in units ('subject')" in row.note


def test_withheld_where_the_normal_approximation_is_not_trusted():
    # 12 rows per arm of lognormal data: the z-test of a mean difference is trusted only at large
    # levels, so the conditional p-value of a winner (small tail) cannot be shown
    rng = np.random.default_rng(9)
    frame = pd.DataFrame(np.exp(2 * rng.standard_normal((24, len(COLS)))), columns=COLS)
    frame["arm"] = np.repeat(list(LEVELS), 12)
    a = Analysis(frame, rng=1)
    sel = a.select(_screen())
    a.test(_welch(sel.value[0]), conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert math.isnan(row.ci_conditional_low)
    assert "where the z-test is trusted" in row.note


@pytest.mark.parametrize("spec, match", [
    (OneSampleTTest(column="x0"), "TwoSampleTTest or TwoSampleZTest"),
    (TwoSampleZTest(column="x0", group="arm", levels=("b", "a")), "levels=\\('a', 'b'\\)"),
])
def test_spec_must_test_the_screened_parameter(spec, match):
    rng = np.random.default_rng(1)
    frame = _two_group_frame(rng, effect=3.0)
    a = Analysis(frame, rng=1)
    sel = a.select(_screen())
    assert sel.value == ("x0",)
    with pytest.raises(ValueError, match=match):
        a.test(spec, conditional_on=sel)
    assert a.results == ()  # nothing was run


def test_conditional_on_errors_name_the_argument():
    rng = np.random.default_rng(2)
    frame = _two_group_frame(rng, effect=3.0)
    a = Analysis(frame, rng=1)
    sel = a.select(_screen())
    other = Analysis(frame, rng=1).select(_screen())
    with pytest.raises(ValueError, match="`conditional_on` must be a selection returned by this analysis"):
        a.test(_welch("x0"), conditional_on=other)
    with pytest.raises(ValueError, match="not among the selected candidates"):
        a.test(_welch("x5"), conditional_on=sel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noisy = a.select(NoisyTopK(k=1, epsilon=1.0, sensitivity=0.1, score=lambda d: d[COLS[:5]].mean().abs(),
                                   candidates=tuple(COLS[:5])))
    with pytest.raises(TypeError, match="the screen's score is function; inference on winners needs"):
        a.test(OneSampleZTest(column=noisy.value[0]), conditional_on=noisy)

    b = Analysis(frame, rng=1)
    corr = b.select(TopK(k=1, score=CandidateScores(COLS[1:], kind="corr", target="x0"), candidates=COLS[1:]))
    with pytest.raises(TypeError, match="kind 'mean' or 't'"):
        b.test(OneSampleTTest(column=corr.value[0]), conditional_on=corr)


def test_dask_data_give_the_same_conditional_column_or_say_why_not():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(21)
    frame = _two_group_frame(rng, n=200, effect=0.3)

    def table(data, **kw):
        a = Analysis(data, rng=1, **kw)
        sel = a.select(_screen(k=2))
        for c in sel.value:
            a.test(_welch(c), conditional_on=sel)
        return a.report().frame

    in_memory = table(frame)
    on_dask = table(dd.from_pandas(frame, npartitions=3))
    pd.testing.assert_frame_equal(on_dask[list(CONDITIONAL_COLUMNS)], in_memory[list(CONDITIONAL_COLUMNS)])
    # the tests' columns fit under the limit (about 32 kB), the screen's 31 columns do not (about 122 kB)
    small = table(dd.from_pandas(frame, npartitions=3), max_collect_bytes=60_000)
    assert small.pvalue_conditional.isna().all()
    assert "not collected from the Dask data" in small.note.iloc[0]


# ---------------------------------------------------------------- after a NoisyTopK screen


def _noisy_screen(epsilon, k=1, sensitivity=1.0, cols=COLS):
    return NoisyTopK(k=k, epsilon=epsilon, sensitivity=sensitivity,
                     score=TwoGroupScores(cols, "arm", LEVELS), candidates=cols)


def _screen_and_test(frame, seed, screen):
    """Run ``screen`` in a fresh analysis of ``frame``, Welch-test every selected column
    conditionally on it; return the selection and the report's frame."""
    return run_conditioned(frame, seed, screen, _welch)


def _arm_statistics(frame, cols):
    """Differences of arm means of ``cols`` and their (Welch) covariance."""
    g = frame.arm.to_numpy()
    xa, xb = frame.loc[g == "a", cols].to_numpy(), frame.loc[g == "b", cols].to_numpy()
    return xa.mean(0) - xb.mean(0), np.cov(xa, rowvar=False) / len(xa) + np.cov(xb, rowvar=False) / len(xb)


def test_noisy_screen_gets_the_randomized_conditional_column():
    from selective.conditional.randomized import NoisyTopKEvent, randomized_inference
    from selective.mechanisms.exponential import report_noisy_topk_gumbel_scale

    rng = np.random.default_rng(31)
    frame = _two_group_frame(rng, n=200, effect=0.6)
    sel, f = _screen_and_test(frame, 2, _noisy_screen(0.5, k=2))
    assert "randomized selective inference" in f.note.iloc[0]
    # the same numbers from the function, with the Welch statistics and their covariance
    d, cov = _arm_statistics(frame, COLS)
    se = np.sqrt(np.diag(cov))
    t = d / se
    b = report_noisy_topk_gumbel_scale(2, epsilon=0.5, sensitivity=1.0)
    chosen = tuple(COLS.index(c) for c in sel.value)
    for r, c in enumerate(sel.value):
        ref = randomized_inference(t, cov / np.outer(se, se), NoisyTopKEvent(chosen, "gumbel", b),
                                   targets=[COLS.index(c)], absolute=True)
        if not math.isnan(f.pvalue_conditional.iloc[r]):
            assert f.pvalue_conditional.iloc[r] == pytest.approx(ref.pvalue[0], rel=1e-9)
        if not math.isnan(f.ci_conditional_low.iloc[r]):
            assert f.ci_conditional_low.iloc[r] == pytest.approx(ref.ci[0, 0] * se[COLS.index(c)], rel=1e-7)
    assert f.pvalue_conditional.notna().any()


def test_noisy_screen_null_winner_holds_its_level():
    # 300 null replications of a NoisyTopK(k=1) screen by |Welch t| among 10 correlated outcomes
    # (epsilon 1, declared sensitivity 1: Gumbel scale 2); the naive p-value of the winner rejects
    # far above 0.05. The conditional column (withheld counts as no rejection) must hold 0.05
    # and 0.01: a correct implementation fails with probability below 1e-6 per level.
    rng = np.random.default_rng(20261127)
    cols = COLS[:10]

    def frames():
        for _ in range(300):
            yield _screen_and_test(_two_group_frame(rng, n=80), rng, _noisy_screen(1.0, cols=cols))[1]

    assert_null_column_holds(frames(), naive_above=0.1)


def test_noisy_screen_with_candidates_in_another_order_than_its_score():
    # the selector declares its candidates in its own order, the score reads its columns in
    # another: the column must align the statistics with the selector's candidates
    from selective.conditional.randomized import NoisyTopKEvent, randomized_inference
    from selective.mechanisms.exponential import report_noisy_topk_gumbel_scale

    rng = np.random.default_rng(41)
    frame = _two_group_frame(rng, n=400, effect=0.4)
    cands = [COLS[j] for j in (7, 0, 3, 12, 5)]
    score = TwoGroupScores(sorted(cands), "arm", LEVELS, kind="difference", absolute=True)
    sel, f = _screen_and_test(frame, 3, NoisyTopK(k=1, epsilon=2.0, sensitivity=0.05, score=score, candidates=cands))
    d, cov = _arm_statistics(frame, cands)
    b = report_noisy_topk_gumbel_scale(1, epsilon=2.0, sensitivity=0.05)
    j = cands.index(sel.value[0])
    ref = randomized_inference(d, cov, NoisyTopKEvent((j,), "gumbel", b), absolute=True)
    assert "randomized selective inference" in f.note.iloc[0]
    assert not math.isnan(f.pvalue_conditional.iloc[0])
    assert f.pvalue_conditional.iloc[0] == pytest.approx(ref.pvalue[0], rel=1e-9)


def _svt_screen(threshold, epsilon, cols, c=1, sensitivity=0.05):
    from selective.selectors import SparseVectorScreen

    return SparseVectorScreen(score=TwoGroupScores(cols, "arm", LEVELS, kind="difference"), threshold=threshold,
                              epsilon=epsilon, sensitivity=sensitivity, max_selected=c, candidates=cols)


def test_sparse_vector_screen_gets_the_randomized_column_of_its_event():
    from selective.conditional.randomized import SparseVectorEvent, randomized_inference
    from selective.mechanisms.sparse_vector import sparse_exact_noise_scales

    rng = np.random.default_rng(43)
    frame = _two_group_frame(rng, n=1000, effect=0.5)
    cols = COLS[:12]
    sel, f = _screen_and_test(frame, 5, _svt_screen(0.2, 1.0, cols, c=2))
    assert sel.value
    assert "sparse vector screen" in f.note.iloc[0]
    d, cov = _arm_statistics(frame, cols)
    sc = sparse_exact_noise_scales(epsilon=1.0, sensitivity=0.05, c=2)
    hits = [cols.index(c) for c in sel.value]
    last = hits[-1] if len(hits) == 2 else len(cols) - 1
    event = SparseVectorEvent(tuple(range(last + 1)), tuple(i in hits for i in range(last + 1)), 0.2,
                              sc.threshold_scale, sc.query_scale)
    for r, col in enumerate(sel.value):
        ref = randomized_inference(d, cov, event, targets=[cols.index(col)], absolute=True)
        if not math.isnan(f.pvalue_conditional.iloc[r]):
            assert f.pvalue_conditional.iloc[r] == pytest.approx(ref.pvalue[0], rel=1e-9)
    assert f.pvalue_conditional.notna().all() and sel.value[0] == "x0" and f.pvalue_conditional.iloc[0] < 1e-10


def test_sparse_vector_screen_null_holds_its_level():
    # 250 null replications of AboveThreshold (c = 1) over 10 correlated outcomes by |difference of
    # means|; replications where nothing crosses test nothing. The conditional column (withheld
    # counts as no rejection) must hold 0.05 and 0.01: a correct implementation fails with
    # probability below 1e-6 per level (exact binomial).
    rng = np.random.default_rng(20261128)
    cols = COLS[:10]
    pc = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(250):
            a = Analysis(_two_group_frame(rng, n=100), rng=rng)
            sel = a.select(_svt_screen(0.2, 2.0, cols))
            if not sel.value:
                continue
            a.test(_welch(sel.value[0]), conditional_on=sel)
            pc.append(a.report().frame.pvalue_conditional.iloc[0])
    pc = np.array(pc)
    assert pc.size >= 100 and np.mean(np.isnan(pc)) < 0.5
    for level in (0.05, 0.01):
        assert_rate_at_most(int(np.sum(pc <= level)), len(pc), level)
