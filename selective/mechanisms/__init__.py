"""Noise samplers and differential-privacy primitives.

Exact samplers (no floating point in the law; Canonne, Kamath, Steinke 2020) back every
mechanism that issues a certificate; :mod:`selective.mechanisms.continuous` holds the fast
floating-point noise for simulations only (no certificate).

Randomness and secrecy of the noise
-----------------------------------
Every mechanism takes ``rng``: a :class:`numpy.random.Generator`, an integer seed, or None.
The certificates assume the noise is unknown to whoever sees the release.

* A **seeded** generator (``rng=42``, ``default_rng(42)``, or any generator whose seed or state
  is stored, logged, shared or guessable) makes the noise reproducible by anyone who knows the
  seed: they can recompute the noise and subtract it, and the release is then not private at
  all. Seeds are for tests, simulations and reproducible examples.
* For a release that must stay private, pass ``rng=None`` (the default): a fresh generator is
  seeded from operating-system entropy and is not stored.
* numpy's default bit generator, PCG64, is a fast statistical generator, **not** a
  cryptographically secure one: its state can in principle be reconstructed from enough of its
  output. The samplers only consume uniform integers and bytes through the Generator API
  (``integers``, ``bytes``), so they work with every numpy bit generator (MT19937, PCG64,
  PCG64DXSM, Philox, SFC64) with exactly the same law; none of these is a CSPRNG either.
  Where an adversary could observe other output of the same generator, use a generator that
  draws only for the release (the default ``rng=None`` does).
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
    "oneshot_laplace_topk_scale", "permute_and_flip", "report_noisy_max", "report_noisy_max_certificate",
    "report_noisy_topk", "report_noisy_topk_certificate", "simulation_exponential", "simulation_gaussian",
    "simulation_gumbel", "simulation_laplace", "sparse_accuracy", "sparse_noise_scales", "sparsevalidate_ell",
    "sparsevalidate_n_outcomes", "svt_lyu_su_li_alg1_scales", "thresholdout_parameters", "thresholdout_privacy",
]
