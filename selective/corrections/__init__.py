"""Valid corrections of naive p-values after selection, one module per route.

Pure functions of the naive p-values and of the ledger's totals (no data frames):

- :mod:`~selective.corrections.maxinfo`: max-information routes (docs/THEORY.md 3.1-3.3);
- :mod:`~selective.corrections.union`: the union-bound route over outcomes (3.6);
- :mod:`~selective.corrections.bonferroni`: Bonferroni over declared hypotheses;
- :mod:`~selective.corrections.mutual_info`: mutual-information routes (3.4, 3.4a);
- :mod:`~selective.corrections.combine`: :func:`correct`, the rule that combines the routes
  into the report's columns, and :func:`interval_at_level`.
"""

from ._routes import *  # noqa: F401,F403
from ._routes import __all__  # noqa: F401
