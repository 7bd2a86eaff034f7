"""Datasets shared by the hypotheses tests: ordinary, tiny, skewed and unbalanced, tied, badly scaled.

Every dataset has the columns
y, w (numeric, w paired with y), x1, x2 (numeric predictors), g (two string groups),
h (three string groups), b (0/1), c (counts), t (booleans).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _frame(rng, n, *, y, g_probs=(0.5, 0.5), b_prob=0.4, h_probs=(0.3, 0.3, 0.4)):
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    g = rng.choice(["ctl", "trt"], size=n, p=list(g_probs))
    g[:2], g[2:4] = "ctl", "trt"  # every group has at least 2 rows
    h = rng.choice(["u", "v", "w"], size=n, p=list(h_probs))
    h[4:6], h[6:8], h[8:10] = "u", "v", "w"
    b = (rng.random(n) < b_prob).astype(int)
    b[:2] = [0, 1]
    b[2:4] = [1, 0]
    c = rng.poisson(np.exp(0.5 + 0.3 * x1))
    y_values = y(x1, x2)
    return pd.DataFrame({
        "y": y_values,
        "w": y_values + rng.normal(0.2, 1.0, size=n),
        "x1": x1, "x2": x2, "g": g, "h": h, "b": b, "c": c, "t": b.astype(bool),
    })


def ordinary(seed=1):
    rng = np.random.default_rng(seed)
    return _frame(rng, 60, y=lambda x1, x2: 0.3 + 0.5 * x1 - 0.2 * x2 + rng.normal(size=60))


def tiny(seed=2):
    rng = np.random.default_rng(seed)
    n = 12
    return _frame(rng, n, y=lambda x1, x2: x1 + rng.normal(size=n))


def skewed_unbalanced(seed=3):
    rng = np.random.default_rng(seed)
    n = 200
    return _frame(rng, n, y=lambda x1, x2: np.exp(rng.normal(size=n) + 0.3 * x1), g_probs=(0.15, 0.85),
                  b_prob=0.1, h_probs=(0.1, 0.2, 0.7))


def tied(seed=4):
    rng = np.random.default_rng(seed)
    n = 50
    frame = _frame(rng, n, y=lambda x1, x2: rng.integers(0, 4, size=n).astype(float) + (x1 > 0))
    frame["x1"] = np.round(frame["x1"])  # heavy ties for rank correlation
    return frame


def badly_scaled(seed=5):
    rng = np.random.default_rng(seed)
    n = 80
    frame = _frame(rng, n, y=lambda x1, x2: 1e6 + 1e-3 * (x1 + rng.normal(size=n)))
    frame["x2"] = 1e-4 * frame["x2"]
    return frame


DATASETS = {"ordinary": ordinary, "tiny": tiny, "skewed_unbalanced": skewed_unbalanced, "tied": tied,
            "badly_scaled": badly_scaled}
REGRESSION_DATASETS = ("ordinary", "skewed_unbalanced", "tied", "badly_scaled")


def _named(name: str) -> pd.DataFrame:
    frame = DATASETS[name]()
    frame.attrs["name"] = name
    return frame


@pytest.fixture(params=list(DATASETS))
def dataset(request) -> pd.DataFrame:
    return _named(request.param)


@pytest.fixture(params=REGRESSION_DATASETS)
def regression_dataset(request) -> pd.DataFrame:
    return _named(request.param)
