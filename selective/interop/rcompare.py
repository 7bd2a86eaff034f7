"""Run the same analysis in R selectiveInference (through rpy2) and show both side by side.

R, rpy2 and the R packages ``selectiveInference`` and ``glmnet`` are optional: nothing here is
imported until :func:`compare_with_r` (or :func:`why_r_unavailable`) is called, and a missing
piece raises :class:`RUnavailableError` saying how to install every piece. The rpy2 glue is
the package's one bridge, :mod:`selective.interop.rbridge`::

    # 1. R itself (Debian/Ubuntu: apt-get install r-base-core r-base-dev r-cran-glmnet), then
    pip install "selective[r]"                     # rpy2
    Rscript -e 'install.packages(c("selectiveInference", "glmnet"))'

Without access to CRAN, the source packages of ``ramcmc``, ``adaptMCMC`` and
``selectiveInference`` install with ``R CMD INSTALL -l DIR <tarball>`` (in that order; the
other dependencies are in Debian as ``r-cran-intervals``, ``r-cran-survival``, ...), with
``R_LIBS=DIR`` set for the session. ``R_LIBS_USER`` / ``R_LIBS`` are honoured: their
directories are put in front of ``.libPaths()`` before the packages are looked up.

Known defect of selectiveInference 1.2.5 (checked live against this package): ``manyMeans``
with ``bh.q`` computes the selection threshold as ``qnorm(R / (2n))`` instead of
``qnorm(q R / (2n))``, i.e. without the level ``q``. Its selected set is right, but its
truncation threshold is too low, so its p-values are exactly ``q`` times too small and its
estimates and intervals are those of a different (wrong) selection event. The comparison
below reports R's numbers as R gives them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..conditional._checks import check_choice, design_and_response
from . import rbridge

__all__ = ["RUnavailableError", "why_r_unavailable", "r_available", "compare_with_r"]

R_PACKAGES = ("selectiveInference", "glmnet")
FUNCTIONS = ("fixedLassoInf", "fsInf", "larInf", "manyMeans", "groupfsInf", "estimateSigma")

#: Raised when R, rpy2, selectiveInference or glmnet is missing (the bridge's error type).
RUnavailableError = rbridge.RNotAvailableError

SETUP_HINT = (
    "To run the comparison with R selectiveInference: (1) " + rbridge.INSTALL_R + ", plus "
    "r-base-dev and r-cran-glmnet on Debian; (2) " + rbridge.INSTALL_RPY2 + "; (3) in R: "
    "install.packages(c('selectiveInference', 'glmnet')), or without CRAN access "
    "`R CMD INSTALL -l DIR` of the source packages ramcmc, adaptMCMC and selectiveInference "
    "(in that order) and R_LIBS=DIR in the environment."
)


def why_r_unavailable() -> str | None:
    """``None`` when R + rpy2 + selectiveInference + glmnet are usable, else what is missing
    followed by how to install every piece (R, rpy2 and the R packages)."""
    reason = rbridge.why_r_unavailable() or rbridge.why_r_unavailable(R_PACKAGES)
    if reason is None:
        return None
    # the bridge's own install advice is part of SETUP_HINT: say it once
    for advice in (f": {rbridge.INSTALL_RPY2}", f" To fix: {rbridge.INSTALL_R}", " Then install the R package"):
        cut = reason.find(advice)
        if cut > 0:
            reason = reason[:cut].rstrip(" .;:") + "."
    return f"{reason} {SETUP_HINT}"


def r_available() -> bool:
    """True when :func:`compare_with_r` can run."""
    return why_r_unavailable() is None


def _session():
    """R with selectiveInference and glmnet findable, through the package's one rpy2 bridge."""
    reason = why_r_unavailable()
    if reason is not None:
        raise RUnavailableError(reason)
    return rbridge._robjects()


def _r_matrix(ro, X: np.ndarray):
    n, p = X.shape
    return ro.r["matrix"](ro.FloatVector(np.asarray(X, float).ravel(order="F")), nrow=n, ncol=p)


def _r_num(ro, v):
    return ro.NULL if v is None else ro.FloatVector(np.atleast_1d(np.asarray(v, float)).ravel())


def _vec(v) -> np.ndarray:
    """An R output (scalar, vector, k x 1 matrix, NULL) as a flat float array."""
    if v is None:
        return np.empty(0)
    return np.atleast_1d(np.asarray(v, dtype=float)).ravel()


# glmnet 4.1's coef(..., exact = TRUE) refits through update() of the stored call, whose
# arguments it cannot see from here: the data and every argument of the fit are passed again.
_R_CODE = r"""
function(fun, x, y, beta, lambda, sigma, alpha, type, k, maxsteps, family, intercept, bh_q,
         index, penalty, seed, standardize, status = NULL) {
  suppressPackageStartupMessages(library(selectiveInference))
  n <- nrow(x)
  if (fun == "fixedLassoInf" && family == "cox") {
    if (is.null(beta)) {
      sv <- survival::Surv(y, status)
      fit <- glmnet::glmnet(x, sv, family = "cox", standardize = FALSE, thresh = 1e-14)
      beta <- as.numeric(coef(fit, x = x, y = sv, s = lambda / n, exact = TRUE, family = "cox",
                              standardize = FALSE, thresh = 1e-14))
    }
    # the one-step estimate is a local variable of fixedCoxLassoInf: read it at its exit
    ns <- asNamespace("selectiveInference")
    suppressMessages(trace("fixedCoxLassoInf", where = ns, print = FALSE,
                           exit = quote(assign(".selective_bbar", as.numeric(bbar),
                                               envir = globalenv()))))
    on.exit(suppressMessages(untrace("fixedCoxLassoInf", where = ns)))
    out <- selectiveInference::fixedLassoInf(x, y, beta, lambda, family = "cox", status = status,
                                             alpha = alpha)
    bbar <- get(".selective_bbar", envir = globalenv())
    rm(".selective_bbar", envir = globalenv())
    return(list(vars = out$vars, sign = sign(beta[out$vars]), pv = out$pv, ci = out$ci,
                vlo = out$vlo, vup = out$vup, sd = out$sd, coef0 = bbar, beta = beta,
                coef_unpenalised = out$coef0))
  }
  if (fun == "fixedLassoInf") {
    # type = "full" with p > n (the debiased lasso) wants the intercept in beta
    wide <- family == "gaussian" && type == "full" && ncol(x) > n
    if (is.null(beta)) {
      fit <- glmnet::glmnet(x, y, family = family, standardize = FALSE, intercept = intercept,
                            thresh = 1e-14)
      beta <- as.numeric(coef(fit, x = x, y = y, s = lambda / n, exact = TRUE, family = family,
                              standardize = FALSE, intercept = intercept, thresh = 1e-14))
      if (family == "gaussian" && !(wide && intercept)) beta <- beta[-1]
    }
    null_value <- NULL
    if (wide) {
      # the offsets of the debiased estimates are a local variable of fixedLassoInf: read
      # them at its exit
      ns <- asNamespace("selectiveInference")
      suppressMessages(trace("fixedLassoInf", where = ns, print = FALSE,
                             exit = quote(assign(".selective_null_value", null_value,
                                                 envir = globalenv()))))
      on.exit(suppressMessages(untrace("fixedLassoInf", where = ns)))
    }
    out <- selectiveInference::fixedLassoInf(x, y, beta, lambda, family = family, intercept = intercept,
                         sigma = sigma, alpha = alpha, type = type)
    if (wide) {
      null_value <- get(".selective_null_value", envir = globalenv())
      rm(".selective_null_value", envir = globalenv())
    }
    sgn <- if (family == "gaussian") out$sign else sign(out$coef0)
    return(list(vars = out$vars, sign = sgn, pv = out$pv, ci = out$ci, vlo = out$vlo,
                vup = out$vup, sd = out$sd, coef0 = out$coef0, sigma = out$sigma,
                beta = beta, null_value = null_value, vmat = out$vmat))
  }
  if (fun == "estimateSigma") {
    # estimateSigma draws its folds after checkargs.xy's rnorm(n) (checkcols): the same draws
    # from the same seed give its fold ids
    set.seed(seed)
    invisible(rnorm(n))
    foldid <- sample(rep(seq(10), length = n))
    set.seed(seed)
    out <- estimateSigma(x, y, intercept = intercept, standardize = standardize)
    cv <- glmnet::cv.glmnet(x, y, intercept = intercept, standardize = standardize, foldid = foldid)
    return(list(sigma = out$sigmahat, df = out$df, foldid = foldid, lambda_min = cv$lambda.min,
                lambda = cv$lambda, cvm = cv$cvm))
  }
  if (fun == "manyMeans") {
    out <- manyMeans(y, alpha = alpha, bh.q = bh_q, k = k, sigma = sigma)
    sel <- out$selected.set
    return(list(vars = sel, sign = sign(y[sel]), pv = out$pv, ci = out$ci,
                coef0 = out$mu.hat[sel], threshold = out$threshold))
  }
  if (fun == "groupfsInf") {
    path <- groupfs(x, y, index = index, maxsteps = maxsteps, sigma = sigma, k = penalty,
                    intercept = intercept, center = TRUE, normalize = TRUE, verbose = FALSE)
    out <- groupfsInf(path, verbose = FALSE)
    stat <- if (is.null(out$TF)) out$TC else out$TF
    return(list(vars = out$vars, pv = out$pv, df = out$df, statistic = stat,
                support = out$support, df2 = out$df2, sigma = out$sigma))
  }
  path <- if (fun == "fsInf") fs(x, y, maxsteps = maxsteps, intercept = intercept)
          else lar(x, y, maxsteps = maxsteps, intercept = intercept)
  out <- if (fun == "fsInf") fsInf(path, sigma = sigma, alpha = alpha, k = k, type = type)
         else larInf(path, sigma = sigma, alpha = alpha, k = k, type = type)
  list(vars = out$vars, sign = out$sign, pv = out$pv, ci = out$ci, vlo = out$vlo,
       vup = out$vup, sd = out$sigma * sqrt(rowSums(out$vmat^2)),
       coef0 = out$sign * (out$vmat %*% out$y), sigma = out$sigma, khat = out$khat)
}
"""


def compare_with_r(function: str, X, y=None, *, lam: float | None = None,
                   sigma: float | None = None, alpha: float = 0.1, type: str | None = None,
                   k: int | None = None, maxsteps: int = 2000, family: str = "gaussian",
                   intercept: bool = True, bh_q: float | None = None, beta=None, index=None,
                   penalty: float = 2.0, seed: int = 1, standardize: bool = True,
                   columns=None, status=None, ties: str = "efron") -> pd.DataFrame:
    """Run one analysis with ``selective.conditional`` and with R selectiveInference.

    Parameters
    ----------
    function : {"fixedLassoInf", "fsInf", "larInf", "manyMeans", "groupfsInf", "estimateSigma"}
        The R function to mirror (with :func:`fixed_lasso_inference`, :func:`fs_inference`,
        :func:`lar_inference`, :func:`many_means`, :func:`groupfs_inference` after
        :func:`group_forward_stepwise` with ``center=True``, the package's centring, or
        :func:`estimate_sigma`).
    X, y : array_like or DataFrame (+ response name)
        Data; for ``"manyMeans"`` pass the observations as ``X`` (1-d) and leave ``y`` None.
    lam, sigma, alpha, type, k, maxsteps, family, intercept, bh_q
        As in the Python functions (R's ``bh.q`` is ``bh_q``; with ``bh_q`` given, ``k`` is
        ignored, as in R). For ``"groupfsInf"``, ``sigma`` is used by the path and the test
        (None: the ``n log RSS`` criterion and the truncated F test) and ``maxsteps`` is the
        number of groups entered (at most the number of groups).
    beta : array_like, optional
        ``"fixedLassoInf"`` only: a lasso solution given to both sides (binomial: length p + 1
        with the intercept first). Default: R uses glmnet (``thresh=1e-14``, ``exact=TRUE``) and
        Python its own solver. For the gaussian family the outputs depend on the solution only
        through its support and signs; for the binomial family they depend on its values, so
        pass one ``beta`` to compare the inference rather than the solvers.
    index : sequence of int
        ``"groupfsInf"`` only: the group label of each column.
    penalty : float
        ``"groupfsInf"`` only: the penalty per degree of freedom (R's ``k`` of ``groupfs``).
    status, ties
        ``"fixedLassoInf"`` with ``family="cox"`` only: ``y`` holds the survival times and
        ``status`` 1 for an event, 0 for censoring. R takes the information from ``coxph``
        (Efron ties), so the package's inference uses ``ties`` (default ``"efron"``, R's); the
        lasso (``beta=None``) is solved by the package with the same ``ties`` and given to both
        sides (glmnet solves with Breslow's, which differs when event times are tied). R's ``coef0`` for the
        Cox model is the unpenalised refit; the compared ``estimate`` is R's one-step estimate
        (read inside ``fixedCoxLassoInf``), the refit is in ``frame.attrs["r"]``.
    seed, standardize
        ``"estimateSigma"`` only: R's ``set.seed`` before ``estimateSigma`` (its folds are
        random; the same fold ids, drawn from R's generator as ``estimateSigma`` draws them,
        are given to :func:`estimate_sigma`), and glmnet's ``standardize``.

    Notes
    -----
    ``"fixedLassoInf"`` with ``type="full"`` and p > n (the debiased lasso): R reports
    :math:`M_j y` and its limits, the package the debiased estimate :math:`M_j y - \\nu_j` and
    its limits; R's columns are shifted by R's own offset :math:`\\nu` (read from inside
    ``fixedLassoInf``, and given as ``offset``) so that both sides describe the same
    estimate. R's p-values and intervals there use a mis-scaled null value (see
    :func:`fixed_lasso_inference`), so they differ from the package's.

    Returns
    -------
    pandas.DataFrame
        One row per selected variable, mean or group (``variable``: 1-based index, as in R, or
        the group label), with columns ``<quantity>_python``, ``<quantity>_r`` and
        ``<quantity>_absdiff`` for ``sign``, ``estimate``, ``sd``, ``vlo``, ``vup``,
        ``pvalue``, ``ci_low``, ``ci_high``, ``threshold`` (manyMeans), ``statistic`` and
        ``df`` (groupfsInf), ``offset`` (fixedLassoInf, full, p > n), ``sigma``, ``df`` and
        ``lambda_min`` (estimateSigma, one row), NaN where a quantity does not exist. ``frame.attrs["python"]`` is
        the package's result object and ``frame.attrs["r"]`` R's output as a dict of Python
        values (with ``support``, ``df2``, ``sigma``, glmnet's ``beta``, ...).

    Raises
    ------
    RUnavailableError
        When rpy2, R, selectiveInference or glmnet is missing (the message says how to
        install each of them).
    """
    function = check_choice("function", function, FUNCTIONS)
    from ..conditional import (
        fixed_lasso_inference,
        forward_stepwise,
        fs_inference,
        group_forward_stepwise,
        groupfs_inference,
        lar_inference,
        least_angle_regression,
        many_means,
        solve_lasso,
    )

    r_beta = beta
    if function == "estimateSigma":
        return _compare_estimate_sigma(X, y, columns=columns, intercept=intercept, standardize=standardize,
                                       seed=seed)
    if function == "manyMeans":
        yv = np.asarray(X, dtype=float).ravel()
        kk = None if bh_q is not None else k
        ours = many_means(yv, alpha=alpha, bh_q=bh_q, k=kk, sigma=1.0 if sigma is None else sigma)
        sel = np.asarray(ours.selected, dtype=int)
        py = pd.DataFrame({"variable": sel + 1, "sign": np.sign(yv[sel]), "estimate": ours.mu_hat,
                           "pvalue": ours.pvalue, "ci_low": ours.ci[:, 0], "ci_high": ours.ci[:, 1],
                           "threshold": np.full(sel.size, ours.threshold)})
        Xm = yv[:, None]
        sigma = 1.0 if sigma is None else sigma
    elif function == "groupfsInf":
        Xm, yv, _ = design_and_response(X, y, columns)
        if index is None:
            raise ValueError("`index` (one group label per column) is required for "
                             "function='groupfsInf'; got None.")
        index = [int(g) for g in index]
        maxsteps = min(int(maxsteps), len(set(index)))
        path = group_forward_stepwise(Xm, yv, index, maxsteps=maxsteps, sigma=sigma, k=penalty,
                                      intercept=intercept, center=True, normalize=True)
        ours = groupfs_inference(path, sigma=sigma)
        py = pd.DataFrame({"variable": list(ours.groups), "pvalue": ours.pvalue,
                           "statistic": ours.statistic, "df": ours.df})
    else:
        Xm, yv, _ = design_and_response(X, y, columns)
        if function == "fixedLassoInf":
            if lam is None:
                raise ValueError("`lam` is required for function='fixedLassoInf'; got None.")
            r_beta = beta
            wide = family == "gaussian" and type == "full" and Xm.shape[1] > Xm.shape[0]
            if wide and intercept and beta is not None:
                # R wants the intercept first here; the package's is that of the centred fit
                bv = np.asarray(beta, dtype=float)
                r_beta = np.concatenate([[yv.mean() - Xm.mean(0) @ bv], bv])
            if family == "cox" and beta is None:  # one solution, of the problem with R's ties
                beta = solve_lasso(Xm, yv, lam, family="cox", status=status, ties=ties).beta
                r_beta = beta
            if family == "binomial" and not intercept:
                raise ValueError("R's fixedLassoInf fits the binomial lasso with an intercept only: "
                                 "`intercept` must be True for family='binomial'; got False.")
            cox = dict(status=status, ties=ties) if family == "cox" else {}
            ours = fixed_lasso_inference(Xm, yv, lam, beta=beta, family=family, sigma=sigma,
                                         intercept=intercept, type=type or "partial", alpha=alpha,
                                         sigma_method="plugin", **cox)  # R's plug-in when sigma is None
        elif function == "fsInf":
            ours = fs_inference(forward_stepwise(Xm, yv, maxsteps=maxsteps, intercept=intercept),
                                sigma=sigma, alpha=alpha, k=k, type=type or "active", sigma_method="plugin")
        else:
            ours = lar_inference(least_angle_regression(Xm, yv, maxsteps=maxsteps, intercept=intercept),
                                 sigma=sigma, alpha=alpha, k=k, type=type or "active", sigma_method="plugin")
        f = ours.to_frame()
        py = pd.DataFrame({"variable": f["index"].to_numpy() + 1, "sign": f["sign"],
                           "estimate": f["estimate"], "sd": f["sd"], "vlo": f["vlo"], "vup": f["vup"],
                           "pvalue": f["pvalue"], "ci_low": f["ci_low"],
                           "ci_high": f["ci_high"]}).reset_index(drop=True)
        if "debiasing_offset" in ours.extra:
            py["offset"] = np.asarray(ours.extra["debiasing_offset"])
    ro = _session()
    fun = ro.r(_R_CODE)
    r_type = type or ("partial" if function == "fixedLassoInf" else "active")
    r_index = ro.NULL if index is None else ro.IntVector(index)
    res = fun(function, _r_matrix(ro, Xm), ro.FloatVector(np.asarray(yv, float)),
              _r_num(ro, r_beta), _r_num(ro, lam),
              _r_num(ro, sigma), alpha, r_type, _r_num(ro, k),
              maxsteps, family, intercept, _r_num(ro, bh_q), r_index, penalty, seed, standardize,
              _r_num(ro, status))
    raw = rbridge.to_python(res)
    r = pd.DataFrame({"variable": _vec(raw["vars"]).astype(int), "pvalue": _vec(raw["pv"])})
    if function == "groupfsInf":
        r["statistic"] = _vec(raw["statistic"])
        r["df"] = _vec(raw["df"])
    else:
        r["sign"] = _vec(raw["sign"])
        r["estimate"] = _vec(raw["coef0"])
        for key in ("sd", "vlo", "vup", "threshold"):
            if raw.get(key) is not None:
                r[key] = np.broadcast_to(_vec(raw[key]), (len(r),)) if key == "threshold" else _vec(raw[key])
        ci = np.asarray(raw["ci"], dtype=float).reshape(-1, 2) if raw.get("ci") is not None else None
        if ci is not None:
            r["ci_low"], r["ci_high"] = ci[:, 0], ci[:, 1]
        if raw.get("null_value") is not None:  # R's debiased lasso: M y and its limits, shifted
            nu = _vec(raw["null_value"])
            r["offset"] = nu
            r["estimate"] = r["estimate"] - nu
            r["vlo"] = r["vlo"] - r["sign"] * nu
            r["vup"] = r["vup"] - r["sign"] * nu
    out = _side_by_side(py, r)
    out.attrs["python"] = ours
    out.attrs["r"] = raw
    return out


_QUANTITIES = ("sign", "estimate", "sd", "vlo", "vup", "pvalue", "ci_low", "ci_high", "threshold",
               "statistic", "df", "offset", "sigma", "lambda_min")


def _compare_estimate_sigma(X, y, *, columns, intercept, standardize, seed) -> pd.DataFrame:
    """R's ``estimateSigma`` after ``set.seed(seed)`` and :func:`estimate_sigma` on R's folds."""
    from ..conditional.sigma_estimate import estimate_sigma

    Xm, yv, _ = design_and_response(X, y, columns)
    ro = _session()
    fun = ro.r(_R_CODE)
    res = fun("estimateSigma", _r_matrix(ro, Xm), ro.FloatVector(np.asarray(yv, float)), ro.NULL,
              ro.NULL, ro.NULL, 0.1, "partial", ro.NULL, 1, "gaussian", bool(intercept), ro.NULL,
              ro.NULL, 2.0, int(seed), bool(standardize))
    raw = rbridge.to_python(res)
    foldid = _vec(raw["foldid"]).astype(int)
    ours = estimate_sigma(Xm, yv, intercept=intercept, standardize=standardize, foldid=foldid)
    py = pd.DataFrame({"variable": [0], "sigma": [ours.sigma], "df": [float(ours.df)],
                       "lambda_min": [ours.lambda_min]})
    r = pd.DataFrame({"variable": [0], "sigma": _vec(raw["sigma"]), "df": _vec(raw["df"]),
                      "lambda_min": _vec(raw["lambda_min"])})
    out = _side_by_side(py, r)
    out.attrs["python"] = ours
    out.attrs["r"] = raw
    return out


def _side_by_side(py: pd.DataFrame, r: pd.DataFrame) -> pd.DataFrame:
    merged = py.set_index("variable").add_suffix("_python").join(
        r.set_index("variable").add_suffix("_r"), how="outer")
    out = pd.DataFrame(index=merged.index)
    for q in _QUANTITIES:
        if q not in py.columns and q not in r.columns:
            continue
        for side in ("python", "r"):
            col = f"{q}_{side}"
            out[col] = merged[col].to_numpy(dtype=float) if col in merged else np.nan
        out[f"{q}_absdiff"] = np.abs(out[f"{q}_python"] - out[f"{q}_r"])
    out.index.name = "variable"
    return out
