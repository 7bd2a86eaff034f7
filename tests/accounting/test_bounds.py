"""Bounds of THEORY.md sections 2 and 4: bad input, monotonicity, composition, units."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selective import CompositionOrderError, NoBoundError
from selective.accounting import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ApproxDP,
    DescriptionLength,
    MaxInfo,
    MutualInfo,
    PureDP,
    compose_maxinfo,
    maxinfo_approx_dp,
    maxinfo_description_length,
    maxinfo_from_mutual_information,
    maxinfo_pure_dp_all_distributions,
    maxinfo_pure_dp_product,
    mi_description_length,
    mi_pure_dp_any_distribution,
    mi_pure_dp_product,
    mi_zcdp_any_distribution,
    mi_zcdp_product,
)
from selective.accounting.bounds import LOG2_E, exact_maxinfo_randomized_response

eps_st = st.floats(1e-4, 5.0)
n_st = st.integers(1, 10**6)
beta_st = st.floats(1e-12, 0.5)


class TestCertificates:
    def test_certificates_iv(self):
        with pytest.raises(ValueError, match="`epsilon` must be a finite positive"):
            PureDP(-0.1)
        with pytest.raises(ValueError, match="`epsilon`"):
            PureDP(float("nan"))
        with pytest.raises(TypeError, match="`epsilon`"):
            PureDP("0.1")
        with pytest.raises(TypeError, match="`epsilon`"):
            PureDP(True)
        with pytest.raises(ValueError, match="Use PureDP"):
            ApproxDP(1.0, 0.0)
        with pytest.raises(ValueError, match=r"`delta` must be a real number in \(0, 1\)"):
            ApproxDP(1.0, 1.0)
        with pytest.raises(ValueError, match="`n_outcomes` must be an integer >= 1; got 0"):
            DescriptionLength(0)
        with pytest.raises(TypeError, match="`n_outcomes`"):
            DescriptionLength(2.5)
        with pytest.raises(ValueError, match="`scope`"):
            MaxInfo(bits=1.0, beta=0.1, scope="iid")
        with pytest.raises(ValueError, match="`beta`"):
            MaxInfo(bits=1.0, beta=1.0, scope=ANY_DISTRIBUTION)
        with pytest.raises(ValueError, match="`bits`"):
            MutualInfo(bits=-1.0, scope=ANY_DISTRIBUTION)

    def test_certificates_are_immutable(self):
        c = PureDP(0.1)
        with pytest.raises(AttributeError):
            c.epsilon = 1.0  # type: ignore[misc]

    def test_huge_outcome_counts_are_exact(self):
        N = math.comb(10_000, 50)
        assert DescriptionLength(N).log2_n_outcomes == pytest.approx(math.log2(N), rel=1e-15)
        assert maxinfo_description_length(N, 1e-3).bits == pytest.approx(math.log2(N) + math.log2(1e3), rel=1e-14)


class TestMaxInfoBounds:
    def test_maxinfo_iv(self):
        with pytest.raises(ValueError, match="`n_rows` must be an integer >= 1; got 0"):
            maxinfo_pure_dp_all_distributions(0.1, 0)
        with pytest.raises(ValueError, match=r"`beta` must be a real number in \(0, 1\); got 0"):
            maxinfo_pure_dp_product(0.1, 10, 0)
        with pytest.raises(ValueError, match="`beta`"):
            maxinfo_description_length(10, 1.5)
        with pytest.raises(ValueError, match="`epsilon`"):
            maxinfo_pure_dp_product(0.0, 10, 0.1)

    def test_approx_dp_has_no_number(self):
        with pytest.raises(NoBoundError, match="constants"):
            maxinfo_approx_dp(ApproxDP(0.1, 1e-9), 100, 0.01)

    def test_units_pure_dp_is_bits_not_nats(self):
        # Theorem 19 is log2(e) * eps * n bits, not eps * n
        assert maxinfo_pure_dp_all_distributions(1.0, 1).bits == pytest.approx(LOG2_E, rel=1e-15)

    @given(eps=eps_st, n=n_st, f=st.floats(1.0, 10.0))
    def test_thm19_monotone_in_epsilon_and_n(self, eps, n, f):
        base = maxinfo_pure_dp_all_distributions(eps, n).bits
        assert maxinfo_pure_dp_all_distributions(eps * f, n).bits >= base
        assert maxinfo_pure_dp_all_distributions(eps, n + 1).bits >= base

    @given(eps=eps_st, n=n_st, beta=beta_st, f=st.floats(1.0, 10.0))
    def test_thm20_monotone(self, eps, n, beta, f):
        base = maxinfo_pure_dp_product(eps, n, beta).bits
        assert maxinfo_pure_dp_product(eps * f, n, beta).bits >= base
        assert maxinfo_pure_dp_product(eps, n + 1, beta).bits >= base
        assert maxinfo_pure_dp_product(eps, n, beta / f).bits >= base * (1 - 1e-12)

    @given(N=st.integers(1, 10**30), beta=beta_st)
    def test_description_length_monotone_in_outcomes(self, N, beta):
        bigger, base = maxinfo_description_length(N + 1, beta).bits, maxinfo_description_length(N, beta).bits
        assert bigger >= base
        if N < 2**40:  # below that, log2(N + 1) and log2(N) differ in double precision
            assert bigger > base

    @given(m=st.floats(0, 100), beta=beta_st, dm=st.floats(0, 10))
    def test_mi_to_maxinfo_monotone_in_m(self, m, beta, dm):
        a = maxinfo_from_mutual_information(MutualInfo(m, ANY_DISTRIBUTION), beta).bits
        b = maxinfo_from_mutual_information(MutualInfo(m + dm, ANY_DISTRIBUTION), beta).bits
        assert b >= a
        assert maxinfo_from_mutual_information(MutualInfo(m, ANY_DISTRIBUTION), beta, constant="slide").bits >= a

    def test_mi_to_maxinfo_keeps_scope(self):
        assert maxinfo_from_mutual_information(MutualInfo(1.0, PRODUCT), 0.1).scope == PRODUCT

    @given(eps=st.floats(0.01, 2.0), n=st.integers(1, 200), beta=st.floats(1e-8, 0.3))
    @settings(max_examples=40, deadline=None)
    def test_exact_randomized_response_below_both_bounds(self, eps, n, beta):
        exact = exact_maxinfo_randomized_response(eps, n, beta)
        assert exact <= maxinfo_pure_dp_all_distributions(eps, n).bits + 1e-9
        assert exact <= maxinfo_pure_dp_product(eps, n, beta).bits + 1e-9


class TestComposeMaxInfo:
    @given(
        ks=st.lists(st.floats(0, 100), min_size=1, max_size=5),
        bs=st.lists(st.floats(0, 0.1), min_size=5, max_size=5),
    )
    def test_composition_adds(self, ks, bs):
        bounds = [MaxInfo(k, b, ANY_DISTRIBUTION) for k, b in zip(ks, bs[: len(ks)], strict=True)]
        c = compose_maxinfo(*bounds)
        assert c.bits == pytest.approx(math.fsum(ks), rel=1e-12, abs=1e-12)
        assert c.beta == pytest.approx(math.fsum(bs[: len(ks)]), rel=1e-12, abs=1e-15)

    def test_product_only_first(self):
        p = maxinfo_pure_dp_product(0.01, 1000, 0.01)
        d = maxinfo_description_length(10, 0.01)
        assert compose_maxinfo(p, d).scope == PRODUCT
        with pytest.raises(CompositionOrderError, match="first step alone"):
            compose_maxinfo(d, p)

    def test_compose_iv(self):
        with pytest.raises(ValueError, match="at least one"):
            compose_maxinfo()
        with pytest.raises(TypeError, match=r"`bounds\[0\]`"):
            compose_maxinfo(PureDP(0.1))


class TestMutualInformationBounds:
    @given(eps=eps_st, n=n_st)
    def test_tanh_below_simple(self, eps, n):
        assert mi_pure_dp_product(eps, n).bits <= mi_pure_dp_product(eps, n, form="simple").bits * (1 + 1e-12)
        simple = mi_pure_dp_any_distribution(eps, n, form="simple").bits
        assert mi_pure_dp_any_distribution(eps, n).bits <= simple * (1 + 1e-12)

    @given(eps=eps_st, n=n_st, f=st.floats(1, 10))
    def test_monotone(self, eps, n, f):
        assert mi_pure_dp_product(eps * f, n).bits >= mi_pure_dp_product(eps, n).bits
        assert mi_pure_dp_product(eps, n + 1).bits >= mi_pure_dp_product(eps, n).bits
        assert mi_zcdp_product(eps * f, n).bits >= mi_zcdp_product(eps, n).bits
        assert mi_zcdp_any_distribution(eps, n).bits >= mi_zcdp_product(eps, n).bits

    def test_product_below_any(self):
        assert mi_pure_dp_product(0.01, 1000).bits < mi_pure_dp_any_distribution(0.01, 1000).bits

    def test_units(self):
        assert mi_description_length(2).bits == 1.0
        assert mi_description_length(2).nats == pytest.approx(math.log(2), rel=1e-15)
        assert mi_zcdp_product(1.0, 1).bits == pytest.approx(LOG2_E, rel=1e-15)

    def test_mi_iv(self):
        with pytest.raises(ValueError, match="`form`"):
            mi_pure_dp_product(0.1, 10, form="bits")
        with pytest.raises(ValueError, match="`rho`"):
            mi_zcdp_product(-1.0, 10)


def test_exact_randomized_response_at_beta_zero_is_the_pure_max_information():
    """THEORY.md 1.9: I_inf = n log2(2p); beta = 0 is defined, not refused, and the beta > 0
    values approach it from below."""
    import math

    from selective.accounting.bounds import exact_maxinfo_randomized_response

    eps, n = 0.3, 50
    p = math.exp(eps) / (1 + math.exp(eps))
    assert exact_maxinfo_randomized_response(eps, n, 0.0) == pytest.approx(n * math.log2(2 * p), rel=1e-15)
    near = exact_maxinfo_randomized_response(eps, n, 1e-12)
    assert near <= n * math.log2(2 * p) + 1e-12
    with pytest.raises(ValueError, match="beta"):
        exact_maxinfo_randomized_response(eps, n, -0.1)
