"""Noise samplers and differential-privacy primitives.

Exact samplers (no floating point in the law; Canonne, Kamath, Steinke 2020) back every
mechanism that issues a certificate; :mod:`selective.mechanisms.continuous` holds the fast
floating-point noise for simulations only (no certificate).
"""

from .continuous import simulation_exponential, simulation_gaussian, simulation_gumbel, simulation_laplace
from .exponential import (
    OneshotLaplaceTopK,
    UtilityGap,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    exponential_mechanism_utility_gap,
    oneshot_laplace_topk_scale,
    permute_and_flip,
    report_noisy_max,
    report_noisy_max_certificate,
    report_noisy_topk,
    report_noisy_topk_certificate,
)
from .gaussian import (
    DiscreteGaussianPrivacy,
    GaussianRelease,
    discrete_gaussian_delta,
    gaussian_delta_analytic,
    gaussian_mechanism,
    gaussian_rho,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from .laplace import LaplaceRelease, LaplaceScale, laplace_mechanism, laplace_scale
from .reuse import (
    SparseValidateEll,
    ThresholdoutParameters,
    ThresholdoutPrivacy,
    sparsevalidate_ell,
    sparsevalidate_n_outcomes,
    thresholdout_parameters,
    thresholdout_privacy,
)
from .samplers import as_fraction, bernoulli_exp, discrete_gaussian, discrete_laplace, fraction_at_least
from .sparse_vector import (
    AboveThreshold,
    AboveThresholdAccuracy,
    LyuSuLiScales,
    NumericSparse,
    Sparse,
    SparseNoiseScales,
    above_threshold_accuracy,
    sparse_accuracy,
    sparse_noise_scales,
    svt_lyu_su_li_alg1_scales,
)

__all__ = [
    "AboveThreshold", "AboveThresholdAccuracy", "DiscreteGaussianPrivacy", "GaussianRelease",
    "LaplaceRelease", "LaplaceScale", "LyuSuLiScales", "NumericSparse", "OneshotLaplaceTopK", "Sparse",
    "SparseNoiseScales", "SparseValidateEll", "ThresholdoutParameters", "ThresholdoutPrivacy", "UtilityGap",
    "above_threshold_accuracy", "as_fraction", "bernoulli_exp", "discrete_gaussian", "discrete_gaussian_delta",
    "discrete_laplace", "exponential_mechanism", "exponential_mechanism_probabilities",
    "exponential_mechanism_utility_gap", "fraction_at_least", "gaussian_delta_analytic", "gaussian_mechanism",
    "gaussian_rho", "gaussian_sigma_analytic", "gaussian_sigma_classic", "laplace_mechanism", "laplace_scale",
    "oneshot_laplace_topk_scale", "permute_and_flip", "report_noisy_max", "report_noisy_max_certificate", "report_noisy_topk",
    "report_noisy_topk_certificate", "simulation_exponential", "simulation_gaussian", "simulation_gumbel",
    "simulation_laplace", "sparse_accuracy", "sparse_noise_scales", "sparsevalidate_ell",
    "sparsevalidate_n_outcomes", "svt_lyu_su_li_alg1_scales", "thresholdout_parameters", "thresholdout_privacy",
]
