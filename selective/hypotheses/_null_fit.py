"""The null fit of a GLM: the model refitted with the tested coefficients held at their null
values, whose means set the trusted level of a Wald p-value (docs/THEORY.md 7.1)."""

from __future__ import annotations

import warnings

import numpy as np
import statsmodels.api as sm

from ._counts import binomial_trials

__all__ = ["GLM_FIT_OPTIONS", "null_fit_means"]

# IRLS to a relative deviance change of 1e-13 rather than statsmodels' default absolute 1e-8:
# the standard errors use the weights of the last-but-one iterate, and at the default they can
# be off by ~1e-5 relative (seen on Poisson fits against R's glm run to convergence).
GLM_FIT_OPTIONS = {"atol": 1e-13, "rtol": 1e-13, "maxiter": 100}


def null_fit_means(fit, columns: list[int], values: list[float]) -> np.ndarray | None:
    """Fitted means of a GLM refitted with the coefficients of ``columns`` held at ``values``
    (an offset), on the same outcome, family and trials; None when that fit fails or does not
    converge (separation, a constant outcome)."""
    model = fit.model
    exog = np.asarray(model.exog, dtype=float)
    others = [c for c in range(exog.shape[1]) if c not in columns]
    offset = exog[:, columns] @ np.asarray(values, dtype=float)
    trials = binomial_trials(fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if not others:
                mu0 = np.asarray(model.family.link.inverse(offset), dtype=float)
            else:
                null = sm.GLM(np.asarray(model.endog, dtype=float), exog[:, others], family=model.family,
                              offset=offset, **({} if trials is None else {"var_weights": trials})
                              ).fit(**GLM_FIT_OPTIONS)
                if not null.converged:
                    return None
                mu0 = np.asarray(null.mu, dtype=float)
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            return None
    return mu0 if mu0.shape == (exog.shape[0],) and np.all(np.isfinite(mu0)) else None
