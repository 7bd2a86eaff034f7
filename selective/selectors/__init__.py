"""Selectors: DP and description-length test-selection procedures.

Each selector's ``select(data, rng)`` returns a :class:`Selection`: what was chosen and the
certificate of the step, which :class:`selective.Analysis` records on the ledger.
"""

from .base import Selection, Selector
from .topk import NoisyTopK, SignedMeanScore, TopK

__all__ = ["Selection", "Selector", "TopK", "NoisyTopK", "SignedMeanScore"]
