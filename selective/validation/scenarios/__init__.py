"""The scenario library of the validity and power harness (``selective validate``)."""

from ._library import *  # noqa: F401,F403
from ._library import __all__  # noqa: F401
