r"""Adversarial selection scenarios for the validity and power harness (:mod:`selective.validation.harness`).

Each scenario is a small frozen object: its ``name``, a ``description``, the ``truth`` (which
hypotheses are null), the declared candidate count ``n_candidates`` (for Bonferroni), the
certificates of its selection (``certificates()``, recorded on a :class:`~selective.Ledger`),
and ``replicate_many(rngs)``, which runs one replication per generator, vectorised across
replications where the computation allows, and returns :class:`~selective.validation.harness.Outcomes`.

Every scenario tests one hypothesis per replication (``n_tests = 1``; a replication whose
selection is empty tests nothing and counts as no rejection), so the type-I error of a column is
:math:`P[\tilde p_T\le\alpha,\ H_T\text{ true}]`, the quantity each valid correction bounds by α.
The corrected columns are fixed functions of the naive p-value and of data-independent
certificates (THEORY.md 3.2), so they are computed in one vectorised call to
:func:`selective.corrections.correct`; ``TopKNoise.pipeline`` runs the same replication through
:class:`~selective.Analysis` to show that the two agree.

Data splitting (``pvalue_split``) reruns the same selection on a declared fraction of the rows
and tests on the others, needing no correction. Exact conditional p-values
(``pvalue_conditional``) come from :mod:`selective.conditional` for the lasso and stepwise
scenarios, with the noise level σ = 1 known.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special, stats

from ..._validation import check_int, check_positive, check_probability
from ...accounting.certificates import DescriptionLength
from ...accounting.ledger import Ledger
from ...corrections import correct
from ..harness import Outcomes, split_rows

__all__ = [
    "Scenario",
    "Preregistered",
    "TopKNoise",
    "SparseVectorThreshold",
    "HoldoutReuse",
    "FreedmanScreening",
    "LassoFixedLambda",
    "ForwardStepwisePath",
    "DPThenDescriptionLength",
    "FreedmanSummary",
    "freedman_paradox",
    "SCENARIOS",
    "get_scenario",
    "scenario_names",
]

_STANDARD = ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best",
             "pvalue_split")


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------


def _corrected(p_naive: np.ndarray, certificates: Sequence[Any], n_rows: int, n_candidates: int,
               alpha: float = 0.05) -> dict[str, np.ndarray]:
    """Every corrected column for naive p-values (NaN = no test) under fixed certificates."""
    ledger = Ledger(n_rows)
    for cert in certificates:
        ledger.record(cert)
    out = {k: np.full(p_naive.shape, np.nan) for k in
           ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best")}
    ok = ~np.isnan(p_naive)
    if ok.any():
        c = correct(np.clip(p_naive[ok], 0.0, 1.0), ledger.totals(), alpha=alpha, n_candidates=n_candidates)
        for k in out:
            out[k][ok] = getattr(c, k)
    return out


def _pooled_t(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """Student's pooled two-sample t along axis -2: a (..., na, m), b (..., nb, m)."""
    na, nb = a.shape[-2], b.shape[-2]
    va, vb = a.var(axis=-2, ddof=1), b.var(axis=-2, ddof=1)
    sp2 = ((na - 1) * va + (nb - 1) * vb) / (na + nb - 2)
    t = (a.mean(axis=-2) - b.mean(axis=-2)) / np.sqrt(sp2 * (1.0 / na + 1.0 / nb))
    return t, na + nb - 2


def _two_sided_t(t: np.ndarray, df: Any) -> np.ndarray:
    return 2.0 * stats.t.sf(np.abs(t), df)


def _two_sided_z(z: np.ndarray) -> np.ndarray:
    return special.erfc(np.abs(z) / math.sqrt(2.0))


def _ols_z_pvalue(x: np.ndarray, y: np.ndarray, j: int) -> float:
    """Two-sided z-test (σ = 1 known) of coefficient ``j`` of y on the columns of x, with intercept."""
    xc = x - x.mean(axis=0)
    yc = y - y.mean()
    g = np.linalg.inv(xc.T @ xc)
    b = g @ (xc.T @ yc)
    return float(_two_sided_z(b[j] / math.sqrt(g[j, j])))


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """Base of the scenarios: common fields and the single-replication view.

    Attributes
    ----------
    name : str
    split_fraction : float
        Declared share of rows used for selection by the data-splitting baseline.
    """

    name: str = ""
    split_fraction: float = 0.5

    description: ClassVar[str] = ""
    n_tests: ClassVar[int] = 1
    default_reps: ClassVar[int] = 2000
    chunk_size: ClassVar[int] = 250
    naive_is_biased: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_probability("split_fraction", self.split_fraction, closed="neither")

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD

    @property
    def truth(self) -> str:  # pragma: no cover - every scenario overrides it
        raise NotImplementedError

    @property
    def n_rows(self) -> int:  # pragma: no cover
        raise NotImplementedError

    @property
    def n_candidates(self) -> int:  # pragma: no cover
        raise NotImplementedError

    def certificates(self) -> tuple[Any, ...]:  # pragma: no cover
        raise NotImplementedError

    def ledger(self) -> Ledger:
        """A ledger holding the selection's certificates (they do not depend on the data)."""
        led = Ledger(self.n_rows)
        for c in self.certificates():
            led.record(c)
        return led

    def replicate_many(self, rngs: Sequence[np.random.Generator]) -> Outcomes:  # pragma: no cover
        raise NotImplementedError

    def replicate(self, rng: Any = None) -> pd.DataFrame:
        """One replication as a frame: one row per test slot, every p-value column and the truth."""
        g = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        out = self.replicate_many([g])
        row = {c: out.pvalues[c][0] for c in self.columns}
        row["is_null"] = out.null[self.columns[0]][0]
        row["is_null_split"] = out.null["pvalue_split"][0] if "pvalue_split" in out.null else row["is_null"]
        return pd.DataFrame(row, index=pd.Index([f"slot {i}" for i in range(self.n_tests)], name="hypothesis"))

    def _finish(self, p_naive: np.ndarray, null: np.ndarray, extra: dict[str, np.ndarray],
                null_split: np.ndarray | None = None) -> Outcomes:
        cols = {"pvalue_naive": p_naive, **_corrected(p_naive, self.certificates(), self.n_rows, self.n_candidates),
                **extra}
        by = {} if null_split is None else {"pvalue_split": null_split}
        return Outcomes.from_shared({c: cols[c].reshape(len(p_naive), -1) for c in self.columns},
                                    null.reshape(len(p_naive), -1), null_by_column=by)


# --------------------------------------------------------------------------------------------
# 0. Control: a pre-registered test, no selection
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Preregistered(Scenario):
    """Control: one pre-registered Student t-test, no selection at all.

    Truth: the single hypothesis (equal means of two groups of ``n_rows / 2`` N(0, 1) rows) is
    null. Every column is the exact naive p-value (the ledger is empty, Bonferroni over one
    declared hypothesis) or, for data splitting, the same test on the test part; every column
    rejects at exactly α.
    """

    name: str = "preregistered"
    n_obs: int = 100
    description: ClassVar[str] = "one pre-registered two-sample t-test, no selection (every column exact)"
    naive_is_biased: ClassVar[bool] = False
    chunk_size: ClassVar[int] = 2000

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)

    @property
    def truth(self) -> str:
        return "Global null: the pre-registered hypothesis (equal group means) is true."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return 1

    def certificates(self) -> tuple[Any, ...]:
        return ()

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        x = np.stack([g.standard_normal((self.n_obs, 1)) for g in rngs])
        t, df = _pooled_t(x[:, :half], x[:, half:])
        p = _two_sided_t(t[:, 0], df)
        k = int(round(self.split_fraction * half))
        ts, dfs = _pooled_t(x[:, k:half], x[:, half + k:])
        null = np.ones(len(rngs), dtype=bool)
        return self._finish(p, null, {"pvalue_split": _two_sided_t(ts[:, 0], dfs)})


# --------------------------------------------------------------------------------------------
# 1. Top-k among many noise features
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TopKNoise(Scenario):
    """Keep the feature with the largest ``|t|`` among ``n_features``, then t-test it on the same data.

    Data: ``n_obs`` rows, half in group "a" and half in "b"; ``n_features`` columns i.i.d.
    N(0, 1), except that the first ``len(effects)`` columns have mean ``effects[j]`` in group
    "a" (a real difference). Selection: TopK(k=1) by ``|Student t|`` (description length
    C(m, 1) = m, DFHPRR Thm 17). Test: Student's two-sample t of the chosen feature.

    Truth: the hypothesis of feature j is null iff j >= len(effects). With ``effects=()`` (the
    default) every hypothesis is null: a global null where the naive column rejects about
    :math:`1 - 0.95^{m}` of the time.
    """

    name: str = "topk_noise"
    n_obs: int = 200
    n_features: int = 50
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = "top-1 of many noise features by |t|, tested on the same data (description length)"
    chunk_size: ClassVar[int] = 100

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_int("n_features", self.n_features, low=1)
        object.__setattr__(self, "effects", tuple(float(e) for e in self.effects))
        if len(self.effects) > self.n_features:
            raise ValueError(f"`effects` must have at most n_features = {self.n_features} entries; got {len(self.effects)}.")

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: all {self.n_features} features have equal group means."
        return (f"Features 0..{k - 1} have real group differences {self.effects}; the other "
                f"{self.n_features - k} are null.")

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(self.n_features),)

    @property
    def groups(self) -> np.ndarray:
        half = self.n_obs // 2
        return np.array(["a"] * half + ["b"] * (self.n_obs - half))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One dataset: an (n_obs, n_features) array; group "a" is the first half of the rows."""
        x = rng.standard_normal((self.n_obs, self.n_features))
        if self.effects:
            x[: self.n_obs // 2, : len(self.effects)] += np.asarray(self.effects)
        return x

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        labels = self.groups
        x = np.empty((len(rngs), self.n_obs, self.n_features))
        sel_a, sel_b, tst_a, tst_b = [], [], [], []
        for i, g in enumerate(rngs):
            x[i] = self.draw(g)
            parts = split_rows(self.n_obs, fraction=self.split_fraction, rng=g, stratify=labels)
            sel_a.append(parts.select[parts.select < half])
            sel_b.append(parts.select[parts.select >= half])
            tst_a.append(parts.test[parts.test < half])
            tst_b.append(parts.test[parts.test >= half])
        t, df = _pooled_t(x[:, :half], x[:, half:])
        rows = np.arange(len(rngs))
        j = np.abs(t).argmax(axis=1)
        p = _two_sided_t(t[rows, j], df)
        take = lambda idx: np.stack([x[i, idx[i]] for i in rows])  # noqa: E731
        ts, _ = _pooled_t(take(sel_a), take(sel_b))
        js = np.abs(ts).argmax(axis=1)
        tt, dft = _pooled_t(take(tst_a), take(tst_b))
        ps = _two_sided_t(tt[rows, js], dft)
        k = len(self.effects)
        return self._finish(p, j >= k, {"pvalue_split": ps}, null_split=js >= k)

    def pipeline(self, rng: np.random.Generator) -> pd.DataFrame:
        """The same replication through :class:`~selective.Analysis`, ``TopK``, ``TwoSampleTTest``
        and :func:`~selective.validation.harness.data_splitting` (slow; for checking the vectorised path)."""
        from ...analysis.facade import Analysis
        from ...hypotheses import TwoSampleTTest
        from ...selectors.topk import TopK
        from ..harness import data_splitting

        names = tuple(f"x{j:03d}" for j in range(self.n_features))
        d = pd.DataFrame(self.draw(rng), columns=list(names))
        d["group"] = self.groups

        def score(frame: pd.DataFrame) -> pd.Series:
            a = frame.loc[frame.group == "a", list(names)].to_numpy()[None]
            b = frame.loc[frame.group == "b", list(names)].to_numpy()[None]
            return pd.Series(np.abs(_pooled_t(a, b)[0][0]), index=list(names))

        selector = TopK(k=1, score=score, candidates=names, name="|t|")

        seen: list[tuple[str, ...]] = []

        def tests(chosen):
            seen.append(tuple(chosen))
            return [TwoSampleTTest(column=c, group="group", levels=("a", "b"), usevar="pooled") for c in chosen]

        analysis = Analysis(d, rng=rng, n_candidates=self.n_features)
        chosen = analysis.select(selector).value
        for spec in tests(chosen):
            analysis.test(spec)
        frame = analysis.report().frame.copy()
        split = data_splitting(d, select=selector, tests=tests, fraction=self.split_fraction, rng=rng,
                               stratify="group")
        k = len(self.effects)
        frame["pvalue_split"] = split["pvalue_split"].to_numpy()
        frame["is_null"] = [names.index(c) >= k for c in chosen]
        frame["is_null_split"] = [names.index(c) >= k for c in seen[-1]]
        return frame


# --------------------------------------------------------------------------------------------
# 2. Threshold chasing with Sparse Vector
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _TwoGroupNoise(Scenario):
    """Shared part of the scenarios on ``n_features`` null features in two groups of rows (the
    first half of the rows is group "a"). Subclasses choose one feature, or none (-1), from the
    rows of the two groups with :meth:`_select`; the chosen feature is t-tested on the same
    data, and the data-splitting baseline selects on the first ``split_fraction`` of each group
    and tests on the rest."""

    n_obs: int = 200
    n_features: int = 50
    epsilon: float = 2.0
    clip: float = 3.0

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=8)
        check_int("n_features", self.n_features, low=1)
        check_positive("epsilon", self.epsilon)
        check_positive("clip", self.clip)

    @property
    def truth(self) -> str:
        return f"Global null: all {self.n_features} features have equal group means."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def _clipped_score(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """|sum of clipped values in group a - in group b| / n: replace-one sensitivity 2c/n."""
        c = self.clip
        return np.abs(np.clip(a, -c, c).sum(axis=0) - np.clip(b, -c, c).sum(axis=0)) / (a.shape[0] + b.shape[0])

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:  # pragma: no cover
        raise NotImplementedError

    def replicate_many(self, rngs):
        half = self.n_obs // 2
        k = int(round(self.split_fraction * half))
        r = len(rngs)
        p, ps = np.full(r, np.nan), np.full(r, np.nan)
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            j = self._select(x[:half], x[half:], g)
            if j >= 0:
                t, df = _pooled_t(x[:half, j:j + 1], x[half:, j:j + 1])
                p[i] = _two_sided_t(t[0], df)
            js = self._select(x[:k], x[half:half + k], g)
            if js >= 0:
                t, df = _pooled_t(x[k:half, js:js + 1], x[half + k:, js:js + 1])
                ps[i] = _two_sided_t(t[0], df)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps})


@dataclass(frozen=True, slots=True, kw_only=True)
class SparseVectorThreshold(_TwoGroupNoise):
    r"""Threshold chasing: screen features in order with Sparse Vector, test the first that crosses.

    Data as :class:`TopKNoise` under the global null. Score of feature j:
    :math:`|\frac1n\sum_i \mathrm{clip}(x_{ij},-c,c)s_i|` with :math:`s_i=\pm1` by group,
    replace-one sensitivity :math:`2c/n`. The analyst asks Sparse (Dwork and Roth 2014,
    Algorithm 2, cut-off 1; :class:`selective.mechanisms.Sparse`, exact discrete Laplace noise)
    whether each score exceeds ``threshold``, and t-tests the first feature reported above it;
    if none is, nothing is tested. Certificate ``PureDP(epsilon)``.

    Truth: global null (every feature has equal group means).
    """

    name: str = "sparse_vector_threshold"
    threshold: float = 0.2
    description: ClassVar[str] = "threshold chasing: first feature above a threshold by Sparse Vector (pure DP)"
    chunk_size: ClassVar[int] = 100

    def certificates(self) -> tuple[Any, ...]:
        from ...accounting.certificates import PureDP

        return (PureDP(self.epsilon),)

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:
        from ...mechanisms.sparse_vector import Sparse

        n = a.shape[0] + b.shape[0]
        sv = Sparse(self.threshold, epsilon=self.epsilon, sensitivity=2.0 * self.clip / n, c=1, rng=g)
        hits = sv.screen(self._clipped_score(a, b))
        return int(hits[0]) if hits.size else -1


# --------------------------------------------------------------------------------------------
# 3. Repeated holdout reuse
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutReuse(Scenario):
    r"""The analyst reuses a holdout: validates features on it one by one, then tests on it.

    Protocol after DFHPRR §5 (THEORY.md 6.1), scaled down: training and holdout sets of
    ``n_obs`` rows each, ``n_features`` attributes i.i.d. N(0, 1), labels ±1 uniform and
    independent of them. With :math:`w_j` the mean of :math:`x_jy` on a set, the analyst ranks
    features by training :math:`|w^t_j|` and, for the top ``n_queries`` in turn, asks the
    holdout the bit ":math:`w^h_j` has the sign of :math:`w^t_j` and
    :math:`|w^h_j|\ge 1/\sqrt n`", stopping at the first 1 (SparseValidate with m =
    ``n_queries``, budget 1; DFHPRR Thm 27). The feature validated (or, if none is, the top
    training feature) is then t-tested on the holdout (one-sample t of :math:`x_jy`, exact here).
    Naive: that holdout p-value, reused after the holdout chose the feature. Certificate:
    ``DescriptionLength(1 + n_queries)`` on the holdout (the training set is independent of it).
    Data splitting: the single-use holdout, i.e. test the top training feature without consulting
    the holdout first.

    Truth: global null (no attribute is related to the label).
    """

    name: str = "holdout_reuse"
    n_obs: int = 100
    n_features: int = 50
    n_queries: int = 10
    description: ClassVar[str] = "holdout reused to validate features one by one, then to test the chosen one"
    chunk_size: ClassVar[int] = 250

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)
        check_int("n_features", self.n_features, low=1)
        check_int("n_queries", self.n_queries, low=1, high=self.n_features)

    @property
    def truth(self) -> str:
        return f"Global null: none of the {self.n_features} attributes is related to the label."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    def certificates(self) -> tuple[Any, ...]:
        from ...mechanisms.reuse import sparsevalidate_n_outcomes

        return (DescriptionLength(sparsevalidate_n_outcomes(self.n_queries, 1)),)

    def replicate_many(self, rngs):
        n, m = self.n_obs, self.n_features
        r = len(rngs)
        zt = np.empty((r, n, m))
        zh = np.empty((r, n, m))
        for i, g in enumerate(rngs):
            xt = g.standard_normal((n, m))
            yt = 2.0 * g.integers(0, 2, n) - 1.0
            xh = g.standard_normal((n, m))
            yh = 2.0 * g.integers(0, 2, n) - 1.0
            zt[i] = xt * yt[:, None]
            zh[i] = xh * yh[:, None]
        wt, wh = zt.mean(axis=1), zh.mean(axis=1)
        order = np.argsort(-np.abs(wt), axis=1, kind="stable")[:, : self.n_queries]
        rows = np.arange(r)[:, None]
        bit = (np.sign(wh[rows, order]) == np.sign(wt[rows, order])) & (np.abs(wh[rows, order]) >= 1 / math.sqrt(n))
        first = np.where(bit.any(axis=1), bit.argmax(axis=1), 0)
        j = order[np.arange(r), first]
        sd = zh.std(axis=1, ddof=1)
        tstat = wh / (sd / math.sqrt(n))
        p = _two_sided_t(tstat[np.arange(r), j], n - 1)
        ps = _two_sided_t(tstat[np.arange(r), order[:, 0]], n - 1)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps})


# --------------------------------------------------------------------------------------------
# 4. Freedman's screening
# --------------------------------------------------------------------------------------------


def _first_pass(x: np.ndarray, y: np.ndarray):
    """Batched OLS without intercept: x (r, n, p), y (r, n). Returns t, df, rss, tss."""
    n, p = x.shape[1], x.shape[2]
    g = np.linalg.inv(np.einsum("rni,rnj->rij", x, x))
    b = np.einsum("rij,rj->ri", g, np.einsum("rni,rn->ri", x, y))
    resid = y - np.einsum("rni,ri->rn", x, b)
    rss = (resid**2).sum(axis=1)
    s2 = rss / (n - p)
    t = b / np.sqrt(s2[:, None] * np.einsum("rii->ri", g))
    return t, n - p, rss, (y**2).sum(axis=1)


def _second_pass(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """OLS without intercept on the kept columns: uncentred R², overall F and its p-value, t p-values."""
    n, k = x.shape
    g = np.linalg.inv(x.T @ x)
    b = g @ (x.T @ y)
    rss = float(((y - x @ b) ** 2).sum())
    tss = float((y**2).sum())
    r2 = 1.0 - rss / tss
    f = (r2 / k) / ((1.0 - r2) / (n - k))
    t = b / np.sqrt(rss / (n - k) * np.diag(g))
    return {"r2": r2, "f": f, "pvalue_f": float(stats.f.sf(f, k, n - k)),
            "pvalues_t": _two_sided_t(t, n - k)}


@dataclass(frozen=True, slots=True, kw_only=True)
class FreedmanScreening(Scenario):
    """Freedman's paradox (THEORY.md 6.3): screen 50 noise predictors at p < 0.25, refit, F-test.

    Data: ``n_obs`` x (``n_features`` + 1) i.i.d. N(0, 1); the last column is y. First pass:
    regress y on all predictors (no intercept) and keep those whose two-sided t p-value is below
    ``keep_below``. Second pass: regress y on the kept predictors (no intercept); the test is the
    overall F-test of that model. Naive: its p-value. Certificate: the kept set is one of
    :math:`2^p` subsets, ``DescriptionLength(2**p)``; Bonferroni over the :math:`2^p - 1`
    possible F-tests. Data splitting: the first pass on the first ``split_fraction`` of the rows
    (rows are exchangeable), the F-test on the others. Nothing is tested if nothing is kept.

    Truth: global null (y is independent of every predictor), so the overall F hypothesis is
    true in every replication.
    """

    name: str = "freedman"
    n_obs: int = 100
    n_features: int = 50
    keep_below: float = 0.25
    split_fraction: float = 0.7
    description: ClassVar[str] = "Freedman's paradox: screen predictors at p < 0.25, refit, overall F-test"
    chunk_size: ClassVar[int] = 200

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("n_obs", self.n_obs, low=self.n_features + 2)
        check_probability("keep_below", self.keep_below, closed="neither")
        if round(self.split_fraction * self.n_obs) <= self.n_features:
            raise ValueError(f"`split_fraction` must leave more than n_features = {self.n_features} rows for the "
                             f"first pass; got {self.split_fraction!r} of {self.n_obs} rows.")

    @property
    def truth(self) -> str:
        return f"Global null: y is independent of all {self.n_features} predictors."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return 2**self.n_features - 1

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(2**self.n_features),)

    def draw_many(self, rngs) -> tuple[np.ndarray, np.ndarray]:
        d = np.stack([g.standard_normal((self.n_obs, self.n_features + 1)) for g in rngs])
        return d[:, :, :-1], d[:, :, -1]

    def replicate_many(self, rngs):
        x, y = self.draw_many(rngs)
        r = len(rngs)
        t, df, _, _ = _first_pass(x, y)
        kept = _two_sided_t(t, df) < self.keep_below
        ns = int(round(self.split_fraction * self.n_obs))
        ts, dfs, _, _ = _first_pass(x[:, :ns], y[:, :ns])
        kept_s = _two_sided_t(ts, dfs) < self.keep_below
        p = np.full(r, np.nan)
        ps = np.full(r, np.nan)
        for i in range(r):
            if kept[i].any():
                p[i] = _second_pass(x[i][:, kept[i]], y[i])["pvalue_f"]
            k = int(kept_s[i].sum())
            if 0 < k < self.n_obs - ns:
                ps[i] = _second_pass(x[i, ns:][:, kept_s[i]], y[i, ns:])["pvalue_f"]
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps})


@dataclass(frozen=True, slots=True)
class FreedmanSummary:
    """Means (and Monte-Carlo standard errors) of Freedman's statistics; see :func:`freedman_paradox`."""

    n_reps: int
    values: dict[str, float]
    std_errors: dict[str, float]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"value": self.values, "mc_se": self.std_errors})


def freedman_paradox(n_reps: int, *, seed: Any = None, n_obs: int = 100, n_features: int = 50,
                     keep_below: float = 0.25) -> FreedmanSummary:
    """Freedman's two-pass experiment (THEORY.md 6.3, no intercept), ``n_reps`` times.

    Returns the statistics of the reference table: first pass ``kept``, ``r2_first``,
    ``significant_05_first``, ``prob_f_below_05_first``; second pass ``r2``, ``f``,
    ``median_pvalue_f``, ``prob_f_below_05``, ``significant_05``, ``significant_25``. Standard
    errors are those of the means (for the median: from the binomial order-statistic interval).
    Replication i uses ``SeedSequence(seed).spawn(n_reps)[i]``.
    """
    from ..harness import replication_rng

    n_reps = check_int("n_reps", n_reps, low=2)
    sc = FreedmanScreening(n_obs=n_obs, n_features=n_features, keep_below=keep_below)
    acc: dict[str, list] = {k: [] for k in ("kept", "r2_first", "significant_05_first", "f_below_05_first", "r2",
                                            "f", "pvalue_f", "significant_05", "significant_25")}
    for start in range(0, n_reps, 500):
        rngs = [replication_rng(seed, i) for i in range(start, min(n_reps, start + 500))]
        x, y = sc.draw_many(rngs)
        t, df, rss, tss = _first_pass(x, y)
        pv = _two_sided_t(t, df)
        kept = pv < keep_below
        r2 = 1.0 - rss / tss
        f1 = (r2 / n_features) / ((1 - r2) / (n_obs - n_features))
        acc["kept"].append(kept.sum(axis=1))
        acc["r2_first"].append(r2)
        acc["significant_05_first"].append((pv < 0.05).sum(axis=1))
        acc["f_below_05_first"].append(stats.f.sf(f1, n_features, n_obs - n_features) < 0.05)
        for i in range(len(rngs)):
            if not kept[i].any():
                continue
            s = _second_pass(x[i][:, kept[i]], y[i])
            acc["r2"].append([s["r2"]])
            acc["f"].append([s["f"]])
            acc["pvalue_f"].append([s["pvalue_f"]])
            acc["significant_05"].append([(s["pvalues_t"] < 0.05).sum()])
            acc["significant_25"].append([(s["pvalues_t"] < 0.25).sum()])
    arr = {k: np.concatenate([np.atleast_1d(np.asarray(v, dtype=float)) for v in vs]) for k, vs in acc.items()}
    values, ses = {}, {}
    for k, v in arr.items():
        if k == "pvalue_f":
            continue
        name = "prob_f_below_05_first" if k == "f_below_05_first" else k
        values[name] = float(v.mean())
        ses[name] = float(v.std(ddof=1) / math.sqrt(len(v)))
    pf = arr["pvalue_f"]
    values["prob_f_below_05"] = float((pf < 0.05).mean())
    ses["prob_f_below_05"] = float(math.sqrt(values["prob_f_below_05"] * (1 - values["prob_f_below_05"]) / len(pf)))
    med = float(np.median(pf))
    lo, hi = np.quantile(pf, [0.5 - 1 / math.sqrt(len(pf)), 0.5 + 1 / math.sqrt(len(pf))])
    values["median_pvalue_f"] = med
    ses["median_pvalue_f"] = float((hi - lo) / 2)  # order statistics at 0.5 +- 1/sqrt(n): about one SE each side
    return FreedmanSummary(n_reps=n_reps, values=values, std_errors=ses)


# --------------------------------------------------------------------------------------------
# 5. Lasso support at fixed lambda
# --------------------------------------------------------------------------------------------


class _RegressionNull:
    """Shared views of the regression scenarios: y independent of ``n_features`` predictors on
    ``n_obs`` rows, with exact conditional p-values beside the standard columns."""

    __slots__ = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_conditional",)

    @property
    def truth(self) -> str:
        return f"Global null: y is independent of all {self.n_features} predictors."

    @property
    def n_rows(self) -> int:
        return self.n_obs


@dataclass(frozen=True, slots=True, kw_only=True)
class LassoFixedLambda(_RegressionNull, Scenario):
    r"""Lasso at a fixed λ selects a support; one selected coefficient is tested.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1), σ = 1 known. Selection: the lasso
    :math:`\frac12\|y-b_0-Xb\|^2+\lambda\|b\|_1` with :math:`\lambda` = ``lam_factor``
    :math:`\sqrt n` (:func:`selective.conditional.fixed_lasso_inference`); supports of size at
    most ``max_size`` count (larger ones are cut to the ``max_size`` largest ``|b|``, as
    :class:`selective.selectors.description.LassoSupport` does), certificate
    ``DescriptionLength(sum_{j<=s} C(p, j))``. One selected variable is drawn uniformly with the
    replication's generator (independent of the data) and its partial coefficient in the
    regression of y on the support is tested: naive z-test; exact conditional p-value given the
    selected support and signs (Lee, Sun, Sun and Taylor 2016, two-sided; NaN when the support was
    cut); Bonferroni over the :math:`\sum_j j\binom pj` (support, variable) pairs; data
    splitting with the lasso at :math:`\lambda` = ``lam_factor`` :math:`\sqrt{n_s}` on the
    selection rows. Nothing is tested when the support is empty.

    Truth: global null (y is independent of X), so every tested partial coefficient is zero.
    """

    name: str = "lasso_support"
    n_obs: int = 100
    n_features: int = 30
    lam_factor: float = 1.9
    max_size: int = 8
    description: ClassVar[str] = "lasso support at fixed lambda, one selected coefficient tested (+ exact conditional)"
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("n_obs", self.n_obs, low=4)
        check_positive("lam_factor", self.lam_factor)
        check_int("max_size", self.max_size, low=1, high=self.n_features)

    @property
    def n_candidates(self) -> int:
        return sum(j * math.comb(self.n_features, j) for j in range(1, self.max_size + 1))

    def certificates(self) -> tuple[Any, ...]:
        from ...selectors.description import n_supports

        return (DescriptionLength(n_supports(self.n_features, self.max_size)),)

    def _support(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        from ...conditional import solve_lasso

        n = x.shape[0]
        beta = solve_lasso(x, y, self.lam_factor * math.sqrt(n), intercept=True).beta
        xc = x - x.mean(axis=0)
        active = np.flatnonzero(np.abs(beta) > 1e-5 * np.sqrt(n / (xc**2).sum(axis=0)))
        if active.size > self.max_size:
            active = np.sort(active[np.argsort(-np.abs(beta[active]), kind="stable")[: self.max_size]])
        return active

    def replicate_many(self, rngs):
        from ...conditional import fixed_lasso_inference

        r = len(rngs)
        p, pc, ps = (np.full(r, np.nan) for _ in range(3))
        ns = int(round(self.split_fraction * self.n_obs))
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            y = g.standard_normal(self.n_obs)
            res = fixed_lasso_inference(x, y, self.lam_factor * math.sqrt(self.n_obs), sigma=1.0,
                                        alternative="two-sided")
            e = len(res.variables)
            if e:
                k = int(g.integers(min(e, self.max_size)))
                if e <= self.max_size:
                    p[i], pc[i] = res.pvalue_naive[k], res.pvalue[k]
                else:  # cut support: the naive test is on the cut model, no conditional p-value
                    keep = self._support(x, y)
                    p[i] = _ols_z_pvalue(x[:, keep], y, k)
            es = self._support(x[:ns], y[:ns])
            if es.size:
                ks = int(g.integers(es.size))
                ps[i] = _ols_z_pvalue(x[ns:][:, es], y[ns:], ks)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps, "pvalue_conditional": pc})


# --------------------------------------------------------------------------------------------
# 6. Forward stepwise
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ForwardStepwisePath(_RegressionNull, Scenario):
    """Forward stepwise path of ``steps`` steps; the first variable to enter is tested in the final model.

    Data: X (``n_obs`` x ``n_features``) and y i.i.d. N(0, 1), σ = 1 known. Selection: the
    ordered forward-stepwise path (with intercept) of ``steps`` steps, one of p!/(p-s)! paths,
    ``DescriptionLength(p!/(p-s)!)``. Test: the partial coefficient of the variable that entered
    at step 1, in the regression of y on the s selected variables: naive z-test; exact conditional
    p-value given the path (Tibshirani, Taylor, Lockhart and Tibshirani 2016,
    :func:`selective.conditional.fs_inference` with ``type="all"``, two-sided); Bonferroni over
    the C(p, s) s possible (model, variable) pairs; data splitting: the path on the selection
    rows, the z-test on the others.

    Truth: global null (y is independent of X).
    """

    name: str = "forward_stepwise"
    n_obs: int = 100
    n_features: int = 30
    steps: int = 3
    description: ClassVar[str] = "forward stepwise path of s steps, first entered variable tested (+ exact conditional)"
    default_reps: ClassVar[int] = 1000
    chunk_size: ClassVar[int] = 50

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_features", self.n_features, low=1)
        check_int("steps", self.steps, low=1, high=self.n_features)
        check_int("n_obs", self.n_obs, low=self.steps + 3)

    @property
    def n_candidates(self) -> int:
        p, s = self.n_features, self.steps
        return math.comb(p, s) * s

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(math.perm(self.n_features, self.steps)),)

    def replicate_many(self, rngs):
        from ...conditional import forward_stepwise, fs_inference

        r = len(rngs)
        p, pc, ps = (np.full(r, np.nan) for _ in range(3))
        ns = int(round(self.split_fraction * self.n_obs))
        s = self.steps
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            y = g.standard_normal(self.n_obs)
            path = forward_stepwise(x, y, maxsteps=s)
            res = fs_inference(path, sigma=1.0, k=s, type="all", alternative="two-sided")
            row = int(np.flatnonzero(np.asarray(res.index) == path.action[0])[0])
            p[i], pc[i] = res.pvalue_naive[row], res.pvalue[row]
            path_s = forward_stepwise(x[:ns], y[:ns], maxsteps=s)
            ps[i] = _ols_z_pvalue(x[ns:][:, np.asarray(path_s.action[:s])], y[ns:], 0)
        return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps, "pvalue_conditional": pc})


# --------------------------------------------------------------------------------------------
# 7. DP steps, then description-length steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DPThenDescriptionLength(_TwoGroupNoise):
    r"""NoisyTopK narrows the features, then TopK picks one of them by ``|t|``; it is t-tested.

    Data as :class:`TopKNoise`. Step 1: report noisy top-``k_dp`` of the clipped signed-mean
    scores :math:`|\frac1n\sum_i\mathrm{clip}(x_{ij},-c,c)s_i|` (sensitivity :math:`2c/n`) with
    budget ``epsilon`` (exact exponential-mechanism peeling, certificate ``PureDP``). Step 2:
    the feature with the largest ``|Student t|`` among those k (``DescriptionLength(k_dp)``). The
    ledger composes them (THEORY.md 2.7; union route 3.6). Bonferroni over all ``n_features``.

    Truth: global null (every feature has equal group means).
    """

    name: str = "dp_then_dl"
    k_dp: int = 5
    description: ClassVar[str] = "noisy top-k (pure DP) then top-1 by |t| (description length)"
    chunk_size: ClassVar[int] = 100

    def __post_init__(self) -> None:
        _TwoGroupNoise.__post_init__(self)
        check_int("k_dp", self.k_dp, low=1, high=self.n_features)

    def certificates(self) -> tuple[Any, ...]:
        from ...mechanisms.exponential import report_noisy_topk_certificate

        return (report_noisy_topk_certificate(self.k_dp, epsilon=self.epsilon), DescriptionLength(self.k_dp))

    def _select(self, a: np.ndarray, b: np.ndarray, g: np.random.Generator) -> int:
        from ...mechanisms.exponential import report_noisy_topk

        n = a.shape[0] + b.shape[0]
        idx = np.sort(np.asarray(report_noisy_topk(self._clipped_score(a, b), self.k_dp, epsilon=self.epsilon,
                                                   sensitivity=2 * self.clip / n, rng=g, exact=True)))
        t, _ = _pooled_t(a[:, idx], b[:, idx])
        return int(idx[np.abs(t).argmax()])


# --------------------------------------------------------------------------------------------
# The library
# --------------------------------------------------------------------------------------------

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Preregistered(),
        TopKNoise(),
        SparseVectorThreshold(),
        HoldoutReuse(),
        FreedmanScreening(),
        LassoFixedLambda(),
        ForwardStepwisePath(),
        DPThenDescriptionLength(),
        TopKNoise(name="topk_signal", effects=(0.45, 0.45, 0.45)),
    )
}
"""The scenario library, by name (in a fixed order: :func:`selective.validation.harness.validate` seeds by position)."""


def scenario_names() -> tuple[str, ...]:
    return tuple(SCENARIOS)


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``; an unknown name raises ``ValueError`` listing the known ones."""
    if isinstance(name, Scenario):
        return name
    if not isinstance(name, str) or name not in SCENARIOS:
        raise ValueError(f"`scenario` must be one of {', '.join(SCENARIOS)}; got {name!r}.")
    return SCENARIOS[name]
