"""2x2 tables against R: chisq.test with and without Yates' correction, and fisher.test, through
selective.interop.rbridge; the exact trusted level of the Yates p-value against a direct sum.

The R tests skip, with the reason, without R or rpy2. Tolerance 1e-12 relative: both sides
evaluate the same closed forms (the chi-square survival function of the same statistic) or sum
the same hypergeometric probabilities.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from selective.exceptions import SelectiveWarning
from selective.hypotheses import ChiSquareIndependenceTest, TwoSampleProportionTest
from selective.hypotheses.proportions import yates_trusted_level
from selective.interop.rbridge import r_eval, why_r_unavailable

REASON = why_r_unavailable()
needs_r = pytest.mark.skipif(REASON is not None, reason=f"R cross-check skipped: {REASON}")
# (x11, x12, x21, x22): small, unbalanced, a zero cell, |O - E| below 0.5 (Yates then removes it all)
TABLES = [(3, 97, 12, 188), (0, 40, 5, 35), (20, 10, 5, 25), (10, 10, 10, 11), (1, 999, 9, 991)]


def frame(x11, x12, x21, x22) -> pd.DataFrame:
    g = ["a"] * (x11 + x12) + ["b"] * (x21 + x22)
    b = [1] * x11 + [0] * x12 + [1] * x21 + [0] * x22
    return pd.DataFrame({"g": g, "b": b})


def run(spec, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)  # small expected counts
        return spec.run(data)


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=1e-12, atol=0)


@pytest.mark.parametrize("cells", TABLES)
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.needs_r
@needs_r
def test_chisq_against_r(cells, correction):
    res = run(ChiSquareIndependenceTest(column1="g", column2="b", correction=correction), frame(*cells))
    x11, x12, x21, x22 = cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = r_eval("suppressWarnings(chisq.test(matrix(c(a, c, b, d), 2), correct = yates))",
                     a=x11, b=x12, c=x21, d=x22, yates=correction)
    close([res.statistic, res.pvalue_naive, res.df], [ref["statistic"], ref["p.value"], ref["parameter"]])
    assert ("correction=True" in res.method) == correction


@pytest.mark.parametrize("cells", TABLES)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.needs_r
@needs_r
def test_fisher_against_r(cells, alternative):
    x11, x12, x21, x22 = cells
    spec = TwoSampleProportionTest(column="b", group="g", levels=("a", "b"), alternative=alternative)
    res = spec.run_at_level(frame(*cells), 1e-12)  # below every trusted level: Fisher's exact test
    assert res.pvalue_method == "exact"
    ref = r_eval("fisher.test(matrix(c(a, c, b, d), 2), alternative = alt)", a=x11, b=x12, c=x21, d=x22,
                 alt={"two-sided": "two.sided"}.get(alternative, alternative))
    close(res.pvalue_naive, ref["p.value"])


def test_yates_statistic_against_its_definition():
    # R's chisq.test: YATES = min(0.5, |O - E|), X2 = sum((|O - E| - YATES)^2 / E)
    for cells in TABLES:
        obs = np.array(cells, dtype=float).reshape(2, 2)
        e = np.outer(obs.sum(1), obs.sum(0)) / obs.sum()
        yates = min(0.5, float(np.abs(obs - e).min()))
        x2 = float(np.sum((np.abs(obs - e) - yates) ** 2 / e))
        res = run(ChiSquareIndependenceTest(column1="g", column2="b", correction=True), frame(*cells))
        close([res.statistic, res.pvalue_naive], [x2, scipy.stats.chi2.sf(x2, 1)])


def test_yates_trusted_level_against_direct_enumeration():
    # the rejection rate P(p <= u) over the hypergeometric law, checked at the returned level and just
    # below the attainable p-value that fixes it: the rate stays within 1.1 u at and above u0
    for cells in [(3, 97, 12, 188), (20, 10, 5, 25), (5, 45, 5, 45)]:
        obs = np.array(cells).reshape(2, 2)
        u0 = yates_trusted_level(obs)
        n1, s, total = int(obs[0].sum()), int(obs[:, 0].sum()), int(obs.sum())
        x = np.arange(max(0, s - (total - n1)), min(n1, s) + 1)
        pvals = np.array([run(ChiSquareIndependenceTest(column1="g", column2="b", correction=True),
                              frame(int(k), n1 - int(k), s - int(k), total - n1 - s + int(k))).pvalue_naive
                          for k in x])
        probs = scipy.stats.hypergeom.pmf(x, total, s, n1)
        for u in np.concatenate([pvals[pvals >= u0], [u0]]):
            assert probs[pvals <= u * (1 + 1e-9)].sum() <= 1.1 * u * (1 + 1e-9)
        res = run(ChiSquareIndependenceTest(column1="g", column2="b", correction=True), frame(*cells))
        assert res.trusted_level == u0 and res.pvalue_method == "asymptotic"
        if u0 > 0:  # just below u0 some attainable level is not trusted: the rule is not needlessly strict
            bad = [u for u in pvals[pvals < u0] if probs[pvals <= u * (1 + 1e-9)].sum() > 1.1 * u]
            assert bad and math.isfinite(u0)


def test_correction_iv_and_larger_tables_unchanged():
    with pytest.raises(TypeError, match="`correction` .* must be True or False; got 'yes'"):
        ChiSquareIndependenceTest(column1="g", column2="b", correction="yes")
    data = pd.DataFrame({"g": list("aabbccaabbcc") * 5, "b": list("xyxyxxyyxyyx") * 5})
    plain = run(ChiSquareIndependenceTest(column1="g", column2="b"), data)
    corrected = run(ChiSquareIndependenceTest(column1="g", column2="b", correction=True), data)
    assert plain.pvalue_naive == corrected.pvalue_naive  # as in R: only 2x2 tables are corrected
