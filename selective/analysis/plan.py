"""Analysis plans: a TOML file that declares the selection steps and the confirmatory tests.

A plan makes an analysis declarative, so that ``selective analyze`` can run it and
``selective verify`` can re-run it from the audit record. Format::

    [analysis]
    alpha = 0.05            # level of the corrected intervals
    seed = 2026             # seeds every random choice (drawn and recorded when absent)
    n_candidates = 120      # hypotheses declared before looking (enables Bonferroni)
    # units = "subject"     # the column of independent units (rows by default)
    # budget_bits = 50, budget_beta = 0.01, budget_epsilon = 1.0: refuse steps beyond them

    # [fission]             # optional: explore one copy of each outcome, test the other
    # columns_like = "y*"   # (or columns = [...]); method = "gaussian" with the known sigma,
    # method = "gaussian"   # and tau, "poisson" with epsilon, or "binomial" with epsilon and
    #                       # trials = "<column of numbers of trials>" (Analysis.fission)
    # sigma = 1.0

    [[select]]              # step 1
    selector = "top_k"      # "top_k", "noisy_top_k", "sparse_vector", "declared", ...
    k = 3
    candidates_like = "m*"  # or candidates = ["m01", "m02", ...]
    score = "welch_t"       # see SCORES below
    group = "arm"
    levels = ["treatment", "control"]
    ordered = false         # a TOML boolean: whether the order of the k chosen counts

    [[test]]
    kind = "welch_t"        # see TEST_KINDS below
    for_each = 1            # once per variable chosen by [[select]] step 1 ...
    column = "{selected}"   # ... with {selected} replaced by its name ({support}: all
                            # the chosen names joined by " + ", for a regression formula)
    # conditional = true    # add the p-value conditional on step 1's selection
    group = "arm"
    levels = ["treatment", "control"]
    # exchangeable = true   # the arms have the same distribution under the null (a randomised
                            # treatment with no effect at all): Welch's test may then use the
                            # label permutation where its own p-value is not trusted

Every key is checked: an unknown key (for the selector and score at hand, or for the test
kind), a value of the wrong type (a string where a boolean is expected, a date, a non-finite
number) or a missing field raises :class:`PlanError` naming the file, the section and the key,
and listing what is allowed. Running the plan on data checks the columns and group values it
names, and an error raised by a step or a test is reported as a :class:`PlanError` naming the
block. A plan declares all its steps before any runs (:meth:`Analysis.preregister`).

Scores: ``welch_t`` (``|Welch t|`` between the two ``levels`` of ``group``), ``abs_mean``,
``abs_corr`` (with ``target``), ``clipped_mean`` (absolute mean of values clipped to ±``clip``,
sensitivity 2·clip/n) and ``signed_mean`` (see :class:`~selective.selectors.SignedMeanScore`).
``noisy_top_k`` (pure DP) takes ``epsilon`` and a score of known sensitivity (``clipped_mean``
or ``signed_mean``); so does ``sparse_vector`` (:class:`~selective.selectors.SparseVectorScreen`:
the candidates in their declared order, each noisy score compared with a noisy ``threshold``,
stopping at the ``max_selected``-th crossing; no ``k``). ``conditional = true`` conditions a
test on its ``for_each`` step: on the ranking of a ``top_k`` step (inference on winners), or on
the noisy choice of a ``noisy_top_k`` or ``sparse_vector`` step by ``clipped_mean`` (randomized
selective inference), whose tests must test the clipped
mean it ranked (``kind = "z"`` or ``"one_sample_t"`` with the step's ``clip``), or by
``signed_mean``, whose tests compare the step's ``group`` between ``positive`` and the other level
(a two-sample test, e.g. ``kind = "welch_t"`` with ``levels`` naming both; the law of that
difference of means given the noisy choice of the signed scores, docs/THEORY.md 3.12).
``randomized_lasso`` (``lam``, ``max_size``) and ``randomized_stepwise`` (``steps``) select
features among ``candidates`` (or ``candidates_like``, the ``target`` left out) for a regression
of ``target`` on a randomized response, with the declared error sd ``sigma`` (and optionally the
randomization's ``noise_sd``, default ``sigma``):
:class:`~selective.conditional.RandomizedLassoSupport`,
:class:`~selective.conditional.RandomizedForwardStepwise`. Their tests are ``kind = "ols"`` with
``formula = "y ~ {support}"`` and ``term = "{selected}"`` (in these two fields a name that is not
an identifier is filled in as ``Q("name")``); ``conditional = true`` adds the exact
conditional column of carving (:mod:`selective.analysis.carving_rows`). ``t_screen`` (optional
``keep_below``, default 0.25) keeps the candidates whose t p-value in the regression of ``target``
on all of them is below it (:class:`~selective.conditional.TTestScreen`, Freedman's first pass);
its tests are written the same way, and ``conditional = true`` adds the exact conditional p-value
after the screen (sigma unknown; docs/THEORY.md 3.14).
``declared`` records a selection made elsewhere: its ``value`` and its
``certificate`` (a table with ``kind`` = "pure_dp", "approx_dp", "zcdp", "description_length",
...), checked against the order rules like any other step.
"""

from __future__ import annotations

import copy
import fnmatch
import keyword
import sys
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..accounting.certificates import brief, certificate_from_dict
from ..accounting.composition import group_privacy
from ..exceptions import CompositionOrderError, SelectiveWarning
from ..selectors.base import Selection, declared_certificate
from ..selectors.clipped_scores import ClippedMeanScores, SignedClippedMeanScores
from ..selectors.dp import SparseVectorScreen
from ..selectors.scores import CandidateScores, TwoGroupScores
from ..selectors.topk import NoisyTopK, TopK
from .facade import Analysis
from .plan_format import (
    ANALYSIS_FIELDS,
    SCORES,
    SELECTORS,
    TEST_KINDS,
    Plan,
    PlanError,
    _err,
    _test_kinds,
    load_plan,
    parse_plan,
)

__all__ = ["PlanError", "Plan", "load_plan", "parse_plan", "run_plan", "draw_seed", "with_seed", "TEST_KINDS", "SCORES",
           "SELECTORS", "ANALYSIS_FIELDS"]


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


def _compute(value: Any) -> Any:
    """A Dask collection computed (one pass), anything else as it is."""
    return value.compute() if hasattr(value, "compute") and hasattr(value, "dask") else value


def _numeric(plan: Plan, where: str, data: Any, cols: tuple[str, ...]) -> None:
    """The candidate columns are numeric and complete (one pass over a Dask frame for all of them)."""
    for c in cols:
        if not pd.api.types.is_numeric_dtype(data[c].dtype):
            raise _err(plan.source, where,
                       f"column {c!r} must be numeric for this score; it has dtype {data[c].dtype}.")
    missing = _compute(data[list(cols)].isna().sum())
    bad = missing[missing > 0]
    if len(bad):
        c = bad.index[0]
        raise _err(plan.source, where,
                   f"column {c!r} has {int(bad.iloc[0])} missing value(s); scores need complete columns.")


def _values_present(plan: Plan, where: str, data: Any, column: str, values: tuple) -> None:
    """A group value the plan names must occur in the data (a typo would silently change the score)."""
    present = set(_compute(data[column].dropna().unique()).tolist())
    missing = [v for v in values if v not in present]
    if missing:
        shown = sorted(map(str, present))[:12]
        raise _err(plan.source, where, f"{brief(missing[0])} is not a value of column {column!r}; it has {shown}.")


def _build_selector(plan: Plan, i: int, s: dict[str, Any], data: Any, n_rows: int):
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
    if s["selector"] in ("randomized_lasso", "randomized_stepwise", "t_screen"):
        return _carving_selector(plan, i, s, data)
    cands = _candidates(plan, i, s, data)
    size = "max_selected" if s["selector"] == "sparse_vector" else "k"
    if s[size] > len(cands):
        raise _err(plan.source, f"{where} {size}", f"must be at most the number of candidates ({len(cands)}); got "
                                                   f"{s[size]}.")
    score_name = s["score"]
    _numeric(plan, where, data, cands)
    n = n_rows
    # score objects: they declare their columns and reduce a Dask frame as well as a pandas one
    if score_name == "welch_t":
        group = _need(plan, where, s, "group", data)
        levels = tuple(_need(plan, where, s, "levels"))
        _values_present(plan, f"{where} levels", data, group, levels)
        score, sens = TwoGroupScores(cands, group, levels, kind="welch_t", absolute=True), None
    elif score_name == "abs_mean":
        score, sens = CandidateScores(cands, kind="mean", absolute=True), None
    elif score_name == "abs_corr":
        target = _need(plan, where, s, "target", data)
        score, sens = CandidateScores(cands, kind="corr", target=target, absolute=True), None
    elif score_name == "clipped_mean":
        score = ClippedMeanScores(cands, clip=float(s.get("clip", 3.0)), absolute=True)
        sens = score.sensitivity(n)
    else:  # signed_mean
        group = _need(plan, where, s, "group", data)
        positive = _need(plan, where, s, "positive")
        _values_present(plan, f"{where} positive", data, group, (positive,))
        score = SignedClippedMeanScores(cands, group, positive, clip=float(s.get("clip", 3.0)), absolute=True)
        sens = score.sensitivity(n)
    name = score_name.replace("_", " ")
    if s["selector"] == "sparse_vector":
        return SparseVectorScreen(score, threshold=float(s["threshold"]), epsilon=float(s["epsilon"]),
                                  sensitivity=sens, max_selected=s["max_selected"], candidates=cands,
                                  label=f"sparse vector screen ({name})")
    if s["selector"] == "top_k":
        return TopK(k=s["k"], score=score, candidates=cands, ordered=s.get("ordered", False), name=name)
    return NoisyTopK(k=s["k"], epsilon=float(s["epsilon"]), sensitivity=sens, score=score, candidates=cands, name=name)


def _carving_selector(plan: Plan, i: int, s: dict[str, Any], data: Any):
    """A randomized lasso or stepwise step or a t-test screen: the features are the candidates other than the target."""
    from ..conditional.carving_selectors import RandomizedForwardStepwise, RandomizedLassoSupport
    from ..conditional.screening import TTestScreen

    where = f"[[select]] #{i}"
    target = s["target"]
    if target not in data.columns:
        raise _err(plan.source, f"{where} target", f"unknown column {target!r}; the data have {_columns(data)}.")
    feats = tuple(c for c in _candidates(plan, i, s, data) if c != target)
    if not feats:
        raise _err(plan.source, where, "no feature is left once the target is removed from the candidates.")
    _numeric(plan, where, data, feats + (target,))
    if s["selector"] == "t_screen":
        return TTestScreen(target, feats, keep_below=float(s.get("keep_below", 0.25)))
    common = {"sigma": float(s["sigma"]), "noise_sd": None if "noise_sd" not in s else float(s["noise_sd"])}
    if s["selector"] == "randomized_lasso":
        return RandomizedLassoSupport(target, feats, lam=float(s["lam"]), max_size=min(s["max_size"], len(feats)),
                                      **common)
    if s["steps"] > len(feats):
        raise _err(plan.source, f"{where} steps", f"must be at most the number of features ({len(feats)}); got "
                                                  f"{s['steps']}.")
    return RandomizedForwardStepwise(target, feats, steps=s["steps"], **common)


#: test fields that are (parts of) formulas: a name filled into them is quoted unless it is an identifier
_FORMULA_KEYS = ("formula", "term")


def _quoted(name: str) -> str:
    """``name`` as a formula names a column: bare when it is an identifier, else ``Q("name")``
    (statsmodels then calls the coefficient ``Q("name")`` too)."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return f'Q("{name}")' if '"' not in name else f"Q('{name}')"


def _fill(value: Any, selected: str | None, support: str | None = None) -> Any:
    if selected is None:
        return value
    if isinstance(value, str):
        return value.replace("{selected}", selected).replace("{support}", support or selected)
    if isinstance(value, list):
        return [_fill(v, selected, support) for v in value]
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
    support = " + ".join(_quoted(str(i)) for i in items) if items != [None] else None
    specs = []
    for item in items:
        name = None if item is None else str(item)
        kwargs = {k: _fill(v, _quoted(name) if k in _FORMULA_KEYS and name is not None else name, support)
                  for k, v in t.items() if k not in ("kind", "for_each", "conditional")}
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
    if plan.fission is not None:
        _apply_fission(plan, analysis, data)
    selectors = []
    for i, s in enumerate(plan.select, 1):
        try:
            selectors.append(_build_selector(plan, i, s, data, analysis.n_rows))
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
    selections: dict[int, Selection] = {}
    steps = list(enumerate(selectors, 1))
    iterator = steps
    if progress:
        from tqdm import tqdm

        iterator = tqdm(steps, desc="selection steps", unit="step", file=sys.stderr, delay=2.0)
    for i, sel in iterator:
        label = plan.select[i - 1].get("label")
        try:
            selections[i] = analysis.select(sel, label=label)
            chosen[i] = tuple(selections[i].value)
        except _RUN_ERRORS as exc:
            raise _err(plan.source, f"[[select]] #{i}", f"{type(exc).__name__}: {exc}") from None
    for i, t in enumerate(plan.test, 1):
        on = selections[t["for_each"]] if t.get("conditional") else None
        for spec in _build_specs(plan, i, t, chosen):
            try:
                analysis.test(spec, conditional_on=on)
            except _RUN_ERRORS as exc:
                raise _err(plan.source, f"[[test]] #{i}", f"{type(exc).__name__}: {exc}") from None
    return analysis


def _apply_fission(plan: Plan, analysis: Analysis, data: pd.DataFrame) -> None:
    """Split the [fission] columns before any step (``Analysis.fission``)."""
    f = plan.fission
    if "columns" in f:
        cols = list(f["columns"])
    else:
        cols = [c for c in data.columns if fnmatch.fnmatchcase(str(c), f["columns_like"])]
        if not cols:
            raise _err(plan.source, "[fission] columns_like",
                       f"the pattern {f['columns_like']!r} matches no column of the data.")
    try:
        analysis.fission(cols, method=f["method"], sigma=f.get("sigma"), tau=float(f.get("tau", 1.0)),
                         epsilon=float(f.get("epsilon", 0.5)), trials=f.get("trials"))
    except _RUN_ERRORS as exc:  # Analysis.fission's `column` is the plan's `columns` / `columns_like`
        message = str(exc).replace("`column`", "`columns`" if "columns" in f else "`columns_like`")
        raise _err(plan.source, "[fission]", f"{type(exc).__name__}: {message}") from None


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
