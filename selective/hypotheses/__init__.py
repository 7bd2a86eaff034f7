"""Confirmatory test specs run through statsmodels (scipy where statsmodels has none).

A spec is a frozen description of one test; ``spec.run(data)`` returns its naive
:class:`TestResult` (statistic, p-value, estimate and interval ignoring any selection), and
``result.ci_at(alpha=gamma)`` rebuilds the interval at a corrected level ``1 - gamma``.
"""

from ._result import IntervalRule, TestResult
from ._spec import TestSpec, confidence_interval
from .correlation import PearsonCorrelationTest, SpearmanCorrelationTest
from .means import OneSampleTTest, OneSampleZTest, PairedTTest, TwoSampleTTest, TwoSampleZTest
from .proportions import ChiSquareIndependenceTest, OneSampleProportionTest, TwoSampleProportionTest
from .regression import CoefficientTest, JointWaldTest

__all__ = [
    "TestResult",
    "IntervalRule",
    "TestSpec",
    "confidence_interval",
    "OneSampleTTest",
    "PairedTTest",
    "TwoSampleTTest",
    "OneSampleZTest",
    "TwoSampleZTest",
    "OneSampleProportionTest",
    "TwoSampleProportionTest",
    "ChiSquareIndependenceTest",
    "PearsonCorrelationTest",
    "SpearmanCorrelationTest",
    "CoefficientTest",
    "JointWaldTest",
]
