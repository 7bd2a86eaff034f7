"""Confirmatory test specs run through statsmodels (scipy where statsmodels has none).

A spec is a frozen description of one test; ``spec.run(data)`` returns its naive
:class:`TestResult` (statistic, p-value, estimate and interval ignoring any selection), and
``result.ci_at(alpha=gamma)`` rebuilds the interval at a corrected level ``1 - gamma``.

Every result says how its p-value is obtained (``pvalue_method``) and down to which level it
may be compared with a threshold (``trusted_level``); ``spec.run_at_level(data, gamma)``
returns a result trusted at ``gamma`` (an exact or permutation version below the ordinary
trusted level) when one exists, else the ordinary result, to be withheld. The rules are in
:mod:`selective.hypotheses._trust`; :mod:`selective.hypotheses.calibration` measures them.
"""

from ._result import PVALUE_METHODS, IntervalRule, TestResult
from ._spec import TestSpec, confidence_interval
from .correlation import PearsonCorrelationTest, SpearmanCorrelationTest
from .means import OneSampleTTest, OneSampleZTest, PairedTTest, TwoSampleTTest, TwoSampleZTest
from .proportions import ChiSquareIndependenceTest, OneSampleProportionTest, TwoSampleProportionTest
from .regression import CoefficientTest, JointWaldTest

__all__ = [
    "PVALUE_METHODS",
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
