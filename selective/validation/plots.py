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

__all__ = ["plot_rejection_curves", "plot_validation", "plot_power"]


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


#: Columns of the power plot with a colour of their own, in this order (others take the remaining ones;
#: carving is drawn in black).
_POWER_ORDER = ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best",
                "pvalue_split", "pvalue_conditional", "pvalue_winners", "pvalue_hybrid", "pvalue_randomized",
                "pvalue_fission", "pvalue_oracle", "pvalue_transcript", "pvalue_split_directional")


def _legend_label(methods) -> str:
    """One legend entry for a column that scenarios label differently (the carving of the lasso and of
    Freedman's screen; oracles of a feature or a variable): the labels' shared head before " (", or the
    distinct heads joined by " / "."""
    labels = list(dict.fromkeys(str(m) for m in methods))
    if len(labels) == 1:
        return labels[0]
    return " / ".join(dict.fromkeys(m.split(" (")[0] for m in labels))


def plot_power(power: Any, *, alpha: float | None = None, title: str | None = None) -> Any:
    """A dot plot of the power of every column in every scenario with real effects.

    One row per scenario, one marker per column at its power, with its Monte-Carlo interval as a
    horizontal line. Columns that are not valid in a scenario (the naive test) are drawn hollow:
    their power is not a merit. Baselines (data splitting, data fission, the oracle) are drawn
    as squares, the package's routes as circles.

    Parameters
    ----------
    power : pandas.DataFrame
        A :func:`selective.validation.validate.power_table`.
    alpha : float, optional
        The level of the table, for the axis label.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if power is None or len(power) == 0:
        raise ValueError("`power` must have at least one row (a scenario with real effects); got an empty table.")
    scenarios = list(dict.fromkeys(power.scenario))
    columns = list(dict.fromkeys(power.column))
    # one clearly distinct colour per column (tab20's pairs of light and dark shades read as one)
    palette = list(plt.get_cmap("tab10").colors) + list(plt.get_cmap("Dark2").colors)
    fixed = {c: palette[i] for i, c in enumerate(_POWER_ORDER)}
    fixed["pvalue_carving"] = (0.0, 0.0, 0.0)
    # the spare colours skip Dark2's purple and pink, which read as tab10's (best valid, exact conditional)
    dark2 = list(plt.get_cmap("Dark2").colors)
    spare = iter(dark2[4:] + palette)
    color_of = {c: fixed[c] if c in fixed else next(spare) for c in columns}
    # each scenario gets a band with one line per column it has, so that no two markers share a line
    ys, centres, edges, top = {}, [], [], 0.0
    for s in scenarios:
        present = [c for c in columns if ((power.scenario == s) & (power.column == c)).any()]
        for i, c in enumerate(present):
            ys[s, c] = top + 0.5 + i
        centres.append(top + len(present) / 2)
        top += len(present) + 0.6
        edges.append(top - 0.3)
    fig, ax = plt.subplots(figsize=(8.0, 0.6 + 0.12 * top))
    for c in columns:
        g = power[power.column == c]
        y = np.array([ys[s, c] for s in g.scenario])
        color = color_of[c]
        marker = "s" if bool(g.baseline.iloc[0]) else "o"
        label = _legend_label(g.method)
        ax.hlines(y, g.ci_low, g.ci_high, color=color, linewidth=1.2)
        valid = g.valid.to_numpy(bool)
        if valid.any():
            ax.plot(g.rate[valid], y[valid], marker, color=color, ms=5, label=label, linestyle="none")
        if (~valid).any():
            ax.plot(g.rate[~valid], y[~valid], marker, markerfacecolor="white", markeredgecolor=color, ms=5,
                    linestyle="none", label=label + " (not valid)")
    ax.set_yticks(centres)
    ax.set_yticklabels(scenarios, fontsize=8)
    ax.tick_params(axis="y", length=0)
    ax.set_ylim(top - 0.3, -0.3)
    for e in edges[:-1]:
        ax.axhline(e, color="0.8", linewidth=0.6)
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x", color="0.92", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("power" + ("" if alpha is None else f" at alpha = {alpha:g}") + " (lines: Monte-Carlo intervals)")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False)
    return fig
