"""Bad input: every error names the argument or column, the value, and what is allowed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from selective.hypotheses import (
    ChiSquareIndependenceTest,
    CoefficientTest,
    JointWaldTest,
    OneSampleProportionTest,
    OneSampleTTest,
    OneSampleZTest,
    PairedTTest,
    PearsonCorrelationTest,
    SpearmanCorrelationTest,
    TwoSampleProportionTest,
    TwoSampleTTest,
    TwoSampleZTest,
)


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 30
    return pd.DataFrame({
        "y": rng.normal(size=n), "w": rng.normal(size=n), "x": rng.normal(size=n),
        "g": ["a", "b"] * (n // 2), "h": ["u", "v", "w"] * (n // 3), "b": [0, 1, 1] * (n // 3),
        "name": [f"id{i}" for i in range(n)], "c": rng.poisson(2.0, size=n),
    })


def with_missing(frame, column, rows):
    out = frame.copy()
    out[column] = out[column].astype(float if pd.api.types.is_numeric_dtype(out[column]) else object)
    out.loc[list(rows), column] = None
    return out


class TestCommonArguments:
    @pytest.mark.parametrize("make", [
        lambda **kw: OneSampleTTest(column="y", **kw),
        lambda **kw: TwoSampleProportionTest(column="b", group="g", **kw),
        lambda **kw: CoefficientTest(formula="y ~ x", term="x", **kw),
    ])
    def test_common_arguments_iv(self, make):
        with pytest.raises(ValueError, match=(r"`alternative` must be one of 'two-sided',"
                                              r" 'less', 'greater'; got 'larger'")):
            make(alternative="larger")
        with pytest.raises(ValueError, match=r"`confidence_level` must be a real number in \(0, 1\); got 95"):
            make(confidence_level=95)
        with pytest.raises(ValueError, match=r"`confidence_level` must be a real number in \(0, 1\); got nan"):
            make(confidence_level=float("nan"))
        with pytest.raises(TypeError, match=(r"`confidence_level` must be a real number"
                                             r" in \(0, 1\); got '0.95' \(str\)")):
            make(confidence_level="0.95")
        with pytest.raises(ValueError, match=r"`missing` must be one of 'raise', 'drop'; got 'omit'"):
            make(missing="omit")
        with pytest.raises(TypeError, match=r"`label` must be a string or None; got 3"):
            make(label=3)

    def test_data_must_be_a_frame(self, frame):
        with pytest.raises(TypeError, match="`data` must be a pandas DataFrame; got dict"):
            OneSampleTTest(column="y").run(frame.to_dict())


class TestOneSampleTTest:
    def test_one_sample_t_iv(self, frame):
        with pytest.raises(ValueError, match=r"Column 'z' is not in `data`; available columns: \['y', 'w', 'x', 'g'"):
            OneSampleTTest(column="z").run(frame)
        with pytest.raises(TypeError, match="Column 'name' must hold numbers for a t-test; it has dtype"):
            OneSampleTTest(column="name").run(frame)
        with pytest.raises(ValueError, match=(r"missing values \(3 in column 'y'; 3 of"
                                              r" 30 rows incomplete\).*missing='drop'")):
            OneSampleTTest(column="y").run(with_missing(frame, "y", [0, 5, 9]))
        with pytest.raises(ValueError, match="Column 'y' has 1 infinite value"):
            OneSampleTTest(column="y").run(frame.assign(y=np.r_[np.inf, frame.y[1:]]))
        with pytest.raises(ValueError, match="Column 'y' has 1 observation\\(s\\); a t-test needs at least 2"):
            OneSampleTTest(column="y").run(frame.iloc[:1])
        with pytest.raises(ValueError, match="Column 'y' is constant \\(2.0\\)"):
            OneSampleTTest(column="y").run(frame.assign(y=2.0))
        with pytest.raises(TypeError, match="`value` must be a finite real number; got '0'"):
            OneSampleTTest(column="y", value="0")
        with pytest.raises(ValueError, match="`value` must be a finite real number; got inf"):
            OneSampleTTest(column="y", value=float("inf"))
        with pytest.raises(TypeError, match="`column` must be a column name"):
            OneSampleTTest(column=["y"])

    def test_missing_drop_drops_and_counts(self, frame):
        holes = with_missing(frame, "y", [0, 5, 9])
        res = OneSampleTTest(column="y", missing="drop").run(holes)
        assert res.n_obs == 27
        assert res.pvalue_naive == OneSampleTTest(column="y").run(frame.drop(index=[0, 5, 9])).pvalue_naive

    def test_nullable_integers_are_numbers(self, frame):
        ints = frame.assign(c=frame.c.astype("Int64"))
        assert OneSampleTTest(column="c").run(ints).pvalue_naive == OneSampleTTest(column="c").run(frame).pvalue_naive


class TestPairedTTest:
    def test_paired_t_iv(self, frame):
        with pytest.raises(ValueError, match="`column1` and `column2` must differ; both are 'y'"):
            PairedTTest(column1="y", column2="y")
        with pytest.raises(ValueError, match=r"2 in column 'w'; 2 of 30 rows"):
            PairedTTest(column1="y", column2="w").run(with_missing(frame, "w", [1, 2]))
        with pytest.raises(ValueError, match=r"1 in column 'y', 1 in column 'w'; 2 of 30 rows"):
            PairedTTest(column1="y", column2="w").run(with_missing(with_missing(frame, "y", [3]), "w", [4]))
        with pytest.raises(ValueError, match="The difference 'y' - 'w' is constant"):
            PairedTTest(column1="y", column2="w").run(frame.assign(y=frame.c * 1.0, w=frame.c + 1.0))
        assert PairedTTest(column1="y", column2="w", missing="drop").run(with_missing(frame, "w", [1, 2])).n_obs == 28


class TestTwoSampleTTest:
    def test_two_sample_t_iv(self, frame):
        with pytest.raises(ValueError, match=r"`usevar` must be one of 'pooled', 'unequal'; got 'welch'"):
            TwoSampleTTest(column="y", group="g", usevar="welch")
        with pytest.raises(TypeError, match=r"`levels` must be None or a pair"):
            TwoSampleTTest(column="y", group="h", levels=("u",))
        with pytest.raises(ValueError, match=r"`levels` must name two different groups; got \('u', 'u'\)"):
            TwoSampleTTest(column="y", group="h", levels=("u", "u"))
        with pytest.raises(ValueError, match=(r"Column 'h' must have exactly two distinct values to compare,"
                                              r" or pass `levels=\(a, b\)`; it has 3: \['u', 'v', 'w'\]")):
            TwoSampleTTest(column="y", group="h").run(frame)
        with pytest.raises(ValueError, match=(r"Level 'x' of `levels` does not occur in column"
                                              r" 'h'; its values are \['u', 'v', 'w'\]")):
            TwoSampleTTest(column="y", group="h", levels=("u", "x")).run(frame)
        with pytest.raises(ValueError, match=(r"Group g='b' of column 'y' has 1 observation\(s\);"
                                              r" a two-sample t-test needs at least 2")):
            TwoSampleTTest(column="y", group="g").run(frame.iloc[:3])
        with pytest.raises(ValueError, match=r"missing values \(2 in column 'g'"):
            TwoSampleTTest(column="y", group="g").run(with_missing(frame, "g", [0, 1]))
        with pytest.raises(ValueError, match="constant within both groups"):
            TwoSampleTTest(column="y", group="g").run(frame.assign(y=np.where(frame.g == "a", 1.0, 2.0)))
        with pytest.raises(ValueError, match=r"Column 'q' is not in `data`"):
            TwoSampleTTest(column="y", group="q").run(frame)

    def test_z_tests_share_the_checks(self, frame):
        with pytest.raises(ValueError, match=(r"Group g='b' of column 'y' has 1 observation\(s\);"
                                              r" a two-sample z-test needs at least 2")):
            TwoSampleZTest(column="y", group="g").run(frame.iloc[:3])
        with pytest.raises(TypeError, match="Column 'name' must hold numbers for a z-test"):
            OneSampleZTest(column="name").run(frame)


class TestProportionTests:
    def test_one_sample_proportion_iv(self, frame):
        with pytest.raises(ValueError, match=r"`value` must be a real number in \(0, 1\); got 1"):
            OneSampleProportionTest(column="b", value=1)
        with pytest.raises(ValueError, match=r"`variance` must be one of 'null', 'sample'; got 'wald'"):
            OneSampleProportionTest(column="b", variance="wald")
        with pytest.raises(ValueError, match=(r"Column 'c' must hold 0/1 or True/False for"
                                              r" a proportion test, or pass `success=`")):
            OneSampleProportionTest(column="c").run(frame)
        with pytest.raises(ValueError, match=r"Column 'b' has 0 successes in 30: with variance='sample'"):
            OneSampleProportionTest(column="b", variance="sample").run(frame.assign(b=0))
        with pytest.raises(ValueError, match="`success` must be a value of the column, not NaN"):
            OneSampleProportionTest(column="b", success=float("nan"))
        res = OneSampleProportionTest(column="h", success="u").run(frame)
        assert res.estimate == pytest.approx(1 / 3)

    def test_two_sample_proportion_iv(self, frame):
        with pytest.raises(ValueError, match=r"Column 'b' has 0 successes in 30 rows: the pooled standard error is 0"):
            TwoSampleProportionTest(column="b", group="g").run(frame.assign(b=0))
        with pytest.raises(ValueError, match=(r"Group b \| g='b' has 1 observation\(s\); a two-sample"
                                              r" proportion test needs at least 2")):
            TwoSampleProportionTest(column="b", group="g").run(frame.iloc[:3])
        with pytest.raises(ValueError, match=r"missing values \(1 in column 'b'"):
            TwoSampleProportionTest(column="b", group="g").run(with_missing(frame, "b", [4]))

    def test_chisquare_iv(self, frame):
        with pytest.raises(ValueError, match="`alternative` must be 'two-sided' for a chi-square test of independence"):
            ChiSquareIndependenceTest(column1="g", column2="h", alternative="greater")
        with pytest.raises(ValueError, match="Column 'g' takes a single value"):
            ChiSquareIndependenceTest(column1="g", column2="h").run(frame.assign(g="a"))
        with pytest.raises(ValueError, match=r"Column 'hh' is not in `data`; available columns"):
            ChiSquareIndependenceTest(column1="g", column2="hh").run(frame)


class TestCorrelationTests:
    @pytest.mark.parametrize("spec_class", [PearsonCorrelationTest, SpearmanCorrelationTest])
    def test_correlation_iv(self, frame, spec_class):
        with pytest.raises(ValueError, match="`column1` and `column2` must differ"):
            spec_class(column1="y", column2="y")
        with pytest.raises(TypeError, match="Column 'name' must hold numbers"):
            spec_class(column1="y", column2="name").run(frame)
        with pytest.raises(ValueError, match=(r"The pair \('y', 'x'\) has 3 observation\(s\);"
                                              r" a .* correlation test needs at least 4")):
            spec_class(column1="y", column2="x").run(frame.iloc[:3])
        with pytest.raises(ValueError, match="Column 'x' is constant"):
            spec_class(column1="y", column2="x").run(frame.assign(x=1.0))
        with pytest.raises(ValueError, match=r"missing values \(2 in column 'x'"):
            spec_class(column1="y", column2="x").run(with_missing(frame, "x", [0, 1]))


class TestRegressionTests:
    def test_coefficient_iv(self, frame):
        with pytest.raises(ValueError, match=r"`formula` must have the form 'outcome ~ terms'; got 'y \+ x'"):
            CoefficientTest(formula="y + x", term="x")
        with pytest.raises(TypeError, match="`formula` must be a string"):
            CoefficientTest(formula=None, term="x")
        with pytest.raises(ValueError, match=r"`model` must be one of 'ols', 'logit', 'poisson'; got 'probit'"):
            CoefficientTest(formula="b ~ x", term="x", model="probit")
        with pytest.raises(ValueError, match=(r"`formula` 'y ~ x \+ z' refers to 'z', which is not"
                                              r" a column of `data`; available columns: \['y'")):
            CoefficientTest(formula="y ~ x + z", term="x").run(frame)
        with pytest.raises(ValueError, match=(r"`term` 'h' is not a coefficient of the model; its"
                                              r" coefficients are \['Intercept', 'C\(h\)\[T.v\]'")):
            CoefficientTest(formula="y ~ C(h) + x", term="h").run(frame)
        with pytest.raises(ValueError, match=r"missing values \(2 in column 'x'.*missing='drop'"):
            CoefficientTest(formula="y ~ x + C(g)", term="x").run(with_missing(frame, "x", [0, 1]))
        with pytest.raises(ValueError, match=r"missing values \(1 in column 'g'"):
            CoefficientTest(formula="y ~ x + C(g)", term="x").run(with_missing(frame, "g", [7]))
        with pytest.raises(TypeError, match=r"Column 'name' \(the outcome of `formula`\) must hold numbers"):
            CoefficientTest(formula="name ~ x", term="x").run(frame)
        with pytest.raises(ValueError, match=(r"Column 'c' \(the outcome of a logit model\)"
                                              r" must hold 0/1; it holds [2-9]")):
            CoefficientTest(formula="c ~ x", term="x", model="logit").run(frame)
        with pytest.raises(ValueError, match=r"Column 'y' \(the outcome of a Poisson model\) must be >= 0"):
            CoefficientTest(formula="y ~ x", term="x", model="poisson").run(frame)
        with pytest.raises(ValueError, match="rank deficient"):
            CoefficientTest(formula="y ~ x + x2", term="x").run(frame.assign(x2=2 * frame.x))
        with pytest.raises(ValueError, match="has 3 coefficients and only 3 observations"):
            CoefficientTest(formula="y ~ x + w", term="x").run(frame.iloc[:3])

    def test_missing_drop_uses_complete_rows(self, frame):
        holes = with_missing(frame, "x", [0, 1])
        res = CoefficientTest(formula="y ~ x + C(g)", term="x", missing="drop").run(holes)
        direct = CoefficientTest(formula="y ~ x + C(g)", term="x").run(frame.drop(index=[0, 1]))
        assert res.n_obs == 28 and res.pvalue_naive == direct.pvalue_naive

    def test_joint_wald_iv(self, frame):
        with pytest.raises(TypeError, match="`terms` must be a non-empty tuple of coefficient names; got \\(\\)"):
            JointWaldTest(formula="y ~ x", terms=())
        with pytest.raises(ValueError, match=r"`terms` must not repeat a coefficient; got \('x', 'x'\)"):
            JointWaldTest(formula="y ~ x", terms=("x", "x"))
        with pytest.raises(ValueError, match="`alternative` must be 'two-sided' for a joint Wald test; got 'less'"):
            JointWaldTest(formula="y ~ x", terms=("x",), alternative="less")
        with pytest.raises(TypeError, match="`use_f` must be True, False or None; got 'F'"):
            JointWaldTest(formula="y ~ x", terms=("x",), use_f="F")
        with pytest.raises(ValueError, match=r"`term` 'w' is not a coefficient of the model"):
            JointWaldTest(formula="y ~ x", terms=("x", "w")).run(frame)
        assert JointWaldTest(formula="y ~ x", terms=["x"]).terms == ("x",)
