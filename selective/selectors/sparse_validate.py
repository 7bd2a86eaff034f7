"""SparseValidate: adaptively chosen yes/no queries to a holdout, with a transcript that an
analysis of the holdout can record (DFHPRR Thm 27; THEORY.md 5.6, 3.15)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int
from ..accounting.certificates import DescriptionLength
from ..corrections.bonferroni import sparse_validate_weights
from ..exceptions import BudgetExhausted
from ..mechanisms.reuse import SparseValidateEll, sparsevalidate_ell, sparsevalidate_n_outcomes
from ._frames import FrozenFrame
from .base import Selection

__all__ = ["SparseValidate", "ValidationTranscript"]


@dataclass(frozen=True)
class ValidationTranscript:
    """What a SparseValidate(m, B = 1) exchange revealed: the answers in order, with the weight of
    the first query declared before the holdout was read."""

    m: int
    answers: tuple[bool, ...]
    first_weight: float

    @property
    def position(self) -> int | None:
        """The query (1-based) that answered 1, or None."""
        return next((i for i, a in enumerate(self.answers, 1) if a), None)

    @property
    def weight(self) -> float:
        """The weight of :attr:`position` (:func:`selective.corrections.sparse_validate_weights`)."""
        return float(sparse_validate_weights(self.m, first_weight=self.first_weight)[self.position - 1])


class SparseValidate:
    r"""SparseValidate(m, B) (DFHPRR Thm 27 [NIPS Thm 10]; THEORY.md 5.6).

    Answers up to m adaptively chosen binary queries ψ: holdout DataFrame -> {0, 1}, of which
    at most B may be 1; after the B-th one, or the m-th query, :meth:`validate` raises
    :class:`BudgetExhausted`. The i-th query satisfies :math:`P[\psi_i(S)=1]\le\ell_i\beta_i`
    with :meth:`ell` (exact count :math:`\sum_{j\le\min(i-1,B)}\binom{i-1}j`). The whole
    transcript has certificate ``DescriptionLength(sum_{j<=B} C(m, j))``.

    **Failures answer 1.** If ψ raises an exception, or returns anything other than a bit
    (``True``/``False``, or an integer 0 or 1), on the holdout, the answer is 1 — a fixed,
    documented value that counts as a query and uses one unit of B — and no error is raised
    (warnings inside ψ are suppressed). An error message or warning would reveal the holdout
    without being counted; with this rule every transcript is still a string of m bits with at
    most B ones, so the certificate holds. A 1 can therefore also mean "ψ failed": test ψ on
    other data first. ``SystemExit`` raised by ψ is a failure like any other; a
    ``KeyboardInterrupt`` (Ctrl-C) is raised again after the query has been counted as a 1, so
    the transcript stays within the certificate.

    ``first_weight`` (budget 1): the weight of the first query in the weighted union bound over
    the stopping positions (:func:`selective.corrections.sparse_validate_weights`, THEORY.md
    3.15), declared here, before the holdout is read; see :meth:`selection`.

    **What the guarantee covers.** The certificate bounds what is learnt about the holdout
    through the answers of :meth:`validate`, for an analyst who learns it only that way. The
    holdout is copied at construction and every ψ gets a fresh read-only view of the copy
    (writes to numpy-typed columns raise ``ValueError``; columns of pandas extension types are
    fresh copies per query), so a query cannot overwrite rows or change what later queries
    see. This is protection against accidents, not a security boundary: ψ is arbitrary Python
    code and can copy what it receives or reach any object of the process.
    """

    __slots__ = ("__holdout", "_m", "_budget", "_n_queries", "_n_ones", "_answers", "_first_weight")

    def __init__(self, holdout: pd.DataFrame, *, m: int, budget: int, first_weight: float = 0.5) -> None:
        if not isinstance(holdout, pd.DataFrame):
            raise TypeError(f"`holdout` must be a pandas DataFrame; got {type(holdout).__name__}.")
        if holdout.columns.has_duplicates:
            dup = list(dict.fromkeys(holdout.columns[holdout.columns.duplicated()]))
            raise ValueError(f"`holdout` has more than one column labelled {dup[:5]!r}; column labels must be unique.")
        self._m = check_int("m", m, low=1)
        self._budget = check_int("budget", budget, low=0, high=self._m)
        self._first_weight = float(sparse_validate_weights(self._m, first_weight=first_weight)[0])
        self.__holdout = FrozenFrame(holdout)
        self._n_queries = 0
        self._n_ones = 0
        self._answers: list[bool] = []

    def __repr__(self) -> str:
        return f"SparseValidate(m={self._m}, budget={self._budget}, n_queries={self._n_queries}, n_ones={self._n_ones})"

    @property
    def first_weight(self) -> float:
        """The weight of the first query, declared at construction (budget 1; THEORY.md 3.15)."""
        return self._first_weight

    def __reduce__(self) -> Any:
        raise TypeError("SparseValidate objects cannot be pickled (the holdout must stay behind the mechanism).")

    @property
    def n_queries(self) -> int:
        return self._n_queries

    @property
    def n_ones(self) -> int:
        return self._n_ones

    def certificate(self) -> DescriptionLength:
        return DescriptionLength(sparsevalidate_n_outcomes(self._m, self._budget))

    def ell(self, i: int) -> SparseValidateEll:
        """:math:`\\ell_i` for the i-th query (1-based)."""
        return sparsevalidate_ell(i, self._budget, self._m)

    def validate(self, psi: Callable[[pd.DataFrame], Any]) -> bool:
        """Run the binary query ψ on the holdout; count it against the budgets."""
        if not callable(psi):
            raise TypeError(f"`psi` must be callable; got {psi!r}.")
        if self._n_queries >= self._m:
            raise BudgetExhausted(f"SparseValidate has answered its m = {self._m} queries.")
        if self._n_ones >= self._budget:
            raise BudgetExhausted(f"SparseValidate has answered its B = {self._budget} queries with 1.")
        self._n_queries += 1  # counted before ψ runs: every exit below is a counted answer
        try:
            bit = _run_bit_query(psi, self.__holdout.view())
        except KeyboardInterrupt:
            self._n_ones += 1  # an interrupted query counts as the fixed answer 1
            self._answers.append(True)
            raise
        self._n_ones += bit
        self._answers.append(bit)
        return bit

    @property
    def answers(self) -> tuple[bool, ...]:
        """The answers given so far, in order (the transcript)."""
        return tuple(self._answers)

    def selection(self, value: Any, *, label: str | None = None) -> Selection:
        """The step to :meth:`~selective.Analysis.record` in an analysis of the holdout once a query
        has answered 1 (budget 1 only).

        Its certificate is :meth:`certificate` (the m + 1 transcripts). Its details carry the
        :class:`ValidationTranscript` (m, the answers, the weight of the first query declared at
        construction), so that a test of the validated feature run with
        ``Analysis.test(spec, conditional_on=selection)`` gets the weighted transcript p-value of
        :func:`selective.corrections.corrected_pvalue_sparse_validate` in the report's conditional
        column (THEORY.md 3.15).
        """
        if self._budget != 1 or self._n_ones != 1:
            raise ValueError(f"`selection` needs a SparseValidate with budget 1 whose last query answered 1; this one "
                             f"has budget {self._budget} and {self._n_ones} answer(s) 1 in {self._n_queries} "
                             "queries.")
        transcript = ValidationTranscript(m=self._m, answers=self.answers, first_weight=self._first_weight)
        text = label if label is not None else f"SparseValidate: 1 at query {transcript.position} of {self._m}"
        return Selection(value=value, certificate=self.certificate(), label=text,
                         details=MappingProxyType({"sparse_validate": transcript}))


def _run_bit_query(psi: Callable[[pd.DataFrame], Any], holdout: pd.DataFrame) -> bool:
    """ψ(holdout) as a bit; an exception or a non-bit answers True (SparseValidate's fixed rule)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = psi(holdout)
            if isinstance(out, (bool, np.bool_)):
                return bool(out)
            if isinstance(out, (int, np.integer)):
                v = int(out)
                if type(v) is int and v in (0, 1):
                    return v == 1
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - any failure (SystemExit too) gets the fixed answer
            pass
    return True
