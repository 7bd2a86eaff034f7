"""The report uses each naive p-value only where it is trusted (THEORY.md pitfall 9).

A spec whose result declares ``trusted_level`` above the smallest corrected threshold is rerun
through ``run_at_level``; without a trusted version the columns below its level are withheld.
The fake specs below stand in for any test of the catalogue: what is checked is the report's
rule, not a particular test.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from selective import Analysis, DescriptionLength, Selection
from selective.analysis.trust import results_at_level, trusted_level


@dataclasses.dataclass(frozen=True)
class _Result:
    hypothesis: str
    pvalue_naive: float
    trusted_level: float
    pvalue_method: str
    estimate: float = 0.0
    ci_naive: tuple = (math.nan, math.nan)
    statistic: float = 0.0
    df: float = math.nan
    n_obs: int = 10


class _Spec:
    """A test whose asymptotic p-value is trusted down to 1e-2 and whose resampling version
    (if ``exact``) is trusted at any level."""

    def __init__(self, p: float, *, exact: bool, label: str = "h"):
        self.p, self.exact, self.label, self.calls = p, exact, label, 0

    def run(self, data):
        return _Result(self.label, self.p, 1e-2, "asymptotic")

    def run_at_level(self, data, level, *, rng=None):
        self.calls += 1
        if not self.exact:
            return self.run(data)
        assert isinstance(rng, np.random.Generator)
        return _Result(self.label, 2 * self.p, 0.0, "permutation")


def _analysis(*specs):
    a = Analysis(pd.DataFrame({"x": np.arange(20.0)}), rng=1, n_candidates=1000)
    a.preregister(DescriptionLength(1000))
    a.record(Selection(value=("x",), certificate=DescriptionLength(1000), label="one of 1000"))
    for s in specs:
        a.test(s)
    return a


def test_a_trusted_version_replaces_the_asymptotic_p_value_at_the_corrected_level():
    spec = _Spec(1e-7, exact=True)
    t = _analysis(spec).report()
    row = t.frame.iloc[0]
    assert row.pvalue_naive == 1e-7  # the test's own p-value; the permutation one (2e-7) is the one corrected
    assert row.pvalue_bonferroni == pytest.approx(2e-4)
    assert "permutation p-value used at the corrected level" in row.note
    assert spec.calls == 1


def test_without_a_trusted_version_the_columns_below_its_level_are_withheld():
    t = _analysis(_Spec(1e-7, exact=False)).report()
    row = t.frame.iloc[0]
    assert row.pvalue_naive == 1e-7
    # every threshold here is below 1e-2 (alpha / 1000 and smaller): all withheld, with the reason
    assert np.isnan(row.pvalue_bonferroni) and np.isnan(row.pvalue_best) and np.isnan(row.pvalue_maxinfo)
    assert np.isnan(row.ci_corrected_low) and row.best_route == ""
    assert "trusted down to 0.01 only" in row.note


def test_the_reason_for_withheld_cells_travels_with_every_rendering_without_the_note_column():
    t = _analysis(_Spec(1e-7, exact=False, label="h1"), _Spec(0.3, exact=True, label="h2")).report()
    reason = "trusted down to 0.01 only: corrected p-values that compare it with a smaller threshold are withheld"
    assert "asymptotic p-value " + reason in t.frame.note.iloc[0]
    reason = "Asymptotic p-value " + reason  # as a sentence under the table
    md, html, latex = t.to_markdown(), t.to_html(), t.to_latex()
    assert "n/a |" in md and "note" not in md.split("\n")[0].lower()
    for text in (md, html):
        assert reason + " (row 1)." in text  # each reason once, with the rows it applies to
    assert reason + " (h1)." in latex
    assert "(row 2)" not in md  # a row with nothing withheld is not listed
    # with the note column shown, the reason is in the row and not repeated under the table
    assert md.count(reason) == 1 and reason not in t.to_markdown(columns="all")


class _Failing(_Spec):
    """A test whose version for small levels raises on these data (e.g. its null fit fails)."""

    def run_at_level(self, data, level, *, rng=None):
        self.calls += 1
        raise ValueError("the null fit returned NaN")


def test_a_version_that_fails_on_the_data_withholds_the_cells_instead_of_crashing_the_report():
    spec = _Failing(1e-7, exact=True)
    a = _analysis(spec)
    row = a.report().frame.iloc[0]
    assert row.pvalue_naive == 1e-7
    assert np.isnan(row.pvalue_bonferroni) and np.isnan(row.pvalue_best) and np.isnan(row.pvalue_maxinfo)
    assert "failed on these data (the null fit returned NaN)" in row.note and "withheld" in row.note
    a.report()
    assert spec.calls == 1  # the failure is remembered like a result


def test_a_report_is_the_same_at_every_call_and_resamples_once():
    spec = _Spec(1e-7, exact=True)
    a = _analysis(spec)
    t1, t2 = a.report(), a.report()
    pd.testing.assert_frame_equal(t1.frame, t2.frame)
    assert spec.calls == 1


def test_results_trusted_at_the_level_are_left_alone():
    exact = _Spec(1e-7, exact=True)
    trusted = _Result("t", 1e-7, 1e-9, "exact")
    tests = [(exact, trusted), (exact, _Result("u", 1e-7, 0.0, "exact"))]
    out = results_at_level(tests, None, 1e-8, seed=np.random.SeedSequence(0))
    assert [t.result for t in out] == [trusted, tests[1][1]]
    assert not any(t.replaced for t in out) and exact.calls == 0


def test_trusted_level_of_undeclared_results_is_zero():
    assert trusted_level(object()) == 0.0
    assert trusted_level(_Result("h", 0.1, float("nan"), "asymptotic")) == 0.0
