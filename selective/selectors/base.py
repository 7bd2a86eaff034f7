"""What every selector returns, the protocol selectors follow, and the checks they share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..accounting.certificates import Certificate

__all__ = [
    "Selection",
    "Selector",
    "NonFiniteScoreError",
    "declared_certificate",
    "declared_columns",
    "ordered_labels",
    "missing_columns",
]


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

    Raises
    ------
    TypeError
        ``certificate`` is not one of the certificate types, or ``label`` is not a string.
    """

    value: Any
    certificate: Certificate
    label: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.certificate, Certificate):
            raise TypeError("`certificate` must be one of PureDP, ApproxDP, ZCDP, DescriptionLength, MaxInfo, "
                            f"MutualInfo; got {type(self.certificate).__name__}.")
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a string; got {self.label!r} ({type(self.label).__name__}).")


class NonFiniteScoreError(ValueError):
    """A score function returned a NaN or infinite score.

    The message names the first such candidate in the declared order, so it can take one of
    ``n_messages`` (the number of declared candidates) values: :class:`~selective.Analysis`
    counts each of them as one more outcome of a description-length step.
    """

    def __init__(self, message: str, n_messages: int) -> None:
        super().__init__(message)
        self.n_messages = int(n_messages)


@runtime_checkable
class Selector(Protocol):
    """A test-selection procedure with bounded leakage.

    ``select(data, rng)`` looks at the data only through the procedure the certificate
    describes and returns a :class:`Selection`. Selectors whose certificate is known before the
    data are seen also have a ``certificate()`` method, so that an analysis can check the order
    rules and budget before running them; selectors that know which columns they read have a
    ``required_columns()`` method (``{argument name: column labels}``), so that an analysis can
    refuse a missing column before the data are touched.
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


def declared_columns(obj: Any) -> dict[str, tuple]:
    """The columns ``obj`` declares it reads, ``{argument name: labels}`` (empty if it declares none).

    Taken from ``obj.required_columns()`` when ``obj`` has it (selectors, score objects such as
    :class:`~selective.selectors.SignedMeanScore`). Declaring columns lets a missing one be
    refused before the data are touched.
    """
    method = getattr(obj, "required_columns", None)
    if method is None:
        return {}
    if not callable(method):
        raise TypeError(f"`{type(obj).__name__}.required_columns` must be a method returning "
                        f"{{argument name: column labels}}; got {method!r}.")
    out = method()
    if not isinstance(out, Mapping):
        raise TypeError(f"`{type(obj).__name__}.required_columns()` must return a mapping "
                        f"{{argument name: column labels}}; got {type(out).__name__}.")
    return {str(k): tuple(v) for k, v in out.items()}


def missing_columns(data: pd.DataFrame, required: Mapping[str, tuple]) -> str | None:
    """A message naming every argument whose declared columns are not all in ``data``, or None.

    Only the column labels are read (the schema), never a value.
    """
    present = data.columns
    parts = []
    for arg, labels in required.items():
        miss = []
        for c in labels:
            try:
                found = c in present
            except TypeError:  # an unhashable label cannot be a column
                found = False
            if not found:
                miss.append(c)
        if miss:
            parts.append(f"`{arg}` names {len(miss)} column(s) not in `data`: {miss[:10]!r}")
    if not parts:
        return None
    shown = list(present[:12])
    more = f" (and {len(present) - 12} more)" if len(present) > 12 else ""
    return "; ".join(parts) + f". The columns of `data` are {shown!r}{more}."


def ordered_labels(name: str, value: Any, *, allow_empty: bool = False, noun: str = "label") -> tuple:
    """``value`` as a tuple of labels, refusing what has no fixed order or is not a collection.

    Accepted: a list, a tuple, a range, a 1-d numpy array, a pandas Index / Series (its
    values) or the keys of a dict (insertion order). Refused with a TypeError naming ``name``:
    a string or bytes (its characters are not labels), a set (its order changes with the hash
    seed, so the selections would too), a dict, an iterator, None, or anything else. Labels
    must be hashable and distinct.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"`{name}` must be a list or tuple of {noun}s; got the string {value!r} (write "
                        f"[{value!r}] for a single {noun}).")
    if isinstance(value, _DICT_KEYS):  # insertion-ordered, unlike other sets
        value = tuple(value)
    if isinstance(value, (Set, Mapping)):
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise TypeError(f"`{name}` must be an ordered collection (a list or tuple) of {noun}s; got a "
                        f"{type(value).__name__} {shown}, whose order is arbitrary and would make the selection "
                        f"depend on the hash seed. Pass sorted({name}) or a list.")
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError(f"`{name}` must be a one-dimensional collection of {noun}s; got an array of shape "
                            f"{value.shape}.")
        items = tuple(value.tolist())
    elif isinstance(value, (pd.Index, pd.Series)):
        items = tuple(value.tolist())
    elif isinstance(value, Sequence):
        items = tuple(value)
    else:
        raise TypeError(f"`{name}` must be a list or tuple of {noun}s; got {value!r} ({type(value).__name__}).")
    if not items and not allow_empty:
        raise ValueError(f"`{name}` must hold at least one {noun}; got none.")
    try:
        distinct = len(set(items)) == len(items)
    except TypeError:
        bad = next(c for c in items if not _hashable(c))
        raise TypeError(f"`{name}` must hold hashable {noun}s; got {bad!r} ({type(bad).__name__}).") from None
    if not distinct:
        seen: set = set()
        dup = next(c for c in items if c in seen or seen.add(c))
        raise ValueError(f"`{name}` must not repeat a {noun}; got {dup!r} more than once.")
    return items


_DICT_KEYS = type({}.keys())


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True
