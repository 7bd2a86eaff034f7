"""Proof that the package works: the simulation harness, the scenario library and the
experiments of the source papers.

From the bottom up (each module imports only those above it in this list):

- :mod:`~selective.validation.outcomes`: outcomes of replications, their counts, rates with
  Monte-Carlo errors and binomial intervals, and the per-replication seeds;
- :mod:`~selective.validation.splitting`: data splitting as a baseline;
- :mod:`~selective.validation.plots`: rejection-rate curves;
- :mod:`~selective.validation.scenarios`: adversarial scenarios (one module per family, and
  the registry); they never import the harness;
- :mod:`~selective.validation.harness`: :func:`~selective.validation.harness.simulate`, serial /
  joblib / Dask execution; it never imports the scenarios;
- :mod:`~selective.validation.validate`: the scenario library run as a whole (``selective validate``);
- :mod:`~selective.validation.experiments`: the holdout-reuse experiment (THEORY.md 6.1-6.2).
"""
