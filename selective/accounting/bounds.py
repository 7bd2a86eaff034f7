r"""One function per theorem: max-information and mutual-information bounds of selectors.

Every function names the theorem that licenses it, states its units (max-information in
**bits**, DP ε and zCDP ρ in **nats**, mutual information in bits unless the name says nats)
and refuses inputs outside the theorem's conditions with a ``ValueError`` that names the
argument, the value and the allowed range.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629
   (28 Sept 2015). Theorem numbers are the full version's, NIPS numbers in brackets.
.. [RRST] R. Rogers, A. Roth, A. Smith, O. Thakkar, "Max-information, differential privacy, and
   post-selection hypothesis testing", FOCS 2016, arXiv:1604.03924.
.. [BS] M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions,
   and lower bounds", TCC 2016, arXiv:1605.02065.
.. [STK24] T. Steinke, "Sharp RDP & zCDP from pure DP", differentialprivacy.org, 2024.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .._validation import check_int, check_positive, check_probability
from ..exceptions import CompositionOrderError, NoBoundError
from .certificates import ANY_DISTRIBUTION, PRODUCT, ApproxDP, MaxInfo, MutualInfo

__all__ = [
    "LOG2_E",
    "LN_2",
    "MI_TO_MAXINFO_CONSTANT_BITS",
    "maxinfo_pure_dp_all_distributions",
    "maxinfo_pure_dp_product",
    "maxinfo_approx_dp",
    "maxinfo_description_length",
    "maxinfo_from_mutual_information",
    "compose_maxinfo",
    "mi_description_length",
    "mi_pure_dp_product",
    "mi_pure_dp_any_distribution",
    "mi_zcdp_product",
    "mi_zcdp_any_distribution",
    "mi_gaussian_statistical_queries",
    "exact_maxinfo_randomized_response",
    "exact_mutual_information_randomized_response",
    "nats_to_bits",
    "bits_to_nats",
]

LOG2_E = 1.4426950408889634  # bits per nat
LN_2 = 0.6931471805599453  # nats per bit
#: :math:`\log_2(e)/e`, the additive constant of the MI -> max-information conversion (THEORY 2.6).
MI_TO_MAXINFO_CONSTANT_BITS = LOG2_E / math.e
#: The rounded-up constant printed on the RRST slides (still valid, slightly weaker).
MI_TO_MAXINFO_SLIDE_CONSTANT_BITS = 0.54


def nats_to_bits(nats: float) -> float:
    """Convert nats to bits (multiply by :math:`\\log_2 e`)."""
    return float(nats) * LOG2_E


def bits_to_nats(bits: float) -> float:
    """Convert bits to nats (multiply by :math:`\\ln 2`)."""
    return float(bits) * LN_2


# --------------------------------------------------------------------------------------------
# Max-information (bits)
# --------------------------------------------------------------------------------------------


def maxinfo_pure_dp_all_distributions(epsilon: float, n_rows: int) -> MaxInfo:
    r"""Max-information of a pure ε-DP algorithm, valid for every data distribution.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in nats, > 0.
    n_rows : int
        Number of rows n of the dataset, >= 1.

    Returns
    -------
    MaxInfo
        :math:`k = \log_2(e)\,\varepsilon n` bits with :math:`\beta = 0`, scope "any distribution".

    Notes
    -----
    [DFHPRR]_ Theorem 19 [NIPS Thm 7]: :math:`I_\infty(\mathcal A, n) \le \log_2(e)\varepsilon n`
    (group privacy over n changes). Valid at any position in a composition (THEORY.md 2.2).
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    return MaxInfo(bits=LOG2_E * eps * n, beta=0.0, scope=ANY_DISTRIBUTION)


def _thm20_nats(eps: float, n: int, beta):
    """Thm 20 bound in nats: eps^2 n / 2 + eps sqrt(n ln(2/beta) / 2) (vectorised over beta)."""
    return eps * eps * n / 2.0 + eps * np.sqrt(n * np.log(2.0 / np.asarray(beta, dtype=float)) / 2.0)


def maxinfo_pure_dp_product(epsilon: float, n_rows: int, beta: float) -> MaxInfo:
    r"""β-approximate max-information of a pure ε-DP algorithm on product (i.i.d.) data.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in nats, > 0.
    n_rows : int
        Number of rows n, >= 1.
    beta : float
        Slack β in (0, 1).

    Returns
    -------
    MaxInfo
        :math:`k = \log_2(e)\big(\varepsilon^2 n/2 + \varepsilon\sqrt{n\ln(2/\beta)/2}\big)` bits,
        scope "product".

    Notes
    -----
    [DFHPRR]_ Theorem 20 [NIPS Thm 8], proved by McDiarmid's inequality, so independent rows
    suffice (THEORY.md 2.3). A product-only bound may be used only for the first block of DP
    steps of an analysis (THEORY.md 2.7, rule 1).
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    b = check_probability("beta", beta, closed="neither")
    return MaxInfo(bits=LOG2_E * float(_thm20_nats(eps, n, b)), beta=b, scope=PRODUCT)


def maxinfo_approx_dp(certificate: ApproxDP, n_rows: int, beta: float) -> MaxInfo:
    r"""Refuse: no numeric max-information bound exists here for (ε, δ)-DP.

    Rogers, Roth, Smith and Thakkar [RRST]_ bound the max-information of (ε, δ)-DP algorithms on
    product distributions only up to constants hidden in O(.) that are not transcribed
    (THEORY.md 2.4); their lower bound shows that no all-distribution bound exists. Rather than
    invent constants, this function always raises :class:`~selective.NoBoundError`.
    """
    raise NoBoundError(
        f"No numeric max-information bound is available for {certificate.describe()}: the "
        "(epsilon, delta)-DP theorem of Rogers, Roth, Smith and Thakkar (FOCS 2016) has "
        "constants that are not available here, and approximate DP has no bound valid for "
        "all distributions. Use a pure-DP selector (PureDP) or a zCDP description with the "
        "mutual-information corrections instead."
    )


def maxinfo_description_length(n_outcomes: int, beta: float) -> MaxInfo:
    r"""β-approximate max-information of an algorithm with at most ``n_outcomes`` outputs.

    Parameters
    ----------
    n_outcomes : int
        :math:`|\mathcal Y|`, the number of possible outputs (for every fixing of the coins), >= 1.
    beta : float
        Slack β in (0, 1).

    Returns
    -------
    MaxInfo
        :math:`k = \log_2(|\mathcal Y|/\beta)` bits, scope "any distribution".

    Notes
    -----
    [DFHPRR]_ Theorem 17 [NIPS Thm 6]; for randomized algorithms with at most :math:`2^b`
    outputs per coin fixing, Theorem 30 gives :math:`b + \log_2(1/\beta)` (THEORY.md 2.5).
    """
    n_out = check_int("n_outcomes", n_outcomes, low=1)
    b = check_probability("beta", beta, closed="neither")
    return MaxInfo(bits=math.log2(n_out) - math.log2(b), beta=b, scope=ANY_DISTRIBUTION)


def maxinfo_from_mutual_information(mutual_info: MutualInfo, beta: float, *, constant: str = "exact") -> MaxInfo:
    r"""Approximate max-information implied by a mutual-information bound.

    Parameters
    ----------
    mutual_info : MutualInfo
        Bound :math:`I(S; \mathcal A(S)) \le m` bits.
    beta : float
        Slack β in (0, 1).
    constant : {"exact", "slide"}
        "exact" uses :math:`c = m + \log_2(e)/e`; "slide" the rounded-up 0.54 of the RRST slides
        (valid, slightly weaker).

    Returns
    -------
    MaxInfo
        :math:`k = c/\beta` bits with the scope of ``mutual_info``.

    Notes
    -----
    THEORY.md 2.6 (derived; matches RRST's 0.54): Markov's inequality on the positive part of
    the information density, whose negative part has mean at most :math:`\log_2(e)/e` bits,
    then DFHPRR Lemma 18.
    """
    if not isinstance(mutual_info, MutualInfo):
        raise TypeError(f"`mutual_info` must be a MutualInfo certificate; got {mutual_info!r}.")
    b = check_probability("beta", beta, closed="neither")
    if constant == "exact":
        c = mutual_info.bits + MI_TO_MAXINFO_CONSTANT_BITS
    elif constant == "slide":
        c = mutual_info.bits + MI_TO_MAXINFO_SLIDE_CONSTANT_BITS
    else:
        raise ValueError(f"`constant` must be 'exact' or 'slide'; got {constant!r}.")
    return MaxInfo(bits=c / b, beta=b, scope=mutual_info.scope)


def compose_maxinfo(*bounds: MaxInfo) -> MaxInfo:
    r"""Adaptive composition of max-information bounds, in the order the steps ran.

    Returns
    -------
    MaxInfo
        :math:`(\sum_i k_i, \sum_i \beta_i)`; scope "product" when the first bound is
        product-only, else "any distribution".

    Raises
    ------
    CompositionOrderError
        When a product-only bound is not the first one: after the first step the data follow
        the conditional law given the earlier outputs, which is not a product law, so later
        steps need bounds valid for every distribution (THEORY.md 2.7, rules 1-2; RRST).

    Notes
    -----
    [DFHPRR]_ Lemma 14 and Theorem 15 [NIPS Lemma 5]; THEORY.md 2.7 gives a proof of the
    :math:`\beta_1 + \beta_2` form that uses step 2's bound under the conditional law.
    """
    if not bounds:
        raise ValueError("`bounds` must hold at least one MaxInfo; got none.")
    for i, b in enumerate(bounds):
        if not isinstance(b, MaxInfo):
            raise TypeError(f"`bounds[{i}]` must be a MaxInfo; got {b!r}.")
        if i > 0 and b.scope == PRODUCT:
            raise CompositionOrderError(
                f"Cannot compose {b.describe()} at position {i}: a bound valid only for product "
                "data may be used for the first step alone, since later steps see the data "
                "conditioned on earlier outputs. Put the product-only step first, or use a bound "
                "valid for any distribution (e.g. Theorem 19 for pure DP)."
            )
    total_beta = math.fsum(b.beta for b in bounds)
    if total_beta >= 1.0:
        raise ValueError(f"the composed `beta` must be below 1; the bounds' betas add up to {total_beta!r}.")
    return MaxInfo(bits=math.fsum(b.bits for b in bounds), beta=total_beta, scope=bounds[0].scope)


# --------------------------------------------------------------------------------------------
# Mutual information
# --------------------------------------------------------------------------------------------


def mi_description_length(n_outcomes: int) -> MutualInfo:
    r"""Mutual information of an algorithm with at most ``n_outcomes`` outputs.

    :math:`I(S;\mathcal A(S)) \le H(\mathcal A(S)) \le \log_2|\mathcal Y|` bits, any distribution,
    any position (THEORY.md 4.1; standard entropy bound).
    """
    n_out = check_int("n_outcomes", n_outcomes, low=1)
    return MutualInfo(bits=math.log2(n_out), scope=ANY_DISTRIBUTION)


def _kl_pure_dp_nats(eps: float) -> float:
    """Worst KL divergence between neighbours for pure eps-DP: eps tanh(eps/2) nats (STK24)."""
    return eps * math.tanh(eps / 2.0)


def mi_pure_dp_product(epsilon: float, n_rows: int, *, form: str = "tanh") -> MutualInfo:
    r"""Mutual information of a pure ε-DP algorithm on product data.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in nats, > 0.
    n_rows : int
        Number of rows, >= 1.
    form : {"tanh", "simple"}
        "tanh": :math:`n\varepsilon\tanh(\varepsilon/2)` nats (tight pure-DP-to-KL bound of
        [STK24]_); "simple": :math:`n\varepsilon^2/2` nats (from "ε-DP implies ε²/2-zCDP", [BS]_).

    Returns
    -------
    MutualInfo
        The bound converted to bits, scope "product".

    Notes
    -----
    THEORY.md 4.2 (derived): chain rule over independent rows, each term bounded by the worst
    KL divergence between neighbouring datasets.
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    if form == "tanh":
        nats = n * _kl_pure_dp_nats(eps)
    elif form == "simple":
        nats = n * eps * eps / 2.0
    else:
        raise ValueError(f"`form` must be 'tanh' or 'simple'; got {form!r}.")
    return MutualInfo(bits=nats * LOG2_E, scope=PRODUCT)


def mi_pure_dp_any_distribution(epsilon: float, n_rows: int, *, form: str = "tanh") -> MutualInfo:
    r"""Mutual information of a pure ε-DP algorithm, valid for every data distribution.

    ``form="tanh"``: :math:`n\varepsilon\tanh(n\varepsilon/2)` nats; ``form="simple"``:
    :math:`\min(n\varepsilon, (n\varepsilon)^2/2)` nats. Group privacy over n changes makes the
    algorithm :math:`n\varepsilon`-DP between any two datasets, and
    :math:`I \le \max_{S,S'}\mathrm{KL}(\mathcal A(S)\|\mathcal A(S'))` (THEORY.md 4.2, derived
    from [STK24]_ and [BS]_). Returned in bits, scope "any distribution".
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    ne = n * eps
    if form == "tanh":
        nats = ne * math.tanh(ne / 2.0)
    elif form == "simple":
        nats = min(ne, ne * ne / 2.0)
    else:
        raise ValueError(f"`form` must be 'tanh' or 'simple'; got {form!r}.")
    return MutualInfo(bits=nats * LOG2_E, scope=ANY_DISTRIBUTION)


def mi_zcdp_product(rho: float, n_rows: int) -> MutualInfo:
    r"""Mutual information of a ρ-zCDP algorithm on product data: :math:`\rho n` nats.

    THEORY.md 4.3 (derived from [BS]_): chain rule over independent rows with the KL bound
    :math:`\rho` (the :math:`a \to 1` limit of the Rényi condition). Returned in bits, scope
    "product".
    """
    r = check_positive("rho", rho)
    n = check_int("n_rows", n_rows, low=1)
    return MutualInfo(bits=r * n * LOG2_E, scope=PRODUCT)


def mi_zcdp_any_distribution(rho: float, n_rows: int) -> MutualInfo:
    r"""Mutual information of a ρ-zCDP algorithm for every distribution: :math:`\rho n^2` nats.

    THEORY.md 4.3 (derived from [BS]_ group privacy :math:`t^2\rho` at :math:`t = n`). Bits,
    scope "any distribution".
    """
    r = check_positive("rho", rho)
    n = check_int("n_rows", n_rows, low=1)
    return MutualInfo(bits=r * n * n * LOG2_E, scope=ANY_DISTRIBUTION)


@dataclass(frozen=True, slots=True)
class GaussianQueriesMI:
    """zCDP parameter and product-data MI bound of Gaussian-noised statistical queries."""

    rho: float
    mutual_info: MutualInfo


def mi_gaussian_statistical_queries(n_queries: int, sigma: float, n_rows: int) -> GaussianQueriesMI:
    r"""k statistical queries (values in [0, 1], sensitivity 1/n) answered with N(0, σ²).

    Each answer is :math:`\frac{(1/n)^2}{2\sigma^2}`-zCDP ([BS]_, Gaussian mechanism); zCDP
    composes by addition, so :math:`\rho = k/(2\sigma^2 n^2)` and on product data
    :math:`I \le \rho n = k/(2\sigma^2 n)` nats (THEORY.md 4.3).
    """
    k = check_int("n_queries", n_queries, low=1)
    s = check_positive("sigma", sigma)
    n = check_int("n_rows", n_rows, low=1)
    rho = k / (2.0 * s * s * n * n)
    return GaussianQueriesMI(rho=rho, mutual_info=mi_zcdp_product(rho, n))


# --------------------------------------------------------------------------------------------
# Exact worked example (THEORY.md 1.9): used to check that bounds sit above the truth
# --------------------------------------------------------------------------------------------


def exact_maxinfo_randomized_response(epsilon: float, n_rows: int, beta: float) -> float:
    r"""Exact β-approximate max-information (bits) of ε-randomized response on n uniform bits.

    With :math:`p = e^\varepsilon/(1+e^\varepsilon)`, the number K of kept bits is
    :math:`\mathrm{Bin}(n, p)` under the joint law and :math:`\mathrm{Bin}(n, 1/2)` under the
    product of marginals, with density ratio :math:`r(K) = (2p)^K(2(1-p))^{n-K}`;
    :math:`I^\beta_\infty = \min\{k: \sum_K (P_{joint}(K) - 2^k P_{prod}(K))_+ \le \beta\}`
    (THEORY.md 1.1 and 1.9, hockey-stick form of DFHPRR's definition). Solved by bisection;
    the value may be negative for large β. At β = 0 it is the pure max-information
    :math:`n\log_2(2p)`, the largest log-ratio.
    """
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    b = check_probability("beta", beta, closed="left")
    p = math.exp(eps) / (1.0 + math.exp(eps))
    K = np.arange(n + 1)
    log_joint = stats.binom.logpmf(K, n, p)
    log2_ratio = K * math.log2(2.0 * p) + (n - K) * math.log2(2.0 * (1.0 - p))

    def hockey(k: float) -> float:
        mask = log2_ratio > k
        # P_joint (1 - 2^k / r) for the K where r > 2^k, without cancellation
        terms = np.exp(log_joint[mask]) * -np.expm1((k - log2_ratio[mask]) * LN_2)
        return math.fsum(terms)

    lo, hi = math.log2(1.0 - b), float(log2_ratio.max())
    if b == 0.0:
        return hi  # n log2(2p): every K with r(K) > 2^k contributes a positive term below it
    if hockey(lo) <= b:
        return lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if hockey(mid) <= b:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * max(1.0, abs(hi)):
            break
    return hi


def exact_mutual_information_randomized_response(epsilon: float, n_rows: int) -> float:
    r"""Exact mutual information (bits) of ε-randomized response on n uniform bits:
    :math:`n(1 - h_2(p))`, :math:`p = e^\varepsilon/(1+e^\varepsilon)` (THEORY.md 1.9)."""
    eps = check_positive("epsilon", epsilon)
    n = check_int("n_rows", n_rows, low=1)
    p = 1.0 / (1.0 + math.exp(-eps))
    h2 = -(special.xlogy(p, p) + special.xlogy(1 - p, 1 - p)) / LN_2
    return n * (1.0 - h2)
