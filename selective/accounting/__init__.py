"""Accounting: certificates, one bound per theorem, composition, and the ledger.

Pure functions and immutable values; nothing here knows about data frames.
"""

from .certificates import (
    ANY_DISTRIBUTION,
    PRODUCT,
    ApproxDP,
    Certificate,
    DescriptionLength,
    MaxInfo,
    MutualInfo,
    PureDP,
    ZCDP,
    certificate_from_dict,
)

__all__ = [
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
