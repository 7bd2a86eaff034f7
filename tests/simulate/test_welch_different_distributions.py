"""Welch's test when the arms have equal means but different distributions (an adverse null).

Welch's null is equal means; the label permutation is exact only when the arms have the same
distribution. Arms of 15 and 90 rows, Exp(1) - 1 scaled by 3 in the small arm: the Welch
p-value is far off in its tail, and so is the permutation one (one test: 1.8% at 0.001). Top-1
of 20 outcomes by |Welch t|, tested through the report. Before the permutation version needed
``exchangeable=True``, the best valid column rejected the true null in 39% of replications at
0.05 (Bonferroni over the permutation p-value) and the split column in 9%.

Each check is a one-sided exact binomial test at 1e-6 (the false-failure rate of a correct column,
per column and level); the wrongly declared version must be seen failing, so that the scenario
keeps proving its point.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

from selective.hypotheses import TwoSampleTTest
from selective.validation.harness import simulate
from selective.validation.scenarios import WelchSkewed
from tests.stats_helpers import FALSE_FAILURE_RATE


@dataclass(frozen=True, slots=True, kw_only=True)
class _DifferentArms(WelchSkewed):
    """Equal means (0), different distributions: arm a 3 x (Exp(1) - 1), arm b Exp(1) - 1."""

    name: str = "welch_different_arms"
    declare_exchangeable: bool = False

    def draw(self, rng):
        frame = WelchSkewed.draw(self, rng)   # the layout (columns, arms); the values are replaced
        x = rng.exponential(size=(self.n_rows, self.n_features)) - 1.0
        x[: self.n1] *= 3.0
        frame[list(self.names)] = x
        return frame

    def spec(self, name):
        return TwoSampleTTest(column=name, group="arm", levels=("a", "b"), usevar="unequal",
                              exchangeable=self.declare_exchangeable)


def _above(res, column, alpha):
    r = res.rate(column, alpha=alpha)
    return stats.binomtest(int(r.n_events), int(r.n_trials), alpha, alternative="greater").pvalue


def test_welch_without_a_declaration_holds_when_the_arms_differ():
    scenario = _DifferentArms(n_features=20, n1=15, n2=90)
    res = simulate(scenario, n_reps=400, alphas=(0.05, 0.01), seed=11, progress=False)
    for alpha in (0.05, 0.01):
        for col in ("pvalue_maxinfo", "pvalue_bonferroni", "pvalue_best", "pvalue_split"):
            assert _above(res, col, alpha) > FALSE_FAILURE_RATE, (col, alpha, res.rate(col, alpha=alpha).rate)
    # the naive column and Bonferroni on the asymptotic p-value (no trust rule) are far above 0.05
    assert _above(res, "pvalue_naive", 0.05) < 1e-12
    assert _above(res, "pvalue_bonferroni_asymptotic", 0.05) < 1e-12
    # declaring the arms exchangeable when they are not brings the permutation back, and with it
    # the error: the declaration is the user's to make
    wrong = simulate(_DifferentArms(n_features=20, n1=15, n2=90, declare_exchangeable=True), n_reps=400,
                     alphas=(0.05,), seed=11, progress=False)
    assert _above(wrong, "pvalue_best", 0.05) < 1e-12
