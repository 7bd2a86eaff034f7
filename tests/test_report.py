"""The output layer: Markdown, LaTeX, HTML, text and figures of a corrected table, the HTML report.

LaTeX tables are compiled with pdflatex when it is installed and their width is measured
against the text width; the HTML report is opened in headless Chromium when it is installed.
Both skip with the reason otherwise (Debian: texlive-latex-recommended, texlive-latex-extra,
texlive-fonts-recommended; chromium).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

from selective import Analysis
from selective.analysis.html_report import html_report, write_html_report
from selective.analysis.plan import load_plan, run_plan
from selective.analysis.report import (
    LATEX_PACKAGES,
    TABLE_COLUMNS,
    CorrectedTable,
    RenderMixin,
    format_number,
    latex_escape,
    markdown_table,
)
from selective.datasets import ANES96_COLUMNS, bundled_path, load_anes96
from selective.hypotheses import CoefficientTest, TwoSampleTTest

PDFLATEX = shutil.which("pdflatex")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
NO_TEX = "no TeX engine: pdflatex is not on PATH (Debian: texlive-latex-recommended texlive-latex-extra)"
NO_BROWSER = "no headless browser: chromium is not on PATH (Debian: chromium)"


# --- fixtures -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def anes():
    """The bundled plan on the bundled ANES 1996 data: labels with pipes, one selection step."""
    analysis = run_plan(load_plan(bundled_path("anes96_plan.toml")), load_anes96())
    return analysis, analysis.report()


@pytest.fixture(scope="module")
def demo():
    from selective.demo import run_demo

    return run_demo()


def synthetic_table(labels, p_naive, p_best, *, alpha=0.05, ledger_rows=None, **columns) -> CorrectedTable:
    """A CorrectedTable from given columns (the others NaN / empty), for rendering edge cases."""
    n = len(labels)
    frame = pd.DataFrame({c: [math.nan] * n for c in TABLE_COLUMNS}, index=pd.Index(labels, name="hypothesis"))
    frame["best_route"] = ["Bonferroni"] * n
    frame["note"] = [""] * n
    frame["pvalue_naive"] = p_naive
    frame["pvalue_best"] = p_best
    for k, v in columns.items():
        frame[k] = v
    return CorrectedTable(frame=frame, alpha=alpha, footnote="Footnote: the theorems.", ledger_rows=ledger_rows or [])


# --- Markdown ------------------------------------------------------------------------------------------------

def markdown_rows(text: str) -> list[list[str]]:
    """The cells of each table line of GitHub-flavoured Markdown: split on unescaped pipes."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip())
        rows.append([c.strip() for c in cells[1:-1]])
    return rows


def test_markdown_cells_stay_whole_when_labels_hold_pipes(anes):
    _, table = anes
    assert any("|" in str(i) for i in table.frame.index), "the fixture should have labels with pipes"
    rows = markdown_rows(table.to_markdown())
    assert len(rows) == 2 + len(table.frame)
    widths = {len(r) for r in rows}
    assert widths == {len(rows[0])}, f"rows have different cell counts: {sorted(widths)}"
    first_cells = [r[0].replace(r"\|", "|") for r in rows[2:]]
    assert first_cells == [str(i) for i in table.frame.index]


def test_markdown_ledger_and_comparison_tables_escape_pipes(anes):
    _, table = anes
    ledger = table.ledger_to_markdown()
    rows = markdown_rows(ledger)
    assert {len(r) for r in rows} == {5}
    assert [r[0] for r in rows[2:]] == [str(i + 1) for i in range(len(table.ledger_rows))]  # "step 1" as the notes
    assert rows[2][1].replace(r"\|", "|") == table.ledger_rows[0]["label"] and "|Welch t|" in table.ledger_rows[0][
        "label"]

    class Comparison(RenderMixin):  # a table rendered through the mixin, like SelectionComparison
        footnote = ""

        def _display(self, columns):
            return pd.DataFrame({"p (naive)": ["0.5", "0.01"]}, index=pd.Index(["a | b", "|x|"], name="variable"))

    rows = markdown_rows(Comparison().to_markdown())
    assert [len(r) for r in rows] == [2, 2, 2, 2]


def test_markdown_table_aligns_numbers_right_and_keeps_strings():
    frame = pd.DataFrame({"p": ["4.2e-04", "< 1e-04"], "route": ["a", "b"]}, index=pd.Index(["x", "y"], name="h"))
    text = markdown_table(frame)
    rule = text.splitlines()[1]
    assert rule.split("|")[2].endswith(":") and rule.split("|")[3].startswith(":")
    assert "4.2e-04" in text  # not re-parsed as a number and reprinted


# --- columns and numbers -------------------------------------------------------------------------------------

def test_adjusted_pvalues_appear_in_the_default_columns(demo):
    analysis, table = demo
    adjusted = analysis.report(adjust="holm")
    for text in (adjusted.to_markdown(), adjusted.to_html(), adjusted.to_latex(), adjusted.summary()):
        assert "adjusted" in text
    assert "p (adjusted)" not in table.to_markdown() and "p (adjusted)" not in table.to_html()
    rows = markdown_rows(adjusted.to_markdown())
    j = rows[0].index("p (adjusted)")
    assert [r[j] for r in rows[2:]] == [
        "< 1e-04" if p < 1e-4 else f"{p:.2g}" if p < 0.9995 else "1" for p in adjusted.frame.pvalue_adjusted]


def test_n_obs_column_comes_from_each_test():
    rng = np.random.default_rng(7)
    data = pd.DataFrame({"y": rng.normal(size=200), "x": rng.normal(size=200), "g": np.repeat(["a", "b"], 100)})
    data.loc[:29, "x"] = np.nan  # the model drops 30 rows
    analysis = Analysis(data, rng=1)
    r_ols = analysis.test(CoefficientTest(formula="y ~ x", term="x", model="ols", missing="drop"))
    r_t = analysis.test(TwoSampleTTest(column="y", group="g", levels=("a", "b")))
    table = analysis.report()
    assert list(table.frame["n_obs"]) == [170, 200] == [r_ols.n_obs, r_t.n_obs]
    assert "n = 200 rows" in table.footnote
    rows = markdown_rows(table.to_markdown())
    j = rows[0].index("N")
    assert [r[j] for r in rows[2:]] == ["170", "200"]
    # N differs between rows: the compact LaTeX set keeps it as a column
    assert "$N$" in table.to_latex()


def test_integers_print_as_integers():
    assert format_number(3250.0) == "3250"
    assert format_number(3250.3) == "3250"
    assert format_number(597.79) == "598"
    assert format_number(0.0977) == "0.0977"
    assert format_number(2.5e-5) == "2.50e-05"
    table = synthetic_table(["h"], [0.01], [0.1], df=[3250.0], n_obs=[3252])
    rows = markdown_rows(table.to_markdown(columns=("df", "n_obs")))
    assert rows[2][1:] == ["3250", "3252"]


# --- HTML and text -------------------------------------------------------------------------------------------

def test_html_table_has_one_header_row(demo):
    _, table = demo
    text = table.to_html()
    thead = text[text.index("<thead>"):text.index("</thead>")]
    assert thead.count("<tr") == 1 and '<th class="text">hypothesis</th>' in thead
    body = text[text.index("<tbody>"):text.index("</tbody>")]
    assert body.count("<tr") == len(table.frame)
    assert table._repr_html_() == text
    # text cells (labels, routes) may wrap, numbers may not: each row marks the same columns
    first = body[body.index("<tr>"):body.index("</tr>")]
    cells = first.split("<td")[1:]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", thead)
    marked = [h for h, c in zip(headers, cells, strict=True) if c.startswith(' class="text"')]
    assert marked == ["hypothesis", "best route"]
    assert body.count('class="text"') == 2 * len(table.frame)
    # their headers are marked too (aligned left over left-aligned cells), and only theirs
    assert re.findall(r'<th class="text">([^<]*)</th>', thead) == ["hypothesis", "best route"]
    # the table scrolls inside its own box; the notes and footnote under it do not
    wrap_end = text.index("</div>")
    assert text.startswith('<div class="selective-table-wrap"') and text.index("</table>") < wrap_end
    assert text.index("selective-footnote") > wrap_end


def test_summary_prints_table_then_notes(anes):
    _, table = anes
    text = table.summary()
    assert text.index("p (naive)") < text.index("Selection ledger (cumulative bits)") < text.index("Note:")
    for label in table.frame.index:
        assert str(label) in text
    flat = " ".join(text[text.index("Note:"):].split())
    assert " ".join(table.footnote.split())[:200] in flat
    assert str(table) == text


# --- LaTeX ---------------------------------------------------------------------------------------------------

def test_latex_escapes_in_one_pass_and_uses_math_minus(demo):
    assert latex_escape("a\\b_{c}|d") == r"a\textbackslash{}b\_\{c\}\textbar{}d"
    assert latex_escape("OLS y ~ x1") == r"OLS y \ensuremath{\sim} x1"  # a formula's tilde, not an accent
    table = synthetic_table([r"mean(x \ y | z) & 50%"], [0.0001], [0.002], estimate=[-0.195], n_obs=[10],
                            ci_corrected_low=[-1.5], ci_corrected_high=[2.5e-5])
    tex = table.to_latex()
    assert r"mean(x \textbackslash{} y \textbar{} z) \& 50\%" in tex
    assert r"\textbackslash\{\}" not in tex
    assert "$-0.195$" in tex and r"$[-1.5, 2.50\times10^{-5}]$" in tex
    with pytest.raises(ValueError, match="`fit`"):
        table.to_latex(fit="shrink")
    with pytest.raises(ValueError, match="`labels`"):
        table.to_latex(labels="short")


def _box_of(tex: str) -> tuple[str, str]:
    """(size command, the table's box: tabular or resizebox) of a to_latex output."""
    lines = tex.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(r"\setlength{\tabcolsep}"))
    j = next(k for k in range(i + 1, len(lines)) if lines[k] in (r"\par\smallskip", r"\end{table}"))
    size = lines[i - 1] if re.fullmatch(r"\\[A-Za-z]+", lines[i - 1]) and lines[i - 1] != r"\centering" else ""
    return size + lines[i], "\n".join(lines[i + 1:j])


def _pdflatex(tmp_path, name: str, body: str) -> str:
    doc = "\n".join([r"\documentclass{article}", *LATEX_PACKAGES, r"\newsavebox\selbox", r"\begin{document}",
                     body, r"\end{document}", ""])
    (tmp_path / f"{name}.tex").write_text(doc)
    run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert run.returncode == 0, f"pdflatex failed on {name}.tex:\n{log[-3000:]}"
    return log


def measure(tmp_path, name: str, tex: str, *, landscape: bool = False) -> tuple[float, float, str]:
    """Compile ``tex`` in an article and measure its box: (box width, line width, full log), in pt."""
    full_log = _pdflatex(tmp_path, name, "Text before the table.\n" + tex)
    size, box = _box_of(tex)
    inner = (f"{size}\\sbox\\selbox{{{box}}}\\typeout{{SELECTIVE-BOX=\\the\\wd\\selbox}}"
             "\\typeout{SELECTIVE-LINE=\\the\\linewidth}")
    if landscape:
        inner = r"\begin{landscape}" + inner + r"\end{landscape}"
    log = _pdflatex(tmp_path, name + "-measure", inner)
    box_pt = float(re.search(r"SELECTIVE-BOX=([\d.]+)pt", log).group(1))
    line_pt = float(re.search(r"SELECTIVE-LINE=([\d.]+)pt", log).group(1))
    return box_pt, line_pt, full_log


@pytest.mark.skipif(PDFLATEX is None, reason=NO_TEX)
@pytest.mark.parametrize("case", ["compact", "compact+holm", "legend", "all+resize", "short+landscape"])
def test_latex_table_compiles_and_fits_the_text_width(case, anes, tmp_path):
    analysis, table = anes
    if "holm" in case or "landscape" in case:
        table = analysis.report(adjust="holm")
    kwargs = {"compact": {}, "compact+holm": {}, "legend": {"labels": "legend"},
              "all+resize": {"columns": "all", "fit": "resize"},
              "short+landscape": {"columns": "short", "fit": "landscape"}}[case]
    tex = table.to_latex(caption="ANES 1996: variables chosen by |Welch t|, tested on the same data.",
                         label="tab:anes", **kwargs)
    box, line, log = measure(tmp_path, case.replace("+", "-"), tex, landscape="landscape" in case)
    assert box <= line + 0.1, f"{case}: the table is {box:.1f}pt wide, the text {line:.1f}pt"
    assert box > 0.5 * line
    assert "Overfull \\hbox" not in log and "too wide" not in log, log[log.find("Overfull"):][:500]
    # the notes sit under the table, left-aligned, as wide as the text
    notes = tex[tex.index(r"\par\smallskip"):]
    assert notes.startswith("\\par\\smallskip\n\\begin{minipage}{\\linewidth}\\raggedright")
    assert "Selection ledger: 1 step(s) on n = 944 rows" in notes
    if case == "legend":
        assert "H1: mean(selfLR" not in notes and "H1: mean(" in notes


@pytest.mark.skipif(PDFLATEX is None, reason=NO_TEX)
def test_all_columns_without_fit_are_too_wide_so_the_measure_can_fail(anes, tmp_path):
    """The measurement is not vacuous: the full column set in a plain tabular overflows."""
    _, table = anes
    tex = table.to_latex(columns="all", labels="legend")
    box, line, _ = measure(tmp_path, "wide", tex)
    assert box > line


# --- figures -------------------------------------------------------------------------------------------------

@pytest.fixture
def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_ledger_plot_draws_a_single_step(plt, anes, tmp_path):
    _, table = anes
    assert len(table.ledger_rows) == 1
    ax = table.plot_ledger()
    lines = [line for line in ax.get_lines() if line.get_label().endswith("(bits)")]
    assert len(lines) == 2
    final = {"max-information (bits)": table.ledger_rows[0]["cumulative_maxinfo_bits"],
             "mutual information (bits)": table.ledger_rows[0]["cumulative_mutual_info_bits"]}
    for line in lines:
        x, y = line.get_xdata(), line.get_ydata()
        assert list(x) == [0, 1] and y[0] == 0 and y[-1] == pytest.approx(final[line.get_label()])
        assert line.get_marker() not in (None, "None", "")
    assert ax.get_ylim()[1] > max(final.values())
    ax.figure.savefig(tmp_path / "ledger.png")
    assert (tmp_path / "ledger.png").stat().st_size > 1000


def test_pvalue_plot_keeps_the_region_around_alpha(plt):
    table = synthetic_table(["strong", "weak", "null"], [1e-47, 0.01, 0.4], [1e-45, 0.2, 1.0])
    ax = table.plot()
    lo, hi = ax.get_xlim()
    assert lo >= table.alpha * 1e-4 and hi == 1.0
    fraction = (math.log10(table.alpha) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    assert 0.4 < fraction < 0.9, f"alpha sits at {fraction:.2f} of the axis"
    alpha_lines = [line for line in ax.get_lines() if line.get_label().startswith("alpha")]
    assert len(alpha_lines) == 1 and list(alpha_lines[0].get_xdata()) == [table.alpha, table.alpha]
    offsets = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets())])
    # 2 markers per row; the p-values below the axis are drawn at its left end
    assert len(offsets) == 6
    at_edge = offsets[offsets[:, 0] <= lo * (1 + 1e-9)]
    assert len(at_edge) == 2 and np.allclose(np.round(at_edge[:, 1]), 0)
    assert sorted(offsets[offsets[:, 0] > lo][:, 0]) == sorted([0.01, 0.4, 0.2, 1.0])


def test_pvalue_plot_draws_the_sharper_routes_the_table_has(plt, tmp_path):
    table = synthetic_table(["a", "b", "c"], [1e-4, 0.01, 0.4], [2e-3, 0.2, 1.0])
    frame = table.frame.copy()
    frame["pvalue_conditional"] = [3e-4, np.nan, 0.7]   # a withheld cell is not drawn
    frame["pvalue_hybrid"] = [5e-3, 0.3, np.nan]
    table = type(table)(frame=frame, alpha=table.alpha, footnote=table.footnote, ledger_rows=table.ledger_rows)
    ax = table.plot()
    by_label = {c.get_label(): c.get_offsets() for c in ax.collections}
    assert sorted(by_label["conditional"][:, 0]) == [3e-4, 0.7]
    assert sorted(by_label["hybrid"][:, 0]) == [5e-3, 0.3]
    assert "fission" not in by_label  # no such column in the table
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "conditional" in legend and "hybrid" in legend
    # the legend below the axes stays inside the saved figure without bbox_inches="tight"
    fig = ax.figure
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    assert box.y0 >= 0 and box.x0 >= 0 and box.x1 <= fig.bbox.width


def test_pvalue_plot_marks_corrections_that_rest_on_a_permutation_p_value(plt):
    # the trust rule replaced row b's p-value by a permutation one at the corrected level: its
    # corrected p-value is N times that, not N times the naive one drawn beside it
    table = synthetic_table(["a", "b", "c"], [1e-4, 1e-6, 0.4], [2e-3, 0.03, 1.0])
    frame = table.frame.copy()
    frame["note"] = [np.nan, "permutation p-value used at the corrected level (the asymptotic p-value is trusted "
                     "down to 0.2 only)", "a note of another kind"]
    table = type(table)(frame=frame, alpha=table.alpha, footnote=table.footnote, ledger_rows=table.ledger_rows)
    ax = table.plot()
    by_label = {c.get_label(): c for c in ax.collections}
    solid = by_label["best corrected"]
    hollow = by_label["best corrected, from the exact / permutation p-value"]
    assert sorted(solid.get_offsets()[:, 0]) == [2e-3, 1.0]
    assert list(hollow.get_offsets()[:, 0]) == [0.03] and list(hollow.get_offsets()[:, 1]) == [1]
    assert len(hollow.get_facecolors()) == 0 or hollow.get_facecolors()[0][3] == 0   # hollow
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "best corrected, from the exact / permutation p-value" in legend
    # without such a row the figure has one corrected series, as before
    plain = synthetic_table(["a"], [1e-4], [2e-3]).plot()
    assert not any("permutation" in c.get_label() for c in plain.collections)


def test_pvalue_plot_says_which_corrected_p_values_are_withheld(plt):
    # a withheld cell was simply missing: a reviewer could not tell it from a plotting error
    table = synthetic_table(["a", "b", "c"], [1e-4, 0.01, 0.4], [2e-3, np.nan, 1.0])
    ax = table.plot()
    marks = [t for t in ax.texts if t.get_text().strip() == "corrected: withheld"]
    assert len(marks) == 1 and marks[0].get_position()[1] == 1   # row b only
    assert not [t for t in synthetic_table(["a"], [1e-4], [2e-3]).plot().texts if "withheld" in t.get_text()]


@pytest.mark.parametrize("rows", [1, 2, 8])
def test_pvalue_plot_legend_clears_the_axis_label(plt, rows):
    # the legend was placed a share of the axes' height below them, which with one row overlapped
    # the axis label; and a series with no point (every corrected p-value withheld) had an entry
    names = [f"h{i}" for i in range(rows)]
    table = synthetic_table(names, [1e-4] * rows, [np.nan] * rows)
    ax = table.plot()
    fig = ax.figure
    fig.canvas.draw()
    legend, label = ax.get_legend().get_window_extent(), ax.xaxis.label.get_window_extent()
    assert legend.y1 <= label.y0 and legend.y0 >= 0
    assert "best corrected" not in [t.get_text() for t in ax.get_legend().get_texts()]


def test_pvalue_plot_keeps_long_hypothesis_labels_inside_the_figure(plt):
    long = "mean(marker03 | arm='treatment') - mean(marker03 | arm='control') = 0 (Welch t-test)"
    table = synthetic_table([long, long.replace("03", "06")], [0.14, 0.057], [1.0, 0.7])
    ax = table.plot()
    fig = ax.figure
    fig.canvas.draw()
    for label in ax.get_yticklabels():
        assert "\n" in label.get_text()  # wrapped
        assert label.get_window_extent().x0 >= 0  # not cut at the left edge
    box = ax.get_legend().get_window_extent()
    assert box.y0 >= 0 and box.x0 >= 0 and box.x1 <= fig.bbox.width


# --- the HTML report -----------------------------------------------------------------------------------------

def test_html_report_is_self_contained(anes, tmp_path):
    from selective.analysis.audit import audit_record

    analysis, table = anes
    record = audit_record(analysis, table, plan=load_plan(bundled_path("anes96_plan.toml")).raw,
                          data_source="anes96.csv")
    plan_text = bundled_path("anes96_plan.toml").read_text()
    path = write_html_report(tmp_path / "out" / "report.html", table, record=record, plan_text=plan_text)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page), "the page loads an external resource"
    assert page.count('src="data:image/png;base64,') == 2
    assert record["data"]["sha256"] in page and "top-3 of 5 demographic variables" in page
    assert "mean(popul | vote=1)" in page  # labels escaped as HTML, not as Markdown
    assert "n_candidates = 10" in page  # the plan text verbatim
    with pytest.raises(TypeError, match="`table`"):
        html_report("not a table")


@pytest.mark.skipif(CHROMIUM is None, reason=NO_BROWSER)
def test_html_report_renders_in_a_browser(anes, tmp_path):
    _, table = anes
    page = html_report(table, data_fingerprint="f" * 64, plan_text="[analysis]\nalpha = 0.05\n")
    probe = ("<script>window.addEventListener('load', function () {"
             "var out = document.createElement('pre'); out.id = 'probe';"
             "out.textContent = Array.from(document.images).map(function (i) {"
             "return i.id + '=' + i.naturalWidth + 'x' + i.naturalHeight; }).join(';');"
             "document.body.appendChild(out); });</script>")
    (tmp_path / "report.html").write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000"]
    url = (tmp_path / "report.html").as_uri()
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    probe_text = re.search(r'<pre id="probe">(.*?)</pre>', dom)
    assert probe_text, f"the page's script did not run; DOM starts {dom[:300]!r}"
    sizes = dict(item.split("=") for item in probe_text.group(1).split(";"))
    assert set(sizes) == {"figure-pvalues", "figure-ledger"}
    for name, size in sizes.items():
        width, height = map(int, size.split("x"))
        assert width > 100 and height > 100, f"{name} did not load: {size}"
    assert "Corrected table" in dom and "Selection ledger" in dom and "f" * 64 in dom
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1800", url],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000


# --- the bundled ANES data -----------------------------------------------------------------------------------

def test_anes96_is_statsmodels_copy():
    from statsmodels.datasets import anes96

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = anes96.load_pandas().data
    ours = load_anes96()
    assert tuple(ours.columns) == ANES96_COLUMNS and len(ours) == 944
    pd.testing.assert_frame_equal(ours.astype(float), original[list(ANES96_COLUMNS)].astype(float))
    np.testing.assert_allclose(np.log(original["popul"] + 0.1), original["logpopul"], rtol=1e-6)
    with pytest.raises(ValueError, match="`name`"):
        bundled_path("nope.csv")


def test_long_latex_headers_break_at_their_commas():
    from selective.analysis.formatting import _latex_header

    assert _latex_header("p (naive)", "r") == r"\begin{tabular}[b]{@{}r@{}}$p$\\(naive)\end{tabular}"
    assert _latex_header("p (exact conditional, sigma unknown)", "r") == (
        r"\begin{tabular}[b]{@{}r@{}}$p$\\(exact conditional,\\sigma unknown)\end{tabular}")
    # short parts stay together on a line of at most 18 characters
    assert _latex_header("p (a, b, c, d)", "l") == r"\begin{tabular}[b]{@{}l@{}}$p$\\(a, b, c, d)\end{tabular}"


def test_a_replaced_p_value_never_trusted_is_said_so_not_trusted_down_to_1():
    """A new user read "trusted down to 1" as nonsense: a p-value trusted at no level says so, in the
    row's note and in the sentence under the table; rows with a level keep "down to ... only"."""
    from selective.analysis.formatting import withheld_notes

    used = "permutation p-value used at the corrected level"
    notes = [f"{used} (the asymptotic p-value is trusted at no level below 1)",
             f"{used} (the asymptotic p-value is trusted down to 0.002 only)", np.nan]
    out = withheld_notes(notes, ["row 1", "row 2", "row 3"])
    assert ("Permutation p-value used at the corrected level (the asymptotic p-value is trusted at no level below 1 "
            "in row 1); the corrected columns rest on it" in " ".join(out))
    assert "trusted down to 0.002 in row 2 only); the corrected columns rest on it" in " ".join(out)
    assert not any("down to 1 " in s for s in out)
