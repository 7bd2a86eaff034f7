"""A self-contained HTML report of one analysis, for a collaborator to open in a browser.

One file, no external resource: the corrected table and its footnote, the selection ledger,
the two figures (embedded as base64 PNG), the plan text and the fingerprint of the data.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
from pathlib import Path
from typing import Any

from .audit import atomic_write_text
from .report import CorrectedTable, format_number

__all__ = ["html_report", "write_html_report"]

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 96em;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.86em; }
.table-wrap { overflow-x: auto; }
th, td { padding: 0.25em 0.5em; border-bottom: 1px solid #e3e3e3; text-align: right; vertical-align: top; }
th { border-bottom: 2px solid #444; }
th:first-child, td:first-child { text-align: left; }
td { white-space: nowrap; } td:first-child { min-width: 12em; }
td.text { white-space: normal; text-align: left; min-width: 6em; } th.text { text-align: left; }
.selective-note { font-size: 0.88em; color: #444; max-width: 60em; margin: 0.4em 0; }
.selective-ledger td:nth-child(-n+3), .selective-ledger th:nth-child(-n+3) { text-align: left; white-space: normal; }
.selective-footnote, .meta { font-size: 0.88em; color: #444; max-width: 60em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
figure { margin: 1em 0; } figcaption { font-size: 0.88em; color: #444; }
img { max-width: 100%; height: auto; }
"""


def _figure_png(draw, size: tuple[float, float]) -> str | None:
    """A figure drawn by ``draw(ax=...)`` as base64 PNG, or None without matplotlib.

    The figure is made without pyplot, so the user's backend and open figures are untouched.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    fig = Figure(figsize=size)
    draw(ax=fig.add_subplot())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _ledger_html(table: CorrectedTable) -> str:
    frame = table.ledger_frame()
    if frame.empty:
        return "<p>No selection step was recorded.</p>"
    shown = frame.astype(object)
    for c in ("step", "cumulative_maxinfo_bits", "cumulative_mutual_info_bits"):
        shown[c] = [format_number(x) for x in frame[c]]
    shown.columns = ["step", "label", "certificate", "max-information (bits, cumulative)",
                     "mutual information (bits, cumulative)"]
    return shown.to_html(index=False, escape=True, border=0, classes="selective-ledger", na_rep="")


def html_report(table: CorrectedTable, *, title: str = "Corrected p-values after selection",
                plan_text: str | None = None, record: dict[str, Any] | None = None,
                data_fingerprint: str | None = None, data_source: str | None = None,
                columns: Any = "short", figures: bool = True) -> str:
    """One self-contained HTML page describing an analysis.

    Parameters
    ----------
    table : CorrectedTable
        The corrected table (``Analysis.report()`` or ``table_from_audit``).
    title : str
        Page title and heading.
    plan_text : str, optional
        The plan file's text, shown verbatim. Without it, the plan stored in ``record`` is
        shown as JSON.
    record : dict, optional
        The audit record (:func:`selective.analysis.audit.audit_record`): supplies the data
        fingerprint, data source, seed, package version and plan where not given explicitly.
    data_fingerprint : str, optional
        SHA-256 of the data (:func:`selective.analysis.audit.data_fingerprint`).
    data_source : str, optional
        Where the data came from (a file name).
    columns : str or tuple of str
        Column set of the table (see :mod:`selective.analysis.report`).
    figures : bool
        Embed the p-value and ledger figures (needs matplotlib; without it the page says so).

    Returns
    -------
    str
        The HTML document (UTF-8 text, no external resource).
    """
    if not isinstance(table, CorrectedTable):
        raise TypeError(f"`table` must be a CorrectedTable; got {type(table).__name__}.")
    record = record or {}
    data = record.get("data", {}) if isinstance(record.get("data"), dict) else {}
    fingerprint = data_fingerprint or data.get("sha256")
    source = data_source or data.get("source")
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
             f"<h1>{esc(title)}</h1>"]
    meta = [f"{len(table.frame)} test(s); corrected intervals and rejections at alpha = {table.alpha:g}."]
    if source:
        meta.append(f"Data: {esc(str(source))}" + (f", {data['n_rows']} rows." if "n_rows" in data else "."))
    if fingerprint:
        meta.append(f'Data fingerprint (SHA-256): <code id="data-fingerprint">{esc(str(fingerprint))}</code>.')
    for key, name in (("seed", "Seed"), ("package_version", "selective version"), ("created", "Created")):
        if record.get(key) is not None:
            meta.append(f"{name}: {esc(str(record[key]))}.")
    if not record.get("created"):
        meta.append(f"Page written {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}.")
    parts.append('<p class="meta">' + " ".join(meta) + "</p>")

    parts += ["<h2>Corrected table</h2>", table.to_html(columns=columns, footnote=False)]
    if table.footnote:
        parts.append(f'<p class="selective-footnote">{esc(table.footnote)}</p>')

    parts += ["<h2>Selection ledger</h2>",
              "<p>Each step that looked at the data before the tests, with the information it used "
              "(cumulative over the steps).</p>", '<div class="table-wrap">', _ledger_html(table), "</div>"]

    if figures:
        parts.append("<h2>Figures</h2>")
        for name, draw, size, caption in (
            ("pvalues", table.plot, (6.5, 1.0 + 0.45 * max(1, len(table.frame))),
             "Naive and best corrected p-value of each hypothesis (log scale), with the conditional, hybrid "
             "and fission p-values where the table has them; the dashed line is alpha."),
            ("ledger", table.plot_ledger, (6.5, 3.2),
             "Cumulative max-information and mutual information (bits) after each selection step."),
        ):
            png = _figure_png(draw, size)
            if png is None:  # pragma: no cover - depends on the environment
                parts.append("<p>Figures need matplotlib: pip install 'selective[plot]'.</p>")
                break
            parts.append(f'<figure><img id="figure-{name}" alt="{esc(caption)}" '
                         f'src="data:image/png;base64,{png}"><figcaption>{esc(caption)}</figcaption></figure>')

    plan_shown = plan_text
    if plan_shown is None and record.get("plan") is not None:
        plan_shown = json.dumps(record["plan"], indent=2, sort_keys=False, default=str)
    if plan_shown is not None:
        parts += ["<h2>Analysis plan</h2>", f'<pre id="plan">{esc(plan_shown)}</pre>']
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def write_html_report(path: str | Path, table: CorrectedTable, **kwargs: Any) -> Path:
    """Write :func:`html_report` to ``path`` atomically (UTF-8).

    Parameters
    ----------
    path : str or Path
        The ``.html`` file to write (its folder is created).
    table : CorrectedTable
        The corrected table.
    **kwargs
        Passed to :func:`html_report` (``title``, ``plan_text``, ``record``,
        ``data_fingerprint``, ``data_source``, ``columns``, ``figures``).

    Returns
    -------
    Path
        The file written.
    """
    return atomic_write_text(path, html_report(table, **kwargs))
