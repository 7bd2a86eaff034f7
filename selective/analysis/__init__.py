"""The analysis layer: the :class:`Analysis` facade, the report, plan files and the audit trail.

- :mod:`~selective.analysis.facade`: :class:`Analysis` (select, record, test, report);
- :mod:`~selective.analysis.report`: the corrected table, its rows and renderings;
- :mod:`~selective.analysis.plan`: TOML plan files;
- :mod:`~selective.analysis.audit`: audit records, fingerprints and ``verify``.
"""

from .facade import Analysis
from .report import CorrectedTable

__all__ = ["Analysis", "CorrectedTable"]
