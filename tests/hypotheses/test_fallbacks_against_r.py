"""The exact versions of run_at_level against R: binom.test, fisher.test and
cor.test(method = "spearman", exact = TRUE), through selective.interop.rbridge.

Skipped, with the reason, without R or rpy2. R's exact Spearman p-value is exact for n <= 9
(algorithm AS 89 with exact enumeration there; an Edgeworth series above), the range where
run_at_level enumerates all n! permutations by default; ties are avoided (R then drops the
exact computation). Tolerance 1e-12 relative: both sides sum the same probabilities.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    ChiSquareIndependenceTest,
    OneSampleProportionTest,
    SpearmanCorrelationTest,
    TwoSampleProportionTest,
)
from selective.interop.rbridge import r_eval, why_r_unavailable

REASON = why_r_unavailable()
pytestmark = [pytest.mark.needs_r, pytest.mark.skipif(REASON is not None, reason=f"R cross-check skipped: {REASON}")]

ALTERNATIVES = ["two-sided", "less", "greater"]
R_ALT = {"two-sided": "two.sided", "less": "less", "greater": "greater"}
LEVEL = 1e-9  # below every ordinary trusted level: the exact version is always used


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=1e-12,
                               atol=0)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize(("count", "nobs", "value"), [(7, 200, 0.01), (0, 50, 0.1), (30, 60, 0.5), (59, 60, 0.9)])
def test_exact_binomial_against_r(count, nobs, value, alternative):
    data = pd.DataFrame({"b": [1] * count + [0] * (nobs - count)})
    res = OneSampleProportionTest(column="b", value=value, alternative=alternative, confidence_level=0.9).run_at_level(
        data, LEVEL)
    assert res.pvalue_method == "exact"
    ref = r_eval("binom.test(k, n, p, alternative = alt, conf.level = 0.9)", k=count, n=nobs, p=value,
                 alt=R_ALT[alternative])
    close(res.pvalue_naive, ref["p.value"])
    close(res.statistic, ref["statistic"])
    np.testing.assert_allclose(res.ci_naive, ref["conf.int"], rtol=1e-9)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), [(3, 100, 12, 200), (0, 40, 5, 40), (1, 1000, 9, 1000),
                                                    (20, 30, 5, 30)])
def test_fisher_against_r(c1, n1, c2, n2, alternative):
    data = pd.DataFrame({"b": [1] * c1 + [0] * (n1 - c1) + [1] * c2 + [0] * (n2 - c2), "g": ["a"] * n1 + ["b"] * n2})
    res = TwoSampleProportionTest(column="b", group="g", alternative=alternative).run_at_level(data, LEVEL)
    assert res.pvalue_method == "exact"
    ref = r_eval("fisher.test(matrix(c(c1, c2, n1 - c1, n2 - c2), 2), alternative = alt)",
                 c1=c1, c2=c2, n1=n1, n2=n2, alt=R_ALT[alternative])
    close(res.pvalue_naive, ref["p.value"])
    if alternative == "two-sided":
        chi = ChiSquareIndependenceTest(column1="g", column2="b")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)  # small expected counts
            chi_res = chi.run_at_level(data, LEVEL)
        assert chi_res.pvalue_method == "exact"
        close(chi_res.pvalue_naive, ref["p.value"])


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize(("n", "seed"), [(4, 1), (5, 2), (7, 3), (9, 4), (9, 5)])
def test_exact_spearman_against_r(n, seed, alternative):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.7 * x + rng.normal(size=n)
    data = pd.DataFrame({"x": x, "y": y})
    res = SpearmanCorrelationTest(column1="x", column2="y", alternative=alternative).run_at_level(data, LEVEL)
    assert res.pvalue_method == "exact"
    ref = r_eval("cor.test(d$x, d$y, method = 'spearman', exact = TRUE, alternative = alt)", d=data,
                 alt=R_ALT[alternative])
    close(res.pvalue_naive, ref["p.value"])
