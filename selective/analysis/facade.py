"""The ``Analysis`` facade: one dataset, its ledger, the selections and the tests (the README's
"In your own analysis" shows its use)."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_probability
from ..accounting.certificates import Certificate, DescriptionLength
from ..accounting.composition import group_privacy
from ..accounting.ledger import Ledger, compute_totals
from ..corrections import correct
from ..exceptions import SelectiveWarning
from ..selectors.base import NonFiniteScoreError, Selection, declared_certificate, declared_columns, missing_columns
from . import _setup
from ._on_dask import DaskScored
from ._setup import budget_kwargs, check_unchanged, child_seed, frame_digest, units_of
from .conditional_rows import conditional_cells, link_winners
from .fission_mode import fission_cells, split_frames
from .report import CorrectedTable
from .rows import ADJUST_METHODS, build_table, void_totals
from .sources import (
    DEFAULT_MAX_COLLECT_BYTES,
    collect_columns,
    count_rows,
    estimate_bytes,
    is_dask_frame,
    open_data,
    spec_columns,
)
from .trust import results_at_level

__all__ = ["Analysis"]

class Analysis:
    """Explore, select and test on one dataset, with every selection step on the ledger.

    Parameters
    ----------
    data : pandas.DataFrame, dask.dataframe.DataFrame, or path
        The dataset (n rows). Every selection must go through :meth:`select`: exploration
        outside the selectors is not covered by the ledger and voids the corrections. A Dask
        DataFrame, or a Parquet / CSV path (read lazily with Dask,
        :func:`~selective.analysis.sources.open_data`), is never loaded whole: see the notes.
    alpha : float, default 0.05
        Level for corrected intervals and the footnote.
    rng : numpy.random.Generator or int, optional
        Source of randomness for DP selectors; a seed makes the analysis reproducible.
    n_candidates : int, optional
        Number of hypotheses that could have been tested, declared before looking at the data.
        Enables the Bonferroni column (valid whatever the selection, if the declaration is honest).
        A step choosing among more candidates is refused before it reads the data; more distinct
        hypotheses tested than declared withhold the column (the footnote says why).
    budget_bits, budget_beta, budget_epsilon : optional
        Passed to the :class:`~selective.accounting.Ledger`.
    units : column label, optional
        The column that names the independent unit of each row (a subject with repeated
        measures, a household, a site). Then n is the number of units, and every DP step pays
        for group privacy: epsilon times the largest number of rows of one unit
        (:func:`~selective.accounting.group_privacy`). Default: every row is its own unit.
    max_collect_bytes : int, default 2**30
        Dask data only: the most memory (bytes, estimated from the dtypes) that the columns
        collected for the confirmatory tests may take; a test beyond it raises
        :class:`~selective.analysis.sources.CollectTooLargeError` naming the size.

    Notes
    -----
    On Dask data (computed with the current scheduler, e.g. a ``dask.distributed.Client``):

    * :meth:`select` runs :class:`~selective.selectors.TopK`, :class:`~selective.selectors.NoisyTopK`,
      :class:`~selective.selectors.OrderedTopK` and :class:`~selective.selectors.SparseVectorScreen`.
      Their score is called with the Dask frame and reduced on the cluster (the score objects of
      :mod:`selective.selectors` do this from streaming statistics; a function that returns a
      lazy Dask Series is computed); the selection itself, and any noise, is drawn on this
      machine from ``rng`` by the exact samplers. With the grid scores
      (:class:`~selective.selectors.ClippedMeanScores`, ...) the scores, hence the selections, the
      ledger and the table, are the same to the last bit as on the pandas frame of the same rows.
    * :meth:`test` collects only the columns the test names (at most ``max_collect_bytes``) and
      runs it on them in memory.

    What the corrections assume (docs/THEORY.md 0.4, 1.6, 2.7, 3.2a, 3.6):

    * every look at the data goes through :meth:`select` or :meth:`record` before the tests
      are run;
    * the units (rows, or the groups named by ``units``) are independent, as under the null;
      the report says so on every row whose bound uses it;
    * each naive p-value is accurate at the corrected level it is compared with;
    * the certificates bound every history.

    Steps may be chosen adaptively: whether to run another step, and its count or epsilon,
    may depend on earlier outputs. Unless the steps were declared in advance, the report
    therefore uses only what stays valid under adaptivity (the union route with the realized
    counts and Theorem 19 for DP steps, and the declared Bonferroni) and pays for combining
    them: the best column is R times the smaller of the R = 1 or 2 routes (Vovk and Wang 2020;
    docs/THEORY.md 3.2a). Declare the steps with :meth:`preregister` (a plan file does) to keep
    every route (Theorem 20, the composition and mutual-information routes) and their plain
    minimum; the corrections then use the declared certificates, and a step that does not
    match them is refused before it touches the data.
    """

    def __init__(self, data: pd.DataFrame, *, alpha: float = 0.05, rng: Any = None, n_candidates: int | None = None,
                 budget_bits: float | None = None, budget_beta: float | None = None,
                 budget_epsilon: float | None = None, units: Any = None,
                 max_collect_bytes: int = DEFAULT_MAX_COLLECT_BYTES) -> None:
        data = open_data(data)
        self._dask = is_dask_frame(data)
        self.max_collect_bytes = check_int("max_collect_bytes", max_collect_bytes, low=0)
        self._n_rows = count_rows(data)
        if self._n_rows == 0:
            raise ValueError("`data` must have at least one row; got an empty DataFrame.")
        if data.columns.has_duplicates:
            dup = list(dict.fromkeys(data.columns[data.columns.duplicated()]))
            raise ValueError(f"`data` has more than one column labelled {dup[:5]!r}; column labels must be unique "
                             "(a selector reading such a column would get several).")
        self._data, self._digest = data, frame_digest(data)  # in-place edits are refused (check_unchanged)
        self._collected: pd.DataFrame | None = None  # Dask data: the columns collected for the tests
        self.alpha = check_probability("alpha", alpha, closed="neither")
        self.n_candidates = None if n_candidates is None else check_int("n_candidates", n_candidates, low=1)
        if isinstance(rng, np.random.Generator):
            self._rng, self.seed = rng, None
        elif rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0):
            self.seed = None if rng is None else int(rng)
            self._rng = np.random.default_rng(rng)
        else:
            raise TypeError(f"`rng` must be a numpy Generator, a non-negative integer seed or None; got {rng!r}.")
        self.units, self.n_units, self.group_size = units_of(data, units, self._n_rows)
        self.ledger = Ledger(self.n_units, budget_bits=budget_bits, budget_beta=budget_beta,
                             budget_epsilon=budget_epsilon)
        self._preregistered: tuple | None = None
        # tests' resampling has its own stream: report() is the same at every call, selectors unaffected
        self._test_seed = child_seed(self._rng)
        self._trust_cache: dict = {}
        self._selections: list[Selection] = []
        self._selectors: list[Any] = []  # the selector of each selection (None for record())
        self._tests: list[tuple[Any, Any]] = []
        self._links: list[Any] = []  # per test: its WinnersLink (conditional columns) or None
        self._void: list[str] = []  # steps that touched the data but could not be recorded
        self._split: dict = {}  # fission: column -> FissionRecord
        self._explore: pd.DataFrame | None = None  # fission: what the selectors see
        self._confirm: pd.DataFrame | None = None  # fission: what the tests see
        self._step_columns: list[set | None] = []  # the columns each step that touched the data declared

    @property
    def data(self) -> Any:
        """The data: a pandas DataFrame, or a (lazy) Dask DataFrame."""
        return self._data

    @property
    def n_rows(self) -> int:
        return self._n_rows

    @property
    def is_dask(self) -> bool:
        """Whether the data are a Dask DataFrame (reduced partition by partition)."""
        return self._dask

    @property
    def selections(self) -> tuple[Selection, ...]:
        return tuple(self._selections)

    @property
    def results(self) -> tuple[Any, ...]:
        return tuple(r for _, r in self._tests)

    @property
    def adaptive(self) -> bool:
        """Whether the steps may have been chosen adaptively: some step ran, and the steps were not
        declared in advance with :meth:`preregister` (THEORY.md 3.2a); with no step, every route is
        fixed before the data are read."""
        return self._preregistered is None and bool(len(self.ledger) or self._void)

    @property
    def preregistered(self) -> tuple | None:
        """The certificates declared with :meth:`preregister` (with respect to units), or None."""
        return self._preregistered

    def _check_preregistered(self, certificate) -> None:
        """Refuse, before the data are touched, a step that does not match the declaration."""
        if self._preregistered is None:
            return
        k = len(self.ledger)
        if k >= len(self._preregistered):
            raise ValueError(f"{len(self._preregistered)} step(s) were preregistered and all have run; a further "
                             f"step ({certificate.describe()}) is not covered. Nothing was recorded.")
        if certificate != self._preregistered[k]:
            raise ValueError(f"step {k} was preregistered as {self._preregistered[k].describe()}; got "
                             f"{certificate.describe()}. Nothing was recorded.")

    def preregister(self, *steps: Any) -> Analysis:
        """Declare every selection step before any is run, fixing the routes' thresholds.

        ``steps`` are selectors (with a ``certificate()`` method) or certificates, in the
        order they will run. When the steps recorded are exactly these, the report keeps every
        correction route and their plain minimum (THEORY.md 3.2); otherwise the analysis is
        treated as adaptive. Checked against the ledger's order rules and budget now; the data
        are not touched.
        """
        if self._preregistered is not None or len(self.ledger) or self._void:
            raise ValueError("`preregister` must be called once, before any selection step.")
        if not steps:
            raise ValueError("`preregister` needs at least one step (a selector or a certificate); got none.")
        certs = []
        for i, step in enumerate(steps):
            _setup.check_declared_candidates(self.n_candidates, step, f"`steps[{i}]`")
            cert = declared_certificate(step) if hasattr(step, "select") else step
            if cert is None:
                raise TypeError(f"`steps[{i}]` declares no certificate; give selectors with a certificate() method "
                                "or certificates.")
            certs.append(self._unit_certificate(cert))
        scratch = Ledger(self.n_units, **budget_kwargs(self.ledger))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SelectiveWarning)
            for cert in certs:
                scratch.record(cert)
        self._preregistered = tuple(certs)
        return self

    def _unit_certificate(self, certificate):
        """The certificate with respect to units: group privacy over the largest unit."""
        try:
            return group_privacy(certificate, self.group_size)
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"{certificate.describe()} cannot be stated for units of up to {self.group_size} rows "
                             f"(group privacy, `units` = {self.units!r}): {exc}") from None

    @property
    def void_reasons(self) -> tuple[str, ...]:
        """Why the information-based corrections of this analysis are void (empty if they are not):
        a step that had already looked at the data was refused by the ledger."""
        return tuple(self._void)

    def _record_after_look(self, certificate, label: str) -> None:
        """Record a step whose mechanism already ran on the data; if the ledger refuses it (or
        anything else stops the recording), the look is not covered by any bound, so the
        information-based corrections become void. So do they when the step differs from the
        preregistered one (a failure recorded as one more outcome): the declared certificates no
        longer bound what was looked at."""
        k = len(self.ledger)
        if self._preregistered is not None and (k >= len(self._preregistered) or certificate != self._preregistered[k]):
            self._void.append(f"step {label!r} ran on the data but differs from the preregistered step {k}")
        try:
            self.ledger.record(certificate, label)
        except BaseException as exc:
            if len(self.ledger) == k:
                self._void.append(f"step {label!r} ran on the data but was refused by the ledger ({exc})")
            raise

    def _charge_failure(self, declared, name: str, exc: BaseException) -> None:
        """Account for a step that read the data and then failed; never raises (the caller
        re-raises ``exc``).

        A description-length step is recorded with its N outcomes plus the failure outcomes: one,
        or, for a :class:`~selective.selectors.base.NonFiniteScoreError`, one per form its message
        can take. Any other declared certificate is recorded as declared (it keeps the order
        rules and the budget), and the information-based corrections become void: a DP or
        information guarantee covers the released output, not a failure that depends on the
        data. An interrupt (``KeyboardInterrupt``) is user-initiated, so it does not void them. A
        step that declared nothing voids them.
        """
        if declared is None:
            self._void.append(f"{name} read the data and then stopped ({type(exc).__name__}); it declared no "
                              "certificate")
            return
        label = f"{name} (failed: {type(exc).__name__})"
        if isinstance(declared, DescriptionLength):
            extra = max(1, exc.n_messages) if isinstance(exc, NonFiniteScoreError) else 1
            cert = DescriptionLength(declared.n_outcomes + extra)
        else:
            cert = declared
            if not isinstance(exc, KeyboardInterrupt):
                self._void.append(f"{name} failed after reading the data ({type(exc).__name__}); its "
                                  f"{declared.describe()} does not cover a data-dependent failure")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SelectiveWarning)
                self._record_after_look(cert, label)
        except Exception:  # noqa: BLE001 - refused: already void; the original error is what the caller raises
            pass

    def _warn_if_tests_seen(self) -> None:
        if self._tests:
            warnings.warn(
                "a selection step after tests have been run: the naive results already seen are not on "
                "the ledger, so choices informed by them are not accounted for. Select first, then test.",
                SelectiveWarning,
                stacklevel=3,
            )

    def fission(self, column: Any, *, method: str, sigma: Any = None, tau: float = 1.0, epsilon: float = 0.5,
                trials: Any = None):
        """Split each outcome ``column`` (label or list) in two independent parts, one for the selectors,
        one for the tests; the report adds ``pvalue_fission`` (:mod:`~.fission_mode`). ``method="gaussian"``
        needs ``sigma``, the *known* noise standard deviation, and uses ``tau``; ``"poisson"`` (counts) and
        ``"binomial"`` (counts of successes, with ``trials`` naming the column of numbers of trials, at least
        2, split with them) use ``epsilon``. Call it before any step, once per column, on an in-memory
        frame of independent rows (no ``units``); it draws from ``rng``."""
        why = ("the data are a Dask frame" if self._dask else
               f"`units` is set ({self.units!r})" if self.units is not None else
               f"{len(self._tests)} test(s) already ran" if self._tests else
               "a selection step already ran" if len(self.ledger) or self._void else "")
        if why:
            raise ValueError(f"`fission` needs an in-memory frame of independent rows (no `units`), before any "
                             f"selection step or test; here {why}: call it first.")
        self._explore, self._confirm, records = split_frames(
            self._data, self._explore, self._confirm, self._split, column, method=method, sigma=sigma, tau=tau,
            epsilon=epsilon, rng=self._rng, trials=trials)
        self._split.update(records)
        return self

    def _test_rows(self) -> pd.DataFrame:
        return self._data if self._confirm is None else self._confirm

    def select(self, selector: Any, *, label: str | None = None) -> Selection:
        """Run ``selector`` on the data and record its certificate on the ledger.

        Everything that can be checked without the data is checked first, and a refusal then
        leaves the analysis unchanged (the ledger is byte-identical): the arguments (``label``
        must be a string or None), the selector's declared certificate
        (``selector.certificate()``) against the preregistered steps and the ledger's order rules
        and budget, and the columns the selector declares it reads
        (``selector.required_columns()``) against the columns of the data.

        Once the data have been touched the step is always accounted for, whatever happens
        (``KeyboardInterrupt`` and ``SystemExit`` included; the exception is then raised again):

        * success: the selection's certificate is recorded (it must equal the declared one; if
          it does not, the declared one is recorded and a ValueError raised);
        * the selector fails, or returns something that is not a valid :class:`Selection`: a
          description-length step is recorded with one more outcome (the failure; one per form
          of the message for a :class:`~selective.selectors.base.NonFiniteScoreError`); any other
          declared certificate is recorded as declared and the information-based corrections
          become void (:attr:`void_reasons`), except after a ``KeyboardInterrupt``;
        * the ledger refuses the step: the corrections become void.

        The failure is counted as an event; what an exception's message says (from user code in
        particular) is not covered. A selector that declares nothing is run with a
        :class:`SelectiveWarning`: its certificate is then read from its output, valid only if it
        does not depend on the data, and a failure voids the corrections.

        Raises
        ------
        TypeError
            ``selector`` has no ``select`` method, ``label`` is not a string, or the selection
            returned is not a :class:`Selection`.
        ValueError
            A declared column is missing from the data, the step does not match the preregistered
            one, or the selection's certificate differs from the declared one.
        CompositionOrderError, BudgetExceededError
            The ledger refuses the step (before the data are touched when it is declared).
        """
        if not callable(getattr(selector, "select", None)):
            raise TypeError(f"`selector` must have a select(data, rng) method; got {selector!r}.")
        if label is not None and not isinstance(label, str):
            raise TypeError(f"`label` must be a string or None; got {label!r} ({type(label).__name__}).")
        _setup.check_declared_candidates(self.n_candidates, selector, "`selector`")
        declared_rows = declared_certificate(selector)
        if declared_rows is not None and not isinstance(declared_rows, Certificate):
            raise TypeError(f"`{type(selector).__name__}.certificate()` must return a certificate (PureDP, ApproxDP, "
                            f"ZCDP, DescriptionLength, MaxInfo, MutualInfo); got {declared_rows!r}.")
        declared = None if declared_rows is None else self._unit_certificate(declared_rows)
        check_unchanged(self._data, self._digest, "select")
        problem = missing_columns(self._data, declared_columns(selector))
        if problem:
            raise ValueError(f"{problem} Nothing was recorded: the data were not touched.")
        name = label if label is not None else type(selector).__name__
        runner = DaskScored(selector) if self._dask else selector  # refuses other selectors: data untouched
        self._warn_if_tests_seen()
        if declared is not None:
            self._check_preregistered(declared)
            self.ledger.check(declared)
        elif self._preregistered is not None:
            raise TypeError(f"{type(selector).__name__} declares no certificate, so it cannot be matched with the "
                            "preregistered steps; give it declared candidates.")
        else:
            warnings.warn(
                f"{type(selector).__name__} declares no certificate before seeing the data; the one it "
                "returns is recorded, which is valid only if it does not depend on the data (declare "
                "the candidates so that the certificate is fixed in advance).",
                SelectiveWarning,
                stacklevel=2,
            )
        accounted = False  # set once the look is on the ledger or has voided the corrections
        self._step_columns.append({c for cols in declared_columns(selector).values() for c in cols} or None)
        try:
            sel = runner.select(self._data if self._explore is None else self._explore, self._rng)
            if not isinstance(sel, Selection):
                raise TypeError(f"`{type(selector).__name__}.select` must return a Selection; got "
                                f"{type(sel).__name__}.")
            if not isinstance(sel.certificate, Certificate) or not isinstance(sel.label, str):
                raise TypeError(f"`{type(selector).__name__}.select` returned a Selection whose certificate is not a "
                                f"certificate or whose label is not a string (got {type(sel.certificate).__name__} "
                                f"and {type(sel.label).__name__}).")
            if declared_rows is not None and sel.certificate != declared_rows:
                accounted = True
                self._record_after_look(declared, f"{name} (inconsistent certificate)")
                raise ValueError(
                    f"{type(selector).__name__} declared {declared_rows.describe()} but its selection carries "
                    f"{sel.certificate.describe()}; the declared certificate was recorded and the selection discarded."
                )
            cert = declared if declared is not None else self._unit_certificate(sel.certificate)
            accounted = True
            self._record_after_look(cert, label if label is not None else sel.label)
        except BaseException as exc:
            if not accounted:
                self._charge_failure(declared, name, exc)
            raise
        self._selections.append(sel)
        self._selectors.append(selector)
        return sel

    def record(self, selection: Selection) -> Selection:
        """Record a selection made through an interactive mechanism (e.g. the queries answered by
        a :class:`~selective.selectors.Thresholdout` on this analysis' data), with its
        certificate.

        The mechanism has already looked at the data, so a step that cannot be recorded is never
        dropped silently: if ``selection`` is not a valid :class:`Selection` (its certificate not
        a certificate, its label not a string), does not match the preregistered steps, or is
        refused by the ledger (order rule, budget), the error is raised *and* the analysis'
        information-based corrections become void (:attr:`void_reasons`; only a declared
        Bonferroni stays). The ledger itself is left unchanged by every refusal."""
        self._step_columns.append(None)  # an interactive mechanism: the columns it read are not declared
        try:
            self._warn_if_tests_seen()
        except BaseException:  # a warning turned into an error must not drop the look
            self._void.append("record() was stopped before the step could be recorded")
            raise
        if not isinstance(selection, Selection):
            self._void.append(f"record() got a {type(selection).__name__}, not a Selection: the look it stands for "
                              "could not be recorded")
            raise TypeError(f"`selection` must be a Selection; got {type(selection).__name__}. The analysis' "
                            "information-based corrections are now void.")
        if not isinstance(selection.certificate, Certificate) or not isinstance(selection.label, str):
            self._void.append("record() got a Selection whose certificate or label is invalid: the look it stands for "
                              "could not be recorded")
            raise TypeError("`selection.certificate` must be a certificate and `selection.label` a string; got "
                            f"{type(selection.certificate).__name__} and {selection.label!r}. The analysis' "
                            "information-based corrections are now void.")
        try:
            cert = self._unit_certificate(selection.certificate)
            self._check_preregistered(cert)
        except BaseException as exc:
            self._void.append(f"step {selection.label!r} ran on the data but does not match the preregistered "
                              f"steps ({exc})")
            raise
        self._record_after_look(cert, selection.label)
        self._selections.append(selection)
        self._selectors.append(None)
        return selection

    def test(self, spec: Any, *, conditional_on: Selection | None = None) -> Any:
        """Run a confirmatory test spec (see :mod:`selective.hypotheses`) on the data.

        Parameters
        ----------
        spec : test spec
        conditional_on : Selection, optional
            A TopK, NoisyTopK or SparseVectorScreen selection of this analysis that chose the
            column ``spec`` tests: the report adds the p-value and interval conditional on it
            (winners, THEORY.md 3.9; DP screens with their noise law, 3.12), shown when the
            screen is the only step and its normal tails are trusted (``conditional_rows``). After
            a randomized lasso / stepwise step: carving (3.13, ``carving_rows``).

        On Dask data only the columns the spec names
        (:func:`~selective.analysis.sources.spec_columns`) are collected, once, within
        ``max_collect_bytes``; the test runs on them in memory, as on a pandas frame.

        Raises TypeError or ValueError, with the reason, when ``spec`` is not a test spec or
        does not test one of the winners of ``conditional_on``.
        """
        if not hasattr(spec, "run"):
            raise TypeError(f"`spec` must be a test spec with a run(data) method; got {spec!r}.")
        link = None if conditional_on is None else link_winners(spec, conditional_on, self._selections,
                                                                 self._selectors)
        if link is not None and self._split:
            raise ValueError("`conditional_on` is not for an analysis with fission: its tests already use the "
                             "confirmation copy, which the selection did not see.")
        result = spec.run(self._rows_for(spec) if self._dask else self._test_rows())
        self._tests.append((spec, result))
        self._links.append(link)
        return result

    def report(self, *, alpha: float | None = None, adjust: str | None = None) -> CorrectedTable:
        """The corrected table: one row per test, naive and corrected p-values and intervals.

        Parameters
        ----------
        alpha : float, optional
            Level of the corrected intervals (default: the analysis' ``alpha``).
        adjust : {"holm", "bonferroni", "fdr_bh", "fdr_by"}, optional
            Multiple-testing adjustment across the tested family, applied to the best valid
            corrected p-values (statsmodels ``multipletests``). Holm and Bonferroni control the
            family-wise error under any dependence; "fdr_bh" assumes positive dependence,
            "fdr_by" does not.
        """
        a = self.alpha if alpha is None else check_probability("alpha", alpha, closed="neither")
        if adjust is not None:
            check_choice("adjust", adjust, ADJUST_METHODS)
        check_unchanged(self._data, self._digest, "report")
        if not self._tests:
            raise ValueError("no test has been run: call Analysis.test(spec) before report().")
        totals = self.ledger.totals()
        if self._preregistered is not None:
            # thresholds from the declared steps: fixed before the data were seen (THEORY.md 3.2a);
            # steps not run are post-processing of the declared procedure, so this is valid
            totals = compute_totals(self.n_units, self._preregistered)
        if self._void:
            totals = void_totals(totals, self._void)
        naive = [r for _, r in self._tests]
        n_cand, why_not = _setup.bonferroni_family(self.n_candidates, [r.hypothesis for r in naive])
        corr = correct(np.array([r.pvalue_naive for r in naive], dtype=float), totals, alpha=a,
                       n_candidates=n_cand, adaptive=self.adaptive)
        # naive p-values accurate where the best column compares them (THEORY.md pitfall 9); a
        # column with a smaller threshold is withheld for a row whose p-value is not trusted there
        level = corr.gamma_best.gamma if corr.gamma_best is not None else 0.0
        rows = self._collected if self._dask else self._test_rows()
        trust = results_at_level(self._tests, rows, level, seed=self._test_seed, cache=self._trust_cache)
        results = [t.result for t in trust]
        if any(t.replaced for t in trust):
            corr = correct(np.array([r.pvalue_naive for r in results], dtype=float), totals, alpha=a,
                           n_candidates=n_cand, adaptive=self.adaptive)
        fission = None if not self._split else fission_cells(
            self._tests, list(self._data.columns), self._split, self._step_columns, alpha=a)
        conditional = None if all(x is None for x in self._links) else conditional_cells(
            self._links, self._data if self._dask else rows, alpha=a, n_steps=len(self.ledger.rows()),
            n_rows=self._n_rows, void=bool(self._void), units=self.units, max_collect_bytes=self.max_collect_bytes)
        return build_table(results, totals, corr, alpha=a, n_candidates=n_cand, adjust=adjust,
                           ledger_rows=self.ledger.rows(), units=self.units, group_size=self.group_size, trust=trust,
                           conditional=conditional, fission=fission, bonferroni_reason=why_not)

    def _rows_for(self, spec: Any) -> pd.DataFrame:
        """The collected columns of Dask data, with those ``spec`` names added (within the limit)."""
        cols = spec_columns(spec, self._data.columns)
        if not cols:
            raise ValueError(f"{type(spec).__name__} names no column of the data, so its rows cannot be collected from "
                             f"the Dask frame; the columns are {list(map(str, self._data.columns))[:12]}.")
        have = self._collected
        new = [c for c in cols if have is None or c not in have.columns]
        if new:
            already = 0 if have is None else estimate_bytes(self._data, have.columns, self._n_rows)
            part = collect_columns(self._data, new, n_rows=self._n_rows, max_bytes=self.max_collect_bytes,
                                   already=already)
            have = part if have is None else pd.concat([have, part], axis=1)
            self._collected = have[[c for c in self._data.columns if c in have.columns]]
        return self._collected
