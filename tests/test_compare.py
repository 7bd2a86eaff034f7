"""compare_selection: every column against the function it comes from, and validity."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from stats_helpers import assert_rate_at_most

from selective.accounting import DescriptionLength, Ledger
from selective.conditional import fixed_lasso_inference, forward_stepwise, fs_inference
from selective.corrections import correct
from selective.exceptions import SelectiveWarning
from selective.interop.compare import COMPARISON_COLUMNS, compare_selection
from selective.interop.rcompare import why_r_unavailable

DIABETES = Path(__file__).resolve().parent / "reference" / "r-selectiveinference" / "diabetes_std.csv"


@pytest.fixture(scope="module")
def diabetes():
    return pd.read_csv(DIABETES)


def test_lasso_columns_against_their_sources(diabetes):
    c = compare_selection(diabetes, "y", method="lasso", lam=190.0, with_r=False)
    assert list(c.frame.columns) == list(COMPARISON_COLUMNS)
    assert list(c.frame.index) == ["bmi", "bp", "s3", "s5"]
    X = diabetes[list(c.frame.index)]
    fit = sm.OLS(diabetes["y"], sm.add_constant(X)).fit()
    np.testing.assert_allclose(c.frame.pvalue_naive, fit.pvalues.iloc[1:], rtol=1e-12)
    np.testing.assert_allclose(c.frame.estimate, fit.params.iloc[1:], rtol=1e-12)
    assert c.n_outcomes == 2**10
    led = Ledger(len(diabetes))
    led.record(DescriptionLength(2**10))
    want = correct(c.frame.pvalue_naive.to_numpy(), led.totals())
    np.testing.assert_allclose(c.frame.pvalue_maxinfo, want.pvalue_maxinfo, rtol=1e-12)
    cond = fixed_lasso_inference(diabetes, "y", 190.0, type="partial", alpha=0.05, alternative="two-sided")
    np.testing.assert_allclose(c.frame.pvalue_conditional, cond.pvalue, rtol=1e-12)
    assert c.frame.pvalue_r.isna().all() and c.r_status == "not requested"
    # the max-information column is never below the naive one
    assert (c.frame.pvalue_maxinfo >= c.frame.pvalue_naive).all()


def test_stepwise_outcome_count_and_renderings(diabetes):
    c = compare_selection(diabetes, "y", method="fs", steps=4, with_r=False)
    assert c.n_outcomes == math.perm(10, 4)
    path = forward_stepwise(diabetes.drop(columns="y").to_numpy(), diabetes.y.to_numpy(), maxsteps=4)
    cond = fs_inference(path, k=4, type="all", alpha=0.05, alternative="two-sided")
    np.testing.assert_allclose(np.sort(c.frame.pvalue_conditional), np.sort(cond.pvalue), rtol=1e-12)
    md = c.to_markdown()
    # sigma estimated from the full model (431 residual df): valid, not "exact"
    assert "p (conditional, valid for unknown sigma)" in md and "forward stepwise path of 4 steps" in md
    assert "exact" not in md.split("\n")[0]
    assert r"\toprule" in c.to_latex()
    known = compare_selection(diabetes, "y", method="fs", steps=4, sigma=54.0, with_r=False)
    assert "p (exact conditional)" in known.to_markdown()


def test_r_column(diabetes):
    reason = why_r_unavailable()
    c = compare_selection(diabetes, "y", method="lasso", lam=190.0, with_r="auto", sigma_method="plugin")
    if reason is None:
        assert c.r_status == "compared"
        # R evaluates (Phi(b) - Phi(z)) / (Phi(b) - Phi(a)) in double precision: accurate to 1e-10
        # relative while the truncation mass and the tail mass both exceed 1e-6, inaccurate
        # (down to 0) beyond; those entries are arbitrated in tests/conditional/test_live_r.py.
        from scipy.stats import norm

        res = c.conditional
        a, b = res.vlo / res.sd, res.vup / res.sd
        mass = norm.sf(a) - norm.sf(b)
        accurate = (mass > 1e-6) & (c.frame.pvalue_conditional.to_numpy() / 2 * mass > 1e-6)
        assert accurate.any()
        np.testing.assert_allclose(c.frame.pvalue_r[accurate], c.frame.pvalue_conditional[accurate], rtol=1e-6)
        assert np.all(c.frame.pvalue_r[~accurate] < 1e-10)
    else:
        assert c.frame.pvalue_r.isna().all() and "R not available" in c.r_status
        from selective.interop.rbridge import RNotAvailableError

        with pytest.raises(RNotAvailableError, match="install.packages"):
            compare_selection(diabetes, "y", method="lasso", lam=190.0, with_r=True)


def test_plugin_sigma_is_labelled_approximate(diabetes):
    """No residual df left (n = 11 <= p + 1 = 11): the column is the plug-in, labelled
    approximate with its df, and a SelectiveWarning names them; asking for the plug-in
    explicitly gives the same label."""
    small = diabetes.iloc[:11]
    with pytest.warns(SelectiveWarning, match=r"approximate \(plug-in sigma, 10 residual df\)") as rec:
        c = compare_selection(small, "y", method="fs", steps=2, with_r=False)
    assert rec[0].filename == __file__  # the warning points at the caller
    assert c.conditional_header == "p (approximate: plug-in sigma, 10 residual df)"
    assert c.conditional.sigma_mode == "plugin" and "approximate (plug-in sigma, 10 residual df)" in c.footnote
    assert "exact" not in c.to_markdown(footnote=False)
    with pytest.warns(SelectiveWarning, match=r"approximate \(plug-in sigma, 431 residual df\)"):
        c = compare_selection(diabetes, "y", method="lar", steps=3, sigma_method="plugin", with_r=False)
    assert c.conditional_header == "p (approximate: plug-in sigma, 431 residual df)"


def test_binomial_family_against_its_sources():
    data = pd.read_csv(DIABETES.parent / "binom_n100_p10.csv")
    c = compare_selection(data, "y", method="lasso", lam=4.0, family="binomial", with_r=False)
    cond = fixed_lasso_inference(data, "y", 4.0, family="binomial", alpha=0.05, alternative="two-sided")
    assert list(c.frame.index) == list(cond.variables)
    np.testing.assert_allclose(c.frame.pvalue_conditional, cond.pvalue, rtol=1e-12)
    X = data[list(cond.variables)]
    fit = sm.Logit(data["y"], sm.add_constant(X)).fit(disp=0)
    np.testing.assert_allclose(c.frame.pvalue_naive, fit.pvalues.iloc[1:], rtol=1e-10)
    np.testing.assert_allclose(c.frame.estimate, fit.params.iloc[1:], rtol=1e-10)
    assert c.conditional_header == "p (approximate: binomial, asymptotic)"
    assert "binomial lasso support" in c.footnote
    for method in ("fs", "lar"):
        with pytest.raises(ValueError, match="`family`='binomial' is only available with method='lasso'"):
            compare_selection(data, "y", method=method, steps=2, family="binomial")
    with pytest.raises(ValueError, match="`family` must be one of 'gaussian', 'binomial'"):
        compare_selection(data, "y", method="lasso", lam=4.0, family="poisson")
    with pytest.raises(ValueError, match="`sigma` must be None for family='binomial'"):
        compare_selection(data, "y", method="lasso", lam=4.0, family="binomial", sigma=1.0)
    with pytest.raises(ValueError, match="`y` must contain only 0 and 1"):
        compare_selection(data.assign(y=data["y"] * 2.0), "y", method="lasso", lam=4.0, family="binomial")


def test_compare_iv(diabetes):
    with pytest.raises(ValueError, match="`method` must be one of"):
        compare_selection(diabetes, "y", method="ridge")
    with pytest.raises(ValueError, match="`lam` is required"):
        compare_selection(diabetes, "y", method="lasso")
    with pytest.raises(ValueError, match="`steps` is required"):
        compare_selection(diabetes, "y", method="lar")
    with pytest.raises(ValueError, match="more than `max_support`"):
        compare_selection(diabetes, "y", method="lasso", lam=190.0, max_support=2, with_r=False)
    with pytest.raises(ValueError, match="`with_r`"):
        compare_selection(diabetes, "y", method="lasso", lam=190.0, with_r="maybe")


@pytest.mark.slow
def test_max_information_column_holds_its_level_under_the_global_null():
    """600 null data sets (n = 100, p = 10, lasso at a lambda that selects about 2 variables):
    the first selected variable's max-information p-value rejects at most alpha (one-sided
    binomial, false-failure rate 1e-6); its naive p-value rejects far more often."""
    rng = np.random.default_rng(20261122)
    alpha, n_reps = 0.05, 600
    hits_mx = hits_naive = used = 0
    for _ in range(n_reps):
        X = rng.standard_normal((100, 10))
        d = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])
        d["y"] = rng.standard_normal(100)
        try:
            c = compare_selection(d, "y", method="lasso", lam=12.0, sigma=1.0, with_r=False)
        except ValueError:  # nothing selected
            continue
        used += 1
        row = c.frame.iloc[0]
        hits_mx += row.pvalue_maxinfo <= alpha
        hits_naive += row.pvalue_naive <= alpha
    assert used > 400
    assert_rate_at_most(hits_mx, used, alpha)
    assert hits_naive / used > 0.2


def test_fission_column_against_its_definition_and_errors(diabetes):
    from selective.conditional.lasso import solve_lasso
    from selective.selectors.fission import gaussian_fission

    c = compare_selection(diabetes, "y", method="lasso", lam=190.0, sigma=55.0, fission_tau=1.0, rng=5,
                          with_r=False)
    x = [v for v in diabetes.columns if v != "y"]
    parts = gaussian_fission(diabetes["y"].to_numpy(), sigma=55.0, tau=1.0, rng=5)
    chosen = [x[j] for j in np.flatnonzero(solve_lasso(diabetes[x].to_numpy(), parts.explore, 190.0).beta)]
    fit = sm.OLS(parts.confirm, sm.add_constant(diabetes[chosen])).fit()
    assert c.fission_variables == tuple(chosen)
    assert set(chosen) <= set(c.frame.index)  # rows only the exploration copy selected are added
    for v in c.frame.index:
        expected = fit.pvalues[v] if v in chosen else math.nan
        assert c.frame.loc[v, "pvalue_fission"] == pytest.approx(expected, rel=1e-10, nan_ok=True)
    assert "p (fission)" in c.to_markdown() and "Fission column" in c.footnote
    with pytest.raises(ValueError, match="`fission_tau` needs family='gaussian' and the known `sigma`"):
        compare_selection(diabetes, "y", method="lasso", lam=190.0, fission_tau=1.0, with_r=False)


@pytest.mark.parametrize("method", ["lasso", "fs"])
def test_carving_columns_are_the_randomized_response_inference(diabetes, method):
    from selective.conditional import draw_randomization, randomized_lasso_inference, randomized_stepwise_inference

    kw = dict(lam=190.0) if method == "lasso" else dict(steps=3)
    c = compare_selection(diabetes, "y", method=method, sigma=55.0, carving_noise_sd=40.0, rng=5, with_r=False,
                          alpha=0.1, **kw)
    x = [v for v in diabetes.columns if v != "y"]
    omega = draw_randomization(len(diabetes), 40.0, 5)
    np.testing.assert_array_equal(c.carving.extra["randomization"], omega)
    args = dict(sigma=55.0, noise_sd=40.0, randomization=omega, alpha=0.1, columns=x)
    want = (randomized_lasso_inference(diabetes, "y", 190.0, **args) if method == "lasso"
            else randomized_stepwise_inference(diabetes, "y", steps=3, **args))
    assert len(want.variables) >= 1 and set(want.variables) <= set(c.frame.index)
    for v in c.frame.index:
        if v in want.variables:
            i = want.variables.index(v)
            assert c.frame.loc[v, "pvalue_carving"] == want.pvalue[i]
            assert (c.frame.loc[v, "ci_carving_low"], c.frame.loc[v, "ci_carving_high"]) == tuple(want.ci[i])
        else:
            assert math.isnan(c.frame.loc[v, "pvalue_carving"])
    md = c.to_markdown()
    assert "p (carving)" in md and "CI low (carving)" in md and "Carving columns" in c.footnote
    # a variable only one selection chose leaves the other's cells empty: the footnote says so
    assert "A variable only one of the two selections chose is empty in the other's columns." in c.footnote
    assert md.index("p (carving)") < md.index("p (R selectiveInference)") < md.index("CI low (carving)")


@pytest.mark.parametrize("kwargs", [dict(method="lar", steps=2, sigma=55.0), dict(method="lasso", lam=190.0)])
def test_carving_needs_gaussian_known_sigma_and_lasso_or_fs(diabetes, kwargs):
    with pytest.raises(ValueError, match="`carving_noise_sd` needs family='gaussian', the known `sigma`"):
        compare_selection(diabetes, "y", carving_noise_sd=10.0, with_r=False, **kwargs)


@pytest.mark.slow
def test_fission_column_holds_its_level_under_the_global_null():
    """400 null data sets (n = 100, p = 10, forward stepwise, 2 steps): the fission p-value of
    the first variable the exploration copy selected rejects at most alpha (one-sided binomial,
    false-failure rate 1e-6 per level), where the naive one rejects far more often. Reading it
    only on rows the full-data selection also chose would filter by the confirmation copy."""
    rng = np.random.default_rng(20261124)
    hits = {0.05: 0, 0.01: 0}
    naive = used = 0
    for _ in range(400):
        d = pd.DataFrame(rng.standard_normal((100, 10)), columns=[f"x{j}" for j in range(10)])
        d["y"] = rng.standard_normal(100)
        c = compare_selection(d, "y", method="fs", steps=2, sigma=1.0, fission_tau=1.0, rng=rng, with_r=False)
        naive += c.frame["pvalue_naive"].iloc[0] <= 0.05
        used += 1
        for a in hits:
            hits[a] += c.frame.loc[c.fission_variables[0], "pvalue_fission"] <= a
    for a, h in hits.items():
        assert_rate_at_most(h, used, a)
    assert naive / 400 > 0.2


def test_screen_method_against_its_sources(diabetes):
    from selective.conditional import screening_inference
    from selective.conditional.screening import screen_ols
    from selective.selectors.fission import gaussian_fission

    x = [v for v in diabetes.columns if v != "y"]
    c = compare_selection(diabetes, "y", method="screen", keep_below=0.25, sigma=55.0, fission_tau=1.0, rng=5)
    direct = screening_inference(diabetes.assign(one=1.0), "y", keep_below=0.25, screened=x, test="coefficients",
                                 columns=["one", *x])
    assert list(c.frame.dropna(subset=["pvalue_naive"]).index) == list(direct.kept)
    kept = list(direct.kept)
    np.testing.assert_allclose(c.frame.loc[kept, "pvalue_conditional"], direct.pvalue, rtol=1e-12)
    fit = sm.OLS(diabetes["y"], sm.add_constant(diabetes[kept])).fit()
    np.testing.assert_allclose(c.frame.loc[kept, "pvalue_naive"], fit.pvalues.iloc[1:], rtol=1e-12)
    assert c.n_outcomes == 2**10
    led = Ledger(len(diabetes))
    led.record(DescriptionLength(2**10))
    want = correct(c.frame.loc[kept, "pvalue_naive"].to_numpy(), led.totals())
    np.testing.assert_allclose(c.frame.loc[kept, "pvalue_maxinfo"], want.pvalue_maxinfo, rtol=1e-12)
    # the screen has no interval and no R counterpart: those columns are not shown
    assert c.frame.loc[kept, ["ci_conditional_low", "ci_conditional_high", "pvalue_r"]].isna().all().all()
    md = c.to_markdown()
    assert "p (exact conditional, sigma unknown)" in md and "R selectiveInference" not in md.split("\n")[0]
    assert "no interval" in c.footnote and "no inference after t-test screening" in c.footnote
    # fission: the screen rerun on the exploration copy, OLS t-tests on the confirmation copy
    parts = gaussian_fission(diabetes["y"].to_numpy(), sigma=55.0, tau=1.0, rng=5)
    chosen = [x[j] for j in np.flatnonzero(screen_ols(diabetes[x].to_numpy(), parts.explore, 0.25))]
    assert c.fission_variables == tuple(chosen)
    fit = sm.OLS(parts.confirm, sm.add_constant(diabetes[chosen])).fit()
    np.testing.assert_allclose(c.frame.loc[chosen, "pvalue_fission"], fit.pvalues.iloc[1:], rtol=1e-10)
    # a stricter screen keeps fewer variables
    strict = compare_selection(diabetes, "y", method="screen", keep_below=1e-4)
    assert set(strict.frame.index) < set(kept)


def test_screen_method_reads_any_label_and_is_unmoved_by_an_offset(diabetes):
    # found by review: a column named like the screen's internal intercept label was refused, and an
    # offset of 1e9 made the screen keep another variable
    base = compare_selection(diabetes, "y", method="screen")
    renamed = compare_selection(diabetes.rename(columns={"sex": "(intercept of the screen)"}), "y", method="screen")
    np.testing.assert_allclose(renamed.frame.pvalue_conditional, base.frame.pvalue_conditional, rtol=1e-12)
    shifted = compare_selection(diabetes.assign(sex=diabetes.sex + 1e9), "y", method="screen")
    assert list(shifted.frame.index) == list(base.frame.index)
    np.testing.assert_allclose(shifted.frame.pvalue_conditional, base.frame.pvalue_conditional, rtol=1e-6)
    np.testing.assert_allclose(shifted.frame.pvalue_naive, base.frame.pvalue_naive, rtol=1e-6)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(sigma=55.0), "does not use `sigma`=55.0"),
    (dict(lam=3.0, steps=2), "does not use `lam`=3.0, `steps`=2"),
    (dict(columns=[]), "`columns` must name at least one predictor"),
    (dict(columns=["y", "bmi"]), "and not the response 'y'"),
    (dict(sigma=55.0, fission_tau=0.0), "`fission_tau` must be"),
    (dict(keep_below=1e-100), r"the selection \(t-test screen at p < 1e-100 among 10"),
    (dict(intercept=False), "intercept=False"),
    (dict(with_r=True), "with_r=True"),
    (dict(sigma=55.0, carving_noise_sd=10.0), "carving_noise_sd=10.0"),
    (dict(keep_below=1.5), "`keep_below`"),
])
def test_screen_method_refuses_what_it_cannot_do(diabetes, kwargs, match):
    with pytest.raises(ValueError, match=match):
        compare_selection(diabetes, "y", method="screen", **kwargs)


@pytest.mark.parametrize("which", ["rpy2", "packages"])
def test_the_r_setup_advice_is_given_once(which, monkeypatch):
    """The bridge's reasons carry install advice that the comparison's setup hint repeats in
    full: the footnote says each step once."""
    from selective.interop import rbridge, rcompare

    missing = {"rpy2": f"R not available: rpy2 is not installed: {rbridge.INSTALL_RPY2}; rpy2 needs R itself: "
                       f"{rbridge.INSTALL_R}.",
               "packages": "R package 'glmnet' is not installed. Then install the R package(s) 'glmnet': in R, "
                           "install.packages(c('glmnet'))."}[which]
    monkeypatch.setattr(rbridge, "why_r_unavailable", lambda packages=None: missing)
    text = rcompare.why_r_unavailable()
    assert text.count(rbridge.INSTALL_RPY2) == 1 and text.count(rbridge.INSTALL_R) == 1
    assert text.count("install.packages") == 1
    assert text.startswith("R not available: rpy2 is not installed." if which == "rpy2"
                           else "R package 'glmnet' is not installed.")
