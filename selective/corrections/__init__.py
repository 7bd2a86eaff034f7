r"""Valid p-value corrections and thresholds γ(α) after selection, one module per route.

A correction is a fixed function of the naive p-value and of data-independent certificates
(docs/THEORY.md 1.6): :math:`\tilde p = \inf\{\alpha: p \le \gamma(\alpha)\}` satisfies
:math:`P[\tilde p \le \alpha] \le \alpha` under the null. The minimum of several valid corrected
p-values is valid (THEORY.md 3.2). Everything here is a pure function of the naive p-values and
of the ledger's totals (no data frames):

- :mod:`~selective.corrections.maxinfo`: max-information routes: from a fixed bound, pure DP
  (Theorems 19 and 20), description length, and the max-information of a whole analysis
  (THEORY.md 2.7, 3.1, 3.2);
- :mod:`~selective.corrections.union`: the union-bound route over description-length outcomes
  (THEORY.md 3.6);
- :mod:`~selective.corrections.bonferroni`: Bonferroni over declared hypotheses;
- :mod:`~selective.corrections.mutual_info`: mutual-information routes: through max-information,
  Russo-Zou, binary KL, and their crossovers (THEORY.md 3.3-3.5);
- :mod:`~selective.corrections.combine`: :func:`correct`, the rule that combines the routes
  into the report's columns, and :func:`interval_at_level`;
- ``_common`` (private): the :class:`Threshold` record and the helpers the routes share.

Units: max-information ``bits`` (log base 2); mutual information ``mi_bits`` (bits); ε in nats.
Every threshold is returned with its base-2 logarithm, since values such as
:math:`2^{-72766}` occur; functions of p are vectorised over numpy arrays.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
.. [RRST] R. Rogers, A. Roth, A. Smith, O. Thakkar, "Max-information, differential privacy, and
   post-selection hypothesis testing", FOCS 2016, arXiv:1604.03924.
.. [RZ] D. Russo, J. Zou, "Controlling bias in adaptive data analysis using information
   theory", AISTATS 2016; journal version IEEE Trans. Inf. Theory 2020; arXiv:1511.05219.
"""

from ._common import Threshold
from .bonferroni import (
    corrected_pvalue_bonferroni,
    corrected_pvalue_sparse_validate,
    gamma_bonferroni,
    sparse_validate_weights,
)
from .combine import Corrections, correct, interval_at_level
from .maxinfo import (
    corrected_pvalue_description_length,
    corrected_pvalue_from_maxinfo,
    corrected_pvalue_maxinfo,
    corrected_pvalue_pure_dp_all_distributions,
    corrected_pvalue_pure_dp_product,
    gamma_description_length,
    gamma_from_maxinfo,
    gamma_maxinfo,
    gamma_pure_dp_all_distributions,
    gamma_pure_dp_product,
    optimal_beta_description_length,
    optimal_beta_pure_dp_product,
)
from .mutual_info import (
    corrected_pvalue_mi_kl,
    corrected_pvalue_mi_russo_zou,
    corrected_pvalue_mi_via_maxinfo,
    corrected_pvalue_mutual_info,
    crossover_mi_routes,
    crossover_slide_forms,
    gamma_mi_kl,
    gamma_mi_russo_zou,
    gamma_mi_via_maxinfo,
    gamma_mutual_info,
    optimal_beta_mi_via_maxinfo,
)
from .union import (
    corrected_pvalue_union,
    corrected_pvalue_union_dl_and_pure_dp_product,
    gamma_union,
    gamma_union_dl_and_pure_dp_product,
    optimal_beta_union_dl_and_pure_dp_product,
)

__all__ = [
    "Threshold",
    "gamma_from_maxinfo",
    "corrected_pvalue_from_maxinfo",
    "gamma_pure_dp_all_distributions",
    "corrected_pvalue_pure_dp_all_distributions",
    "gamma_pure_dp_product",
    "corrected_pvalue_pure_dp_product",
    "optimal_beta_pure_dp_product",
    "gamma_description_length",
    "corrected_pvalue_description_length",
    "optimal_beta_description_length",
    "gamma_bonferroni",
    "corrected_pvalue_bonferroni",
    "sparse_validate_weights",
    "corrected_pvalue_sparse_validate",
    "gamma_mi_via_maxinfo",
    "corrected_pvalue_mi_via_maxinfo",
    "optimal_beta_mi_via_maxinfo",
    "gamma_mi_russo_zou",
    "corrected_pvalue_mi_russo_zou",
    "gamma_mi_kl",
    "corrected_pvalue_mi_kl",
    "gamma_union_dl_and_pure_dp_product",
    "corrected_pvalue_union_dl_and_pure_dp_product",
    "optimal_beta_union_dl_and_pure_dp_product",
    "crossover_mi_routes",
    "crossover_slide_forms",
    "gamma_maxinfo",
    "corrected_pvalue_maxinfo",
    "gamma_union",
    "corrected_pvalue_union",
    "gamma_mutual_info",
    "corrected_pvalue_mutual_info",
    "Corrections",
    "correct",
    "interval_at_level",
]
