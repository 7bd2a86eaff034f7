r"""Tests exact only under normality, used at a corrected level on skewed data.

Student's t-tests are exact when the data are normal, and were once trusted at every level.
On skewed data they are not: the one-sample t of an exponential mean of 50 rejects at about
20 times the level at 1e-4 (docs/calibration.md), and top-1 of 300 by ``|t|`` made the
report's Bonferroni, max-information and best columns reject in 54% of the null replications
at 0.05. These scenarios run that use through the report (the design of
:mod:`selective.validation.scenarios.trusted`): the t p-value now carries a trusted level from
the data's skewness and kurtosis (:mod:`selective.hypotheses._trust_model`), and below it the
report uses the label-permutation p-value (two samples) or withholds the corrected columns
(one sample: no exact test of a mean exists without a model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from .trusted import StudentisedMeanSkewed, WelchSkewed

__all__ = ["StudentTMeanSkewed", "StudentTwoSampleSkewed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StudentTMeanSkewed(StudentisedMeanSkewed):
    r"""One-sample Student t-test of the exponential outcome with the largest ``|t|``.

    As :class:`~selective.validation.scenarios.trusted.StudentisedMeanSkewed` with the t
    reference (:class:`~selective.hypotheses.OneSampleTTest`), exact under normality only.

    Truth: global null (every outcome has mean 1). With ``effects``, outcome j < ``len(effects)``
    is exponential(1) + ``effects[j]`` (skewness kept, mean exactly 1 + ``effects[j]``); every
    other outcome is as under the null.
    """

    name: str = "trusted_t_mean_skewed"

    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"exponential outcomes, n = {self.n_obs}: top-1 of {self.n_features} by |t| of the mean"
                f" (Student t), tested through the report (withheld where it could reject)")

    withheld_columns: ClassVar[dict[str, str]] = {
        **{c: "the report withholds it: a t p-value of a skewed mean of 50 is not trusted near alpha/N "
              "(THEORY.md 7.1)" for c in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best")}}

    def spec(self, name):
        from ...hypotheses import OneSampleTTest

        return OneSampleTTest(column=name, value=1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class StudentTwoSampleSkewed(WelchSkewed):
    r"""Student's pooled two-sample t-test of the lognormal outcome with the largest ``|t|``.

    As :class:`~selective.validation.scenarios.trusted.WelchSkewed` with the pooled-variance
    statistic (:class:`~selective.hypotheses.TwoSampleTTest`, ``usevar="pooled"``), exact under
    normality only; the report uses the label-permutation p-value (exact here: both arms have
    the same distribution).

    Truth: global null (every outcome has the same distribution in both arms). With ``effects``,
    outcome j < ``len(effects)`` is lognormal(0, 1) + ``effects[j]`` in arm "a" (skewness and
    variance kept, means differing by exactly ``effects[j]``); every other outcome is as under the
    null, where the label permutation is exact.
    """

    name: str = "trusted_student_skewed"

    @property
    def description(self) -> str:  # type: ignore[override]
        return (f"lognormal outcomes, unbalanced arms: top-1 of {self.n_features} by |Student t|,"
                f" tested through the report (permutation fallback)")

    def scores(self, frame):
        arm = frame["arm"].to_numpy()
        x = frame[list(self.names)].to_numpy()
        a, b = x[arm == "a"], x[arm == "b"]
        n1, n2 = len(a), len(b)
        pooled = ((n1 - 1) * a.var(axis=0, ddof=1) + (n2 - 1) * b.var(axis=0, ddof=1)) / (n1 + n2 - 2)
        t = (a.mean(axis=0) - b.mean(axis=0)) / np.sqrt(pooled * (1.0 / n1 + 1.0 / n2))
        return pd.Series(np.abs(t), index=list(self.names))

    def spec(self, name):
        from ...hypotheses import TwoSampleTTest

        # the arms have the same distribution under the null: declared, so the permutation is used even
        # when the selected outcome's smaller arm looks the more spread out (the variance check)
        return TwoSampleTTest(column=name, group="arm", levels=("a", "b"), usevar="pooled", exchangeable=True)

