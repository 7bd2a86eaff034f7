"""Errors and warnings of ``selective``.

Domain errors subclass the builtin they refine, so ``except ValueError`` still catches them.
"""

from __future__ import annotations

__all__ = [
    "SelectiveWarning",
    "CompositionOrderError",
    "BudgetExceededError",
    "NoBoundError",
    "BudgetExhausted",
    "RecordFormatError",
]


class SelectiveWarning(UserWarning):
    """A warning from ``selective`` (a bound fell back, an option was ignored, ...)."""


class CompositionOrderError(ValueError):
    """A step cannot follow the steps already recorded: no valid bound covers that order."""


class BudgetExceededError(ValueError):
    """Recording the step would exceed the ledger's declared budget; nothing was recorded."""


class NoBoundError(ValueError):
    """No numeric bound is available for the requested quantity (the theorem is missing or
    does not apply); ``selective`` refuses to invent one."""


class BudgetExhausted(RuntimeError):
    """A mechanism with a finite answering budget (Thresholdout, Sparse Vector) has used it up
    and will not answer further queries."""



class RecordFormatError(ValueError):
    """A saved record (a ledger or an audit, as JSON) is malformed or of an unsupported version;
    the message names the file (or record) and the field, and what was expected."""
