"""Description-length selectors and the vectorised candidate scores."""

from __future__ import annotations

import math
import warnings

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
from selective.selectors.scores import welch_t_scores

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
        np.testing.assert_allclose(candidate_scores(df, kind="mean"), x.astype(float).mean(axis=0),
                                   rtol=1e-6, atol=1e-7)

    def test_iv(self):
        with pytest.raises(ValueError, match="`kind` must be one of 'mean', 'corr', 't'"):
            candidate_scores(DATA, kind="median")
        with pytest.raises(ValueError, match="`target` is required for kind='corr'"):
            candidate_scores(DATA, kind="corr")
        with pytest.raises(ValueError, match=r"`candidates` names 1 column\(s\) not in `data`: \['zz'\]"):
            candidate_scores(DATA, ["zz"])
        with pytest.raises(TypeError, match="`candidates` must be an ordered collection"):
            candidate_scores(DATA, {"a", "b"})
        with pytest.raises(ValueError, match=r"`group` names 1 column\(s\) not in `data`: \['arm'\]"):
            welch_t_scores(DATA, ["a"], "arm", ("x", "y"))

    def test_a_misspelt_level_is_named_without_quoting_the_data(self):
        data = DATA.assign(arm=np.where(np.arange(len(DATA)) % 2 == 0, "treated", "control"))
        for levels in (("treated", "Control"), ("Treated", "control"), ("x", "y")):
            with pytest.raises(ValueError) as err:
                welch_t_scores(data, ["a"], "arm", levels)
            # one message for the three cases: it does not say which level, nor which values occur
            assert str(err.value) == ("`levels` must name two groups of column 'arm' with at least 2 rows each; got "
                                      f"{levels!r}, and one of them has fewer (a misspelt level has none).")
        assert np.isfinite(welch_t_scores(data, ["a"], "arm", ("treated", "control"))).all()

    def test_a_text_column_is_named_with_its_type_and_no_value(self):
        # a stray string in a numeric column made pandas quote it ("could not convert string to
        # float: 'oops'"): the message is seen after the data were read, so it names label and type only
        data = DATA.assign(arm=np.where(np.arange(len(DATA)) % 2 == 0, "t", "c"), b=DATA["b"].astype(object))
        data.loc[3, "b"] = "oops"
        with pytest.raises(TypeError) as err:
            welch_t_scores(data, ["a", "b"], "arm", ("t", "c"))
        assert str(err.value).startswith("`columns` must name numeric columns; not numeric: 'b' (object).")
        assert "oops" not in str(err.value)
        with pytest.raises(TypeError) as err:
            candidate_scores(data, ["a"], target="b", kind="corr")
        assert str(err.value).startswith("`target` must name numeric columns; not numeric: 'b' (object).")
        assert "oops" not in str(err.value)


class TestFiniteChoice:
    def test_certificate_and_validation(self):
        sel = FiniteChoice(("a", "b", "c"), lambda d: "b").select(DATA)
        assert sel.value == "b" and sel.certificate == DescriptionLength(3)
        with pytest.raises(ValueError, match="not among the declared candidates"):
            FiniteChoice(("a", "b"), lambda d: "z").select(DATA)
        with pytest.raises(ValueError, match="at least one candidate"):
            FiniteChoice((), lambda d: None)

    def test_error_message_does_not_quote_the_returned_value(self):
        # Regression: the message echoed the non-candidate value, i.e. data, at no cost.
        secret = repr(float(DATA["a"].iloc[0]))
        with pytest.raises(ValueError) as err:
            FiniteChoice(("a", "b"), lambda d: float(d["a"].iloc[0])).select(DATA)
        assert secret not in str(err.value)
        assert err.value.__context__ is None and err.value.__cause__ is None

    def test_returns_the_declared_object(self):
        # Regression: the user's own object was returned, so anything comparing equal to a
        # candidate (a str subclass with extra attributes, a permissive __eq__) carried data out.
        class Carrier(str):
            payload = None

        declared = ("a", "b", "c")

        def smuggle(d):
            c = Carrier("b")
            c.payload = d["a"].to_numpy()
            return c

        sel = FiniteChoice(declared, smuggle).select(DATA)
        assert sel.value is declared[1] and type(sel.value) is str

        class EqualsAll:
            def __init__(self, data):
                self.data = data

            def __eq__(self, other):
                return True

            __hash__ = object.__hash__

        sel = FiniteChoice(declared, lambda d: EqualsAll(d)).select(DATA)
        assert sel.value is declared[0]

        class RaisingEq:
            def __eq__(self, other):
                raise RuntimeError(str(DATA.iloc[0, 0]))

            __hash__ = object.__hash__

        with pytest.raises(ValueError, match="not among the declared candidates") as err:
            FiniteChoice(declared, lambda d: RaisingEq()).select(DATA)
        assert err.value.__context__ is None


class TestOrderedTopK:
    CANDS = tuple("abcdef")

    def test_order_and_certificate(self):
        score = lambda d: candidate_scores(d, list("abcdef"), target="y", kind="corr").abs()  # noqa: E731
        top = OrderedTopK(2, score, candidates=self.CANDS)
        assert top.certificate() == DescriptionLength(6 * 5)  # known before the data
        sel = top.select(DATA)
        assert sel.value == ("a", "c")
        assert sel.certificate == DescriptionLength(6 * 5)

    def test_output_space_comes_from_the_declaration(self):
        # Regression: m and the labels came from the score function (data-dependent).
        declared = ("p", "q", "r")
        reordered = lambda d: pd.Series([3.0, 1.0, 2.0], index=["r", "p", "q"])  # noqa: E731
        sel = OrderedTopK(2, reordered, candidates=declared).select(DATA)
        assert sel.value == ("r", "q") and all(v in declared for v in sel.value)
        ties = OrderedTopK(2, lambda d: pd.Series([1.0, 1.0, 1.0], index=["r", "q", "p"]), candidates=declared)
        assert ties.select(DATA).value == ("p", "q")  # ties: declared order
        assert OrderedTopK(1, lambda d: np.array([0.0, 5.0, 1.0]), candidates=declared).select(DATA).value == ("q",)
        for bad in (pd.Series([1.0, 2.0, 3.0], index=["p", "q", "zz"]),
                    pd.Series([1.0, 2.0], index=["p", "q"]),
                    pd.Series([1.0, 2.0, 3.0, 4.0], index=["p", "q", "r", "s"]),
                    pd.Series([1.0, 2.0, 3.0], index=["p", "p", "q"]),
                    np.array([1.0, 2.0])):
            with pytest.raises(ValueError, match="one score per declared name") as err:
                OrderedTopK(1, lambda d, b=bad: b, candidates=declared).select(DATA)
            assert "zz" not in str(err.value) and "'s'" not in str(err.value)

    def test_iv(self):
        with pytest.raises(ValueError, match=r"`k` must be at most the number of candidates \(3\); got 4"):
            OrderedTopK(4, lambda d: pd.Series([1.0, 2.0, 3.0]), candidates=(0, 1, 2))
        with pytest.raises(ValueError, match="returned a NaN or infinite score"):
            OrderedTopK(1, lambda d: pd.Series([1.0, np.nan]), candidates=(0, 1)).select(DATA)
        with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
            OrderedTopK(0, lambda d: pd.Series([1.0]), candidates=(0,))
        with pytest.raises(TypeError, match="candidates"):
            OrderedTopK(1, lambda d: pd.Series([1.0]))
        with pytest.raises(ValueError, match="`candidates` must not repeat a candidate"):
            OrderedTopK(1, lambda d: pd.Series([1.0]), candidates=("a", "a"))


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

    def test_failures_answer_one_and_use_budget(self):
        # Regression: a non-bit output was echoed in the error message (data, at no cost).
        # Now any non-bit or exception is the fixed answer 1, counted against m and B.
        secret = float(DATA["a"].iloc[0])
        psis = [
            lambda d: float(d["a"].iloc[0]),                      # a data value
            lambda d: 2,                                          # an integer that is not a bit
            lambda d: d["a"].to_numpy()[:1],                      # an array
            lambda d: (_ for _ in ()).throw(KeyError(repr(secret))),  # an exception quoting data
            lambda d: np.float64(1.0) / np.float64(0.0) > 0,      # warns (divide by zero), then a bit
        ]
        expected = [True, True, True, True, True]
        for psi, bit in zip(psis, expected, strict=True):
            sv = SparseValidate(DATA, m=2, budget=1)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no warning may escape either
                assert sv.validate(psi) is bit
            assert sv.n_queries == 1 and sv.n_ones == 1
            with pytest.raises(BudgetExhausted, match="B = 1"):
                sv.validate(lambda d: 0)
        sv = SparseValidate(DATA, m=3, budget=2)
        assert sv.validate(lambda d: np.int64(0)) is False and sv.validate(lambda d: np.bool_(True)) is True

    def test_iv(self):
        sv = SparseValidate(DATA, m=2, budget=1)
        with pytest.raises(TypeError, match="`psi` must be callable"):
            sv.validate(0.5)
        assert sv.n_queries == 0
        with pytest.raises(ValueError, match=r"`budget` must be an integer in \[0, 2\]"):
            SparseValidate(DATA, m=2, budget=3)


class TestQuantizedAnswer:
    def test_cells_and_certificate(self):
        q = QuantizedAnswer(lambda d: 0.26, bits=2, low=0.0, high=1.0)
        sel = q.select(DATA)
        assert sel.value == 0.375 and sel.certificate == DescriptionLength(4)
        pair = QuantizedAnswer(lambda d: [5.0, -5.0], bits=3, low=0.0, high=1.0, n_values=2)
        assert pair.select(DATA).value == (0.9375, 0.0625)

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


class TestDeclaredCollections:
    """Strings, sets and other unordered or non-collection arguments are refused by name."""

    def test_features_must_be_a_list_or_tuple(self):
        with pytest.raises(TypeError, match=r"`features` must be a list or tuple of column labels; got the string"):
            LassoSupport("y", "ab", lam=1.0, max_size=1)
        with pytest.raises(TypeError, match=r"`features` must be an ordered collection .* got a set"):
            ForwardStepwise("y", {"a", "b"}, steps=1)
        with pytest.raises(ValueError, match=r"`target` 'y' must not be one of `features`"):
            LassoSupport("y", ["a", "y"], lam=1.0, max_size=1)
        assert LassoSupport("y", ["a", "b"], lam=1.0, max_size=1).features == ("a", "b")
        assert ForwardStepwise("y", pd.Index(["a", "b"]), steps=1).features == ("a", "b")

    def test_candidates_must_be_ordered(self):
        with pytest.raises(TypeError, match=r"`candidates` must be an ordered collection .* got a set"):
            OrderedTopK(1, lambda d: np.zeros(2), candidates={"a", "b"})
        with pytest.raises(TypeError, match=r"`candidates` must be an ordered collection .*a set, whose order"):
            FiniteChoice({"a", "b"}, lambda d: "a")
        with pytest.raises(TypeError, match=r"`candidates` must be an ordered collection .*dict"):
            FiniteChoice({"a": 1}, lambda d: "a")

    def test_missing_columns_name_the_argument_and_the_labels(self):
        with pytest.raises(ValueError, match=r"`features` names 1 column\(s\) not in `data`: \['zz'\]"):
            LassoSupport("y", ["a", "zz"], lam=1.0, max_size=1).select(DATA)
        with pytest.raises(ValueError, match=r"`target` names 1 column\(s\) not in `data`: \['yy'\]"):
            ForwardStepwise("yy", ["a", "b"], steps=1).select(DATA)
        assert LassoSupport("y", ["a", "b"], lam=1.0, max_size=1).required_columns() == {
            "target": ("y",), "features": ("a", "b")}

    def test_duplicate_column_labels_are_refused(self):
        dup = DATA[["a", "b", "y"]].set_axis(["a", "a", "y"], axis=1)
        with pytest.raises(ValueError, match=r"more than one column labelled \['a'\]"):
            ForwardStepwise("y", ["a"], steps=1).select(dup)
        with pytest.raises(ValueError, match=r"`holdout` has more than one column labelled \['a'\]"):
            SparseValidate(dup, m=2, budget=1)


class TestSparseValidateHoldoutIsReadOnly:
    def test_queries_cannot_overwrite_the_holdout(self):
        hold = DATA.copy()
        original = hold.copy()
        sv = SparseValidate(hold, m=4, budget=4)
        seen = []

        def writes(d):
            seen.append(d)
            d.iloc[0, 0] = 99.0  # raises: the view is read-only (answered as 1, the failure rule)
            return False

        def writes_array(d):
            d["a"].to_numpy()[0] = 99.0
            return False

        assert sv.validate(writes) is True and sv.validate(writes_array) is True
        with pytest.raises(ValueError, match="read-only"):
            seen[0].iloc[0, 0] = 1.0  # a kept reference stays read-only
        assert sv.validate(lambda d: bool(d["a"].iloc[0] == original["a"].iloc[0])) is True  # not overwritten
        hold.iloc[0, 0] = -5.0  # the caller's frame changing after construction does not reach the mechanism
        assert sv.validate(lambda d: bool(d.equals(original))) is True
        pd.testing.assert_frame_equal(seen[0], original)

    def test_system_exit_answers_one_and_interrupt_is_counted_as_one(self):
        sv = SparseValidate(DATA, m=3, budget=2)

        def exits(d):
            raise SystemExit(1)

        assert sv.validate(exits) is True and sv.n_ones == 1

        def interrupted(d):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            sv.validate(interrupted)
        assert sv.n_queries == 2 and sv.n_ones == 2
        with pytest.raises(BudgetExhausted, match="B = 2"):
            sv.validate(lambda d: False)
