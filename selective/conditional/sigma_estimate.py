r"""Noise level from a cross-validated lasso: R selectiveInference's ``estimateSigma``.

``estimateSigma(x, y)`` of selectiveInference 1.2.5 (Tibshirani, Taylor, Loftus, Reid, ...,
``funs.common.R``) chooses lambda by 10-fold cross-validation of the Gaussian lasso
(``cv.glmnet``, mean squared error, ``lambda.min``), refits the lasso on all the data
(``glmnet``, always with an intercept) and returns

.. math:: \hat\sigma = \sqrt{\frac{\|y - \hat y_{\hat\lambda}\|^2}{n - \hat d - 1}},
   \qquad \hat d = \#\{\text{non-zero coefficients at } \hat\lambda,
   \text{ the intercept included}\}

(Reid, Tibshirani and Friedman 2016, "A study of error variance estimation in lasso
regression", Statist. Sinica 26(1), 35-67, recommend this cross-validated lasso estimate).
:func:`estimate_sigma` reproduces that algorithm step by step: glmnet's lambda grid,
standardisation, early stopping and linear interpolation in lambda (:mod:`._glmnet`), the
fold-wise prediction of the held-out observations at the full-data lambdas, the fold-weighted
mean squared error, ``lambda.min`` as the largest lambda attaining the minimum, and R's
degrees of freedom (the intercept is counted in :math:`\hat d` and one more is subtracted in
the denominator). The lasso solutions are exact (glmnet stops at ``thresh = 1e-7``).

The folds are random in R (``sample(rep(1:10, length = n))``): pass ``foldid`` to reproduce a
given split, or ``seed`` for a reproducible random one.

The estimate depends on y through the selection of lambda and of the support, and is not
independent of the selection events of :mod:`selective.conditional`. Supplying it as
``sigma=`` to the conditional functions therefore gives approximate, not exact, p-values (the
valid route for an unknown sigma is ``sigma_method="interval"``, docs/THEORY.md 3.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._checks import check_int, design_and_response
from ._glmnet import cv_lasso_paths, lasso_path
from .results import _ro

__all__ = ["SigmaEstimate", "estimate_sigma"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SigmaEstimate:
    """The cross-validated lasso estimate of the noise level (see :func:`estimate_sigma`).

    ``sigma`` the estimate; ``df`` the non-zero coefficients of the refit at ``lambda_min``,
    intercept included (R's ``df``); ``lambda_min`` the chosen lambda on glmnet's scale
    (:math:`\\frac{1}{2n}\\|r\\|^2 + \\lambda\\|\\beta\\|_1`), ``lam`` the same on the scale of
    :func:`fixed_lasso_inference` (``n * lambda_min``; with ``standardize=True`` the penalty
    is on the standardised coefficients, so ``lam`` is not a fixed-lambda lasso of the raw
    columns); ``lambdas``, ``cvm`` and ``cvsd`` the cross-validation curve; ``foldid`` the fold
    of each observation.
    """

    sigma: float
    df: int
    lambda_min: float
    lam: float
    index_min: int
    n: int
    lambdas: np.ndarray = field(repr=False)
    cvm: np.ndarray = field(repr=False)
    cvsd: np.ndarray = field(repr=False)
    foldid: np.ndarray = field(repr=False)
    intercept: bool = True
    standardize: bool = True
    method: str = field(default="cross-validated lasso (R selectiveInference estimateSigma)", repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The cross-validation curve, one row per lambda, with the chosen one marked."""
        return pd.DataFrame({"lambda": self.lambdas, "lam": self.n * self.lambdas, "cvm": self.cvm,
                             "cvsd": self.cvsd,
                             "chosen": np.arange(self.lambdas.size) == self.index_min})


def estimate_sigma(X, y=None, *, intercept: bool = True, standardize: bool = True, nfolds: int = 10,
                   foldid=None, seed=None, columns=None, response: str | None = None) -> SigmaEstimate:
    r"""Estimate the noise sd from a cross-validated lasso, as R's ``estimateSigma``.

    Parameters
    ----------
    X : array_like (n, p) or pandas.DataFrame
        Design (n >= 10, as in R). With a DataFrame, ``y`` may name the response column.
    y : array_like (n,) or str
    intercept : bool
        Fit an intercept in the cross-validation (R's ``intercept``; the final refit always
        has one, as in R).
    standardize : bool
        Penalise the coefficients of the standardised columns (glmnet's ``standardize``).
    nfolds : int
        Number of folds (at least 3) when ``foldid`` is not given.
    foldid : array_like of int, optional
        Fold label of each observation (R's ``foldid``; 1..K). Default: a random split into
        ``nfolds`` folds of sizes as equal as possible, as R's ``sample(rep(1:nfolds, length =
        n))``, drawn from ``numpy.random.default_rng(seed)``.
    seed : int or numpy.random.Generator, optional
        Seed of the random split (ignored when ``foldid`` is given).

    Returns
    -------
    SigmaEstimate

    Notes
    -----
    The algorithm of selectiveInference 1.2.5's ``estimateSigma`` (module docstring): the
    estimate is :math:`\sqrt{\mathrm{RSS}_{\hat\lambda} / (n - \hat d - 1)}` with
    :math:`\hat d` counting the intercept (so the intercept is subtracted twice, as in R).
    It is a plug-in estimate: used as ``sigma`` in the conditional tests it makes them
    approximate, not exact. It agrees with R given the same folds to glmnet's convergence
    tolerance (checked live in the test suite).

    References
    ----------
    .. [1] S. Reid, R. Tibshirani, J. Friedman, "A study of error variance estimation in lasso
       regression", Statist. Sinica 26(1), 35-67, 2016.
    """
    X, y, _ = design_and_response(X, y, columns, response)
    n, p = X.shape
    for nm, v in (("intercept", intercept), ("standardize", standardize)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"`{nm}` must be True or False; got {v!r}.")
    if n < 10:
        raise ValueError(f"`X` must have at least 10 rows to estimate sigma by cross-validation "
                         f"(as R's estimateSigma); got n={n}.")
    fold = _folds(n, nfolds, foldid, seed)
    labels = np.unique(fold)
    full, fits = cv_lasso_paths(X, y, fold, labels, intercept=intercept, standardize=standardize)
    lam = full.lam
    pred = np.empty((n, lam.size))
    for f, fit in zip(labels, fits, strict=True):
        test = fold == f
        pred[test] = fit.predict(X[test], lam)
    raw = (y[:, None] - pred) ** 2
    sizes = np.array([np.sum(fold == f) for f in labels], dtype=float)
    fold_means = np.array([[math.fsum(col) / s for col in raw[fold == f].T]
                           for f, s in zip(labels, sizes, strict=True)])          # K x L
    cvm = np.array([math.fsum(c) for c in (fold_means * sizes[:, None]).T]) / sizes.sum()
    if n / labels.size < 3:  # glmnet: grouped = FALSE when folds have fewer than 3 observations
        cvsd = np.sqrt(np.mean((raw - cvm) ** 2, axis=0) / (n - 1))
    else:
        cvsd = np.sqrt(((fold_means - cvm) ** 2 * sizes[:, None]).sum(0) / sizes.sum() / (labels.size - 1))
    idx = int(np.argmax(lam == np.max(lam[cvm <= np.min(cvm)])))  # the largest lambda at the minimum
    lam_hat = float(lam[idx])
    refit = full if intercept else lasso_path(X, y, intercept=True, standardize=standardize)
    a0, beta = refit.coef_at(np.array([lam_hat]))
    resid = y - (a0[0] + X @ beta[0])
    df = int(np.count_nonzero(beta[0]) + (a0[0] != 0))
    dof = n - df - 1
    if dof <= 0:
        raise ValueError(f"The cross-validated lasso leaves no residual degrees of freedom (n={n}, "
                         f"{df} non-zero coefficients with the intercept, denominator n - df - 1 = "
                         f"{dof}); sigma cannot be estimated this way.")
    sigma = math.sqrt(float(resid @ resid) / dof)
    return SigmaEstimate(sigma=sigma, df=df, lambda_min=lam_hat, lam=n * lam_hat, index_min=idx, n=n,
                         lambdas=_ro(lam), cvm=_ro(cvm), cvsd=_ro(cvsd), foldid=_ro(fold, int),
                         intercept=bool(intercept), standardize=bool(standardize))


def _folds(n, nfolds, foldid, seed) -> np.ndarray:
    if foldid is None:
        nfolds = check_int("nfolds", nfolds, low=3, high=n)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        return rng.permutation(np.resize(np.arange(1, nfolds + 1), n))
    fold = np.asarray(foldid)
    if fold.shape != (n,) or not np.issubdtype(fold.dtype, np.number) or np.any(fold != np.round(fold)):
        raise ValueError(f"`foldid` must be {n} integer fold labels (one per row of `X`); got "
                         f"shape {fold.shape}.")
    fold = fold.astype(int)
    k = np.unique(fold).size
    if k < 3:
        raise ValueError(f"`foldid` must define at least 3 folds (as glmnet's cv.glmnet); got {k}.")
    return fold
