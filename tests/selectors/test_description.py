"""Description-length selectors and the vectorised candidate scores."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from selective.accounting.certificates import DescriptionLength
from selective.exceptions import BudgetExhausted
from selective.selectors.description import (
    FiniteChoice,
    ForwardStepwise,
    LassoSupport,
    OrderedTopK,
    QuantizedAnswer,
    SparseValidate,
    candidate_scores,
)

RNG = np.random.default_rng(1)
DATA = pd.DataFrame(RNG.normal(size=(200, 6)), columns=list("abcdef"))
DATA["y"] = 2.0 * DATA["a"] - 1.0 * DATA["c"] + RNG.normal(size=200)


class TestCandidateScores:
    def test_against_pandas_and_scipy(self):
        cols = list("abcdef")
        means = candidate_scores(DATA, cols, kind="mean")
        np.testing.assert_allclose(means, DATA[cols].mean(), rtol=1e-12)
        corr = candidate_scores(DATA, cols, target="y", kind="corr")
        np.testing.assert_allclose(corr, DATA[cols].corrwith(DATA["y"]), rtol=1e-10)
        t1 = candidate_scores(DATA, cols, kind="t")
        np.testing.assert_allclose(t1, scipy.stats.ttest_1samp(DATA[cols], 0.0).statistic, rtol=1e-10)
        tr = candidate_scores(DATA, cols, target="y", kind="t")
        r = DATA[cols].corrwith(DATA["y"]).to_numpy()
        np.testing.assert_allclose(tr, r * np.sqrt(198) / np.sqrt(1 - r * r), rtol=1e-9)

    def test_float32_many_columns(self):
        x = RNG.normal(size=(1000, 300)).astype(np.float32)
        df = pd.DataFrame(x)
        np.testing.assert_allclose(candidate_scores(df, kind="mean"), x.astype(float).mean(axis=0), rtol=1e-6, atol=1e-7)

    def test_iv(self):
        with pytest.raises(ValueError, match="`kind` must be one of 'mean', 'corr', 't'"):
            candidate_scores(DATA, kind="median")
        with pytest.raises(ValueError, match="`target` is required for kind='corr'"):
            candidate_scores(DATA, kind="corr")
        with pytest.raises(KeyError, match="not found"):
            candidate_scores(DATA, ["zz"])


class TestFiniteChoice:
    def test_certificate_and_validation(self):
        sel = FiniteChoice(("a", "b", "c"), lambda d: "b").select(DATA)
        assert sel.value == "b" and sel.certificate == DescriptionLength(3)
        with pytest.raises(ValueError, match="not among the declared candidates"):
            FiniteChoice(("a", "b"), lambda d: "z").select(DATA)
        with pytest.raises(ValueError, match="at least one candidate"):
            FiniteChoice((), lambda d: None)


class TestOrderedTopK:
    def test_order_and_certificate(self):
        score = lambda d: candidate_scores(d, list("abcdef"), target="y", kind="corr").abs()  # noqa: E731
        sel = OrderedTopK(2, score).select(DATA)
        assert sel.value == ("a", "c")
        assert sel.certificate == DescriptionLength(6 * 5)

    def test_iv(self):
        with pytest.raises(ValueError, match=r"`k` must be at most the number of candidates \(3\); got 4"):
            OrderedTopK(4, lambda d: pd.Series([1.0, 2.0, 3.0])).select(DATA)
        with pytest.raises(ValueError, match="NaN or infinite score"):
            OrderedTopK(1, lambda d: pd.Series([1.0, np.nan])).select(DATA)
        with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
            OrderedTopK(0, lambda d: pd.Series([1.0]))


class TestSparseValidate:
    def test_budgets_and_certificate(self):
        sv = SparseValidate(DATA, m=4, budget=1)
        assert sv.certificate() == DescriptionLength(1 + 4)
        assert sv.validate(lambda d: False) is False
        assert sv.validate(lambda d: True) is True
        with pytest.raises(BudgetExhausted, match="B = 1"):
            sv.validate(lambda d: False)
        assert sv.ell(3).ell_exact == 3  # C(2,0) + C(2,1)
        assert "0." not in repr(sv)

    def test_m_queries(self):
        sv = SparseValidate(DATA, m=2, budget=2)
        sv.validate(lambda d: 0)
        sv.validate(lambda d: 0)
        with pytest.raises(BudgetExhausted, match="m = 2"):
            sv.validate(lambda d: 0)

    def test_iv(self):
        sv = SparseValidate(DATA, m=2, budget=1)
        with pytest.raises(ValueError, match="`psi` must return a bit"):
            sv.validate(lambda d: 0.5)
        with pytest.raises(ValueError, match=r"`budget` must be an integer in \[0, 2\]"):
            SparseValidate(DATA, m=2, budget=3)


class TestQuantizedAnswer:
    def test_cells_and_certificate(self):
        q = QuantizedAnswer(lambda d: 0.26, bits=2, low=0.0, high=1.0)
        sel = q.select(DATA)
        assert sel.value == 0.375 and sel.certificate == DescriptionLength(4)
        assert QuantizedAnswer(lambda d: [5.0, -5.0], bits=3, low=0.0, high=1.0, n_values=2).select(DATA).value == (0.9375, 0.0625)

    def test_iv(self):
        with pytest.raises(ValueError, match="`high` must be larger than `low`"):
            QuantizedAnswer(lambda d: 0.0, bits=2, low=1.0, high=0.0)
        with pytest.raises(ValueError, match="NaN or infinite"):
            QuantizedAnswer(lambda d: np.nan, bits=2, low=0.0, high=1.0).select(DATA)


class TestLassoSupport:
    def test_support_and_certificate(self):
        feats = tuple("abcdef")
        sel = LassoSupport("y", feats, lam=40.0, max_size=3).select(DATA)
        assert set(sel.value) <= set(feats) and {"a", "c"} <= set(sel.value)
        assert sel.certificate == DescriptionLength(sum(math.comb(6, j) for j in range(4)))
        signed = LassoSupport("y", feats, lam=40.0, max_size=3, signs=True).select(DATA)
        assert ("a", 1) in signed.value and ("c", -1) in signed.value
        assert signed.certificate == DescriptionLength(sum(math.comb(6, j) * 2**j for j in range(4)))

    def test_truncates_to_max_size(self):
        sel = LassoSupport("y", tuple("abcdef"), lam=1e-3, max_size=1).select(DATA)
        assert sel.value == ("a",)

    def test_iv(self):
        with pytest.raises(ValueError, match="`lam` must be a finite positive"):
            LassoSupport("y", ("a",), lam=0.0, max_size=1)
        with pytest.raises(ValueError, match=r"`max_size` must be an integer in \[0, 1\]"):
            LassoSupport("y", ("a",), lam=1.0, max_size=2)


class TestForwardStepwise:
    def test_path_and_certificate(self):
        sel = ForwardStepwise("y", tuple("abcdef"), steps=2).select(DATA)
        assert sel.value == ("a", "c")
        assert sel.certificate == DescriptionLength(6 * 5)

    def test_iv(self):
        with pytest.raises(ValueError, match=r"`steps` must be an integer in \[1, 2\]"):
            ForwardStepwise("y", ("a", "b"), steps=3)
