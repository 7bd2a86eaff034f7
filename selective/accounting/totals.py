r"""What a ledger adds up to: the inputs of every correction route.

These are plain immutable values, produced by :meth:`selective.accounting.Ledger.totals` and
consumed by :mod:`selective.corrections`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_probability
from ..exceptions import NoBoundError
from ._optim import min_bits_composite
from .bounds import LOG2_E, _thm20_nats
from .certificates import ANY_DISTRIBUTION, PRODUCT, MaxInfo, MutualInfo

__all__ = ["MaxInfoFamily", "UnionRoute", "LedgerTotals", "maxinfo_bound"]


@dataclass(frozen=True, slots=True)
class MaxInfoFamily:
    r"""The max-information of a whole analysis as a family of bounds :math:`k(\beta)`.

    The analysis is an adaptive composition (DFHPRR Lemma 14, Thm 15) of

    * a first block of pure-DP steps, composed as privacy into one
      ``prefix_epsilon``-DP algorithm (basic composition, DR Thm 3.16) and bounded either by
      Theorem 20 (product data; allowed only for this first block) or by Theorem 19;
    * ``len(dl_log2_outcomes)`` blocks of consecutive description-length steps, block j with
      at most :math:`2^{\ell_j}` outcomes for every history (Theorem 17 / 30):
      :math:`\ell_j + \log_2(1/\beta_j)` bits;
    * fixed terms ``fixed_bits`` with slack ``fixed_beta``: pure-DP steps after the first
      block, bounded by Theorem 19 (:math:`\log_2(e)\varepsilon n` bits, β = 0; THEORY.md 2.7
      rule 5), and max-information certificates recorded as such.

    For a total slack β the split among the pieces is optimised (equal split among the
    description-length blocks is optimal by the AM-GM inequality).
    """

    n_rows: int
    prefix_epsilon: float = 0.0
    dl_log2_outcomes: tuple[float, ...] = ()
    fixed_bits: float = 0.0
    fixed_beta: float = 0.0
    product_scope_fixed: bool = False  # a product-scope MaxInfo certificate recorded first
    #: whether Theorem 20 (product data, beta > 0) may bound the first DP block; False when the
    #: steps may be adaptive (THEORY.md 3.2a): Theorem 19 with beta = 0 holds pointwise
    allow_product: bool = True

    @property
    def n_blocks(self) -> int:
        return len(self.dl_log2_outcomes)

    @property
    def log2_n_outcomes(self) -> float:
        return math.fsum(self.dl_log2_outcomes)

    @property
    def _needs_beta(self) -> bool:
        return self.n_blocks > 0

    def bound(self, beta: float) -> MaxInfo:
        """The smallest k (bits) this family certifies at total slack ``beta``.

        Raises
        ------
        NoBoundError
            When ``beta`` does not exceed the slack already fixed by recorded certificates
            while description-length blocks still need some, or when the bound exceeds the
            range of a double (it is then vacuous).
        """
        return maxinfo_bound(beta, n_rows=self.n_rows, prefix_epsilon=self.prefix_epsilon, n_blocks=self.n_blocks,
                             log2_n_outcomes=self.log2_n_outcomes, fixed_bits=self.fixed_bits,
                             fixed_beta=self.fixed_beta, product_scope_fixed=self.product_scope_fixed,
                             allow_product=self.allow_product)


@functools.lru_cache(maxsize=4096)
def _composite_nats(R: float, eps: float, n: int, J: int) -> float:
    """Theorem 20 block plus J description-length blocks at slack R (nats), optimal split. It does
    not depend on the blocks' sizes, so the ledger's rows solve it once per (R, eps, n, J)."""
    nats, _ = min_bits_composite(R, eps * eps * n / 2.0, eps * math.sqrt(n / 2.0), J)
    return nats


def maxinfo_bound(beta: float, *, n_rows: int, prefix_epsilon: float, n_blocks: int, log2_n_outcomes: float,
                  fixed_bits: float, fixed_beta: float, product_scope_fixed: bool, allow_product: bool) -> MaxInfo:
    """:meth:`MaxInfoFamily.bound` from the family's sums alone, in constant time (the ledger
    uses it for the cumulative bound after each step without rebuilding the family)."""
    b = check_probability("beta", beta, closed="neither")
    R = b - fixed_beta
    J = n_blocks
    if R < 0 or (J > 0 and R <= 0):
        raise NoBoundError(
            f"`beta` = {b!r} must exceed the slack {fixed_beta!r} already taken by "
            "recorded max-information certificates."
        )
    base = fixed_bits + log2_n_outcomes
    # Option A: Theorem 19 for the first DP block (beta 0), any distribution.
    bits_a = base + LOG2_E * prefix_epsilon * n_rows + (J * math.log2(J / R) if J else 0.0)
    best, scope = bits_a, ANY_DISTRIBUTION
    # Option B: Theorem 20 for the first DP block (product data only).
    if allow_product and prefix_epsilon > 0 and R > 0:
        eps, n = prefix_epsilon, n_rows
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                if J == 0:
                    bits_b = base + LOG2_E * float(_thm20_nats(eps, n, min(R, 1.0)))
                else:
                    bits_b = base + LOG2_E * _composite_nats(R, eps, n, J)
        except OverflowError:  # beyond the double range: no better than option A
            bits_b = math.inf
        if math.isnan(bits_b):
            bits_b = math.inf
        if bits_b < best:
            best, scope = bits_b, PRODUCT
    if not math.isfinite(best):
        raise NoBoundError(f"the max-information bound at beta = {b!r} exceeds the range of a double: "
                           "it is vacuous.")
    if product_scope_fixed:
        scope = PRODUCT
    return MaxInfo(bits=max(best, 0.0), beta=b, scope=scope)


@dataclass(frozen=True, slots=True)
class UnionRoute:
    r"""Inputs of the union-bound route for p-values (THEORY.md 3.6, derived).

    Description-length steps in any position with :math:`N = \prod_j N_j` outcomes in all
    (``log2_n_outcomes`` = :math:`\log_2 N`) and pure-DP steps whose basic composition is
    ``dp_epsilon``-DP for every fixing of the description-length outputs. The corrected p-value
    is :math:`\min(1, N\inf_\beta[p\,2^{k(\beta)} + \beta])` with Theorem 20 (or 19) at
    ``dp_epsilon``: Bonferroni over the description-length outcomes applied to the DP correction.
    """

    n_rows: int
    log2_n_outcomes: float = 0.0
    dp_epsilon: float = 0.0
    #: whether Theorem 20 may bound the DP steps (False: Theorem 19 only, THEORY.md 3.2a)
    allow_product: bool = True


@dataclass(frozen=True, slots=True)
class LedgerTotals:
    """Everything the corrections need from a ledger, and why a route is unavailable.

    A ``None`` route comes with a ``*_reason`` saying which theorem is missing.
    """

    n_rows: int
    n_steps: int
    maxinfo: MaxInfoFamily | None
    union: UnionRoute | None
    mutual_info: MutualInfo | None
    maxinfo_reason: str | None = None
    union_reason: str | None = None
    mutual_info_reason: str | None = None
    notes: tuple[str, ...] = ()
