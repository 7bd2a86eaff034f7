"""The power table, its best-route summary and its figure (``selective validate --power-plot``).

No statistical assertions: the numbers are checked against the results they were read from.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from selective.cli import main
from selective.validation.validate import best_route, plot_power, power_table, release_table, validate

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def results():
    return validate(["preregistered", "topk_signal"], n_reps=120, progress=False, seed=11)


def test_power_table_reads_the_results(results):
    pw = power_table(results)
    assert set(pw.scenario) == {"topk_signal"}  # the null scenario tests no real effect
    res = results["topk_signal"]
    for _, row in pw.iterrows():
        r = res.rate(row.column, measure="power", alpha=0.05)
        assert row.rate == r.rate and row.n_trials == r.n_trials and row.ci_low <= row.rate <= row.ci_high
    by = pw.set_index("column")
    assert not by.loc["pvalue_naive", "valid"] and by.loc["pvalue_best", "valid"]
    assert by.loc["pvalue_split", "baseline"] and not by.loc["pvalue_maxinfo", "baseline"]
    # a stricter level gives less power, column by column
    strict = power_table(results, alpha=0.01).set_index("column")
    assert (strict.rate <= by.rate).all()


def test_best_route_is_the_most_powerful_valid_route(results):
    pw = power_table(results)
    best = best_route(pw).loc["topk_signal"]
    routes = pw[pw.valid & ~pw.baseline & (pw.column != "pvalue_naive")]
    assert best.rate == routes.rate.max() and best.column in set(routes.column)
    split = float(pw.loc[pw.column == "pvalue_split", "rate"].iloc[0])
    assert best.split == split and best.at_least_split == (best.rate >= split)
    # with every route made invalid there is no best route
    none = best_route(pw.assign(valid=False)).loc["topk_signal"]
    assert none.column == "" and math.isnan(none.rate) and not none.at_least_split


def test_a_route_below_splitting_says_whether_the_gap_is_within_monte_carlo_error(results):
    """The standard error of the gap is the binomial one of the two rates; within two of them the
    verdict says so, beyond it says only "below splitting", and the headline counts both."""
    from selective.validation.validate import _power_section

    pw = power_table(results)
    names = {"pvalue_best": "best valid", "pvalue_split": "data splitting"}
    for route, split, n, close in ((0.50, 0.52, 2000, True), (0.40, 0.52, 2000, False)):
        frame = pw.copy()
        frame["n_trials"] = n
        for col in frame.column:
            frame.loc[frame.column == col, "rate"] = (split if col == "pvalue_split"
                                                      else min(route, float(frame.loc[frame.column == col, "rate"]
                                                                            .iloc[0])))
        frame.loc[frame.column == "pvalue_best", "rate"] = route
        best = best_route(frame).loc["topk_signal"]
        se = math.sqrt(route * (1 - route) / n + split * (1 - split) / n)
        assert best.se_difference == pytest.approx(se) and not best.at_least_split
        lines = _power_section(results, frame, list(names), names, 0.05, None)
        row = next(line for line in lines if line.startswith("| topk_signal"))
        headline = next(line for line in lines if line.startswith("**In 0 of 1"))
        if close:
            assert f"(**below splitting** by 0.020, within Monte Carlo error: {0.02 / se:.1f} standard errors)" in row
            assert "Of the 1 below it, 1 within two Monte Carlo standard errors" in headline
        else:
            assert row.rstrip(" |").endswith("(**below splitting**)")
            assert "Of the 1 below it, 0 within two Monte Carlo standard errors" in headline


def test_release_table_power_section_names_the_best_route_and_the_figure(results):
    text = release_table(results, command="selective validate", seed=11, power_figure="power.png")
    section = text[text.index("## Power at alpha = 0.05"):text.index("## preregistered")]
    best = best_route(power_table(results)).loc["topk_signal"]
    assert "![Power of every column at alpha = 0.05" in section and "(power.png)" in section
    assert f"In {int(best.at_least_split)} of 1 scenario(s)" in section
    row = next(line for line in section.splitlines() if line.startswith("| topk_signal"))
    assert row.rstrip(" |").endswith(f"{best.method}: {best.rate:.3f} "
                                      + ("(at least splitting)" if best.at_least_split else "(**below splitting**)"))
    assert "![" not in release_table(results, command="selective validate", seed=11)


def test_plot_power_draws_one_marker_per_column(results):
    pw = power_table(results)
    fig = plot_power(pw, alpha=0.05)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["topk_signal"]
    labels = fig.legends[0].get_texts()
    assert "naive (not valid)" in [t.get_text() for t in labels]
    drawn = sorted(float(x) for line in ax.get_lines() for x in line.get_xdata() if line.get_marker() in "os")
    assert drawn == sorted(pw.rate.tolist())
    with pytest.raises(ValueError, match="`power`"):
        plot_power(pd.DataFrame(columns=pw.columns))


def test_power_plot_from_the_command_line(tmp_path):
    out, fig = tmp_path / "v.md", tmp_path / "img" / "power.png"
    fig.parent.mkdir()
    code = main(["validate", "--scenario", "topk_signal", "--reps", "40", "--seed", "5", "--output", str(out),
                 "--power-plot", str(fig), "--quiet"])
    assert code == 0 and fig.stat().st_size > 0
    text = out.read_text()
    assert "(img/power.png)" in text and f"--power-plot {fig}" in text


def test_missing_output_folder_fails_before_the_run(tmp_path, capsys):
    code = main(["validate", "--scenario", "topk_signal", "--reps", "40", "--power-plot",
                 str(tmp_path / "nowhere" / "p.png"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "`--power-plot` must be a file in an existing folder" in err and "nowhere" in err


def test_a_run_at_another_alpha_is_judged_and_tabled_at_it_too(tmp_path, capsys):
    out = tmp_path / "v.md"
    code = main(["validate", "--scenario", "topk_noise", "--reps", "30", "--seed", "5", "--alpha", "0.001",
                 "--output", str(out), "--quiet"])
    assert code == 0
    assert "hold their level at alpha 0.05, 0.01, 0.001" in capsys.readouterr().out
    assert "| type I at 0.05 [CI] | type I at 0.01 [CI] | type I at 0.001 [CI] |" in out.read_text()


def test_summary_tables_keep_one_column_per_shared_route_and_list_the_others():
    """The summaries have the six columns every scenario has plus one cell listing the scenario's
    own columns with their rates (the table does not grow with the library)."""
    res = validate(["lasso_support", "lasso_support_signal"], n_reps=20, progress=False, seed=3)
    text = release_table(res, command="selective validate", seed=3)
    summary = text[text.index("## Summary"):text.index("## Power")]
    power = text[text.index("## Power"):text.index("## lasso_support\n")]
    header = next(line for line in summary.splitlines() if line.startswith("| scenario"))
    assert header.count("|") == 2 + 6 + 2 and header.endswith("| scenario-specific columns |")
    row = next(line for line in summary.splitlines() if line.startswith("| lasso_support |"))
    rate = res["lasso_support"].rate("pvalue_carving", alpha=0.05).rate
    assert f"carving (selection on y + N(0, 1) noise, exact conditional on all rows) {rate:.3f}" in row
    prow = next(line for line in power.splitlines() if line.startswith("| lasso_support_signal |"))
    oracle = res["lasso_support_signal"].rate("pvalue_oracle", measure="power", alpha=0.05).rate
    assert f"oracle (variable 0, no selection) {oracle:.3f}" in prow
    assert next(line for line in power.splitlines() if line.startswith("| scenario")).count("|") == 2 + 6 + 3


def test_discovery_rate_table_reads_the_results_and_has_its_section(results):
    """The discovery rate counts correct rejections per slot of every replication: never above the
    power's numerator share, rows the same as the power table's, and its own release section."""
    pw = power_table(results)
    dr = power_table(results, measure="discovery_rate")
    assert list(dr.column) == list(pw.column)
    res = results["topk_signal"]
    for _, row in dr.iterrows():
        r = res.rate(row.column, measure="discovery_rate", alpha=0.05)
        assert row.rate == r.rate and row.n_trials == r.n_trials
    assert (dr.set_index("column").rate <= pw.set_index("column").rate + 1e-12).all()
    with pytest.raises(ValueError, match="`measure` must be 'power' or 'discovery_rate'; got 'fwer'"):
        power_table(results, measure="fwer")
    text = release_table(results, command="selective validate", seed=11)
    section = text[text.index("## Discovery rate at alpha = 0.05"):text.index("## preregistered")]
    best = best_route(dr).loc["topk_signal"]
    assert f"{best.method}: {best.rate:.3f}" in section and "the discovery rate of data splitting" in section


def test_scenario_columns_keep_their_own_labels_in_the_summaries():
    """Two scenarios label the same column name differently (the carving of the lasso and of
    Freedman's screen): each summary row names its scenario's own label, not the last one read."""
    res = validate(["lasso_support_signal", "freedman_signal"], n_reps=12, progress=False, seed=3)
    text = release_table(res, command="selective validate", seed=3)
    rows = [line for line in text.splitlines() if line.startswith(("| lasso_support_signal", "| freedman_signal"))]
    assert len(rows) == 6  # type-I, power and discovery summaries
    for line in rows:
        freedman = line.startswith("| freedman_signal")
        assert ("carving (screen on data splitting's rows" in line) == freedman
        assert ("carving (selection on y + N(0, 1) noise" in line) == (not freedman)


def test_a_column_labelled_differently_by_scenarios_gets_one_neutral_legend_entry():
    from selective.validation.plots import _legend_label

    assert _legend_label(["carving (screen on rows)", "carving (selection on y + noise)"]) == "carving"
    assert _legend_label(["oracle (feature 0)", "oracle (feature 0)"]) == "oracle (feature 0)"
    two = _legend_label(["conditional on A (randomized)", "conditional on B (x)"])
    assert two == "conditional on A / conditional on B"


@pytest.mark.parametrize("argv", [["validate", "--scenario", "topk_signal", "--reps", "40", "--plot", "v.png"],
                                  ["validate", "--scenario", "topk_signal", "--power-plot", "p.png"],
                                  ["experiment", "holdout-reuse", "--plot", "h.png"]])
def test_a_figure_without_matplotlib_fails_before_the_run(argv, monkeypatch, tmp_path, capsys):
    import importlib.util

    import selective.validation.experiments as experiments
    import selective.validation.validate as validate_module

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))

    def must_not_run(*args, **kwargs):
        raise AssertionError("the run started although its figure cannot be drawn")
    monkeypatch.setattr(validate_module, "validate", must_not_run)
    monkeypatch.setattr(experiments, "holdout_reuse_experiment", must_not_run)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "needs matplotlib, which is not installed" in err and "pip install 'selective[plot]'" in err
