"""The layering of the package (docs/ARCHITECTURE.md), its lint and its deprecated aliases.

The import-linter contracts live in pyproject.toml; ruff's configuration too. Both tools come
with the test extra; where they are missing the checks skip with the install hint, except
in CI, where a missing tool is a failure.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    path = str(exe) if exe.exists() else shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; CI installs the test extra (pip install -e '.[test]').")
        pytest.skip(f"{name} is not installed: pip install -e '.[test]'")
    return path


def test_import_contracts_hold():
    """Every layer imports only from the layers below it; accounting and corrections import
    no data-frame or model library (lint-imports exits non-zero on a broken contract)."""
    proc = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_a_wrong_way_import_breaks_the_contract(tmp_path):
    """The contract can fail: a copy of the package in which the accounting imports the
    analysis layer is reported as broken."""
    copy = tmp_path / "selective"
    shutil.copytree(ROOT / "selective", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bounds = copy / "accounting" / "bounds.py"
    bounds.write_text(bounds.read_text() + "\nfrom ..analysis import facade  # noqa\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          env=env)
    assert proc.returncode != 0
    assert "selective.accounting.bounds -> selective.analysis.facade" in proc.stdout


def test_ruff_finds_nothing():
    proc = subprocess.run([_tool("ruff"), "check", "selective", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_no_module_over_about_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "selective").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 550}
    assert not long, f"modules over 550 lines (split them by concept): {long}"


MOVED = [
    ("selective.report", "selective.analysis.report", "CorrectedTable"),
    ("selective.plan", "selective.analysis.plan", "run_plan"),
    ("selective.audit", "selective.analysis.audit", "write_audit"),
    ("selective.simulate", "selective.validation.harness", "simulate"),
    ("selective.scenarios", "selective.validation.scenarios", "get_scenario"),
    ("selective.experiments", "selective.validation.experiments", "holdout_reuse_experiment"),
    ("selective.rbridge", "selective.interop.rbridge", "why_r_unavailable"),
    ("selective.compare", "selective.interop.compare", "compare_selection"),
    ("selective.conditional.rcompare", "selective.interop.rcompare", "compare_with_r"),
]


@pytest.mark.parametrize(("old", "new", "name"), MOVED)
def test_old_module_paths_work_with_a_deprecation_warning(old, new, name):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"`{old}` has moved to `{new}`"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    sys.modules.pop(old, None)


@pytest.mark.parametrize("name", ["compare_with_r", "why_r_unavailable", "r_available", "RUnavailableError"])
def test_old_conditional_names_work_with_a_deprecation_warning(name):
    import selective.conditional as cond
    from selective.interop import rcompare

    cond.__dict__.pop(name, None)
    with pytest.warns(DeprecationWarning, match=f"selective.conditional.{name}"):
        value = getattr(cond, name)
    assert value is getattr(rcompare, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        cond.no_such_name  # noqa: B018


def test_public_api_of_0_1_still_imports_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from selective import Analysis, CorrectedTable, Ledger, NoisyTopK, TopK  # noqa: F401
        from selective.analysis import Analysis as A2
        from selective.corrections import correct, gamma_maxinfo  # noqa: F401
        from selective.hypotheses import CoefficientTest, TwoSampleTTest  # noqa: F401
        from selective.selectors import candidate_scores, welch_t_scores  # noqa: F401
    assert A2 is Analysis


def test_every_package_is_listed_for_the_wheel():
    """An installed (non-editable) copy contains only the packages pyproject.toml lists."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "selective").rglob("__init__.py")}
    assert found <= listed, f"packages missing from [tool.setuptools] packages: {sorted(found - listed)}"
