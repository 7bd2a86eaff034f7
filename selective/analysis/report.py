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
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CorrectedTable",
    "RenderMixin",
    "format_pvalue",
    "format_number",
    "markdown_table",
    "text_table",
    "latex_escape",
    "TABLE_COLUMNS",
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

_HEADERS = {
    "estimate": "Estimate",
    "ci_low": "CI low (naive)",
    "ci_high": "CI high (naive)",
    "statistic": "Statistic",
    "df": "df",
    "n_obs": "N",
    "pvalue_naive": "p (naive)",
    "pvalue_maxinfo": "p (max-info)",
    "pvalue_mutual_info": "p (mutual info)",
    "pvalue_bonferroni": "p (Bonferroni)",
    "pvalue_best": "p (best valid)",
    "best_route": "best route",
    "pvalue_adjusted": "p (adjusted)",
    "ci_corrected_low": "CI low (corrected)",
    "ci_corrected_high": "CI high (corrected)",
    "ci_corrected": "CI (corrected)",
    "note": "note",
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
LABEL_CHOICES = ("auto", "wrap", "legend")
_SIZES_PT = {"tiny": 5, "scriptsize": 7, "footnotesize": 8, "small": 9, "normalsize": 10, "large": 12}


def format_pvalue(p: float, *, digits: int = 2, floor: float = 1e-4) -> str:
    """Format a p-value for a paper.

    Parameters
    ----------
    p : float
        The p-value; NaN (a route that does not apply) prints as "n/a".
    digits : int
        Significant digits.
    floor : float
        Values below it print as "< 1e-04" (for the default floor).

    Returns
    -------
    str
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    p = float(p)
    if p < floor:
        return f"< {floor:.0e}"
    if p >= 0.9995:
        return "1"
    return f"{p:.{digits}g}" if p >= 0.001 else f"{p:.{digits - 1}e}"


def format_number(x: Any, digits: int = 3) -> str:
    """Format a number for a table: integers as integers, others with ``digits`` significant digits.

    Parameters
    ----------
    x : float, int, str or None
        Strings pass through; None gives an empty cell and NaN "n/a".
    digits : int
        Significant digits of non-integers; scientific notation below 1e-3 and from 1e5 on.

    Returns
    -------
    str
    """
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    text = f"{x:.{digits}g}"
    if "e" in text:  # e.g. 3250.3 at 3 digits: print the integer part rather than 3.25e+03
        text = f"{x:.0f}"
    return text


# --- Markdown -------------------------------------------------------------------------------------------------

_NUMERIC_CELL = re.compile(r"^(?:< ?)?[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$|^-?inf$|^n/a$|^$|^\[.*\]$")


def _md_cell(value: Any) -> str:
    """A Markdown table cell: pipes escaped (``\\|``, GitHub-flavoured Markdown), no line breaks."""
    text = "" if value is None else str(value)
    text = re.sub(r"\s*\n\s*", " ", text)
    return text.replace("|", r"\|")


def _aligned(frame: pd.DataFrame, index: bool, cell) -> tuple[list[str], list[list[str]], list[int], list[bool]]:
    """Header, body, column widths and right-alignment flags of ``frame``'s cells as ``cell`` renders them."""
    columns = [str(c) for c in frame.columns]
    body = [[cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    if index:
        columns = [str(frame.index.name or "")] + columns
        body = [[cell(i)] + row for i, row in zip(frame.index, body, strict=True)]
    header = [cell(c) for c in columns]
    right = [j > 0 or not index for j in range(len(header))]
    for j in range(len(header)):
        cells = [r[j] for r in body]
        right[j] = right[j] and bool(cells) and all(_NUMERIC_CELL.match(c.strip()) for c in cells)
    widths = [max([len(header[j]), 3] + [len(r[j]) for r in body]) for j in range(len(header))]
    return header, body, widths, right


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """A GitHub-flavoured Markdown table of ``frame``, every cell shown as its ``str``.

    Pipes in labels and cells are escaped (``\\|``), so a cell never splits. Columns whose cells
    all look numeric (including "< 1e-04" and "n/a") are right-aligned, the others left-aligned.

    Parameters
    ----------
    frame : pandas.DataFrame
        Cells are rendered with ``str`` (format numbers first).
    index : bool
        Include the index as the first column (headed by the index name).

    Returns
    -------
    str
    """
    header, body, widths, right = _aligned(frame, index, _md_cell)

    def line(cells: list[str]) -> str:
        padded = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join((("-" * (w + 1) + ":") if r else (":" + "-" * (w + 1)))
                          for w, r in zip(widths, right, strict=True)) + "|"
    return "\n".join([line(header), rule] + [line(r) for r in body])


def text_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """A plain-text table of ``frame`` (aligned columns, a rule under the header), for consoles.

    Parameters
    ----------
    frame : pandas.DataFrame
        Cells are rendered with ``str``.
    index : bool
        Include the index as the first column.

    Returns
    -------
    str
    """
    header, body, widths, right = _aligned(frame, index, lambda v: re.sub(r"\s*\n\s*", " ", str(v)))

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True))

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r).rstrip() for r in body])


# --- LaTeX ----------------------------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf")


def latex_escape(text: Any) -> str:
    """Escape text for LaTeX (outside math): every special character, in one pass.

    ``\\`` becomes ``\\textbackslash{}`` (not ``\\textbackslash\\{\\}``), and ``<``, ``>``, ``|``
    their text commands, which print correctly in the default (OT1) font encoding too.

    Parameters
    ----------
    text : str
        Text to escape (other objects are converted with ``str``).

    Returns
    -------
    str
    """
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def _latex_number(token: str) -> str:
    """One formatted number in math mode: a true minus sign, ``a\\times10^{b}`` for ``aeb``."""
    sign = "-" if token.startswith("-") else ""
    token = token.lstrip("+-")
    if token == "inf":
        return sign + r"\infty"
    if "e" in token:
        mantissa, exponent = token.split("e")
        power = f"10^{{{int(exponent)}}}"
        return sign + (power if float(mantissa) == 1 else mantissa + r"\times" + power)
    return sign + token


def _latex_cell(text: str) -> str:
    """A formatted cell as LaTeX: numbers, "< 1e-04" and intervals in math mode, the rest escaped."""
    text = str(text)
    stripped = text.strip()
    if stripped in ("", "n/a"):
        return stripped
    if _NUMERIC_CELL.match(stripped) and (stripped[:1] != "[" or _NUMBER.search(stripped)):
        body = _NUMBER.sub(lambda m: _latex_number(m.group(0)), stripped)
        body = body.replace("< ", "<")
        return f"${body}$"
    return latex_escape(text)


def _latex_header(text: str, align: str) -> str:
    """A column header as LaTeX: escaped, "p" and "N" in math italics, a parenthesis on a second
    line (a one-column ``tabular`` aligned like its column), so that headers are no wider than
    their cells."""
    out = latex_escape(text)
    if out.startswith("p ("):
        out = "$p$" + out[1:]
    if out == "N":
        return "$N$"
    first, sep, rest = out.partition(" (")
    if not sep and " " in out:
        first, _, rest = out.partition(" ")
        sep = " "
    if not sep:
        return out
    second = "(" + rest if sep == " (" else rest
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{first}\\{second}\end{{tabular}}"


def _width_em(latex: str) -> float:
    """A rough width, in em, of a cell or header as typeset (Computer Modern, text or math)."""
    lines = re.split(r"\\\\", re.sub(r"\\(begin|end)\{tabular\}(\[b\]\{@\{\}[lrc]@\{\}\})?", "", latex))
    widest = 0.0
    for line in lines:
        text = re.sub(r"\^\{([^}]*)\}", lambda m: "\x00" * len(m.group(1)), line)  # superscripts
        text = text.replace(r"\times", "\x01").replace(r"\infty", "\x01").replace("$", "")
        text = re.sub(r"\\text[a-z]+\{\}|\\[#$%&_{}]", "x", text)
        em = 0.0
        for ch in text:
            if ch == "\x00":
                em += 0.36
            elif ch in "\x01-<>+=":
                em += 1.05  # binary operator or relation with its spaces
            elif ch in ".,:;![]()|' ":
                em += 0.3
            elif ch.isupper() or ch in "mwMW":
                em += 0.75
            else:
                em += 0.5
        widest = max(widest, em)
    return widest


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
        text = markdown_table(self._display(self._resolve("markdown", columns)))
        if footnote and self.footnote:
            text += "\n\n" + self.footnote
        return text

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
        others = sum(max(_width_em(x) for x in [h, *cells]) * em + 6 for h, cells in values.items())
        page = text_width * (1.45 if fit == "landscape" else 1.0)
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
        spec = "@{}" + first_spec + "".join(aligns) + "@{}"
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
        d = self._display(self._resolve("html", columns))
        d = d.reset_index()
        text = d.to_html(escape=True, index=False, border=0, classes="selective-table", na_rep="")
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
            if columns != "all" and self.frame["pvalue_adjusted"].isna().all():
                cols = tuple(c for c in cols if c != "pvalue_adjusted")
            if columns == "compact" and self._common_n() is not None:
                cols = tuple(c for c in cols if c != "n_obs")
            return cols
        cols = tuple(columns)
        bad = [c for c in cols if c not in TABLE_COLUMNS and c != "ci_corrected"]
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
        """Notes for the compact set: the common N and the route of each best valid p-value."""
        cols = self.columns_for(columns)
        notes = []
        n = self._common_n()
        if "n_obs" not in cols and n is not None:
            notes.append(f"N = {n} observations in every test.")
        if "best_route" not in cols:
            routes = [r if isinstance(r, str) else "" for r in self.frame["best_route"]]
            used = [r for r in dict.fromkeys(routes) if r]
            if len(used) == 1 and all(routes):
                notes.append(f"Best valid p-values from the {used[0]} route.")
            elif used:
                parts = []
                for route in used:
                    rows = [str(i) for i, r in zip(names, routes, strict=True) if r == route]
                    parts.append(f"{route} for {', '.join(rows)}")
                notes.append("Best valid p-values: " + ". ".join(parts) + ".")
        return notes

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

        Returns
        -------
        pandas.DataFrame
            One row per selection step; empty (with the columns) when nothing was selected.
        """
        cols = ["step", "label", "certificate", "cumulative_maxinfo_bits", "cumulative_mutual_info_bits"]
        rows = [{c: r.get(c) for c in cols} for r in self.ledger_rows]
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
            for r in self.ledger_rows:
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
        """Naive vs best corrected p-value per hypothesis on a log scale, with the alpha line.

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
        if xmin is not None and not (0 < xmin < self.alpha):
            raise ValueError(f"`xmin` must be in (0, alpha = {self.alpha:g}); got {xmin!r}.")
        if ax is None:
            _, ax = plt.subplots(figsize=(6.5, 1.0 + 0.45 * max(1, len(self.frame))))
        y = np.arange(len(self.frame))
        naive = self.frame["pvalue_naive"].to_numpy(dtype=float)
        best = self.frame["pvalue_best"].to_numpy(dtype=float)
        shown = np.concatenate([naive, best])
        shown = shown[np.isfinite(shown) & (shown > 0)]
        if xmin is None:
            smallest = shown.min() if shown.size else self.alpha / 10
            xmin = min(max(smallest / 2, self.alpha * 1e-4), self.alpha / 10)
        below = []
        for yi, a, b in zip(y, naive, best, strict=True):
            if np.isfinite(a) and np.isfinite(b):
                ax.plot([max(a, xmin), max(b, xmin)], [yi, yi], color="0.7", zorder=1)
        for values, marker, name, color, shift in ((naive, "o", "naive", "C0", -0.12),
                                                   (best, "s", "best corrected", "C1", 0.12)):
            ok = np.isfinite(values)
            inside = ok & (values >= xmin)
            ax.scatter(values[inside], y[inside], label=name, marker=marker, color=color, zorder=2, clip_on=False)
            out = ok & (values < xmin)
            if out.any():
                below.append(ax.scatter(np.full(out.sum(), xmin), y[out] + shift, marker="<", color=color, s=60,
                                        zorder=3, clip_on=False))
        ax.axvline(self.alpha, color="C3", linestyle="--", label=f"alpha = {self.alpha:g}")
        if below:
            ax.scatter([], [], marker="<", color="0.3", label=f"p < {xmin:.0e} (at the edge)")
        ax.set_xscale("log")
        ax.set_xlim(xmin, 1.0)
        ax.set_yticks(y, [str(i) for i in self.frame.index])
        ax.set_xlabel("p-value")
        ax.set_ylim(len(self.frame) - 0.5, -0.5)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, fontsize="small", frameon=False)
        return ax

    def plot_ledger(self, ax=None):
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
        rows = self.ledger_rows
        x = np.arange(len(rows) + 1)
        ticks = ["before selection"] + [textwrap.fill(str(r.get("label") or f"step {r.get('step')}"), 28)
                                        for r in rows]
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
