"""Plots of simulation results: rejection rate against the level, with Monte-Carlo bands.

Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import check_choice
from .outcomes import COLUMN_LABELS, MEASURES

__all__ = ["plot_rejection_curves", "plot_validation"]


def plot_rejection_curves(result: Any, *, measure: str = "type_one_error", ax: Any = None,
                          columns: Sequence[str] | None = None, title: str | None = None) -> Any:
    """Rejection rate against α for every p-value column, with Monte-Carlo bands and the α line.

    Bands are the intervals of ``result.frame`` (Clopper-Pearson or Korn-Graubard) at
    ``result.confidence_level``. A valid column stays below the dashed line y = α (for
    ``measure="type_one_error"``) up to Monte-Carlo error.

    Parameters
    ----------
    result : SimulationResult
        A result of :func:`selective.validation.harness.simulate` (this module reads its
        ``frame``, ``columns``, ``alphas``, ``name``, ``n_reps`` and ``confidence_level``).
    measure : {"type_one_error", "fwer", "power", "discovery_rate"}
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    columns : sequence of str, optional
        P-value columns to draw (default: all of the result's).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_choice("measure", measure, MEASURES)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.0))
    f = result.frame[result.frame.measure == measure]
    cols = result.columns if columns is None else tuple(columns)
    for c in cols:
        g = f[f.column == c].sort_values("alpha")
        if g.empty or g["rate"].isna().all():
            continue
        line, = ax.plot(g.alpha, g.rate, marker="o", ms=3, label=COLUMN_LABELS.get(c, c))
        ax.fill_between(g.alpha, g.ci_low, g.ci_high, color=line.get_color(), alpha=0.2, linewidth=0)
    grid = np.asarray(result.alphas)
    if measure in ("type_one_error", "fwer"):
        ax.plot(grid, grid, color="black", linestyle="--", linewidth=1, label="alpha")
    ax.set_xlabel("alpha")
    ax.set_ylabel({"type_one_error": "type-I error", "fwer": "family-wise error", "power": "power",
                   "discovery_rate": "discovery rate"}[measure])
    ax.set_title(title if title is not None else f"{result.name} ({result.n_reps} reps, "
                 f"{int(round(100 * result.confidence_level))}% bands)", fontsize=9)
    ax.set_xlim(0, max(grid) * 1.02)
    ax.set_ylim(0, 1 if measure in ("power", "discovery_rate") else min(1.0, max(2 * max(grid), ax.get_ylim()[1])))
    ax.legend(fontsize=7, loc="best")
    return ax


def plot_validation(results: dict[str, Any], *, measure: str = "type_one_error", ncols: int = 3) -> Any:
    """A grid of :func:`plot_rejection_curves`, one panel per scenario.

    Parameters
    ----------
    results : dict of str to SimulationResult
        As returned by :func:`selective.validation.validate.validate`.
    measure : {"type_one_error", "fwer", "power", "discovery_rate"}
    ncols : int
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(results))
    nc = min(ncols, n)
    nr = math.ceil(n / nc)
    fig, axes = plt.subplots(nr, nc, figsize=(5.0 * nc, 3.8 * nr), squeeze=False)
    for ax, res in zip(axes.ravel()[: len(results)], results.values(), strict=True):
        plot_rejection_curves(res, measure=measure, ax=ax)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig
