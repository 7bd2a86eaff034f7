"""The scenario library run as a whole: :func:`validate` (the ``selective validate`` command).

The only validation module that knows both the harness (:mod:`selective.validation.harness`)
and the scenario registry (:mod:`selective.validation.scenarios`). The command line part
(argument parsing, printing) lives in :mod:`selective.cli`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from scipy import stats

from .._validation import check_int
from .harness import SimulationResult, simulate
from .outcomes import COLUMN_LABELS, PVALUE_COLUMNS, replication_seed, root_sequence
from .plots import plot_power, plot_validation
from .scenarios import SCENARIOS, get_scenario

__all__ = ["validate", "plot_validation", "plot_power", "verdicts", "power_table", "best_route", "release_table",
           "VALIDITY_LEVELS", "FAILURE_P", "BASELINES"]

#: Levels at which every column labelled valid must hold its level in every scenario.
VALIDITY_LEVELS = (0.05, 0.01)
#: A column fails when a one-sided exact binomial test of "rate > alpha" has p below this: a
#: correct column is declared failing with probability at most this, per column and level.
FAILURE_P = 1e-6


def validate(scenarios: Sequence[Any] | str | None = None, *, n_reps: int | None = None, alpha: float = 0.05,
             seed: Any = 2024, n_jobs: int = 1, progress: bool = True, **kwargs: Any) -> dict[str, SimulationResult]:
    """Run scenarios of :mod:`selective.validation.scenarios` (all by default); one result per name.

    ``n_reps`` defaults to each scenario's ``default_reps``. Scenario ``i`` uses the root seed
    ``SeedSequence(seed).spawn(...)[i]`` of its position in the library, so a scenario's result
    does not depend on which others are run.

    Parameters
    ----------
    scenarios : str, sequence of str or scenarios, or None
        Scenario names (or scenario objects); None runs the whole library in its fixed order.
    n_reps : int, optional
        Replications per scenario, >= 1 (default: each scenario's ``default_reps``).
    alpha : float
        Main level, in (0, 1).
    seed : int, SeedSequence or None
        Root seed of the whole run.
    n_jobs : int
        Local worker processes.
    progress : bool
        Show a progress bar per scenario.
    **kwargs
        Passed on to :func:`~selective.validation.harness.simulate`.

    Returns
    -------
    dict of str to SimulationResult
        One result per scenario name, in the order run.
    """
    if scenarios is None:
        chosen = list(SCENARIOS.values())
    elif isinstance(scenarios, str):
        chosen = [get_scenario(scenarios)]
    else:
        chosen = [get_scenario(s) if isinstance(s, str) else s for s in scenarios]
    if n_reps is not None:
        n_reps = check_int("n_reps", n_reps, low=1)
    order = list(SCENARIOS)
    root = root_sequence(seed)
    out = {}
    for sc in chosen:
        pos = order.index(sc.name) if sc.name in order else len(order)
        out[sc.name] = simulate(sc, n_reps=n_reps or sc.default_reps, alpha=alpha, seed=replication_seed(root, pos),
                                n_jobs=n_jobs, progress=progress, **kwargs)
    return out


def verdicts(results: dict[str, SimulationResult], *, levels: Sequence[float] = VALIDITY_LEVELS,
             failure_p: float = FAILURE_P) -> pd.DataFrame:
    """Whether each column holds its level in each scenario, with the reason where it need not.

    A column the package labels valid ``holds`` when, at every level of ``levels``, the one-sided
    exact binomial test of "type-I error rate > alpha" has p-value above ``failure_p``; else it
    ``FAILS``. The naive column and the scenario's diagnostic columns are ``not valid`` (shown to
    prove a point, with the reason); columns the package withholds in the scenario are
    ``withheld`` with the reason, never shown as a number. A column the scenario declares
    withheld but which tested something in some replication is judged like a valid column, with
    a reason saying so (withholding can only remove rejections, so it never hides a failure).

    Returns
    -------
    pandas.DataFrame
        Columns ``scenario``, ``column``, ``method``, ``verdict``, ``worst_rate``, ``worst_alpha``,
        ``p_above`` (the smallest binomial p-value over the levels) and ``reason``.
    """
    rows = []
    for name, res in results.items():
        sc = get_scenario(name) if name in SCENARIOS else None
        invalid = dict(getattr(sc, "invalid_columns", {}) or {})
        withheld = dict(getattr(sc, "withheld_columns", {}) or {})
        invalid.setdefault("pvalue_naive", "ignores the selection (shown as the baseline)")
        labels = {**dict(getattr(sc, "column_labels", {}) or {}), **getattr(res, "column_labels", {})}
        for col in list(res.columns) + [c for c in withheld if c not in res.columns]:
            base = {"scenario": name, "column": col, "method": COLUMN_LABELS.get(col, labels.get(col, col))}
            if col in withheld and col not in res.columns:
                rows.append({**base, "verdict": "withheld", "worst_rate": math.nan, "worst_alpha": math.nan,
                             "p_above": math.nan, "reason": withheld[col]})
                continue
            # a column the scenario says is withheld but that showed numbers is judged as a
            # valid one (a withheld column may never hide a failure)
            worst = None
            for a in levels:
                try:
                    r = res.rate(col, alpha=a)
                except KeyError:
                    continue
                if not r.n_trials:
                    continue
                p = stats.binomtest(int(r.n_events), int(r.n_trials), a, alternative="greater").pvalue
                if worst is None or p < worst[0]:
                    worst = (p, float(r.rate), a)
            if worst is None:
                rows.append({**base, "verdict": "no null trials", "worst_rate": math.nan, "worst_alpha": math.nan,
                             "p_above": math.nan, "reason": "no true null was tested in this scenario"})
                continue
            if col in invalid:
                verdict, reason = "not valid (diagnostic)", invalid[col]
            else:
                verdict = "holds" if worst[0] > failure_p else "FAILS"
                reason = "" if verdict == "holds" else f"rate {worst[1]:.4g} at alpha {worst[2]:g}"
                if col in withheld:
                    reason = "; ".join(x for x in (reason, (
                        "declared withheld, shown in some replications and judged as a valid column (the report "
                        "shows a corrected p-value where it cannot reject: THEORY.md 7.1)")) if x)
            rows.append({**base, "verdict": verdict, "worst_rate": worst[1], "worst_alpha": worst[2],
                         "p_above": worst[0], "reason": reason})
    return pd.DataFrame(rows, columns=["scenario", "column", "method", "verdict", "worst_rate", "worst_alpha",
                                       "p_above", "reason"])


#: Columns that are baselines of the power table, not routes of the package: data splitting and
#: fission (they test on data the exploration did not see) and the oracle (no selection at all).
BASELINES = ("pvalue_split", "pvalue_fission", "pvalue_oracle", "pvalue_split_directional")
#: the columns every scenario has: the summary tables give each its own column, the others share one
_STANDARD = PVALUE_COLUMNS[:6]


def power_table(results: dict[str, SimulationResult], *, alpha: float = 0.05,
                levels: Sequence[float] = VALIDITY_LEVELS, failure_p: float = FAILURE_P,
                measure: str = "power") -> pd.DataFrame:
    """The power of every column at ``alpha`` in the scenarios with real effects, as a tidy frame.

    One row per (scenario, column) where the column tested a real effect at least once and is not
    withheld: ``scenario``, ``column``, ``method`` (its label), ``valid`` (its verdict of
    :func:`verdicts` is "holds" or "no null trials"), ``baseline`` (one of :data:`BASELINES`),
    ``rate``, ``ci_low``, ``ci_high`` (Monte-Carlo interval) and ``n_trials`` (tested real
    effects). Scenarios without real effects have no rows.

    Parameters
    ----------
    results : dict of str to SimulationResult
        From :func:`validate`.
    alpha : float
        The level of the power (one of the results' levels).
    levels, failure_p
        As for :func:`verdicts` (they decide which columns are valid).
    measure : {"power", "discovery_rate"}
        ``"power"``: rejections among the column's tests of a real effect (conditional on
        testing one; withheld cells are not tests). ``"discovery_rate"``: correct rejections per
        test slot of every replication (a withheld cell, a null selected or nothing selected
        counts as no discovery), which compares routes whose selections differ. The rows are
        the same for both.

    Returns
    -------
    pandas.DataFrame
    """
    if measure not in ("power", "discovery_rate"):
        raise ValueError(f"`measure` must be 'power' or 'discovery_rate'; got {measure!r}.")
    table = verdicts(results, levels=levels, failure_p=failure_p)
    rows = []
    for name, res in results.items():
        mine = table[table.scenario == name].set_index("column")
        for c in res.columns:
            try:
                r = res.rate(c, measure="power", alpha=alpha)
            except KeyError:
                continue
            verdict = mine.loc[c, "verdict"] if c in mine.index else ""
            if not r.n_trials or verdict == "withheld":
                continue
            if measure != "power":
                r = res.rate(c, measure=measure, alpha=alpha)
            rows.append({"scenario": name, "column": c,
                         "method": mine.loc[c, "method"] if c in mine.index else COLUMN_LABELS.get(c, c),
                         "valid": verdict in ("holds", "no null trials"), "baseline": c in BASELINES,
                         "rate": float(r.rate), "ci_low": float(r.ci_low), "ci_high": float(r.ci_high),
                         "n_trials": int(r.n_trials)})
    return pd.DataFrame(rows, columns=["scenario", "column", "method", "valid", "baseline", "rate", "ci_low",
                                       "ci_high", "n_trials"])


def best_route(power: pd.DataFrame) -> pd.DataFrame:
    """Per scenario of a :func:`power_table`: the most powerful valid column that is a route of the
    package (not naive, not a baseline), its power, and data splitting's power.

    Returns
    -------
    pandas.DataFrame
        Indexed by scenario: ``column``, ``method``, ``rate``, ``split`` (NaN when the scenario
        has no splitting column), ``at_least_split`` (``rate >= split``) and ``se_difference``, the
        Monte Carlo standard error of ``rate - split`` (binomial variances of the two rates added,
        as if they were independent; NaN without splitting).
    """
    rows = {}
    for name, g in power.groupby("scenario", sort=False):
        routes = g[g.valid & ~g.baseline & (g.column != "pvalue_naive")]
        split = g[g.column == "pvalue_split"]
        s = float(split.rate.iloc[0]) if len(split) else math.nan
        if routes.empty:
            rows[name] = {"column": "", "method": "", "rate": math.nan, "split": s, "at_least_split": False,
                          "se_difference": math.nan}
            continue
        top = routes.loc[routes.rate.idxmax()]
        se = math.nan if not len(split) else math.sqrt(_binomial_variance(top.rate, top.n_trials)
                                                       + _binomial_variance(s, split.n_trials.iloc[0]))
        rows[name] = {"column": top.column, "method": top.method, "rate": float(top.rate), "split": s,
                      "at_least_split": bool(math.isnan(s) or top.rate >= s), "se_difference": se}
    return pd.DataFrame.from_dict(rows, orient="index",
                                  columns=["column", "method", "rate", "split", "at_least_split", "se_difference"])


def _binomial_variance(rate: float, n: int) -> float:
    return rate * (1.0 - rate) / n if n > 0 and math.isfinite(rate) else math.nan


def _below_split(b: Any) -> str:
    """The verdict of a best route below data splitting, with the gap in Monte Carlo standard errors."""
    gap = b.split - b.rate
    if math.isfinite(b.se_difference) and b.se_difference > 0 and gap <= 2 * b.se_difference:
        return (f" (**below splitting** by {gap:.3f}, within Monte Carlo error: {gap / b.se_difference:.1f} "
                "standard errors)")
    return " (**below splitting**)"


_POWER_TEXT = (
    "Share of a column's tests of a real effect that rejected (among the replications in which the column "
    "tested a real effect; a withheld cell or the test of a null hypothesis is not counted), in the scenarios "
    "that have real effects; a column that is not valid is marked so (its power is not a merit). Data splitting "
    "and data fission test on data the exploration did not see; the oracle tests the true effect without any "
    "selection. The last column names the most powerful valid route of the package (not the naive test, not "
    "one of these baselines).")
_DISCOVERY_TEXT = (
    "Correct rejections per test slot of every replication: a withheld cell, the test of a null hypothesis or "
    "no selection count as no discovery. Routes that select differently (data splitting selects on part of the "
    "rows, carving on a noisier response) are compared on the same footing here; the power above conditions "
    "on having tested a real effect.")


def _power_section(results: dict, power: pd.DataFrame, columns: list, labels: dict, a0: float,
                   figure: str | None, measure: str = "power") -> list[str]:
    """The power (or discovery rate) of every column at ``a0`` in the scenarios with real effects."""
    if power.empty:
        return []
    keep = [c for c in columns if c in set(power.column) and c in _STANDARD]
    best = best_route(power)
    lines = []
    for name, g in power.groupby("scenario", sort=False):
        by = g.set_index("column")

        def cell(c, by=by):
            return _cell(float(by.loc[c, "rate"])) + ("" if by.loc[c, "valid"] else " (not valid)")

        cells = ["" if c not in by.index else cell(c) for c in keep]
        own = [c for c in by.index if c not in _STANDARD]
        cells.append("; ".join(f"{_md(by.loc[c, 'method'] if 'method' in by.columns else labels.get(c, c))} {cell(c)}"
                               for c in own))
        b = best.loc[name]
        top = "none" if not b.column else f"{_md(b.method)}: {_cell(b.rate)}"
        verdict = "" if not b.column or math.isnan(b.split) else (" (at least splitting)" if b.at_least_split
                                                                   else _below_split(b))
        lines.append(f"| {_md(name)} | {results[name].n_reps} | " + " | ".join(cells) + f" | {top}{verdict} |")
    n_ok = int(best.at_least_split.sum())
    what = "power" if measure == "power" else "discovery rate"
    out = [f"## {what.capitalize()} at alpha = {a0:g}", "",
           _POWER_TEXT if measure == "power" else _DISCOVERY_TEXT, "",
           f"**In {n_ok} of {len(best)} scenario(s) with real effects the most powerful valid route has at least "
           f"the {what} of data splitting.**" + _within_error(best), ""]
    if figure:
        out += [f"![Power of every column at alpha = {a0:g}, with Monte-Carlo intervals]({figure})", ""]
    out += ["| scenario | reps | " + " | ".join(_md(labels.get(c, c)) for c in keep)
            + " | scenario-specific columns | most powerful valid route |",
            "|---|---:|" + "---:|" * len(keep) + "---|---|", *lines, ""]
    return out


def _within_error(best: pd.DataFrame) -> str:
    below = best[~best.at_least_split & best.column.astype(bool) & best.split.notna()]
    close = below[(below.split - below.rate) <= 2 * below.se_difference]
    if below.empty:
        return ""
    return (f" Of the {len(below)} below it, {len(close)} within two Monte Carlo standard errors (a gap that "
            "more replications may close or confirm).")


def _cell(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.3f}"


def _rate_with_interval(res: SimulationResult, col: str, alpha: float) -> str:
    try:
        r = res.rate(col, alpha=alpha)
    except KeyError:
        return "n/a"
    return f"{_cell(float(r.rate))} [{_cell(float(r.ci_low))}, {_cell(float(r.ci_high))}]"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|")


def release_table(results: dict[str, SimulationResult], *, command: str, seed: Any,
                  levels: Sequence[float] = VALIDITY_LEVELS, failure_p: float = FAILURE_P,
                  power_figure: str | None = None) -> str:
    """The Markdown release table of a run of :func:`validate` (``selective validate --output``).

    A header (the command line that produced it, the root seed, the rule behind the verdicts
    and their count), a summary of every column in every scenario (the type-I error at the
    first of ``levels`` and the verdict), then one section per scenario: its description,
    truth, replications and seed, and per column the type-I error at each level with its
    Monte-Carlo interval, the verdict and the reason (why a column is not valid, or withheld).

    Parameters
    ----------
    results : dict of str to SimulationResult
        From :func:`validate`.
    command : str
        The command line that produced the results (printed so that the table can be remade).
    seed : int
        The root seed given to :func:`validate`.
    levels, failure_p
        As for :func:`verdicts`.
    power_figure : str, optional
        Path of the power figure (:func:`~selective.validation.plots.plot_power`), relative to
        the document, embedded in the power section.

    Returns
    -------
    str
        The document, ending with a newline. The same results give the same text (no clock).
    """
    from .. import __version__

    table = verdicts(results, levels=levels, failure_p=failure_p)
    order = list(SCENARIOS)
    a0 = levels[0]
    lv = " and ".join(f"{a:g}" for a in levels)
    n_hold, n_fail = int((table.verdict == "holds").sum()), int((table.verdict == "FAILS").sum())
    conf = next(iter(results.values())).confidence_level if results else 0.95
    out = [
        "# Validation of the scenario library", "",
        f"Produced by `{command}` (selective {__version__}). Root seed {seed}: the scenario at position i of "
        "the library (`selective.validation.scenarios.SCENARIOS`) uses the seed sequence "
        "`SeedSequence(seed).spawn(i + 1)[i]`, whatever else is run.", "",
        f"Type-I error of every p-value column under each scenario's null, at alpha = {lv}, with "
        f"{conf:.0%} Clopper-Pearson (Monte-Carlo) intervals. A column the package labels valid FAILS when "
        f"a one-sided exact binomial test of \"rate > alpha\" has p < {failure_p:g} at some level (a correct "
        "column fails with at most that probability per level); *not valid* columns are shown to prove a "
        "point (the naive p-value, diagnostics); *withheld* columns are never shown as numbers, for the "
        "reason given.", "",
        f"**{n_hold} valid column(s) hold their level; {n_fail} fail.**", "",
    ]
    columns = [c for c in PVALUE_COLUMNS if c in set(table.column)]
    columns += [c for c in dict.fromkeys(table.column) if c not in columns]
    labels = dict(zip(table.column, table.method, strict=True))
    standard = [c for c in columns if c in _STANDARD]
    out += [f"## Summary: type-I error at alpha = {a0:g}", "",
            "The columns every scenario has, then the scenario's own (exact conditional, randomized, carving, "
            "fission, oracle, diagnostics), each with its rate.", "",
            "| scenario | reps | " + " | ".join(_md(labels[c]) for c in standard) + " | scenario-specific columns |",
            "|---|---:|" + "---:|" * len(standard) + "---|"]
    for name, res in results.items():
        mine = table[table.scenario == name].set_index("column")

        def cell(c, mine=mine, res=res):
            v = mine.loc[c]
            if v.verdict == "withheld":
                return "withheld"
            try:
                rate = _cell(float(res.rate(c, alpha=a0).rate))
            except KeyError:
                rate = "n/a"
            return rate + {"holds": "", "FAILS": " **FAILS**"}.get(v.verdict, " (not valid)")

        cells = ["" if c not in mine.index else cell(c) for c in standard]
        own = [c for c in columns if c in mine.index and c not in _STANDARD]
        cells.append("; ".join(f"{_md(mine.loc[c, 'method'])} {cell(c)}" for c in own))  # the scenario's own label
        out.append(f"| {_md(name)} | {res.n_reps} | " + " | ".join(cells) + " |")
    out.append("")
    out += _power_section(results, power_table(results, alpha=a0, levels=levels, failure_p=failure_p), columns,
                          labels, a0, power_figure)
    out += _power_section(results, power_table(results, alpha=a0, levels=levels, failure_p=failure_p,
                                               measure="discovery_rate"), columns, labels, a0, None,
                          measure="discovery_rate")
    for name, res in results.items():
        sc = get_scenario(name) if name in SCENARIOS else None
        pos = order.index(name) if name in order else None
        out += [f"## {_md(name)}", ""]
        if sc is not None:
            out += [f"{sc.description[:1].upper()}{sc.description[1:]}. {sc.truth}", ""]
        where = f"position {pos}" if pos is not None else "not in the library"
        out += [f"{res.n_reps} replications; root seed {seed}, {where}.", "",
                "| column | method | " + " | ".join(f"type I at {a:g} [CI]" for a in levels) + " | verdict | reason |",
                "|---|---|" + "---:|" * len(levels) + "---|---|"]
        for _, v in table[table.scenario == name].iterrows():
            rates = ["" if v.verdict == "withheld" else _rate_with_interval(res, v.column, a) for a in levels]
            verdict = "**FAILS**" if v.verdict == "FAILS" else v.verdict
            out.append(f"| {v.column} | {_md(v.method)} | " + " | ".join(rates) + f" | {verdict} | {_md(v.reason)} |")
        out.append("")
    return "\n".join(out)
