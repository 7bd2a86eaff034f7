"""Conditional results under the common names: estimate, conf_int, summary."""

from __future__ import annotations

import numpy as np
import pytest

from selective.conditional import group_forward_stepwise, groupfs_inference, many_means


def test_many_means_names_and_summary():
    rng = np.random.default_rng(2)
    res = many_means(rng.normal(size=30) + np.r_[np.full(3, 4.0), np.zeros(27)], k=3, alpha=0.1)
    assert res.estimate is res.mu_hat
    np.testing.assert_array_equal(res.conf_int(), res.ci)
    np.testing.assert_array_equal(res.conf_int(alpha=0.1), res.ci)
    with pytest.raises(ValueError, match=r"`alpha` must be the miscoverage the intervals were computed at \(0.1\)"):
        res.conf_int(alpha=0.05)
    text = res.summary()
    assert "3 mean(s) selected" in text and "90% selective intervals" in text
    assert f"{res.pvalue[0]:.4g}" in text


def test_group_inference_summary():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 6))
    y = X[:, 0] * 1.5 + rng.normal(size=80)
    res = groupfs_inference(group_forward_stepwise(X, y, [1, 1, 2, 2, 3, 3], maxsteps=2, sigma=1.0), sigma=1.0)
    text = res.summary()
    assert "2 group(s)" in text and "truncated chi" in text
    assert f"{res.pvalue[0]:.4g}" in text
