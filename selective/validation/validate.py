"""The scenario library run as a whole: :func:`validate` (the ``selective validate`` command).

The only validation module that knows both the harness (:mod:`selective.validation.harness`)
and the scenario registry (:mod:`selective.validation.scenarios`). The command line part
(argument parsing, printing) lives in :mod:`selective.cli`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._validation import check_int
from .harness import SimulationResult, simulate
from .outcomes import replication_seed, root_sequence
from .plots import plot_validation
from .scenarios import SCENARIOS, get_scenario

__all__ = ["validate", "plot_validation"]


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
