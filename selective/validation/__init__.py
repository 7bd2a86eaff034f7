"""Proof that the package works: the simulation harness, the scenario library and the
experiments of the source papers.

- :mod:`~selective.validation.harness`: :func:`simulate`, rejection rates with Monte-Carlo
  errors, serial / joblib / Dask execution, data splitting as a baseline;
- :mod:`~selective.validation.scenarios`: adversarial scenarios (one module per family);
- :mod:`~selective.validation.experiments`: the holdout-reuse experiment (THEORY.md 6.1-6.2).
"""
