r"""Certificates: what a selection step guarantees about its leakage, whatever the data.

A certificate depends on a selector's parameters only, never on the data. The ledger turns
certificates into bits (max-information) and bits or nats (mutual information) with the
theorems of :mod:`selective.accounting.bounds`.

Units (THEORY.md 0.3): a DP parameter :math:`\varepsilon` and a zCDP parameter :math:`\rho` are
in **nats**; max-information :math:`k` is in **bits**; :math:`\beta`, :math:`\delta` are
probabilities; mutual information is stored in **bits** (``bits`` in the name).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from .._validation import check_in_interval, check_int, check_positive, check_probability
from ..exceptions import RecordFormatError

__all__ = [
    "ANY_DISTRIBUTION",
    "PRODUCT",
    "Scope",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "DescriptionLength",
    "MaxInfo",
    "MutualInfo",
    "Certificate",
    "certificate_from_dict",
]

ANY_DISTRIBUTION = "any distribution"
PRODUCT = "product"
Scope = Literal["any distribution", "product"]
_SCOPES = (ANY_DISTRIBUTION, PRODUCT)
#: counts with at least this many bits are written as hexadecimal text (beyond the exact
#: integers of a double, 2**53, some JSON readers would round them)
TEXT_COUNT_BITS = 54
_HEX_COUNT = re.compile(r"0x[0-9a-f]+")


def _check_scope(scope: Any) -> str:
    if scope not in _SCOPES:
        raise ValueError(f"`scope` must be 'any distribution' or 'product'; got {scope!r}.")
    return scope


@dataclass(frozen=True, slots=True)
class PureDP:
    r"""Pure :math:`\varepsilon`-differential privacy (replace-one neighbours), ε in nats.

    Parameters
    ----------
    epsilon : float
        Privacy-loss parameter, > 0, in nats.
    rho : float, optional
        A tighter zero-concentrated DP parameter the same mechanism also satisfies (nats), e.g.
        :math:`\varepsilon^2/8` for the exponential mechanism (bounded range; Durfee and Rogers,
        NeurIPS 2019). Used only for mutual information, where the KL divergence between
        neighbours is at most :math:`\min(\varepsilon\tanh(\varepsilon/2), \rho)`.
    """

    epsilon: float
    rho: float | None = None
    kind: ClassVar[str] = "pure_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        if self.rho is not None:
            object.__setattr__(self, "rho", check_positive("rho", self.rho))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": self.epsilon, "rho": self.rho}

    def describe(self) -> str:
        extra = f", also {self.rho:.4g}-zCDP" if self.rho is not None else ""
        return f"PureDP(epsilon={self.epsilon:.6g}{extra})"


@dataclass(frozen=True, slots=True)
class ApproxDP:
    r"""Approximate :math:`(\varepsilon, \delta)`-differential privacy with :math:`\delta > 0`.

    No numeric max-information bound is available for it (THEORY.md 2.4: the constants of the
    Rogers-Roth-Smith-Thakkar theorem are open) and no mutual-information bound (THEORY.md 4.5).
    """

    epsilon: float
    delta: float
    kind: ClassVar[str] = "approx_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        if isinstance(self.delta, (int, float)) and not isinstance(self.delta, bool) and self.delta == 0:
            raise ValueError("`delta` must be a real number in (0, 1); got 0. Use PureDP(epsilon) for delta = 0.")
        object.__setattr__(self, "delta", check_probability("delta", self.delta, closed="neither"))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": self.epsilon, "delta": self.delta}

    def describe(self) -> str:
        return f"ApproxDP(epsilon={self.epsilon:.6g}, delta={self.delta:.3g})"


@dataclass(frozen=True, slots=True)
class ZCDP:
    r"""Zero-concentrated differential privacy :math:`\rho`-zCDP (Bun and Steinke 2016), ρ in nats."""

    rho: float
    kind: ClassVar[str] = "zcdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_positive("rho", self.rho))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "rho": self.rho}

    def describe(self) -> str:
        return f"ZCDP(rho={self.rho:.6g})"


@dataclass(frozen=True, slots=True, repr=False)
class DescriptionLength:
    """The step's output takes at most ``n_outcomes`` values (for every fixing of its coins).

    ``n_outcomes`` is an exact integer of any size (e.g. C(10000, 50)); bounds use its base-2
    logarithm, available as :attr:`log2_n_outcomes`. Counts of :data:`TEXT_COUNT_BITS` bits or
    more are written by :meth:`to_dict` as hexadecimal text (exact, and free of the limit on
    decimal conversion of huge integers) together with their ``log2_n_outcomes`` for display;
    the repr shows such counts by their logarithm.
    """

    n_outcomes: int
    kind: ClassVar[str] = "description_length"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_outcomes", check_int("n_outcomes", self.n_outcomes, low=1))

    @property
    def log2_n_outcomes(self) -> float:
        """:math:`\\log_2` of the number of outcomes, in bits (exact for huge integers)."""
        return math.log2(self.n_outcomes)

    def to_dict(self) -> dict[str, Any]:
        n = self.n_outcomes
        if n.bit_length() < TEXT_COUNT_BITS:
            return {"kind": self.kind, "n_outcomes": n}
        return {"kind": self.kind, "n_outcomes": hex(n), "log2_n_outcomes": self.log2_n_outcomes}

    def _shown(self) -> str:
        n = self.n_outcomes
        return f"{n}" if n < 10**9 else f"2^{self.log2_n_outcomes:.2f}"

    def describe(self) -> str:
        return f"DescriptionLength(n_outcomes={self._shown()})"

    def __repr__(self) -> str:
        n = self.n_outcomes
        shown = f"{n}" if n.bit_length() < TEXT_COUNT_BITS else f"2**{self.log2_n_outcomes:.6f} (approx.)"
        return f"DescriptionLength(n_outcomes={shown})"


@dataclass(frozen=True, slots=True)
class MaxInfo:
    r"""A max-information bound :math:`I_\infty^\beta(S; A(S)) \le k` (k in bits).

    Parameters
    ----------
    bits : float
        k, in bits (log base 2), >= 0.
    beta : float
        The slack β, a probability in [0, 1).
    scope : {"any distribution", "product"}
        Whether the bound holds for every distribution of the data or only for product
        (independent-row) data.
    """

    bits: float
    beta: float
    scope: str
    kind: ClassVar[str] = "max_info"

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", check_positive("bits", self.bits, allow_zero=True))
        object.__setattr__(self, "beta", check_in_interval("beta", self.beta, low=0.0, high=1.0, closed="left"))
        object.__setattr__(self, "scope", _check_scope(self.scope))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "bits": self.bits, "beta": self.beta, "scope": self.scope}

    def describe(self) -> str:
        return f"MaxInfo(bits={self.bits:.6g}, beta={self.beta:.3g}, scope={self.scope!r})"


@dataclass(frozen=True, slots=True)
class MutualInfo:
    """A mutual-information bound :math:`I(S; A(S)) \\le` ``bits`` (base-2 logarithm)."""

    bits: float
    scope: str
    kind: ClassVar[str] = "mutual_info"

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", check_positive("bits", self.bits, allow_zero=True))
        object.__setattr__(self, "scope", _check_scope(self.scope))

    @property
    def nats(self) -> float:
        return self.bits * math.log(2.0)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "bits": self.bits, "scope": self.scope}

    def describe(self) -> str:
        return f"MutualInfo(bits={self.bits:.6g}, scope={self.scope!r})"


Certificate = PureDP | ApproxDP | ZCDP | DescriptionLength | MaxInfo | MutualInfo
_KINDS = {c.kind: c for c in (PureDP, ApproxDP, ZCDP, DescriptionLength, MaxInfo, MutualInfo)}


def brief(value: Any, limit: int = 40) -> str:
    """A short, safe rendering of any value for an error message: never raises, never prints
    thousands of digits (huge integers are shown by their size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"<integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails is shown by its type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _count_from_record(value: Any, where: str) -> int:
    """A count written by :meth:`DescriptionLength.to_dict`: an integer, or hexadecimal text."""
    if isinstance(value, str):
        if not _HEX_COUNT.fullmatch(value):
            raise RecordFormatError(f"{where}: field 'n_outcomes' must be an integer or hexadecimal text "
                                    f"such as '0x1f'; got {brief(value)}.")
        return int(value, 16)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(f"{where}: field 'n_outcomes' must be an integer or hexadecimal text; "
                                f"got {type(value).__name__}.")
    return value


def certificate_from_dict(d: dict[str, Any], *, where: str = "certificate") -> Certificate:
    """Rebuild a certificate from its ``to_dict()`` form (used by ``Ledger.from_json``).

    Parameters
    ----------
    d : dict
        The record: ``kind`` and the certificate's fields, nothing else.
    where : str
        Where the record sits (file and field), for error messages.

    Raises
    ------
    RecordFormatError
        The record is not a dict, names an unknown kind or field, or holds a value the
        certificate refuses; the message names ``where`` and the field.
    """
    if not isinstance(d, dict) or "kind" not in d:
        shown = type(d).__name__ if not isinstance(d, dict) else f"a dict with keys {sorted(map(brief, d))[:8]}"
        raise RecordFormatError(f"{where}: a certificate record must be a dict with a 'kind' field; got {shown}.")
    kind = d["kind"]
    if not isinstance(kind, str) or kind not in _KINDS:
        raise RecordFormatError(f"{where}: unknown certificate kind {brief(kind)}; allowed: "
                                f"{', '.join(sorted(_KINDS))}.")
    cls = _KINDS[kind]
    allowed = [f.name for f in fields(cls)]
    extra = ["log2_n_outcomes"] if cls is DescriptionLength else []
    unknown = sorted(brief(k) for k in d if k != "kind" and k not in allowed + extra)
    if unknown:
        raise RecordFormatError(f"{where}: unknown field(s) {unknown} for kind {kind!r}; allowed: "
                                f"{', '.join(allowed + extra)}.")
    values = {k: v for k, v in d.items() if k in allowed}
    if cls is DescriptionLength and "n_outcomes" in values:
        values["n_outcomes"] = _count_from_record(values["n_outcomes"], where)
    try:
        cert = cls(**values)
    except (TypeError, ValueError) as exc:
        raise RecordFormatError(f"{where}: {exc}") from None
    shown_log2 = d.get("log2_n_outcomes", cert.log2_n_outcomes) if cls is DescriptionLength else None
    if cls is DescriptionLength and (type(shown_log2) is not float or shown_log2 != cert.log2_n_outcomes):
        raise RecordFormatError(f"{where}: field 'log2_n_outcomes' is {brief(shown_log2)} but "
                                f"log2 of the count is {cert.log2_n_outcomes!r}.")
    return cert
