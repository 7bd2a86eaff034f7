"""selective: honest p-values after exploratory analysis."""

from __future__ import annotations

__version__ = "0.1.0"

from .exceptions import (
    BudgetExceededError,
    BudgetExhausted,
    CompositionOrderError,
    NoBoundError,
    SelectiveWarning,
)

__all__ = [
    "__version__",
    "BudgetExceededError",
    "BudgetExhausted",
    "CompositionOrderError",
    "NoBoundError",
    "SelectiveWarning",
]
