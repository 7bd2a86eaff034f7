"""The figures of a corrected table: naive vs corrected p-values, and the ledger's information.

Both take a :class:`~selective.analysis.report.CorrectedTable` (``table.plot()`` and
``table.plot_ledger()`` call them) and need matplotlib (``pip install 'selective[plot]'``).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

__all__ = ["plot_pvalues", "plot_ledger"]

_LABEL_WIDTH = 45  # characters per line of a hypothesis label on the p-value plot
_VERSION_USED = "p-value used at the corrected level"   # the trust rule's note (analysis.trust)

#: Columns of the sharper routes drawn beside the naive and best corrected p-values when present.
_OPTIONAL_SERIES = (("pvalue_conditional", "D", "conditional", "C2"), ("pvalue_hybrid", "^", "hybrid", "C4"),
                    ("pvalue_fission", "v", "fission", "C5"))


def plot_pvalues(table, ax=None, *, xmin: float | None = None):
    """Naive vs best corrected p-value per hypothesis on a log scale, with the alpha line.

    When the table has them, the conditional, hybrid and fission p-values are drawn too, each with
    its own marker (a withheld cell is not drawn). Where an exact or permutation version of the
    test was used at the corrected level (the trust rule), the corrected p-value rests on it, not
    on the naive one drawn beside it: its square is hollow, with its own legend entry, so that a
    gap wider than the correction's factor is not read as an error. A row whose best corrected
    p-value is withheld says so at its right end.

    The axis starts at ``xmin`` (default: the smallest p-value shown, but never below
    ``alpha * 1e-4``), so that the region around alpha stays readable; p-values below it
    are drawn at the left edge as left-pointing triangles (naive above, corrected below the
    row's line).

    Parameters
    ----------
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    xmin : float, optional
        Left end of the p-value axis, in (0, alpha).

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    Needs matplotlib (``pip install 'selective[plot]'``).
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'selective[plot]'") from exc
    if xmin is not None and not (0 < xmin < table.alpha):
        raise ValueError(f"`xmin` must be in (0, alpha = {table.alpha:g}); got {xmin!r}.")
    # long hypothesis labels are wrapped, and the figure grows to hold them beside the axis
    labels = [textwrap.fill(str(i), width=_LABEL_WIDTH) for i in table.frame.index]
    lines = sum(max(1, lab.count("\n") + 1) for lab in labels)
    made = ax is None
    if made:
        wide = max((len(line) for lab in labels for line in lab.splitlines()), default=0)
        _, ax = plt.subplots(figsize=(4.5 + 0.065 * wide, 1.6 + 0.2 * lines + 0.3 * max(1, len(labels))))
    y = np.arange(len(table.frame))
    naive = table.frame["pvalue_naive"].to_numpy(dtype=float)
    best = table.frame["pvalue_best"].to_numpy(dtype=float)
    notes = table.frame["note"].tolist() if "note" in table.frame.columns else [None] * len(naive)
    version = np.array([isinstance(n, str) and _VERSION_USED in n for n in notes], dtype=bool)
    series = [(naive, "o", "naive", "C0")]
    if not version.all():
        series.append((np.where(version, np.nan, best), "s", "best corrected", "C1"))
    if version.any():
        series.append((np.where(version, best, np.nan), "s", "best corrected, from the exact / permutation p-value",
                       "none"))
    # the sharper routes the table has (conditional, hybrid, fission), each with its own marker
    for col, marker, name, color in _OPTIONAL_SERIES:
        if col in table.frame.columns and table.frame[col].notna().any():
            series.append((table.frame[col].to_numpy(dtype=float), marker, name, color))
    shown = np.concatenate([v for v, *_ in series])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if xmin is None:
        smallest = shown.min() if shown.size else table.alpha / 10
        xmin = min(max(smallest / 2, table.alpha * 1e-4), table.alpha / 10)
    below = []
    for yi, a, b in zip(y, naive, best, strict=True):
        if np.isfinite(a) and np.isfinite(b):
            ax.plot([max(a, xmin), max(b, xmin)], [yi, yi], color="0.7", zorder=1)
    shifts = np.linspace(-0.15, 0.15, len(series))
    for (values, marker, name, color), shift in zip(series, shifts, strict=True):
        ok = np.isfinite(values)
        inside = ok & (values >= xmin)
        style = {"facecolors": "none", "edgecolors": "C1"} if color == "none" else {"color": color}
        ax.scatter(values[inside], y[inside], label=name if ok.any() else "_nolegend_", marker=marker, zorder=2,
                   clip_on=False, **style)
        out = ok & (values < xmin)
        if out.any():
            below.append(ax.scatter(np.full(out.sum(), xmin), y[out] + shift, marker="<", s=60, zorder=3,
                                    clip_on=False, **style))
    # a withheld corrected p-value is said so at the row's right end (the reason is under the table)
    for yi, b in zip(y, best, strict=True):
        if not np.isfinite(b):
            ax.text(1.0, yi, " corrected: withheld", va="center", ha="left", fontsize="small", color="0.35",
                    clip_on=False)
    ax.axvline(table.alpha, color="C3", linestyle="--", label=f"alpha = {table.alpha:g}")
    if below:
        ax.scatter([], [], marker="<", color="0.3", label=f"p < {xmin:.0e} (at the edge)")
    ax.set_xscale("log")
    ax.set_xlim(xmin, 1.0)
    ax.set_yticks(y, labels, fontsize="small")
    ax.set_xlabel("p-value")
    ax.set_ylim(len(table.frame) - 0.5, -0.5)
    # below the tick labels and the axis label, a fixed distance (not a share of the axes, which
    # with one or two rows is too short to clear the label)
    from matplotlib.transforms import ScaledTranslation

    under = ax.transAxes + ScaledTranslation(0.0, -0.5, ax.figure.dpi_scale_trans)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=under, ncol=2, fontsize="small",
              frameon=False)
    if made:  # the legend sits below the axes: make room for it in the figure itself
        ax.figure.tight_layout()
    return ax


def plot_ledger(table, ax=None):
    """Cumulative max-information and mutual information (bits) after each selection step.

    Both series start at 0 bits before the first look and have a marker per step, so a
    single step is a visible segment.

    Parameters
    ----------
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib Axes
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover
        raise ImportError("plotting needs matplotlib: pip install 'selective[plot]'") from exc
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.2))
    rows = table.ledger_rows
    x = np.arange(len(rows) + 1)
    ticks = ["before selection"] + [textwrap.fill(str(r.get("label") or f"step {int(r.get('step', i)) + 1}"), 28)
                                    for i, r in enumerate(rows)]
    top = 0.0
    for key, name, marker in (("cumulative_maxinfo_bits", "max-information", "o"),
                              ("cumulative_mutual_info_bits", "mutual information", "s")):
        values = np.array([0.0] + [float(r[key]) if r.get(key) is not None else math.nan for r in rows])
        if len(rows) and not np.isnan(values[1:]).all():
            ax.plot(x, values, marker=marker, label=f"{name} (bits)")
            last = values[np.isfinite(values)][-1]
            ax.annotate(f"{last:.3g}", (x[np.isfinite(values)][-1], last), textcoords="offset points",
                        xytext=(6, 0), va="center", fontsize="small")
            top = max(top, float(np.nanmax(values)))
    if not rows:
        ax.text(0.5, 0.5, "no selection step recorded", transform=ax.transAxes, ha="center", va="center")
    ax.set_xticks(x, ticks, fontsize="small")
    ax.set_xlim(-0.3, len(rows) + 0.6)
    ax.set_ylim(0, max(1.0, top * 1.15))
    ax.set_ylabel("bits")
    ax.set_title("Information used by the selection (cumulative)", fontsize="medium")
    if len(rows):
        ax.legend(fontsize="small", loc="upper left")
    return ax
