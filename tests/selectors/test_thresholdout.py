"""Thresholdout (DFHPRR Fig. 1): budget, validation, hiding of the holdout, privacy sanity."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from stats_helpers import FALSE_FAILURE_RATE

from selective.accounting.certificates import PureDP
from selective.exceptions import BudgetExhausted, NoBoundError
from selective.selectors.thresholdout import (
    _CHUNK,
    Thresholdout,
    ThresholdoutExperiment,
    _clipped_sum,
    _evaluate_training,
    thresholdout_parameters,
)

RNG = np.random.default_rng(0)
TRAIN = pd.DataFrame({"x": RNG.random(500)})
HOLD = pd.DataFrame({"x": RNG.random(500)})
SECRET = 0.123456789
HOLD.iloc[0, 0] = SECRET


def phi_x(d):
    return d["x"].to_numpy()


class TestThresholdout:
    def test_answers_training_mean_below_threshold(self):
        t = Thresholdout(TRAIN, HOLD, threshold=0.5, sigma=1e-4, budget=1, rng=1)
        assert t.query(phi_x) == pytest.approx(TRAIN["x"].mean())
        assert t.budget_remaining == 1

    def test_budget_exhausted_after_b_over_threshold_answers(self):
        shifted = pd.DataFrame({"x": np.clip(HOLD["x"] + 0.3, 0, 1)})
        t = Thresholdout(TRAIN, shifted, threshold=0.01, sigma=1e-4, budget=2, rng=2)
        a1 = t.query(phi_x)
        assert a1 == pytest.approx(shifted["x"].mean(), abs=0.01)
        t.query(phi_x)
        assert t.budget_remaining == 0
        with pytest.raises(BudgetExhausted, match="budget of B = 2"):
            t.query(phi_x)

    def test_certificate(self):
        t = Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.01, budget=10, rng=3)
        assert t.certificate() == PureDP(2 * 10 / (0.01 * 500))

    def test_phi_outside_unit_interval_raises_on_training_set(self):
        t = Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.01, budget=1, rng=4)
        with pytest.raises(ValueError, match=r"`phi` must map every row into \[0, 1\]; got 2.0 on the training set"):
            t.query(lambda d: d["x"].to_numpy() * 0 + 2.0)
        with pytest.raises(ValueError, match=r"`phi` must map every row into \[0, 1\]; got nan"):
            t.query(lambda d: d["x"].to_numpy() * np.nan)
        with pytest.raises(ValueError, match=r"`phi` must map every row into \[0, 1\]; got -inf"):
            t.query(lambda d: np.where(d["x"].to_numpy() > 0.5, -np.inf, 0.5))
        with pytest.raises(ValueError, match=r"got -1e-300 on the training set"):
            t.query(lambda d: np.full(len(d), -1e-300))
        assert t.query(lambda d: np.full(len(d), -0.0)) == 0.0  # negative zero is in [0, 1]
        with pytest.raises(ValueError, match="one value per row"):
            t.query(lambda d: np.array([0.5]))
        assert t.n_queries == 1  # refused queries never reached the holdout

    def test_no_exception_or_message_depends_on_the_holdout(self):
        """Regression: the error quoted the first out-of-range value of phi ON THE HOLDOUT.

        phi is validated on the (public) training set only; on the holdout its values are
        clipped to [0, 1] (NaN -> 0) and failures count as 0, so every query below is answered.
        """
        hold_ids = set(HOLD.index)

        def on_holdout(d):
            return set(d.index) <= hold_ids and len(d) == len(HOLD) and d["x"].iloc[0] == SECRET

        leaky = [
            lambda d: np.full(len(d), SECRET * 10 if on_holdout(d) else 0.5),              # out of range
            lambda d: np.full(len(d), np.nan if on_holdout(d) else 0.5),                    # NaN
            lambda d: (_ for _ in ()).throw(ValueError(repr(SECRET))) if on_holdout(d) else np.full(len(d), 0.5),
            lambda d: np.full(len(d) - 1, 0.5) if on_holdout(d) else np.full(len(d), 0.5),  # wrong length
            lambda d: np.full(len(d), "secret") if on_holdout(d) else np.full(len(d), 0.5),  # not numbers
        ]
        for phi in leaky:
            t = Thresholdout(TRAIN, HOLD, threshold=0.5, sigma=1e-4, budget=1, rng=6)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                a = t.query(phi)
            # the answer is a mean in [0, 1] plus Lap(sigma = 1e-4) noise when over the threshold:
            # outside [-0.01, 1.01] with probability below exp(-100)
            assert -0.01 <= a <= 1.01 and t.n_queries == 1

    def test_holdout_values_are_clipped(self):
        # phi = 5 on every holdout row is answered as the clipped query 1 (over threshold).
        def phi(d):
            return np.full(len(d), 5.0 if len(d) == len(HOLD) and d["x"].iloc[0] == SECRET else 0.0)

        t = Thresholdout(TRAIN, HOLD, threshold=0.1, sigma=1e-4, budget=1, rng=7)
        assert t.query(phi) == pytest.approx(1.0, abs=0.01)

        def nan_on_holdout(d):
            return np.full(len(d), np.nan if d["x"].iloc[0] == SECRET else 1.0)

        t = Thresholdout(TRAIN, HOLD, threshold=0.1, sigma=1e-4, budget=1, rng=8)
        assert t.query(nan_on_holdout) == pytest.approx(0.0, abs=0.01)

    def test_row_wise_fallback_counts_failing_rows_as_zero(self):
        # a row-wise phi that fails on one holdout row: that row counts as 0, the others as phi
        def phi(d):
            x = d["x"].to_numpy()
            if np.any(x == SECRET):
                raise ValueError("bad row")
            return x

        t = Thresholdout(TRAIN, HOLD, threshold=0.001, sigma=1e-5, budget=1, rng=9)
        expected = (HOLD["x"].sum() - SECRET) / len(HOLD)
        assert t.query(phi) == pytest.approx(expected, abs=1e-3)

    def test_holdout_not_reachable_through_public_attributes_or_repr(self):
        t = Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.01, budget=1, rng=5)
        assert "0.1234" not in repr(t)
        for name in dir(t):
            if name.startswith("_"):
                continue
            assert not isinstance(getattr(t, name), (pd.DataFrame, pd.Series, np.ndarray)), name
        assert not hasattr(t, "__dict__")
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(t)

    def test_iv(self):
        with pytest.raises(ValueError, match="`sigma` must be a finite positive"):
            Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.0, budget=1)
        with pytest.raises(ValueError, match="`budget` must be an integer >= 1"):
            Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.01, budget=0)
        with pytest.raises(TypeError, match="`holdout` must be a pandas DataFrame"):
            Thresholdout(TRAIN, HOLD.to_numpy(), threshold=0.04, sigma=0.01, budget=1)

    def test_privacy_on_neighbouring_holdouts(self):
        """Holdouts of 4 rows differing in one row; B = 1 and sigma = 0.5 give eps = 2B/(sigma n) = 1.

        Outcome of one query, binned (post-processing): below threshold, or the noisy answer in
        one of four bins. 8,000 runs per holdout; false-failure rate 1e-6.
        """
        train = pd.DataFrame({"x": [0.5, 0.5, 0.5, 0.5]})
        h1 = pd.DataFrame({"x": [1.0, 1.0, 0.0, 1.0]})
        h2 = pd.DataFrame({"x": [0.0, 1.0, 0.0, 1.0]})
        eps = 2 * 1 / (0.5 * 4)
        edges = np.array([-np.inf, 0.0, 0.5, 1.0, np.inf])

        def outcomes(hold, seed):
            rng = np.random.default_rng(seed)
            counts = np.zeros(5, dtype=int)
            for _ in range(8_000):
                t = Thresholdout(train, hold, threshold=0.1, sigma=0.5, budget=1, rng=rng)
                before = t.budget_remaining
                a = t.query(phi_x)
                if t.budget_remaining == before:
                    counts[0] += 1
                else:
                    counts[1 + np.searchsorted(edges, a, side="right") - 1] += 1
            return counts

        a, b = outcomes(h1, 8), outcomes(h2, 9)
        bound = math.exp(eps) / (1 + math.exp(eps))
        for x, y in ((a, b), (b, a)):
            for i in range(5):
                if x[i] + y[i]:
                    p = scipy.stats.binomtest(int(x[i]), int(x[i] + y[i]), bound, alternative="greater").pvalue
                    assert p > FALSE_FAILURE_RATE / 10


class TestThresholdoutExperiment:
    def test_has_no_certificate(self):
        t = ThresholdoutExperiment(TRAIN, HOLD, threshold=0.04, sigma=0.01, rng=1)
        with pytest.raises(NoBoundError, match="no certificate"):
            t.certificate()
        assert 0.0 <= t.query(phi_x) <= 1.0

    def test_finite_budget(self):
        shifted = pd.DataFrame({"x": np.clip(HOLD["x"] + 0.3, 0, 1)})
        t = ThresholdoutExperiment(TRAIN, shifted, threshold=0.01, sigma=1e-4, budget=1, rng=2)
        t.query(phi_x)
        with pytest.raises(BudgetExhausted):
            t.query(phi_x)


def test_thresholdout_parameters_theorem_25():
    p = thresholdout_parameters(0.1, 0.05, 1000, 10)
    assert p.threshold == pytest.approx(0.075)
    assert p.sigma == pytest.approx(0.1 / (96 * math.log(4 * 1000 / 0.05)))
    assert p.n_required == min(p.n0, p.n1)
    with pytest.raises(ValueError, match=r"`budget` must be an integer in \[1, 1000\]"):
        thresholdout_parameters(0.1, 0.05, 1000, 1001)


class TestNoAccidentalChannels:
    """Queries get read-only views of private copies; the noise generator is private (class notes)."""

    def test_writes_raise_and_the_holdout_is_unchanged(self):
        hold = HOLD.copy()
        t = Thresholdout(TRAIN, hold, threshold=0.5, sigma=1e-4, budget=1, rng=1)
        kept = []

        def tamper(d):
            kept.append(d)
            d.iloc[0, 0] = 1.0
            return d["x"].to_numpy()

        def tamper_array(d):
            d["x"].to_numpy()[:] = 1.0
            return d["x"].to_numpy()

        # training set: the write raises (public, so the error propagates); nothing was answered
        for phi in (tamper, tamper_array):
            with pytest.raises(ValueError, match="read-only"):
                t.query(phi)
        assert t.n_queries == 0
        for view in kept:
            with pytest.raises(ValueError, match="read-only"):
                view.iloc[0, 0] = 5.0
            view["added"] = 1.0  # changes only that view
        hold.iloc[:, 0] = 1.0  # the caller's frame changing after construction does not reach the mechanism
        assert t.query(lambda d: d["x"].to_numpy()) == pytest.approx(TRAIN["x"].mean())
        on_holdout = []
        t.query(lambda d: (on_holdout.append(d.copy()), d["x"].to_numpy())[1])
        pd.testing.assert_frame_equal(on_holdout[1], HOLD)  # [0] is the training set
        assert "added" not in on_holdout[1]

    def test_extension_columns_are_fresh_copies(self):
        train = TRAIN.assign(s=pd.array(["a"] * len(TRAIN), dtype="string"))
        hold = HOLD.assign(s=pd.array(["a"] * len(HOLD), dtype="string"))
        t = Thresholdout(train, hold, threshold=0.5, sigma=1e-4, budget=1, rng=2)
        views = []

        def phi(d):
            views.append(d)
            d.loc[d.index[0], "s"] = "b"  # reaches only this view's copy (or raises)
            return (d["s"] == "a").to_numpy(dtype=float)

        try:
            t.query(phi)
        except ValueError:
            pass
        t.query(lambda d: (views.append(d), (d["s"] == "a").to_numpy(dtype=float))[1])
        assert (views[-1]["s"] == "a").all()

    def test_noise_generator_is_a_private_child(self):
        def answers(rng, after=None):
            t = Thresholdout(TRAIN, HOLD.assign(x=np.clip(HOLD["x"] + 0.3, 0, 1)), threshold=0.01, sigma=1e-3,
                             budget=3, rng=rng)
            if after is not None:
                after.random(100)  # the caller keeps using its generator
            return [t.query(phi_x) for _ in range(3)], t

        a, t = answers(np.random.default_rng(5))
        parent = np.random.default_rng(5)
        b, _ = answers(parent, after=parent)
        assert a == b  # reproducible from the seed, and independent of the caller's later draws
        used = np.random.default_rng(5)
        answers(used)
        assert used.random() == np.random.default_rng(5).random()  # the caller's stream is not consumed
        for name in dir(t):
            if not name.startswith("__"):
                value = getattr(t, name, None)
                assert not isinstance(value, (np.random.Generator, np.random.BitGenerator)), name

    def test_system_exit_on_the_holdout_counts_as_zero(self):
        def exits_on_holdout(d):
            if len(d) == len(HOLD) and d["x"].iloc[0] == SECRET:
                raise SystemExit(1)
            return d["x"].to_numpy()

        t = Thresholdout(TRAIN, HOLD, threshold=0.5, sigma=1e-4, budget=1, rng=3)
        assert 0.0 <= t.query(exits_on_holdout) <= 1.0 and t.n_queries == 1

    def test_parameter_errors_name_the_argument(self):
        with pytest.raises(ValueError, match=r"`sigma` must be below .* for a holdout of 500 rows"):
            Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=1e10, budget=1)
        with pytest.raises(ValueError, match=r"`train` has more than one column labelled \['x'\]"):
            Thresholdout(pd.concat([TRAIN, TRAIN], axis=1), HOLD, threshold=0.04, sigma=0.01, budget=1)
        with pytest.raises(TypeError, match="`one_sided` must be True or False"):
            Thresholdout(TRAIN, HOLD, threshold=0.04, sigma=0.01, budget=1, one_sided="yes")


class TestOnePassReductions:
    """The chunked one-pass sums of a query's values equal the plain two-pass definitions."""

    special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1e-300, 1.0 + 2**-52, 7.5, -3.0])

    @settings(max_examples=60, deadline=None)
    @given(n=st.integers(1, 3 * _CHUNK + 5), n_bad=st.integers(0, 6), data=st.data())
    def test_clipped_sum_is_the_sum_of_the_clipped_values(self, n, n_bad, data):
        vals = np.random.default_rng(n).random(n)
        for _ in range(n_bad):   # anywhere, chunk boundaries included
            vals[data.draw(st.integers(0, n - 1))] = data.draw(self.special)
        reference = np.clip(np.nan_to_num(vals, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
        # both are floating-point sums of the same n values in [0, 1]: within 2 n u of each other
        assert _clipped_sum(vals) == pytest.approx(math.fsum(reference), abs=2 * n * 2**-53 * max(1.0, n))
        assert _clipped_sum(reference) == pytest.approx(math.fsum(reference), abs=2 * n * 2**-53 * max(1.0, n))

    @settings(max_examples=40, deadline=None)
    @given(n=st.integers(1, 3 * _CHUNK + 5), data=st.data())
    def test_training_check_finds_a_bad_value_in_any_chunk(self, n, data):
        vals = np.random.default_rng(n).random(n)
        frame = pd.DataFrame({"x": vals})
        assert _evaluate_training(phi_x, frame) == pytest.approx(vals.mean(), rel=1e-12)
        bad = data.draw(st.sampled_from([np.nan, np.inf, -np.inf, -1e-300, 1.0 + 2**-52]))
        vals[data.draw(st.integers(0, n - 1))] = bad
        with pytest.raises(ValueError, match=r"`phi` must map every row into \[0, 1\]"):
            _evaluate_training(phi_x, pd.DataFrame({"x": vals}))
        vals[np.isnan(vals) | (vals < 0) | (vals > 1)] = -0.0   # negative zero is in [0, 1]
        _evaluate_training(phi_x, pd.DataFrame({"x": vals}))
