"""The ledger: order rules (THEORY.md 2.7), budgets, no trace of refused steps, JSON round trip."""

from __future__ import annotations

import json
import math
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from selective import BudgetExceededError, CompositionOrderError, NoBoundError, SelectiveWarning
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
from selective.exceptions import RecordFormatError

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


# ------------------------------------------------------------------------------------------
# Huge counts, malformed records, and the running totals
# ------------------------------------------------------------------------------------------


class TestHugeCounts:
    def test_a_count_of_thousands_of_digits_round_trips_and_prints_short(self):
        big = math.comb(50_000, 5_000)  # about 7,000 decimal digits: beyond Python's default str() limit
        cert = DescriptionLength(big)
        assert len(repr(cert)) < 80 and "2**" in repr(cert)
        assert "2^" in cert.describe()
        led = Ledger(1000)
        led.record(cert, "huge")
        text = led.to_json()
        assert len(text) < 2 * big.bit_length() // 4 + 500  # hexadecimal text, not a decimal expansion
        back = Ledger.from_json(text)
        assert back == led and back.steps[0].certificate.n_outcomes == big
        assert led.rows()[0]["cumulative_mutual_info_bits"] == pytest.approx(math.log2(big))

    def test_small_counts_stay_json_integers(self):
        d = DescriptionLength(2**53 - 1).to_dict()
        assert d == {"kind": "description_length", "n_outcomes": 2**53 - 1}
        assert DescriptionLength(2**53).to_dict()["n_outcomes"] == hex(2**53)

    def test_version_1_ledgers_are_still_read(self):
        v1 = ('{"format": "selective.ledger", "version": 1, "n_rows": 3, "budget": null, "steps": '
              '[{"index": 0, "label": "a", "certificate": {"kind": "description_length", "n_outcomes": 4}}]}')
        assert Ledger.from_json(v1).max_info(0.5).bits == pytest.approx(2 + 1)


def _valid_record():
    led = Ledger(100, budget_epsilon=5.0)
    led.record(PureDP(0.5), "screen")
    led.record(DescriptionLength(10), "pick")
    return led.to_dict()


MALFORMED = [
    ("deep nesting", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("not an object", "[1, 2]", "expected a JSON object"),
    ("missing steps", '{"format": "selective.ledger", "version": 2, "n_rows": 3}', "field 'steps'"),
    ("steps not a list", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": {}}', "field 'steps'"),
    ("step not an object", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [7]}',
     r"field 'steps\[0\]'"),
    ("bad n_rows", '{"format": "selective.ledger", "version": 2, "n_rows": "3", "steps": []}', "field 'n_rows'"),
    ("huge n_rows", '{"format": "selective.ledger", "version": 2, "n_rows": 1' + "0" * 400 + ', "steps": []}',
     "field 'n_rows'"),
    ("boolean version", '{"format": "selective.ledger", "version": true, "n_rows": 3, "steps": []}',
     "field 'version'"),
    ("budget not an object", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "budget": 4, "steps": []}',
     "field 'budget'"),
    ("overflowing epsilon", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [{"index": 0, '
     '"certificate": {"kind": "pure_dp", "epsilon": 1e400}}]}', r"NaN|Infinity|finite"),
    ("unknown certificate field", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [{"index": 0, '
     '"certificate": {"kind": "pure_dp", "epsilon": 1, "delta": 0.1}}]}', r"steps\[0\].certificate.*'delta'"),
    ("label not text", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [{"index": 0, '
     '"label": 5, "certificate": {"kind": "pure_dp", "epsilon": 1}}]}', r"steps\[0\].label"),
    ("digits as text", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [{"index": 0, '
     '"certificate": {"kind": "description_length", "n_outcomes": "12"}}]}', "hexadecimal text"),
    ("forged log2", '{"format": "selective.ledger", "version": 2, "n_rows": 3, "steps": [{"index": 0, '
     '"certificate": {"kind": "description_length", "n_outcomes": "0x40000000000000", "log2_n_outcomes": 2.0}}]}',
     "log2_n_outcomes"),
    ("NaN literal", '{"format": "selective.ledger", "version": 2, "n_rows": NaN, "steps": []}', "NaN"),
    ("not text", b"\xff\xfe{", "not valid JSON"),
]


@pytest.mark.parametrize("name,text,match", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_ledger_json_raises_one_documented_error(name, text, match):
    with pytest.raises(RecordFormatError, match=match) as info:
        Ledger.from_json(text, source="ledger.json")
    assert str(info.value).startswith("ledger.json")
    assert isinstance(info.value, ValueError)


def test_every_field_of_a_valid_record_is_checked():
    """Removing any key of a valid record, or giving it a value of another type, is refused with
    the one documented error naming the source, unless the result is itself a valid record (an
    empty ledger, no budget, no label, no rho), listed here."""
    record = _valid_record()
    valid_variants = {
        (("steps",), "[]"), (("budget",), "<drop>"), (("budget",), "None"), (("budget",), "{}"),
        (("budget", "bits"), "<drop>"), (("budget", "bits"), "None"), (("budget", "beta"), "<drop>"),
        (("budget", "beta"), "None"), (("budget", "epsilon"), "<drop>"), (("budget", "epsilon"), "None"),
        (("steps", 0, "label"), "<drop>"), (("steps", 1, "label"), "<drop>"), (("steps", 0, "label"), "'text'"),
        (("steps", 1, "label"), "'text'"), (("steps", 0, "certificate", "rho"), "<drop>"),
        (("steps", 0, "certificate", "rho"), "None"),
    }
    paths = [(k,) for k in record] + [("budget", k) for k in record["budget"]] + [
        ("steps", i, k) for i in range(2) for k in record["steps"][i]] + [
        ("steps", i, "certificate", k) for i in range(2) for k in record["steps"][i]["certificate"]]
    refused = 0
    for path in paths:
        for replacement in ("<drop>", "text", [], {}, None, True, -1):
            rec = json.loads(json.dumps(record))
            parent = rec
            for p in path[:-1]:
                parent = parent[p]
            if replacement == "<drop>":
                del parent[path[-1]]
            else:
                parent[path[-1]] = replacement
            try:
                Ledger.from_dict(rec, source="r.json")
            except RecordFormatError as exc:
                assert str(exc).startswith("r.json")
                refused += 1
            else:
                shown = "<drop>" if replacement == "<drop>" else repr(replacement)
                assert (path, shown) in valid_variants, (path, replacement)
    assert refused > 100


@given(certs=st.lists(st.one_of(pure, dl, zc, st.builds(MaxInfo, bits=st.floats(0, 50), beta=st.floats(0, 0.01),
                                                            scope=st.just(ANY_DISTRIBUTION))), max_size=12),
       beta=st.floats(1e-6, 0.5))
@settings(deadline=None, max_examples=80)
def test_running_totals_equal_totals_from_scratch(certs, beta):
    """The rows come from running sums; each must equal the totals of its prefix, composed anew."""
    from selective.accounting.ledger import compute_totals

    led = Ledger(n_rows=200)
    for c in certs:
        quiet_record(led, c)
    rows = led.rows(beta=beta)
    assert len(rows) == len(led)
    for k, row in enumerate(rows):
        t = compute_totals(200, led.certificates[: k + 1])
        try:
            want = t.maxinfo.bound(beta).bits if t.maxinfo is not None else math.nan
        except NoBoundError:
            want = math.nan
        got = row["cumulative_maxinfo_bits"]
        assert (math.isnan(got) and math.isnan(want)) or got == want
        mi = t.mutual_info.bits if t.mutual_info is not None else math.nan
        assert (math.isnan(row["cumulative_mutual_info_bits"]) and math.isnan(mi)) or (
            row["cumulative_mutual_info_bits"] == mi)
    assert led.totals() == compute_totals(200, led.certificates)


def test_rows_do_not_recompute_from_scratch(monkeypatch):
    """rows() makes one pass: composing from scratch is never called (no timing involved)."""
    import selective.accounting.ledger as L

    led = Ledger(1000)
    for i in range(300):
        quiet_record(led, PureDP(1e-4) if i % 3 == 0 else DescriptionLength(7 + i))
    calls = []
    real = L._Running.add
    monkeypatch.setattr(L._Running, "add", lambda self, *a, **k: (calls.append(1), real(self, *a, **k))[1])
    monkeypatch.setattr(L, "compute_totals", lambda *a, **k: pytest.fail("rows() recomposed a prefix"))
    led.rows()
    assert len(calls) == 300  # one composition step per ledger step
    calls.clear()
    quiet_record(led, DescriptionLength(3))
    assert len(calls) == 1  # recording adds one step to the running sums


def test_extreme_values_give_no_bound_rather_than_an_error():
    led = Ledger(n_rows=2**53)
    quiet_record(led, PureDP(1e300))
    quiet_record(led, DescriptionLength(10))
    quiet_record(led, PureDP(1e300))
    quiet_record(led, ZCDP(1e300))
    rows = led.rows()
    assert all(math.isnan(r["cumulative_maxinfo_bits"]) for r in rows[2:])
    assert math.isnan(rows[-1]["cumulative_mutual_info_bits"])
    assert led.totals().mutual_info is None and "range of a double" in led.totals().mutual_info_reason
