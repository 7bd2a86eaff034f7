"""Fuzz tests of the Python API: random selectors, arguments, labels, data shapes, candidate
collections, alpha and epsilon (extremes included), and selectors that raise KeyboardInterrupt,
SystemExit or return junk.

Two properties are checked on every call:

1. No exception escapes that is not one of the package's documented errors (TypeError,
   ValueError and their subclasses, BudgetExhausted), except the exceptions that user code
   raised itself (score functions, sabotaged selectors), which must propagate unchanged.
2. Accounting: a step whose selector received the data leaves a ledger step or a void reason;
   a step refused before the data are touched leaves the ledger byte-identical (``to_json``)
   and no void; ``record`` either records or voids.

The data access is instrumented by wrapping every selector: the wrapper flags the moment the
analysis hands it the data, then delegates (optionally sabotaging the result). The runs are
derandomized (fixed examples, no database), so the suite is deterministic.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selective import Analysis, Selection
from selective.accounting.certificates import ZCDP, ApproxDP, DescriptionLength, MaxInfo, MutualInfo, PureDP
from selective.exceptions import BudgetExhausted
from selective.hypotheses import OneSampleTTest
from selective.selectors import (
    CandidateScores,
    FiniteChoice,
    ForwardStepwise,
    LassoSupport,
    NoisyStatistic,
    NoisyTopK,
    OrderedTopK,
    QuantizedAnswer,
    SignedMeanScore,
    SparseVectorScreen,
    TopK,
    candidate_scores,
)

DOCUMENTED = (TypeError, ValueError, BudgetExhausted)
FUZZ = settings(derandomize=True, database=None, deadline=None, print_blob=False,
                suppress_health_check=list(HealthCheck))

POOL = ["a", "b", "c", "d", 0, 1]  # column labels; "zz" and 7 are never columns
MISSING = ["zz", 7]
ALPHAS = [5e-324, 1e-320, 1e-200, 1e-162, 1e-20, 0.01, 0.05, 0.5, 0.999999]
EPSILONS = [5e-324, 1e-300, 1e-12, 1e-3, 0.1, 1.0, 30.0, 1e10, 1e150, 1e300, 1.7e308]
SENSITIVITIES = [1e-300, 1e-6, 0.01, 1.0, 1e6, 1e300]


class Boom(Exception):
    """An error raised by user code on purpose."""


class UserRaised:
    """Remembers the exceptions raised by user code, so that they may propagate."""

    def __init__(self) -> None:
        self.ids: set[int] = set()

    def wrap(self, fn):
        def wrapped(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                self.ids.add(id(exc))
                raise

        return wrapped


class Touching:
    """Wraps a selector: flags when it receives the data, then delegates (or sabotages)."""

    def __init__(self, inner: Any, sabotage: str, user: UserRaised) -> None:
        self.inner = inner
        self.sabotage = sabotage
        self.user = user
        self.touched = False
        if hasattr(inner, "certificate"):
            self.certificate = inner.certificate
        if hasattr(inner, "required_columns"):
            self.required_columns = inner.required_columns

    def select(self, data, rng=None):
        self.touched = True
        exc: BaseException | None = None
        if self.sabotage == "interrupt-before":
            exc = KeyboardInterrupt()
        elif self.sabotage == "exit-before":
            exc = SystemExit(2)
        if exc is not None:
            self.user.ids.add(id(exc))
            raise exc
        out = self.inner.select(data, rng)
        if self.sabotage == "interrupt-after":
            exc = KeyboardInterrupt()
        elif self.sabotage == "exit-after":
            exc = SystemExit(0)
        elif self.sabotage == "boom-after":
            exc = Boom("after")
        if exc is not None:
            self.user.ids.add(id(exc))
            raise exc
        if self.sabotage == "none-out":
            return None
        if self.sabotage == "tuple-out":
            return tuple(out.value) if isinstance(out.value, tuple) else (out.value,)
        if self.sabotage == "bad-label":
            object.__setattr__(out, "label", 5)
        if self.sabotage == "bad-certificate":
            object.__setattr__(out, "certificate", "PureDP(1)")
        if self.sabotage == "other-certificate":
            object.__setattr__(out, "certificate", DescriptionLength(2))
        return out


class Undeclared:
    """A selector without certificate(): its certificate is read from its output."""

    def __init__(self, cert: Any, user: UserRaised, raises: bool) -> None:
        self.cert = cert
        self.raises = raises
        self.user = user

    def select(self, data, rng=None):
        if self.raises:
            exc = Boom("undeclared")
            self.user.ids.add(id(exc))
            raise exc
        return Selection(value=("x",), certificate=self.cert, label="undeclared")


class JunkCertificate:
    """Declares something that is not a certificate."""

    def certificate(self):
        return "DescriptionLength(3)"

    def select(self, data, rng=None):  # pragma: no cover - must never run
        raise AssertionError("ran with a junk certificate")


# ----------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------

@st.composite
def frames(draw) -> pd.DataFrame:
    """1-12 rows, 1-6 columns with labels from POOL (duplicates possible), numeric, integer,
    constant, object columns and NaN / infinite cells; values from a drawn seed (cheap to draw)."""
    n = draw(st.integers(1, 12))
    labels = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=draw(st.booleans())))
    gen = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 1e-300, 1e300]))
    cols = {}
    for i, _ in enumerate(labels):
        kind = draw(st.sampled_from(["float", "float", "int", "const", "cells", "object"]))
        if kind == "float":
            col = gen.normal(size=n) * scale
        elif kind == "int":
            col = gen.integers(-5, 6, size=n)
        elif kind == "const":
            col = np.full(n, 1.5)
        elif kind == "cells":
            col = gen.normal(size=n)
            col[gen.random(n) < 0.3] = np.nan
            col[gen.random(n) < 0.2] = np.inf
        else:
            col = np.array(gen.choice(np.array(["x", "y", None], dtype=object), size=n), dtype=object)
        cols[i] = col
    frame = pd.DataFrame(cols)
    frame.columns = pd.Index(labels, dtype=object)
    frame["v"] = np.arange(n, dtype=float) + gen.random()  # a clean column for the final test
    return frame


def candidate_collections(draw):
    """Declared candidates: lists, tuples, arrays, and the refused kinds (set, string, dict, None, junk)."""
    names = draw(st.lists(st.sampled_from(POOL + MISSING), min_size=0, max_size=5))
    kind = draw(st.sampled_from(["list", "tuple", "tuple", "array", "set", "str", "dict", "none", "int", "gen"]))
    if kind == "list":
        return list(names)
    if kind == "tuple":
        return tuple(names)
    if kind == "array":
        return np.array(names, dtype=object)
    if kind == "set":
        return set(names)
    if kind == "str":
        return "ab"
    if kind == "dict":
        return dict.fromkeys(names)
    if kind == "none":
        return None
    if kind == "int":
        return 3
    return (c for c in names)


def score_functions(draw, user: UserRaised, cands):
    kind = draw(st.sampled_from(["mean", "abs-t", "nan", "missing-column", "boom", "junk", "array", "signed",
                                 "constant", "declared"]))
    labels = list(cands) if isinstance(cands, (list, tuple, np.ndarray)) else []
    if kind == "mean":
        def fn(d):
            return candidate_scores(d, labels, kind="mean")
    elif kind == "abs-t":
        def fn(d):
            return candidate_scores(d, labels, kind="t").abs()
    elif kind == "nan":
        def fn(d):
            return pd.Series(np.nan, index=pd.Index(labels, dtype=object, tupleize_cols=False))
    elif kind == "missing-column":
        def fn(d):
            return d[["zz"]].mean()
    elif kind == "boom":
        def fn(d):
            raise Boom("score")
    elif kind == "junk":
        def fn(d):
            return "not scores"
    elif kind == "array":
        def fn(d):
            return np.arange(len(labels), dtype=float)
    elif kind == "constant":
        def fn(d):
            return pd.Series(1.0, index=pd.Index(labels, dtype=object, tupleize_cols=False))
    elif kind == "declared":
        try:
            return CandidateScores(labels, kind=draw(st.sampled_from(["mean", "t", "corr"])),
                                   target=draw(st.sampled_from([None, "v", "zz"])), absolute=True)
        except DOCUMENTED:
            def fn(d):
                return np.zeros(len(labels))
    else:
        try:
            return SignedMeanScore(columns=labels, sign_column=draw(st.sampled_from(POOL + MISSING)), positive=1.0)
        except DOCUMENTED:
            def fn(d):
                return np.zeros(len(labels))
    return user.wrap(fn)


@st.composite
def selectors(draw, user: UserRaised):
    """A selector (possibly refused at construction), wrapped in the data-access flag."""
    kind = draw(st.sampled_from(["topk", "noisytopk", "orderedtopk", "svt", "noisystat", "quantized", "finite",
                                 "lasso", "stepwise", "undeclared", "junkcert", "fixed"]))
    cands = candidate_collections(draw)
    k = draw(st.sampled_from([0, 1, 1, 2, 3, 10, True, 1.5]))
    eps = draw(st.sampled_from(EPSILONS))
    sens = draw(st.sampled_from(SENSITIVITIES))
    try:
        if kind == "topk":
            inner = TopK(k=k, score=score_functions(draw, user, cands), candidates=cands, ordered=draw(st.booleans()))
        elif kind == "noisytopk":
            inner = NoisyTopK(k=k, epsilon=eps, sensitivity=sens, score=score_functions(draw, user, cands),
                              candidates=cands)
        elif kind == "orderedtopk":
            inner = OrderedTopK(k, score_functions(draw, user, cands), candidates=cands)
        elif kind == "svt":
            threshold = draw(st.sampled_from([0.0, 1e300]))
            inner = SparseVectorScreen(score_functions(draw, user, cands), threshold=threshold,
                                       epsilon=eps, sensitivity=sens, max_selected=k, candidates=cands)
        elif kind == "noisystat":
            noise = draw(st.sampled_from(["laplace", "gaussian"]))
            index = draw(st.sampled_from([None, cands]))
            stat = user.wrap(draw(st.sampled_from([
                lambda d: float(d["v"].mean()), lambda d: np.nan, lambda d: np.zeros(2), lambda d: d["v"].iloc[:2],
                lambda d: 3, lambda d: "x"])))
            params = {"epsilon": eps} if noise == "laplace" else {"rho": eps}
            inner = NoisyStatistic(stat, sensitivity=sens, noise=noise, integer=draw(st.booleans()), index=index,
                                   **params)
        elif kind == "quantized":
            stat = user.wrap(draw(st.sampled_from([lambda d: float(d["v"].mean()), lambda d: np.inf,
                                                   lambda d: [1.0, 2.0]])))
            inner = QuantizedAnswer(stat, bits=draw(st.sampled_from([0, 1, 8, 64, 65])), low=0.0,
                                    high=draw(st.sampled_from([1.0, 0.0, np.inf])))
        elif kind == "finite":
            choose = user.wrap(draw(st.sampled_from([lambda d: "a", lambda d: "zz", lambda d: d])))
            inner = FiniteChoice(cands, choose)
        elif kind in ("lasso", "stepwise"):
            target = draw(st.sampled_from(POOL + MISSING + ["v"]))
            if kind == "lasso":
                inner = LassoSupport(target, cands, lam=draw(st.sampled_from([1e-3, 1.0, 1e300])),
                                     max_size=draw(st.sampled_from([0, 1, 2])), max_iter=200)
            else:
                inner = ForwardStepwise(target, cands, steps=k)
        elif kind == "undeclared":
            cert = draw(st.sampled_from([DescriptionLength(3), PureDP(0.1), ApproxDP(0.1, 1e-6), ZCDP(0.01),
                                         MaxInfo(bits=2.0, beta=0.01, scope="any distribution")]))
            inner = Undeclared(cert, user, draw(st.booleans()))
        elif kind == "junkcert":
            inner = JunkCertificate()
        else:
            cert = draw(st.sampled_from([DescriptionLength(4), PureDP(eps), ZCDP(0.05), ApproxDP(0.5, 1e-9),
                                         MutualInfo(bits=1.0, scope="any distribution")]))
            inner = _Fixed(cert)
    except DOCUMENTED:
        return None  # refused at construction: nothing to run
    sabotage = draw(st.sampled_from(["none"] * 6 + ["interrupt-before", "exit-before", "interrupt-after",
                                                     "exit-after", "boom-after", "none-out", "tuple-out",
                                                     "bad-label", "bad-certificate", "other-certificate"]))
    return Touching(inner, sabotage, user)


class _Fixed:
    def __init__(self, cert):
        self.cert = cert

    def certificate(self):
        return self.cert

    def select(self, data, rng=None):
        return Selection(value=("a",), certificate=self.cert, label="fixed")


labels = st.sampled_from([None, None, "step", "", 5, b"x", 1.5, ("t",)])


# ----------------------------------------------------------------------------------------
# the checks
# ----------------------------------------------------------------------------------------


def _allowed(exc: BaseException, user: UserRaised) -> bool:
    return isinstance(exc, DOCUMENTED) or id(exc) in user.ids


def _run_select(analysis: Analysis, selector: Any, label: Any, user: UserRaised) -> None:
    before = analysis.ledger.to_json()
    n_steps, n_void = len(analysis.ledger), len(analysis.void_reasons)
    raised: BaseException | None = None
    try:
        analysis.select(selector, label=label)
    except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt and SystemExit are part of the fuzz
        raised = exc
    touched = selector.touched
    if raised is not None and not _allowed(raised, user):
        raise AssertionError(f"undocumented {type(raised).__name__}: {raised}") from raised
    grew = len(analysis.ledger) == n_steps + 1
    voided = len(analysis.void_reasons) > n_void
    if touched:
        assert grew or voided, "the selector read the data, but neither a ledger step nor a void was recorded"
        assert len(analysis.ledger) <= n_steps + 1
    else:
        assert raised is not None, "a step succeeded without running its selector"
        assert analysis.ledger.to_json() == before and not voided, "a refusal before the data changed the analysis"
    if raised is None:
        assert grew


@settings(FUZZ, max_examples=2500)
@given(data=st.data())
def test_select_never_loses_a_look(data):
    warnings.simplefilter("ignore")
    user = UserRaised()
    frame = data.draw(frames())
    try:
        analysis = Analysis(frame, alpha=data.draw(st.sampled_from(ALPHAS)), rng=data.draw(st.integers(0, 3)),
                            n_candidates=data.draw(st.sampled_from([None, 1, 50])),
                            budget_epsilon=data.draw(st.sampled_from([None, 0.5, 1e300])))
    except DOCUMENTED:
        assert frame.columns.has_duplicates
        return
    for _ in range(data.draw(st.integers(1, 3))):
        sel = data.draw(selectors(user))
        if sel is None:
            continue
        _run_select(analysis, sel, data.draw(labels), user)
    if len(frame) >= 2:
        analysis.test(OneSampleTTest(column="v", value=0.0))
        try:
            table = analysis.report(alpha=data.draw(st.sampled_from([None] + ALPHAS)))
        except DOCUMENTED:
            return
        best = table.frame.pvalue_best.to_numpy(dtype=float)
        assert np.all(np.isnan(best) | ((best >= 0) & (best <= 1)))


certificates = st.one_of(
    st.sampled_from(EPSILONS).map(PureDP),
    st.integers(1, 10**6).map(DescriptionLength),
    st.sampled_from([1e-3, 0.1, 10.0]).map(ZCDP),
    st.just(ApproxDP(0.1, 1e-9)),
    st.just(MaxInfo(bits=1.0, beta=0.001, scope="any distribution")),
    st.just(MutualInfo(bits=0.5, scope="any distribution")),
)


@settings(FUZZ, max_examples=1500)
@given(steps=st.lists(st.tuples(certificates, labels, st.sampled_from(["ok", "bad-label", "bad-cert", "junk"])),
                      min_size=1, max_size=5),
       units=st.booleans(), budget=st.sampled_from([None, 1.0, 1e6]))
def test_record_records_or_voids_and_never_changes_the_ledger_on_refusal(steps, units, budget):
    warnings.simplefilter("ignore")
    frame = pd.DataFrame({"x": np.arange(8.0), "g": [0, 0, 1, 1, 2, 2, 3, 3]})
    analysis = Analysis(frame, units="g" if units else None, budget_epsilon=budget)
    for cert, label, kind in steps:
        before = analysis.ledger.to_json()
        n_steps, n_void = len(analysis.ledger), len(analysis.void_reasons)
        arg: Any = Selection(value=("x",), certificate=cert, label=label if isinstance(label, str) else "r")
        if kind == "bad-label":
            object.__setattr__(arg, "label", 5 if isinstance(label, (str, type(None))) else label)
        elif kind == "bad-cert":
            object.__setattr__(arg, "certificate", repr(cert))
        elif kind == "junk":
            arg = (cert, label)
        try:
            analysis.record(arg)
        except DOCUMENTED:
            assert analysis.ledger.to_json() == before
            assert len(analysis.void_reasons) > n_void, "a refused record() must void: the look happened"
            continue
        assert kind == "ok" and len(analysis.ledger) == n_steps + 1


class _Counting:
    def __init__(self, cert):
        self.cert = cert
        self.calls = 0

    def certificate(self):
        return self.cert

    def select(self, data, rng=None):  # pragma: no cover - a refused step must never run
        self.calls += 1
        return Selection(value=("x",), certificate=self.cert)


@settings(FUZZ, max_examples=1500)
@given(history=st.lists(certificates, min_size=0, max_size=4), refused=certificates,
       budget_bits=st.sampled_from([None, 1.0, 30.0]), budget_epsilon=st.sampled_from([None, 0.01, 1.0]),
       preregister=st.booleans())
def test_a_refused_step_leaves_the_ledger_byte_identical(history, refused, budget_bits, budget_epsilon, preregister):
    """Property: whatever was recorded before, a step refused before the data (order rule, budget,
    preregistration mismatch) leaves ``ledger.to_json()`` identical, no void, and never runs."""
    warnings.simplefilter("ignore")
    frame = pd.DataFrame({"x": np.arange(20.0)})
    analysis = Analysis(frame, budget_bits=budget_bits, budget_beta=None if budget_bits is None else 1e-3,
                        budget_epsilon=budget_epsilon)
    if preregister:
        try:
            analysis.preregister(*history, DescriptionLength(2))
        except DOCUMENTED:
            preregister = False
    for cert in history:
        try:
            analysis.select(_Fixed(cert))
        except DOCUMENTED:
            break
    before = analysis.ledger.to_json()
    n_void = len(analysis.void_reasons)
    sel = _Counting(refused)
    try:
        analysis.select(sel)
    except DOCUMENTED:
        if sel.calls == 0:
            assert analysis.ledger.to_json() == before and len(analysis.void_reasons) == n_void
        return
    assert sel.calls == 1 and len(analysis.void_reasons) >= n_void


def test_the_fuzz_instrumentation_can_fail():
    """The checks above fail on an analysis that drops a look (a guard against vacuous fuzzing)."""

    class Forgetful(Analysis):
        def select(self, selector, *, label=None):
            try:
                return selector.select(self.data, None)
            except Boom:
                raise ValueError("swallowed") from None

    user = UserRaised()
    analysis = Forgetful(pd.DataFrame({"a": [1.0, 2.0]}))
    with pytest.raises(AssertionError, match="neither a ledger step nor a void"):
        _run_select(analysis, Touching(_Fixed(DescriptionLength(3)), "boom-after", user), None, user)
