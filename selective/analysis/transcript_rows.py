"""The report's conditional column after SparseValidate: the weighted transcript p-value.

A test run with ``Analysis.test(spec, conditional_on=selection)``, where ``selection`` came from
:meth:`selective.selectors.SparseValidate.selection` and was recorded with
:meth:`~selective.Analysis.record`, gets in ``pvalue_conditional`` the p-value of
:func:`selective.corrections.corrected_pvalue_sparse_validate`: the test's own p-value divided by
the weight of the query that validated (docs/THEORY.md 3.15). The column relies on what the analyst
declared before reading the holdout (the order of the queries, the test's direction, the weights)
and on the test's p-value being accurate at alpha times that weight (the trust rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..selectors.sparse_validate import ValidationTranscript

__all__ = ["TranscriptLink", "transcript_of", "transcript_cell"]


@dataclass(frozen=True)
class TranscriptLink:
    """A test tied to a recorded SparseValidate transcript."""

    step: int
    selection: Any
    transcript: ValidationTranscript
    spec: Any
    alternative: str


def transcript_of(selection: Any) -> ValidationTranscript | None:
    """The SparseValidate transcript a recorded selection carries, or None."""
    details = getattr(selection, "details", None) or {}
    found = details.get("sparse_validate") if hasattr(details, "get") else None
    return found if isinstance(found, ValidationTranscript) else None


def link_transcript(spec: Any, selection: Any, step: int) -> TranscriptLink:
    """The link of ``spec`` to the transcript recorded at ``step`` (raises when it has no position)."""
    transcript = transcript_of(selection)
    if transcript is None or transcript.position is None:
        raise ValueError("`conditional_on`: the recorded SparseValidate transcript has no query that answered 1, so "
                         "no feature was validated.")
    return TranscriptLink(step=step, selection=selection, transcript=transcript, spec=spec,
                          alternative=getattr(spec, "alternative", "two-sided"))


def transcript_cell(link: TranscriptLink, data: Any, *, alpha: float, n_steps: int, void: bool,
                    columns: tuple[str, ...]) -> dict[str, Any]:
    """The conditional cell and note of a test linked to a SparseValidate transcript."""
    from ..corrections.bonferroni import corrected_pvalue_sparse_validate

    cell: dict[str, Any] = {c: math.nan for c in columns}
    t = link.transcript
    what = (f"conditional: weighted union over SparseValidate's stopping positions (THEORY.md 3.15): the test's "
            f"{link.alternative} p-value over the weight {t.weight:.3g} of query {t.position} of {t.m} (first "
            f"query {t.first_weight:g}, declared before the holdout was read); no interval")
    if void:
        cell["note"] = "conditional withheld: the ledger is void"
        return cell
    if n_steps != 1:
        cell["note"] = (f"conditional withheld: it accounts for step {link.step + 1} only, and the ledger has "
                        f"{n_steps} steps")
        return cell
    try:
        result = link.spec.run(data)
    except Exception as exc:  # noqa: BLE001 - the test itself failed: its row reports that already
        cell["note"] = f"conditional withheld: the test could not be rerun ({str(exc)[:120]})"
        return cell
    trusted = float(getattr(result, "trusted_level", 0.0) or 0.0)
    level = alpha * t.weight
    if trusted > level:
        cell["note"] = (f"{what}; conditional p-value withheld: it is compared with alpha x weight = {level:.2g}, "
                        f"below {trusted:.2g} where the test's p-value is trusted")
        return cell
    cell["pvalue_conditional"] = float(corrected_pvalue_sparse_validate(
        min(1.0, max(0.0, float(result.pvalue_naive))), t.position, t.m, first_weight=t.first_weight))
    cell["note"] = what
    return cell
