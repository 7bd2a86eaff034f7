"""Run an R selectiveInference reference case with ``selective.conditional``.

``run_r_case(case, data_dir)`` reads the case's CSV input(s), calls the function named in
``case["function"]`` with the case's ``args`` and returns the outputs under the case file's
own ``output`` keys (R conventions: 1-based indices, R's sign conventions for ``vmat``).
The comparison with R's values, with the tolerances of the reference README, lives in
``tests/conditional/test_against_r.py``.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pandas as pd

from selective.conditional import (
    fixed_lasso_inference,
    forward_stepwise,
    fs_inference,
    lar_inference,
    least_angle_regression,
    many_means,
)

__all__ = ["run_r_case", "SUPPORTED_FUNCTIONS"]

SUPPORTED_FUNCTIONS = ("fixedLassoInf", "fsInf", "larInf", "manyMeans", "groupfsInf")


def _xy(case: dict, data_dir: pathlib.Path):
    inp = case["inputs"]["xy"]
    df = pd.read_csv(pathlib.Path(data_dir) / inp["file"])
    X = df[inp["x_columns"]].to_numpy(dtype=float)
    y = df[inp["y_column"]].to_numpy(dtype=float)
    return X, y


def _gridrange(args):
    g = args.get("gridrange")
    return (-100.0, 100.0) if g is None else (float(g[0]), float(g[1]))


def _maxsteps(case, default=2000):
    call = case.get("path", {}).get("call", "")
    m = re.search(r"maxsteps\s*=\s*(\d+)", call)
    return int(m.group(1)) if m else default


def _common(res) -> dict:
    return {
        "vars": [int(j) + 1 for j in res.index],
        "coef0": np.asarray(res.estimate),
        "sd": np.asarray(res.sd),
        "pv": np.asarray(res.pvalue),
        "ci": np.asarray(res.ci),
        "tailarea": np.asarray(res.tailarea),
        "vlo": np.asarray(res.vlo),
        "vup": np.asarray(res.vup),
        "alpha": res.alpha,
    }


def run_r_case(case: dict, data_dir: pathlib.Path) -> dict:
    """Outputs of ``selective.conditional`` for one reference case, keyed like ``case["output"]``.

    Raises ``NotImplementedError`` for a function this package does not provide.
    """
    fn = case["function"]
    args = case["args"]
    if fn == "fixedLassoInf":
        X, y = _xy(case, data_dir)
        family = args.get("family", "gaussian")
        res = fixed_lasso_inference(
            X, y, float(args["lambda"]), beta=np.asarray(args["beta"], dtype=float),
            family=family, sigma=None if args.get("sigma") is None else float(args["sigma"]),
            intercept=bool(args.get("intercept", True)),
            type=args.get("type", "partial") if family == "gaussian" else "partial",
            alpha=float(args.get("alpha", 0.1)), tol_beta=float(args.get("tol.beta", 1e-5)),
            tol_kkt=float(args.get("tol.kkt", 0.1)), gridrange=_gridrange(args), sigma_method="plugin")
        out = _common(res)
        out["lambda"] = res.lam
        if family == "gaussian":
            out.update(type=res.type, sigma=res.sigma, sign=[int(s) for s in res.sign],
                       vmat=np.asarray(res.contrasts))
        else:
            out.update(type="partial,full", zscore0=np.asarray(res.extra["zscore"]),
                       sign_of_coef0=[int(s) for s in res.sign])
        return out
    if fn in ("fsInf", "larInf"):
        X, y = _xy(case, data_dir)
        ms = _maxsteps(case)
        if fn == "fsInf":
            path = forward_stepwise(X, y, maxsteps=ms)
            infer = fs_inference
        else:
            path = least_angle_regression(X, y, maxsteps=ms)
            infer = lar_inference
        res = infer(path, sigma=None if args.get("sigma") is None else float(args["sigma"]),
                    alpha=float(args.get("alpha", 0.1)),
                    k=None if args.get("k") is None else int(args["k"]),
                    type=args.get("type", "active"), mult=float(args.get("mult", 2)),
                    ntimes=int(args.get("ntimes", 2)), gridrange=_gridrange(args), sigma_method="plugin")
        out = _common(res)
        out.update(type=res.type, k=res.k, khat=res.khat, sigma=res.sigma,
                   sign=[int(s) for s in res.sign],
                   vmat=np.asarray(res.contrasts) * np.asarray(res.sign)[:, None])
        if fn == "larInf" and res.type == "active":
            # R's pv.modspac is the spacing test with limits [lambda_{k+1}, lambda_{k-1}];
            # see test_against_r.py for R's pv.spacing.
            out["pv_modspac"] = np.asarray(res.pvalue_spacing)
            out["pv_spacing"] = np.asarray(res.pvalue_spacing)
            out["pv_covtest"] = np.asarray(res.pvalue_covtest)
            lam_next = np.concatenate([path.lam, [path.next_lam]])[1:res.k + 1]
            out["spacing_lower_z"] = lam_next / np.asarray(res.extra["knot_sd"])
            lam_prev = np.concatenate([[np.inf], path.lam])[:res.k]
            out["spacing_upper_z"] = lam_prev / np.asarray(res.extra["knot_sd"])
        # path outputs, for the discrete comparison of the path itself
        out["path_action"] = [int(j) + 1 for j in path.action]
        out["path_sign"] = [int(s) for s in path.sign]
        if fn == "larInf":
            out["path_lambda"] = np.asarray(path.lam)
        return out
    if fn == "manyMeans":
        inp = case["inputs"]["y"]
        y = pd.read_csv(pathlib.Path(data_dir) / inp["file"])[inp["y_column"]].to_numpy(float)
        bh_q = args.get("bh.q")
        k = args.get("k")
        if bh_q is not None:
            k = None  # R uses bh.q when given
        res = many_means(y, alpha=float(args.get("alpha", 0.1)),
                         bh_q=None if bh_q is None else float(bh_q),
                         k=None if k is None else int(k), sigma=float(args.get("sigma", 1)))
        out = {"selected.set": [int(i) + 1 for i in res.selected],
                "mu.hat": np.asarray(res.mu_hat_full), "mu_hat_selected": np.asarray(res.mu_hat),
                "pv": np.asarray(res.pvalue), "ci": np.asarray(res.ci),
                "threshold": res.threshold, "sigma": res.sigma, "bh.q": res.bh_q, "k": res.k}
        if res.method == "top-K":  # R's label for BH selection is not in the shared half
            out["method"] = res.method
        return out
    if fn == "groupfsInf":
        from selective.conditional import group_forward_stepwise, groupfs_inference

        X, y = _xy(case, data_dir)
        index = list(args["index"])
        path = group_forward_stepwise(
            X, y, index, maxsteps=int(args.get("maxsteps", 4)),
            sigma=args.get("groupfs_sigma"), k=float(args.get("k", 2)),
            intercept=bool(args.get("intercept", True)), center=bool(args.get("center", True)),
            normalize=bool(args.get("normalize", True)))
        sig = args.get("groupfsInf_sigma")
        res = groupfs_inference(path, sigma=None if sig is None else float(sig))
        out = {"vars": list(res.groups), "pv": np.asarray(res.pvalue),
               "df": [int(d) for d in res.df],
               "support": [np.asarray(s) for s in res.support],
               res.statistic_name: np.asarray(res.statistic),
               "path_action": list(path.action)}
        if res.statistic_name == "TC":
            out["sigma"] = res.sigma
        else:
            out["df2"] = res.df2
        return out
    raise NotImplementedError(f"`case['function']` must be one of {SUPPORTED_FUNCTIONS}; "
                              f"got {fn!r}.")
