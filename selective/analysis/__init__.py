"""The analysis layer: the :class:`Analysis` facade, the report, plan files and the audit trail.

- :mod:`~selective.analysis.facade`: :class:`Analysis` (preregister, select, record, test, report);
- :mod:`~selective.analysis.rows`: the table's rows, note column and footnote from the ledger's
  totals, the corrections and the test results;
- :mod:`~selective.analysis.trust`: naive p-values accurate at the corrected level (exact or
  permutation versions, or withheld columns);
- :mod:`~selective.analysis.report`: the corrected table and its renderings;
- :mod:`~selective.analysis.plan`, :mod:`~selective.analysis.plan_format`: TOML plan files;
- :mod:`~selective.analysis.audit`, :mod:`~selective.analysis.fingerprint`,
  :mod:`~selective.analysis.files`, :mod:`~selective.analysis.verify`: the audit record, the
  data fingerprint, the ordered writing of table and audit, and ``selective verify``.
"""

from .facade import Analysis
from .report import CorrectedTable

__all__ = ["Analysis", "CorrectedTable"]
