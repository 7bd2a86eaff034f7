"""selective: honest p-values after exploratory analysis.

Explore through selectors with bounded leakage, keep the leakage on a ledger, test the chosen
hypotheses, and report corrected p-values next to the naive ones.

Main entry points: :class:`Analysis`, the selectors :class:`TopK` and :class:`NoisyTopK` (more
in :mod:`selective.selectors`), the test specs in :mod:`selective.hypotheses`, the certificates
and the :class:`Ledger` in :mod:`selective.accounting`, and :mod:`selective.corrections`;
:func:`suggest_epsilon` chooses the budget of a DP selector.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import _deprecated
from .accounting import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ZCDP,
    ApproxDP,
    DescriptionLength,
    Ledger,
    MaxInfo,
    MutualInfo,
    PureDP,
)
from .analysis import Analysis, CorrectedTable
from .exceptions import (
    BudgetExceededError,
    BudgetExhausted,
    CompositionOrderError,
    NoBoundError,
    RecordFormatError,
    SelectiveWarning,
)
from .selectors import NoisyTopK, Selection, TopK
from .selectors.epsilon import suggest_epsilon

_deprecated.install()

__all__ = [
    "__version__",
    "Analysis",
    "CorrectedTable",
    "Ledger",
    "Selection",
    "TopK",
    "NoisyTopK",
    "suggest_epsilon",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "DescriptionLength",
    "MaxInfo",
    "MutualInfo",
    "ANY_DISTRIBUTION",
    "PRODUCT",
    "BudgetExceededError",
    "BudgetExhausted",
    "CompositionOrderError",
    "NoBoundError",
    "RecordFormatError",
    "SelectiveWarning",
]
