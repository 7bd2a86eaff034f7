"""Every "n/a" cell of a rendered table comes with its reason (Markdown, LaTeX, HTML).

The renderings leave out the note column by default, so what the note says about a withheld
cell, or about the version of the test a corrected p-value rests on, must travel with the table
as a sentence under it. The reports below reach the paths that leave cells empty: the
permutation fallback (its p-value has no interval, the asymptotic interval is not trusted at the
corrected level), no declared number of candidates (no Bonferroni column), and the trust rule
withholding columns without a fallback.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re

import numpy as np
import pandas as pd
import pytest

from selective import Analysis, DescriptionLength, Selection
from selective.hypotheses import TwoSampleTTest
from selective.selectors import OrderedTopK, welch_t_scores

from .test_trust import _Result, _Spec

_ARM = ("a", "b")


def _skewed_data():
    rng = np.random.default_rng(5)
    cols = [f"f{j}" for j in range(12)]
    x = rng.lognormal(size=(105, 12))
    x[:15, 0] += 8.0
    d = pd.DataFrame(x, columns=cols)
    d["arm"] = ["a"] * 15 + ["b"] * 90
    return d


def _skewed_report(*, n_candidates, exchangeable=True, adjust=None):
    """Top-2 of 12 lognormal outcomes by |Welch t|, arms of 15 and 90 rows, a large effect in
    outcome 0: the Welch p-values are not trusted at the corrected level, the report reruns them
    as label permutations when the arms are declared exchangeable (they have the same
    distribution but for outcome 0's shift)."""
    d = _skewed_data()
    cols = [c for c in d.columns if c != "arm"]
    a = Analysis(d, alpha=0.05, rng=1, n_candidates=n_candidates)
    screen = OrderedTopK(k=2, candidates=tuple(cols), score=lambda f: welch_t_scores(f, cols, "arm", _ARM))
    a.preregister(screen)
    for c in a.select(screen).value:
        a.test(TwoSampleTTest(column=c, group="arm", levels=_ARM, usevar="unequal", exchangeable=exchangeable))
    return a.report(adjust=adjust)


def _texts(table):
    """The three renderings as plain text (LaTeX and HTML unescaped enough to search)."""
    latex = table.to_latex().replace("\\_", "_").replace("\\%", "%")
    return {"markdown": table.to_markdown(), "latex": latex, "html": html.unescape(table.to_html())}


@pytest.fixture(scope="module")
def skewed_without_candidates():
    return _skewed_report(n_candidates=None)


def test_the_permutation_basis_and_the_interval_reason_are_rendered(skewed_without_candidates):
    t = skewed_without_candidates
    notes = t.frame["note"].tolist()
    assert all("permutation p-value used at the corrected level" in n for n in notes)
    assert t.frame["ci_corrected_low"].isna().all()  # the asymptotic interval is not trusted at gamma
    # Markdown and HTML name rows by number, LaTeX by their labels (or H1, H2 with a legend)
    rows = {"markdown": ("row 1", "row 2"), "html": ("row 1", "row 2"),
            "latex": tuple(t.frame.index.map(lambda s: s.replace("|", r"\textbar{}")))}
    for kind, text in _texts(t).items():
        r1, r2 = (re.escape(r) for r in rows[kind])
        assert re.search(rf"Permutation p-value used at the corrected level \(the asymptotic p-value is trusted "
                         rf"down to \S+ in {r1}, \S+ in {r2} only\); the corrected columns rest on it, the naive "
                         r"column shows the test's own p-value", text), kind
        # one sentence for both rows, each with its own level (it was one sentence per row)
        assert re.search(rf"Corrected interval withheld: the test's interval is trusted down to miscoverage \S+ in "
                         rf"{r1}, \S+ in {r2} only, above \S+ \(the permutation p-value used at the corrected level "
                         rf"has no interval of its own\)\.", text), kind
        assert text.count("Corrected interval withheld") == 1, kind


def test_the_naive_column_is_the_tests_own_p_value_and_the_corrections_use_the_permutation(skewed_without_candidates):
    from scipy import stats

    t = skewed_without_candidates
    for label, row in t.frame.iterrows():
        column = re.search(r"mean\((f\d+) \|", label).group(1)
        welch = _skewed_data()
        own = stats.ttest_ind(welch.loc[welch.arm == "a", column], welch.loc[welch.arm == "b", column],
                              equal_var=False).pvalue
        assert row.pvalue_naive == pytest.approx(own, rel=1e-9)
        # the rest of the naive columns are the Welch test's own too (the permutation has no
        # interval and no degrees of freedom)
        a, b = welch.loc[welch.arm == "a", column], welch.loc[welch.arm == "b", column]
        res = stats.ttest_ind(a, b, equal_var=False)
        assert row.statistic == pytest.approx(res.statistic, rel=1e-9)
        assert row.df == pytest.approx(res.df, rel=1e-9)
        ci = res.confidence_interval(0.95)
        assert (row.ci_low, row.ci_high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
    # Bonferroni over 12 is 12 x the permutation p-value, not 12 x the Welch one: the winner's
    # Welch p-value is far below the permutation's resolution 1 / (B + 1)
    first = _skewed_report(n_candidates=12).frame.iloc[0]
    assert first.pvalue_naive < 1e-6
    assert first.pvalue_bonferroni > 100 * 12 * first.pvalue_naive


def test_no_declared_candidates_says_why_bonferroni_is_empty(skewed_without_candidates):
    t = skewed_without_candidates
    assert t.frame["pvalue_bonferroni"].isna().all()
    for kind, text in _texts(t).items():
        assert "Bonferroni withheld: no number of candidate hypotheses was declared" in text, kind


def test_declared_candidates_fill_bonferroni_and_drop_the_sentence():
    t = _skewed_report(n_candidates=12)
    assert t.frame["pvalue_bonferroni"].notna().all()
    assert "Bonferroni withheld" not in t.to_markdown()
    assert "Bonferroni over 12 declared hypotheses" in t.footnote


def test_trust_rule_without_fallback_lists_the_withheld_columns_and_interval():
    a = Analysis(pd.DataFrame({"x": np.arange(20.0)}), rng=1, n_candidates=1000)
    a.preregister(DescriptionLength(1000))
    a.record(Selection(value=("x",), certificate=DescriptionLength(1000), label="one of 1000"))
    a.test(_Spec(1e-7, exact=False))
    t = a.report()
    row = t.frame.iloc[0]
    assert np.isnan(row.pvalue_bonferroni) and np.isnan(row.pvalue_best)
    for kind, text in _texts(t).items():
        assert re.search(r"trusted down to 0\.01 only: corrected p-values that compare it with a smaller "
                         r"threshold are withheld \((row 1|h)\)", text), kind
        assert re.search(r"Corrected interval withheld: the test gives no interval \((row 1|h)\)", text), kind


@pytest.mark.parametrize("n_candidates", [None, 12])
def test_every_empty_corrected_column_has_a_sentence_under_the_table(n_candidates):
    """Whatever leaves a corrected column empty in some row, the Markdown names a reason for it:
    a sentence that mentions the column's route (or 'interval' for the interval columns)."""
    t = _skewed_report(n_candidates=n_candidates)
    md = t.to_markdown()
    under = md.split("\n\n", 1)[1]
    words = {"pvalue_maxinfo": "max-info", "pvalue_mutual_info": "utual", "pvalue_bonferroni": "Bonferroni",
             "pvalue_best": "best", "ci_corrected_low": "interval", "ci_corrected_high": "interval"}
    for col, word in words.items():
        if t.frame[col].isna().any():
            assert re.search(rf"{word}[^.]*withheld|withheld[^.]*{word}", under, flags=re.I), (col, under)


def _one_step(*tests, n_candidates=1000, seed=3, **data):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({k: v(rng) for k, v in data.items()})
    a = Analysis(d, rng=1, n_candidates=n_candidates)
    a.preregister(DescriptionLength(1000))
    a.record(Selection(value=tuple(data), certificate=DescriptionLength(1000), label="one of 1000"))
    for t in tests:
        a.test(t)
    return a


def test_a_trust_note_says_withheld_only_when_a_cell_is_withheld():
    """A t-test on 30 null rows is trusted only down to about 1e-2 and has no exact version; its
    corrected p-values are 1 (its naive p-value is far above every threshold): nothing is withheld,
    and the table must not say it is. Its interval is the t-test's own, not a fallback's."""
    from selective.hypotheses import OneSampleTTest

    t = _one_step(OneSampleTTest(column="x"), x=lambda r: r.normal(size=30)).report()
    row = t.frame.iloc[0]
    assert row.pvalue_best == 1.0 and row.pvalue_naive > 0.05
    assert "none of this row's corrected p-values needs a smaller threshold" in row.note
    md = t.to_markdown()
    assert "are withheld" not in md and "has no interval of its own" not in md
    assert re.search(r"Corrected interval withheld: the test's interval is trusted down to miscoverage \S+ only, "
                     r"above 5e-05 \(row 1\)", md)


def test_a_test_without_an_interval_says_so():
    from selective.hypotheses import ChiSquareIndependenceTest

    t = _one_step(ChiSquareIndependenceTest(column1="a", column2="c"),
                  a=lambda r: r.integers(0, 3, 200), c=lambda r: r.integers(0, 2, 200)).report()
    assert "Corrected interval withheld: the test gives no interval (row 1)" in t.to_markdown()


def test_a_test_without_conditional_on_says_why_its_conditional_cells_are_empty():
    from selective import TopK
    from selective.hypotheses import OneSampleTTest
    from selective.selectors import CandidateScores

    rng = np.random.default_rng(1)
    cols = [f"c{j}" for j in range(10)]
    d = pd.DataFrame(rng.normal(size=(60, 10)), columns=cols)
    a = Analysis(d, rng=1, n_candidates=10)
    screen = TopK(k=2, score=CandidateScores(cols, kind="mean"), candidates=cols)
    a.preregister(screen)
    sel = a.select(screen)
    a.test(OneSampleTTest(column=sel.value[0]), conditional_on=sel)
    a.test(OneSampleTTest(column=sel.value[1]))
    t = a.report(alpha=0.1)
    assert np.isnan(t.frame["pvalue_conditional"].iloc[1])
    for kind, text in _texts(t).items():
        assert ("Conditional withheld: the test was not declared conditional on a selection "
                "(test(..., conditional_on=...)), so it has no conditional or hybrid p-value (" in text), kind


def test_adjusted_p_values_keep_withheld_tests_in_the_family_as_ones():
    """Holm over four tests of which one is withheld: the family is the four (the footnote's
    count), the withheld one entering with p = 1, so the others are multiplied by 4, 3, 2 as
    Holm over the four would."""
    class Trusted(_Spec):
        def run(self, data):
            return _Result(self.label, self.p, 0.0, "exact")

    specs = [Trusted(p, exact=False, label=f"h{i}") for i, p in enumerate((1e-6, 2e-6, 3e-6), 1)]
    a = _one_step(*specs, x=lambda r: np.arange(20.0))
    a.test(_Spec(1e-7, exact=False, label="h0"))   # trusted only down to 1e-2: its corrected cells are withheld
    t = a.report(adjust="holm")
    f = t.frame
    assert np.isnan(f["pvalue_best"].iloc[3]) and np.isnan(f["pvalue_adjusted"].iloc[3])
    best = f["pvalue_best"].to_numpy()[:3]
    from statsmodels.stats.multitest import multipletests
    expected = multipletests(np.r_[best, 1.0], method="holm")[1][:3]
    np.testing.assert_allclose(f["pvalue_adjusted"].to_numpy()[:3], expected)
    assert not np.allclose(expected, multipletests(best, method="holm")[1])  # the family size matters here
    assert "holm across the 4 tests" in t.footnote


def test_a_failure_message_with_semicolons_stays_one_reason():
    class Failing(_Spec):
        def run_at_level(self, data, level, *, rng=None):
            raise ValueError("the null fit did not converge; 3 of 40 strata are empty")

    t = _one_step(Failing(1e-7, exact=True), x=lambda r: np.arange(20.0)).report()
    md = t.to_markdown()
    assert ("its version for smaller levels failed on these data (the null fit did not converge, 3 of 40 strata are "
            "empty): corrected p-values that compare it with a smaller threshold are withheld (row 1)") in md


def test_columns_left_empty_by_construction_are_explained(skewed_without_candidates):
    # "all" shows p (adjusted) even without report(adjust=...): each rendering says why it is empty
    t = skewed_without_candidates
    sentence = "p (adjusted) is empty: no multiple-testing adjustment was asked for (report(adjust=...), e.g. Holm's)."
    texts = {"markdown": t.to_markdown(columns="all"), "html": html.unescape(t.to_html(columns="all")),
             "latex": t.to_latex(columns="all").replace("\\_", "_")}
    for kind, text in texts.items():
        assert text.count("p (adjusted) is empty") == 1, kind
    assert sentence in texts["markdown"]
    # the default sets leave the column out, and say nothing about it
    assert "p (adjusted)" not in t.to_markdown()
    # with an adjustment the column is filled and the sentence goes
    adjusted = _skewed_report(n_candidates=12, adjust="holm")
    assert adjusted.frame["pvalue_adjusted"].notna().all()
    assert "p (adjusted) is empty" not in adjusted.to_markdown(columns="all")


def test_a_test_without_its_number_of_observations_is_named_under_n():
    @dataclasses.dataclass(frozen=True)
    class NoN:
        hypothesis: str = "h"
        pvalue_naive: float = 0.01
        estimate: float = 1.0
        ci_naive: tuple = (0.5, 1.5)
        statistic: float = 2.0
        df: float = math.nan
        n_obs: float = math.nan

    class Spec:
        label = "user test"

        def run(self, data):
            return NoN()

    a = Analysis(pd.DataFrame({"x": np.arange(20.0)}), rng=1, n_candidates=10)
    a.preregister(DescriptionLength(10))
    a.record(Selection(value=("x",), certificate=DescriptionLength(10), label="one of 10"))
    a.test(Spec())
    text = a.report().to_markdown(columns="all")
    assert "N is empty where the test does not report its number of observations (row 1)." in text


def test_welch_without_the_exchangeable_declaration_says_how_to_get_the_permutation():
    t = _skewed_report(n_candidates=12, exchangeable=False)
    assert t.frame["pvalue_bonferroni"].isna().all()   # not trusted at 0.05 / 12, and no version
    for kind, text in _texts(t).items():
        assert text.count("the label-permutation version needs exchangeable=True") == 1, kind   # both rows
        assert "Permutation p-value used" not in text, kind


def test_the_note_column_wraps_into_lines_of_words(skewed_without_candidates):
    # HTML: without a style sheet (a notebook) the long note column was squeezed to one word per
    # line, each row a page tall; LaTeX: an "l" column as wide as its longest sentence shrank the
    # whole table to unreadable print
    t = skewed_without_candidates
    page = t.to_html(columns="all")
    n_rows = len(t.frame)
    assert page.count('style="min-width: 24em; white-space: normal"') == n_rows + 1   # header and cells
    assert "min-width" not in t.to_html()   # the default set has no note column
    tex = t.to_latex(columns="all", fit="landscape")
    spec = re.search(r"\\begin\{tabular\}\{(.*)\}\n", tex).group(1)
    assert spec.endswith(r"r>{\raggedright\arraybackslash}p{0.3\linewidth}@{}")   # the note, last, wraps


def test_numbers_are_aligned_right_in_a_bare_html_table(skewed_without_candidates):
    # without a style sheet a browser aligns every cell left, under headers pandas aligns right
    page = skewed_without_candidates.to_html(columns="all")
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    cells = re.findall(r"<td([^>]*)>", body)
    numeric = [c for c in cells if 'class="text"' not in c]
    assert numeric and all("text-align: right; white-space: nowrap" in c for c in numeric)  # "< 1e-04" on one line
    assert all("text-align: right" not in c for c in cells if 'class="text"' in c)
