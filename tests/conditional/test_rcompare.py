"""The rpy2 bridge to R selectiveInference: live comparison when R is there, clear error if not.

The many fresh random cases compared with R at the reference tolerances are in
``test_live_r.py``; here: the frame ``compare_with_r`` returns, its input checks, and the
message that says how to install what is missing.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from selective.interop import rbridge, rcompare
from selective.interop.rcompare import RUnavailableError, compare_with_r, why_r_unavailable

REASON = why_r_unavailable()

HINT_PIECES = ("apt-get install r-base-core", "pip install 'selective[r]'",
               "install.packages(c('selectiveInference', 'glmnet'))", "R CMD INSTALL", "R_LIBS")


@pytest.mark.needs_r
@pytest.mark.skipif(REASON is not None, reason=f"R selectiveInference unavailable: {REASON}")
def test_compare_with_r_fixed_lasso_frame():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 8))
    y = X[:, 0] * 2 + X[:, 3] + rng.standard_normal(50)
    frame = compare_with_r("fixedLassoInf", X, y, lam=20.0, sigma=1.0)
    res = frame.attrs["python"]
    assert list(frame.index) == [int(j) + 1 for j in res.index]   # 1-based, as in R
    assert list(frame.index) == [int(v) for v in np.atleast_1d(frame.attrs["r"]["vars"])]
    np.testing.assert_array_equal(frame["sign_python"], frame["sign_r"])
    for key in ("estimate", "sd", "vlo"):
        np.testing.assert_allclose(frame[f"{key}_python"], frame[f"{key}_r"], rtol=1e-8)
        np.testing.assert_array_equal(frame[f"{key}_absdiff"], np.abs(frame[f"{key}_python"] - frame[f"{key}_r"]))
    # glmnet's solution (refitted at exactly lam / n) has the package's support and signs
    beta_r = np.asarray(frame.attrs["r"]["beta"])
    np.testing.assert_array_equal(np.sign(beta_r), np.sign(res.extra["beta"]))
    moderate = frame["pvalue_python"] > 1e-3
    assert moderate.any()
    np.testing.assert_allclose(frame.loc[moderate, "pvalue_python"], frame.loc[moderate, "pvalue_r"], rtol=1e-6)


@pytest.mark.needs_r
@pytest.mark.skipif(REASON is not None, reason=f"R selectiveInference unavailable: {REASON}")
def test_compare_with_r_groupfs_frame():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 9))
    y = X[:, :3].sum(axis=1) + rng.standard_normal(60)
    index = np.repeat([1, 2, 3], 3)
    frame = compare_with_r("groupfsInf", X, y, index=index, maxsteps=2)
    assert set(frame.index) == set(frame.attrs["python"].groups) and len(frame) == 2
    assert list(frame.columns[:3]) == ["pvalue_python", "pvalue_r", "pvalue_absdiff"]
    np.testing.assert_array_equal(frame["df_python"], frame["df_r"])
    np.testing.assert_allclose(frame["statistic_python"], frame["statistic_r"], rtol=1e-8)


@pytest.mark.skipif(REASON is None, reason="R selectiveInference is installed")
def test_compare_with_r_explains_how_to_install():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    with pytest.raises(RUnavailableError, match="install.packages"):
        compare_with_r("fsInf", X, X[:, 0] + rng.standard_normal(20), sigma=1.0)


def test_message_without_rpy2_covers_every_step(monkeypatch):
    monkeypatch.setattr(rbridge, "_state", {})
    monkeypatch.setitem(sys.modules, "rpy2", None)  # makes `import rpy2` raise ImportError
    reason = why_r_unavailable()
    assert reason.startswith("rpy2 is not installed")
    for piece in HINT_PIECES:
        assert piece in reason, piece
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    with pytest.raises(RUnavailableError, match=r"install\.packages"):
        compare_with_r("fsInf", X, X[:, 0] + rng.standard_normal(20), sigma=1.0)


def test_message_when_r_cannot_start_covers_every_step(monkeypatch):
    monkeypatch.setattr(rbridge, "_state", {"error": "R was not found, so rpy2 cannot start it."})
    reason = why_r_unavailable()
    assert reason.startswith("R was not found")
    for piece in HINT_PIECES:
        assert piece in reason, piece


@pytest.mark.needs_r
@pytest.mark.skipif(rbridge.why_r_unavailable() is not None, reason="needs R and rpy2")
def test_message_for_a_missing_r_package(monkeypatch):
    monkeypatch.setattr(rcompare, "R_PACKAGES", ("glmnet", "surelyNotAnInstalledPackage"))
    reason = why_r_unavailable()
    assert "R package(s) 'surelyNotAnInstalledPackage' not installed" in reason
    for piece in HINT_PIECES[1:]:
        assert piece in reason, piece


def test_compare_with_r_iv():
    with pytest.raises(ValueError, match="`function` must be one of 'fixedLassoInf'"):
        compare_with_r("lm", np.zeros((3, 2)), np.zeros(3))
    X, y = np.eye(4, 3), np.arange(4.0)
    with pytest.raises(ValueError, match="`lam` is required for function='fixedLassoInf'; got None"):
        compare_with_r("fixedLassoInf", X, y)
    with pytest.raises(ValueError, match="`intercept` must be True for family='binomial'; got False"):
        compare_with_r("fixedLassoInf", X, (y > 1).astype(float), lam=1.0, family="binomial", intercept=False)
    with pytest.raises(ValueError, match=r"`index` \(one group label per column\) is required"):
        compare_with_r("groupfsInf", X, y)
