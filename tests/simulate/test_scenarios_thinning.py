"""The binomial-thinning scenarios: counts of successes, the report's columns beside thinning."""

from __future__ import annotations

import numpy as np
import pytest

from selective.validation.scenarios import SCENARIOS, BinomialCountsThinning
from selective.validation.validate import validate, verdicts


@pytest.mark.slow
def test_every_valid_column_holds_under_the_null():
    # 120 replications (about 20 s); a correct column fails the one-sided exact binomial check at
    # 1e-6 with probability at most 1e-6 per level and column. The naive column's excess (top-1 of
    # 30 by correlation: about 0.75 at 0.05) is far beyond what it can hide.
    sc = SCENARIOS["thinning_binomial_counts"]
    res = validate([sc], n_reps=120, progress=False, seed=11)[sc.name]
    table = verdicts({sc.name: res}).set_index("column")
    valid = table.drop(index=["pvalue_naive", "pvalue_bonferroni_asymptotic"])
    assert set(valid.index) >= {"pvalue_fission", "pvalue_split", "pvalue_best", "pvalue_bonferroni"}
    assert (valid["verdict"] == "holds").all(), valid.to_string()
    assert table.loc["pvalue_naive", "worst_rate"] > 0.3
    fission = res.frame[(res.frame.column == "pvalue_fission") & (res.frame.measure == "fwer")]
    assert (fission["n_trials"] >= 0.9 * 120).all()  # shown (trusted at 0.05) in nearly every replication


def test_the_draw_and_the_thinned_analysis():
    sc = SCENARIOS["thinning_binomial_counts_signal"]
    assert isinstance(sc, BinomialCountsThinning) and sc.effects == (0.075,) * 3 and sc.n_obs == 1000
    frame = sc.draw(np.random.default_rng(1))
    assert list(frame.columns) == list(sc.names) + ["m", "x"]
    assert frame.m.between(3, 20).all() and (frame[list(sc.names)].le(frame.m, axis=0)).all().all()
    # a strong effect shows in the draw and is what the thinned analysis finds; the nulls do not
    # correlate with x (|r| < 0.15 is 4.7 standard errors at n = 1000: fails with probability < 1e-4)
    strong = BinomialCountsThinning(effects=(0.3,))
    frame = strong.draw(np.random.default_rng(1))
    corr = frame[list(strong.names)].corrwith(frame.x)
    assert corr.iloc[0] > 0.2 and corr.iloc[1:].abs().max() < 0.15
    p, chosen = strong._thinned(frame, np.random.default_rng(2))
    assert chosen == "v000" and p < 1e-6
    out = sc.replicate_many([np.random.default_rng(5), np.random.default_rng(6)])
    assert set(out.pvalues) == set(sc.columns) and out.pvalues["pvalue_fission"].shape == (2, 1)
    with pytest.raises(ValueError, match="`trials` must be a pair of integers 2 <= low <= high; got \\(1, 5\\)"):
        BinomialCountsThinning(trials=(1, 5))
    with pytest.raises(ValueError, match="epsilon"):
        BinomialCountsThinning(epsilon=1.0)
