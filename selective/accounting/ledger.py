r"""The ledger: the ordered leakage record of one analysis on one dataset.

The ledger composes the certificates of every selection step into

* a max-information family :math:`k(\beta)` (bits) by the order rules of THEORY.md 2.7: the
  first block of DP steps is composed *as privacy* (basic composition) and converted once,
  with Theorem 20 of Dwork et al. (product data) or Theorem 19; every later step uses a bound
  valid for all distributions (description length, Theorem 17; pure DP, Theorem 19);
* the union-bound route of THEORY.md 3.6 (description-length outcomes in any position, pure-DP
  steps composed and bounded with Theorem 20);
* a mutual-information total (bits) by the chain rule (THEORY.md 4.4).

It refuses what no theorem covers: an approximate-DP step after any non-DP step
(:class:`CompositionOrderError`; RRST show such an order can reveal the whole dataset), a
product-only certificate that is not the first step, and steps beyond a declared budget
(:class:`BudgetExceededError`). A refused step leaves the ledger exactly as it was.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .._validation import check_int, check_positive, check_probability
from ..exceptions import BudgetExceededError, CompositionOrderError, NoBoundError, SelectiveWarning
from .bounds import LOG2_E, _kl_pure_dp_nats
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
    certificate_from_dict,
)
from .totals import LedgerTotals, MaxInfoFamily, UnionRoute

__all__ = ["Ledger", "Step", "LEDGER_FORMAT"]

LEDGER_FORMAT = "selective.ledger"
LEDGER_VERSION = 1
_DP = (PureDP, ApproxDP, ZCDP)
_CERTS = (PureDP, ApproxDP, ZCDP, DescriptionLength, MaxInfo, MutualInfo)


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded step: its position, certificate, label, and the role it plays in the
    composition ("first DP block" or "after selection")."""

    index: int
    certificate: Certificate
    label: str
    role: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "certificate": self.certificate.to_dict()}


def _role(prior: tuple[Certificate, ...], cert: Certificate) -> str:
    if isinstance(cert, _DP) and all(isinstance(c, _DP) for c in prior):
        return "first DP block"
    if not prior:
        return "first step"
    return "after selection"


def compute_totals(n_rows: int, certificates: tuple[Certificate, ...]) -> LedgerTotals:
    """Compose ``certificates`` (in the order they ran) into :class:`LedgerTotals`.

    Assumes the order rules hold (``Ledger.record`` checks them before calling this).
    """
    n = n_rows
    in_prefix = True
    prefix_eps = 0.0
    prefix_mi_nats = 0.0
    dl_blocks: list[float] = []
    last_dl = False
    fixed_bits = 0.0
    fixed_beta = 0.0
    product_fixed = False
    later_mi_bits = 0.0
    mi_scope = ANY_DISTRIBUTION
    union_log2 = 0.0
    union_eps = 0.0
    maxinfo_reason = union_reason = mi_reason = None
    notes: list[str] = []
    for i, c in enumerate(certificates):
        if isinstance(c, PureDP):
            union_eps += c.epsilon
            kl = _kl_pure_dp_nats(c.epsilon) if c.rho is None else min(_kl_pure_dp_nats(c.epsilon), c.rho)
            if in_prefix:
                prefix_eps += c.epsilon
                prefix_mi_nats += n * kl  # THEORY 4.2/4.4: product data, KL terms add
            else:
                fixed_bits += LOG2_E * c.epsilon * n  # Theorem 19 (any distribution), THEORY 2.7 rule 5
                ne = n * c.epsilon
                any_nats = ne * math.tanh(ne / 2.0)
                if c.rho is not None:
                    any_nats = min(any_nats, c.rho * n * n)
                later_mi_bits += any_nats * LOG2_E  # THEORY 4.2, any distribution
                notes.append(
                    f"step {i}: pure DP after a selection step is bounded by Theorem 19 "
                    "(log2(e)*epsilon*n bits, any distribution); Theorem 20 applies only to the "
                    "first DP block. The union-bound route (docs/THEORY.md 3.6) keeps Theorem 20."
                )
            last_dl = False
        elif isinstance(c, ZCDP):
            maxinfo_reason = maxinfo_reason or (
                f"step {i}: no max-information bound for a zCDP step (no zCDP-to-max-information "
                "theorem is available here, docs/THEORY.md 5.8); the mutual-information column applies."
            )
            union_reason = union_reason or maxinfo_reason
            if in_prefix:
                prefix_mi_nats += c.rho * n  # THEORY 4.3, product data
            else:
                later_mi_bits += c.rho * n * n * LOG2_E  # THEORY 4.3, any distribution
            last_dl = False
        elif isinstance(c, ApproxDP):
            maxinfo_reason = maxinfo_reason or (
                f"step {i}: {c.describe()} has no numeric max-information bound (the constants of "
                "Rogers-Roth-Smith-Thakkar's theorem are open, docs/THEORY.md 2.4)."
            )
            union_reason = union_reason or maxinfo_reason
            mi_reason = mi_reason or (
                f"step {i}: {c.describe()} has no mutual-information bound (with probability delta "
                "the output may reveal everything, docs/THEORY.md 4.5)."
            )
            last_dl = False
        elif isinstance(c, DescriptionLength) and c.n_outcomes == 1:
            last_dl = False  # one possible output reveals nothing; it still ends the first DP block
        elif isinstance(c, DescriptionLength):
            if last_dl:
                dl_blocks[-1] += c.log2_n_outcomes  # consecutive steps form one description-length algorithm
            else:
                dl_blocks.append(c.log2_n_outcomes)
            union_log2 += c.log2_n_outcomes
            later_mi_bits += c.log2_n_outcomes  # THEORY 4.1: I <= H <= log2 |Y|, any position
            last_dl = True
        elif isinstance(c, MaxInfo):
            fixed_bits += c.bits
            fixed_beta += c.beta
            product_fixed = product_fixed or c.scope == PRODUCT
            union_reason = union_reason or (
                f"step {i}: the union-bound route covers description-length and pure-DP steps only."
            )
            if c.beta == 0:
                later_mi_bits += c.bits  # I(X;Y) <= I_inf(X;Y)
                if c.scope == PRODUCT:
                    mi_scope = PRODUCT
            else:
                mi_reason = mi_reason or (
                    f"step {i}: {c.describe()} with beta > 0 implies no mutual-information bound."
                )
            last_dl = False
        elif isinstance(c, MutualInfo):
            later_mi_bits += c.bits
            if c.scope == PRODUCT:
                mi_scope = PRODUCT
            maxinfo_reason = maxinfo_reason or (
                f"step {i}: a recorded mutual-information certificate is not converted into the "
                "max-information composition; the mutual-information column applies."
            )
            union_reason = union_reason or maxinfo_reason
            last_dl = False
        if not isinstance(c, _DP):
            in_prefix = False
    if prefix_mi_nats > 0:
        mi_scope = PRODUCT
    if fixed_beta >= 1.0:
        maxinfo_reason = maxinfo_reason or "the recorded max-information slacks add up to 1 or more."
    maxinfo = None if maxinfo_reason else MaxInfoFamily(
        n_rows=n, prefix_epsilon=prefix_eps, dl_log2_outcomes=tuple(dl_blocks),
        fixed_bits=fixed_bits, fixed_beta=fixed_beta, product_scope_fixed=product_fixed)
    union = None if union_reason else UnionRoute(n_rows=n, log2_n_outcomes=union_log2, dp_epsilon=union_eps)
    mutual = None if mi_reason else MutualInfo(bits=prefix_mi_nats * LOG2_E + later_mi_bits, scope=mi_scope)
    return LedgerTotals(n_rows=n, n_steps=len(certificates), maxinfo=maxinfo, union=union, mutual_info=mutual,
                        maxinfo_reason=maxinfo_reason, union_reason=union_reason, mutual_info_reason=mi_reason,
                        notes=tuple(dict.fromkeys(notes)))


class Ledger:
    """The ordered steps of one analysis on one dataset of ``n_rows`` rows.

    Parameters
    ----------
    n_rows : int
        Size n of the dataset every step looked at.
    budget_bits : float, optional
        Refuse a step after which the max-information bound at ``budget_beta`` would exceed
        this many bits (or would not exist).
    budget_beta : float, optional
        The slack at which ``budget_bits`` is checked; required with ``budget_bits``.
    budget_epsilon : float, optional
        Refuse a step after which the basic composition of the DP steps' ε (nats) would exceed
        this value. zCDP steps carry no ε and are refused under an ε budget.

    Examples
    --------
    >>> led = Ledger(n_rows=1000)
    >>> _ = led.record(PureDP(0.01), label="noisy screen")
    >>> _ = led.record(DescriptionLength(45), label="top-2 of 10")
    >>> round(led.max_info(beta=0.01).bits, 3)
    13.208
    """

    def __init__(self, n_rows: int, *, budget_bits: float | None = None, budget_beta: float | None = None,
                 budget_epsilon: float | None = None) -> None:
        self._n_rows = check_int("n_rows", n_rows, low=1)
        if budget_bits is not None:
            budget_bits = check_positive("budget_bits", budget_bits)
            if budget_beta is None:
                raise ValueError(
                    "`budget_beta` must be given with `budget_bits`: the slack at which the bits are checked; got None."
                )
        if budget_beta is not None:
            budget_beta = check_probability("budget_beta", budget_beta, closed="neither")
            if budget_bits is None:
                raise ValueError("`budget_bits` must be given with `budget_beta`; got None.")
        if budget_epsilon is not None:
            budget_epsilon = check_positive("budget_epsilon", budget_epsilon)
        self._budget_bits = budget_bits
        self._budget_beta = budget_beta
        self._budget_epsilon = budget_epsilon
        self._steps: tuple[Step, ...] = ()

    # -- reading ---------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return self._n_rows

    @property
    def steps(self) -> tuple[Step, ...]:
        return self._steps

    @property
    def certificates(self) -> tuple[Certificate, ...]:
        return tuple(s.certificate for s in self._steps)

    @property
    def budget(self) -> dict[str, float | None]:
        return {"bits": self._budget_bits, "beta": self._budget_beta, "epsilon": self._budget_epsilon}

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps)

    def __repr__(self) -> str:
        return f"Ledger(n_rows={self._n_rows}, steps={len(self._steps)})"

    @property
    def epsilon_spent(self) -> float:
        """Basic composition of the ε (nats) of every pure and approximate DP step."""
        return math.fsum(c.epsilon for c in self.certificates if isinstance(c, (PureDP, ApproxDP)))

    def totals(self) -> LedgerTotals:
        """Inputs of every correction route (see :mod:`selective.corrections`)."""
        return compute_totals(self._n_rows, self.certificates)

    def max_info(self, beta: float) -> MaxInfo:
        """Max-information bound of everything recorded, at total slack ``beta`` (bits).

        Raises :class:`NoBoundError` (saying why) where no theorem gives a number.
        """
        t = self.totals()
        if t.maxinfo is None:
            raise NoBoundError(t.maxinfo_reason or "no max-information bound")
        return t.maxinfo.bound(beta)

    def mutual_info(self) -> MutualInfo:
        """Mutual-information bound (bits) of everything recorded; :class:`NoBoundError` if none."""
        t = self.totals()
        if t.mutual_info is None:
            raise NoBoundError(t.mutual_info_reason or "no mutual-information bound")
        return t.mutual_info

    # -- writing ---------------------------------------------------------------------------
    def _check_order(self, cert: Certificate) -> None:
        prior = self.certificates
        non_dp_before = [i for i, c in enumerate(prior) if not isinstance(c, _DP)]
        if isinstance(cert, ApproxDP) and non_dp_before:
            first = prior[non_dp_before[0]]
            what = "a description-length step" if isinstance(first, DescriptionLength) else f"a {first.kind} step"
            raise CompositionOrderError(
                f"Cannot record {cert.describe()} after {what} (step {non_dp_before[0]}): no "
                "max-information bound covers that order (approximate DP has no bound valid for "
                "every distribution, and a description-length step followed by an approximate-DP "
                "step can reveal the whole dataset). Record DP steps first, or use a pure-DP "
                "selector."
            )
        if isinstance(cert, (MaxInfo, MutualInfo)) and cert.scope == PRODUCT and prior:
            raise CompositionOrderError(
                f"Cannot record {cert.describe()} as step {len(prior)}: a bound valid only for "
                "product data may be used for the first step alone (later steps see data "
                "conditioned on earlier outputs). Record it first, or give a bound valid for any "
                "distribution."
            )

    def _check_budget(self, candidate: tuple[Certificate, ...], cert: Certificate) -> None:
        if self._budget_epsilon is not None:
            if isinstance(cert, ZCDP):
                raise BudgetExceededError(
                    f"Cannot record {cert.describe()} under an epsilon budget: a zCDP step has no "
                    "epsilon. Use a bits budget or describe the step as PureDP."
                )
            spent = math.fsum(c.epsilon for c in candidate if isinstance(c, (PureDP, ApproxDP)))
            if spent > self._budget_epsilon * (1 + 1e-12):
                raise BudgetExceededError(
                    f"Recording {cert.describe()} would spend epsilon = {spent:.6g} in all, above the "
                    f"budget `budget_epsilon` = {self._budget_epsilon:.6g}; nothing was recorded."
                )
        if self._budget_bits is not None:
            totals = compute_totals(self._n_rows, candidate)
            if totals.maxinfo is None:
                raise BudgetExceededError(
                    f"Cannot record {cert.describe()} under a bits budget: {totals.maxinfo_reason}"
                )
            try:
                bits = totals.maxinfo.bound(self._budget_beta).bits
            except NoBoundError as exc:
                raise BudgetExceededError(f"Cannot record {cert.describe()} under the bits budget: {exc}") from None
            if bits > self._budget_bits * (1 + 1e-12):
                raise BudgetExceededError(
                    f"Recording {cert.describe()} would raise the max-information bound to {bits:.6g} "
                    f"bits at beta = {self._budget_beta:g}, above the budget `budget_bits` = "
                    f"{self._budget_bits:.6g}; nothing was recorded."
                )

    def check(self, certificate: Certificate) -> None:
        """Raise exactly what :meth:`record` would raise for ``certificate``; record nothing."""
        if not isinstance(certificate, _CERTS):
            raise TypeError(
                "`certificate` must be one of PureDP, ApproxDP, ZCDP, DescriptionLength, MaxInfo, "
                f"MutualInfo; got {certificate!r} ({type(certificate).__name__})."
            )
        self._check_order(certificate)
        self._check_budget(self.certificates + (certificate,), certificate)

    def record(self, certificate: Certificate, label: str = "") -> Step:
        """Record one step. Checks everything first; a refused step leaves no trace.

        Raises
        ------
        TypeError
            ``certificate`` is not a certificate, or ``label`` not a string.
        CompositionOrderError
            No bound covers the step in this position (THEORY.md 2.7).
        BudgetExceededError
            The step would exceed the declared budget.
        """
        if not isinstance(label, str):
            raise TypeError(f"`label` must be a string; got {label!r} ({type(label).__name__}).")
        self.check(certificate)
        role = _role(self.certificates, certificate)
        if isinstance(certificate, PureDP) and role == "after selection":
            warnings.warn(
                f"{certificate.describe()} recorded after a selection step: its max-information is "
                "bounded for all distributions (Theorem 19, log2(e)*epsilon*n bits), much larger "
                "than the product bound available to DP steps recorded first.",
                SelectiveWarning,
                stacklevel=2,
            )
        step = Step(index=len(self._steps), certificate=certificate, label=label, role=role)
        self._steps = self._steps + (step,)
        return step

    # -- reporting -------------------------------------------------------------------------
    def rows(self, *, beta: float = 1e-3) -> list[dict[str, Any]]:
        """One dict per step: label, certificate, role, and the cumulative max-information
        (bits, at ``beta``) and mutual information (bits) after that step (NaN where none)."""
        out = []
        certs = self.certificates
        for s in self._steps:
            t = compute_totals(self._n_rows, certs[: s.index + 1])
            try:
                bound = t.maxinfo.bound(beta) if t.maxinfo is not None else None
            except NoBoundError:
                bound = None
            out.append({
                "step": s.index, "label": s.label, "certificate": s.certificate.describe(), "role": s.role,
                "cumulative_maxinfo_bits": bound.bits if bound else math.nan,
                "maxinfo_scope": bound.scope if bound else "",
                "cumulative_mutual_info_bits": t.mutual_info.bits if t.mutual_info else math.nan,
            })
        return out

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": LEDGER_FORMAT,
            "version": LEDGER_VERSION,
            "n_rows": self._n_rows,
            "budget": self.budget,
            "steps": [s.to_dict() for s in self._steps],
        }

    def to_json(self, **kwargs: Any) -> str:
        """The whole ledger as JSON (exact: floats round-trip, big integers are kept whole)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ledger:
        if not isinstance(d, dict) or d.get("format") != LEDGER_FORMAT:
            got = d.get("format") if isinstance(d, dict) else d
            raise ValueError(f"not a ledger record: expected format {LEDGER_FORMAT!r}; got {got!r}.")
        if d.get("version") != LEDGER_VERSION:
            raise ValueError(
                f"unsupported ledger version {d.get('version')!r}; this package reads version {LEDGER_VERSION}."
            )
        budget = d.get("budget") or {}
        led = cls(d["n_rows"], budget_bits=budget.get("bits"), budget_beta=budget.get("beta"),
                  budget_epsilon=budget.get("epsilon"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)
            for i, s in enumerate(d.get("steps", [])):
                if s.get("index", i) != i:
                    raise ValueError(f"ledger steps out of order: step {i} has index {s.get('index')!r}.")
                led.record(certificate_from_dict(s["certificate"]), label=s.get("label", ""))
        return led

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """Rebuild a ledger written by :meth:`to_json`; every step is re-checked on the way in."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`text` is not valid JSON: {exc}") from None
        return cls.from_dict(d)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ledger) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable
