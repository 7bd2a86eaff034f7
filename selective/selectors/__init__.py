"""Selectors: DP and description-length test-selection procedures.

Each selector's ``select(data, rng)`` returns a :class:`Selection`: what was chosen and the
certificate of the step, which :class:`selective.Analysis` records on the ledger.

* Differentially private: :class:`NoisyTopK`, :class:`NoisyStatistic`,
  :class:`SparseVectorScreen`, and the reusable holdout :class:`Thresholdout`.
* Description length: :class:`TopK`, :class:`OrderedTopK`, :class:`FiniteChoice`,
  :class:`SparseValidate`, :class:`QuantizedAnswer`, :class:`LassoSupport`,
  :class:`ForwardStepwise`.

Score objects for column screens (:class:`CandidateScores`, :class:`TwoGroupScores`, and for
DP selectors :class:`ClippedMeanScores`, :class:`SignedClippedMeanScores`,
:class:`ProportionScores`) accept a pandas or a Dask DataFrame: they are computed from
streaming statistics merged over chunks (:mod:`selective.selectors.streaming`).
"""

from .base import Selection, Selector
from .clipped_scores import ClippedMeanScores, ProportionScores, SignedClippedMeanScores
from .description import (
    FiniteChoice,
    ForwardStepwise,
    LassoSupport,
    OrderedTopK,
    QuantizedAnswer,
)
from .dp import NoisyStatistic, SparseVectorScreen
from .scores import CandidateScores, TwoGroupScores, candidate_scores, welch_t_scores
from .sparse_validate import SparseValidate, ValidationTranscript
from .thresholdout import Thresholdout, ThresholdoutExperiment, thresholdout_parameters
from .topk import NoisyTopK, SignedMeanScore, TopK

__all__ = [
    "Selection",
    "Selector",
    "TopK",
    "NoisyTopK",
    "SignedMeanScore",
    "NoisyStatistic",
    "SparseVectorScreen",
    "Thresholdout",
    "ThresholdoutExperiment",
    "thresholdout_parameters",
    "FiniteChoice",
    "OrderedTopK",
    "SparseValidate",
    "ValidationTranscript",
    "QuantizedAnswer",
    "LassoSupport",
    "ForwardStepwise",
    "candidate_scores", "welch_t_scores", "CandidateScores", "TwoGroupScores",
    "ClippedMeanScores", "SignedClippedMeanScores", "ProportionScores",
]
