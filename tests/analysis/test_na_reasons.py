"""Every "n/a" cell of a rendered table comes with its reason (Markdown, LaTeX, HTML).

The renderings leave out the note column by default, so what the note says about a withheld
cell, or about the version of the test a corrected p-value rests on, must travel with the table
as a sentence under it. The reports below reach the paths that leave cells empty: the
permutation fallback (its p-value has no interval, the asymptotic interval is not trusted at the
corrected level), no declared number of candidates (no Bonferroni column), and the trust rule
withholding columns without a fallback.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest

from selective import Analysis, DescriptionLength, Selection
from selective.hypotheses import TwoSampleTTest
from selective.selectors import OrderedTopK, welch_t_scores

from .test_trust import _Spec

_ARM = ("a", "b")


def _skewed_report(*, n_candidates):
    """Top-2 of 12 lognormal outcomes by |Welch t|, arms of 15 and 90 rows, a large effect in
    outcome 0: the Welch p-values are not trusted at the corrected level, the report reruns them
    as label permutations."""
    rng = np.random.default_rng(5)
    cols = [f"f{j}" for j in range(12)]
    x = rng.lognormal(size=(105, 12))
    x[:15, 0] += 8.0
    d = pd.DataFrame(x, columns=cols)
    d["arm"] = ["a"] * 15 + ["b"] * 90
    a = Analysis(d, alpha=0.05, rng=1, n_candidates=n_candidates)
    screen = OrderedTopK(k=2, candidates=tuple(cols), score=lambda f: welch_t_scores(f, cols, "arm", _ARM))
    a.preregister(screen)
    for c in a.select(screen).value:
        a.test(TwoSampleTTest(column=c, group="arm", levels=_ARM, usevar="unequal"))
    return a.report()


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
                         rf"down to \S+ in {r1}, \S+ in {r2} only\); the naive column shows it too", text), kind
        assert re.search(rf"Corrected interval withheld: the test's asymptotic interval is not trusted at "
                         rf"miscoverage \S+ \(the permutation p-value has no interval of its own\) \({r1}, {r2}\)",
                         text), kind


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
