r"""What a ledger adds up to: the inputs of every correction route.

These are plain immutable values, produced by :meth:`selective.accounting.Ledger.totals` and
consumed by :mod:`selective.corrections`. The ledger keeps them as running sums
(:func:`compute_totals` composes a sequence of certificates in one pass), so that recording a
step and the totals after every step cost constant time per step.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_probability
from ..exceptions import NoBoundError
from ._optim import min_bits_composite
from .bounds import LOG2_E, _kl_pure_dp_nats, _thm20_nats
from .certificates import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ZCDP,
    ApproxDP,
    Certificate,
    DescriptionLength,
    MaxInfo,
    MutualInfo,
    PureDP,
)

__all__ = ["MaxInfoFamily", "UnionRoute", "LedgerTotals", "maxinfo_bound", "compute_totals"]

_DP = (PureDP, ApproxDP, ZCDP)


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


# ------------------------------------------------------------------------------------------
# Running sums: the totals after every step in one pass
# ------------------------------------------------------------------------------------------

_PURE_DP_AFTER_SELECTION_NOTE = (
    "pure DP after a selection step is bounded by Theorem 19 (log2(e)*epsilon*n bits, any "
    "distribution); Theorem 20 applies only to the first DP block. The union-bound route "
    "(docs/THEORY.md 3.6) keeps Theorem 20."
)
def _exact_add(partials: list[float], x: float) -> None:
    """Add ``x`` to the exact sum held by ``partials`` (Shewchuk's non-overlapping partials, the
    algorithm behind :func:`math.fsum`); ``math.fsum(partials)`` is the correctly rounded sum."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        if not math.isfinite(hi):  # beyond the double range: the sum is infinite
            partials[:] = [hi]
            return
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


class _Running:
    """The running sums of a ledger: adding a step costs constant time (amortised), so the totals
    after every step come in one pass. The rules are THEORY.md 2.7 (max-information), 3.6 (union
    route) and 4.4 (mutual information); see :func:`compute_totals`."""

    __slots__ = ("n", "n_steps", "in_prefix", "prefix_eps", "prefix_mi_nats", "n_blocks", "last_block",
                 "blocks_sum", "last_dl", "fixed_bits", "fixed_beta", "product_fixed", "later_mi_bits", "mi_scope",
                 "union_log2", "union_eps", "eps_spent", "first_non_dp", "maxinfo_reason", "union_reason",
                 "mi_reason")

    def __init__(self, n_rows: int) -> None:
        self.n = n_rows
        self.n_steps = 0
        self.in_prefix = True
        self.prefix_eps = 0.0
        self.prefix_mi_nats = 0.0
        self.n_blocks = 0
        self.last_block = 0.0
        self.blocks_sum: list[float] = []  # exact sum of the description-length blocks
        self.last_dl = False
        self.fixed_bits = 0.0
        self.fixed_beta = 0.0
        self.product_fixed = False
        self.later_mi_bits = 0.0
        self.mi_scope = ANY_DISTRIBUTION
        self.union_log2 = 0.0
        self.union_eps = 0.0
        self.eps_spent: list[float] = []  # exact basic composition of the pure and approximate DP epsilons
        self.first_non_dp: int | None = None
        self.maxinfo_reason: str | None = None
        self.union_reason: str | None = None
        self.mi_reason: str | None = None

    def copy(self) -> _Running:
        other = _Running.__new__(_Running)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.blocks_sum = list(self.blocks_sum)
        other.eps_spent = list(self.eps_spent)
        return other

    def add(self, c: Certificate, blocks: list[float] | None = None, notes: list[str] | None = None) -> None:
        """Compose one more step ``c``; ``blocks`` and ``notes``, when given, receive the
        description-length blocks and the notes (the sums alone need neither)."""
        i, n = self.n_steps, self.n
        self.n_steps += 1
        if isinstance(c, (PureDP, ApproxDP)):
            _exact_add(self.eps_spent, c.epsilon)
        if isinstance(c, PureDP):
            self.union_eps += c.epsilon
            kl = _kl_pure_dp_nats(c.epsilon) if c.rho is None else min(_kl_pure_dp_nats(c.epsilon), c.rho)
            if self.in_prefix:
                self.prefix_eps += c.epsilon
                self.prefix_mi_nats += n * kl  # THEORY 4.2/4.4: product data, KL terms add
            else:
                self.fixed_bits += LOG2_E * c.epsilon * n  # Theorem 19 (any distribution), THEORY 2.7 rule 5
                ne = n * c.epsilon
                any_nats = ne * math.tanh(ne / 2.0) if math.isfinite(ne) else math.inf
                if c.rho is not None:
                    any_nats = min(any_nats, c.rho * n * n)
                self.later_mi_bits += any_nats * LOG2_E  # THEORY 4.2, any distribution
                if notes is not None:
                    notes.append(f"step {i}: {_PURE_DP_AFTER_SELECTION_NOTE}")
            self.last_dl = False
        elif isinstance(c, ZCDP):
            self.maxinfo_reason = self.maxinfo_reason or (
                f"step {i}: no max-information bound for a zCDP step (no zCDP-to-max-information "
                "theorem is available here, docs/THEORY.md 5.8); the mutual-information column applies."
            )
            self.union_reason = self.union_reason or self.maxinfo_reason
            if self.in_prefix:
                self.prefix_mi_nats += c.rho * n  # THEORY 4.3, product data
            else:
                self.later_mi_bits += c.rho * n * n * LOG2_E  # THEORY 4.3, any distribution
            self.last_dl = False
        elif isinstance(c, ApproxDP):
            self.maxinfo_reason = self.maxinfo_reason or (
                f"step {i}: {c.describe()} has no numeric max-information bound (the constants of "
                "Rogers-Roth-Smith-Thakkar's theorem are open, docs/THEORY.md 2.4)."
            )
            self.union_reason = self.union_reason or self.maxinfo_reason
            self.mi_reason = self.mi_reason or (
                f"step {i}: {c.describe()} has no mutual-information bound (with probability delta "
                "the output may reveal everything, docs/THEORY.md 4.5)."
            )
            self.last_dl = False
        elif isinstance(c, DescriptionLength) and c.n_outcomes == 1:
            self.last_dl = False  # one possible output reveals nothing; it still ends the first DP block
        elif isinstance(c, DescriptionLength):
            bits = c.log2_n_outcomes
            if self.last_dl:
                # consecutive steps form one description-length algorithm: replace the last block
                merged = self.last_block + bits
                _exact_add(self.blocks_sum, -self.last_block)
                _exact_add(self.blocks_sum, merged)
                self.last_block = merged
                if blocks is not None:
                    blocks[-1] = merged
            else:
                self.n_blocks += 1
                self.last_block = bits
                _exact_add(self.blocks_sum, bits)
                if blocks is not None:
                    blocks.append(bits)
            self.union_log2 += bits
            self.later_mi_bits += bits  # THEORY 4.1: I <= H <= log2 |Y|, any position
            self.last_dl = True
        elif isinstance(c, MaxInfo):
            self.fixed_bits += c.bits
            self.fixed_beta += c.beta
            self.product_fixed = self.product_fixed or c.scope == PRODUCT
            self.union_reason = self.union_reason or (
                f"step {i}: the union-bound route covers description-length and pure-DP steps only."
            )
            if c.beta == 0:
                self.later_mi_bits += c.bits  # I(X;Y) <= I_inf(X;Y)
                if c.scope == PRODUCT:
                    self.mi_scope = PRODUCT
            else:
                self.mi_reason = self.mi_reason or (
                    f"step {i}: {c.describe()} with beta > 0 implies no mutual-information bound."
                )
            self.last_dl = False
        elif isinstance(c, MutualInfo):
            self.later_mi_bits += c.bits
            if c.scope == PRODUCT:
                self.mi_scope = PRODUCT
            self.maxinfo_reason = self.maxinfo_reason or (
                f"step {i}: a recorded mutual-information certificate is not converted into the "
                "max-information composition; the mutual-information column applies."
            )
            self.union_reason = self.union_reason or self.maxinfo_reason
            self.last_dl = False
        if not isinstance(c, _DP):
            self.in_prefix = False
            if self.first_non_dp is None:
                self.first_non_dp = i

    # -- what the sums give ----------------------------------------------------------------
    @property
    def epsilon_spent(self) -> float:
        return math.fsum(self.eps_spent)

    def _maxinfo_reason(self) -> str | None:
        if self.maxinfo_reason:
            return self.maxinfo_reason
        if self.fixed_beta >= 1.0:
            return "the recorded max-information slacks add up to 1 or more."
        return None

    def _mi(self) -> tuple[MutualInfo | None, str | None]:
        if self.mi_reason:
            return None, self.mi_reason
        bits = self.prefix_mi_nats * LOG2_E + self.later_mi_bits
        if not math.isfinite(bits):
            return None, "the mutual-information bound exceeds the range of a double: it is vacuous."
        return MutualInfo(bits=bits, scope=PRODUCT if self.prefix_mi_nats > 0 else self.mi_scope), None

    def maxinfo_bound(self, beta: float) -> MaxInfo | None:
        """The cumulative max-information bound at ``beta``, or None where there is none."""
        if self._maxinfo_reason() is not None:
            return None
        try:
            return maxinfo_bound(beta, n_rows=self.n, prefix_epsilon=self.prefix_eps, n_blocks=self.n_blocks,
                                 log2_n_outcomes=math.fsum(self.blocks_sum), fixed_bits=self.fixed_bits,
                                 fixed_beta=self.fixed_beta, product_scope_fixed=self.product_fixed,
                                 allow_product=True)
        except NoBoundError:
            return None

    def totals(self, blocks: list[float], notes: list[str]) -> LedgerTotals:
        maxinfo_reason = self._maxinfo_reason()
        maxinfo = None if maxinfo_reason else MaxInfoFamily(
            n_rows=self.n, prefix_epsilon=self.prefix_eps, dl_log2_outcomes=tuple(blocks),
            fixed_bits=self.fixed_bits, fixed_beta=self.fixed_beta, product_scope_fixed=self.product_fixed)
        union = None if self.union_reason else UnionRoute(n_rows=self.n, log2_n_outcomes=self.union_log2,
                                                          dp_epsilon=self.union_eps)
        mutual, mi_reason = self._mi()
        return LedgerTotals(n_rows=self.n, n_steps=self.n_steps, maxinfo=maxinfo, union=union, mutual_info=mutual,
                            maxinfo_reason=maxinfo_reason, union_reason=self.union_reason,
                            mutual_info_reason=mi_reason, notes=tuple(dict.fromkeys(notes)))


def compute_totals(n_rows: int, certificates: tuple[Certificate, ...]) -> LedgerTotals:
    """Compose ``certificates`` (in the order they ran) into :class:`LedgerTotals`, in one pass.

    Assumes the order rules hold (``Ledger.record`` checks them before calling this).
    """
    run, blocks, notes = _Running(n_rows), [], []
    for c in certificates:
        run.add(c, blocks, notes)
    return run.totals(blocks, notes)


