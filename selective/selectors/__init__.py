"""Selectors: DP and description-length test-selection procedures."""

from .base import Selection, Selector

__all__ = ["Selection", "Selector"]
