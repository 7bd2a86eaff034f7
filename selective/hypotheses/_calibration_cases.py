"""The cases of the calibration table (:mod:`selective.hypotheses.calibration`): each test of
the catalogue under an adverse null (skew, unbalanced arms, rare events, small n,
overdispersion) and a benign one, with vectorised null draws of its asymptotic p-value."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from ..exceptions import SelectiveWarning
from . import _trust, _trust_model
from ._spec import TestSpec
from .correlation import SpearmanCorrelationTest
from .means import OneSampleTTest, OneSampleZTest, TwoSampleTTest, TwoSampleZTest, one_sample_z_trusted_level
from .means import two_sample_trusted_level as _two_sample_trusted_level
from .proportions import ChiSquareIndependenceTest, OneSampleProportionTest, TwoSampleProportionTest
from .regression import CoefficientTest, JointWaldTest

__all__ = ["Batch", "Case", "CASES", "case"]

Batch = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Case:
    """One test under one null: how to draw data, vectorised ``run``, and data frames.

    ``run_batch(batch)`` returns ``(pvalue, trusted_level)`` arrays for the draws;
    ``at_level_batch(batch, level)``, when given, the same for ``run_at_level`` (a
    deterministic version); otherwise ``run_at_level`` is called on ``frame(batch, i)``.
    """

    key: str
    spec: TestSpec
    null: str
    adverse: str
    draws: int
    simulate: Callable[[np.random.Generator, int], Batch]
    frame: Callable[[Batch, int], pd.DataFrame]
    run_batch: Callable[[Batch], tuple[np.ndarray, np.ndarray]]
    at_level_batch: Callable[[Batch, float], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
    within_model: bool = True
    chunk: int = 200_000
    calls: tuple[str, ...] = ("run", "run_at_level")

    @property
    def test(self) -> str:
        """The spec's class and the options that set its p-value."""
        options = [f"{name}={getattr(self.spec, name)!r}" for name in _OPTIONS if hasattr(self.spec, name)
                   and getattr(self.spec, name) != _DEFAULTS.get(name)]
        return f"{type(self.spec).__name__}({', '.join(options)})"


_OPTIONS = ("usevar", "exchangeable", "variance", "model", "use_f", "alternative")
_DEFAULTS = {"usevar": "pooled", "exchangeable": False, "variance": "null", "model": "ols", "use_f": None,
             "alternative": "two-sided"}


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn()


def _cached(keys: np.ndarray, compute: Callable[[int], tuple[float, float, str]], memo: dict):
    """Evaluate ``compute(i)`` once per distinct row of ``keys`` (i: a draw holding it),
    remembering the values in ``memo`` across batches (``compute`` must be deterministic)."""
    keys = np.asarray(keys)
    flat = keys.reshape(len(keys), -1)
    distinct, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    values = []
    for row, i in zip(distinct, first, strict=True):
        key = row.tobytes()
        if key not in memo:
            memo[key] = compute(int(i))
        values.append(memo[key])
    p = np.array([v[0] for v in values])[inverse]
    tl = np.array([v[1] for v in values])[inverse]
    methods = np.array([v[2] for v in values], dtype=object)[inverse]
    return p, tl, methods


def _from_result(res) -> tuple[float, float, str]:
    return res.pvalue_naive, res.trusted_level, res.pvalue_method


def _safe(fn: Callable[[], Any]) -> tuple[float, float, str]:
    """A result's (p, trusted level, method); a test that refuses the data never rejects."""
    try:
        return _from_result(_quiet(fn))
    except ValueError:
        return (math.nan, 0.0, "not run")


# ---------------------------------------------------------------- data frames


def _one_frame(batch: Batch, i: int) -> pd.DataFrame:
    return pd.DataFrame({"y": batch["x"][i]})


def _two_frame(batch: Batch, i: int) -> pd.DataFrame:
    x1, x2 = batch["x1"][i], batch["x2"][i]
    return pd.DataFrame({"y": np.concatenate([x1, x2]), "g": ["a"] * len(x1) + ["b"] * len(x2)})


def _binary_frame(count: int, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=int)
    out[:count] = 1
    return out


def _prop_frame(batch: Batch, i: int) -> pd.DataFrame:
    return pd.DataFrame({"b": _binary_frame(int(batch["k"][i]), batch["n"])})


def _two_prop_frame(batch: Batch, i: int) -> pd.DataFrame:
    n1, n2 = batch["n1"], batch["n2"]
    b = np.concatenate([_binary_frame(int(batch["c"][i, 0]), n1), _binary_frame(int(batch["c"][i, 1]), n2)])
    return pd.DataFrame({"b": b, "g": ["a"] * n1 + ["b"] * n2})


def _table_frame(batch: Batch, i: int) -> pd.DataFrame:
    table = batch["tables"][i]
    rows, cols = np.nonzero(np.ones_like(table))
    counts = table.ravel()
    r = np.repeat(rows, counts)
    c = np.repeat(cols, counts)
    return pd.DataFrame({"u": [f"r{v}" for v in r], "v": [f"c{v}" for v in c]})


def _pair_frame(batch: Batch, i: int) -> pd.DataFrame:
    return pd.DataFrame({"x": batch["x"], "y": batch["y"][i]})


def _regression_frame(batch: Batch, i: int) -> pd.DataFrame:
    frame = pd.DataFrame({name: batch["design"][:, j] for j, name in enumerate(batch["names"])})
    frame["y"] = batch["y"][i]
    return frame


# ---------------------------------------------------------------- vectorised statistics


def _two_sided(p_upper: np.ndarray, p_lower: np.ndarray, alternative: str) -> np.ndarray:
    if alternative == "greater":
        return p_upper
    if alternative == "less":
        return p_lower
    return np.minimum(1.0, 2.0 * np.minimum(p_upper, p_lower))


def _t_pvalue(t: np.ndarray, df: Any, alternative: str) -> np.ndarray:
    return _two_sided(scipy.stats.t.sf(t, df), scipy.stats.t.cdf(t, df), alternative)


def _z_pvalue(z: np.ndarray, alternative: str) -> np.ndarray:
    return _two_sided(scipy.stats.norm.sf(z), scipy.stats.norm.cdf(z), alternative)


def _one_sample_t(x: np.ndarray, value: float) -> np.ndarray:
    n = x.shape[-1]
    return (x.mean(axis=-1) - value) / (x.std(axis=-1, ddof=1) / math.sqrt(n))


def _two_sample_t(x1: np.ndarray, x2: np.ndarray, usevar: str) -> tuple[np.ndarray, np.ndarray]:
    n1, n2 = x1.shape[-1], x2.shape[-1]
    v1, v2 = x1.var(axis=-1, ddof=1), x2.var(axis=-1, ddof=1)
    diff = x1.mean(axis=-1) - x2.mean(axis=-1)
    if usevar == "unequal":
        a, b = v1 / n1, v2 / n2
        return diff / np.sqrt(a + b), (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
    pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)
    return diff / np.sqrt(pooled * (1 / n1 + 1 / n2)), np.full(diff.shape, n1 + n2 - 2.0)


def _irls(design: np.ndarray, y: np.ndarray, family: str, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Batched IRLS for a canonical GLM on one design: coefficients (R, p) and means (R, n)."""
    n, k = design.shape
    mean = np.clip(y.mean(axis=-1, keepdims=True), 1e-3, None if family == "poisson" else 1 - 1e-3)
    mu = np.broadcast_to(mean, y.shape).copy()
    eta = np.log(mu) if family == "poisson" else np.log(mu / (1 - mu))
    beta = np.zeros((y.shape[0], k))
    for _ in range(iterations):
        w = mu if family == "poisson" else mu * (1 - mu)
        z = eta + (y - mu) / w
        gram = np.einsum("ni,rn,nj->rij", design, w, design)
        rhs = np.einsum("ni,rn->ri", design, w * z)
        new = np.linalg.solve(gram, rhs[..., None])[..., 0]
        done = np.max(np.abs(new - beta)) < 1e-11
        beta = new
        eta = beta @ design.T
        mu = np.exp(eta) if family == "poisson" else 1 / (1 + np.exp(-eta))
        if done:
            break
    return beta, mu


def _wald_z(design: np.ndarray, beta: np.ndarray, mu: np.ndarray, family: str, column: int) -> np.ndarray:
    w = mu if family == "poisson" else mu * (1 - mu)
    gram = np.einsum("ni,rn,nj->rij", design, w, design)
    cov = np.linalg.inv(gram)
    return beta[:, column] / np.sqrt(cov[:, column, column])


# ---------------------------------------------------------------- cases


def _mean_cases() -> list[Case]:
    cases = []

    def one_sample(key, spec, null, adverse, draw, n, *, within_model=True, draws=2_000_000):
        def simulate(rng, size):
            return {"x": draw(rng, (size, n))}

        if isinstance(spec, OneSampleTTest):
            def run_batch(batch):
                p = _t_pvalue(_one_sample_t(batch["x"], spec.value), n - 1, spec.alternative)
                return p, one_sample_z_trusted_level(batch["x"], spec.alternative, reference="t")
            at_level = None
        else:
            def run_batch(batch):
                p = _z_pvalue(_one_sample_t(batch["x"], spec.value), spec.alternative)
                return p, one_sample_z_trusted_level(batch["x"], spec.alternative)

            def at_level(batch, level):  # the t reference, itself charged the skewness rule
                p, tl = run_batch(batch)
                p_t = _t_pvalue(_one_sample_t(batch["x"], spec.value), n - 1, spec.alternative)
                tl_t = one_sample_z_trusted_level(batch["x"], spec.alternative, reference="t")
                use_t = (tl > level) & (tl_t <= level)
                methods = np.full(len(p), "asymptotic", dtype=object)
                return np.where(use_t, p_t, p), np.where(use_t, tl_t, tl), methods

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=draws, simulate=simulate,
                          frame=_one_frame, run_batch=run_batch, at_level_batch=at_level,
                          within_model=within_model, chunk=max(1, 20_000_000 // n)))

    one_sample("z-normal-50", OneSampleZTest(column="y"), "normal, n = 50", "small n",
               lambda r, s: r.standard_normal(s), 50)
    one_sample("z-exponential-200", OneSampleZTest(column="y", value=1.0), "exponential(1), n = 200", "skew",
               lambda r, s: r.exponential(size=s), 200)
    one_sample("z-normal-2000", OneSampleZTest(column="y"), "normal, n = 2000", "benign",
               lambda r, s: r.standard_normal(s), 2000, draws=400_000)
    one_sample("t-normal-8", OneSampleTTest(column="y"), "normal, n = 8", "benign",
               lambda r, s: r.standard_normal(s), 8)
    one_sample("t-exponential-50", OneSampleTTest(column="y", value=1.0), "exponential(1), n = 50", "skew",
               lambda r, s: r.exponential(size=s), 50)
    # the premise of every shape-based trust rule fails here: 60% of samples hold no outlier and look
    # normal, but their mean sits one standard error below the population's (Bahadur and Savage 1956)
    one_sample("t-contaminated-100", OneSampleTTest(column="y", value=0.1),
               "N(0, 1) plus 20 with probability 0.005, n = 100", "rare outliers",
               lambda r, s: r.standard_normal(s) + 20.0 * (r.random(s) < 0.005), 100, within_model=False)

    def two_sample(key, spec, null, adverse, draw1, draw2, n1, n2, *, within_model=True, draws=1_000_000,
                   calls=("run", "run_at_level")):
        kind = "t" if isinstance(spec, TwoSampleTTest) else "z"

        def simulate(rng, size):
            return {"x1": draw1(rng, (size, n1)), "x2": draw2(rng, (size, n2))}

        def run_batch(batch):
            t, df = _two_sample_t(batch["x1"], batch["x2"], spec.usevar)
            p = _t_pvalue(t, df, spec.alternative) if kind == "t" else _z_pvalue(t, spec.alternative)
            tl = _two_sample_trusted_level(batch["x1"], batch["x2"], spec.alternative, kind=kind, usevar=spec.usevar)
            return p, np.broadcast_to(tl, p.shape)

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=draws, simulate=simulate,
                          frame=_two_frame, run_batch=run_batch, within_model=within_model,
                          chunk=max(1, 20_000_000 // (n1 + n2)), calls=calls))

    lognormal = lambda r, s: r.lognormal(size=s)  # noqa: E731
    normal = lambda r, s: r.standard_normal(s)  # noqa: E731
    # the same distribution in both arms: declared, so that run_at_level may permute the labels
    two_sample("welch-lognormal-20-180", TwoSampleTTest(column="y", group="g", usevar="unequal", exchangeable=True),
               "same lognormal(0, 1) in both arms, n = 20 + 180", "skew, unbalanced arms", lognormal, lognormal,
               20, 180)
    two_sample("welch-normal-hetero", TwoSampleTTest(column="y", group="g", usevar="unequal"),
               "normal, sd 3 vs 1, n = 15 + 60", "unbalanced arms",
               lambda r, s: 3.0 * r.standard_normal(s), normal, 15, 60)
    two_sample("welch-normal-1000", TwoSampleTTest(column="y", group="g", usevar="unequal"),
               "normal, sd 2 vs 1, n = 400 + 1600", "benign", lambda r, s: 2.0 * r.standard_normal(s), normal,
               400, 1600, draws=200_000, calls=("run",))
    two_sample("z2-normal-15-15", TwoSampleZTest(column="y", group="g"), "normal, n = 15 + 15", "small n",
               normal, normal, 15, 15)
    two_sample("student-normal-10-30", TwoSampleTTest(column="y", group="g"), "normal, n = 10 + 30", "benign",
               normal, normal, 10, 30)
    two_sample("student-lognormal-20-180", TwoSampleTTest(column="y", group="g"),
               "same lognormal(0, 1) in both arms, n = 20 + 180", "skew, unbalanced arms", lognormal, lognormal,
               20, 180)
    return cases


def _proportion_cases() -> list[Case]:
    cases = []

    def one_prop(key, spec, null, adverse, n, p0):
        def simulate(rng, size):
            return {"k": rng.binomial(n, p0, size=size), "n": n}

        memo: dict = {}

        def run_batch(batch):
            p, tl, _ = _cached(batch["k"], lambda i: _safe(lambda: spec.run(_prop_frame(batch, i))),
                               memo.setdefault("run", {}))
            return p, tl

        def at_level(batch, level):
            return _cached(batch["k"], lambda i: _safe(lambda: spec.run_at_level(_prop_frame(batch, i), level)),
                           memo.setdefault(level, {}))

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=4_000_000, simulate=simulate,
                          frame=_prop_frame, run_batch=run_batch, at_level_batch=at_level))

    one_prop("prop1-rare", OneSampleProportionTest(column="b", value=0.01), "Binomial(500, 0.01)", "rare events",
             500, 0.01)
    one_prop("prop1-half", OneSampleProportionTest(column="b", value=0.5), "Binomial(100, 0.5)", "small n",
             100, 0.5)

    def two_prop(key, spec, null, adverse, n1, n2, prob):
        def simulate(rng, size):
            c = np.stack([rng.binomial(n1, prob, size=size), rng.binomial(n2, prob, size=size)], axis=1)
            return {"c": c, "n1": n1, "n2": n2}

        memo: dict = {}

        def run_batch(batch):
            p, tl, _ = _cached(batch["c"], lambda i: _safe(lambda: spec.run(_two_prop_frame(batch, i))),
                               memo.setdefault("run", {}))
            return p, tl

        def at_level(batch, level):
            return _cached(batch["c"], lambda i: _safe(lambda: spec.run_at_level(_two_prop_frame(batch, i), level)),
                           memo.setdefault(level, {}))

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=4_000_000, simulate=simulate,
                          frame=_two_prop_frame, run_batch=run_batch, at_level_batch=at_level))

    two_prop("prop2-rare", TwoSampleProportionTest(column="b", group="g"), "both Binomial(1000, 0.005)",
             "rare events", 1000, 1000, 0.005)
    two_prop("prop2-rare-unbalanced", TwoSampleProportionTest(column="b", group="g"),
             "Binomial(100, 0.02) vs Binomial(2000, 0.02)", "rare events, unbalanced arms", 100, 2000, 0.02)
    two_prop("prop2-benign", TwoSampleProportionTest(column="b", group="g"), "both Binomial(400, 0.3)", "benign",
             400, 400, 0.3)
    two_prop("chi2x2-rare", ChiSquareIndependenceTest(column1="g", column2="b"), "both Binomial(1000, 0.005)",
             "rare events", 1000, 1000, 0.005)

    rows, cols = np.array([15, 30, 55]), np.array([33, 33, 34])
    spec = ChiSquareIndependenceTest(column1="u", column2="v")
    expected = np.outer(rows, cols) / rows.sum()
    holder: dict[str, float] = {}

    def simulate(rng, size):
        return {"tables": scipy.stats.random_table(rows, cols).rvs(size=size, random_state=rng)}

    def run_batch(batch):
        stats = _trust.chi_square_statistics(batch["tables"], expected)
        p = scipy.stats.chi2.sf(stats, 4)
        if "tl" not in holder:  # the margins are fixed: one trusted level for every draw
            holder["tl"] = _trust.chi_square_table_trusted_level(batch["tables"][0])
        return p, np.full(len(p), holder["tl"])

    cases.append(Case(key="chi3x3", spec=spec, null="independence, margins (15, 30, 55) x (33, 33, 34)",
                      adverse="small expected counts", draws=2_000_000, simulate=simulate, frame=_table_frame,
                      run_batch=run_batch))
    return cases


def _correlation_cases() -> list[Case]:
    cases = []

    def spearman(key, spec, null, adverse, x, y_values, *, deterministic):
        n = len(x)

        def simulate(rng, size):
            return {"x": x, "y": rng.permuted(np.broadcast_to(y_values, (size, n)).copy(), axis=1)}

        a = scipy.stats.rankdata(x) - (n + 1) / 2
        b = scipy.stats.rankdata(y_values) - (n + 1) / 2
        trusted = _trust.spearman_trusted_level(a, b, alternative=spec.alternative)  # the ranks are fixed

        def keys(batch):
            return np.round((scipy.stats.rankdata(batch["y"], axis=1) - (n + 1) / 2) @ a * 4).astype(np.int64)

        def run_batch(batch):
            rho = (scipy.stats.rankdata(batch["y"], axis=1) - (n + 1) / 2) @ a / math.sqrt((a @ a) * (b @ b))
            with np.errstate(divide="ignore", invalid="ignore"):
                t = rho * np.sqrt((n - 2) / ((1.0 - rho) * (1.0 + rho)))
            return _t_pvalue(t, n - 2, spec.alternative), np.full(len(rho), trusted)

        at_level = None
        memo: dict = {}
        if deterministic:
            def at_level(batch, level):
                return _cached(keys(batch), lambda i: _safe(lambda: spec.run_at_level(_pair_frame(batch, i), level)),
                               memo.setdefault(level, {}))

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=2_000_000, simulate=simulate,
                          frame=_pair_frame, run_batch=run_batch, at_level_batch=at_level,
                          chunk=max(1, 10_000_000 // n)))

    spearman("spearman-8", SpearmanCorrelationTest(column1="x", column2="y"), "independent, n = 8", "small n",
             np.arange(8.0), np.arange(8.0), deterministic=True)
    spearman("spearman-15", SpearmanCorrelationTest(column1="x", column2="y"), "independent, n = 15", "small n",
             np.arange(15.0), np.arange(15.0), deterministic=False)
    spearman("spearman-200", SpearmanCorrelationTest(column1="x", column2="y"), "independent, n = 200", "benign",
             np.arange(200.0), np.arange(200.0), deterministic=False)
    tied_x = np.repeat(np.arange(4.0), [5, 20, 25, 10])
    tied_y = np.repeat(np.arange(3.0), [30, 20, 10])
    spearman("spearman-tied-60", SpearmanCorrelationTest(column1="x", column2="y", alternative="greater"),
             "independent, n = 60, 4 x 3 tied values", "ties", tied_x, tied_y, deterministic=False)
    return cases


def _regression_cases() -> list[Case]:
    cases = []

    def glm(key, spec, null, adverse, design, names, family, prob, column, *, draws):
        n = design.shape[0]

        def simulate(rng, size):
            y = rng.poisson(prob, size=(size, n)) if family == "poisson" else (rng.random((size, n)) < prob)
            return {"y": y.astype(float), "design": design, "names": names}

        def run_batch(batch):
            y = batch["y"]
            ok = y.sum(axis=1) > 0
            beta, mu = _irls(design, y, family)
            z = _wald_z(design, beta, mu, family, column)
            p = np.where(ok, _z_pvalue(z, spec.alternative), np.nan)
            _, mu0 = _irls(design[:, [c for c in range(design.shape[1]) if c != column]], y, family)  # the null fit
            tl = _trust.glm_trusted_level(design, mu0, [column], family, alternative=spec.alternative)
            return p, tl

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=draws, simulate=simulate,
                          frame=_regression_frame, run_batch=run_batch, chunk=5_000))

    rng = np.random.default_rng(20_240_701)
    exposure = rng.negative_binomial(1, 1 / 6, size=200).astype(float)  # mean 5, sd 5.5
    glm("poisson-exposure", CoefficientTest(formula="y ~ x", term="x", model="poisson"),
        "y ~ Poisson(1), x negative binomial (mean 5, var 30), n = 200", "overdispersed exposure",
        np.column_stack([np.ones(200), exposure]), ["intercept", "x"], "poisson", 1.0, 1, draws=200_000)
    x = rng.standard_normal(500)
    glm("logit-rare", CoefficientTest(formula="y ~ x", term="x", model="logit"),
        "y ~ Bernoulli(0.02), x normal, n = 500", "rare events",
        np.column_stack([np.ones(500), x]), ["intercept", "x"], "binomial", 0.02, 1, draws=100_000)
    # benign designs, where the rule (read at the null fit's means) trusts the test at small levels
    own = np.random.default_rng(20_261_128)  # not `rng`: the designs of the cases below stay as they were
    x = own.standard_normal(500)
    glm("poisson-benign", CoefficientTest(formula="y ~ x", term="x", model="poisson"),
        "y ~ Poisson(5), x normal, n = 500", "none (trusted far down)",
        np.column_stack([np.ones(500), x]), ["intercept", "x"], "poisson", 5.0, 1, draws=300_000)
    x = own.uniform(-1.0, 1.0, 120)
    glm("logit-benign", CoefficientTest(formula="y ~ x", term="x", model="logit"),
        "y ~ Bernoulli(0.5), x uniform, n = 120", "small n",
        np.column_stack([np.ones(120), x]), ["intercept", "x"], "binomial", 0.5, 1, draws=400_000)

    def ols(key, spec, null, adverse, design, names, errors, *, within_model=True, calls=("run", "run_at_level")):
        n, k = design.shape
        inverse = np.linalg.inv(design.T @ design)
        hat = inverse @ design.T
        tested = [names.index(t) for t in (spec.terms if isinstance(spec, JointWaldTest) else (spec.term,))]

        def simulate(rng, size):
            return {"y": errors(rng, (size, n)), "design": design, "names": names}

        def run_batch(batch):
            y = batch["y"]
            beta = y @ hat.T
            resid = y - beta @ design.T
            sigma2 = (resid * resid).sum(axis=1) / (n - k)
            if isinstance(spec, JointWaldTest):
                sub = np.linalg.inv(inverse[np.ix_(tested, tested)])
                b = beta[:, tested]
                wald = np.einsum("ri,ij,rj->r", b, sub, b) / sigma2
                p = scipy.stats.chi2.sf(wald, len(tested))
                tl = _trust.chi2_vs_f_trusted_level(len(tested), float(n - k))
                tl = np.maximum(tl, _trust_model.ols_trusted_level(design, resid, tested, "two-sided"))
            else:
                j = tested[0]
                t = beta[:, j] / np.sqrt(sigma2 * inverse[j, j])
                p = _t_pvalue(t, n - k, spec.alternative)
                tl = _trust_model.ols_trusted_level(design, resid, tested, spec.alternative)
            return p, np.broadcast_to(tl, p.shape)

        def at_level(batch, level):  # no exact version with continuous nuisance columns: run's result
            p, tl = run_batch(batch)
            return p, np.array(tl, dtype=float), np.full(len(p), "exact_under_model", dtype=object)

        cases.append(Case(key=key, spec=spec, null=null, adverse=adverse, draws=2_000_000, simulate=simulate,
                          frame=_regression_frame, run_batch=run_batch,
                          at_level_batch=None if isinstance(spec, JointWaldTest) else at_level,
                          within_model=within_model, chunk=50_000, calls=calls))

    design = np.column_stack([np.ones(30), rng.standard_normal((30, 3))])
    names = ["intercept", "x1", "x2", "x3"]
    ols("ols-coef-normal", CoefficientTest(formula="y ~ x1 + x2 + x3", term="x1"), "normal errors, n = 30",
        "benign", design, names, lambda r, s: r.standard_normal(s))
    ols("ols-joint-chi2", JointWaldTest(formula="y ~ x1 + x2 + x3", terms=("x1", "x2", "x3"), use_f=False),
        "normal errors, n = 30", "small n", design, names, lambda r, s: r.standard_normal(s),
        calls=("run",))  # run_at_level: F, or a permutation test (the nuisance is the intercept alone)
    skewed = np.column_stack([np.ones(30), rng.exponential(size=30) ** 2, rng.standard_normal((30, 2))])
    ols("ols-coef-skewed", CoefficientTest(formula="y ~ x1 + x2 + x3", term="x1"),
        "exponential errors, heavy-tailed x1, n = 30", "skew", skewed, names,
        lambda r, s: r.exponential(size=s) - 1.0)
    return cases


def _all_cases() -> list[Case]:
    return _mean_cases() + _proportion_cases() + _correlation_cases() + _regression_cases()


#: Keys of the cases of the table, in order.
CASES = tuple(c.key for c in _all_cases())


def case(key: str) -> Case:
    """The case of :data:`CASES` named ``key``."""
    for c in _all_cases():
        if c.key == key:
            return c
    raise ValueError(f"unknown calibration case {key!r}; the cases are {list(CASES)!r}.")


# ---------------------------------------------------------------- measurement
