"""TestResult under the names researchers expect: pvalue, statistic, conf_int, summary, repr,
_repr_html_, the fitted statsmodels result; and the Wilson interval from statsmodels."""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from statsmodels.stats.proportion import proportion_confint

from selective.exceptions import SelectiveWarning
from selective.hypotheses import (
    CoefficientTest,
    JointWaldTest,
    OneSampleProportionTest,
    OneSampleTTest,
    TestResult,
    TwoSampleTTest,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    x = rng.normal(size=60)
    return pd.DataFrame({"y": 0.3 + 0.5 * x + rng.normal(size=60), "x": x, "g": np.repeat(["a", "b"], 30),
                         "b": (rng.random(60) < 0.3).astype(int)})


def test_pvalue_and_conf_int_names(data):
    res = TwoSampleTTest(column="y", group="g", alternative="greater").run(data)
    assert res.pvalue == res.pvalue_naive and isinstance(res.statistic, float)
    assert res.conf_int() == pytest.approx(res.ci_naive, rel=1e-14)  # default alpha 0.05: the spec's 95% level
    assert res.conf_int(alpha=1e-6) == res.ci_at(alpha=1e-6)
    assert res.conf_int(0.1)[1] == math.inf  # one-sided, as the alternative
    with pytest.raises(ValueError, match=r"`alpha` must be a real number in \(0, 1\); got 0"):
        res.conf_int(0)


def test_summary_shows_every_number_and_says_it_is_naive(data):
    res = OneSampleTTest(column="y", confidence_level=0.9).run(data)
    text = res.summary()
    lines = text.splitlines()
    assert lines[0] == res.hypothesis and set(lines[1]) == {"="}
    for part in (f"{res.estimate:.4g}", f"{res.statistic:.4g}", f"{res.pvalue_naive:.3g}", "90% CI",
                 f"[{res.ci_naive[0]:.4g}, {res.ci_naive[1]:.4g}]", f"{res.df:.4g}", "N ", str(res.n_obs),
                 f"exact_under_model (trusted down to {res.trusted_level:.3g})", res.method, "Naive result"):
        assert part in text, part
    joint = JointWaldTest(formula="y ~ x", terms=("x",)).run(data).summary()
    assert "CI          n/a" in joint.replace("95% CI", "CI") and "1, 58" in joint  # F(1, 58): df and df_denom


def test_repr_is_one_readable_line_and_html_escapes(data):
    res = OneSampleTTest(column="y", label="mean of <y> & co").run(data)
    text = repr(res)
    assert "\n" not in text and text.startswith("TestResult('mean of <y> & co': estimate=")
    assert f"pvalue={res.pvalue_naive:.3g}" in text and "interval_rule" not in text and " method=" not in text
    page = res._repr_html_()
    assert "mean of &lt;y&gt; &amp; co" in page and "<y>" not in page
    assert page.count("<tr>") == len(res.summary().splitlines()) - 4  # one row per line between the rules


def test_model_result_is_the_statsmodels_fit_and_is_not_pickled(data):
    res = CoefficientTest(formula="y ~ x", term="x").run(data)
    fit = res.model_result
    assert fit is not None and fit.params["x"] == res.estimate and fit.pvalues["x"] == res.pvalue_naive
    assert "OLS Regression Results" in str(fit.summary())
    glm = CoefficientTest(formula="b ~ x", term="x", model="logit").run(data).model_result
    assert glm.model.family.__class__.__name__ == "Binomial"
    back = pickle.loads(pickle.dumps(res))
    assert back.to_dict() == res.to_dict() and back.model_result is None  # everything else survives
    assert dataclasses.replace(res, pvalue_naive=0.5).model_result is fit
    assert TestResult.from_dict(res.to_dict()).model_result is None
    assert OneSampleTTest(column="y").run(data).model_result is None  # no statsmodels results object there


@pytest.mark.parametrize("alpha", [0.05, 0.2, 1e-8, 1e-40])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_wilson_interval_is_statsmodels_and_the_closed_form(data, alpha, alternative):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        res = OneSampleProportionTest(column="b", value=0.3, alternative=alternative).run(data)
    count, nobs = int(data.b.sum()), len(data)
    low, high = res.ci_at(alpha=alpha)
    two = alpha if alternative == "two-sided" else 2 * alpha
    sm_low, sm_high = proportion_confint(count, nobs, alpha=two, method="wilson")
    # Wilson (1927) written out, with an upper-tail quantile
    z = scipy.stats.norm.isf(two / 2)
    p = count / nobs
    center = (p + z * z / (2 * nobs)) / (1 + z * z / nobs)
    half = z * math.sqrt(p * (1 - p) / nobs + z * z / (4 * nobs * nobs)) / (1 + z * z / nobs)
    expect_low, expect_high = max(center - half, 0.0), min(center + half, 1.0)
    if alternative == "greater":
        sm_high = expect_high = 1.0
    if alternative == "less":
        sm_low = expect_low = 0.0
    np.testing.assert_allclose([low, high], [sm_low, sm_high], rtol=1e-15, atol=0)
    np.testing.assert_allclose([low, high], [expect_low, expect_high], rtol=1e-12, atol=1e-15)
