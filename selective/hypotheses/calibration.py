r"""Calibration table: how often each test rejects under adverse nulls, at small levels.

:func:`calibration_table` draws data under null hypotheses chosen to strain the tests (skew,
unbalanced arms, rare events, small n, ties, an overdispersed exposure, plus benign cases) and
measures, at levels :math:`10^{-2}` to :math:`10^{-5}`, the rejection rate of

- ``run``: how often the p-value is *used and* rejects, i.e. :math:`P(p \le u,\ \text{trusted\_level} \le u)`
  (a p-value whose ``trusted_level`` exceeds the level is withheld, so it cannot reject), next
  to the naive rate :math:`P(p \le u)` that ignores ``trusted_level``;
- ``run_at_level``: the same for the result of ``spec.run_at_level(data, u)``.

Each row gives the Clopper-Pearson 95% interval of the rate and the one-sided exact binomial
p-value of "the rate exceeds its bound": the level itself, or :math:`1.1u` when an
asymptotic or exact-under-model p-value was used (Bradley's stringent criterion,
:mod:`selective.hypotheses._trust`; exact-under-model tests are trusted from the shape of
their data, :mod:`selective.hypotheses._trust_model`). A row *fails* when that p-value is
below :data:`FAIL_AT` = 1e-6; a case marked outside the premise of its test's trust rule
reports ``outside model`` instead: the one shipped (``t-contaminated-100``) is a population whose
mean is carried by outliers rarer than one per sample, which most samples do not show, so no
rule that reads the sample can see them (Bahadur and Savage 1956).

What the table can show: ``run`` rows use vectorised statistics (or caches over sufficient
statistics through the real ``run``), so 10^6 or more draws per case, enough to see a
two-fold excess at :math:`10^{-5}`. ``run_at_level`` rows whose version is deterministic (exact
binomial, Fisher, exact Spearman null, t reference) are as large. Monte Carlo permutation
versions cost :math:`B \approx 10/u` resamples per draw, so those rows hold few draws at small
levels (column ``detectable``: the smallest rate over the level the row flags half of the
time): they check the plumbing, while their validity at every level is the permutation
theorem (exchangeability). Every case first checks that its vectorised form reproduces the
spec's own ``run`` (p-value and trusted level) on a few draws.

``main(argv)`` is the command-line entry (``selective calibrate``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from .._validation import check_int, check_rng
from . import _calibration_cases as _cases
from . import _trust

__all__ = ["LEVELS", "FAIL_AT", "CASES", "Case", "calibration_table", "case", "to_markdown", "render_document", "main"]

#: Levels of the table.
LEVELS = (1e-2, 1e-3, 1e-4, 1e-5)
#: A row fails when the one-sided binomial p-value of an excess is below this.
FAIL_AT = 1e-6
#: Draws of ``run_at_level`` per level when each draw runs a Monte Carlo permutation version.
PER_CALL_DRAWS = {1e-2: 2000, 1e-3: 400, 1e-4: 60, 1e-5: 6}
#: Draws checked against the spec's own ``run`` before a case is measured.
N_CHECKED = 5

COLUMNS = ("test", "null", "adverse", "call", "level", "n_draws", "pvalue_method", "trusted_share", "rejections",
           "rate", "ci_low", "ci_high", "naive_rate", "bound", "p_excess", "detectable", "status")

CASES, Case, Batch = _cases.CASES, _cases.Case, _cases.Batch
case = _cases.case
_quiet, _safe, _all_cases = _cases._quiet, _cases._safe, _cases._all_cases


def _check_case(case: Case, rng: np.random.Generator, levels: Sequence[float]) -> None:
    """The vectorised ``run`` (and ``run_at_level``) of a case must reproduce the spec's own on
    a few draws: p-values to 1e-6 relative, trusted levels to one step of the level grid."""
    batch = case.simulate(rng, N_CHECKED)
    checks = [("run", _quiet(lambda: case.run_batch(batch)), lambda frame: case.spec.run(frame))]
    if case.at_level_batch is not None:
        for level in levels:
            checks.append((f"run_at_level({level:g})", _quiet(lambda level=level: case.at_level_batch(batch, level)),
                           lambda frame, level=level: case.spec.run_at_level(frame, level)))
    for call, values, reference in checks:
        p, tl = np.broadcast_to(values[0], (N_CHECKED,)), np.broadcast_to(values[1], (N_CHECKED,))
        for i in range(N_CHECKED):
            ref_p, ref_tl, _ = _safe(lambda i=i, reference=reference: reference(case.frame(batch, i)))
            if math.isnan(ref_p) and math.isnan(p[i]):
                continue
            if not (math.isclose(p[i], ref_p, rel_tol=1e-6, abs_tol=1e-12)
                    and math.isclose(tl[i], ref_tl, rel_tol=0.16, abs_tol=1e-300)):
                raise RuntimeError(
                    f"calibration case {case.key!r}: the vectorised {call} gives p = {p[i]!r}, trusted level = "
                    f"{tl[i]!r}; the spec's gives {ref_p!r}, {ref_tl!r}."
                )


def _bound(level: float, methods: np.ndarray, used: np.ndarray) -> float:
    asymptotic = bool(np.any(used & ((methods == "asymptotic") | (methods == "exact_under_model"))))
    return level * (1.0 + _trust.RATE_TOLERANCE) if asymptotic else level


def _row(case: Case, call: str, level: float, p: np.ndarray, tl: np.ndarray, methods: np.ndarray) -> dict:
    n = len(p)
    used = tl <= level
    hits = int(np.count_nonzero(used & (p <= level)))
    naive = int(np.count_nonzero(p <= level))
    bound = _bound(level, methods, used)
    ci = scipy.stats.binomtest(hits, n).proportion_ci(0.95, method="exact") if n else None
    p_excess = float(scipy.stats.binomtest(hits, n, bound, alternative="greater").pvalue) if n else math.nan
    critical = int(scipy.stats.binom.isf(FAIL_AT, n, bound)) + 1 if n else 0
    used_methods = sorted(set(methods[used].tolist()) - {"not run"})
    if not used.any():
        status = "withheld"
    elif p_excess < FAIL_AT:
        status = "fail" if case.within_model else "outside model"
    else:
        status = "ok"
    return {
        "test": case.test, "null": case.null, "adverse": case.adverse, "call": call, "level": level,
        "n_draws": n, "pvalue_method": "+".join(used_methods) if used_methods else "-",
        "trusted_share": float(used.mean()) if n else math.nan, "rejections": hits, "rate": hits / n if n else math.nan,
        "ci_low": ci.low if ci else math.nan, "ci_high": ci.high if ci else math.nan,
        "naive_rate": naive / n if n else math.nan, "bound": bound, "p_excess": p_excess,
        "detectable": critical / n / level if n else math.nan, "status": status,
    }


def _measure_run(case: Case, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    ps, tls = [], []
    done = 0
    while done < draws:
        size = min(case.chunk, draws - done)
        p, tl = _quiet(lambda size=size: case.run_batch(case.simulate(rng, size)))
        ps.append(np.asarray(p, dtype=float))
        tls.append(np.broadcast_to(np.asarray(tl, dtype=float), np.shape(p)))
        done += size
    return np.concatenate(ps), np.concatenate(tls)


def _run_method(case: Case, rng: np.random.Generator) -> str:
    batch = case.simulate(rng, 1)
    return _safe(lambda: case.spec.run(case.frame(batch, 0)))[2]


def _measure_at_level(case: Case, level: float, draws: int, per_call: int, rng: np.random.Generator):
    if case.at_level_batch is not None:
        out_p, out_tl, out_m = [], [], []
        done = 0
        while done < draws:
            size = min(case.chunk, draws - done)
            p, tl, m = _quiet(lambda size=size: case.at_level_batch(case.simulate(rng, size), level))
            out_p.append(np.asarray(p, dtype=float))
            out_tl.append(np.asarray(tl, dtype=float))
            out_m.append(np.asarray(m, dtype=object))
            done += size
        return np.concatenate(out_p), np.concatenate(out_tl), np.concatenate(out_m)
    batch = case.simulate(rng, per_call)
    p, tl = _quiet(lambda: case.run_batch(batch))
    p, tl = np.array(p, dtype=float), np.array(np.broadcast_to(tl, np.shape(p)), dtype=float)
    methods = np.full(per_call, _run_method(case, rng), dtype=object)
    for i in np.flatnonzero(tl > level):  # run_at_level returns run's result where that is trusted
        p[i], tl[i], methods[i] = _safe(lambda i=i: case.spec.run_at_level(case.frame(batch, i), level, rng=rng))
    return p, tl, methods


def calibration_table(
    *,
    cases: Sequence[str] | None = None,
    levels: Sequence[float] = LEVELS,
    scale: float = 1.0,
    calls: Sequence[str] = ("run", "run_at_level"),
    rng: np.random.Generator | int | None = 20_240_701,
    progress: Callable[[str], None] | None = None,
    check: bool = True,
) -> pd.DataFrame:
    """Measure rejection rates of ``run`` and ``run_at_level`` under the adverse nulls.

    Parameters
    ----------
    cases : sequence of str or Case, optional
        Keys of :data:`CASES` to measure (default: all), or :class:`Case` objects.
    levels : sequence of float
        Levels in (0, 1).
    scale : float
        Multiplies every number of draws (0.01 for a quick look; 1 for docs/calibration.md).
    calls : sequence of {"run", "run_at_level"}
    rng : numpy.random.Generator or int, optional
        Seed of the null draws and of the permutation resamples (a Generator gives one); each
        case draws from the stream of (seed, crc32 of its key), so its rows do not depend on
        the other cases measured.
    progress : callable, optional
        Called with a line of text after each case.
    check : bool
        First check each case's vectorised form against its spec on a few draws (a case
        built to misbehave, as in the tests, turns it off).

    Returns
    -------
    pandas.DataFrame
        One row per (case, call, level) with columns :data:`COLUMNS`.
    """
    first = check_rng(rng)  # validates rng
    base = int(rng) if isinstance(rng, (int, np.integer)) else int(first.integers(2**62))
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0):
        raise ValueError(f"`scale` must be a positive number; got {scale!r}.")
    for call in calls:
        if call not in ("run", "run_at_level"):
            raise ValueError(f"`calls` must hold 'run' and/or 'run_at_level'; got {call!r}.")
    for level in levels:
        if not (isinstance(level, float) and 0 < level < 1):
            raise ValueError(f"`levels` must hold floats in (0, 1); got {level!r}.")
    chosen = _all_cases()
    if cases is not None:
        unknown = [k for k in cases if not isinstance(k, Case) and k not in CASES]
        if unknown:
            raise ValueError(f"unknown calibration case(s) {unknown!r}; the cases are {list(CASES)!r}.")
        by_key = {c.key: c for c in chosen}
        chosen = [k if isinstance(k, Case) else by_key[k] for k in cases]
    rows = []
    for case in chosen:
        start = time.perf_counter()
        # each case draws from its own stream (seed and key), so a row reproduces alone (--cases)
        gen = np.random.default_rng([base, zlib.crc32(case.key.encode())])
        if check:
            _check_case(case, gen, levels)
        if "run" in calls and "run" in case.calls:
            draws = max(1, int(case.draws * scale))
            p, tl = _measure_run(case, draws, gen)
            methods = np.full(len(p), _run_method(case, gen), dtype=object)
            rows += [_row(case, "run", level, p, tl, methods) for level in levels]
        if "run_at_level" in calls and "run_at_level" in case.calls:
            for level in levels:
                draws = max(1, int(case.draws * scale))
                per_call = max(1, int(PER_CALL_DRAWS.get(level, 12) * scale))
                p, tl, methods = _measure_at_level(case, level, draws, per_call, gen)
                rows.append(_row(case, "run_at_level", level, p, tl, methods))
        if progress is not None:
            progress(f"{case.key}: {time.perf_counter() - start:.1f} s")
    return pd.DataFrame(rows, columns=list(COLUMNS))


# ---------------------------------------------------------------- rendering and command line


def _fmt(value: Any, column: str) -> str:
    if isinstance(value, str):
        return value
    if column in ("n_draws", "rejections"):
        return f"{int(value):,}"
    if isinstance(value, float) and math.isnan(value):
        return ""
    if column in ("trusted_share",):
        return f"{value:.3g}"
    if column == "detectable":
        return f"{value:.3g}x"
    return f"{value:.2g}"


def to_markdown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    """The table as GitHub Markdown (levels and rates with two significant digits)."""
    columns = list(columns) if columns is not None else [c for c in frame.columns if c not in ("adverse",)]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], c).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines) + "\n"


#: Columns shown in the Markdown document.
DOCUMENT_COLUMNS = ("test", "null", "call", "level", "n_draws", "pvalue_method", "trusted_share", "rate", "ci_high",
                    "naive_rate", "detectable", "status")

_DOCUMENT_HEAD = """# Calibration of the naive p-values at small levels

Made by `{command}` ({seconds:.0f} s); the code is `selective.hypotheses.calibration`.

Each row draws data under a null hypothesis chosen to strain the test (column `null`) and
counts how often the p-value is *used and* rejects at `level`: a result whose
`trusted_level` exceeds the level is withheld and never rejects. `call` is `run` (the
ordinary result) or `run_at_level` (the version trusted at the level, when one exists).

- `trusted_share`: share of the draws whose result was trusted at the level (used);
- `rate`: share of the draws used and rejected; `ci_high`: its 95% Clopper-Pearson upper end;
- `naive_rate`: share of the draws whose p-value was at most the level, trusted or not:
  what comparing every p-value with the level would give;
- `detectable`: the rate, as a multiple of the level, that this row flags half of the time;
- `status`: `fail` when a one-sided exact binomial test rejects "rate <= bound" at 1e-6,
  with bound the level (1.1 times it when an asymptotic p-value was used: Bradley's
  stringent criterion); `outside model` when the null breaks the premise of the test's trust
  rule, that the sample shows the shape of the population (outliers rarer than one per sample:
  no rule that reads the sample can see them, Bahadur and Savage 1956), where the row documents
  the excess without failing; `withheld` when no draw was trusted at that level.

What the table can show. `run` rows, and `run_at_level` rows whose version is deterministic
(exact binomial, Fisher, exact Spearman null, t or F reference), hold up to millions of
draws, enough to see an excess of about twice the level at 1e-5 (`detectable`). What it
cannot: `run_at_level` rows whose version is a Monte Carlo permutation test need about
10/level resamples per draw, so they hold few draws at small levels (6 at 1e-5); they check
the plumbing, not the validity, which is the permutation theorem (the permuted units are
exchangeable under the null) and is measured at 1e-2 with 2,000 draws. No row can show a
rate below about 3/n_draws. The nulls are examples, not a proof: trusted levels of
asymptotic p-values come from Edgeworth-type rules (`selective.hypotheses._trust`) that
these rows check where they matter most.

"""


def render_document(frame: pd.DataFrame, *, command: str, seconds: float) -> str:
    """docs/calibration.md: the explanation above and the table."""
    return _DOCUMENT_HEAD.format(command=command, seconds=seconds) + to_markdown(frame, DOCUMENT_COLUMNS)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: measure the table and print it (or write it) as Markdown.

    ``selective calibrate [--scale S] [--seed N] [--cases K ...] [--levels U ...] [--output FILE]``;
    with ``--output`` the file is the document of docs/calibration.md (explanation and table),
    else the full table is printed. Returns 0, or 1 when a row fails.
    """
    parser = argparse.ArgumentParser(prog="selective calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the number of null draws (default 1)")
    parser.add_argument("--seed", type=int, default=20_240_701, help="seed of the null draws and resamples")
    parser.add_argument("--cases", nargs="+", choices=CASES, help="cases to measure (default: all)")
    parser.add_argument("--levels", nargs="+", type=float, default=list(LEVELS), help="levels (default 1e-2 .. 1e-5)")
    parser.add_argument("--calls", nargs="+", choices=("run", "run_at_level"), default=["run", "run_at_level"])
    parser.add_argument("--output", help="write the Markdown table to this file instead of printing it")
    args = parser.parse_args(list(argv) if argv is not None else None)
    check_int("seed", args.seed, low=0)
    command = ("selective calibrate " + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    start = time.perf_counter()
    frame = calibration_table(
        cases=args.cases, levels=[float(u) for u in args.levels], scale=args.scale, calls=args.calls,
        rng=args.seed, progress=lambda line: print(line, file=sys.stderr),
    )
    if args.output:
        text = render_document(frame, command=command, seconds=time.perf_counter() - start)
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        print(to_markdown(frame), end="")
    return 1 if (frame["status"] == "fail").any() else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
