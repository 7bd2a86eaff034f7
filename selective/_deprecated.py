"""Old import paths kept for one release, with a DeprecationWarning.

Version 0.2 moved the flat modules into layer packages (docs/ARCHITECTURE.md). Importing an
old module name returns a thin module that forwards every attribute to the new one and warns
once; old attribute names of a package resolve the same way. Remove in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

__all__ = ["MOVED_MODULES", "MOVED_ATTRIBUTES", "install", "moved_attribute"]

REMOVED_IN = "0.3"

#: old module name -> new module name
MOVED_MODULES = {
    "selective.report": "selective.analysis.report",
    "selective.plan": "selective.analysis.plan",
    "selective.audit": "selective.analysis.audit",
    "selective.simulate": "selective.validation.harness",
    "selective.scenarios": "selective.validation.scenarios",
    "selective.experiments": "selective.validation.experiments",
    "selective.rbridge": "selective.interop.rbridge",
    "selective.compare": "selective.interop.compare",
    "selective.conditional.rcompare": "selective.interop.rcompare",
}

#: package -> {old attribute name: module that now defines it}
MOVED_ATTRIBUTES = {
    "selective.conditional": {
        "RUnavailableError": "selective.interop.rcompare",
        "compare_with_r": "selective.interop.rcompare",
        "r_available": "selective.interop.rcompare",
        "why_r_unavailable": "selective.interop.rcompare",
    },
    "selective.validation.harness": {
        "validate": "selective.validation.validate",
        "add_validate_command": "selective.cli",
    },
}


def _stacklevel() -> int:
    """The stack level of the first frame outside the import machinery and this module."""
    frame, level = sys._getframe(1), 1
    while frame is not None and ("importlib" in frame.f_code.co_filename
                                 or frame.f_code.co_filename == __file__
                                 or frame.f_code.co_name == "__getattr__"):
        frame, level = frame.f_back, level + 1
    return level


def _warn(old: str, new: str) -> None:
    warnings.warn(f"`{old}` has moved to `{new}`; the old name will be removed in selective {REMOVED_IN}.",
                  DeprecationWarning, stacklevel=_stacklevel())


class _Forwarder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old module names and loads each as a module that forwards to the new one."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None  # a plain new module object

    def exec_module(self, module: types.ModuleType) -> None:
        new_name = MOVED_MODULES[module.__name__]
        _warn(module.__name__, new_name)
        target = importlib.import_module(new_name)
        module.__getattr__ = lambda name: getattr(target, name)  # PEP 562
        module.__dir__ = lambda: dir(target)
        module.__doc__ = f"Deprecated alias of :mod:`{new_name}`."
        if hasattr(target, "__all__"):
            module.__all__ = list(target.__all__)


_FORWARDER = _Forwarder()


def install() -> None:
    """Put the forwarder on ``sys.meta_path`` (once)."""
    if _FORWARDER not in sys.meta_path:
        sys.meta_path.append(_FORWARDER)


def moved_attribute(package: str, name: str):
    """The object an old attribute name of ``package`` now stands for, with a warning;
    AttributeError for any other name (the module ``__getattr__`` protocol)."""
    new_module = MOVED_ATTRIBUTES.get(package, {}).get(name)
    if new_module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    _warn(f"{package}.{name}", f"{new_module}.{name}")
    value = getattr(importlib.import_module(new_module), name)
    setattr(sys.modules[package], name, value)  # warn once: later look-ups find it directly
    return value
