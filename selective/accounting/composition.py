r"""Privacy composition: basic, advanced, zCDP, and conversions between the DP notions.

References
----------
.. [DR] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", Foundations
   and Trends in Theoretical Computer Science 9(3-4), 2014.
.. [BS] M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions,
   and lower bounds", TCC 2016, arXiv:1605.02065.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_int, check_positive, check_probability
from .certificates import ZCDP, ApproxDP, DescriptionLength, MaxInfo, MutualInfo, PureDP

__all__ = [
    "basic_composition",
    "advanced_composition",
    "AdvancedComposition",
    "zcdp_composition",
    "zcdp_to_approx_dp",
    "pure_dp_to_zcdp",
    "group_privacy",
]


def basic_composition(*certificates: PureDP | ApproxDP) -> PureDP | ApproxDP:
    r"""Adaptive composition of (ε_i, δ_i)-DP steps: :math:`(\sum\varepsilon_i, \sum\delta_i)`-DP.

    [DR]_ Theorem 3.16 (also DFHPRR Theorem 3). Returns :class:`PureDP` when every step is pure.
    """
    if not certificates:
        raise ValueError("`certificates` must hold at least one PureDP or ApproxDP; got none.")
    for i, c in enumerate(certificates):
        if not isinstance(c, (PureDP, ApproxDP)):
            raise TypeError(f"`certificates[{i}]` must be PureDP or ApproxDP; got {c!r}.")
    eps = math.fsum(c.epsilon for c in certificates)
    delta = math.fsum(c.delta for c in certificates if isinstance(c, ApproxDP))
    return PureDP(eps) if delta == 0 else ApproxDP(eps, delta)


@dataclass(frozen=True, slots=True)
class AdvancedComposition:
    """Result of :func:`advanced_composition`: the composed (ε', δ_total) and, for comparison,
    basic composition's ε."""

    epsilon: float
    delta: float
    epsilon_basic: float

    @property
    def certificate(self) -> ApproxDP:
        """The composed guarantee as an :class:`ApproxDP` certificate (δ_total > 0)."""
        return ApproxDP(self.epsilon, self.delta)


def advanced_composition(
    epsilon: float, n_steps: int, delta_prime: float, *, delta: float = 0.0
) -> AdvancedComposition:
    r"""k-fold adaptive composition of (ε, δ)-DP steps by the advanced composition theorem.

    .. math:: \varepsilon' = \sqrt{2k\ln(1/\delta')}\,\varepsilon + k\varepsilon(e^\varepsilon - 1),
              \qquad \delta_{total} = k\delta + \delta'.

    [DR]_ Theorem 3.20 (DFHPRR Theorem 4). The result is *approximate* DP: it has no numeric
    max-information bound in this package (THEORY.md 2.4, 5.7). For p-values compose pure steps
    with :func:`basic_composition` or use zCDP.

    Parameters
    ----------
    epsilon : float
        Per-step ε in nats, > 0.
    n_steps : int
        k, the number of steps, >= 1.
    delta_prime : float
        δ' in (0, 1).
    delta : float, default 0
        Per-step δ in [0, 1).
    """
    eps = check_positive("epsilon", epsilon)
    k = check_int("n_steps", n_steps, low=1)
    dp = check_probability("delta_prime", delta_prime, closed="neither")
    d = check_probability("delta", delta, closed="left")
    eps_total = math.sqrt(2.0 * k * math.log(1.0 / dp)) * eps + k * eps * math.expm1(eps)
    total_delta = k * d + dp
    if total_delta >= 1.0:
        raise ValueError(f"the composed delta k*delta + delta_prime must be below 1; got {total_delta!r}.")
    return AdvancedComposition(epsilon=eps_total, delta=total_delta, epsilon_basic=k * eps)


def zcdp_composition(*certificates: ZCDP) -> ZCDP:
    r"""Adaptive composition of zCDP steps: ρ's add ([BS]_ Lemma 1.7)."""
    if not certificates:
        raise ValueError("`certificates` must hold at least one ZCDP; got none.")
    for i, c in enumerate(certificates):
        if not isinstance(c, ZCDP):
            raise TypeError(f"`certificates[{i}]` must be ZCDP; got {c!r}.")
    return ZCDP(math.fsum(c.rho for c in certificates))


def zcdp_to_approx_dp(rho: float, delta: float) -> ApproxDP:
    r""":math:`\rho`-zCDP implies :math:`(\rho + 2\sqrt{\rho\ln(1/\delta)}, \delta)`-DP for every δ > 0.

    [BS]_ Proposition 1.3.
    """
    r = check_positive("rho", rho)
    d = check_probability("delta", delta, closed="neither")
    return ApproxDP(r + 2.0 * math.sqrt(r * math.log(1.0 / d)), d)


def pure_dp_to_zcdp(epsilon: float) -> ZCDP:
    r"""ε-DP implies :math:`\tfrac12\varepsilon^2`-zCDP ([BS]_ Proposition 1.4)."""
    eps = check_positive("epsilon", epsilon)
    return ZCDP(eps * eps / 2.0)


def group_privacy(certificate, group_size: int):
    r"""The certificate of a step with respect to groups of ``group_size`` records.

    A mechanism that is differentially private in *rows* protects a *unit* (a subject with
    repeated measures, a household, a cluster) of up to :math:`m` rows only as a group:

    * :math:`\varepsilon`-DP becomes :math:`m\varepsilon`-DP ([DR]_ Theorem 2.2);
    * :math:`(\varepsilon, \delta)`-DP becomes :math:`(m\varepsilon, m e^{(m-1)\varepsilon}\delta)`-DP
      ([DR]_ Theorem 2.2, approximate form), refused when that δ is not below 1;
    * :math:`\rho`-zCDP becomes :math:`m^2\rho`-zCDP ([BS]_ Proposition 1.9), and a pure-DP
      certificate's optional ρ likewise;
    * a description length bounds the number of outcomes whatever the records are, so it is
      unchanged (THEORY.md 0.4).

    Max-information or mutual-information certificates stated for rows cannot be converted;
    they are refused (state them for units). ``group_size`` = 1 returns ``certificate``.
    """
    m = check_int("group_size", group_size, low=1)
    if m == 1 or isinstance(certificate, DescriptionLength):
        return certificate
    if isinstance(certificate, PureDP):
        rho = None if certificate.rho is None else certificate.rho * m * m
        return PureDP(certificate.epsilon * m, rho=rho)
    if isinstance(certificate, ApproxDP):
        log_delta = math.log(m) + (m - 1) * certificate.epsilon + math.log(certificate.delta)
        if log_delta >= 0:
            raise ValueError(
                f"{certificate.describe()} gives no group-privacy guarantee for units of {m} rows: "
                f"m * exp((m - 1) * epsilon) * delta >= 1. Use a pure-DP or zCDP selector, or unit-level statistics."
            )
        return ApproxDP(certificate.epsilon * m, math.exp(log_delta))
    if isinstance(certificate, ZCDP):
        return ZCDP(certificate.rho * m * m)
    if isinstance(certificate, (MaxInfo, MutualInfo)):
        raise ValueError(
            f"{certificate.describe()} is stated for rows and cannot be converted to units of {m} rows; "
            "state the bound for units (one record per unit)."
        )
    raise TypeError(f"`certificate` must be a certificate; got {certificate!r} ({type(certificate).__name__}).")
