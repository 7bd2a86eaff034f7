"""Shared test configuration.

The tests folder is put on ``sys.path`` so that test modules in sub-folders can import the
shared helpers (``reference_adapters``, ``stats_helpers``) by name.

Property tests (hypothesis) draw new examples at every run by default, so that local runs keep
exploring. ``SELECTIVE_HYPOTHESIS_PROFILE=ci`` (set by the CI script) derandomizes them: the same
examples at every CI run, so a CI result can be reproduced; a failure found locally is kept as an
explicit ``@example``.
"""

from __future__ import annotations

import os
import pathlib
import sys

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("SELECTIVE_HYPOTHESIS_PROFILE", "default"))

TESTS_DIR = pathlib.Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

REFERENCE_DIR = TESTS_DIR / "reference"
