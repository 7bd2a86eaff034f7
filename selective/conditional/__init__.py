"""Exact post-selection (polyhedral) inference: lasso at fixed lambda, forward stepwise, least
angle regression, many means and grouped forward stepwise.

Implemented from the papers (Lee, Sun, Sun & Taylor 2016; Tibshirani, Taylor, Lockhart &
Tibshirani 2016; Reid, Taylor & Tibshirani 2017; Loftus & Taylor 2015) in numpy/scipy and
checked against R selectiveInference 1.2.5 on the reference cases.

The Gaussian p-values are exact when the noise level ``sigma`` is given. Without it they are
valid but conservative when the full model leaves residual degrees of freedom (supremum over a
confidence interval for sigma, plus delta), and approximate (a plug-in, with a warning)
otherwise; each result's ``inference`` says which (THEORY.md 3.7).

After screening by t-tests with sigma unknown (THEORY.md 3.14), :func:`screening_inference`
gives the exact truncated F / t tests of the kept columns, on all rows or carved.

Carving (THEORY.md 3.13): :func:`randomized_lasso_inference` and
:func:`randomized_stepwise_inference` select on a randomized response and test on all of it;
the selectors :class:`RandomizedLassoSupport` and :class:`RandomizedForwardStepwise` make the
same selections inside an :class:`~selective.Analysis`, whose report then has the exact
conditional column (``Analysis.test(..., conditional_on=selection)``).
"""

from .carving_selectors import RandomizedForwardStepwise, RandomizedLassoSupport
from .groupfs import GroupStepwisePath, group_forward_stepwise, groupfs_inference
from .lasso import KKTError, LassoFit, fixed_lasso_inference, solve_lasso
from .many_means import many_means
from .polyhedral import (
    TruncatedNormalResult,
    TruncationLimits,
    polyhedral_test,
    truncated_normal_interval,
    truncated_normal_pivot,
    truncated_normal_pvalue,
    truncation_limits,
)
from .randomized import (
    IntervalEvent,
    NoisyTopKEvent,
    RandomizedInferenceResult,
    ReleaseEvent,
    SparseVectorEvent,
    ThresholdEvent,
    randomized_inference,
)
from .randomized_response import draw_randomization, randomized_lasso_inference, randomized_stepwise_inference
from .randomized_target import randomized_target_inference
from .results import GroupInferenceResult, ManyMeansResult, SelectiveInferenceResult
from .screening import ScreeningResult, TTestScreen, screening_inference
from .sigma_estimate import SigmaEstimate, estimate_sigma
from .stepwise import StepwisePath, forward_stepwise, least_angle_regression
from .stepwise_inference import fs_inference, lar_inference
from .winners import WinnersResult, winners_inference

__all__ = [
    # polyhedral lemma and truncated-normal pivot (Lee et al. 2016)
    "TruncationLimits", "TruncatedNormalResult", "truncation_limits", "truncated_normal_pivot",
    "truncated_normal_pvalue", "truncated_normal_interval", "polyhedral_test",
    # lasso at fixed lambda
    "KKTError", "LassoFit", "solve_lasso", "fixed_lasso_inference",
    # forward stepwise and LAR (Tibshirani et al. 2016)
    "StepwisePath", "forward_stepwise", "least_angle_regression", "fs_inference",
    "lar_inference",
    # many means (Reid et al. 2017), grouped FS (Loftus & Taylor 2015)
    "many_means", "GroupStepwisePath", "group_forward_stepwise", "groupfs_inference",
    # results
    "SelectiveInferenceResult", "ManyMeansResult", "GroupInferenceResult",
    # noise level by cross-validated lasso (R's estimateSigma)
    "estimate_sigma", "SigmaEstimate",
    # after a randomized (DP) selection (Tian and Taylor 2018)
    "randomized_inference", "RandomizedInferenceResult", "NoisyTopKEvent", "ThresholdEvent", "SparseVectorEvent",
    "ReleaseEvent", "IntervalEvent", "randomized_target_inference",
    # after a lasso / forward stepwise selection on a randomized response (carving)
    "randomized_lasso_inference", "randomized_stepwise_inference", "draw_randomization",
    "RandomizedLassoSupport", "RandomizedForwardStepwise",
    # after screening by t-tests, sigma unknown (Freedman's two passes; carving with screen_rows)
    "screening_inference", "ScreeningResult", "TTestScreen",
    # inference on winners (Andrews, Kitagawa and McCloskey 2024)
    "winners_inference", "WinnersResult",
    # R bridge
]


def __getattr__(name: str):
    # the R comparison moved to selective.interop.rcompare in 0.2 (deprecated aliases)
    from .._deprecated import moved_attribute

    return moved_attribute(__name__, name)
