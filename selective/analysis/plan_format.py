"""The plan file format: reading a TOML plan and checking every key (see :mod:`.plan`)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..accounting.certificates import brief, certificate_from_dict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PlanError", "Plan", "load_plan", "parse_plan", "TEST_KINDS", "SCORES", "SELECTORS", "ANALYSIS_FIELDS",
           "FISSION_FIELDS"]

SELECTORS = ("top_k", "noisy_top_k", "sparse_vector", "declared", "randomized_lasso", "randomized_stepwise",
             "t_screen")
#: selectors of the features of a regression model (carving, t-test screening), and their required numeric fields
_CARVING = {"randomized_lasso": ("lam", "max_size"), "randomized_stepwise": ("steps",), "t_screen": ()}
SCORES = ("welch_t", "abs_mean", "abs_corr", "clipped_mean", "signed_mean")
_DP_SCORES = ("clipped_mean", "signed_mean")


class PlanError(ValueError):
    """A plan file is malformed, or does not run on the data; the message names the file, the
    section and the field."""


def _test_kinds() -> dict[str, tuple[type, dict[str, Any]]]:
    from .. import hypotheses as H

    return {
        "welch_t": (H.TwoSampleTTest, {"usevar": "unequal"}),
        "student_t": (H.TwoSampleTTest, {"usevar": "pooled"}),
        "one_sample_t": (H.OneSampleTTest, {}),
        "paired_t": (H.PairedTTest, {}),
        "z": (H.OneSampleZTest, {}),
        "two_sample_z": (H.TwoSampleZTest, {}),
        "proportion": (H.OneSampleProportionTest, {}),
        "two_proportions": (H.TwoSampleProportionTest, {}),
        "chi2_independence": (H.ChiSquareIndependenceTest, {}),
        "pearson": (H.PearsonCorrelationTest, {}),
        "spearman": (H.SpearmanCorrelationTest, {}),
        "ols": (H.CoefficientTest, {"model": "ols"}),
        "logit": (H.CoefficientTest, {"model": "logit"}),
        "poisson": (H.CoefficientTest, {"model": "poisson"}),
        "joint_wald": (H.JointWaldTest, {}),
    }


TEST_KINDS = ("welch_t", "student_t", "one_sample_t", "paired_t", "z", "two_sample_z", "proportion",
              "two_proportions", "chi2_independence", "pearson", "spearman", "ols", "logit", "poisson", "joint_wald")

#: the fields of [analysis]
ANALYSIS_FIELDS = ("alpha", "seed", "n_candidates", "budget_bits", "budget_beta", "budget_epsilon", "units")
#: the fields every [[select]] block may have, by selector, and the fields each score adds
_SELECT_FIELDS = {
    "top_k": ("selector", "label", "k", "candidates", "candidates_like", "score", "ordered"),
    "noisy_top_k": ("selector", "label", "k", "candidates", "candidates_like", "score", "epsilon"),
    "sparse_vector": ("selector", "label", "candidates", "candidates_like", "score", "epsilon", "threshold",
                      "max_selected"),
    "declared": ("selector", "label", "value", "certificate"),
    "randomized_lasso": ("selector", "label", "target", "candidates", "candidates_like", "lam", "max_size", "sigma",
                         "noise_sd"),
    "randomized_stepwise": ("selector", "label", "target", "candidates", "candidates_like", "steps", "sigma",
                            "noise_sd"),
    "t_screen": ("selector", "label", "target", "candidates", "candidates_like", "keep_below"),
}
_SCORE_FIELDS = {
    "welch_t": ("group", "levels"),
    "abs_mean": (),
    "abs_corr": ("target",),
    "clipped_mean": ("clip",),
    "signed_mean": ("group", "positive", "clip"),
}


#: the fields of [fission]
FISSION_FIELDS = ("columns", "columns_like", "method", "sigma", "tau", "epsilon", "trials")


@dataclass(frozen=True)
class Plan:
    source: str
    analysis: dict[str, Any]
    select: tuple[dict[str, Any], ...]
    test: tuple[dict[str, Any], ...]
    raw: dict[str, Any]
    fission: dict[str, Any] | None = None


def load_plan(path: str | Path) -> Plan:
    """Read and check a plan file (TOML); every failure is a :class:`PlanError` naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError(f"plan file {str(path)!r} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan file {str(path)!r} cannot be read as UTF-8 text: {exc}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise PlanError(f"{path}: not valid TOML: arrays or tables nested too deeply.") from None
    return parse_plan(raw, source=str(path))


def _err(source: str, where: str, msg: str) -> PlanError:
    return PlanError(f"{source}: {where}: {msg}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_scalar(v: Any) -> bool:
    """A plain TOML scalar: a string, a boolean, an integer or a finite float (no dates)."""
    return isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v))


def _check_value(source: str, where: str, v: Any, *, table: bool = False) -> None:
    """A plan value is a scalar or a flat array of scalars (``table``: a table of scalars)."""
    if _is_scalar(v):
        return
    if isinstance(v, list) and all(_is_scalar(x) for x in v):
        return
    if table and isinstance(v, dict) and all(isinstance(k, str) and _is_scalar(x) for k, x in v.items()):
        return
    if isinstance(v, float):
        raise _err(source, where, f"must be a finite number; got {v!r}.")
    what = "a table of strings, numbers and booleans" if table else (
        "a string, a number, a boolean or an array of those")
    raise _err(source, where, f"must be {what}; got {brief(v)} ({type(v).__name__}).")


def _check_fields(source: str, where: str, block: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    unknown = [k for k in block if k not in allowed]
    if unknown:
        raise _err(source, where, f"unknown field(s) {', '.join(map(brief, unknown))} {what}; allowed: "
                                  f"{', '.join(allowed)}.")


def _want(source: str, where: str, key: str, block: dict[str, Any], ok: bool, what: str) -> None:
    if not ok:
        raise _err(source, f"{where} {key}", f"must be {what}; got {brief(block.get(key))}.")


def _parse_analysis(source: str, analysis: Any) -> None:
    if not isinstance(analysis, dict):
        raise _err(source, "[analysis]", f"must be a table; got {brief(analysis)}.")
    _check_fields(source, "[analysis]", analysis, ANALYSIS_FIELDS, "in [analysis]")
    a, w = analysis, "[analysis]"
    if "alpha" in a:
        _want(source, w, "alpha", a, _is_number(a["alpha"]) and 0 < a["alpha"] < 1, "a number in (0, 1)")
    if "seed" in a:
        _want(source, w, "seed", a, isinstance(a["seed"], int) and not isinstance(a["seed"], bool) and a["seed"] >= 0,
              "a non-negative integer")
    if "n_candidates" in a:
        v = a["n_candidates"]
        _want(source, w, "n_candidates", a, isinstance(v, int) and not isinstance(v, bool) and v >= 1,
              "an integer >= 1 (hypotheses declared before looking)")
    for key in ("budget_bits", "budget_epsilon"):
        if key in a:
            v = a[key]
            _want(source, w, key, a, _is_number(v) and math.isfinite(v) and v > 0, "a finite positive number")
    if "budget_beta" in a:
        _want(source, w, "budget_beta", a, _is_number(a["budget_beta"]) and 0 < a["budget_beta"] < 1,
              "a number in (0, 1)")
    if ("budget_bits" in a) != ("budget_beta" in a):
        raise _err(source, w, "give `budget_bits` and `budget_beta` together (the bits are checked at that slack).")
    if "units" in a:
        _want(source, w, "units", a, isinstance(a["units"], str), "the name of the column of independent units")


def _parse_fission(source: str, f: Any) -> None:
    w = "[fission]"
    if not isinstance(f, dict):
        raise _err(source, w, f"must be a table; got {brief(f)}.")
    _check_fields(source, w, f, FISSION_FIELDS, "in [fission]")
    _candidate_fields(source, w, f, key="columns", what="outcome columns", example="y*")
    _want(source, w, "method", f, f.get("method") in ("gaussian", "poisson", "binomial"),
          "\"gaussian\", \"poisson\" or \"binomial\"")
    for key in ("sigma", "tau"):
        if key in f:
            _want(source, w, key, f, _is_number(f[key]) and math.isfinite(f[key]) and f[key] > 0,
                  "a finite positive number")
    if "epsilon" in f:
        _want(source, w, "epsilon", f, _is_number(f["epsilon"]) and 0 < f["epsilon"] < 1, "a number in (0, 1)")
    if f["method"] == "gaussian" and "sigma" not in f:
        raise _err(source, w, "method \"gaussian\" needs `sigma`, the known noise standard deviation.")
    if f["method"] == "binomial" and "trials" not in f:
        raise _err(source, w, "method \"binomial\" needs `trials`, the name of the column of numbers of trials.")
    if f["method"] != "binomial" and "trials" in f:
        raise _err(source, w, f"`trials` applies to method \"binomial\" only; got method {brief(f['method'])}.")
    if "trials" in f:
        _want(source, w, "trials", f, isinstance(f["trials"], str), "the name of the column of numbers of trials")


def _parse_select(source: str, i: int, s: dict[str, Any], n_select: int) -> None:
    where = f"[[select]] #{i}"
    sel = s.get("selector")
    if sel not in SELECTORS:
        raise _err(source, f"{where} selector", f"must be one of {', '.join(SELECTORS)}; got {brief(sel)}.")
    if "label" in s:
        _want(source, where, "label", s, isinstance(s["label"], str), "a string")
    if sel == "declared":
        _check_fields(source, where, s, _SELECT_FIELDS[sel], "for selector 'declared'")
        if not isinstance(s.get("certificate"), dict):
            raise _err(source, f"{where} certificate", "a declared step needs a certificate table, e.g. "
                                                       "{kind = \"description_length\", n_outcomes = 10}.")
        _check_value(source, f"{where} certificate", s["certificate"], table=True)
        try:
            certificate_from_dict(s["certificate"], where=f"{source}: {where} certificate")
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        if not isinstance(s.get("value"), list):
            raise _err(source, f"{where} value", "a declared step needs the list of what was selected.")
        _check_value(source, f"{where} value", s["value"])
        return
    if sel in _CARVING:
        _parse_carving(source, where, s, sel)
        return
    score = s.get("score")
    allowed_scores = _DP_SCORES if sel in ("noisy_top_k", "sparse_vector") else SCORES
    if score not in allowed_scores:
        raise _err(source, f"{where} score", f"must be one of {', '.join(allowed_scores)}; got {brief(score)}.")
    _check_fields(source, where, s, _SELECT_FIELDS[sel] + _SCORE_FIELDS[score],
                  f"for selector {sel!r} with score {score!r}")
    size = "max_selected" if sel == "sparse_vector" else "k"
    k = s.get(size)
    _want(source, where, size, s, isinstance(k, int) and not isinstance(k, bool) and k >= 1, "an integer >= 1")
    if sel == "sparse_vector":
        t = s.get("threshold")
        _want(source, where, "threshold", s, _is_number(t) and math.isfinite(t), "a finite number")
    _candidate_fields(source, where, s)
    if "ordered" in s:
        _want(source, where, "ordered", s, isinstance(s["ordered"], bool), "true or false (a TOML boolean)")
    if sel in ("noisy_top_k", "sparse_vector"):
        e = s.get("epsilon")
        _want(source, where, "epsilon", s, _is_number(e) and math.isfinite(e) and e > 0,
              "a finite positive number (nats)")
    for key in ("group", "target"):
        if key in s:
            _want(source, where, key, s, isinstance(s[key], str), "a column name")
    if "levels" in s:
        lv = s["levels"]
        _want(source, where, "levels", s, isinstance(lv, list) and len(lv) == 2 and all(_is_scalar(x) for x in lv),
              "a list of the two compared groups")
    if "positive" in s:
        _want(source, where, "positive", s, _is_scalar(s["positive"]), "the value of `group` that counts as +1")
    if "clip" in s:
        c = s["clip"]
        _want(source, where, "clip", s, _is_number(c) and math.isfinite(c) and c > 0, "a finite positive number")
    for key in _SCORE_FIELDS[score]:
        if key not in s and key != "clip":
            raise _err(source, where, f"score {score!r} needs the field `{key}`.")


def _parse_carving(source: str, where: str, s: dict[str, Any], sel: str) -> None:
    """A randomized lasso or stepwise step (target, features (``candidates``), sigma, its size) or a
    t-test screen (target, features, optional ``keep_below``)."""
    _check_fields(source, where, s, _SELECT_FIELDS[sel], f"for selector {sel!r}")
    for key in ("target",) + (() if sel == "t_screen" else ("sigma",)) + _CARVING[sel]:
        if key not in s:
            raise _err(source, where, f"selector {sel!r} needs the field `{key}`.")
    _want(source, where, "target", s, isinstance(s["target"], str), "a column name")
    _candidate_fields(source, where, s)
    for key in ("lam", "sigma", "noise_sd"):
        if key in s:
            v = s[key]
            _want(source, where, key, s, _is_number(v) and math.isfinite(v) and v > 0, "a finite positive number")
    for key in ("max_size", "steps"):
        if key in s:
            v = s[key]
            _want(source, where, key, s, isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                  "an integer >= 1")
    if "keep_below" in s:
        v = s["keep_below"]
        _want(source, where, "keep_below", s, _is_number(v) and 0 < v < 1, "a number in (0, 1)")


def _candidate_fields(source: str, where: str, s: dict[str, Any], *, key: str = "candidates",
                      what: str = "columns", example: str = "m*") -> None:
    """Exactly one of ``key`` (a non-empty list of column names) and ``key_like`` (a pattern)."""
    like = f"{key}_like"
    if (key in s) == (like in s):
        raise _err(source, where, f"give exactly one of `{key}` (a list of {what}) or `{like}` (a pattern).")
    if key in s:
        c = s[key]
        _want(source, where, key, s, isinstance(c, list) and bool(c) and all(isinstance(x, str) for x in c),
              "a non-empty list of column names")
    else:
        _want(source, where, like, s, isinstance(s[like], str), f"a column-name pattern such as \"{example}\"")


def _parse_test(source: str, i: int, t: dict[str, Any], n_select: int, kinds: dict[str, Any]) -> None:
    where = f"[[test]] #{i}"
    kind = t.get("kind")
    if not isinstance(kind, str) or kind not in kinds:
        raise _err(source, f"{where} kind", f"must be one of {', '.join(TEST_KINDS)}; got {brief(kind)}.")
    fe = t.get("for_each")
    if fe is not None and not (isinstance(fe, int) and not isinstance(fe, bool) and 1 <= fe <= n_select):
        raise _err(source, f"{where} for_each",
                   f"must be the number of a [[select]] block (1..{n_select}); got {brief(fe)}.")
    cls, fixed = kinds[kind]
    allowed_fields = tuple(sorted({f.name for f in fields(cls)} - set(fixed)))
    _check_fields(source, where, t, ("kind", "for_each", "conditional") + allowed_fields, f"for kind {kind!r}")
    if "conditional" in t:
        _want(source, where, "conditional", t, isinstance(t["conditional"], bool), "true or false (a TOML boolean)")
        if t["conditional"] and fe is None:
            raise _err(source, f"{where} conditional", "needs `for_each`: the test is conditioned on that step's "
                                                       "ranking (inference on winners).")
    for key, v in t.items():
        _check_value(source, f"{where} {key}", v)


def parse_plan(raw: dict[str, Any], *, source: str = "<plan>") -> Plan:
    """Check the structure of a plan (a dict as read from TOML).

    Every key is checked: an unknown key, a value of the wrong type (a string where a boolean
    is expected, a date, a non-finite number) raises :class:`PlanError` naming ``source``, the
    section and the key, and listing what is allowed.
    """
    if not isinstance(raw, dict):
        raise _err(source, "top level", "a plan must be a TOML table.")
    unknown = [k for k in raw if k not in ("analysis", "fission", "select", "test")]
    if unknown:
        raise _err(source, "top level", f"unknown section(s) {', '.join(map(brief, unknown))}; allowed: [analysis], "
                                        "[fission], [[select]], [[test]].")
    if "fission" in raw:
        _parse_fission(source, raw["fission"])
    analysis = raw.get("analysis", {})
    _parse_analysis(source, analysis)
    selects = raw.get("select", [])
    tests = raw.get("test", [])
    if not isinstance(selects, list) or not all(isinstance(s, dict) for s in selects):
        raise _err(source, "[[select]]", "must be an array of tables ([[select]] blocks).")
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests) or not tests:
        raise _err(source, "[[test]]", "the plan needs at least one [[test]] block.")
    for i, s in enumerate(selects, 1):
        _parse_select(source, i, s, len(selects))
    kinds = _test_kinds()
    for i, t in enumerate(tests, 1):
        _parse_test(source, i, t, len(selects), kinds)
    return Plan(source=source, analysis=dict(analysis), select=tuple(selects), test=tuple(tests), raw=raw,
                fission=dict(raw["fission"]) if "fission" in raw else None)
