"""What every selector returns, and the protocol selectors follow."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..accounting.certificates import Certificate

__all__ = ["Selection", "Selector", "declared_certificate"]


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of one selection step.

    Attributes
    ----------
    value : Any
        What was selected: a tuple of candidate names, a threshold index, a noisy statistic...
        Only this value may be used downstream; it is what the certificate covers.
    certificate : Certificate
        The leakage guarantee of the step (depends on the selector's parameters only).
    label : str
        A short human description, recorded in the ledger.
    details : dict
        Data-independent facts about the step worth keeping in the audit trail (number of
        candidates, noise scale, ...). Never raw data or un-noised statistics.
    """

    value: Any
    certificate: Certificate
    label: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Selector(Protocol):
    """A test-selection procedure with bounded leakage.

    ``select(data, rng)`` looks at the data only through the procedure the certificate
    describes and returns a :class:`Selection`. Selectors whose certificate is known before the
    data are seen also have a ``certificate()`` method, so that an analysis can check the order
    rules and budget before running them.
    """

    def select(  # pragma: no cover - protocol
        self, data: pd.DataFrame, rng: np.random.Generator | None = None
    ) -> Selection:
        ...


def declared_certificate(selector: Any):
    """The certificate a selector declares before seeing the data (``selector.certificate()``),
    or None when it has none to declare (its certificate depends on the data's shape)."""
    method = getattr(selector, "certificate", None)
    if method is None:
        return None
    if not callable(method):
        raise TypeError(
            f"`{type(selector).__name__}.certificate` must be a method returning the certificate; got {method!r}."
        )
    return method()
