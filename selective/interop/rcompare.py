"""Run the same analysis in R selectiveInference (through rpy2) and show both side by side.

R, rpy2 and the R packages ``selectiveInference`` and ``glmnet`` are optional: nothing here is
imported until :func:`compare_with_r` (or :func:`why_r_unavailable`) is called, and a missing
piece raises :class:`RUnavailableError` saying how to install it. The rpy2 glue is the
package's one bridge, :mod:`selective.interop.rbridge`::

    # 1. R itself (e.g. apt-get install r-base), then
    pip install "selective[r]"                     # rpy2
    Rscript -e 'install.packages(c("selectiveInference", "glmnet"))'

``R_LIBS_USER`` / ``R_LIBS`` are honoured: their directories are put in front of
``.libPaths()`` before the packages are looked up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..conditional._checks import check_choice, design_and_response
from . import rbridge

__all__ = ["RUnavailableError", "why_r_unavailable", "r_available", "compare_with_r"]

R_PACKAGES = ("selectiveInference", "glmnet")
FUNCTIONS = ("fixedLassoInf", "fsInf", "larInf", "manyMeans")

#: Raised when R, rpy2, selectiveInference or glmnet is missing (the bridge's error type).
RUnavailableError = rbridge.RNotAvailableError


def _session():
    """R with selectiveInference and glmnet loaded, through the package's one rpy2 bridge."""
    rbridge.require_r(R_PACKAGES)
    return rbridge._robjects()


def why_r_unavailable() -> str | None:
    """``None`` when R + rpy2 + selectiveInference + glmnet are usable, else what is missing
    and how to install it."""
    return rbridge.why_r_unavailable(R_PACKAGES)


def r_available() -> bool:
    """True when :func:`compare_with_r` can run."""
    return why_r_unavailable() is None


def _r_matrix(ro, X: np.ndarray):
    n, p = X.shape
    return ro.r["matrix"](ro.FloatVector(np.asarray(X, float).ravel(order="F")), nrow=n, ncol=p)


def _r_num(ro, v):
    return ro.NULL if v is None else ro.FloatVector(np.atleast_1d(np.asarray(v, float)))


def _as_array(obj) -> np.ndarray:
    return np.asarray(list(obj), dtype=float)


_R_CODE = r"""
function(fun, x, y, lambda, sigma, alpha, type, k, maxsteps, family, intercept, bh_q) {
  library(selectiveInference)
  n <- nrow(x)
  if (fun == "fixedLassoInf") {
    fit <- glmnet::glmnet(x, y, family = family, standardize = FALSE, intercept = intercept,
                          thresh = 1e-14)
    beta <- coef(fit, x = x, y = y, s = lambda / n, exact = TRUE)
    beta <- if (family == "gaussian") as.numeric(beta)[-1] else as.numeric(beta)
    out <- fixedLassoInf(x, y, beta, lambda, family = family, intercept = intercept,
                         sigma = sigma, alpha = alpha, type = type)
    return(list(vars = out$vars, pv = out$pv, ci = out$ci, vlo = out$vlo, vup = out$vup,
                sd = out$sd, coef0 = out$coef0))
  }
  if (fun == "manyMeans") {
    out <- manyMeans(y, alpha = alpha, bh.q = bh_q, k = k, sigma = sigma)
    return(list(vars = out$selected.set, pv = out$pv, ci = out$ci,
                coef0 = out$mu.hat[out$selected.set]))
  }
  path <- if (fun == "fsInf") fs(x, y, maxsteps = maxsteps) else lar(x, y, maxsteps = maxsteps)
  out <- if (fun == "fsInf") fsInf(path, sigma = sigma, alpha = alpha, k = k, type = type)
         else larInf(path, sigma = sigma, alpha = alpha, k = k, type = type)
  list(vars = out$vars, pv = out$pv, ci = out$ci, vlo = out$vlo, vup = out$vup,
       sd = out$sigma * sqrt(rowSums(out$vmat^2)), coef0 = out$sign * (out$vmat %*% out$y))
}
"""


def compare_with_r(function: str, X, y=None, *, lam: float | None = None,
                   sigma: float | None = None, alpha: float = 0.1, type: str | None = None,
                   k: int | None = None, maxsteps: int = 2000, family: str = "gaussian",
                   intercept: bool = True, bh_q: float | None = None,
                   columns=None) -> pd.DataFrame:
    """Run one analysis with ``selective.conditional`` and with R selectiveInference.

    Parameters
    ----------
    function : {"fixedLassoInf", "fsInf", "larInf", "manyMeans"}
        The R function to mirror (with :func:`fixed_lasso_inference`, :func:`fs_inference`,
        :func:`lar_inference` or :func:`many_means`).
    X, y : array_like or DataFrame (+ response name)
        Data; for ``"manyMeans"`` pass the observations as ``X`` (1-d) and leave ``y`` None.
    lam, sigma, alpha, type, k, maxsteps, family, intercept, bh_q
        As in the Python functions (R's ``bh.q`` is ``bh_q``).

    Returns
    -------
    pandas.DataFrame
        One row per selected variable (1-based ``variable`` index, as in R), with columns
        ``<quantity>_python``, ``<quantity>_r`` and ``<quantity>_absdiff`` for the estimate,
        sd, limits, p-value and interval ends (NaN where a quantity does not exist).

    Raises
    ------
    RUnavailableError
        When rpy2, R, selectiveInference or glmnet is missing (the message says how to
        install them).
    """
    function = check_choice("function", function, FUNCTIONS)
    from ..conditional import (
        fixed_lasso_inference,
        forward_stepwise,
        fs_inference,
        lar_inference,
        least_angle_regression,
        many_means,
    )

    if function == "manyMeans":
        yv = np.asarray(X, dtype=float).ravel()
        ours = many_means(yv, alpha=alpha, bh_q=bh_q, k=k, sigma=1.0 if sigma is None else sigma)
        py = pd.DataFrame({"variable": np.asarray(ours.selected) + 1, "estimate": ours.mu_hat,
                           "pvalue": ours.pvalue, "ci_low": ours.ci[:, 0],
                           "ci_high": ours.ci[:, 1]})
        Xm = yv[:, None]
    else:
        Xm, yv, _ = design_and_response(X, y, columns)
        if function == "fixedLassoInf":
            if lam is None:
                raise ValueError("`lam` is required for function='fixedLassoInf'; got None.")
            ours = fixed_lasso_inference(Xm, yv, lam, family=family, sigma=sigma,
                                         intercept=intercept, type=type or "partial", alpha=alpha,
                                         sigma_method="plugin")  # R's plug-in when sigma is None
        elif function == "fsInf":
            ours = fs_inference(forward_stepwise(Xm, yv, maxsteps=maxsteps), sigma=sigma,
                                alpha=alpha, k=k, type=type or "active", sigma_method="plugin")
        else:
            ours = lar_inference(least_angle_regression(Xm, yv, maxsteps=maxsteps),
                                 sigma=sigma, alpha=alpha, k=k, type=type or "active", sigma_method="plugin")
        f = ours.to_frame()
        py = pd.DataFrame({"variable": f["index"].to_numpy() + 1, "estimate": f["estimate"],
                           "sd": f["sd"], "vlo": f["vlo"], "vup": f["vup"],
                           "pvalue": f["pvalue"], "ci_low": f["ci_low"],
                           "ci_high": f["ci_high"]}).reset_index(drop=True)
    ro = _session()
    fun = ro.r(_R_CODE)
    res = fun(function, _r_matrix(ro, Xm),
              ro.FloatVector(np.asarray(yv if function != "manyMeans" else Xm[:, 0], float)),
              _r_num(ro, lam), _r_num(ro, sigma), alpha, type or ("partial" if function ==
                                                                  "fixedLassoInf" else "active"),
              _r_num(ro, k), maxsteps, family, intercept, _r_num(ro, bh_q))
    names = list(res.names)
    get = {nm: res[i] for i, nm in enumerate(names)}
    ci = np.asarray(get["ci"], dtype=float).reshape(-1, 2, order="F") if "ci" in get else None
    r = pd.DataFrame({"variable": _as_array(get["vars"]).astype(int),
                      "estimate": _as_array(get["coef0"]),
                      "pvalue": _as_array(get["pv"])})
    for key in ("sd", "vlo", "vup"):
        if key in get:
            r[key] = _as_array(get[key])
    if ci is not None:
        r["ci_low"], r["ci_high"] = ci[:, 0], ci[:, 1]
    return _side_by_side(py, r)


def _side_by_side(py: pd.DataFrame, r: pd.DataFrame) -> pd.DataFrame:
    quantities = ["estimate", "sd", "vlo", "vup", "pvalue", "ci_low", "ci_high"]
    merged = py.merge(r, on="variable", how="outer", suffixes=("_python", "_r"))
    out = pd.DataFrame({"variable": merged["variable"]})
    for q in quantities:
        a = merged.get(f"{q}_python", pd.Series(np.nan, index=merged.index))
        b = merged.get(f"{q}_r", pd.Series(np.nan, index=merged.index))
        out[f"{q}_python"] = a.to_numpy(dtype=float)
        out[f"{q}_r"] = b.to_numpy(dtype=float)
        out[f"{q}_absdiff"] = np.abs(out[f"{q}_python"] - out[f"{q}_r"])
    return out.set_index("variable")
