"""Corrected p-value tables for reports: pandas frame, Markdown, LaTeX, HTML, CSV, text, plots.

Every rendering starts from :attr:`CorrectedTable.frame`, whose columns are the same whatever
the analysis (NaN where a column does not apply). Naive numbers are always shown, labelled as
naive.

Column sets (the ``columns`` argument of the renderings):

- ``"short"`` (Markdown, HTML, :meth:`CorrectedTable.summary`): estimate, N, every p-value
  column, the best route and the corrected interval; the adjusted p-value column whenever
  ``report(adjust=...)`` filled it.
- ``"compact"`` (LaTeX): estimate, naive and best valid p-values, the adjusted p-value when
  present, and the corrected interval in one column: a table that fits the text width of a
  journal page. N is a column when it differs between rows, a note when it does not; the
  route of the best valid p-value is a note.
- ``"all"``: every column of :data:`TABLE_COLUMNS`.
- a tuple of names from :data:`TABLE_COLUMNS` (and ``"ci_corrected"``, the corrected interval
  as one column).

A table whose analysis used fission (``Analysis.fission``) or ran a test with ``conditional_on``
also has the :data:`FISSION_COLUMNS` or :data:`CONDITIONAL_COLUMNS` (and :data:`HYBRID_COLUMNS` after a
:class:`~selective.selectors.TopK` screen) before "note"; "short" and
"compact" then show their p-values after the best valid one, and "all" every such column.
"""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .formatting import (
    _NUMERIC_CELL,
    _SIZES_PT,
    _latex_cell,
    _latex_header,
    _width_em,
    column_notes,
    conditional_notes,
    empty_column_notes,
    fission_notes,
    format_number,
    format_pvalue,
    latex_escape,
    mark_text_cells,
    markdown_table,
    row_numbers,
    text_table,
    withheld_notes,
)

__all__ = [
    "CorrectedTable",
    "RenderMixin",
    "format_pvalue",
    "format_number",
    "markdown_table",
    "text_table",
    "latex_escape",
    "TABLE_COLUMNS",
    "CONDITIONAL_COLUMNS",
    "HYBRID_COLUMNS",
    "FISSION_COLUMNS",
    "OPTIONAL_COLUMNS",
    "LATEX_PACKAGES",
]

TABLE_COLUMNS = (
    "estimate",
    "ci_low",
    "ci_high",
    "statistic",
    "df",
    "n_obs",
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

#: Columns present only when a test was run with ``Analysis.test(..., conditional_on=...)``:
#: the p-value and interval conditional on a top-k screen (inference on winners), before "note".
CONDITIONAL_COLUMNS = ("pvalue_conditional", "ci_conditional_low", "ci_conditional_high")
#: With them after a (non-randomized) top-k screen: the hybrid p-value and interval of inference on winners.
HYBRID_COLUMNS = ("pvalue_hybrid", "ci_hybrid_low", "ci_hybrid_high")
#: Present only in an analysis with ``Analysis.fission``: the test's p-value on the confirmation copy.
FISSION_COLUMNS = ("pvalue_fission",)
#: Every column a table may have beyond :data:`TABLE_COLUMNS`, in table order (before "note").
OPTIONAL_COLUMNS = FISSION_COLUMNS + CONDITIONAL_COLUMNS + HYBRID_COLUMNS

_HEADERS = {
    "estimate": "Estimate", "ci_low": "CI low (naive)", "ci_high": "CI high (naive)", "statistic": "Statistic",
    "df": "df", "n_obs": "N", "pvalue_naive": "p (naive)", "pvalue_maxinfo": "p (max-info)",
    "pvalue_mutual_info": "p (mutual info)", "pvalue_bonferroni": "p (Bonferroni)", "pvalue_best": "p (best valid)",
    "best_route": "best route", "pvalue_adjusted": "p (adjusted)", "ci_corrected_low": "CI low (corrected)",
    "ci_corrected_high": "CI high (corrected)", "ci_corrected": "CI (corrected)", "pvalue_fission": "p (fission)",
    "pvalue_conditional": "p (conditional)", "ci_conditional_low": "CI low (conditional)",
    "ci_conditional_high": "CI high (conditional)", "pvalue_hybrid": "p (hybrid)", "ci_hybrid_low": "CI low (hybrid)",
    "ci_hybrid_high": "CI high (hybrid)", "note": "note",
}

#: Column sets by name; ``pvalue_adjusted`` is dropped from "short" and "compact" when all NaN.
COLUMN_SETS = {
    "short": ("estimate", "n_obs", "pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni",
              "pvalue_best", "best_route", "pvalue_adjusted", "ci_corrected_low", "ci_corrected_high"),
    "compact": ("estimate", "n_obs", "pvalue_naive", "pvalue_best", "pvalue_adjusted", "ci_corrected"),
    "all": TABLE_COLUMNS,
}

#: The LaTeX packages :meth:`RenderMixin.to_latex` needs, as preamble lines.
LATEX_PACKAGES = (
    r"\usepackage{booktabs}",   # \toprule, \midrule, \bottomrule
    r"\usepackage{array}",      # >{\raggedright\arraybackslash} column prefixes
    r"\usepackage{tabularx}",   # the wrapped hypothesis column (fit=None, "landscape")
    r"\usepackage{graphicx}",   # \resizebox (fit="resize")
    r"\usepackage{pdflscape}",  # the landscape page (fit="landscape")
)

FIT_CHOICES = (None, "resize", "landscape")
_NOTE_SHARE = 0.3   # the width of the note column in LaTeX, as a share of the line
LABEL_CHOICES = ("auto", "wrap", "legend")
def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {allowed!r}; got {value!r}.")


class RenderMixin:
    """Markdown, LaTeX, HTML and plain-text renderings of a table.

    A table defines ``_display(columns)`` (a frame of formatted strings indexed by the row
    labels) and ``footnote``; :attr:`_default_columns` maps each rendering to its default
    column set.
    """

    footnote: str
    _default_columns: dict[str, Any] = {"markdown": "short", "latex": "short", "html": "short"}

    def _display(self, columns):  # pragma: no cover - every table defines it
        raise NotImplementedError

    def _resolve(self, kind: str, columns: Any) -> Any:
        return self._default_columns[kind] if columns is None else columns

    def to_markdown(self, *, columns: Any = None, footnote: bool = True) -> str:
        """A GitHub-flavoured Markdown table (p-values formatted for papers) and its footnote.

        Parameters
        ----------
        columns : str or tuple of str, optional
            Column set ("short", "all", ...) or column names; default: the table's Markdown set.
        footnote : bool
            Append the footnote as a paragraph.

        Returns
        -------
        str
            Pipes inside labels are escaped (``\\|``), so every row has the same number of cells.
        """
        cols = self._resolve("markdown", columns)
        text = markdown_table(self._display(cols))
        for note in self._conditional_notes(cols, row_numbers(len(getattr(self, "frame", ())))):
            text += "\n\n" + note
        if footnote and self.footnote:
            text += "\n\n" + self.footnote
        return text

    def _conditional_notes(self, columns: Any, names: list[str]) -> list[str]:
        """What the conditional cells rest on and why cells are withheld, when the note column is
        not shown (the reasons must travel with the numbers)."""
        frame = getattr(self, "frame", None)
        if frame is None or "note" not in frame or not hasattr(self, "columns_for"):
            return []
        cols = self.columns_for(columns)
        if "note" in cols:
            return empty_column_notes(frame, cols, names)
        notes = frame["note"].tolist()
        out = conditional_notes(notes, names) if "pvalue_conditional" in cols else []
        out += fission_notes(notes, names) if "pvalue_fission" in cols else []
        return out + withheld_notes(notes, names) + empty_column_notes(frame, cols, names)

    def _legend_notes(self, labels: list[str]) -> str:
        return "; ".join(f"H{i}: {latex_escape(lab)}" for i, lab in enumerate(labels, 1)) + "."

    def _extra_notes(self, columns: Any, names: list[str]) -> list[str]:
        """Plain-text notes for what a column set leaves out (none by default); ``names`` are
        the row names as the table shows them."""
        return []

    def to_latex(self, *, columns: Any = None, caption: str | None = None, label: str | None = None,
                 footnote: bool = True, fit: str | None = None, labels: str = "auto",
                 font_size: str | None = "small", label_width: str = "0.3\\linewidth",
                 position: str = "htbp", text_width: float = 345.0) -> str:
        r"""A LaTeX ``table`` with booktabs rules, sized for the page, the footnote left-aligned below.

        The body is rendered by pandas' ``Styler.to_latex``. Numbers are in math mode (true minus
        signs, :math:`a\times10^{b}` instead of ``ae-b``), text is escaped. Needs the packages
        of :data:`LATEX_PACKAGES` in the preamble.

        Parameters
        ----------
        columns : str or tuple of str, optional
            Column set or names; default: the table's LaTeX set (for :class:`CorrectedTable`
            the "compact" set, which fits the text width of an article).
        caption, label : str, optional
            ``\caption`` (escaped) and ``\label`` (verbatim).
        footnote : bool
            Put the footnote under the table, left-aligned, in ``\footnotesize``.
        fit : {None, "resize", "landscape"}
            None: a ``tabularx`` as wide as the text, the hypothesis column wraps. "resize":
            a ``tabular`` shrunk to the text width with ``\resizebox`` when it is wider (never
            enlarged). "landscape": the same on a landscape page (``pdflscape``), where the
            text width is the page's height.
        labels : {"auto", "wrap", "legend"}
            "wrap": full row labels in a wrapping column. "legend": rows labelled H1, H2, ...
            with the full labels in the notes under the table. "auto": "wrap" when the other
            columns, as estimated from their characters, leave at least 30% of ``text_width``
            to the labels, "legend" otherwise, and then shrunk with ``\resizebox`` if the
            estimate comes near the text width (only ever shrinking a table wider than the
            text).
        font_size : str or None
            A size command without backslash ("small", "footnotesize"), or None for the
            document's size.
        label_width : str
            Width of the wrapped label column with ``fit="resize"`` or ``"landscape"``.
        position : str
            Float placement of the ``table`` environment.
        text_width : float
            The document's text width in pt, used only by ``labels="auto"`` (345 pt: the
            article class on letter or A4 paper; twice that for ``fit="landscape"``).

        Returns
        -------
        str
        """
        _check_choice("fit", fit, FIT_CHOICES)
        _check_choice("labels", labels, LABEL_CHOICES)
        if font_size is not None and not re.fullmatch(r"[A-Za-z]+", str(font_size)):
            raise ValueError(f"`font_size` must be a LaTeX size name such as 'small' or None; got {font_size!r}.")
        d = self._display(self._resolve("latex", columns))
        row_labels = [str(i) for i in d.index]
        values: dict[str, list[str]] = {}
        aligns = []
        for c in d.columns:
            cells = [str(v).strip() for v in d[c]]
            numeric = all(_NUMERIC_CELL.match(v) for v in cells)
            aligns.append("r" if numeric else "l")
            values[_latex_header(c, aligns[-1])] = [_latex_cell(v) for v in d[c]]
        em = _SIZES_PT.get(font_size or "normalsize", 10)
        page = text_width * (1.45 if fit == "landscape" else 1.0)
        # the note column (long sentences) wraps in a paragraph column of a fixed share of the line
        is_note = [c == _HEADERS["note"] for c in d.columns]
        others = sum(_NOTE_SHARE * page if note else max(_width_em(x) for x in [h, *cells]) * em + 6
                     for note, (h, cells) in zip(is_note, values.items(), strict=True))
        shrink = fit is not None
        if labels == "auto":
            labels = "wrap" if fit is not None or others <= 0.7 * page else "legend"
            # the estimate is rough: a legend table that may be too wide is shrunk if it is
            shrink = shrink or (labels == "legend" and others + 2.5 * em >= 0.9 * page)
        if labels == "legend":
            first = [f"H{i}" for i in range(1, len(d) + 1)]
        else:
            first = [latex_escape(x) for x in row_labels]
        body = pd.DataFrame({latex_escape(d.index.name or "Hypothesis").capitalize(): first})
        for h, cells in values.items():
            body[h] = cells
        wrap = r">{\raggedright\arraybackslash}"
        if labels == "legend":
            first_spec = "l"
        elif fit is not None:
            first_spec = wrap + f"p{{{label_width}}}"
        else:
            first_spec = wrap + "X"
        spec = "@{}" + first_spec + "".join(wrap + f"p{{{_NOTE_SHARE:g}\\linewidth}}" if note else a
                                             for note, a in zip(is_note, aligns, strict=True)) + "@{}"
        tabular = body.style.hide(axis="index").to_latex(column_format=spec, hrules=True).strip()
        if first_spec.endswith("X"):
            tabular = tabular.replace(r"\begin{tabular}{", r"\begin{tabularx}{\linewidth}{", 1)
            head, _, tail = tabular.rpartition(r"\end{tabular}")
            tabular = head + r"\end{tabularx}" + tail
        if shrink:
            tabular = "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n" + tabular + "%\n}"

        lines = [rf"\begin{{table}}[{position}]", r"\centering"]
        if caption:
            lines.append(rf"\caption{{{latex_escape(caption)}}}")
        if label:
            lines.append(rf"\label{{{label}}}")
        if font_size:
            lines.append("\\" + font_size)
        lines.append(r"\setlength{\tabcolsep}{3pt}")
        lines.append(tabular)
        notes = []
        if labels == "legend":
            notes.append(self._legend_notes(row_labels))
        shown_names = first if labels == "legend" else row_labels
        notes += [latex_escape(n) for n in self._extra_notes(self._resolve("latex", columns), shown_names)]
        notes += [latex_escape(n) for n in self._conditional_notes(self._resolve("latex", columns), shown_names)]
        if footnote and self.footnote:
            notes.append(latex_escape(self.footnote))
        if notes:
            lines.append(r"\par\smallskip")
            lines.append(r"\begin{minipage}{\linewidth}\raggedright\footnotesize")
            lines.append("\\par\\smallskip\n".join(notes))
            lines.append(r"\end{minipage}")
        lines.append(r"\end{table}")
        if fit == "landscape":
            lines = [r"\begin{landscape}"] + lines + [r"\end{landscape}"]
        return "\n".join(lines) + "\n"

    def to_html(self, *, columns: Any = None, footnote: bool = True) -> str:
        """An HTML table (escaped, one header row) with the footnote as a paragraph under it.

        Parameters
        ----------
        columns : str or tuple of str, optional
            Column set or names; default: the table's HTML set.
        footnote : bool
            Append the footnote as ``<p class="selective-footnote">``.

        Returns
        -------
        str
        """
        cols = self._resolve("html", columns)
        d = self._display(cols).reset_index()
        text = mark_text_cells(d.to_html(escape=True, index=False, border=0, classes="selective-table", na_rep=""),
                               [not all(_NUMERIC_CELL.match(str(v).strip()) for v in d[c]) for c in d.columns],
                               [24.0 if c == _HEADERS["note"] else 0.0 for c in d.columns])
        text = f'<div class="selective-table-wrap" style="overflow-x: auto">\n{text}\n</div>'  # the notes stay in view
        for note in self._conditional_notes(cols, row_numbers(len(getattr(self, "frame", ())))):
            text += f"\n<p class=\"selective-note\">{html.escape(note)}</p>"
        if footnote and self.footnote:
            text += f"\n<p class=\"selective-footnote\">{html.escape(self.footnote)}</p>\n"
        return text

    def _repr_html_(self) -> str:
        """The HTML table, for notebooks."""
        return self.to_html()


@dataclass(frozen=True)
class CorrectedTable(RenderMixin):
    """One row per tested hypothesis: naive and corrected p-values and intervals.

    Attributes
    ----------
    frame : pandas.DataFrame
        Indexed by hypothesis, columns :data:`TABLE_COLUMNS` (and :data:`CONDITIONAL_COLUMNS` when
        a test was conditioned on a screen).
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

    _default_columns = {"markdown": "short", "latex": "compact", "html": "short"}

    def __post_init__(self) -> None:
        missing = [c for c in TABLE_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"`frame` lacks the column(s) {missing!r}.")

    def __repr__(self) -> str:
        head = f"CorrectedTable({len(self.frame)} hypotheses, alpha={self.alpha:g})"
        return head + "\n" + self.to_markdown(columns="short")

    def __str__(self) -> str:
        return self.summary()

    def columns_for(self, columns: Any) -> tuple[str, ...]:
        """The column names a ``columns`` argument stands for in this table.

        Parameters
        ----------
        columns : str or sequence of str
            "short", "compact", "all", or names from :data:`TABLE_COLUMNS` (and "ci_corrected").

        Returns
        -------
        tuple of str
            For "short" and "compact", ``pvalue_adjusted`` is included only when some row has
            an adjusted p-value (``report(adjust=...)``).
        """
        if isinstance(columns, str):
            if columns not in COLUMN_SETS:
                raise ValueError(f"`columns` must be one of {tuple(COLUMN_SETS)} or a tuple of names from "
                                 f"{TABLE_COLUMNS}; got {columns!r}.")
            cols = COLUMN_SETS[columns]
            present = tuple(c for c in OPTIONAL_COLUMNS if c in self.frame.columns)
            extra = present if columns == "all" else tuple(c for c in present if c.startswith("pvalue"))
            at = cols.index("note") if columns == "all" else cols.index("pvalue_best") + 1
            cols = cols[:at] + extra + cols[at:]
            if columns != "all" and self.frame["pvalue_adjusted"].isna().all():
                cols = tuple(c for c in cols if c != "pvalue_adjusted")
            if columns == "compact" and self._common_n() is not None:
                cols = tuple(c for c in cols if c != "n_obs")
            return cols
        cols = tuple(columns)
        bad = [c for c in cols if c not in TABLE_COLUMNS and c != "ci_corrected" and not (
            c in OPTIONAL_COLUMNS and c in self.frame.columns)]
        if bad:
            raise ValueError(f"`columns` must be one of {tuple(COLUMN_SETS)} or names from {TABLE_COLUMNS} "
                             f"(or 'ci_corrected'); got {bad!r}.")
        return cols

    def _common_n(self) -> int | None:
        """The number of observations when every test used the same one, else None."""
        n = self.frame["n_obs"].to_numpy(dtype=float)
        if len(n) and np.isfinite(n).all() and (n == n[0]).all():
            return int(n[0])
        return None

    def _extra_notes(self, columns: Any, names: list[str]) -> list[str]:
        """Notes for what the column set leaves out (formatting.column_notes)."""
        return column_notes(self.frame, self.columns_for(columns), names, self._common_n())

    def _display(self, columns: Any) -> pd.DataFrame:
        out = pd.DataFrame(index=self.frame.index)
        for c in self.columns_for(columns):
            if c == "ci_corrected":
                lows, highs = self.frame["ci_corrected_low"], self.frame["ci_corrected_high"]
                out[_HEADERS[c]] = ["n/a" if (pd.isna(lo) and pd.isna(hi)) else
                                    f"[{format_number(lo)}, {format_number(hi)}]"
                                    for lo, hi in zip(lows, highs, strict=True)]
                continue
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
        """The full numeric frame as CSV (no formatting, every column).

        Parameters
        ----------
        path_or_buf : str, path or file-like, optional
            Where to write; None returns the text.
        **kwargs
            Passed to :meth:`pandas.DataFrame.to_csv`.
        """
        return self.frame.to_csv(path_or_buf, **kwargs)

    def ledger_frame(self) -> pd.DataFrame:
        """The ledger's steps as a frame: step, label, certificate, cumulative bits.

        Steps are numbered from 1, as the notes name them ("step 1"); the ledger's own records
        (``ledger_rows``, the audit file) keep their 0-based index.

        Returns
        -------
        pandas.DataFrame
            One row per selection step; empty (with the columns) when nothing was selected.
        """
        cols = ["step", "label", "certificate", "cumulative_maxinfo_bits", "cumulative_mutual_info_bits"]
        rows = [{c: r.get(c) for c in cols} for r in self.ledger_rows]
        for row in rows:
            row["step"] = None if row["step"] is None else int(row["step"]) + 1
        return pd.DataFrame(rows, columns=cols)

    def ledger_to_markdown(self) -> str:
        """The ledger's steps as a Markdown table (pipes in labels escaped), bits to 3 digits.

        Returns
        -------
        str
        """
        frame = self.ledger_frame()
        shown = frame.astype(object)
        for c in ("cumulative_maxinfo_bits", "cumulative_mutual_info_bits"):
            shown[c] = [format_number(x) for x in frame[c]]
        shown["step"] = [format_number(x) for x in frame["step"]]
        shown["label"] = ["" if x is None else str(x) for x in frame["label"]]
        return markdown_table(shown, index=False)

    def summary(self, *, columns: Any = "short", width: int = 100) -> str:
        """A text block for the console: the table, then the ledger and the notes.

        Like R's printout of a selective-inference fit: one line of context, the table in
        plain text, then the selection steps and the notes naming the theorems.

        Parameters
        ----------
        columns : str or tuple of str
            Column set or names of the table.
        width : int
            Width at which the notes are wrapped.

        Returns
        -------
        str
        """
        d = self._display(columns)
        lines = [f"Corrected p-values after selection ({len(self.frame)} test(s), alpha = {self.alpha:g})", ""]
        lines.append(text_table(d))
        if self.ledger_rows:
            lines += ["", "Selection ledger (cumulative bits):"]
            for r in self.ledger_frame().to_dict("records"):
                lines.append(f"  step {r.get('step')}: {r.get('label') or ''} -- {r.get('certificate')}; "
                             f"max-information {format_number(r.get('cumulative_maxinfo_bits'))}, "
                             f"mutual information {format_number(r.get('cumulative_mutual_info_bits'))}")
        notes = [(i, n) for i, n in zip(self.frame.index, self.frame["note"], strict=True)
                 if isinstance(n, str) and n]
        if notes:
            lines += ["", "Row notes:"]
            lines += [textwrap.fill(f"{i}: {n}", width, initial_indent="  ", subsequent_indent="    ")
                      for i, n in notes]
        if self.footnote:
            lines += ["", "Note:", textwrap.fill(self.footnote, width, initial_indent="  ", subsequent_indent="  ")]
        return "\n".join(lines)

    def plot(self, ax=None, *, xmin: float | None = None):
        """Naive vs best corrected p-value per hypothesis (:func:`~selective.analysis.figures.plot_pvalues`)."""
        from .figures import plot_pvalues

        return plot_pvalues(self, ax=ax, xmin=xmin)

    def plot_ledger(self, ax=None):
        """Cumulative information after each step (:func:`~selective.analysis.figures.plot_ledger`)."""
        from .figures import plot_ledger

        return plot_ledger(self, ax=ax)
