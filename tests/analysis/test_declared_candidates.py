"""``n_candidates`` must cover what is selected and tested, or the Bonferroni column is not valid.

Bonferroni over N declared hypotheses holds whatever the selection only if every hypothesis
that could be tested is among the N. A step choosing among more than N candidates is refused
before it reads the data (nothing recorded); more distinct hypotheses tested than N withhold
the column with the reason in the footnote.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selective import Analysis, TopK
from selective.hypotheses import OneSampleTTest
from selective.selectors import CandidateScores

_COLS = [f"c{j}" for j in range(12)]
_DATA = pd.DataFrame(np.random.default_rng(1).normal(size=(40, 12)), columns=_COLS)


def _screen(m: int, k: int = 1) -> TopK:
    cols = _COLS[:m]
    return TopK(k=k, score=CandidateScores(cols, kind="mean"), candidates=cols)


@settings(max_examples=40, deadline=None)
@given(n_candidates=st.integers(1, 14), m=st.integers(1, 12), preregister=st.booleans())
def test_a_step_with_more_candidates_than_declared_is_refused_before_the_data_are_read(n_candidates, m,
                                                                                      preregister):
    a = Analysis(_DATA, rng=1, n_candidates=n_candidates)
    screen = _screen(m)
    run = (lambda: a.preregister(screen)) if preregister else (lambda: a.select(screen))
    if m > n_candidates:
        with pytest.raises(ValueError, match=rf"`n_candidates`={n_candidates} declares fewer hypotheses than the "
                                             rf"{m} candidates .* \(TopK\) chooses among; declare at least {m}"):
            run()
        assert len(a.ledger) == 0 and a.preregistered is None and not a.selections
    else:
        run()
        assert len(a.ledger) == (0 if preregister else 1)


def test_more_distinct_hypotheses_than_declared_withhold_bonferroni_with_the_reason():
    a = Analysis(_DATA, rng=1, n_candidates=2)
    for c in _COLS[:3]:
        a.test(OneSampleTTest(column=c))
    a.test(OneSampleTTest(column=_COLS[0]))   # the same hypothesis again is not a new one
    t = a.report()
    assert t.frame["pvalue_bonferroni"].isna().all()
    assert ("Bonferroni withheld: 3 distinct hypotheses were tested but n_candidates = 2 were declared"
            in t.to_markdown())
    assert "no number of candidate hypotheses was declared" not in t.footnote


def test_as_many_hypotheses_as_declared_keep_bonferroni():
    a = Analysis(_DATA, rng=1, n_candidates=3)
    for c in _COLS[:3]:
        a.test(OneSampleTTest(column=c))
    t = a.report()
    shown = t.frame["pvalue_bonferroni"].notna()   # (a cell the trust rule withholds is not compared)
    assert shown.sum() >= 2
    np.testing.assert_allclose(t.frame["pvalue_bonferroni"][shown], np.minimum(1.0, 3 * t.frame["pvalue_naive"][shown]))
    assert "Bonferroni over 3 declared hypotheses" in t.footnote
