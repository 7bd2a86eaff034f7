"""The rpy2 bridge to R selectiveInference: live comparison when R is there, clear error if not."""

from __future__ import annotations

import numpy as np
import pytest

from selective.interop.rcompare import RUnavailableError, compare_with_r, why_r_unavailable

REASON = why_r_unavailable()


@pytest.mark.skipif(REASON is not None, reason=f"R selectiveInference unavailable: {REASON}")
@pytest.mark.needs_r
def test_compare_with_r_fixed_lasso_against_r():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 8))
    y = X[:, 0] * 2 + rng.standard_normal(50)
    frame = compare_with_r("fixedLassoInf", X, y, lam=20.0, sigma=1.0)
    assert (frame["estimate_absdiff"] <= 1e-8 * frame["estimate_r"].abs().max()).all()
    assert np.allclose(frame["pvalue_python"], frame["pvalue_r"], rtol=1e-5)


@pytest.mark.skipif(REASON is None, reason="R selectiveInference is installed")
def test_compare_with_r_explains_how_to_install():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    with pytest.raises(RUnavailableError, match="install.packages"):
        compare_with_r("fsInf", X, X[:, 0] + rng.standard_normal(20), sigma=1.0)


def test_compare_with_r_iv():
    with pytest.raises(ValueError, match="`function` must be one of 'fixedLassoInf'"):
        compare_with_r("lm", np.zeros((3, 2)), np.zeros(3))
