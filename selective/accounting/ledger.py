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
from ..exceptions import (
    BudgetExceededError,
    CompositionOrderError,
    NoBoundError,
    RecordFormatError,
    SelectiveWarning,
)
from .certificates import (
    PRODUCT,
    ZCDP,
    ApproxDP,
    Certificate,
    DescriptionLength,
    MaxInfo,
    MutualInfo,
    PureDP,
    brief,
    certificate_from_dict,
)
from .totals import _DP, LedgerTotals, _Running, compute_totals, maxinfo_bound

__all__ = ["Ledger", "Step", "LEDGER_FORMAT", "MAX_ROWS", "compute_totals", "load_json"]

LEDGER_FORMAT = "selective.ledger"
LEDGER_VERSION = 2  # 2: counts of 54 bits or more as hexadecimal text
_READ_VERSIONS = (1, 2)
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


#: the largest dataset size the ledger accepts: beyond it, n is not exact as a double
MAX_ROWS = 2**53


def _role(first_non_dp: int | None, n_prior: int, cert: Certificate) -> str:
    if isinstance(cert, _DP) and first_non_dp is None:
        return "first DP block"
    if not n_prior:
        return "first step"
    return "after selection"


class Ledger:
    """The ordered steps of one analysis on one dataset of ``n_rows`` rows.

    Recording a step, the totals and :meth:`rows` cost time linear in the number of steps in
    all (the sums are kept as the steps come).

    Parameters
    ----------
    n_rows : int
        Size n of the dataset every step looked at (at most 2**53).
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
        self._n_rows = check_int("n_rows", n_rows, low=1, high=MAX_ROWS)
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
        self._steps: list[Step] = []
        self._run = _Running(self._n_rows)
        self._blocks: list[float] = []
        self._notes: list[str] = []

    # -- reading ---------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return self._n_rows

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    @property
    def certificates(self) -> tuple[Certificate, ...]:
        return tuple(s.certificate for s in self._steps)

    @property
    def budget(self) -> dict[str, float | None]:
        return {"bits": self._budget_bits, "beta": self._budget_beta, "epsilon": self._budget_epsilon}

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(tuple(self._steps))

    def __repr__(self) -> str:
        return f"Ledger(n_rows={self._n_rows}, steps={len(self._steps)})"

    @property
    def epsilon_spent(self) -> float:
        """Basic composition of the ε (nats) of every pure and approximate DP step."""
        return self._run.epsilon_spent

    def totals(self) -> LedgerTotals:
        """Inputs of every correction route (see :mod:`selective.corrections`)."""
        return self._run.totals(self._blocks, self._notes)

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
        first = self._run.first_non_dp
        if isinstance(cert, ApproxDP) and first is not None:
            prior = self._steps[first].certificate
            what = "a description-length step" if isinstance(prior, DescriptionLength) else f"a {prior.kind} step"
            raise CompositionOrderError(
                f"Cannot record {cert.describe()} after {what} (step {first}): no "
                "max-information bound covers that order (approximate DP has no bound valid for "
                "every distribution, and a description-length step followed by an approximate-DP "
                "step can reveal the whole dataset). Record DP steps first, or use a pure-DP "
                "selector."
            )
        if isinstance(cert, (MaxInfo, MutualInfo)) and cert.scope == PRODUCT and self._steps:
            raise CompositionOrderError(
                f"Cannot record {cert.describe()} as step {len(self._steps)}: a bound valid only for "
                "product data may be used for the first step alone (later steps see data "
                "conditioned on earlier outputs). Record it first, or give a bound valid for any "
                "distribution."
            )

    def _check_budget(self, cert: Certificate) -> None:
        if self._budget_epsilon is None and self._budget_bits is None:
            return
        trial = self._run.copy()
        trial.add(cert)
        if self._budget_epsilon is not None:
            if isinstance(cert, ZCDP):
                raise BudgetExceededError(
                    f"Cannot record {cert.describe()} under an epsilon budget: a zCDP step has no "
                    "epsilon. Use a bits budget or describe the step as PureDP."
                )
            spent = trial.epsilon_spent
            if spent > self._budget_epsilon * (1 + 1e-12):
                raise BudgetExceededError(
                    f"Recording {cert.describe()} would spend epsilon = {spent:.6g} in all, above the "
                    f"budget `budget_epsilon` = {self._budget_epsilon:.6g}; nothing was recorded."
                )
        if self._budget_bits is not None:
            reason = trial._maxinfo_reason()
            if reason is not None:
                raise BudgetExceededError(f"Cannot record {cert.describe()} under a bits budget: {reason}")
            try:
                bits = maxinfo_bound(self._budget_beta, n_rows=trial.n, prefix_epsilon=trial.prefix_eps,
                                     n_blocks=trial.n_blocks, log2_n_outcomes=math.fsum(trial.blocks_sum),
                                     fixed_bits=trial.fixed_bits, fixed_beta=trial.fixed_beta,
                                     product_scope_fixed=trial.product_fixed, allow_product=True).bits
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
                f"MutualInfo; got {brief(certificate)} ({type(certificate).__name__})."
            )
        self._check_order(certificate)
        self._check_budget(certificate)

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
            raise TypeError(f"`label` must be a string; got {brief(label)} ({type(label).__name__}).")
        self.check(certificate)
        role = _role(self._run.first_non_dp, len(self._steps), certificate)
        if isinstance(certificate, PureDP) and role == "after selection":
            warnings.warn(
                f"{certificate.describe()} recorded after a selection step: its max-information is "
                "bounded for all distributions (Theorem 19, log2(e)*epsilon*n bits), much larger "
                "than the product bound available to DP steps recorded first.",
                SelectiveWarning,
                stacklevel=2,
            )
        step = Step(index=len(self._steps), certificate=certificate, label=label, role=role)
        self._run.add(certificate, self._blocks, self._notes)
        self._steps.append(step)
        return step

    # -- reporting -------------------------------------------------------------------------
    def rows(self, *, beta: float = 1e-3) -> list[dict[str, Any]]:
        """One dict per step: label, certificate, role, and the cumulative max-information
        (bits, at ``beta``) and mutual information (bits) after that step (NaN where none).

        One pass over the steps: the running sums give each step's totals in constant time.
        """
        check_probability("beta", beta, closed="neither")
        out = []
        run = _Running(self._n_rows)
        for s in self._steps:
            run.add(s.certificate)
            bound = run.maxinfo_bound(beta)
            mi, _ = run._mi()
            out.append({
                "step": s.index, "label": s.label, "certificate": s.certificate.describe(), "role": s.role,
                "cumulative_maxinfo_bits": bound.bits if bound else math.nan,
                "maxinfo_scope": bound.scope if bound else "",
                "cumulative_mutual_info_bits": mi.bits if mi else math.nan,
            })
        return out

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain JSON-able values (huge counts as hexadecimal text)."""
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
    def from_dict(cls, d: Any, *, source: str = "ledger record") -> Ledger:
        """Rebuild a ledger from :meth:`to_dict`; every step is re-checked on the way in.

        Parameters
        ----------
        d : dict
            The record.
        source : str
            The file (and field) the record comes from, for error messages.

        Raises
        ------
        RecordFormatError
            Anything malformed: a missing or mistyped field, an unknown certificate, a step
            the order rules or the budget refuse. The message names ``source`` and the field.
        """
        def bad(field: str, msg: str) -> RecordFormatError:
            return RecordFormatError(f"{source}: field {field!r}: {msg}")

        if not isinstance(d, dict):
            raise RecordFormatError(f"{source}: not a ledger record: expected a JSON object; got {type(d).__name__}.")
        if d.get("format") != LEDGER_FORMAT:
            raise bad("format", f"not a ledger record: expected {LEDGER_FORMAT!r}; got {brief(d.get('format'))}.")
        if type(d.get("version")) is not int or d["version"] not in _READ_VERSIONS:
            raise bad("version", f"unsupported ledger version {brief(d.get('version'))}; this package reads "
                                 f"versions {', '.join(map(str, _READ_VERSIONS))}.")
        unknown = sorted(brief(k) for k in d if k not in ("format", "version", "n_rows", "budget", "steps"))
        if unknown:
            raise RecordFormatError(f"{source}: unknown field(s) {', '.join(unknown)}; allowed: format, version, "
                                    "n_rows, budget, steps.")
        if "steps" not in d or not isinstance(d["steps"], list):
            raise bad("steps", f"must be a list of steps; got {brief(d.get('steps', '<missing>'))}.")
        budget = d.get("budget")
        if budget is None:
            budget = {}
        if not isinstance(budget, dict) or set(budget) - {"bits", "beta", "epsilon"}:
            raise bad("budget", f"must be null or an object with keys bits, beta, epsilon; got {brief(budget)}.")
        try:
            n_rows = check_int("n_rows", d.get("n_rows"), low=1, high=MAX_ROWS)
        except (TypeError, ValueError) as exc:
            raise bad("n_rows", str(exc)) from None
        try:
            led = cls(n_rows, budget_bits=budget.get("bits"), budget_beta=budget.get("beta"),
                      budget_epsilon=budget.get("epsilon"))
        except (TypeError, ValueError) as exc:
            raise bad("budget", str(exc)) from None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)
            for i, s in enumerate(d["steps"]):
                where = f"steps[{i}]"
                if not isinstance(s, dict):
                    raise bad(where, f"must be an object with index, label and certificate; got {brief(s)}.")
                extra = sorted(brief(k) for k in s if k not in ("index", "label", "certificate"))
                if extra:
                    raise bad(where, f"unknown field(s) {', '.join(extra)}; allowed: index, label, certificate.")
                index = s.get("index")
                if isinstance(index, bool) or index != i:
                    raise bad(f"{where}.index", f"steps out of order: step {i} has index {brief(index)}.")
                label = s.get("label", "")
                if not isinstance(label, str):
                    raise bad(f"{where}.label", f"must be a string; got {brief(label)}.")
                if "certificate" not in s:
                    raise bad(f"{where}.certificate", "missing.")
                cert = certificate_from_dict(s["certificate"], where=f"{source}: field '{where}.certificate'")
                try:
                    led.record(cert, label=label)
                except ValueError as exc:  # an order rule or the budget refuses the step
                    raise bad(where, f"{type(exc).__name__}: {exc}") from exc
        return led

    @classmethod
    def from_json(cls, text: str, *, source: str = "ledger record") -> Ledger:
        """Rebuild a ledger written by :meth:`to_json`; every step is re-checked on the way in.

        Raises :class:`RecordFormatError` (naming ``source`` and the field) on any malformed input.
        """
        return cls.from_dict(load_json(text, source), source=source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ledger) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable


def load_json(text: str | bytes, source: str) -> Any:
    """Parse JSON text, turning every failure (syntax, nesting too deep, integers too long,
    non-text input) into :class:`RecordFormatError` naming ``source``."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise RecordFormatError(f"{source}: expected JSON text; got {type(text).__name__}.")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise RecordFormatError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:
        raise RecordFormatError(f"{source}: not a record: the JSON is nested too deeply.") from None
    except (ValueError, UnicodeDecodeError) as exc:  # e.g. an integer with too many digits
        raise RecordFormatError(f"{source}: not valid JSON: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the constant {name} is not JSON (non-finite numbers are written as strings)")
