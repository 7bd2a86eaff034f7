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
from .outcomes import COLUMN_LABELS, replication_seed, root_sequence
from .plots import plot_validation
from .scenarios import SCENARIOS, get_scenario

__all__ = ["validate", "plot_validation", "verdicts", "VALIDITY_LEVELS", "FAILURE_P"]

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
    ``withheld`` with the reason, never shown as a number.

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
        for col in list(res.columns) + [c for c in withheld if c not in res.columns]:
            base = {"scenario": name, "column": col, "method": COLUMN_LABELS.get(col, col)}
            if col in withheld:
                rows.append({**base, "verdict": "withheld", "worst_rate": math.nan, "worst_alpha": math.nan,
                             "p_above": math.nan, "reason": withheld[col]})
                continue
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
            rows.append({**base, "verdict": verdict, "worst_rate": worst[1], "worst_alpha": worst[2],
                         "p_above": worst[0], "reason": reason})
    return pd.DataFrame(rows, columns=["scenario", "column", "method", "verdict", "worst_rate", "worst_alpha",
                                       "p_above", "reason"])
