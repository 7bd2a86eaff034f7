"""Corrected p-value tables for reports: pandas frame, Markdown, LaTeX, HTML, CSV, plots.

Every rendering starts from :attr:`CorrectedTable.frame`, whose columns are the same whatever
the analysis (NaN where a column does not apply). Naive numbers are always shown, labelled as
naive.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CorrectedTable", "RenderMixin", "format_pvalue", "format_number", "TABLE_COLUMNS"]

TABLE_COLUMNS = (
    "estimate",
    "ci_low",
    "ci_high",
    "statistic",
    "df",
    "pvalue_naive",
    "pvalue_maxinfo",
    "pvalue_mutual_info",
    "pvalue_bonferroni",
    "pvalue_best",
    "best_route",
    "pvalue_adjusted",
    "ci_corrected_low",
    "ci_corrected_high",
    "note",
)

_HEADERS = {
    "estimate": "Estimate",
    "ci_low": "CI low (naive)",
    "ci_high": "CI high (naive)",
    "statistic": "Statistic",
    "df": "df",
    "pvalue_naive": "p (naive)",
    "pvalue_maxinfo": "p (max-info)",
    "pvalue_mutual_info": "p (mutual info)",
    "pvalue_bonferroni": "p (Bonferroni)",
    "pvalue_best": "p (best valid)",
    "best_route": "best route",
    "pvalue_adjusted": "p (adjusted)",
    "ci_corrected_low": "CI low (corrected)",
    "ci_corrected_high": "CI high (corrected)",
    "note": "note",
}

_SHORT = ("estimate", "pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni",
          "pvalue_best", "best_route", "ci_corrected_low", "ci_corrected_high")


def format_pvalue(p: float, *, digits: int = 2, floor: float = 1e-4) -> str:
    """Format a p-value for a paper: two significant digits, "< 1e-04" below ``floor``,
    "n/a" for NaN (a route that does not apply)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    p = float(p)
    if p < floor:
        return f"< {floor:.0e}"
    if p >= 0.9995:
        return "1"
    return f"{p:.{digits}g}" if p >= 0.001 else f"{p:.{digits - 1}e}"


def format_number(x: Any, digits: int = 3) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


class RenderMixin:
    """Markdown, LaTeX and HTML renderings of a table, from its ``_display(columns)`` frame
    (formatted strings) and its ``footnote``."""

    footnote: str

    def _display(self, columns):  # pragma: no cover - every table defines it
        raise NotImplementedError

    def to_markdown(self, *, columns: Any = "short", footnote: bool = True) -> str:
        """A GitHub-flavoured Markdown table (p-values formatted for papers) and its footnote."""
        text = self._display(columns).to_markdown()
        if footnote and self.footnote:
            text += "\n\n" + self.footnote
        return text

    def to_latex(self, *, columns: Any = "short", caption: str | None = None,
                 label: str | None = None, footnote: bool = True) -> str:
        """A LaTeX ``table`` with booktabs rules (needs ``\\usepackage{booktabs}``)."""
        d = self._display(columns)

        def esc(s: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                         ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
                s = s.replace(a, b)
            return s.replace("< ", "$<$ ")

        lines = [r"\begin{table}[ht]", r"\centering"]
        if caption:
            lines.append(rf"\caption{{{esc(caption)}}}")
        if label:
            lines.append(rf"\label{{{label}}}")
        lines.append(r"\begin{tabular}{l" + "r" * len(d.columns) + "}")
        lines.append(r"\toprule")
        lines.append(" & ".join([esc(d.index.name or "")] + [esc(c) for c in d.columns]) + r" \\")
        lines.append(r"\midrule")
        for idx, row in d.iterrows():
            lines.append(" & ".join([esc(str(idx))] + [esc(str(v)) for v in row]) + r" \\")
        lines.append(r"\bottomrule")
        lines.append(r"\end{tabular}")
        if footnote and self.footnote:
            lines.append(r"\par\smallskip{\footnotesize " + esc(self.footnote) + "}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def to_html(self, *, columns: Any = "short", footnote: bool = True) -> str:
        """An HTML table (escaped) with the footnote as a caption paragraph."""
        text = self._display(columns).to_html(escape=True)
        if footnote and self.footnote:
            text += f"\n<p class=\"selective-footnote\">{html.escape(self.footnote)}</p>\n"
        return text



@dataclass(frozen=True)
class CorrectedTable(RenderMixin):
    """One row per tested hypothesis: naive and corrected p-values and intervals.

    Attributes
    ----------
    frame : pandas.DataFrame
        Indexed by hypothesis, columns :data:`TABLE_COLUMNS`.
    alpha : float
        Level of the corrected intervals.
    footnote : str
        The ledger total and the theorems behind each column.
    ledger_rows : list of dict
        The ledger's steps (label, certificate, cumulative bits) for the audit trail and plots.
    """

    frame: pd.DataFrame
    alpha: float
    footnote: str = ""
    ledger_rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        missing = [c for c in TABLE_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"`frame` lacks the column(s) {missing!r}.")

    def __repr__(self) -> str:
        return f"CorrectedTable({len(self.frame)} hypotheses, alpha={self.alpha:g})\n{self.to_markdown(columns='short')}"

    def _display(self, columns: str | tuple[str, ...]) -> pd.DataFrame:
        cols = _SHORT if columns == "short" else TABLE_COLUMNS if columns == "all" else tuple(columns)
        bad = [c for c in cols if c not in TABLE_COLUMNS]
        if bad:
            raise ValueError(f"`columns` must be 'short', 'all' or names from {TABLE_COLUMNS}; got {bad!r}.")
        out = pd.DataFrame(index=self.frame.index)
        for c in cols:
            v = self.frame[c]
            if c.startswith("pvalue"):
                out[_HEADERS[c]] = [format_pvalue(x) for x in v]
            elif c in ("best_route", "note"):
                out[_HEADERS[c]] = [str(x) if isinstance(x, str) else "" for x in v]
            else:
                out[_HEADERS[c]] = [format_number(x) for x in v]
        out.index.name = "hypothesis"
        return out

    def to_csv(self, path_or_buf=None, **kwargs: Any):
        """The full numeric frame as CSV (no formatting, every column)."""
        return self.frame.to_csv(path_or_buf, **kwargs)

    def plot(self, ax=None):
        """Naive vs best corrected p-value per hypothesis on a log scale, with the α line.

        Needs matplotlib (``pip install 'selective[plot]'``). Returns the axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plotting needs matplotlib: pip install 'selective[plot]'") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 0.5 + 0.45 * max(1, len(self.frame))))
        y = np.arange(len(self.frame))
        floor = 1e-300
        naive = np.clip(self.frame["pvalue_naive"].to_numpy(dtype=float), floor, 1)
        best = np.clip(self.frame["pvalue_best"].to_numpy(dtype=float), floor, 1)
        for yi, a, b in zip(y, naive, best):
            ax.plot([a, b], [yi, yi], color="0.7", zorder=1)
        ax.scatter(naive, y, label="naive", marker="o", zorder=2)
        ax.scatter(best, y, label="best corrected", marker="s", zorder=2)
        ax.axvline(self.alpha, color="C3", linestyle="--", label=f"alpha = {self.alpha:g}")
        ax.set_xscale("log")
        ax.set_yticks(y, [str(i) for i in self.frame.index])
        ax.set_xlabel("p-value")
        ax.invert_yaxis()
        ax.legend(loc="best", fontsize="small")
        return ax

    def plot_ledger(self, ax=None):
        """Cumulative max-information (bits) and mutual information (bits) after each step."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover
            raise ImportError("plotting needs matplotlib: pip install 'selective[plot]'") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3))
        rows = self.ledger_rows
        x = np.arange(1, len(rows) + 1)
        ax.step(x, [r["cumulative_maxinfo_bits"] for r in rows], where="post", label="max-information (bits)")
        ax.step(x, [r["cumulative_mutual_info_bits"] for r in rows], where="post", label="mutual information (bits)")
        ax.set_xticks(x, [r["label"] or str(r["step"]) for r in rows], rotation=30, ha="right", fontsize="small")
        ax.set_ylabel("bits")
        ax.legend(fontsize="small")
        return ax
