"""Accounting: certificates, one bound per theorem, composition, and the ledger.

Pure functions and immutable values; nothing here knows about data frames.
"""

from .bounds import (
    compose_maxinfo,
    maxinfo_approx_dp,
    maxinfo_description_length,
    maxinfo_from_mutual_information,
    maxinfo_pure_dp_all_distributions,
    maxinfo_pure_dp_product,
    mi_description_length,
    mi_gaussian_statistical_queries,
    mi_pure_dp_any_distribution,
    mi_pure_dp_product,
    mi_zcdp_any_distribution,
    mi_zcdp_product,
)
from .certificates import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ZCDP,
    ApproxDP,
    Certificate,
    DescriptionLength,
    MaxInfo,
    MutualInfo,
    PureDP,
    certificate_from_dict,
)
from .composition import (
    advanced_composition,
    basic_composition,
    group_privacy,
    pure_dp_to_zcdp,
    zcdp_composition,
    zcdp_to_approx_dp,
)
from .ledger import Ledger, Step
from .totals import LedgerTotals, MaxInfoFamily, UnionRoute

__all__ = [
    "Ledger",
    "Step",
    "LedgerTotals",
    "MaxInfoFamily",
    "UnionRoute",
    "compose_maxinfo",
    "maxinfo_approx_dp",
    "maxinfo_description_length",
    "maxinfo_from_mutual_information",
    "maxinfo_pure_dp_all_distributions",
    "maxinfo_pure_dp_product",
    "mi_description_length",
    "mi_gaussian_statistical_queries",
    "mi_pure_dp_any_distribution",
    "mi_pure_dp_product",
    "mi_zcdp_any_distribution",
    "mi_zcdp_product",
    "advanced_composition",
    "group_privacy",
    "basic_composition",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_to_approx_dp",
    "ANY_DISTRIBUTION",
    "PRODUCT",
    "ApproxDP",
    "Certificate",
    "DescriptionLength",
    "MaxInfo",
    "MutualInfo",
    "PureDP",
    "ZCDP",
    "certificate_from_dict",
]
