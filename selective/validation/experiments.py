r"""The holdout-reuse experiment of Dwork et al. (THEORY.md 6.1 and 6.2).

Dwork, Feldman, Hardt, Pitassi, Reingold, Roth, "Generalization in adaptive data analysis and
holdout reuse", NIPS 2015, Section 5 (full version arXiv:1506.02629, Figures 2-4): an analyst
selects variables on a training set, checks them on a holdout set, builds a sign classifier on
the selected variables and reports its holdout accuracy. With labels independent of the
features no classifier beats 50%, yet the standard holdout reports accuracies far above 50%
for large k, because the holdout was used to choose the variables. Answering the holdout
queries through Thresholdout keeps the reported accuracy near the truth.

Protocol (THEORY.md 6.1): n training, n holdout and n fresh points with d attributes i.i.d.
N(0, 1) and labels uniform on {-1, +1} (in the variant of 6.2, ``n_informative`` attributes are
drawn from N(``signal``·y, 1)). :math:`w_i = \frac1n\sum x_i y` on each set;
:math:`W = \{i: w^t_iw^h_i > 0, |w^t_i| \ge 1/\sqrt n, |w^h_i| \ge 1/\sqrt n\}`; :math:`V_k` =
the k elements of W with the largest :math:`|w^t_i|`;
:math:`f(x) = \mathrm{sgn}(\sum_{i\in V_k}\mathrm{sgn}(w^t_i)x_i)`. In the reusable version the
holdout correlations and the final holdout accuracy are answered by the experiment variant of
Thresholdout (Gaussian noise, the paper's T = 0.04 and noise rate 0.01), which has **no**
privacy certificate (THEORY.md 7.11): it reproduces the paper's figure, not a guarantee.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive, check_real, check_rng

__all__ = ["holdout_reuse_experiment", "holdout_reuse_replication", "thresholdout_gaussian_answers",
           "holdout_reuse_summary", "plot_holdout_reuse", "DEFAULT_K_GRID"]

DEFAULT_K_GRID = (10, 20, 30, 45, 70, 100, 150, 200, 250, 300, 400, 500)


def thresholdout_gaussian_answers(train_means: np.ndarray, holdout_means: np.ndarray, *, threshold: float,
                                  sigma: float, rng: np.random.Generator, state: dict | None = None) -> np.ndarray:
    r"""Answers of the Gaussian experiment variant of Thresholdout to a sequence of queries
    whose training and holdout means are given (no certificate; THEORY.md 5.5, 7.11).

    Same law and the same order of random draws as
    :class:`selective.selectors.thresholdout.ThresholdoutExperiment`: threshold noise
    :math:`N(0, (2\sigma)^2)` drawn at the start and after each over-threshold answer,
    comparison noise :math:`N(0, (4\sigma)^2)` per query, answer noise :math:`N(0, \sigma^2)`.
    ``state`` (a dict holding the current threshold noise under "gamma") lets a run continue
    over several calls.
    """
    t = np.asarray(train_means, dtype=float)
    h = np.asarray(holdout_means, dtype=float)
    if state is None:
        state = {}
    if "gamma" not in state:
        state["gamma"] = rng.normal(0.0, 2.0 * sigma)
    out = t.copy()
    gamma = state["gamma"]
    diff = np.abs(h - t)
    for i in range(t.size):  # sequential: the threshold noise is redrawn after each "over"
        eta = rng.normal(0.0, 4.0 * sigma)
        if diff[i] > threshold + gamma + eta:
            gamma = rng.normal(0.0, 2.0 * sigma)
            out[i] = h[i] + rng.normal(0.0, sigma)
    state["gamma"] = gamma
    return out


def _draw(rng: np.random.Generator, n: int, d: int, n_informative: int, signal: float,
          dtype) -> tuple[np.ndarray, np.ndarray]:
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(dtype)
    x = rng.standard_normal((n, d), dtype=dtype)
    if n_informative:
        x[:, :n_informative] += (signal * y)[:, None].astype(dtype)
    return x, y


def _accuracies(order: np.ndarray, signs: np.ndarray, ks: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Accuracy of the sign classifier on the first k variables of ``order``, for every k."""
    if order.size == 0:
        return np.full(ks.size, 0.5)
    kmax = min(int(ks.max()), order.size)
    margins = np.cumsum(x[:, order[:kmax]] * signs[:kmax].astype(x.dtype), axis=1, dtype=np.float64)
    cols = np.minimum(ks, kmax) - 1
    pred = np.where(margins[:, cols] >= 0, 1.0, -1.0)  # sgn(0) taken as +1
    return (pred == y[:, None]).mean(axis=0)


def holdout_reuse_replication(*, n: int = 10_000, d: int = 10_000, k_grid: Sequence[int] = DEFAULT_K_GRID,
                              n_informative: int = 0, signal: float = 0.06, threshold: float = 0.04,
                              sigma: float = 0.01, rng: Any = None, dtype=np.float32) -> pd.DataFrame:
    """One replication of the experiment: a tidy frame with columns
    ``method`` ("standard holdout" / "thresholdout"), ``k``, ``split`` ("training", "holdout",
    "fresh") and ``accuracy``. For Thresholdout the "holdout" row is the accuracy *reported* by
    Thresholdout; the other rows are the classifier's actual accuracies."""
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    ks = np.array(sorted({check_int("k_grid[]", k, low=1) for k in k_grid}))
    if ks.size == 0:
        raise ValueError("`k_grid` must hold at least one k; got none.")
    n_informative = check_int("n_informative", n_informative, low=0, high=d)
    signal = check_real("signal", signal)
    threshold = check_real("threshold", threshold)
    sigma = check_positive("sigma", sigma)
    rng = check_rng(rng)
    xt, yt = _draw(rng, n, d, n_informative, signal, dtype)
    xh, yh = _draw(rng, n, d, n_informative, signal, dtype)
    xf, yf = _draw(rng, n, d, n_informative, signal, dtype)
    wt = (yt @ xt).astype(np.float64) / n
    wh = (yh @ xh).astype(np.float64) / n
    cut = 1.0 / math.sqrt(n)
    rows = []

    def run(method: str, wh_seen: np.ndarray, report_holdout):
        keep = np.flatnonzero((wt * wh_seen > 0) & (np.abs(wt) >= cut) & (np.abs(wh_seen) >= cut))
        order = keep[np.argsort(-np.abs(wt[keep]), kind="stable")]
        signs = np.sign(wt[order])
        acc_t = _accuracies(order, signs, ks, xt, yt)
        acc_h = _accuracies(order, signs, ks, xh, yh)
        acc_f = _accuracies(order, signs, ks, xf, yf)
        reported = report_holdout(acc_t, acc_h)
        for j, k in enumerate(ks):
            rows.append((method, int(k), "training", float(acc_t[j])))
            rows.append((method, int(k), "holdout", float(reported[j])))
            rows.append((method, int(k), "fresh", float(acc_f[j])))

    run("standard holdout", wh, lambda at, ah: ah)
    state: dict = {}
    wh_thr = thresholdout_gaussian_answers(wt, wh, threshold=threshold, sigma=sigma, rng=rng, state=state)
    run("thresholdout", wh_thr,
        lambda at, ah: thresholdout_gaussian_answers(at, ah, threshold=threshold, sigma=sigma, rng=rng, state=state))
    return pd.DataFrame(rows, columns=["method", "k", "split", "accuracy"])


def holdout_reuse_experiment(*, n: int = 10_000, d: int = 10_000, k_grid: Sequence[int] = DEFAULT_K_GRID,
                             n_reps: int = 100, n_informative: int = 0, signal: float = 0.06,
                             threshold: float = 0.04, sigma: float = 0.01, rng: Any = None,
                             progress: bool = False, dtype=np.float32, n_jobs: int = 1) -> pd.DataFrame:
    """The whole experiment: ``n_reps`` independent replications (one seed spawns one stream per
    replication), as a tidy frame with a ``rep`` column. Defaults are the paper's sizes
    (n = d = 10,000, k up to 500, 100 runs; about 1.2 GB of float32 features per replication).
    ``n_informative=20, signal=0.06`` gives the variant with signal (THEORY.md 6.2).
    ``n_jobs`` local worker processes run the replications (each holds its own data: memory
    grows with it); replication r always uses the r-th spawned stream and the frame is
    assembled in replication order, so the result does not depend on ``n_jobs``."""
    n_reps = check_int("n_reps", n_reps, low=1)
    n_jobs = check_int("n_jobs", n_jobs, low=1)
    seed_seq = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(
        None if rng is None else int(rng)) if not isinstance(rng, np.random.Generator) else None
    children = (seed_seq.spawn(n_reps) if seed_seq is not None
                else [np.random.SeedSequence(int(s)) for s in rng.integers(0, 2**63, size=n_reps)])
    it = range(n_reps)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="holdout reuse", unit="rep", file=sys.stderr)
    options = dict(n=n, d=d, k_grid=k_grid, n_informative=n_informative, signal=signal, threshold=threshold,
                   sigma=sigma, dtype=dtype)
    if n_jobs == 1 or n_reps == 1:
        frames = [_replication(r, children[r], options) for r in it]
    else:
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=min(n_jobs, n_reps), backend="loky", return_as="generator")  # in order
        frames = list(par(delayed(_replication)(r, children[r], options) for r in it))
    return pd.concat(frames, ignore_index=True)


SPLITS = ("training", "holdout", "fresh")


def holdout_reuse_summary(frame: pd.DataFrame, *, decimals: int = 4) -> pd.DataFrame:
    """Mean and standard deviation of the accuracy over replications, one row per method and k.

    Parameters
    ----------
    frame : pandas.DataFrame
        As returned by :func:`holdout_reuse_experiment`.
    decimals : int, default 4
        Rounding of the printed numbers.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``k``, then ``"<split> mean"`` and ``"<split> sd"`` for the training,
        holdout and fresh splits: flat, readable names (no tuples) for Markdown, LaTeX or CSV.
        The standard deviation is over replications (NaN with a single one).
    """
    if not isinstance(frame, pd.DataFrame) or not {"method", "split", "k", "accuracy"} <= set(frame.columns):
        raise ValueError("`frame` must be the tidy frame of holdout_reuse_experiment (columns method, k, split, "
                         f"accuracy); got {type(frame).__name__} with columns {list(getattr(frame, 'columns', []))!r}.")
    check_int("decimals", decimals, low=0)
    stats = frame.groupby(["method", "k", "split"])["accuracy"].agg(["mean", "std"]).unstack("split")
    out = pd.DataFrame(index=stats.index)
    for split in [s for s in SPLITS if s in stats.columns.get_level_values("split")]:
        out[f"{split} mean"] = stats[("mean", split)]
        out[f"{split} sd"] = stats[("std", split)]
    return out.round(decimals).reset_index()


def _replication(r: int, seed: np.random.SeedSequence, options: dict) -> pd.DataFrame:
    f = holdout_reuse_replication(rng=np.random.default_rng(seed), **options)
    f.insert(0, "rep", r)
    return f


def plot_holdout_reuse(frame: pd.DataFrame, *, axes=None):
    """The paper's figure: training, holdout and fresh accuracy against k (mean ± one standard
    deviation over replications), one panel per method. Needs matplotlib.

    Parameters
    ----------
    frame : pandas.DataFrame
        As returned by :func:`holdout_reuse_experiment`.
    axes : sequence of matplotlib Axes, optional
        At least two: the standard holdout and Thresholdout panels (default: a new figure).

    Returns
    -------
    sequence of matplotlib Axes
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover
        raise ImportError("plotting needs matplotlib: pip install 'selective[plot]'") from exc
    methods = ["standard holdout", "thresholdout"]
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    elif len(axes) < len(methods):
        raise ValueError(f"`axes` must hold at least {len(methods)} axes, one per method; got {len(axes)}.")
    summary = frame.groupby(["method", "split", "k"])["accuracy"].agg(["mean", "std"]).reset_index()
    for ax, method in zip(axes[: len(methods)], methods, strict=True):
        for split, color in (("training", "C0"), ("holdout", "C1"), ("fresh", "C2")):
            s = summary[(summary.method == method) & (summary.split == split)]
            ax.plot(s.k, s["mean"], color=color, label=split if split != "holdout" or method == "standard holdout"
                    else "holdout (reported by Thresholdout)")
            ax.fill_between(s.k, s["mean"] - s["std"].fillna(0), s["mean"] + s["std"].fillna(0), color=color, alpha=0.2)
        ax.axhline(0.5, color="0.5", linestyle=":")
        ax.set_title(method)
        ax.set_xlabel("number of selected variables k")
        ax.legend(fontsize="small")
    axes[0].set_ylabel("accuracy")
    return axes
