"""The report's conditional column after SparseValidate (analysis/transcript_rows; THEORY.md 3.15):
the weighted transcript p-value of corrected_pvalue_sparse_validate, with the trust rule at
alpha times the weight, and the selection the validator records."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from selective import Analysis, DescriptionLength, Selection
from selective.corrections import corrected_pvalue_sparse_validate
from selective.hypotheses import PearsonCorrelationTest
from selective.selectors import SparseValidate, ValidationTranscript


def _holdout(seed=3, n=300):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 6))
    y = x[:, 2] * 0.3 + rng.standard_normal(n)
    return pd.DataFrame(x, columns=[f"f{j}" for j in range(6)]).assign(y=y)


def _validated(holdout, order, *, first_weight=0.5, m=4):
    """Ask in ``order`` whether corr(f, y) >= 2 / sqrt(n) on the holdout; stop at the first yes."""
    sv = SparseValidate(holdout, m=m, budget=1, first_weight=first_weight)
    for name in order:
        if sv.validate(lambda d, c=name: bool(d[c].corr(d["y"]) >= 2 / np.sqrt(len(d)))):
            return sv, name
    raise AssertionError("nothing validated")


@pytest.mark.parametrize(("order", "first_weight", "position"), [
    (["f2", "f0", "f1", "f3"], 0.5, 1), (["f0", "f2", "f1", "f3"], 0.5, 2), (["f0", "f1", "f2", "f3"], 0.8, 3)])
def test_the_column_is_the_weighted_transcript_pvalue(order, first_weight, position):
    holdout = _holdout()
    sv, name = _validated(holdout, order, first_weight=first_weight)
    assert name == "f2" and sv.answers == (False,) * (position - 1) + (True,)
    a = Analysis(holdout, rng=1)
    sel = a.record(sv.selection((name,)))
    assert sel.certificate == DescriptionLength(5) and sel.details["sparse_validate"].position == position
    spec = PearsonCorrelationTest(column1=name, column2="y", alternative="greater")
    a.test(spec, conditional_on=sel)
    row = a.report().frame.iloc[0]
    p = spec.run(holdout).pvalue_naive
    want = corrected_pvalue_sparse_validate(p, position, 4, first_weight=first_weight)
    weight = first_weight if position == 1 else (1 - first_weight) / 3
    assert row.pvalue_conditional == pytest.approx(want) == pytest.approx(min(1.0, p / weight))
    assert math.isnan(row.ci_conditional_low)
    assert f"query {position} of 4" in row.note and "declared before the holdout was read" in row.note


def test_withheld_with_another_step_or_below_the_trusted_level():
    holdout = _holdout()
    sv, name = _validated(holdout, ["f0", "f1", "f2", "f3"])
    spec = PearsonCorrelationTest(column1=name, column2="y", alternative="greater")
    a = Analysis(holdout, rng=1)
    sel = a.record(sv.selection((name,)))
    a.record(Selection(value=("x",), certificate=DescriptionLength(2), label="another look"))
    a.test(spec, conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert math.isnan(row.pvalue_conditional) and "it accounts for step 1 only, and the ledger has 2 steps" in row.note
    # a test trusted only down to 0.01 is not compared with alpha x weight = 0.05 / 6
    small = holdout.iloc[:12]
    sv, name = _validated(small.assign(y=small.f2 + 0.1 * small.y), ["f0", "f1", "f2", "f3"])
    a = Analysis(small.assign(y=small.f2 + 0.1 * small.y), rng=1)
    sel = a.record(sv.selection((name,)))

    class Untrusted(PearsonCorrelationTest):
        def run(self, data):
            import dataclasses
            return dataclasses.replace(super().run(data), trusted_level=0.01)

    a.test(Untrusted(column1=name, column2="y", alternative="greater"), conditional_on=sel)
    row = a.report().frame.iloc[0]
    assert math.isnan(row.pvalue_conditional)
    assert "compared with alpha x weight = 0.0083, below 0.01 where the test's p-value is trusted" in row.note


def test_the_selection_needs_budget_one_and_a_yes():
    holdout = _holdout()
    sv = SparseValidate(holdout, m=3, budget=1)
    with pytest.raises(ValueError, match="budget 1 whose last query answered 1; this one has budget 1 and 0"):
        sv.selection(("f0",))
    two = SparseValidate(holdout, m=3, budget=2)
    two.validate(lambda d: True)
    with pytest.raises(ValueError, match="has budget 2"):
        two.selection(("f0",))
    with pytest.raises(ValueError, match="`first_weight` must be below 1 when m > 1"):
        SparseValidate(holdout, m=3, budget=1, first_weight=1.0)
    # a failing query answers 1 and is part of the transcript
    sv.validate(lambda d: d["no such column"])
    assert sv.answers == (True,) and sv.selection(("f0",)).details["sparse_validate"].position == 1
    # a recorded transcript without a yes validates nothing
    a = Analysis(holdout, rng=1)
    empty = a.record(Selection(value=(), certificate=DescriptionLength(4), label="no yes",
                               details={"sparse_validate": ValidationTranscript(m=3, answers=(False,) * 3,
                                                                                first_weight=0.5)}))
    with pytest.raises(ValueError, match="no query that answered 1"):
        a.test(PearsonCorrelationTest(column1="f0", column2="y"), conditional_on=empty)
