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

Scores: ``welch_t`` (``|Welch t|`` between the two ``levels`` of ``group``), ``abs_mean``,
``abs_corr`` (with ``target``), ``clipped_mean`` (absolute mean of values clipped to ±``clip``,
sensitivity 2·clip/n) and ``signed_mean`` (see :class:`~selective.selectors.SignedMeanScore`).
``noisy_top_k`` (pure DP) takes ``epsilon`` and a score of known sensitivity (``clipped_mean``
or ``signed_mean``). ``declared`` records a selection made elsewhere: its ``value`` and its
``certificate`` (a table with ``kind`` = "pure_dp", "approx_dp", "zcdp", "description_length",
...), checked against the order rules like any other step.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from ..accounting.certificates import certificate_from_dict
from ..exceptions import CompositionOrderError
from ..selectors.base import Selection, declared_certificate
from ..selectors.topk import NoisyTopK, SignedMeanScore, TopK
from .facade import Analysis

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PlanError", "load_plan", "parse_plan", "run_plan", "TEST_KINDS", "SCORES", "SELECTORS"]

SELECTORS = ("top_k", "noisy_top_k", "declared")
SCORES = ("welch_t", "abs_mean", "abs_corr", "clipped_mean", "signed_mean")
_DP_SCORES = ("clipped_mean", "signed_mean")


class PlanError(ValueError):
    """A plan file is malformed; the message names the file, the section and the field."""


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


@dataclass(frozen=True)
class Plan:
    source: str
    analysis: dict[str, Any]
    select: tuple[dict[str, Any], ...]
    test: tuple[dict[str, Any], ...]
    raw: dict[str, Any]


def load_plan(path: str | Path) -> Plan:
    """Read and check a plan file (TOML)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError(f"plan file {str(path)!r} does not exist.") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    return parse_plan(raw, source=str(path))


def _err(source: str, where: str, msg: str) -> PlanError:
    return PlanError(f"{source}: {where}: {msg}")


def parse_plan(raw: dict[str, Any], *, source: str = "<plan>") -> Plan:
    """Check the structure of a plan (a dict as read from TOML)."""
    if not isinstance(raw, dict):
        raise _err(source, "top level", "a plan must be a TOML table.")
    unknown = set(raw) - {"analysis", "select", "test"}
    if unknown:
        raise _err(source, "top level", f"unknown section(s) {sorted(unknown)}; allowed: [analysis], [[select]], [[test]].")
    analysis = raw.get("analysis", {})
    if not isinstance(analysis, dict):
        raise _err(source, "[analysis]", "must be a table.")
    bad = set(analysis) - {"alpha", "seed", "n_candidates", "budget_bits", "budget_beta", "budget_epsilon"}
    if bad:
        raise _err(source, "[analysis]", f"unknown field(s) {sorted(bad)}; allowed: alpha, seed, n_candidates, budget_bits, budget_beta, budget_epsilon.")
    if "alpha" in analysis and not (isinstance(analysis["alpha"], (int, float)) and 0 < analysis["alpha"] < 1):
        raise _err(source, "[analysis] alpha", f"must be a number in (0, 1); got {analysis['alpha']!r}.")
    if "seed" in analysis and not (isinstance(analysis["seed"], int) and analysis["seed"] >= 0):
        raise _err(source, "[analysis] seed", f"must be a non-negative integer; got {analysis['seed']!r}.")
    selects = raw.get("select", [])
    tests = raw.get("test", [])
    if not isinstance(selects, list) or not all(isinstance(s, dict) for s in selects):
        raise _err(source, "[[select]]", "must be an array of tables ([[select]] blocks).")
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests) or not tests:
        raise _err(source, "[[test]]", "the plan needs at least one [[test]] block.")
    for i, s in enumerate(selects, 1):
        where = f"[[select]] #{i}"
        sel = s.get("selector")
        if sel not in SELECTORS:
            raise _err(source, f"{where} selector", f"must be one of {', '.join(SELECTORS)}; got {sel!r}.")
        if sel in ("top_k", "noisy_top_k"):
            if not isinstance(s.get("k"), int) or s["k"] < 1:
                raise _err(source, f"{where} k", f"must be an integer >= 1; got {s.get('k')!r}.")
            if ("candidates" in s) == ("candidates_like" in s):
                raise _err(source, where, "give exactly one of `candidates` (a list of columns) or `candidates_like` (a pattern).")
            score = s.get("score")
            allowed = _DP_SCORES if sel == "noisy_top_k" else SCORES
            if score not in allowed:
                raise _err(source, f"{where} score", f"must be one of {', '.join(allowed)}; got {score!r}.")
            if sel == "noisy_top_k" and not (isinstance(s.get("epsilon"), (int, float)) and s["epsilon"] > 0):
                raise _err(source, f"{where} epsilon", f"must be a positive number (nats); got {s.get('epsilon')!r}.")
        else:
            if "certificate" not in s or not isinstance(s["certificate"], dict):
                raise _err(source, f"{where} certificate", "a declared step needs a certificate table, e.g. {kind = \"description_length\", n_outcomes = 10}.")
            try:
                certificate_from_dict(s["certificate"])
            except (TypeError, ValueError) as exc:
                raise _err(source, f"{where} certificate", str(exc)) from None
            if not isinstance(s.get("value"), list):
                raise _err(source, f"{where} value", "a declared step needs the list of what was selected.")
    kinds = _test_kinds()
    for i, t in enumerate(tests, 1):
        where = f"[[test]] #{i}"
        kind = t.get("kind")
        if kind not in kinds:
            raise _err(source, f"{where} kind", f"must be one of {', '.join(TEST_KINDS)}; got {kind!r}.")
        fe = t.get("for_each")
        if fe is not None and not (isinstance(fe, int) and 1 <= fe <= len(selects)):
            raise _err(source, f"{where} for_each", f"must be the number of a [[select]] block (1..{len(selects)}); got {fe!r}.")
        cls, fixed = kinds[kind]
        allowed_fields = {f.name for f in fields(cls)} - set(fixed)
        bad = set(t) - allowed_fields - {"kind", "for_each"}
        if bad:
            raise _err(source, where, f"unknown field(s) {sorted(bad)} for kind {kind!r}; allowed: {', '.join(sorted(allowed_fields))}.")
    return Plan(source=source, analysis=dict(analysis), select=tuple(selects), test=tuple(tests), raw=raw)


def _candidates(plan: Plan, i: int, s: dict[str, Any], data: pd.DataFrame) -> tuple[str, ...]:
    where = f"[[select]] #{i}"
    if "candidates" in s:
        cands = s["candidates"]
        if not isinstance(cands, list) or not cands:
            raise _err(plan.source, f"{where} candidates", "must be a non-empty list of column names.")
        missing = [c for c in cands if c not in data.columns]
        if missing:
            raise _err(plan.source, f"{where} candidates", f"unknown column(s) {missing[:5]}; the data have {list(map(str, data.columns))[:12]}...")
        return tuple(cands)
    pattern = s["candidates_like"]
    cands = tuple(str(c) for c in data.columns if fnmatch.fnmatchcase(str(c), pattern))
    if not cands:
        raise _err(plan.source, f"{where} candidates_like", f"the pattern {pattern!r} matches no column of the data.")
    return cands


def _need(plan: Plan, where: str, s: dict[str, Any], key: str, data: pd.DataFrame | None = None) -> Any:
    if key not in s:
        raise _err(plan.source, where, f"score {s.get('score')!r} needs the field `{key}`.")
    if data is not None and s[key] not in data.columns:
        raise _err(plan.source, f"{where} {key}", f"unknown column {s[key]!r}; the data have {list(map(str, data.columns))[:12]}...")
    return s[key]


def _numeric(plan: Plan, where: str, data: pd.DataFrame, cols: tuple[str, ...]) -> None:
    for c in cols:
        if not pd.api.types.is_numeric_dtype(data[c]):
            raise _err(plan.source, where, f"column {c!r} must be numeric for this score; it has dtype {data[c].dtype}.")
        n_missing = int(data[c].isna().sum())
        if n_missing:
            raise _err(plan.source, where, f"column {c!r} has {n_missing} missing value(s); scores need complete columns.")


def _build_selector(plan: Plan, i: int, s: dict[str, Any], data: pd.DataFrame, previous: dict[int, tuple]):
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
        sm = SignedMeanScore(columns=cands, sign_column=group, positive=positive, clip=float(s.get("clip", 3.0)))
        score, sens = (lambda d: sm(d).abs()), sm.sensitivity(n)
    name = score_name.replace("_", " ")
    if s["selector"] == "top_k":
        return TopK(k=s["k"], score=score, candidates=cands, ordered=bool(s.get("ordered", False)), name=name)
    return NoisyTopK(k=s["k"], epsilon=float(s["epsilon"]), sensitivity=sens, score=score, candidates=cands, name=name)


def _fill(value: Any, selected: str | None) -> Any:
    if selected is None:
        return value
    if isinstance(value, str):
        return value.replace("{selected}", selected)
    if isinstance(value, list):
        return [_fill(v, selected) for v in value]
    return value


def _build_specs(plan: Plan, i: int, t: dict[str, Any], chosen: dict[int, tuple]) -> list[Any]:
    cls, fixed = _test_kinds()[t["kind"]]
    items = [None] if t.get("for_each") is None else list(chosen[t["for_each"]])
    specs = []
    for item in items:
        kwargs = {k: _fill(v, None if item is None else str(item)) for k, v in t.items() if k not in ("kind", "for_each")}
        kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items()}
        try:
            specs.append(cls(**kwargs, **fixed))
        except (TypeError, ValueError) as exc:
            raise _err(plan.source, f"[[test]] #{i}", str(exc)) from None
    return specs


def _check_test_columns(plan: Plan, data: pd.DataFrame) -> None:
    for i, t in enumerate(plan.test, 1):
        for key in ("column", "column1", "column2", "group", "column_x", "column_y", "x", "y"):
            v = t.get(key)
            if isinstance(v, str) and "{selected}" not in v and v not in data.columns:
                raise _err(plan.source, f"[[test]] #{i} {key}", f"unknown column {v!r}; the data have {list(map(str, data.columns))[:12]}...")


def run_plan(plan: Plan, data: pd.DataFrame, *, seed: int | None = None, progress: bool = False) -> Analysis:
    """Run ``plan`` on ``data`` and return the :class:`Analysis` (selections, tests, ledger).

    Every step's certificate is checked against the ledger's order rules and budget before any
    selector touches the data, so a plan that no theorem covers fails before anything runs.
    """
    a = plan.analysis
    analysis = Analysis(data, alpha=a.get("alpha", 0.05), rng=a.get("seed") if seed is None else seed,
                        n_candidates=a.get("n_candidates"), budget_bits=a.get("budget_bits"),
                        budget_beta=a.get("budget_beta"), budget_epsilon=a.get("budget_epsilon"))
    _check_test_columns(plan, data)
    selectors = [_build_selector(plan, i, s, data, {}) for i, s in enumerate(plan.select, 1)]
    # dry run of the order rules and budget on a scratch ledger
    from ..accounting.ledger import Ledger

    scratch = Ledger.from_dict(analysis.ledger.to_dict())
    for i, sel in enumerate(selectors, 1):
        cert = declared_certificate(sel)
        if cert is None:
            continue
        try:
            _quiet_record(scratch, cert)
        except ValueError as exc:
            raise _err(plan.source, f"[[select]] #{i}", str(exc)) from (exc if isinstance(exc, CompositionOrderError) else None)
    # a plan declares every step before any runs: the thresholds are fixed in advance (THEORY.md 3.2a)
    analysis.preregister(*selectors)
    chosen: dict[int, tuple] = {}
    steps = list(enumerate(selectors, 1))
    iterator = steps
    if progress:
        from tqdm import tqdm

        iterator = tqdm(steps, desc="selection steps", unit="step", file=sys.stderr)
    for i, sel in iterator:
        label = plan.select[i - 1].get("label")
        chosen[i] = tuple(analysis.select(sel, label=label).value)
    for i, t in enumerate(plan.test, 1):
        for spec in _build_specs(plan, i, t, chosen):
            analysis.test(spec)
    return analysis


def _quiet_record(ledger, cert) -> None:
    import warnings

    from ..exceptions import SelectiveWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        ledger.record(cert)
