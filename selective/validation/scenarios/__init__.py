r"""Adversarial selection scenarios for the validity and power harness (:mod:`selective.validation.harness`).

Each scenario is a small frozen object: its ``name``, a ``description``, the ``truth`` (which
hypotheses are null), the declared candidate count ``n_candidates`` (for Bonferroni), the
certificates of its selection (``certificates()``, recorded on a :class:`~selective.Ledger`),
and ``replicate_many(rngs)``, which runs one replication per generator, vectorised across
replications where the computation allows, and returns :class:`~selective.validation.outcomes.Outcomes`.

Every scenario tests one hypothesis per replication (``n_tests = 1``; a replication whose
selection is empty tests nothing and counts as no rejection), so the type-I error of a column is
:math:`P[\tilde p_T\le\alpha,\ H_T\text{ true}]`, the quantity each valid correction bounds by α.
The corrected columns are fixed functions of the naive p-value and of data-independent
certificates (THEORY.md 3.2), so they are computed in one vectorised call to
:func:`selective.corrections.correct`; ``TopKNoise.pipeline`` runs the same replication through
:class:`~selective.Analysis` to show that the two agree.

Scenarios may add columns of their own (diagnostics), named in ``column_labels``.

Data splitting (``pvalue_split``) reruns the same selection on a declared fraction of the rows
and tests on the others, needing no correction. Exact conditional p-values
(``pvalue_conditional``) come from :mod:`selective.conditional` for the lasso and stepwise
scenarios, with the noise level σ = 1 known.

One module per family: :mod:`.base` (:class:`Scenario` and the shared pieces),
:mod:`.selection` (no selection; top-k), :mod:`.dp` (Sparse Vector; noisy top-k then
description length), :mod:`.holdout`, :mod:`.freedman`, :mod:`.regression` (lasso; forward
stepwise), :mod:`.adaptive` (adaptive steps; nested rows; Theorem 20), :mod:`.trusted`
(asymptotic tests at the corrected level, run through :class:`~selective.Analysis` and its
report, so that the report's exact or permutation fallback is what is validated),
:mod:`.sigma` (conditional inference with the noise level unknown), :mod:`.sharp` (inference on
winners and data fission through the report, with an oracle), and :mod:`.registry`
(:data:`SCENARIOS` in its fixed order; new scenarios go at the end, since a scenario's seed is
its position). The scenarios use only
the lower validation modules (:mod:`~selective.validation.outcomes`,
:mod:`~selective.validation.splitting`), never the harness.
"""

from .adaptive import AdaptiveFamily, NoisyTopKTheorem20, RepeatedMeasures
from .base import Scenario
from .dp import DPThenDescriptionLength, SparseVectorThreshold
from .freedman import FreedmanScreening, FreedmanSummary, freedman_paradox
from .holdout import HoldoutReuse
from .registry import SCENARIOS, get_scenario, scenario_names
from .regression import ForwardStepwisePath, LassoFixedLambda
from .selection import Preregistered, TopKNoise
from .sharp import SharpTopK
from .sharp_dp import SharpNoisyTopK, SharpSignedNoisyTopK
from .sigma import UnknownSigmaStepwise
from .thinning import BinomialCountsThinning
from .trusted import (
    PoissonExposure,
    SpearmanSmallN,
    StudentisedMeanSkewed,
    TrustedReplication,
    TwoProportionRare,
    WelchSkewed,
)
from .trusted_model import StudentTMeanSkewed, StudentTwoSampleSkewed

__all__ = [
    "AdaptiveFamily",
    "RepeatedMeasures",
    "NoisyTopKTheorem20",
    "Scenario",
    "Preregistered",
    "TopKNoise",
    "SparseVectorThreshold",
    "HoldoutReuse",
    "FreedmanScreening",
    "LassoFixedLambda",
    "ForwardStepwisePath",
    "DPThenDescriptionLength",
    "TwoProportionRare",
    "WelchSkewed",
    "SharpTopK",
    "SharpNoisyTopK",
    "SharpSignedNoisyTopK",
    "StudentisedMeanSkewed",
    "StudentTMeanSkewed",
    "StudentTwoSampleSkewed",
    "SpearmanSmallN",
    "PoissonExposure",
    "TrustedReplication",
    "UnknownSigmaStepwise",
    "BinomialCountsThinning",
    "FreedmanSummary",
    "freedman_paradox",
    "SCENARIOS",
    "get_scenario",
    "scenario_names",
]
