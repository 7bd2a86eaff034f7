"""A reduced run of the scenario library, and Freedman's reference values (THEORY.md 6.3).

Every valid column must reject at most alpha (one-sided binomial, false-failure rate 1e-6 per
assertion). Where selection biases the naive column it must reject at least ``alpha + margin``
(one-sided binomial against that rate, false-failure rate 1e-6 when the true rate is at least
that high). Each margin is set below the naive rate seen in a 1,000-replication pilot (given in
the table) and high enough that a naive column that were valid (rate 0.05) would fail with
probability above 0.999 at these sizes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from stats_helpers import assert_rate_at_least, assert_rate_at_most

from selective.validation.harness import simulate
from selective.validation.outcomes import replication_rng, replication_seed
from selective.validation.scenarios import SCENARIOS, FreedmanScreening, freedman_paradox, get_scenario

ALPHA = 0.05
# scenario: (replications, naive rate at least; pilot naive rate)
REDUCED = {
    "preregistered": (4000, None),           # naive exact
    "topk_noise": (4000, 0.80),              # pilot 0.92 = 1 - 0.95^50
    "sparse_vector_threshold": (600, 0.12),   # pilot 0.19 (each null replication conditions on ~20 answers)
    "holdout_reuse": (4000, 0.09),           # pilot 0.13
    "freedman": (2000, 0.85),                # pilot 0.94 (THEORY 6.3: 0.949)
    "lasso_support": (600, 0.35),            # pilot 0.56
    "forward_stepwise": (600, 0.50),         # pilot 0.77
    "dp_then_dl": (1500, 0.25),              # pilot 0.39
    "topk_signal": (3000, None),             # mixed truth: the selected null is rarely tested
    "adaptive_family": (4000, 0.95),         # pilot 1.00
    "repeated_measures": (400, 0.45),        # pilot 0.57
    "noisy_topk_thm20": (1500, None),        # selection barely informative at epsilon sqrt(n) = 1
}
# scenarios whose reduced runs live in their own test module (with checks of their own)
ELSEWHERE = {name: "test_scenarios_trusted.py" for name in (
    "trusted_two_proportion_rare", "trusted_welch_skewed", "trusted_studentised_mean_skewed",
    "trusted_spearman_small_n", "trusted_poisson_exposure", "unknown_sigma_stepwise", "noisy_topk_thm20_eps0.3",
    "noisy_topk_thm20_eps2", "trusted_t_mean_skewed", "trusted_student_skewed")}
_SHARP = ("sharp_topk_winners_fission", "sharp_topk_signal", "sharp_noisy_topk_randomized", "sharp_noisy_topk_signal",
          "sharp_signed_noisy_topk", "sharp_signed_noisy_topk_signal")
ELSEWHERE.update({name: "test_scenarios_sharp.py" for name in _SHARP})
ELSEWHERE.update({name: "test_scenarios_thinning.py" for name in (
    "thinning_binomial_counts", "thinning_binomial_counts_signal")})
ELSEWHERE.update({name: "test_signal_regression.py" for name in (
    "preregistered_signal", "lasso_support_signal", "forward_stepwise_signal", "unknown_sigma_stepwise_signal")})
ELSEWHERE.update({name: "test_signal_dp_adaptive.py" for name in (
    "sparse_vector_threshold_signal", "holdout_reuse_signal", "freedman_signal", "dp_then_dl_signal",
    "adaptive_family_signal", "repeated_measures_signal", "noisy_topk_thm20_signal")})
ELSEWHERE.update({name: "test_signal_trusted.py" for name in (
    "trusted_welch_skewed_signal", "trusted_two_proportion_rare_signal", "trusted_poisson_exposure_signal",
    "trusted_spearman_small_n_signal", "trusted_student_skewed_signal")})


def test_the_library_has_the_promised_scenarios():
    assert set(REDUCED) | set(ELSEWHERE) == set(SCENARIOS) and not set(REDUCED) & set(ELSEWHERE)
    assert len(SCENARIOS) >= 8
    for sc in SCENARIOS.values():
        assert sc.truth and sc.description and sc.n_candidates >= 1
        assert sc.__doc__ and "Truth" in sc.__doc__
        assert "pvalue_split" in sc.columns
        sc.ledger()  # the certificates are accepted by the ledger
    for name in ("lasso_support", "forward_stepwise"):
        assert "pvalue_conditional" in SCENARIOS[name].columns and "pvalue_carving" in SCENARIOS[name].columns


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REDUCED))
def test_scenario_valid_columns_hold_alpha_and_naive_does_not(name):
    n_reps, naive_at_least = REDUCED[name]
    sc = get_scenario(name)
    res = simulate(sc, n_reps=n_reps, seed=replication_seed(20_261_130, list(SCENARIOS).index(name)),
                   progress=False)
    for col in res.columns:
        if col in sc.withheld_columns:
            continue
        row = res.rate(col)
        assert row.n_trials == n_reps and row.ci_method == "clopper-pearson"
        if col != "pvalue_naive" and col not in sc.invalid_columns:
            assert_rate_at_most(row.n_events, row.n_trials, ALPHA)
    if naive_at_least is not None:
        row = res.rate("pvalue_naive")
        assert_rate_at_least(row.n_events, row.n_trials, naive_at_least)
    if name == "topk_signal":  # the valid columns still find the real effects
        for col in ("pvalue_best", "pvalue_split"):
            pw = res.rate(col, "power")
            assert_rate_at_least(pw.n_events, pw.n_trials, 0.4)  # pilot: 0.85 and 0.62


def test_scenario_iv():
    with pytest.raises(ValueError, match="`n_features`"):
        SCENARIOS["topk_noise"].__class__(n_features=0)
    with pytest.raises(ValueError, match="`effects`"):
        SCENARIOS["topk_noise"].__class__(n_features=2, effects=(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="`split_fraction`"):
        FreedmanScreening(split_fraction=0.3)
    with pytest.raises(ValueError, match="`split_fraction`"):
        FreedmanScreening(split_fraction=1.0)


# THEORY.md 6.3: our own simulation, no intercept, 20,000 repetitions, seed 20240601;
# (value, standard error or None, exact expectation or None, printed rounding half-width)
FREEDMAN_REFERENCE = {
    "kept": (12.51, 0.03, 12.5, 0.005),
    "r2_first": (0.5005, None, 0.5, 0.00005),
    "significant_05_first": (2.52, None, 2.5, 0.005),
    "prob_f_below_05_first": (0.052, None, 0.05, 0.0005),
    "r2": (0.310, 0.001, None, 0.0005),
    "f": (3.32, 0.007, None, 0.005),
    "median_pvalue_f": (8.0e-4, None, None, 0.05e-4),
    "prob_f_below_05": (0.949, math.sqrt(0.949 * 0.051 / 20_000), None, 0.0005),
    "significant_05": (5.62, 0.02, None, 0.005),
    "significant_25": (10.90, 0.03, None, 0.005),
}
Z_TOL = 5.3  # two-sided normal tail 1.2e-7 per statistic; 10 statistics: false-failure rate about 1e-6


@pytest.mark.slow
def test_freedman_paradox_against_theory():
    """4,000 repetitions against THEORY 6.3's reference (20,000 repetitions). Each statistic
    must be within Z_TOL combined standard errors (ours, the reference's, and the printed
    rounding) of the reference, or of its exact expectation where THEORY gives one. The
    reference's unstated standard errors are taken as ours scaled to 20,000 repetitions.
    A second-pass R^2 off by 0.01 (ten reference SEs) fails."""
    n_reps = 4000
    out = freedman_paradox(n_reps, seed=20_240_601)
    scale = math.sqrt(n_reps / 20_000)
    for key, (ref, ref_se, exact, rounding) in FREEDMAN_REFERENCE.items():
        ours, se = out.values[key], out.std_errors[key]
        target = exact if exact is not None else ref
        rse = 0.0 if exact is not None else (ref_se if ref_se is not None else se * scale)
        tol = Z_TOL * math.sqrt(se**2 + rse**2) + (0.0 if exact is not None else rounding)
        assert abs(ours - target) <= tol, f"{key}: {ours:.5g} vs {target:.5g} (tolerance {tol:.2g})"
        if exact is not None:  # the reference itself agrees with the exact value
            assert abs(ref - exact) <= Z_TOL * se * scale + rounding, key


def test_freedman_scenario_naive_matches_the_summary():
    """The scenario's naive p-value is the second-pass F p-value of freedman_paradox."""
    sc = FreedmanScreening()
    rngs = [replication_rng(11, i) for i in range(40)]
    p = sc.replicate_many(rngs).pvalues["pvalue_naive"][:, 0]
    out = freedman_paradox(40, seed=11)
    assert np.mean(p < 0.05) == pytest.approx(out.values["prob_f_below_05"])
    assert np.median(p) == pytest.approx(out.values["median_pvalue_f"])
