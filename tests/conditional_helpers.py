"""Shared pieces of the tests of the report's conditional column: two-arm frames of
equicorrelated normal outcomes, and the null check every conditional route must pass."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from tests.stats_helpers import assert_rate_at_most


def two_arm_frame(rng, cols, *, n, rho, effect=0.0, levels=("a", "b")):
    """Equicorrelated (``rho``) normal outcomes ``cols`` in two arms of n rows (column ``arm``);
    ``effect`` shifts the first outcome in the first arm."""
    z = rng.standard_normal((2 * n, 1))
    x = math.sqrt(rho) * z + math.sqrt(1 - rho) * rng.standard_normal((2 * n, len(cols)))
    x[:n, 0] += effect
    frame = pd.DataFrame(x, columns=list(cols))
    frame["arm"] = np.repeat(list(levels), n)
    return frame


def assert_null_column_holds(frames: Iterable[pd.DataFrame], *, naive_above: float, levels=(0.05, 0.01),
                             max_withheld: float = 0.5) -> None:
    """Report frames of null replications (the first row tested): the naive p-value rejects at
    0.05 more often than ``naive_above`` (the selection matters), the conditional column is shown
    in more than 1 - ``max_withheld`` of them, and, counting a withheld cell as no rejection, it
    holds each level (one-sided exact binomial: a correct implementation fails with probability
    below 1e-6 per level)."""
    pc, naive = [], []
    for f in frames:
        pc.append(f.pvalue_conditional.iloc[0])
        naive.append(f.pvalue_naive.iloc[0])
    pc = np.array(pc)
    assert np.mean(np.array(naive) <= 0.05) > naive_above
    assert np.mean(np.isnan(pc)) < max_withheld
    for level in levels:
        assert_rate_at_most(int(np.sum(pc <= level)), len(pc), level)


def assert_refused_without_a_row(frame: pd.DataFrame, screen, spec, error, match: str, *, winner=("m0",)) -> None:
    """A screen on ``frame`` (analysis seed 2) picks ``winner``; conditioning ``spec`` on it is
    refused with ``error`` matching ``match``, and the refused test leaves no row in the report."""
    import warnings

    import pytest

    from selective import Analysis

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=2)
        sel = a.select(screen)
    assert sel.value == winner
    with pytest.raises(error, match=match):
        a.test(spec, conditional_on=sel)
    with pytest.raises(ValueError, match="no test has been run"):
        a.report()


def run_conditioned(frame: pd.DataFrame, seed, screen, spec_of):
    """One analysis (seed ``seed``): ``screen``, then ``spec_of(c)`` conditioned on it for every
    winner c; returns the selection and the report's frame."""
    import warnings

    from selective import Analysis

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = Analysis(frame, rng=seed)
        sel = a.select(screen)
        for c in sel.value:
            a.test(spec_of(c), conditional_on=sel)
        return sel, a.report().frame
