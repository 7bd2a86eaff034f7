"""Corrections of THEORY.md section 3: bad input, validity properties, duality between
γ(α) and the corrected p-value, and brute-force checks of the optimised routes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from selective import corrections as C
from selective.accounting import ANY_DISTRIBUTION, MaxInfo, MaxInfoFamily, MutualInfo, UnionRoute

p_st = st.floats(1e-300, 1.0)
alpha_st = st.floats(1e-4, 0.3)


class TestIV:
    def test_corrections_iv(self):
        with pytest.raises(ValueError, match=r"`alpha` must be a real number in \(0, 1\); got 1.5"):
            C.gamma_pure_dp_all_distributions(1.5, 0.1, 10)
        with pytest.raises(ValueError, match="`alpha`"):
            C.gamma_bonferroni(float("nan"), 3)
        with pytest.raises(ValueError, match=r"`bound.beta` must be below `alpha`"):
            C.gamma_from_maxinfo(0.05, MaxInfo(bits=1.0, beta=0.05, scope=ANY_DISTRIBUTION))
        with pytest.raises(ValueError, match=r"`pvalue` must hold p-values in \[0, 1\]; got nan"):
            C.corrected_pvalue_bonferroni([0.1, float("nan")], 3)
        with pytest.raises(ValueError, match="`pvalue`"):
            C.corrected_pvalue_pure_dp_product(1.2, 0.1, 10)
        with pytest.raises(ValueError, match="`epsilon`"):
            C.corrected_pvalue_pure_dp_product(0.1, -0.1, 10)
        with pytest.raises(ValueError, match="`n_outcomes`"):
            C.corrected_pvalue_bonferroni(0.1, 0)
        with pytest.raises(ValueError, match="`mi_bits`"):
            C.gamma_mi_kl(0.05, -1.0)
        with pytest.raises(ValueError, match="`form`"):
            C.gamma_mi_russo_zou(0.05, 0.1, form="slide")


SINGLE_ROUTES = [
    ("pure_dp_all", lambda a: C.gamma_pure_dp_all_distributions(a, 0.01, 300),
     lambda p: C.corrected_pvalue_pure_dp_all_distributions(p, 0.01, 300)),
    ("pure_dp_product", lambda a: C.gamma_pure_dp_product(a, 0.01, 2000),
     lambda p: C.corrected_pvalue_pure_dp_product(p, 0.01, 2000)),
    ("bonferroni", lambda a: C.gamma_bonferroni(a, 37), lambda p: C.corrected_pvalue_bonferroni(p, 37)),
    ("mi_kl", lambda a: C.gamma_mi_kl(a, 0.3), lambda p: C.corrected_pvalue_mi_kl(p, 0.3)),
    ("mi_russo_zou", lambda a: C.gamma_mi_russo_zou(a, 1e-5), lambda p: C.corrected_pvalue_mi_russo_zou(p, 1e-5)),
    ("mi_via_maxinfo", lambda a: C.gamma_mi_via_maxinfo(a, 0.2), lambda p: C.corrected_pvalue_mi_via_maxinfo(p, 0.2)),
    ("union", lambda a: C.gamma_union_dl_and_pure_dp_product(a, 50, 0.005, 5000),
     lambda p: C.corrected_pvalue_union_dl_and_pure_dp_product(p, 50, 0.005, 5000)),
    ("family", lambda a: C.gamma_maxinfo(a, FAMILY), lambda p: C.corrected_pvalue_maxinfo(p, FAMILY)),
    ("family_no_dp", lambda a: C.gamma_maxinfo(a, FAMILY_DL), lambda p: C.corrected_pvalue_maxinfo(p, FAMILY_DL)),
    ("union_route", lambda a: C.gamma_union(a, UNION), lambda p: C.corrected_pvalue_union(p, UNION)),
]
FAMILY = MaxInfoFamily(n_rows=4000, prefix_epsilon=0.004, dl_log2_outcomes=(3.0, 5.5), fixed_bits=1.25, fixed_beta=1e-4)
FAMILY_DL = MaxInfoFamily(n_rows=10, dl_log2_outcomes=(4.0,))
UNION = UnionRoute(n_rows=4000, log2_n_outcomes=8.5, dp_epsilon=0.004)


@pytest.mark.parametrize("name,gamma,pcorr", SINGLE_ROUTES, ids=[r[0] for r in SINGLE_ROUTES])
@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.05, 0.2])
def test_threshold_and_corrected_pvalue_are_dual(name, gamma, pcorr, alpha):
    """p <= gamma(alpha) iff p_corrected <= alpha: the corrected p-value at p = gamma(alpha) is
    alpha (THEORY.md 1.6). Checks each route's two computations against each other."""
    t = gamma(alpha)
    g = t.gamma
    assert g > 0  # parameters chosen so that gamma stays in the double range
    assert float(pcorr(g)) == pytest.approx(alpha, rel=1e-6)
    assert float(pcorr(g * 0.9)) <= alpha * (1 + 1e-9)
    assert float(pcorr(min(1.0, g * 1.1))) >= alpha * (1 - 1e-9)


@pytest.mark.parametrize("name,gamma,pcorr", SINGLE_ROUTES, ids=[r[0] for r in SINGLE_ROUTES])
@given(p=st.lists(p_st, min_size=1, max_size=20))
@settings(deadline=None, max_examples=30)
def test_corrected_pvalue_between_naive_and_one_and_monotone(name, gamma, pcorr, p):
    p = np.sort(np.array(p))
    q = np.asarray(pcorr(p))
    assert np.all(q >= p * (1 - 1e-12))
    assert np.all(q <= 1.0)
    assert np.all(np.diff(q) >= -1e-12 * q[1:])


def test_brute_force_family_pvalue():
    """The closed-form/1-D optimisation over the slack split equals a direct minimisation over
    (beta0, beta1, beta2)."""
    fam = FAMILY
    a, b = fam.prefix_epsilon**2 * fam.n_rows / 2, fam.prefix_epsilon * math.sqrt(fam.n_rows / 2)
    fixed_nats = (3.0 + 5.5 + fam.fixed_bits) * math.log(2)
    options = {"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000}

    def log_corrected(u, p):
        b0, b1, b2 = np.exp(u)
        k_nats = a + b * math.sqrt(math.log(2 / b0)) + fixed_nats - math.log(b1) - math.log(b2)
        return math.log(p * math.exp(k_nats) + b0 + b1 + b2 + fam.fixed_beta)

    for p in (1e-12, 1e-9, 1e-7):
        best = min((optimize.minimize(log_corrected, x0, args=(p,), method="Nelder-Mead", options=options)
                    for x0 in ([-8, -8, -8], [-12, -6, -5], [-5, -10, -9])), key=lambda r: r.fun)
        brute = math.exp(best.fun)
        got = float(C.corrected_pvalue_maxinfo(p, fam))
        assert got <= brute * (1 + 1e-7)  # never worse than a direct search ...
        assert got >= brute * (1 - 1e-4)  # ... and not better than the true optimum


def test_brute_force_family_gamma():
    fam = FAMILY
    a, b = fam.prefix_epsilon**2 * fam.n_rows / 2, fam.prefix_epsilon * math.sqrt(fam.n_rows / 2)
    alpha = 0.05
    fixed_nats = (3.0 + 5.5 + fam.fixed_bits) * math.log(2)

    def neg_log_gamma(u):
        b0, b1, b2 = np.exp(u)
        rest = alpha - fam.fixed_beta - b0 - b1 - b2
        if rest <= 0:
            return 1e9
        k = a + b * math.sqrt(math.log(2 / b0)) + fixed_nats - math.log(b1) - math.log(b2)
        return -(math.log(rest) - k)

    options = {"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000}
    best = min((optimize.minimize(neg_log_gamma, x0, method="Nelder-Mead", options=options)
                for x0 in ([-6, -4, -4], [-8, -5, -5])), key=lambda r: r.fun)
    got = C.gamma_maxinfo(alpha, fam).log2_gamma * math.log(2)
    assert got >= -best.fun - 1e-9
    assert got <= -best.fun + 1e-6


def test_family_reduces_to_single_theorems():
    n, eps = 1000, 0.01
    only_dp = MaxInfoFamily(n_rows=n, prefix_epsilon=eps)
    for p in (1e-10, 1e-6, 1e-3):
        best_single = min(C.corrected_pvalue_pure_dp_product(p, eps, n),
                          C.corrected_pvalue_pure_dp_all_distributions(p, eps, n))
        assert float(C.corrected_pvalue_maxinfo(p, only_dp)) == pytest.approx(best_single, rel=1e-9)
    only_dl = MaxInfoFamily(n_rows=n, dl_log2_outcomes=(math.log2(20),))
    assert float(C.corrected_pvalue_maxinfo(1e-6, only_dl)) == pytest.approx(
        C.corrected_pvalue_description_length(1e-6, 20), rel=1e-12)
    assert C.gamma_maxinfo(0.05, only_dl).log2_gamma == pytest.approx(
        C.gamma_description_length(0.05, 20).log2_gamma, rel=1e-12)
    union = UnionRoute(n_rows=n, log2_n_outcomes=math.log2(20), dp_epsilon=0.0)
    assert float(C.corrected_pvalue_union(1e-4, union)) == pytest.approx(20e-4, rel=1e-12)
    assert float(C.corrected_pvalue_maxinfo(0.0, FAMILY)) == FAMILY.fixed_beta
    assert float(C.corrected_pvalue_maxinfo(1.0, FAMILY)) == 1.0


def test_underflowing_thresholds_stay_exact_in_log_space():
    t = C.gamma_pure_dp_all_distributions(0.05, 1.0, 100_000)
    assert t.gamma == 0.0
    assert t.log2_gamma == pytest.approx(math.log2(0.05) - 100_000 * math.log2(math.e), rel=1e-14)
    assert C.corrected_pvalue_pure_dp_all_distributions(1e-300, 1.0, 100_000) == 1.0


@given(m=st.floats(1e-4, 10.0), alpha=st.floats(0.001, 0.2))
@settings(deadline=None, max_examples=60)
def test_kl_route_dominates_russo_zou(m, alpha):
    """THEORY.md 3.4a: the binary-KL threshold is never below Russo-Zou's."""
    assert C.gamma_mi_kl(alpha, m).log2_gamma >= C.gamma_mi_russo_zou(alpha, m).log2_gamma - 1e-9


@given(m=st.floats(0, 10.0), alpha=alpha_st, dm=st.floats(1e-3, 5))
@settings(deadline=None, max_examples=60)
def test_thresholds_decrease_with_information(m, alpha, dm):
    for fn in (C.gamma_mi_kl, C.gamma_mi_via_maxinfo, C.gamma_mi_russo_zou):
        assert fn(alpha, m + dm).log2_gamma <= fn(alpha, m).log2_gamma + 1e-12


@given(p=st.lists(p_st, min_size=1, max_size=10), m=st.floats(0, 5))
@settings(deadline=None, max_examples=40)
def test_best_mutual_information_column_is_the_minimum(p, m):
    mi = MutualInfo(m, ANY_DISTRIBUTION)
    best = np.asarray(C.corrected_pvalue_mutual_info(p, mi))
    for fn in (C.corrected_pvalue_mi_kl, C.corrected_pvalue_mi_russo_zou, C.corrected_pvalue_mi_via_maxinfo):
        assert np.all(best <= np.asarray(fn(p, m)) + 1e-15)


def test_interval_at_level_matches_quantiles():
    from scipy import stats

    lo, hi = C.interval_at_level(1.0, 2.0, math.log2(0.05))
    assert hi == pytest.approx(1.0 + 2.0 * stats.norm.isf(0.025), rel=1e-12)
    lo, hi = C.interval_at_level(0.0, 1.0, math.log2(1e-6), df=12)
    assert hi == pytest.approx(stats.t.isf(5e-7, 12), rel=1e-10)
    lo, hi = C.interval_at_level(0.0, 1.0, -2000.0)  # gamma = 2^-2000: still finite, very wide
    assert 50 < hi < 60 and lo == -hi
    lo, hi = C.interval_at_level(0.0, 1.0, -2000.0, df=30)
    assert math.isfinite(hi) and hi > 1e10


def test_extreme_inputs_do_not_crash():
    """Review findings: alpha / N below the double range in the union route, and a very large
    mutual information in the via-max-information route."""
    import math as _m

    from selective.accounting import ZCDP, DescriptionLength, Ledger, PureDP

    N = sum(_m.comb(20000, j) for j in range(121))  # log2 N ~ 1053.5: alpha / N is subnormal
    led = Ledger(n_rows=5000)
    led.record(PureDP(0.01))
    led.record(DescriptionLength(N))
    c = C.correct([1e-300, 0.5], led.totals(), alpha=0.05)
    assert _m.isfinite(c.gamma_best.log2_gamma) and c.gamma_best.log2_gamma < -1000
    t = C.gamma_union(0.05, UnionRoute(n_rows=5000, log2_n_outcomes=_m.log2(N), dp_epsilon=0.01))
    assert -1200 < t.log2_gamma < -1000
    g = C.gamma_mi_via_maxinfo(0.05, 1e15)
    assert g.log2_gamma == pytest.approx(_m.log2(0.05) + _m.log2(4 * 0.05 / _m.log(2) / (2 * 1e15)) - g.bits, rel=1e-9)
    led = Ledger(n_rows=10**6)
    led.record(DescriptionLength(10))
    led.record(ZCDP(0.01))
    assert C.correct([1e-3], led.totals(), alpha=1e-6).pvalue_best[0] == 1.0


def test_root_defined_thresholds_are_on_the_valid_side():
    """gamma_mi_kl: d(alpha || gamma) >= I at the returned gamma; corrected p: d(p~ || p) >= I
    (binary KL evaluated exactly in 50-digit decimal arithmetic)."""
    from decimal import Decimal, getcontext

    getcontext().prec = 50

    def kl(x: float, y: float) -> Decimal:
        X, Y = Decimal(x), Decimal(y)
        return X * (X / Y).ln() + (1 - X) * ((1 - X) / (1 - Y)).ln()

    for m, a in ((0.3, 0.05), (2.0, 0.01), (1e-4, 0.1)):
        info_nats = Decimal(m) * Decimal(2).ln()
        assert kl(a, C.gamma_mi_kl(a, m).gamma) >= info_nats
        q = float(C.corrected_pvalue_mi_kl(1e-6, m))
        assert q == 1.0 or kl(q, 1e-6) >= info_nats


TINY_ALPHAS = (1e-150, 1e-162, 1e-200, 1e-300, 5e-324)


@pytest.mark.parametrize("alpha", TINY_ALPHAS)
def test_thresholds_at_alpha_near_the_double_range(alpha):
    """Regression: ZeroDivisionError (alpha^2 underflowed in Russo-Zou) below alpha ~ 1e-162, and math
    domain errors (alpha / 2 underflowed) at the smallest doubles. Every threshold is now a valid
    number: at most log2(alpha) (a threshold never exceeds its level), -inf allowed (reject nothing)."""
    from selective.accounting import DescriptionLength, Ledger, PureDP

    thresholds = [
        C.gamma_bonferroni(alpha, 10), C.gamma_description_length(alpha, 10),
        C.gamma_pure_dp_all_distributions(alpha, 0.1, 100), C.gamma_pure_dp_product(alpha, 0.1, 100),
        C.gamma_union_dl_and_pure_dp_product(alpha, 10, 0.1, 100), C.gamma_mi_kl(alpha, 1.0),
        C.gamma_mi_russo_zou(alpha, 1.0), C.gamma_mi_russo_zou(alpha, 1.0, form="split"),
        C.gamma_mi_via_maxinfo(alpha, 1.0), C.gamma_mi_via_maxinfo(alpha, 1.0, form="beta_half_alpha"),
        C.gamma_mi_via_maxinfo(alpha, 1.0, form="slide"),
    ]
    for t in thresholds:
        assert not math.isnan(t.log2_gamma) and t.log2_gamma <= math.log2(alpha) + 1e-12, t
    assert C.gamma_bonferroni(alpha, 10).log2_gamma == pytest.approx(math.log2(alpha) - math.log2(10))
    assert C.gamma_description_length(alpha, 10).bits == pytest.approx(math.log2(10) - math.log2(alpha) + 1)
    for certs in ([DescriptionLength(10)], [PureDP(0.1)], [PureDP(0.1), DescriptionLength(7)]):
        led = Ledger(n_rows=100)
        for c in certs:
            led.record(c)
        for adaptive in (False, True):
            for n_candidates in (None, 5):
                res = C.correct([0.0, 1e-300, 0.01, 1.0], led.totals(), alpha=alpha, n_candidates=n_candidates,
                                adaptive=adaptive)
                assert res.gamma_best is None or res.gamma_best.log2_gamma <= math.log2(alpha) + 1e-12
                best = res.pvalue_best[~np.isnan(res.pvalue_best)]
                assert ((best >= 0) & (best <= 1)).all()


@pytest.mark.parametrize("eps", [1e10, 1e150, 1e300, 1.7e308])
@pytest.mark.parametrize("n", [1, 10**6, 10**18])
def test_huge_epsilon_gives_valid_numbers(eps, n):
    """Regression: NaN thresholds (Theorem 20 solver out of precision) and NaN corrected p-values at
    p = 0 (log 0 + inf) when epsilon n overflows. The corrected p-value of p = 0 is 0 (its limit), of
    p > 0 is 1 at this epsilon; thresholds are -inf or astronomically small, never NaN."""
    p = np.array([0.0, 1e-300, 0.01, 1.0])
    for f in (C.corrected_pvalue_pure_dp_all_distributions, C.corrected_pvalue_pure_dp_product):
        out = np.asarray(f(p, eps, n))
        assert out[0] == 0.0 and (out[1:] == 1.0).all()
    out = np.asarray(C.corrected_pvalue_union_dl_and_pure_dp_product(p, 10, eps, n))
    assert out[0] == 0.0 and (out[1:] == 1.0).all()
    route = UnionRoute(n_rows=n, log2_n_outcomes=3.0, dp_epsilon=eps)
    out = np.asarray(C.corrected_pvalue_union(p, route))
    assert out[0] == 0.0 and (out[1:] == 1.0).all()
    for t in (C.gamma_pure_dp_all_distributions(0.05, eps, n), C.gamma_pure_dp_product(0.05, eps, n),
              C.gamma_union_dl_and_pure_dp_product(0.05, 2, eps, n), C.gamma_union(0.05, route)):
        assert not math.isnan(t.log2_gamma) and t.log2_gamma < -1e9


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 500), first=st.floats(1e-6, 1.0, exclude_max=True), p=st.floats(0.0, 1.0),
       q=st.integers(1, 500))
def test_sparse_validate_weights_sum_to_one_and_the_correction_divides_by_them(m, first, p, q):
    w = C.sparse_validate_weights(m, first_weight=first)
    assert len(w) == m and math.isclose(w.sum(), 1.0, rel_tol=1e-12) and (w > 0).all()
    q = min(q, m)
    got = C.corrected_pvalue_sparse_validate(p, q, m, first_weight=first)
    assert got == min(1.0, p / w[q - 1]) and p <= got <= 1.0
    # the union bound: the thresholds alpha * w_q of the m positions spend exactly alpha
    alpha = 0.05
    assert math.isclose(sum(alpha * wq for wq in w), alpha, rel_tol=1e-12)


def test_sparse_validate_first_query_gives_the_two_sided_p_value_back_and_errors_name_the_argument():
    two_sided = 0.03  # the validated feature agrees with its training sign, so one-sided = half
    assert C.corrected_pvalue_sparse_validate(two_sided / 2, 1, 10) == pytest.approx(two_sided)
    assert C.corrected_pvalue_sparse_validate(two_sided / 2, 2, 10) == pytest.approx(two_sided / 2 * 18)
    np.testing.assert_allclose(C.corrected_pvalue_sparse_validate(np.array([0.01, 0.001]), np.array([1, 3]), 10),
                               [0.02, 0.018])
    assert C.sparse_validate_weights(1, first_weight=0.2).tolist() == [1.0]
    for kwargs, match in [(dict(position=0), r"`position` must hold integers in 1..m = 1..10; got 0"),
                          (dict(position=11), "got 11"), (dict(position=True), "got True"),
                          (dict(position=np.array([1, 2])), "shape of `pvalue`"),
                          (dict(first_weight=1.0), "`first_weight` must be below 1 when m > 1"),
                          (dict(first_weight=0.0), "`first_weight`")]:
        args = {"pvalue": 0.01, "position": 1, "m": 10, **kwargs}
        with pytest.raises(ValueError, match=match):
            C.corrected_pvalue_sparse_validate(**args)
