"""Shared test configuration.

The tests folder is put on ``sys.path`` so that test modules in sub-folders can import the
shared helpers (``reference_adapters``, ``stats_helpers``) by name.
"""

from __future__ import annotations

import pathlib
import sys

TESTS_DIR = pathlib.Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

REFERENCE_DIR = TESTS_DIR / "reference"
