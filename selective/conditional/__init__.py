"""Exact post-selection (polyhedral) inference: lasso at fixed lambda, forward stepwise, least
angle regression, many means and grouped forward stepwise.

Implemented from the papers (Lee, Sun, Sun & Taylor 2016; Tibshirani, Taylor, Lockhart &
Tibshirani 2016; Reid, Taylor & Tibshirani 2017; Loftus & Taylor 2015) in numpy/scipy and
checked against R selectiveInference 1.2.5 on the reference cases.
"""

from .lasso import KKTError, LassoFit, fixed_lasso_inference, solve_lasso
from .polyhedral import (TruncatedNormalResult, TruncationLimits, polyhedral_test,
                         truncated_normal_interval, truncated_normal_pivot,
                         truncated_normal_pvalue, truncation_limits)
from .results import GroupInferenceResult, ManyMeansResult, SelectiveInferenceResult

__all__ = [
    "KKTError", "LassoFit", "fixed_lasso_inference", "solve_lasso",
    "TruncatedNormalResult", "TruncationLimits", "polyhedral_test",
    "truncated_normal_interval", "truncated_normal_pivot", "truncated_normal_pvalue",
    "truncation_limits",
    "GroupInferenceResult", "ManyMeansResult", "SelectiveInferenceResult",
]

from .stepwise import (StepwisePath, forward_stepwise, fs_inference, lar_inference,
                       least_angle_regression)

__all__ += ["StepwisePath", "forward_stepwise", "fs_inference", "lar_inference",
            "least_angle_regression"]

from .many_means import many_means

__all__ += ["many_means"]
