"""TopK (description length) and NoisyTopK (pure DP) selectors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting import DescriptionLength, PureDP
from selective.selectors.topk import NoisyTopK, SignedMeanScore, TopK


def frame(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({k: [v] for k, v in values.items()})


def row_scores(d: pd.DataFrame) -> pd.Series:
    return d.iloc[0]


class TestTopK:
    def test_topk_iv(self):
        with pytest.raises(ValueError, match="`k` must be an integer >= 1; got 0"):
            TopK(k=0, score=row_scores, candidates=("a",))
        with pytest.raises(TypeError, match="`candidates` must be a sequence of candidate names declared"):
            TopK(k=1, score=row_scores, candidates=None)
        with pytest.raises(ValueError, match=r"`k` must be at most the number of candidates \(2\); got 3"):
            TopK(k=3, score=row_scores, candidates=("a", "b"))
        with pytest.raises(TypeError, match="`score` must be a callable"):
            TopK(k=1, score=3, candidates=("a",))
        with pytest.raises(ValueError, match="must not repeat"):
            TopK(k=1, score=row_scores, candidates=("a", "a"))
        with pytest.raises(ValueError, match="finite scores") as e:
            TopK(k=1, score=row_scores, candidates=("a", "b")).select(frame({"a": 1.0, "b": float("nan")}))
        # the message names the first non-finite candidate in declared order: one of m forms, which
        # Analysis charges as m more outcomes of the step (tests/test_analysis.py)
        assert "for 'b' (the first such in the declared order" in str(e.value) and e.value.n_messages == 2
        with pytest.raises(ValueError, match="differ from `candidates`"):
            TopK(k=1, score=row_scores, candidates=("a",)).select(frame({"a": 1.0, "b": 2.0}))
        with pytest.raises(ValueError, match="differ from `candidates`"):
            TopK(k=1, score=row_scores, candidates=("a", "c")).select(frame({"a": 1.0}))

    def test_set_in_input_order_and_certificate(self):
        top2 = TopK(k=2, score=row_scores, candidates=tuple("abcd"))
        sel = top2.select(frame({"a": 1.0, "b": 5.0, "c": 3.0, "d": 0.0}))
        assert sel.value == ("b", "c")
        assert sel.certificate == DescriptionLength(math.comb(4, 2))
        sel = top2.select(frame({"a": 9.0, "b": 5.0, "c": 3.0, "d": 10.0}))
        assert sel.value == ("a", "d")  # input order, not score order

    def test_ordered_outcomes(self):
        ordered = TopK(k=2, score=row_scores, candidates=tuple("abcd"), ordered=True)
        sel = ordered.select(frame({"a": 9.0, "b": 5.0, "c": 3.0, "d": 10.0}))
        assert sel.value == ("d", "a")
        assert sel.certificate == DescriptionLength(4 * 3)

    def test_declared_certificate_matches_selection(self):
        t = TopK(k=3, score=row_scores, candidates=tuple("abcdefg"))
        sel = t.select(frame({c: float(i) for i, c in enumerate("abcdefg")}))
        assert t.certificate() == sel.certificate == DescriptionLength(35)

    def test_declared_order_not_data_order(self):
        """Scores returned in a data-dependent order are read in the declared order."""
        t = TopK(k=2, score=lambda d: d.iloc[0].sort_values(), candidates=("d", "c", "b", "a"))
        assert t.select(frame({"a": 9.0, "b": 5.0, "c": 3.0, "d": 10.0})).value == ("d", "a")


class TestNoisyTopK:
    def test_noisy_topk_iv(self):
        with pytest.raises(ValueError, match="`epsilon`"):
            NoisyTopK(k=1, epsilon=0.0, sensitivity=1.0, score=row_scores, candidates=("a",))
        with pytest.raises(ValueError, match="`sensitivity`"):
            NoisyTopK(k=1, epsilon=1.0, sensitivity=-1.0, score=row_scores, candidates=("a",))
        with pytest.raises(ValueError, match="`k` must be at most"):
            NoisyTopK(k=2, epsilon=1.0, sensitivity=1.0, score=row_scores, candidates=("a",))
        with pytest.raises(ValueError, match="finite"):
            NoisyTopK(k=1, epsilon=1.0, sensitivity=1.0, score=row_scores, candidates=("a",)).select(
                frame({"a": float("inf")}))

    def test_certificate(self):
        sel = NoisyTopK(k=2, epsilon=0.6, sensitivity=1.0, score=row_scores, candidates=("a", "b", "c")).select(
            frame({"a": 1.0, "b": 2.0, "c": 3.0}), np.random.default_rng(1))
        assert sel.certificate == PureDP(0.6, rho=2 * 0.3**2 / 8)
        assert len(sel.value) == 2 and set(sel.value) <= {"a", "b", "c"}

    def test_top1_follows_the_exponential_mechanism(self):
        """Top-1 output frequencies against exp(eps u / (2 Delta)) (chi-square; a correct
        implementation fails with probability FALSE_FAILURE_RATE; 20,000 draws detect a 10%
        error in the probability ratio with high power)."""
        u = {"a": 0.0, "b": 1.0, "c": 2.0}
        sel = NoisyTopK(k=1, epsilon=1.0, sensitivity=1.0, score=row_scores, candidates=tuple(u))
        rng = np.random.default_rng(20261122)
        n = 20_000
        counts = dict.fromkeys(u, 0)
        data = frame(u)
        for _ in range(n):
            counts[sel.select(data, rng).value[0]] += 1
        w = np.exp(np.array(list(u.values())) / 2.0)
        expected = n * w / w.sum()
        p = scipy.stats.chisquare(list(counts.values()), expected).pvalue
        assert p > FALSE_FAILURE_RATE, (counts, expected)


def test_signed_mean_score_and_sensitivity():
    rng = np.random.default_rng(3)
    d = pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50), "g": ["t"] * 25 + ["c"] * 25})
    s = SignedMeanScore(columns=("x", "y"), sign_column="g", positive="t", clip=1.5)
    base = s(d)
    # replace one row arbitrarily: each score moves by at most the declared sensitivity
    for _ in range(200):
        d2 = d.copy()
        i = rng.integers(50)
        d2.loc[i, ["x", "y"]] = rng.normal(scale=10, size=2)
        d2.loc[i, "g"] = rng.choice(["t", "c"])
        assert np.all(np.abs(s(d2) - base) <= s.sensitivity(50) + 1e-12)


@pytest.mark.filterwarnings("ignore::selective.SelectiveWarning")  # epsilon far too large: warned
class TestArgumentsAndExtremes:
    def test_candidates_must_be_an_ordered_collection(self):
        with pytest.raises(TypeError, match=r"`candidates` must be an ordered collection .* got a set"):
            TopK(k=1, score=row_scores, candidates={"a", "b"})
        with pytest.raises(TypeError, match=r"`candidates` must be a list or tuple of labels; got the string 'ab'"):
            NoisyTopK(k=1, epsilon=1.0, sensitivity=1.0, score=row_scores, candidates="ab")
        with pytest.raises(TypeError, match=r"`columns` must be an ordered collection"):
            SignedMeanScore(columns=frozenset({"a"}), sign_column="g", positive=1)
        assert TopK(k=1, score=row_scores, candidates=np.array(["a", "b"])).candidates == ("a", "b")

    @pytest.mark.parametrize("eps", [1e-300, 1e-323, 1e150, 1e300, 1.7e308])
    def test_extreme_epsilon_has_a_certificate(self, eps):
        """Regression: OverflowError ((eps/k)**2) and a rho that underflowed to 0 in the certificate."""
        sel = NoisyTopK(k=2, epsilon=eps, sensitivity=1.0, score=row_scores, candidates=("a", "b", "c"))
        cert = sel.certificate()
        assert cert.epsilon == eps and (cert.rho is None or 0 < cert.rho < math.inf)
        out = sel.select(frame({"a": 1.0, "b": 3.0, "c": 2.0}), rng=1)
        assert len(out.value) == 2 and set(out.value) <= {"a", "b", "c"}
        with pytest.raises(ValueError, match=r"`epsilon` / `k` .* got epsilon = 5e-324 with k = 2"):
            NoisyTopK(k=2, epsilon=5e-324, sensitivity=1.0, score=row_scores, candidates=("a", "b", "c"))

    def test_exponents_beyond_the_sampler_are_capped_exactly(self):
        """Regression: OverflowError ('gamma > 2^62') when eps * gap / sensitivity was huge. Capping the
        exponent at 2^62 - 1 keeps the law an exponential mechanism with the same epsilon, and it
        only moves weights below exp(-2^62): the best candidate is then chosen every time."""
        sel = NoisyTopK(k=1, epsilon=1e10, sensitivity=1e-300, score=row_scores, candidates=("a", "b", "c"))
        rng = np.random.default_rng(3)
        assert {sel.select(frame({"a": 0.0, "b": 1e300, "c": -1e300}), rng).value for _ in range(20)} == {("b",)}
        big = NoisyTopK(k=2, epsilon=1e300, sensitivity=1e300, score=row_scores, candidates=("a", "b", "c"))
        assert len(big.select(frame({"a": 0.0, "b": 1.0, "c": 2.0}), rng).value) == 2

    def test_signed_mean_score_declares_its_columns(self):
        score = SignedMeanScore(columns=["a", "b"], sign_column="g", positive=1)
        top = TopK(k=1, score=score, candidates=("a", "b"))
        assert top.required_columns() == {"score.columns": ("a", "b"), "score.sign_column": ("g",)}
        assert TopK(k=1, score=row_scores, candidates=("a",)).required_columns() == {}
