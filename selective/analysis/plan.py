"""Analysis plans: a TOML file that declares the selection steps and the confirmatory tests.

A plan makes an analysis declarative, so that ``selective analyze`` can run it and
``selective verify`` can re-run it from the audit record. Format (every key is checked; an
error names the file, the section and the field)::

    [analysis]
    alpha = 0.05            # level of the corrected intervals
    seed = 2026             # seeds every random choice
    n_candidates = 120      # hypotheses declared before looking (enables Bonferroni)

    [[select]]              # step 1
    selector = "top_k"      # "top_k", "noisy_top_k" or "declared"
    k = 3
    candidates_like = "m*"  # or candidates = ["m01", "m02", ...]
    score = "welch_t"       # see SCORES below
    group = "arm"
    levels = ["treatment", "control"]

    [[test]]
    kind = "welch_t"        # see TEST_KINDS below
    for_each = 1            # once per variable chosen by [[select]] step 1 ...
    column = "{selected}"   # ... with {selected} replaced by its name
    group = "arm"
    levels = ["treatment", "control"]

Scores: ``welch_t`` (|Welch t| between the two ``levels`` of ``group``), ``abs_mean``,
``abs_corr`` (with ``target``), ``clipped_mean`` (|mean of values clipped to ±``clip``|,
sensitivity 2·clip/n) and ``signed_mean`` (see :class:`~selective.selectors.SignedMeanScore`).
``noisy_top_k`` (pure DP) takes ``epsilon`` and a score of known sensitivity (``clipped_mean``
or ``signed_mean``). ``declared`` records a selection made elsewhere: its ``value`` and its
``certificate`` (a table with ``kind`` = "pure_dp", "approx_dp", "zcdp", "description_length",
...), checked against the order rules like any other step.
"""

from __future__ import annotations

import copy
import fnmatch
import math
import sys
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..accounting.certificates import brief, certificate_from_dict
from ..accounting.composition import group_privacy
from ..exceptions import CompositionOrderError, SelectiveWarning
from ..selectors.base import Selection, declared_certificate
from ..selectors.topk import NoisyTopK, SignedMeanScore, TopK
from .facade import Analysis

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PlanError", "Plan", "load_plan", "parse_plan", "run_plan", "draw_seed", "with_seed", "TEST_KINDS", "SCORES",
           "SELECTORS", "ANALYSIS_FIELDS"]

SELECTORS = ("top_k", "noisy_top_k", "declared")
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
    "declared": ("selector", "label", "value", "certificate"),
}
_SCORE_FIELDS = {
    "welch_t": ("group", "levels"),
    "abs_mean": (),
    "abs_corr": ("target",),
    "clipped_mean": ("clip",),
    "signed_mean": ("group", "positive", "clip"),
}


@dataclass(frozen=True)
class Plan:
    source: str
    analysis: dict[str, Any]
    select: tuple[dict[str, Any], ...]
    test: tuple[dict[str, Any], ...]
    raw: dict[str, Any]


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
    score = s.get("score")
    allowed_scores = _DP_SCORES if sel == "noisy_top_k" else SCORES
    if score not in allowed_scores:
        raise _err(source, f"{where} score", f"must be one of {', '.join(allowed_scores)}; got {brief(score)}.")
    _check_fields(source, where, s, _SELECT_FIELDS[sel] + _SCORE_FIELDS[score],
                  f"for selector {sel!r} with score {score!r}")
    k = s.get("k")
    _want(source, where, "k", s, isinstance(k, int) and not isinstance(k, bool) and k >= 1, "an integer >= 1")
    if ("candidates" in s) == ("candidates_like" in s):
        raise _err(source, where, "give exactly one of `candidates` (a list of columns) or `candidates_like` "
                                  "(a pattern).")
    if "candidates" in s:
        c = s["candidates"]
        _want(source, where, "candidates", s, isinstance(c, list) and bool(c) and all(isinstance(x, str) for x in c),
              "a non-empty list of column names")
    else:
        _want(source, where, "candidates_like", s, isinstance(s["candidates_like"], str),
              "a column-name pattern such as \"m*\"")
    if "ordered" in s:
        _want(source, where, "ordered", s, isinstance(s["ordered"], bool), "true or false (a TOML boolean)")
    if sel == "noisy_top_k":
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
    _check_fields(source, where, t, ("kind", "for_each") + allowed_fields, f"for kind {kind!r}")
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
    unknown = [k for k in raw if k not in ("analysis", "select", "test")]
    if unknown:
        raise _err(source, "top level", f"unknown section(s) {', '.join(map(brief, unknown))}; allowed: [analysis], "
                                        "[[select]], [[test]].")
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
    return Plan(source=source, analysis=dict(analysis), select=tuple(selects), test=tuple(tests), raw=raw)


def _candidates(plan: Plan, i: int, s: dict[str, Any], data: pd.DataFrame) -> tuple[str, ...]:
    where = f"[[select]] #{i}"
    if "candidates" in s:
        cands = s["candidates"]
        missing = [c for c in cands if c not in data.columns]
        if missing:
            raise _err(plan.source, f"{where} candidates", f"unknown column(s) {missing[:5]}; the data have "
                                                           f"{_columns(data)}.")
        return tuple(cands)
    pattern = s["candidates_like"]
    cands = tuple(str(c) for c in data.columns if fnmatch.fnmatchcase(str(c), pattern))
    if not cands:
        raise _err(plan.source, f"{where} candidates_like", f"the pattern {pattern!r} matches no column of the data.")
    return cands


def _columns(data: pd.DataFrame) -> str:
    names = list(map(str, data.columns))
    return str(names[:12])[:-1] + (", ...]" if len(names) > 12 else "]")


def _need(plan: Plan, where: str, s: dict[str, Any], key: str, data: pd.DataFrame | None = None) -> Any:
    if key not in s:
        raise _err(plan.source, where, f"score {s.get('score')!r} needs the field `{key}`.")
    if data is not None and s[key] not in data.columns:
        raise _err(plan.source, f"{where} {key}", f"unknown column {s[key]!r}; the data have {_columns(data)}.")
    return s[key]


def _numeric(plan: Plan, where: str, data: pd.DataFrame, cols: tuple[str, ...]) -> None:
    for c in cols:
        if not pd.api.types.is_numeric_dtype(data[c]):
            raise _err(plan.source, where,
                       f"column {c!r} must be numeric for this score; it has dtype {data[c].dtype}.")
        n_missing = int(data[c].isna().sum())
        if n_missing:
            raise _err(plan.source, where,
                       f"column {c!r} has {n_missing} missing value(s); scores need complete columns.")


def _values_present(plan: Plan, where: str, data: pd.DataFrame, column: str, values: tuple) -> None:
    """A group value the plan names must occur in the data (a typo would silently change the score)."""
    present = set(data[column].dropna().unique().tolist())
    missing = [v for v in values if v not in present]
    if missing:
        shown = sorted(map(str, present))[:12]
        raise _err(plan.source, where, f"{brief(missing[0])} is not a value of column {column!r}; it has {shown}.")


def _build_selector(plan: Plan, i: int, s: dict[str, Any], data: pd.DataFrame, n_units: int):
    where = f"[[select]] #{i}"
    if s["selector"] == "declared":
        cert = certificate_from_dict(s["certificate"])
        value = tuple(s["value"])
        label = s.get("label", f"declared selection ({cert.describe()})")

        class _Declared:
            def certificate(self):
                return cert

            def select(self, data, rng=None):
                return Selection(value=value, certificate=cert, label=label)

        return _Declared()
    cands = _candidates(plan, i, s, data)
    if s["k"] > len(cands):
        raise _err(plan.source, f"{where} k", f"must be at most the number of candidates ({len(cands)}); got {s['k']}.")
    score_name = s["score"]
    _numeric(plan, where, data, cands)
    n = len(data)
    if score_name == "welch_t":
        group = _need(plan, where, s, "group", data)
        levels = tuple(_need(plan, where, s, "levels"))
        _values_present(plan, f"{where} levels", data, group, levels)
        from ..selectors.scores import welch_t_scores

        score, sens = (lambda d: welch_t_scores(d, list(cands), group, levels)), None
    elif score_name == "abs_mean":
        score, sens = (lambda d: d[list(cands)].mean().abs()), None
    elif score_name == "abs_corr":
        target = _need(plan, where, s, "target", data)
        score, sens = (lambda d: d[list(cands)].corrwith(d[target]).abs()), None
    elif score_name == "clipped_mean":
        clip = float(s.get("clip", 3.0))
        score, sens = (lambda d: d[list(cands)].clip(-clip, clip).mean().abs()), 2 * clip / n
    else:  # signed_mean
        group = _need(plan, where, s, "group", data)
        positive = _need(plan, where, s, "positive")
        _values_present(plan, f"{where} positive", data, group, (positive,))
        sm = SignedMeanScore(columns=cands, sign_column=group, positive=positive, clip=float(s.get("clip", 3.0)))
        score, sens = (lambda d: sm(d).abs()), sm.sensitivity(n)
    name = score_name.replace("_", " ")
    if s["selector"] == "top_k":
        return TopK(k=s["k"], score=score, candidates=cands, ordered=s.get("ordered", False), name=name)
    return NoisyTopK(k=s["k"], epsilon=float(s["epsilon"]), sensitivity=sens, score=score, candidates=cands, name=name)


def _fill(value: Any, selected: str | None) -> Any:
    if selected is None:
        return value
    if isinstance(value, str):
        return value.replace("{selected}", selected)
    if isinstance(value, list):
        return [_fill(v, selected) for v in value]
    return value


#: what running a step or a test on the data may raise: reported as a PlanError naming the block
_RUN_ERRORS: tuple[type[BaseException], ...] = (ValueError, TypeError, KeyError, IndexError, ArithmeticError)
try:  # formula errors of the regression tests
    from patsy import PatsyError

    _RUN_ERRORS = _RUN_ERRORS + (PatsyError,)
except ImportError:  # pragma: no cover - patsy comes with statsmodels
    pass


def _build_specs(plan: Plan, i: int, t: dict[str, Any], chosen: dict[int, tuple]) -> list[Any]:
    cls, fixed = _test_kinds()[t["kind"]]
    items = [None] if t.get("for_each") is None else list(chosen[t["for_each"]])
    specs = []
    for item in items:
        name = None if item is None else str(item)
        kwargs = {k: _fill(v, name) for k, v in t.items() if k not in ("kind", "for_each")}
        kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items()}
        try:
            specs.append(cls(**kwargs, **fixed))
        except _RUN_ERRORS as exc:
            raise _err(plan.source, f"[[test]] #{i}", f"{type(exc).__name__}: {exc}") from None
    return specs


def _check_test_columns(plan: Plan, data: pd.DataFrame) -> None:
    for i, t in enumerate(plan.test, 1):
        for key in ("column", "column1", "column2", "group", "column_x", "column_y", "x", "y"):
            v = t.get(key)
            if isinstance(v, str) and "{selected}" not in v and v not in data.columns:
                raise _err(plan.source, f"[[test]] #{i} {key}",
                           f"unknown column {v!r}; the data have {_columns(data)}.")


def draw_seed() -> int:
    """A fresh seed from the operating system's entropy (numpy ``SeedSequence().entropy``, 128
    bits): recorded in the audit, it makes a run with random steps reproducible."""
    return int(np.random.SeedSequence().entropy)


def with_seed(raw: dict[str, Any], seed: int) -> dict[str, Any]:
    """A copy of the plan ``raw`` whose [analysis] seed is ``seed``: the plan as it was run."""
    out = copy.deepcopy(raw)
    analysis = dict(out.get("analysis", {}))
    analysis["seed"] = int(seed)
    out["analysis"] = analysis
    return out


def run_plan(plan: Plan, data: pd.DataFrame, *, seed: int | None = None, progress: bool = False) -> Analysis:
    """Run ``plan`` on ``data`` and return the :class:`Analysis` (selections, tests, ledger).

    Every step's certificate is checked against the ledger's order rules and budget before any
    selector touches the data, so a plan that no theorem covers fails before anything runs.
    The seed is ``seed``, else the plan's, else a fresh one (:func:`draw_seed`); the analysis
    records it as ``analysis.seed``. A step or a test that fails on the data raises
    :class:`PlanError` naming the file and the block. ``progress`` shows a progress bar on
    standard error for runs longer than two seconds.
    """
    a = plan.analysis
    if seed is None:
        seed = a.get("seed")
    if seed is None:
        seed = draw_seed()
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _err(plan.source, "[analysis] seed", f"must be a non-negative integer; got {brief(seed)}.")
    try:
        analysis = Analysis(data, alpha=a.get("alpha", 0.05), rng=seed, n_candidates=a.get("n_candidates"),
                            budget_bits=a.get("budget_bits"), budget_beta=a.get("budget_beta"),
                            budget_epsilon=a.get("budget_epsilon"), units=a.get("units"))
    except (TypeError, ValueError) as exc:
        raise _err(plan.source, "[analysis]", str(exc)) from None
    _check_test_columns(plan, data)
    selectors = []
    for i, s in enumerate(plan.select, 1):
        try:
            selectors.append(_build_selector(plan, i, s, data, analysis.n_units))
        except PlanError:
            raise
        except _RUN_ERRORS as exc:
            raise _err(plan.source, f"[[select]] #{i}", f"{type(exc).__name__}: {exc}") from None
    if selectors:
        # a plan declares every step before any runs: the thresholds are fixed in advance (THEORY.md 3.2a);
        # preregister checks the order rules and the budget on a scratch ledger, before the data are touched
        try:
            analysis.preregister(*selectors)
        except (TypeError, ValueError) as exc:
            raise _err(plan.source, f"[[select]] #{_refused_step(analysis, selectors)}", str(exc)) from (
                exc if isinstance(exc, CompositionOrderError) else None)
    chosen: dict[int, tuple] = {}
    steps = list(enumerate(selectors, 1))
    iterator = steps
    if progress:
        from tqdm import tqdm

        iterator = tqdm(steps, desc="selection steps", unit="step", file=sys.stderr, delay=2.0)
    for i, sel in iterator:
        label = plan.select[i - 1].get("label")
        try:
            chosen[i] = tuple(analysis.select(sel, label=label).value)
        except _RUN_ERRORS as exc:
            raise _err(plan.source, f"[[select]] #{i}", f"{type(exc).__name__}: {exc}") from None
    for i, t in enumerate(plan.test, 1):
        for spec in _build_specs(plan, i, t, chosen):
            try:
                analysis.test(spec)
            except _RUN_ERRORS as exc:
                raise _err(plan.source, f"[[test]] #{i}", f"{type(exc).__name__}: {exc}") from None
    return analysis


def _refused_step(analysis: Analysis, selectors: list[Any]) -> int:
    """The number (from 1) of the first step the ledger's order rules or budget refuse."""
    from ..accounting.ledger import Ledger

    ledger = analysis.ledger
    b = ledger.budget
    scratch = Ledger(ledger.n_rows, budget_bits=b["bits"], budget_beta=b["beta"], budget_epsilon=b["epsilon"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        for i, sel in enumerate(selectors, 1):
            cert = declared_certificate(sel)
            try:
                scratch.record(group_privacy(cert, analysis.group_size))
            except (TypeError, ValueError):
                return i
    return len(selectors)
