"""The scenario library: every scenario by name, in a fixed order."""

from __future__ import annotations

from .adaptive import AdaptiveFamily, NoisyTopKTheorem20, RepeatedMeasures
from .base import Scenario
from .dp import DPThenDescriptionLength, SparseVectorThreshold
from .freedman import FreedmanScreening
from .holdout import HoldoutReuse
from .regression import ForwardStepwisePath, LassoFixedLambda
from .selection import Preregistered, TopKNoise
from .sharp import SharpTopK
from .sharp_dp import SharpNoisyTopK, SharpSignedNoisyTopK
from .sigma import UnknownSigmaStepwise
from .thinning import BinomialCountsThinning
from .trusted import PoissonExposure, SpearmanSmallN, StudentisedMeanSkewed, TwoProportionRare, WelchSkewed
from .trusted_model import StudentTMeanSkewed, StudentTwoSampleSkewed

__all__ = ["SCENARIOS", "scenario_names", "get_scenario"]

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Preregistered(),
        TopKNoise(),
        SparseVectorThreshold(),
        HoldoutReuse(),
        FreedmanScreening(),
        LassoFixedLambda(),
        ForwardStepwisePath(),
        DPThenDescriptionLength(),
        TopKNoise(name="topk_signal", effects=(0.45, 0.45, 0.45)),
        AdaptiveFamily(),
        RepeatedMeasures(),
        NoisyTopKTheorem20(),
        TwoProportionRare(),
        WelchSkewed(),
        StudentisedMeanSkewed(),
        SpearmanSmallN(),
        PoissonExposure(),
        UnknownSigmaStepwise(),
        NoisyTopKTheorem20(name="noisy_topk_thm20_eps0.3", eps_sqrt_n=0.3),
        NoisyTopKTheorem20(name="noisy_topk_thm20_eps2", eps_sqrt_n=2.0),
        StudentTMeanSkewed(),
        StudentTwoSampleSkewed(),
        SharpTopK(),
        SharpTopK(name="sharp_topk_signal", n_per_arm=1000, effects=(0.16, 0.16, 0.16)),
        SharpNoisyTopK(n_per_arm=1000, epsilon=0.2),
        SharpNoisyTopK(name="sharp_noisy_topk_signal", n_per_arm=1000, epsilon=0.2, effects=(0.16, 0.16, 0.16)),
        # signal variants: a few real effects among the nulls, sized so that the test of a real effect
        # without selection (the oracle) has power about 0.9
        Preregistered(name="preregistered_signal", effect=0.65),
        SparseVectorThreshold(name="sparse_vector_threshold_signal", effects=(0.45, 0.45, 0.45)),
        HoldoutReuse(name="holdout_reuse_signal", effects=(0.33, 0.33, 0.33)),
        FreedmanScreening(name="freedman_signal", coefficients=(0.33, 0.33, 0.33)),
        LassoFixedLambda(name="lasso_support_signal", coefficients=(0.33, 0.33, 0.33)),
        ForwardStepwisePath(name="forward_stepwise_signal", coefficients=(0.33, 0.33, 0.33)),
        DPThenDescriptionLength(name="dp_then_dl_signal", effects=(0.45, 0.45, 0.45)),
        AdaptiveFamily(name="adaptive_family_signal", effects=(3.24, 3.24, 3.24)),
        RepeatedMeasures(name="repeated_measures_signal", effects=(0.77, 0.77, 0.77)),
        NoisyTopKTheorem20(name="noisy_topk_thm20_signal", effects=(0.16, 0.16, 0.16, 0.16, 0.16)),
        UnknownSigmaStepwise(name="unknown_sigma_stepwise_signal", n_obs=24, coefficients=(1.0, 1.0)),
        WelchSkewed(name="trusted_welch_skewed_signal", effects=(2.3, 2.3, 2.3)),
        TwoProportionRare(name="trusted_two_proportion_rare_signal", effects=(0.07, 0.07, 0.07)),
        PoissonExposure(name="trusted_poisson_exposure_signal", effects=(1.6, 1.6, 1.6)),
        SpearmanSmallN(name="trusted_spearman_small_n_signal", effects=(0.85, 0.85, 0.85)),
        StudentTwoSampleSkewed(name="trusted_student_skewed_signal", effects=(2.3, 2.3, 2.3)),
        # screens by signed clipped means, arms of unequal size (the plan score signed_mean)
        SharpSignedNoisyTopK(n_per_arm=1000, epsilon=0.2),
        SharpSignedNoisyTopK(name="sharp_signed_noisy_topk_signal", n_per_arm=1000, epsilon=0.2,
                             effects=(0.16, 0.16, 0.16)),
        # counts of successes: the ledger's columns beside binomial thinning (docs/THEORY.md 3.10)
        BinomialCountsThinning(),
        BinomialCountsThinning(name="thinning_binomial_counts_signal", effects=(0.075, 0.075, 0.075)),
    )
}
"""The scenario library, by name, in a fixed order: :func:`selective.validation.validate.validate`
seeds each scenario by its position, so new scenarios go at the end."""


def scenario_names() -> tuple[str, ...]:
    """The names of the library's scenarios, in order."""
    return tuple(SCENARIOS)


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``; an unknown name raises ``ValueError`` listing the known ones."""
    if isinstance(name, Scenario):
        return name
    if not isinstance(name, str) or name not in SCENARIOS:
        raise ValueError(f"`scenario` must be one of {', '.join(SCENARIOS)}; got {name!r}.")
    return SCENARIOS[name]
