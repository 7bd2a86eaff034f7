"""Interoperation with R and side-by-side comparisons.

- :mod:`~selective.interop.rbridge`: the package's one rpy2 bridge to R;
- :mod:`~selective.interop.rcompare`: the same selective inference run by R selectiveInference;
- :mod:`~selective.interop.compare`: :func:`compare_selection`, naive vs max-information vs
  exact conditional (vs R) for one lasso / stepwise selection.
"""
