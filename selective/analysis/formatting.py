"""Formatting of numbers and tables for papers: p-values, numbers, Markdown, plain text, LaTeX."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from ..hypotheses._trust_model import VARIANCE_CHECK_MARK

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
    "~": r"\ensuremath{\sim}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf")


def latex_escape(text: Any) -> str:
    """Escape text for LaTeX (outside math): every special character, in one pass.

    ``\\`` becomes ``\\textbackslash{}`` (not ``\\textbackslash\\{\\}``), and ``<``, ``>``, ``|``
    their text commands, which print correctly in the default (OT1) font encoding too. ``~``
    becomes ``\\ensuremath{\\sim}``: in a table it is a model formula's tilde ("y ~ x"), which
    ``\\textasciitilde`` would print raised, as an accent.

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
    lines = [first, *_wrap_at_commas(second, _HEADER_LINE)]
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r"\\".join(lines) + r"\end{tabular}"


#: Characters per line of a header's parenthesis before it breaks at a comma.
_HEADER_LINE = 18


def _wrap_at_commas(text: str, width: int) -> list[str]:
    """``text`` broken after its commas into lines of at most ``width`` characters where it can
    be (a part longer than that stays whole)."""
    parts = text.split(", ")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += ", " + part
        else:
            lines[-1] += ","
            lines.append(part)
    return lines


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


def conditional_notes(notes: Any, names: list[str]) -> list[str]:
    """What the conditional column's cells rest on (shown or withheld: the withheld ones are listed after), for
    renderings without the note column:
    each distinct method ("given the top-1 ranking of step 1 ...") with the rows it applies to,
    and the reason for each withheld cell. ``notes`` are the rows' notes, ``names`` the row
    names as shown."""
    methods: dict[str, list[str]] = {}
    withheld: dict[str, list[str]] = {}
    for name, note in zip(names, notes, strict=True):
        if not isinstance(note, str):
            continue
        start = note.find("conditional")
        while start > 0 and note[start - 2:start] != "; ":
            start = note.find("conditional", start + 1)
        if start < 0:
            continue
        text = note[start:]
        cut = text.find("; conditional ")
        method, reason = (text, "") if cut < 0 else (text[:cut], text[cut + 2:])
        if method.startswith("conditional withheld"):
            method, reason = "", method
        if method:
            methods.setdefault(method.removeprefix("conditional: "), []).append(name)
        if reason:
            withheld.setdefault(reason, []).append(name)
    out = [f"{'Conditional and hybrid columns' if '; hybrid:' in m else 'Conditional column'} ({', '.join(rows)}): {m}."
           for m, rows in methods.items()]
    out += [f"{r[0].upper()}{r[1:]} ({', '.join(rows)})." for r, rows in withheld.items()]
    return out


_FISSION_NOTE = "fission: tested on the confirmation copy ("
#: where a split column's entry starts in a fission note: its quoted label and a colon
_FISSION_ENTRY = re.compile(r"(?:^|; )('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s:;']+): ")


def fission_notes(notes: Any, names: list[str]) -> list[str]:
    """What the fission column's rows were tested on, for renderings without the note column: each
    distinct model once, with the split columns of each row, and that the row's estimate, naive
    p-value and interval are those of the confirmation copy."""
    methods: dict[str, list[str]] = {}
    scale = "; estimates are on the confirmation copy's scale (means times 1 - epsilon)"
    for name, note in zip(names, notes, strict=True):
        start = note.find(_FISSION_NOTE) if isinstance(note, str) else -1
        if start < 0:
            continue
        depth, end = 0, len(note) - 1
        for i in range(start + len(_FISSION_NOTE) - 1, len(note)):  # to the parenthesis closing the split columns
            depth += {"(": 1, ")": -1}.get(note[i], 0)
            if depth == 0:
                end = i
                break
        inner = note[start + len(_FISSION_NOTE):end]
        cuts = list(_FISSION_ENTRY.finditer(inner))
        labels = [m.group(1).strip("'\"") for m in cuts]
        models = [inner[m.end():(cuts[k + 1].start() if k + 1 < len(cuts) else len(inner))] for k, m in enumerate(cuts)]
        key = "; ".join(dict.fromkeys(models)) + (scale if note[end + 1:].startswith(scale) else "")
        methods.setdefault(key, []).append(f"{', '.join(labels)} for {name}")
    return [f"Fission column: tested on the confirmation copies ({'; '.join(rows)}): {m}; the row's estimate, naive "
            "p-value and interval are those of the confirmation copy." for m, rows in methods.items()]


def withheld_notes(notes: Any, names: list[str]) -> list[str]:
    """Why cells outside the conditional columns are withheld (the trust rule, a failed fallback,
    fission, an interval not trusted at the corrected level) and which p-values were replaced by an
    exact or permutation version at the corrected level, for renderings without the note column:
    each reason once, with the rows it applies to. Reasons of the conditional and hybrid columns
    are left to :func:`conditional_notes`."""
    reasons: dict[str, list[str]] = {}
    replacements: dict[str, list[str]] = {}
    levels: dict[tuple[str, str], list[str]] = {}
    for name, note in zip(names, notes, strict=True):
        if not isinstance(note, str):
            continue
        for part in note.split("; "):
            text = part.strip().rstrip(".")
            replaced = _REPLACED.fullmatch(text)
            levelled = _LEVELLED.fullmatch(text)
            if replaced and replaced["level"] is None:  # never trusted: its own sentence, no level to give
                key = f"{replaced['used']} (the {replaced['old']} p-value is trusted at no level below 1 in"
                replacements.setdefault(key, []).append(name)
            elif replaced:  # one sentence per version used, with each row's trusted level
                key = f"{replaced['used']} (the {replaced['old']} p-value is trusted down to"
                replacements.setdefault(key, []).append(f"{replaced['level']} in {name}")
            elif levelled and "withheld" in text:  # one sentence per reason, each row with its level
                levels.setdefault((levelled["head"], levelled["tail"]), []).append(f"{levelled['level']} in {name}")
            elif ("withheld" in part or part.startswith(VARIANCE_CHECK_MARK)) and not part.startswith(
                    ("conditional", "hybrid")):
                reasons.setdefault(text, []).append(name)
    out = [f"{k[0].upper()}{k[1:]} {', '.join(rows)}{')' if k.endswith('below 1 in') else ' only)'}; the corrected "
           "columns rest on it, the naive column shows the test's own p-value." for k, rows in replacements.items()]
    for (head, tail), rows in levels.items():
        if len(rows) == 1:   # as the note says it, with the row after it
            level, row = rows[0].split(" in ", 1)
            out.append(f"{head[0].upper()}{head[1:]}{level} only{tail} ({row}).")
        else:
            out.append(f"{head[0].upper()}{head[1:]}{', '.join(rows)} only{tail}.")
    return out + [f"{r[0].upper()}{r[1:]} ({', '.join(rows)})." for r, rows in reasons.items()]


#: a reason that names the row's own trusted level ("... trusted down to 0.65 only, ..."): rows that
#: share the rest of it share one sentence
_LEVELLED = re.compile(r"(?P<head>.+ trusted down to (?:miscoverage )?)(?P<level>\S+) only(?P<tail>.*)")
_REPLACED = re.compile(r"(?P<used>.+ p-value used at the corrected level) \(the (?P<old>.+) p-value is "
                       r"(?:trusted down to (?P<level>\S+) only|trusted at no level below 1)\)")


def empty_column_notes(frame: pd.DataFrame, cols: tuple, names: list[str]) -> list[str]:
    """Notes under a table for columns of ``cols`` left empty by construction: p (adjusted)
    without an adjustment, N of a test that does not report it (``names``: the rows as shown)."""
    notes = []
    if "pvalue_adjusted" in cols and frame["pvalue_adjusted"].isna().all():
        notes.append("p (adjusted) is empty: no multiple-testing adjustment was asked for (report(adjust=...), "
                     "e.g. Holm's).")
    if "n_obs" in cols and frame["n_obs"].isna().any():
        rows = [str(i) for i, v in zip(names, frame["n_obs"], strict=True) if pd.isna(v)]
        notes.append(f"N is empty where the test does not report its number of observations ({', '.join(rows)}).")
    return notes


def column_notes(frame: pd.DataFrame, cols: tuple, names: list[str], common_n: int | None) -> list[str]:
    """Notes under a LaTeX table for what its columns ``cols`` leave out (the common N, the route
    of each best valid p-value); what they leave empty is :func:`empty_column_notes`."""
    notes = []
    if "n_obs" not in cols and common_n is not None:
        notes.append(f"N = {common_n} observations in every test.")
    if "best_route" not in cols:
        routes = [r if isinstance(r, str) else "" for r in frame["best_route"]]
        used = [r for r in dict.fromkeys(routes) if r]
        if len(used) == 1 and all(routes) and used[0].startswith("no selection step"):
            notes.append("Best valid p-values: the naive ones (no selection step, 0 bits).")
        elif len(used) == 1 and all(routes):
            notes.append(f"Best valid p-values from the {used[0]} route.")
        elif used:
            parts = []
            for route in used:
                rows = [str(i) for i, r in zip(names, routes, strict=True) if r == route]
                parts.append(f"{route} for {', '.join(rows)}")
            notes.append("Best valid p-values: " + ". ".join(parts) + ".")
    return notes


def row_numbers(n: int) -> list[str]:
    """Rows named by position ("row 1", ...) in notes under Markdown and HTML tables."""
    return [f"row {i}" for i in range(1, n + 1)]


def mark_text_cells(table_html: str, is_text: list[bool], min_em: list[float] | None = None) -> str:
    """pandas' HTML table with ``class="text"`` on the cells of text columns (labels, routes), body
    and header, so that a style sheet can let them wrap and align them left while numbers stay on
    one line, aligned right. ``min_em`` (per column, 0 for none) gives a column of long text an
    inline minimum width, so that it wraps into lines of words, not one word per line, also where
    no style sheet is loaded (a notebook). Numbers are aligned right inline as well (a browser
    aligns a bare table's cells left, under headers that pandas aligns right)."""
    def attrs(text_col: bool, em: float, tag: str = "td") -> str:
        if not text_col:  # a body number stays on one line ("< 1e-04"); headers may wrap
            return ' style="text-align: right; white-space: nowrap"' if tag == "td" else ' style="text-align: right"'
        return ' class="text"' + (f' style="min-width: {em:g}em; white-space: normal"' if em else "")

    def marked(tag: str):
        def row(match: re.Match) -> str:
            cells = iter(zip(is_text, min_em if min_em is not None else [0.0] * len(is_text), strict=True))
            # cells beyond the list (none in pandas' tables) are left unmarked
            return re.sub(f"<{tag}>", lambda m: f"<{tag}{attrs(*next(cells, (False, 0.0)), tag)}>", match.group(0))
        return row

    head, sep, body = table_html.partition("<tbody>")
    head = re.sub(r"<thead>.*?</thead>", marked("th"), head, flags=re.S)
    return head + sep + re.sub(r"<tr>.*?</tr>", marked("td"), body, flags=re.S)
