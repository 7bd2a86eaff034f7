"""DP selectors: NoisyStatistic and SparseVectorScreen."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting.certificates import ZCDP, PureDP
from selective.selectors.base import Selection
from selective.selectors.dp import NoisyStatistic, SparseVectorScreen


def _assert_dp_counts(a: np.ndarray, b: np.ndarray, eps: float, false_failure_rate: float = FALSE_FAILURE_RATE) -> None:
    """Empirical outcome counts of neighbours are compatible with eps-DP.

    For each outcome, given its total count over both runs, the share of one run is Binomial
    with probability at most e^eps/(1 + e^eps); one-sided exact tests, Bonferroni over both
    directions and all outcomes, so the overall false-failure rate is ``false_failure_rate``.
    """
    bound = math.exp(eps) / (1 + math.exp(eps))
    n_tests = 2 * len(a)
    for x, y in ((a, b), (b, a)):
        for i in range(len(a)):
            if x[i] + y[i]:
                p = scipy.stats.binomtest(int(x[i]), int(x[i] + y[i]), bound, alternative="greater").pvalue
                assert p > false_failure_rate / n_tests, (i, x[i], y[i])


D1 = pd.DataFrame({"a": [1, 1, 0, 0], "b": [0, 1, 0, 1], "c": [1, 1, 1, 0]})
D2 = D1.copy()
D2.iloc[0] = [0, 1, 1]  # replace one row


class TestNoisyStatistic:
    def test_laplace_certificate_and_value(self):
        selector = NoisyStatistic(lambda d: d.mean(), sensitivity=1 / 4, epsilon=1.0, index=("a", "b", "c"))
        sel = selector.select(D1, rng=1)
        assert isinstance(sel, Selection)
        assert sel.certificate == PureDP(1.0)
        assert list(sel.value.index) == ["a", "b", "c"]

    def test_gaussian_certificate(self):
        selector = NoisyStatistic(lambda d: float(d["a"].mean()), sensitivity=1 / 4, rho=0.5, noise="gaussian")
        sel = selector.select(D1, rng=2)
        assert sel.certificate == ZCDP(0.5)
        assert isinstance(sel.value, float)

    def test_release_shape_comes_from_the_declared_index(self):
        # Regression: the statistic's own index and length were released without noise.
        declared = ("c", "a", "b")
        sel = NoisyStatistic(lambda d: d.mean(), sensitivity=1 / 4, epsilon=1.0, index=declared).select(D1, rng=3)
        assert tuple(sel.value.index) == declared  # reindexed to the declared order
        arr = NoisyStatistic(lambda d: d.mean().to_numpy(), sensitivity=1 / 4, epsilon=1.0, index=declared)
        assert tuple(arr.select(D1, rng=3).value.index) == declared
        bad_statistics = [
            lambda d: d.mean().rename({"a": "secret_0.5"}),   # other labels
            lambda d: d.mean().iloc[:2],                        # data-dependent length
            lambda d: d[d["a"] > 0].mean(axis=1),               # index from the rows
        ]
        for stat in bad_statistics:
            with pytest.raises(ValueError, match="one value per declared name") as err:
                NoisyStatistic(stat, sensitivity=1 / 4, epsilon=1.0, index=declared).select(D1, rng=4)
            assert "secret" not in str(err.value) and "0.5" not in str(err.value)
        with pytest.raises(ValueError, match="must return a single number when no `index` is declared"):
            NoisyStatistic(lambda d: d.mean(), sensitivity=1 / 4, epsilon=1.0).select(D1, rng=5)
        with pytest.raises(ValueError, match="must return a single number"):
            NoisyStatistic(lambda d: [0.5], sensitivity=1 / 4, epsilon=1.0).select(D1, rng=5)

    def test_privacy_on_neighbours(self):
        """Noisy count (sensitivity 1) on neighbouring 4-row datasets, outputs binned (post-processing).

        20,000 runs per dataset; false-failure rate 1e-6.
        """
        eps = 1.0
        sel = NoisyStatistic(lambda d: int(d["a"].sum()), sensitivity=1, epsilon=eps, integer=True)
        bins = np.array([-np.inf, 0.5, 1.5, 2.5, 3.5, np.inf])

        def outcomes(data, seed):
            rng = np.random.default_rng(seed)
            vals = np.array([sel.select(data, rng).value for _ in range(20_000)])
            return np.histogram(vals, bins=bins)[0]

        _assert_dp_counts(outcomes(D1, 3), outcomes(D2, 4), eps)

    def test_nan_statistic_raises(self):
        with pytest.raises(ValueError, match="`statistic` returned a NaN"):
            NoisyStatistic(lambda d: float("nan"), sensitivity=1.0, epsilon=1.0).select(D1, rng=1)
        with pytest.raises(ValueError, match="`statistic` returned a NaN or infinite value"):
            NoisyStatistic(lambda d: [1.0, np.inf], sensitivity=1.0, epsilon=1.0, index=("p", "q")).select(D1, rng=1)

    def test_iv(self):
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            NoisyStatistic(lambda d: 0.0, sensitivity=0.0, epsilon=1.0)
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=-1.0)
        with pytest.raises(ValueError, match="noise='laplace' needs `epsilon`"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="noise='gaussian' needs `rho`"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=1.0, noise="gaussian")
        with pytest.raises(ValueError, match="`noise` must be one of 'laplace', 'gaussian'"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=1.0, noise="cauchy")
        with pytest.raises(ValueError, match="`index` must not repeat a candidate"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=1.0, index=("a", "a"))
        with pytest.raises(TypeError, match="`index` must be a list or tuple of candidates; got the string"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=1.0, index="ab")


class TestSparseVectorScreen:
    def test_selects_clear_crossings_in_order(self):
        scores = pd.Series([100.0, -100.0, 100.0, 100.0], index=list("wxyz"))
        sel = SparseVectorScreen(lambda d: scores, threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=2,
                                 candidates=tuple("wxyz")).select(D1, rng=5)
        assert sel.value == ("w", "y")
        assert sel.certificate == PureDP(1.0)

    def test_queries_run_in_the_declared_order(self):
        # Regression: queries ran in the score Series' order, which the data can choose.
        scores = pd.Series([100.0, 100.0, -100.0], index=["z", "y", "x"])
        sel = SparseVectorScreen(lambda d: scores, threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=1,
                                 candidates=("x", "y", "z")).select(D1, rng=6)
        assert sel.value == ("y",)  # first crossing in the declared order x, y, z
        arr = SparseVectorScreen(lambda d: np.array([-100.0, 100.0, 100.0]), threshold=0.0, epsilon=1.0,
                                 sensitivity=1.0, max_selected=1, candidates=("x", "y", "z"))
        assert arr.select(D1, rng=6).value == ("y",)

    def test_other_labels_raise_a_data_free_error(self):
        for bad in (pd.Series([1.0, 2.0], index=["x", "secret_label"]), pd.Series([1.0], index=["x"]),
                    np.array([1.0, 2.0, 3.0])):
            s = SparseVectorScreen(lambda d, b=bad: b, threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=1,
                                   candidates=("x", "y"))
            with pytest.raises(ValueError, match="one score per declared name") as err:
                s.select(D1, rng=1)
            assert "secret" not in str(err.value) and "3" not in str(err.value)

    def test_privacy_on_neighbours(self):
        """Column means (sensitivity 1/4) of neighbouring 4-row datasets; c = 1.

        Outcomes: which candidate was selected, or none. 12,000 runs per dataset;
        false-failure rate 1e-6.
        """
        eps = 1.0
        means = {id(D1): D1.mean(), id(D2): D2.mean()}  # computed once: the test is about the noise
        sel = SparseVectorScreen(lambda d: means[id(d)], threshold=0.5, epsilon=eps, sensitivity=0.25, max_selected=1,
                                 candidates=("a", "b", "c"))
        labels = {(): 0, ("a",): 1, ("b",): 2, ("c",): 3}

        def outcomes(data, seed):
            rng = np.random.default_rng(seed)
            return np.bincount([labels[sel.select(data, rng).value] for _ in range(12_000)], minlength=4)

        _assert_dp_counts(outcomes(D1, 6), outcomes(D2, 7), eps)

    def test_nan_scores_raise(self):
        s = SparseVectorScreen(lambda d: pd.Series([1.0, np.nan], index=["p", "q"]), threshold=0.0, epsilon=1.0,
                               sensitivity=1.0, max_selected=1, candidates=("p", "q"))
        with pytest.raises(ValueError, match="`score` returned a NaN or infinite score") as err:
            s.select(D1, rng=1)
        # it names the first such candidate (declared order): m possible messages, all accounted for by
        # Analysis (a DP step that fails voids the information-based corrections)
        assert "for 'q' (the first such in the declared order" in str(err.value) and err.value.n_messages == 2

    def test_iv(self):
        with pytest.raises(ValueError, match="`max_selected` must be an integer >= 1"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=0,
                               candidates=("a",))
        with pytest.raises(ValueError, match="`sensitivity` must be a finite positive"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=1.0, sensitivity=-1.0, max_selected=1,
                               candidates=("a",))
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=0.0, sensitivity=1.0, max_selected=1,
                               candidates=("a",))
        with pytest.raises(TypeError, match="candidates"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=1)
        with pytest.raises(ValueError, match="`candidates` must hold at least one candidate"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=1,
                               candidates=())


class TestParametersCheckedBeforeTheData:
    """Noise scales the exact samplers cannot draw are refused when the selector is built."""

    @pytest.mark.parametrize("eps", [1e-300, 5e-324])
    def test_tiny_epsilon(self, eps):
        with pytest.raises(ValueError, match=r"`epsilon` = .* with `sensitivity` = 0.1 cannot be used: the noise "
                                             r"scale would exceed"):
            NoisyStatistic(lambda d: 0.0, sensitivity=0.1, epsilon=eps)
        with pytest.raises(ValueError, match=r"`epsilon` = .* cannot be used"):
            SparseVectorScreen(lambda d: np.zeros(1), threshold=0.0, epsilon=eps, sensitivity=0.1, max_selected=1,
                               candidates=("a",))

    @pytest.mark.parametrize("rho", [1e30, 1e300])
    def test_huge_rho(self, rho):
        with pytest.raises(ValueError, match=r"`rho` = .* is too large for `sensitivity` = 0.1"):
            NoisyStatistic(lambda d: 0.0, sensitivity=0.1, rho=rho, noise="gaussian")

    def test_moderate_parameters_are_accepted(self):
        s = NoisyStatistic(lambda d: 0.5, sensitivity=0.1, rho=1e6, noise="gaussian")
        assert abs(s.select(pd.DataFrame({"a": [1.0]}), rng=1).value - 0.5) < 0.01

    def test_index_must_be_ordered(self):
        with pytest.raises(TypeError, match=r"`index` must be an ordered collection .* got a set"):
            NoisyStatistic(lambda d: 0.0, sensitivity=1.0, epsilon=1.0, index={"a", "b"})
        with pytest.raises(TypeError, match=r"`candidates` must be an ordered collection .* got a dict"):
            SparseVectorScreen(lambda d: d.mean(), threshold=0.0, epsilon=1.0, sensitivity=1.0, max_selected=1,
                               candidates={"a": 1})
