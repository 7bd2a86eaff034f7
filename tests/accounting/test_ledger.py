"""The ledger: order rules (THEORY.md 2.7), budgets, no trace of refused steps, JSON round trip."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from selective import BudgetExceededError, CompositionOrderError, NoBoundError, SelectiveWarning
from selective.exceptions import RecordFormatError
from selective.accounting import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ZCDP,
    ApproxDP,
    DescriptionLength,
    Ledger,
    MaxInfo,
    MutualInfo,
    PureDP,
    compose_maxinfo,
    maxinfo_description_length,
    maxinfo_pure_dp_all_distributions,
    maxinfo_pure_dp_product,
    mi_pure_dp_product,
    mi_zcdp_product,
)

pure = st.builds(PureDP, epsilon=st.floats(1e-4, 2.0))
dl = st.builds(DescriptionLength, n_outcomes=st.integers(1, 10**6))
zc = st.builds(ZCDP, rho=st.floats(1e-6, 1.0))
approx_dp = st.builds(ApproxDP, epsilon=st.floats(0.01, 1), delta=st.floats(1e-9, 0.1))
steps = st.one_of(pure, dl)
any_steps = st.one_of(pure, dl, zc)


def quiet_record(ledger, cert, label=""):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        return ledger.record(cert, label)


class TestLedgerRecord:
    def test_ledger_iv(self):
        with pytest.raises(ValueError, match=r"`n_rows` must be an integer in \[1, 9007199254740992\]; got 0"):
            Ledger(0)
        with pytest.raises(ValueError, match="`budget_beta` must be given"):
            Ledger(10, budget_bits=5)
        with pytest.raises(ValueError, match="`budget_epsilon`"):
            Ledger(10, budget_epsilon=-1)
        led = Ledger(10)
        with pytest.raises(TypeError, match="`certificate` must be one of"):
            led.record(0.1)
        with pytest.raises(TypeError, match="`label` must be a string"):
            led.record(PureDP(0.1), label=3)
        assert len(led) == 0

    def test_approx_dp_after_description_length_is_refused(self):
        led = Ledger(100)
        led.record(DescriptionLength(10), "top-1 of 10")
        before = led.to_json()
        with pytest.raises(CompositionOrderError, match="after a description-length step.*Record DP steps first"):
            led.record(ApproxDP(1.0, 1e-6))
        assert led.to_json() == before

    def test_approx_dp_first_is_recorded_but_has_no_numbers(self):
        led = Ledger(100)
        led.record(ApproxDP(0.5, 1e-9), "gaussian screen")
        t = led.totals()
        assert t.maxinfo is None and "open" in t.maxinfo_reason
        assert t.mutual_info is None and t.union is None
        with pytest.raises(NoBoundError):
            led.max_info(0.01)
        with pytest.raises(NoBoundError):
            led.mutual_info()
        # a description-length step after it is fine (approx DP came first) ...
        led.record(DescriptionLength(5))
        # ... but no further approximate DP
        with pytest.raises(CompositionOrderError):
            led.record(ApproxDP(0.5, 1e-9))

    def test_pure_dp_after_description_length_falls_back_to_theorem_19(self):
        led = Ledger(1000)
        led.record(DescriptionLength(16))
        with pytest.warns(SelectiveWarning, match="Theorem 19"):
            led.record(PureDP(0.001))
        # THEORY vector maxinfo_composition_dl_then_pure_dp: log2(16/beta1) + log2(e) eps n
        want = compose_maxinfo(maxinfo_description_length(16, 1e-6), maxinfo_pure_dp_all_distributions(0.001, 1000))
        got = led.max_info(1e-6)
        assert got.bits == pytest.approx(want.bits, rel=1e-12)
        assert got.scope == ANY_DISTRIBUTION
        assert any("Theorem 19" in n for n in led.totals().notes)

    def test_dp_then_description_length_uses_product_bound(self):
        led = Ledger(10_000)
        led.record(PureDP(0.01))
        led.record(DescriptionLength(1000))
        # the optimal split is at least as good as any fixed split (THEORY vector dp_then_dl)
        fixed = compose_maxinfo(maxinfo_pure_dp_product(0.01, 10_000, 0.01), maxinfo_description_length(1000, 0.01))
        got = led.max_info(0.02)
        assert got.scope == PRODUCT
        assert got.bits <= fixed.bits
        assert got.bits >= fixed.bits - 3  # and not absurdly smaller

    def test_dp_block_composed_as_privacy(self):
        two = Ledger(1000)
        two.record(PureDP(0.01))
        two.record(PureDP(0.02))
        one = Ledger(1000)
        one.record(PureDP(0.03))
        assert two.max_info(0.01).bits == pytest.approx(one.max_info(0.01).bits, rel=1e-12)
        assert two.max_info(0.01).bits == pytest.approx(maxinfo_pure_dp_product(0.03, 1000, 0.01).bits, rel=1e-9)

    def test_consecutive_description_length_steps_merge(self):
        a = Ledger(100)
        a.record(DescriptionLength(10))
        a.record(DescriptionLength(20))
        b = Ledger(100)
        b.record(DescriptionLength(200))
        assert a.max_info(0.01).bits == pytest.approx(b.max_info(0.01).bits, rel=1e-12)

    def test_product_scope_certificates_only_first(self):
        led = Ledger(100)
        led.record(MaxInfo(bits=2.0, beta=0.001, scope=PRODUCT))
        with pytest.raises(CompositionOrderError, match="first step alone"):
            led.record(MutualInfo(bits=1.0, scope=PRODUCT))
        led.record(MaxInfo(bits=1.0, beta=0.0, scope=ANY_DISTRIBUTION))
        assert led.max_info(0.01).bits == pytest.approx(3.0)
        assert led.max_info(0.01).scope == PRODUCT

    def test_mutual_information_totals(self):
        led = Ledger(500)
        led.record(PureDP(0.01))
        led.record(ZCDP(1e-5))
        led.record(DescriptionLength(8))
        want = mi_pure_dp_product(0.01, 500).bits + mi_zcdp_product(1e-5, 500).bits + 3.0
        assert led.mutual_info().bits == pytest.approx(want, rel=1e-12)
        assert led.mutual_info().scope == PRODUCT
        assert led.totals().maxinfo is None  # zCDP has no max-information theorem here

    def test_pure_dp_rho_tightens_mutual_information(self):
        a, b = Ledger(100), Ledger(100)
        a.record(PureDP(0.5))
        b.record(PureDP(0.5, rho=0.5**2 / 8))
        assert b.mutual_info().bits < a.mutual_info().bits
        assert b.max_info(0.01).bits == a.max_info(0.01).bits


class TestLedgerBudget:
    def test_epsilon_budget_boundary(self):
        led = Ledger(100, budget_epsilon=1.0)
        led.record(PureDP(0.6))
        led.record(PureDP(0.4))  # exactly the budget is accepted
        before = led.to_json()
        with pytest.raises(BudgetExceededError, match="`budget_epsilon`"):
            led.record(PureDP(1e-6))
        assert led.to_json() == before
        with pytest.raises(BudgetExceededError, match="zCDP"):
            led.record(ZCDP(0.1))
        led.record(DescriptionLength(10))  # no epsilon spent

    def test_bits_budget_boundary(self):
        bits = maxinfo_description_length(1024, 0.001).bits
        ok = Ledger(100, budget_bits=bits, budget_beta=0.001)
        ok.record(DescriptionLength(1024))  # the claimed bound is accepted
        tight = Ledger(100, budget_bits=bits * (1 - 1e-9), budget_beta=0.001)
        with pytest.raises(BudgetExceededError, match="above the budget"):
            tight.record(DescriptionLength(1024))  # a slightly smaller budget refuses it
        assert len(tight) == 0

    def test_bits_budget_needs_a_bound(self):
        led = Ledger(100, budget_bits=50, budget_beta=0.01)
        with pytest.raises(BudgetExceededError, match="zCDP"):
            led.record(ZCDP(1e-4))
        assert len(led) == 0


class TestLedgerJson:
    def test_round_trip(self):
        led = Ledger(1234, budget_bits=1e6, budget_beta=1e-3)
        led.record(MaxInfo(0.5, 1e-4, PRODUCT), "external, first")
        quiet_record(led, PureDP(0.1, rho=0.001), "screen")
        quiet_record(led, PureDP(0.01), "second")
        led.record(DescriptionLength(math.comb(1000, 20)), "top-20 of 1000")
        quiet_record(led, PureDP(0.2), "later")
        led.record(DescriptionLength(3), "last")
        back = Ledger.from_json(led.to_json())
        assert back == led
        assert back.to_json() == led.to_json()
        assert back.steps[3].certificate.n_outcomes == math.comb(1000, 20)

    def test_from_json_iv(self):
        with pytest.raises(ValueError, match="not valid JSON"):
            Ledger.from_json("{")
        with pytest.raises(ValueError, match="not a ledger record"):
            Ledger.from_json('{"format": "x"}')
        with pytest.raises(ValueError, match="unknown certificate kind"):
            Ledger.from_json('{"format": "selective.ledger", "version": 1, "n_rows": 3, '
                             '"steps": [{"index": 0, "certificate": {"kind": "magic"}}]}')
        bad_order = ('{"format": "selective.ledger", "version": 1, "n_rows": 3, "steps": ['
                     '{"index": 0, "certificate": {"kind": "description_length", "n_outcomes": 2}},'
                     '{"index": 1, "certificate": {"kind": "approx_dp", "epsilon": 1, "delta": 0.001}}]}')
        with pytest.raises(RecordFormatError, match=r"steps\[1\]'.*CompositionOrderError: Cannot record ApproxDP"):
            Ledger.from_json(bad_order)


# ------------------------------------------------------------------------------------------
# Property tests
# ------------------------------------------------------------------------------------------


@given(history=st.lists(steps, max_size=6), new=steps)
@settings(deadline=None, max_examples=60)
def test_recording_never_lowers_the_max_information(history, new):
    led = Ledger(n_rows=100)
    for s in history:
        quiet_record(led, s)
    before = led.max_info(beta=1e-3).bits
    quiet_record(led, new)
    assert led.max_info(beta=1e-3).bits >= before - 1e-9 * max(1.0, before)


@given(history=st.lists(any_steps, max_size=6), new=any_steps)
@settings(deadline=None, max_examples=60)
def test_recording_never_lowers_the_mutual_information(history, new):
    led = Ledger(n_rows=100)
    for s in history:
        quiet_record(led, s)
    before = led.mutual_info().bits
    quiet_record(led, new)
    assert led.mutual_info().bits >= before


@given(history=st.lists(st.one_of(pure, dl, zc, approx_dp), max_size=6))
@settings(deadline=None, max_examples=80)
def test_order_rule_and_refused_steps_leave_no_trace(history):
    led = Ledger(n_rows=50, budget_epsilon=3.0)
    for s in history:
        before = led.to_json()
        seen_non_dp = any(isinstance(c, DescriptionLength) for c in led.certificates)
        try:
            quiet_record(led, s)
        except CompositionOrderError:
            assert isinstance(s, ApproxDP) and seen_non_dp
            assert led.to_json() == before
        except BudgetExceededError:
            assert led.to_json() == before
        else:
            assert led.to_json() != before
    # a ledger read back equals the one written
    assert Ledger.from_json(led.to_json()) == led


@given(dls=st.lists(st.integers(1, 10**4), min_size=1, max_size=4), beta=st.floats(1e-6, 0.2))
@example(dls=[1, 5, 1], beta=0.01)
@settings(deadline=None)
def test_description_length_composition_adds(dls, beta):
    """Separated by pure-DP steps, description-length blocks add their bits (Lemma 14)."""
    led = Ledger(n_rows=10)
    for j, N in enumerate(dls):
        if j:
            quiet_record(led, PureDP(0.01))
        led.record(DescriptionLength(N))
    J = sum(N > 1 for N in dls)  # a step with a single possible output reveals nothing
    k = led.max_info(beta).bits
    # equal split of beta over the J informative blocks plus Theorem 19 for the DP steps
    want = (sum(math.log2(N) for N in dls) + (J * math.log2(J / beta) if J else 0.0)
            + (len(dls) - 1) * 0.01 * 10 * math.log2(math.e))
    assert k == pytest.approx(want, rel=1e-9)
