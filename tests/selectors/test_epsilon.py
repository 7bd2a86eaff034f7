"""suggest_epsilon / noisy_topk_threshold, and the epsilon warning of NoisyTopK.select."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import selective
from selective import Analysis, Ledger, NoisyTopK, SelectiveWarning, TopK
from selective.accounting.bounds import maxinfo_pure_dp_product
from selective.corrections import correct
from selective.mechanisms.exponential import report_noisy_topk_certificate
from selective.selectors.epsilon import noisy_topk_threshold, suggest_epsilon
from selective.selectors.topk import epsilon_warning


def ledger_threshold(epsilon: float, n_rows: int, k: int, alpha: float) -> float:
    """log2 of the largest threshold of the DP columns, from a ledger and `correct` as a report does."""
    ledger = Ledger(n_rows)
    ledger.record(report_noisy_topk_certificate(k, epsilon=epsilon))
    th = correct(np.array([0.5]), ledger.totals(), alpha=alpha).thresholds
    return max(th["maxinfo"].log2_gamma, th["mutual_info"].log2_gamma)


class TestSuggestEpsilon:
    def test_suggest_epsilon_iv(self):
        with pytest.raises(ValueError, match=r"`n_rows` must be an integer in \[1, 9007199254740992\]; got 0"):
            suggest_epsilon(0)
        with pytest.raises(ValueError, match=r"`max_cost` must be a real number in \(1, inf\); got 1"):
            suggest_epsilon(100, max_cost=1)
        with pytest.raises(ValueError, match=r"`alpha` must be a real number in \(0, 1\); got 1.5"):
            suggest_epsilon(100, alpha=1.5)
        with pytest.raises(ValueError, match=r"`k` must be at most `n_candidates` \(2\); got 3"):
            suggest_epsilon(100, k=3, n_candidates=2)
        with pytest.raises(TypeError, match="`preregistered` must be True or False; got 'yes'"):
            suggest_epsilon(100, preregistered="yes")
        with pytest.raises(ValueError, match="`epsilon` must be"):
            noisy_topk_threshold(-1.0, 100)

    @settings(max_examples=25, deadline=None)
    @given(n_rows=st.integers(1, 10**7), k=st.integers(1, 20), max_cost=st.floats(1.01, 1e6),
           alpha=st.sampled_from([0.01, 0.05, 0.1]))
    def test_suggested_epsilon_meets_the_target_and_a_larger_one_does_not(self, n_rows, k, max_cost, alpha):
        s = suggest_epsilon(n_rows, k=k, alpha=alpha, max_cost=max_cost)
        log2_target = math.log2(alpha) - math.log2(max_cost)
        # recorded on a ledger and corrected as a report would: the target is met ...
        assert ledger_threshold(s.epsilon, n_rows, k, alpha) >= log2_target
        # ... and 1e-9 more epsilon misses it (every route's threshold decreases strictly in epsilon)
        assert ledger_threshold(s.epsilon * (1 + 1e-9), n_rows, k, alpha) < log2_target

    @settings(max_examples=25, deadline=None)
    @given(n_rows=st.integers(1, 10**6), k=st.integers(1, 5), e1=st.floats(1e-4, 10.0), e2=st.floats(1e-4, 10.0))
    def test_threshold_decreases_in_epsilon(self, n_rows, k, e1, e2):
        lo, hi = sorted((e1, e2))
        larger, smaller = noisy_topk_threshold(hi, n_rows, k=k), noisy_topk_threshold(lo, n_rows, k=k)
        assert larger.log2_threshold <= smaller.log2_threshold

    def test_suggestion_against_theorem_20_alone(self):
        # Theorem 20 alone gives a threshold sup_beta (alpha - beta) 2^-k(beta); the report's best
        # route is at least as large, so the suggested epsilon is at least the Theorem-20-only one
        n, alpha, target = 6366, 0.05, 0.005
        s = suggest_epsilon(n, k=3, alpha=alpha, max_cost=10)

        def thm20_log2_gamma(eps):
            betas = np.geomspace(1e-12, alpha * 0.999, 2000)
            return max(math.log2(alpha - b) - maxinfo_pure_dp_product(eps, n, b).bits for b in betas)

        assert thm20_log2_gamma(s.epsilon) <= math.log2(target) + 1e-6
        assert s.epsilon * math.sqrt(n) == pytest.approx(1.307, abs=0.01)  # the value the docstring example shows

    def test_without_noise_comparison(self):
        s = suggest_epsilon(6366, k=3, n_candidates=60)
        assert s.threshold_without_noise == pytest.approx(0.05 / math.comb(60, 3))
        assert s.noise_pays is True  # 0.005 > 1.5e-6
        tiny = suggest_epsilon(6366, k=1, n_candidates=2, max_cost=100)
        assert tiny.noise_pays is False  # alpha / 2 beats a threshold of alpha / 100

    def test_not_preregistered_uses_theorem_19(self):
        # Theorem 19 alone: gamma = alpha exp(-epsilon n), so the target alpha/10 needs epsilon n = ln 10
        s = suggest_epsilon(1000, k=1, preregistered=False)
        assert s.epsilon * 1000 == pytest.approx(math.log(10), rel=1e-8)

    def test_exported(self):
        assert selective.suggest_epsilon is suggest_epsilon and "suggest_epsilon" in selective.__all__


def _data(n: int, m: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(rng.normal(size=(n, m)), columns=[f"m{i:02d}" for i in range(m)])


class TestEpsilonWarning:
    def test_issue_example_warns_with_the_numbers(self):
        data = _data(6366)
        cols = tuple(data.columns)
        screen = NoisyTopK(k=3, epsilon=1.0, sensitivity=6.0 / len(data), candidates=cols,
                           score=lambda d: d[list(cols)].clip(-3, 3).mean())
        with pytest.warns(SelectiveWarning) as record:
            screen.select(data, np.random.default_rng(0))
        msg = str(record[0].message)
        bits = noisy_topk_threshold(1.0, 6366, k=3).maxinfo_bits
        assert bits > 4000  # Theorem 20 at beta = 0.001: thousands of bits
        for part in ("epsilon = 1 ", "n = 6366", f"epsilon*sqrt(n) = {math.sqrt(6366):.3g}", f"{bits:.4g} bits",
                     "smaller than any positive p-value a double can hold", "C(60, 3) = 34220",
                     "suggest_epsilon"):
            assert part in msg, (part, msg)
        suggested = float(msg.split("epsilon <= ")[1].split(" ")[0])
        assert suggested == pytest.approx(suggest_epsilon(6366, k=3).epsilon, rel=1e-2)

    def test_no_warning_where_noise_pays(self):
        data = _data(6366)
        cols = tuple(data.columns)
        eps = suggest_epsilon(6366, k=3).epsilon
        screen = NoisyTopK(k=3, epsilon=eps, sensitivity=6.0 / len(data), candidates=cols,
                           score=lambda d: d[list(cols)].clip(-3, 3).mean())
        with warnings.catch_warnings():
            warnings.simplefilter("error", SelectiveWarning)
            screen.select(data, np.random.default_rng(0))

    def test_warning_boundary_against_the_description_length_threshold(self):
        # the warning fires exactly where the DP threshold drops below alpha / C(m, k)
        n, k, m = 6366, 3, 60
        s = suggest_epsilon(n, k=k, max_cost=math.comb(m, k))
        assert epsilon_warning(s.epsilon, n, k=k, n_candidates=m) is None
        assert epsilon_warning(s.epsilon * 1.001, n, k=k, n_candidates=m) is not None

    def test_through_analysis(self):
        data = _data(600, m=10)
        cols = tuple(data.columns)
        a = Analysis(data, alpha=0.05, rng=1)
        with pytest.warns(SelectiveWarning, match="epsilon = 0.5 on n = 600 rows"):
            a.select(NoisyTopK(k=2, epsilon=0.5, sensitivity=0.01, candidates=cols,
                               score=lambda d: d[list(cols)].mean()))
        with warnings.catch_warnings():
            warnings.simplefilter("error", SelectiveWarning)
            a.select(TopK(k=1, candidates=cols, score=lambda d: d[list(cols)].mean()))
