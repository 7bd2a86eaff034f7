"""Scenarios for the validity issue's classes of failure: adaptive steps, dependent rows and a
DP selection where Theorem 20 binds.

- :class:`AdaptiveFamily`: whether the second step runs on a family of 500 or on one
  singleton depends on the first step's output (THEORY.md 3.2a). The union route and
  Bonferroni each hold; their plain minimum does not (a diagnostic column); the package's
  best column, which merges them, does.
- :class:`RepeatedMeasures`: rows nested in subjects (THEORY.md 0.4). Counting rows as the
  independent records makes the DP bound far too small (a diagnostic column); counting
  subjects, with group privacy for the DP step, holds.
- :class:`NoisyTopKTheorem20`: report noisy max at epsilon * sqrt(n) = ``eps_sqrt_n`` (the
  library runs 1, 0.3 and 2), where the product bound of Theorem 20 is what the
  max-information column uses.

Each has a signal variant (field ``effects``: a few real effects among the nulls, and an oracle
column testing the first of them without selection).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ..._validation import check_int, check_positive
from ...accounting.certificates import DescriptionLength, PureDP
from ...accounting.ledger import Ledger
from ...corrections import correct
from ..outcomes import Outcomes
from .base import _STANDARD, Scenario, _corrected, as_reported
from .dp import ORACLE_LABELS, check_effects, with_oracle

__all__ = ["AdaptiveFamily", "RepeatedMeasures", "NoisyTopKTheorem20"]

_ALPHA_RULE = 0.05  # the level in the analyst's own selection rule of AdaptiveFamily


def _two_sided_z(z: np.ndarray) -> np.ndarray:
    return 2.0 * stats.norm.sf(np.abs(z))


def _outcomes(columns: tuple[str, ...], cols: dict[str, np.ndarray], null: np.ndarray, null_split: np.ndarray,
              p_oracle: np.ndarray | None) -> Outcomes:
    """One slot per replication: every column with the shared truth ``null`` except data splitting
    (``null_split``) and, when ``p_oracle`` is given, the oracle (a real effect in every slot)."""
    r = len(null)
    out = Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in columns if c != "pvalue_oracle"},
                               null.reshape(r, 1), null_by_column={"pvalue_split": null_split.reshape(r, 1)})
    return out if p_oracle is None else with_oracle(out, p_oracle)


@dataclass(frozen=True, slots=True, kw_only=True)
class AdaptiveFamily(Scenario):
    r"""A second step whose count depends on the first step's output (THEORY.md 3.2a).

    ``n_single`` + ``n_family`` null z-statistics (exact normal p-values). Step 1 looks at the
    singletons: if the smallest of their p-values is at most :math:`\alpha/(s+1)` it picks that
    singleton, otherwise "the family" (``DescriptionLength(n_single + 1)``). Step 2 takes the
    top-1 inside the choice (``DescriptionLength(1)`` or ``DescriptionLength(n_family)``). The
    chosen hypothesis is tested on the same data. The steps were not declared in advance, so the
    package corrects them as adaptive: the union route with the realized counts, Bonferroni over
    the ``n_single + n_family`` declared hypotheses, and their merge (``pvalue_best``).
    ``pvalue_min_unmerged`` is their plain minimum, shown to prove that the merge is needed.

    Signal variant: with ``effects``, z-statistic j < ``len(effects)`` (the singletons come first)
    has mean ``effects[j]`` (each of the two halves behind it, mean ``effects[j]`` / sqrt(2)), and
    ``pvalue_oracle`` z-tests hypothesis 0 on all the data without selection.

    Truth: with ``effects=()`` (the default) global null. Otherwise hypothesis j (mean 0) is null
    iff j >= ``len(effects)``, exactly: the z-statistics are independent and unit-variance, and
    each column carries the label of the hypothesis it tested (data splitting: its own choice).
    """

    name: str = "adaptive_family"
    n_single: int = 10
    n_family: int = 500
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = "adaptive steps: the second step's count depends on the first output"
    invalid_columns: ClassVar[dict[str, str]] = {
        "pvalue_min_unmerged": "plain minimum of routes whose thresholds depend on the path (THEORY.md 3.2a)"}
    withheld_columns: ClassVar[dict[str, str]] = {
        "pvalue_mutual_info": "adaptive steps: the chain rule needs expected, not realized, counts"}
    column_labels: ClassVar[dict[str, str]] = ORACLE_LABELS

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_single", self.n_single, low=1)
        check_int("n_family", self.n_family, low=2)
        object.__setattr__(self, "effects", check_effects("effects", self.effects, limit=self.n_single + self.n_family,
                                                          what="n_single + n_family"))

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_min_unmerged",) + (("pvalue_oracle",) if self.effects else ())

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: all {self.n_single + self.n_family} hypotheses are true."
        return (f"Hypotheses 0..{k - 1} have real effects {self.effects} (z means); the other "
                f"{self.n_single + self.n_family - k} are true.")

    @property
    def n_rows(self) -> int:
        return 100

    @property
    def n_candidates(self) -> int:
        return self.n_single + self.n_family

    def certificates(self) -> tuple[Any, ...]:
        return (DescriptionLength(self.n_single + 1), DescriptionLength(self.n_family))  # the larger path

    def _choose(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(p-value of the chosen hypothesis, whether step 1 chose a singleton) per row of z."""
        p = _two_sided_z(z)
        single = p[:, : self.n_single].min(axis=1)
        family = p[:, self.n_single:].min(axis=1)
        took_single = single <= _ALPHA_RULE / (self.n_single + 1)
        return np.where(took_single, single, family), took_single

    def _chosen(self, z: np.ndarray, took_single: np.ndarray) -> np.ndarray:
        """The index of the hypothesis chosen in each row of z, given step 1's choice."""
        p = _two_sided_z(z)
        return np.where(took_single, p[:, : self.n_single].argmin(axis=1),
                        self.n_single + p[:, self.n_single:].argmin(axis=1))

    def _package_columns(self, p: np.ndarray, took_single: np.ndarray) -> dict[str, np.ndarray]:
        """The package's adaptive corrections, path by path (two paths: two ledgers)."""
        out = {k: np.full(p.shape, np.nan) for k in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni",
                                                     "pvalue_best", "pvalue_min_unmerged")}
        for mask, second in ((took_single, 1), (~took_single, self.n_family)):
            if not mask.any():
                continue
            led = Ledger(self.n_rows)
            led.record(DescriptionLength(self.n_single + 1))
            led.record(DescriptionLength(second))
            c = correct(p[mask], led.totals(), alpha=_ALPHA_RULE, n_candidates=self.n_candidates, adaptive=True)
            for k in ("pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best"):
                out[k][mask] = getattr(c, k)
            out["pvalue_min_unmerged"][mask] = np.fmin(c.pvalue_maxinfo, c.pvalue_bonferroni)
        return out

    def replicate_many(self, rngs):
        m = self.n_single + self.n_family
        z1 = np.stack([g.standard_normal(m) for g in rngs])
        z2 = np.stack([g.standard_normal(m) for g in rngs])
        k = len(self.effects)
        if k:
            z1[:, :k] += np.asarray(self.effects) / math.sqrt(2.0)
            z2[:, :k] += np.asarray(self.effects) / math.sqrt(2.0)
        z = (z1 + z2) / math.sqrt(2.0)
        p, took = self._choose(z)
        cols = {"pvalue_naive": p, **self._package_columns(p, took)}
        # data splitting: the same rule on the first half, the test on the second half
        _, took_s = self._choose(z1)
        j = self._chosen(z1, took_s)
        cols["pvalue_split"] = _two_sided_z(z2[np.arange(len(rngs)), j])
        r = len(rngs)
        if not k:
            return Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in self.columns}, np.ones((r, 1), dtype=bool))
        return _outcomes(self.columns, cols, self._chosen(z, took) >= k, j >= k, _two_sided_z(z[:, 0]))


@dataclass(frozen=True, slots=True, kw_only=True)
class RepeatedMeasures(Scenario):
    r"""Rows nested in subjects: noisy top-1 at epsilon = 1/sqrt(rows), then a subject-level test.

    ``n_subjects`` (20) subjects with ``rows_per_subject`` (500) rows each and ``n_features`` null features
    :math:`x_{srj} = u_{sj} + e_{srj}` (subject effects :math:`u \sim N(0, \tau^2)`, row noise
    N(0, 1)). Step 1: report noisy max (Gumbel noise, the exponential mechanism) of the
    absolute mean of the rows clipped to [-c, c], replace-one-row sensitivity :math:`2c/N_{rows}`, at
    :math:`\varepsilon = 1/\sqrt{N_{rows}}`: ``PureDP(epsilon)`` in rows. The chosen feature is
    tested by a one-sample t-test on its subject means (exact: the subjects are independent).
    The package is told the unit (``Analysis(units="subject")``): n = subjects and the step
    pays for group privacy, ``PureDP(rows_per_subject * epsilon)``. ``pvalue_maxinfo_rows``
    counts the rows as independent records instead: a diagnostic, not valid.

    Signal variant: with ``effects``, the effect is at the level of the unit: the subject effects
    of feature j < ``len(effects)`` are :math:`u_{sj} \sim N(\mu_j, \tau^2)`, :math:`\mu_j` =
    ``effects[j]`` (so every row of feature j has mean :math:`\mu_j`), and ``pvalue_oracle``
    t-tests the subject means of feature 0 without selection.

    Truth: with ``effects=()`` (the default) global null (every feature has mean 0). Otherwise
    feature j's hypothesis (mean 0) is null iff j >= ``len(effects)``, exactly: the subject means
    of a null feature are i.i.d. :math:`N(0, \tau^2 + 1/R)`, independent of the other features;
    each column carries the label of the feature it tested (data splitting: its own choice).
    """

    name: str = "repeated_measures"
    n_subjects: int = 20
    rows_per_subject: int = 500
    n_features: int = 50
    tau: float = 1.0
    clip: float = 1.0
    effects: tuple[float, ...] = ()
    description: ClassVar[str] = "rows nested in subjects: DP selection on rows, subject-level test"
    chunk_size: ClassVar[int] = 50
    invalid_columns: ClassVar[dict[str, str]] = {
        "pvalue_maxinfo_rows": "rows counted as independent records (THEORY.md 0.4)"}
    column_labels: ClassVar[dict[str, str]] = ORACLE_LABELS

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_subjects", self.n_subjects, low=4)
        check_int("rows_per_subject", self.rows_per_subject, low=1)
        check_int("n_features", self.n_features, low=2)
        check_positive("tau", self.tau)
        check_positive("clip", self.clip)
        object.__setattr__(self, "effects", check_effects("effects", self.effects, limit=self.n_features,
                                                          what="n_features"))

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_maxinfo_rows",) + (("pvalue_oracle",) if self.effects else ())

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return (f"Global null: all {self.n_features} features have mean 0 ({self.n_subjects} independent "
                    "subjects).")
        return (f"Features 0..{k - 1} have subject-level means {self.effects}; the other {self.n_features - k} "
                f"have mean 0 ({self.n_subjects} independent subjects).")

    @property
    def n_rows(self) -> int:
        return self.n_subjects  # the independent units

    @property
    def n_candidates(self) -> int:
        return self.n_features

    @property
    def epsilon(self) -> float:
        return 1.0 / math.sqrt(self.n_subjects * self.rows_per_subject)

    def certificates(self) -> tuple[Any, ...]:
        return (PureDP(self.epsilon * self.rows_per_subject),)  # group privacy over one subject

    def _select(self, x: np.ndarray, g: np.random.Generator) -> int:
        """Report noisy max of the absolute mean of the clipped rows over x (subjects, rows, features)."""
        n = x.shape[0] * x.shape[1]
        score = np.abs(np.clip(x, -self.clip, self.clip).mean(axis=(0, 1)))
        scale = 2.0 * (2.0 * self.clip / n) / self.epsilon
        return int(np.argmax(score + g.gumbel(scale=scale, size=score.shape)))

    @staticmethod
    def _t_pvalue(subject_means: np.ndarray) -> float:
        k = len(subject_means)
        t = subject_means.mean() / (subject_means.std(ddof=1) / math.sqrt(k))
        return float(2.0 * stats.t.sf(abs(t), k - 1))

    def replicate_many(self, rngs):
        r, k = len(rngs), len(self.effects)
        p, ps, po = np.full(r, np.nan), np.full(r, np.nan), np.full(r, np.nan)
        j, js = np.zeros(r, dtype=int), np.zeros(r, dtype=int)
        half = self.n_subjects // 2
        for i, g in enumerate(rngs):
            u = self.tau * g.standard_normal((self.n_subjects, 1, self.n_features))
            if k:
                u[:, :, :k] += np.asarray(self.effects)
            x = u + g.standard_normal((self.n_subjects, self.rows_per_subject, self.n_features))
            j[i] = self._select(x, g)
            p[i] = self._t_pvalue(x[:, :, j[i]].mean(axis=1))
            js[i] = self._select(x[:half], g)
            ps[i] = self._t_pvalue(x[half:, :, js[i]].mean(axis=1))
            if k:
                po[i] = self._t_pvalue(x[:, :, 0].mean(axis=1))
        cols = {"pvalue_naive": p, "pvalue_split": ps,
                **_corrected(p, self.certificates(), self.n_rows, self.n_candidates)}
        cols["pvalue_maxinfo_rows"] = _corrected(p, (PureDP(self.epsilon),), self.n_subjects * self.rows_per_subject,
                                                 self.n_candidates)["pvalue_maxinfo"]
        if not k:
            return Outcomes.from_shared({c: cols[c].reshape(r, 1) for c in self.columns}, np.ones((r, 1), dtype=bool))
        return _outcomes(self.columns, cols, j >= k, js >= k, po)


@dataclass(frozen=True, slots=True, kw_only=True)
class NoisyTopKTheorem20(Scenario):
    r"""Report noisy max where Theorem 20 binds: :math:`\varepsilon\sqrt n` = ``eps_sqrt_n``.

    ``n_obs`` rows of ``n_features`` independent N(0, 1) null features. Step 1: report noisy max
    (Gumbel noise) of the absolute mean of the rows clipped to [-c, c] (sensitivity :math:`2c/n`) at
    :math:`\varepsilon = ` ``eps_sqrt_n`` :math:`/\sqrt n`, ``PureDP(epsilon)``. The chosen
    feature's mean is z-tested (known variance: exact). The max-information column uses the
    product bound of Theorem 20 for this first DP block.

    ``pvalue_randomized``: the selection conditioned on with its Gumbel noise law instead of paid
    for (:func:`selective.conditional.randomized_inference`, ``NoisyTopKEvent`` of the mechanism's
    scale, the scores the clipped means with their estimated variances, ``absolute=True``): the
    p-value for the chosen feature's clipped mean, asymptotic (normal clipped means), with the
    report's trust rule (:func:`~selective.validation.scenarios.base.as_reported`: withheld where
    the test relies on the normal tail below the one-sample z-test's trusted level). It tests the
    clipped mean, whose null value is 0 exactly when the feature's mean is 0 (symmetric features).

    Signal variant: with ``effects``, feature j < ``len(effects)`` has mean ``effects[j]`` (unit
    variance), and ``pvalue_oracle`` z-tests feature 0 on all rows without selection.

    Truth: with ``effects=()`` (the default) global null. Otherwise feature j's hypothesis (mean
    0) is null iff j >= ``len(effects)``, exactly: the features are independent N(0, 1) apart from
    the shifts, and each column carries the label of the feature it tested (data splitting: its
    own choice).
    """

    name: str = "noisy_topk_thm20"
    n_obs: int = 400
    n_features: int = 100
    eps_sqrt_n: float = 1.0
    clip: float = 3.0
    effects: tuple[float, ...] = ()
    naive_is_biased: ClassVar[bool] = False  # at epsilon sqrt(n) <= 2 the noise hides most of the choice
    column_labels: ClassVar[dict[str, str]] = {
        **ORACLE_LABELS, "pvalue_randomized": "conditional on the noisy selection (randomized, clipped mean)"}

    def __post_init__(self) -> None:
        Scenario.__post_init__(self)
        check_int("n_obs", self.n_obs, low=4)
        check_int("n_features", self.n_features, low=2)
        check_positive("eps_sqrt_n", self.eps_sqrt_n)
        check_positive("clip", self.clip)
        object.__setattr__(self, "effects", check_effects("effects", self.effects, limit=self.n_features,
                                                          what="n_features"))

    @property
    def columns(self) -> tuple[str, ...]:
        return _STANDARD + ("pvalue_randomized",) + (("pvalue_oracle",) if self.effects else ())

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"report noisy max at epsilon * sqrt(n) = {self.eps_sqrt_n:g} (Theorem 20 binds)"

    @property
    def truth(self) -> str:
        k = len(self.effects)
        if k == 0:
            return f"Global null: all {self.n_features} features have mean 0."
        return f"Features 0..{k - 1} have means {self.effects}; the other {self.n_features - k} have mean 0."

    @property
    def n_rows(self) -> int:
        return self.n_obs

    @property
    def n_candidates(self) -> int:
        return self.n_features

    @property
    def epsilon(self) -> float:
        return self.eps_sqrt_n / math.sqrt(self.n_obs)

    def certificates(self) -> tuple[Any, ...]:
        return (PureDP(self.epsilon),)

    def _scale(self, n: int, eps: float) -> float:
        return 2.0 * (2.0 * self.clip / n) / eps

    def _select(self, x: np.ndarray, g: np.random.Generator, eps: float) -> int:
        score = np.abs(np.clip(x, -self.clip, self.clip).mean(axis=0))
        return int(np.argmax(score + g.gumbel(scale=self._scale(x.shape[0], eps), size=score.shape)))

    def _randomized(self, x: np.ndarray, j: int) -> float:
        """The conditional p-value of the chosen feature's clipped mean given the noisy choice."""
        from ...conditional import NoisyTopKEvent, randomized_inference
        from ...hypotheses._trust_model import studentised_mean_trusted_level

        xc = np.clip(x, -self.clip, self.clip)
        cov = np.diag(xc.var(axis=0, ddof=1) / x.shape[0])
        event = NoisyTopKEvent((j,), "gumbel", self._scale(x.shape[0], self.epsilon))
        res = randomized_inference(xc.mean(axis=0), cov, event, targets=[j], absolute=True, intervals=False)
        return as_reported(res, float(studentised_mean_trusted_level(xc[:, j], "two-sided", reference="normal")))

    def replicate_many(self, rngs):
        r, m = len(rngs), len(self.effects)
        p, ps, po, pr = (np.full(r, np.nan) for _ in range(4))
        j, js = np.zeros(r, dtype=int), np.zeros(r, dtype=int)
        k = int(round(self.split_fraction * self.n_obs))
        for i, g in enumerate(rngs):
            x = g.standard_normal((self.n_obs, self.n_features))
            if m:
                x[:, :m] += np.asarray(self.effects)
                po[i] = float(_two_sided_z(x[:, 0].mean() * math.sqrt(self.n_obs)))
            j[i] = self._select(x, g, self.epsilon)
            p[i] = float(_two_sided_z(x[:, j[i]].mean() * math.sqrt(self.n_obs)))
            js[i] = self._select(x[:k], g, self.epsilon)
            ps[i] = float(_two_sided_z(x[k:, js[i]].mean() * math.sqrt(self.n_obs - k)))
            pr[i] = self._randomized(x, int(j[i]))
        if not m:
            return self._finish(p, np.ones(r, dtype=bool), {"pvalue_split": ps, "pvalue_randomized": pr})
        cols = {"pvalue_naive": p, **_corrected(p, self.certificates(), self.n_rows, self.n_candidates),
                "pvalue_split": ps, "pvalue_randomized": pr}
        return _outcomes(self.columns, cols, j >= m, js >= m, po)
