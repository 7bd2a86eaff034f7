"""Every theory vector through ``evaluate_theory_vector``, against its published value.

Vector files: every ``tests/reference/theory_vectors*.json`` (the published half ships here;
a file with the held-back half dropped beside it is picked up unchanged), plus any file named
in the environment variable ``SELECTIVE_THEORY_VECTORS`` (os.pathsep-separated).

Tolerances (THEORY.md 10): relative 1e-9 for closed forms and for the objective of optimised
quantities; relative 1e-6 for their argmax (beta*, k*, crossovers, analytic sigma), whose
optimum is flat. Values below the double range are compared through their base-2 logarithm,
which the adapter returns as ``log2_<name>``.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
from decimal import Decimal, getcontext

import pytest
from reference_adapters import evaluate_theory_vector

REF = pathlib.Path(__file__).resolve().parents[1] / "reference"
getcontext().prec = 50

ARGMAX_PREFIXES = ("beta_opt", "k_opt", "k_at_beta_opt", "m_star", "sigma_analytic", "n1_exact")
REL_TOL = 1e-9
REL_TOL_ARGMAX = 1e-6
SMALLEST_NORMAL = 2.2250738585072014e-308


def _vector_files() -> list[pathlib.Path]:
    files = sorted(REF.glob("theory_vectors*.json"))
    extra = os.environ.get("SELECTIVE_THEORY_VECTORS", "")
    files += [pathlib.Path(p) for p in extra.split(os.pathsep) if p]
    return files


def _load():
    cases = []
    for f in _vector_files():
        data = json.loads(f.read_text())
        for v in data["vectors"]:
            cases.append(pytest.param(v, id=f"{f.stem}:{v['id']}:{v['formula_id']}"))
    return cases


def _log2_decimal(s: str) -> float:
    d = Decimal(s)
    return float(d.ln() / Decimal(2).ln())


def _compare(name: str, expected, got: dict, tol: float) -> None:
    if isinstance(expected, list):
        values = got[name]
        assert len(values) == len(expected), name
        for i, (e, g) in enumerate(zip(expected, values, strict=True)):
            _compare_scalar(f"{name}[{i}]", e, float(g), None, tol)
        return
    _compare_scalar(name, expected, got.get(name), got.get(f"log2_{name}"), tol)


def _compare_scalar(name: str, expected: str, value, log2_value, tol: float) -> None:
    try:
        e = float(expected)
    except ValueError:  # text output such as a scope
        assert value == expected, f"{name}: expected {expected!r}, got {value!r}"
        return
    if e != 0 and abs(Decimal(expected)) < Decimal(SMALLEST_NORMAL):
        # below the double range: compare logarithms (an error of rel. 1e-9 in the value is
        # 1.44e-9 in its log2)
        assert log2_value is not None, f"{name}: expected {expected} needs a log2 output"
        want = _log2_decimal(expected)
        assert abs(log2_value - want) <= tol * 1.5 + 1e-15 * abs(want), f"{name}: log2 {log2_value} vs {want}"
        return
    assert value is not None, f"{name}: no output"
    value = float(value)
    if e == 0:
        assert value == 0, f"{name}: expected 0, got {value}"
    else:
        assert math.isclose(value, e, rel_tol=tol, abs_tol=0), f"{name}: got {value!r}, expected {expected}"


@pytest.mark.parametrize("vector", _load())
def test_theory_vector_against_theory(vector):
    got = evaluate_theory_vector(vector)
    stated = vector.get("tolerance")
    for name, spec in vector["outputs"].items():
        tol = float(stated) if stated is not None else (
            REL_TOL_ARGMAX if name.startswith(ARGMAX_PREFIXES) else REL_TOL)
        _compare(name, spec["value"], got, tol)


def test_every_formula_id_in_the_files_is_covered():
    """A vector file may only use formula ids the adapter knows (unknown ids are bugs)."""
    from reference_adapters import SUPPORTED_FORMULA_IDS

    used = {v["formula_id"] for f in _vector_files() for v in json.loads(f.read_text())["vectors"]}
    assert used <= SUPPORTED_FORMULA_IDS, sorted(used - SUPPORTED_FORMULA_IDS)


def test_exact_randomized_response_sits_below_both_bounds():
    """THEORY 1.9: the exact max-information never exceeds Theorem 19 or Theorem 20."""
    data = json.loads((REF / "theory_vectors.json").read_text())
    for v in data["vectors"]:
        if v["formula_id"] == "exact_maxinfo_randomized_response":
            out = evaluate_theory_vector(v)
            assert out["k_exact"] <= out["k_bound_thm19_all_distributions"] + 1e-12
            assert out["k_exact"] <= out["k_bound_thm20_product"] + 1e-12
