"""Sphinx configuration: API reference (autodoc + numpydoc), the theory sheet and the vignettes.

Build with ``make docs`` (warnings are errors). The vignettes are executed during the build by
the local extension ``_ext/vignettes.py``, which writes them with their outputs and figures to
``_generated/vignettes/``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

import selective  # noqa: E402

project = "selective"
author = "The selective developers"
copyright = "The selective developers"  # noqa: A001
version = release = selective.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "vignettes",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", ".gitignore"]

# MyST: $...$ and $$...$$ math in the theory sheet, heading anchors for its cross-references
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4

# autodoc / numpydoc
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
# Module docstrings define the shared references ([DFHPRR], [RRST], ...) for themselves, and numpydoc
# makes those labels local to their docstring: the functions citing them resolve to references.rst.
# A module reference that its own docstring does not cite is not a fault.
suppress_warnings = ["ref.citation"]

html_theme = "alabaster"
html_title = f"selective {release}"
html_static_path = ["_static"]
html_css_files = ["tables.css"]  # wide tables scroll within the text column
html_theme_options = {"page_width": "min(96%, 1400px)", "sidebar_width": "220px"}  # room for the wide tables

# the vignettes run with their reduced simulation sizes, so that the build takes minutes
os.environ.setdefault("SELECTIVE_VIGNETTE_FAST", "1")
vignettes_source = str(HERE.parent / "vignettes")
