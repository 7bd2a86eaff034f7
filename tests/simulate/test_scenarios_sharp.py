"""The sharp-route scenarios: inference on winners and data fission, through the report."""

from __future__ import annotations

import numpy as np
import pytest

from selective.validation.scenarios import SCENARIOS, SharpNoisyTopK, SharpTopK
from selective.validation.validate import validate, verdicts


def test_every_valid_column_holds_under_the_null():
    # 150 replications; a correct column fails the one-sided exact binomial check at 1e-6 with
    # probability at most 1e-6 per level (2 levels, 8 valid columns); the naive column's excess
    # (about 0.45 at 0.05) is far beyond what it can hide
    sc = SCENARIOS["sharp_topk_winners_fission"]
    res = validate([sc], n_reps=150, progress=False, seed=5)[sc.name]
    table = verdicts({sc.name: res}).set_index("column")
    valid = table.drop(index="pvalue_naive")
    assert set(valid.index) >= {"pvalue_winners", "pvalue_fission", "pvalue_oracle", "pvalue_split", "pvalue_best"}
    assert (valid["verdict"] == "holds").all(), valid.to_string()
    assert table.loc["pvalue_naive", "worst_rate"] > 0.25


def test_signal_variant_measures_power_of_every_route():
    sc = SCENARIOS["sharp_topk_signal"]
    assert isinstance(sc, SharpTopK) and sc.effects and sc.n_per_arm == 1000
    rep = sc.analyse(np.random.default_rng(3))
    assert set(rep) == set(sc.columns)
    assert rep["pvalue_oracle"][1] == 0  # the oracle tests the first real effect
    assert rep["pvalue_naive"][1] < len(sc.effects)  # the screen finds a real effect
    assert all(0.0 <= p <= 1.0 for c, (p, _) in rep.items() if c != "pvalue_winners" and p == p)


def test_release_table_has_a_power_section_for_scenarios_with_effects():
    from selective.validation.validate import release_table

    res = validate(["topk_noise", "topk_signal"], n_reps=40, progress=False, seed=3)
    text = release_table(res, command="selective validate", seed=3)
    section = text[text.index("## Power at alpha = 0.05"):text.index("## Discovery rate")]
    rows = [line for line in section.splitlines() if line.startswith("| topk")]
    assert [r.split("|")[1].strip() for r in rows] == ["topk_signal"]  # the null scenario has no power row
    power = res["topk_signal"].rate("pvalue_best", measure="power").rate
    assert f"{power:.3f}" in rows[0] and "(not valid)" in rows[0]  # the naive column is marked


def test_noisy_screen_scenario_every_valid_column_holds_under_the_null():
    # 200 replications of the DP screen (epsilon 0.2, Gumbel scale about 5 sd of a score); a
    # correct column fails the one-sided exact binomial check at 1e-6 with probability at most
    # 1e-6 per level.
    sc = SCENARIOS["sharp_noisy_topk_randomized"]
    assert isinstance(sc, SharpNoisyTopK) and not sc.effects
    _noisy_screen_holds(sc)


def _noisy_screen_holds(sc):
    """200 null replications: every valid column holds; the randomized column is withheld at
    most rarely (trusted normal tails: at most 2 of 10 replications)."""
    res = validate([sc], n_reps=200, progress=False, seed=7)[sc.name]
    table = verdicts({sc.name: res}).set_index("column")
    valid = table.drop(index="pvalue_naive")
    assert set(valid.index) >= {"pvalue_randomized", "pvalue_oracle", "pvalue_split", "pvalue_best"}
    assert (valid["verdict"] == "holds").all(), valid.to_string()
    withheld = [np.isnan(sc.analyse(np.random.default_rng(i))["pvalue_randomized"][0]) for i in range(10)]
    assert sum(withheld) <= 2


def test_noisy_screen_signal_variant_tests_a_real_effect():
    sc = SCENARIOS["sharp_noisy_topk_signal"]
    assert isinstance(sc, SharpNoisyTopK) and sc.effects and sc.n_per_arm == 1000
    rep = sc.analyse(np.random.default_rng(3))
    assert set(rep) == set(sc.columns)
    assert rep["pvalue_oracle"][1] == 0
    assert all(0.0 <= p <= 1.0 for c, (p, _) in rep.items() if p == p)
    assert sc.certificates()[0].epsilon == 0.2 and sc.sensitivity == 2 * 3.0 / 1000


def test_signed_screen_scenario_every_valid_column_holds_under_the_null():
    # 200 replications of the DP screen by signed clipped means (arms of 500 and 1,500 rows,
    # outcome means from -0.5 to 0.5, so that the signed scores' nuisance means drive much of
    # the choice); a correct column fails the one-sided exact binomial check at 1e-6 with
    # probability at most 1e-6 per level. The conditional column is shown in most replications.
    from selective.validation.scenarios import SharpSignedNoisyTopK

    sc = SCENARIOS["sharp_signed_noisy_topk"]
    assert isinstance(sc, SharpSignedNoisyTopK) and not sc.effects and sc.treated_fraction == 0.25
    _noisy_screen_holds(sc)


def test_signed_screen_scenario_draws_what_it_states():
    sc = SCENARIOS["sharp_signed_noisy_topk_signal"]
    frame = sc.draw(np.random.default_rng(1))
    assert (frame["arm"] == "a").sum() == 500 and (frame["arm"] == "b").sum() == 1500
    assert sc.sensitivity == 2 * 3.0 / 2000 and sc.certificates()[0].epsilon == 0.2
    means = frame.groupby("arm")[list(sc.names)].mean()
    # outcome means spread over +-0.5 (clipping at 3 barely moves them); the real effects in arm "a"
    assert means.loc["b", "y29"] - means.loc["b", "y00"] == pytest.approx(1.0, abs=0.15)
    assert (means.loc["a", ["y00", "y01", "y02"]] - means.loc["b", ["y00", "y01", "y02"]]).min() > 0.05
    rep = sc.analyse(np.random.default_rng(3))
    assert set(rep) == set(sc.columns) and rep["pvalue_oracle"][1] == 0
    with pytest.raises(ValueError, match="`treated_fraction` 0.001 leaves an arm of 2 of the 2000 rows"):
        type(sc)(n_per_arm=1000, treated_fraction=0.001)
