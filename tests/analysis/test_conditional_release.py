"""The randomized conditional column after a NoisyStatistic release: the tested statistic's law
given every released noisy value (``ReleaseEvent``, docs/THEORY.md 3.12), through Analysis."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from selective import Analysis
from selective.hypotheses import TwoSampleTTest
from selective.selectors import NoisyStatistic, TwoGroupScores
from tests.conditional_helpers import assert_null_column_holds, two_arm_frame

COLS = [f"x{i}" for i in range(8)]
LEVELS = ("a", "b")


def _frame(rng, *, n, effect=0.0, rho=0.4):
    return two_arm_frame(rng, COLS, n=n, rho=rho, effect=effect, levels=LEVELS)


def _release(n_per_arm, epsilon=1.0, noise="laplace"):
    score = TwoGroupScores(COLS, "arm", LEVELS, kind="difference")
    kw = {"epsilon": epsilon} if noise == "laplace" else {"rho": epsilon, "noise": "gaussian"}
    # a declared sensitivity for outcomes taken as bounded by 4 (the column does not rely on it)
    return NoisyStatistic(score, sensitivity=2 * 4.0 / n_per_arm, index=tuple(COLS), **kw)


def _welch(column):
    return TwoSampleTTest(column=column, group="arm", levels=LEVELS, usevar="unequal")


def _run(frame, seed, selector):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=seed)
        sel = a.select(selector)
    best = sel.value.abs().idxmax()       # the test is chosen from the release
    a.test(_welch(best), conditional_on=sel)
    return sel, best, a.report().frame


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_release_gets_the_randomized_column_of_its_noisy_values(noise):
    from selective.conditional.randomized import ReleaseEvent, randomized_inference

    rng = np.random.default_rng(11)
    n = 1500
    frame = _frame(rng, n=n, effect=0.12)
    selector = _release(n, epsilon=0.5, noise=noise)
    sel, best, f = _run(frame, 4, selector)
    assert "noisy release" in f.note.iloc[0]
    g = frame.arm.to_numpy()
    xa, xb = frame.loc[g == "a", COLS].to_numpy(), frame.loc[g == "b", COLS].to_numpy()
    d = xa.mean(0) - xb.mean(0)
    cov = np.cov(xa, rowvar=False) / n + np.cov(xb, rowvar=False) / n
    # the score ranks |difference| (TwoGroupScores' default), so the release is of |d| + noise
    ref = randomized_inference(d, cov, ReleaseEvent(sel.value.to_numpy(), noise, selector.noise_scale()),
                               targets=[COLS.index(best)], absolute=True)
    assert f.pvalue_conditional.iloc[0] == pytest.approx(ref.pvalue[0], rel=1e-9)
    assert f.ci_conditional_low.iloc[0] == pytest.approx(ref.ci[0, 0], rel=1e-7)
    assert f.ci_conditional_high.iloc[0] == pytest.approx(ref.ci[0, 1], rel=1e-7)


def test_release_null_holds_its_level_when_the_test_is_chosen_from_it():
    # 300 null replications: 8 correlated outcomes, their arm differences released with Laplace
    # noise of about half a standard error, the outcome with the largest |released difference|
    # Welch-tested. The naive p-value rejects too often; the conditional column (withheld = no
    # rejection) must hold 0.05 and 0.01: a correct implementation fails with probability below
    # 1e-6 per level (one-sided exact binomial).
    rng = np.random.default_rng(20261128)
    n = 400
    frames = (_run(_frame(rng, n=n), rng, _release(n, epsilon=0.25))[2] for _ in range(300))
    assert_null_column_holds(frames, naive_above=0.1)


def test_release_link_errors_name_what_is_needed():
    frame = _frame(np.random.default_rng(2), n=100)
    a = Analysis(frame, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scalar = a.select(NoisyStatistic(lambda d: float(d.x0.mean()), sensitivity=0.1, epsilon=1.0))
    with pytest.raises(TypeError, match="needs a vector release with a declared `index`"):
        a.test(_welch("x0"), conditional_on=scalar)
    b = Analysis(frame, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opaque = b.select(NoisyStatistic(lambda d: d[COLS].mean(), sensitivity=0.1, epsilon=1.0, index=tuple(COLS)))
    with pytest.raises(TypeError, match="inference on winners needs a TwoGroupScores"):
        b.test(_welch("x0"), conditional_on=opaque)


def test_renderings_say_what_the_conditional_cells_rest_on_and_why_one_is_withheld():
    # the default Markdown, LaTeX and HTML sets leave out the note column: the conditional
    # column's method and each withheld cell's reason must still appear under the table
    frame = _frame(np.random.default_rng(11), n=300, effect=0.6)   # a release far out: withheld
    _, _, f = _run(frame, 4, _release(300, epsilon=5.0))
    assert np.isnan(f.pvalue_conditional.iloc[0]) and "withheld: given the release" in f.note.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=4)
        sel = a.select(_release(300, epsilon=5.0))
    a.test(_welch(sel.value.abs().idxmax()), conditional_on=sel)
    table = a.report()
    for text, row in ((table.to_markdown(), "row 1"), (table.to_html(), "row 1"), (table.to_latex(), "H1")):
        assert "Conditional column (" in text and "noisy release" in text
        assert "Conditional p-value and interval withheld: given the release" in text
        assert f"where the z-test is trusted ({row})" in text
    assert "Conditional column" not in table.to_markdown(columns="all")   # the note column is shown there
