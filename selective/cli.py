"""The ``selective`` command.

Commands: ``demo``, ``analyze DATA.csv --plan PLAN.toml``, ``show AUDIT.json``,
``verify AUDIT.json DATA.csv``, ``experiment holdout-reuse``, ``validate`` (type-I error and
power of every p-value column on the scenario library).

Exit codes: 0 success; 2 bad usage or input (the message names the file, the field and what
was expected; nothing is written); 3 ``verify`` found a difference; 1 internal error.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["main", "build_parser", "add_validate_command"]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_MISMATCH = 0, 1, 2, 3
FORMATS = ("md", "tex", "html", "csv")


class UsageError(Exception):
    """Bad usage or input: reported on stderr with exit code 2."""


def _render(table, fmt: str, columns: str) -> str:
    from .analysis.audit import render_table

    return render_table(table, fmt, columns)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    analysis, table = run_demo(k=args.k, seed=args.seed)
    print("selective demo: 600 simulated participants, 60 biomarkers, one real treatment effect (m07).")
    print("Exploration: keep the biomarkers with the largest |Welch t| between arms, then test them")
    print("on the same data. Naive p-values ignore that choice; corrected ones account for it.\n")
    print(table.to_markdown(columns="short", footnote=False))
    print()
    print("Ledger:")
    print(table.ledger_to_markdown())
    print()
    print(table.footnote)
    sig_naive = int((table.frame["pvalue_naive"] <= table.alpha).sum())
    sig_best = int((table.frame["pvalue_best"] <= table.alpha).sum())
    print(f"\nAt alpha = {table.alpha:g}: {sig_naive} naive rejection(s), {sig_best} after correction.")
    return EXIT_OK


#: CSV files larger than this are read lazily with Dask (partition by partition), like Parquet.
LAZY_CSV_BYTES = 512 * 2**20
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def read_data(path: str):
    """Read a data file; errors name the file and what is wrong.

    A Parquet file (``.parquet``, ``.pq``, ``.parq``) or folder of Parquet files, and a CSV file
    larger than :data:`LAZY_CSV_BYTES`, are opened lazily as a Dask DataFrame
    (:func:`selective.analysis.sources.open_data`): never loaded whole. Other files are read as
    CSV with pandas.
    """
    import pandas as pd

    p = Path(path)
    lazy = p.is_dir() or p.suffix.lower() in _PARQUET_SUFFIXES
    if not lazy and not p.is_file():
        raise UsageError(f"data file {path!r} does not exist.")
    if lazy or p.stat().st_size > LAZY_CSV_BYTES:
        from .analysis.sources import count_rows, open_data

        if not p.exists():
            raise UsageError(f"data file {path!r} does not exist.")
        try:
            data = open_data(p if lazy else p.with_suffix(p.suffix or ".csv")) if lazy or p.suffix else None
            if data is None:
                raise ValueError("a large CSV file needs the suffix .csv, .tsv or .txt to be read lazily")
            empty = count_rows(data) == 0
        except (ValueError, OSError, ImportError) as exc:
            raise UsageError(f"{path}: cannot be read{' as Parquet' if lazy else ''}: {exc}") from None
        if empty:
            raise UsageError(f"{path}: the file holds no rows.")
        return data
    try:
        data = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read as CSV: {exc}") from None
    if data.empty:
        raise UsageError(f"{path}: the file holds no rows.")
    return data


def _default_audit_path(args: argparse.Namespace) -> Path:
    if args.audit:
        return Path(args.audit)
    if args.out:
        out = Path(args.out)
        return out.with_name(out.stem + ".audit.json")
    plan = Path(args.plan)
    return plan.with_name(plan.stem + ".audit.json")


def _check_output_paths(args: argparse.Namespace, audit: Path, out: Path | None) -> None:
    """Refuse, before anything runs, outputs that would overwrite an input or each other."""
    inputs = {Path(args.data).resolve(): "the data file", Path(args.plan).resolve(): "the plan file"}
    targets = [("--audit", audit)] + ([("--out", out)] if out is not None else [])
    for flag, path in targets:
        resolved = path.resolve()
        if resolved in inputs:
            raise UsageError(f"{flag} {str(path)!r} is {inputs[resolved]}; it would be overwritten.")
        if path.is_dir():
            raise UsageError(f"{flag} {str(path)!r} is a directory; give a file name.")
    if out is not None and out.resolve() == audit.resolve():
        raise UsageError(f"--out and the audit are the same file {str(out)!r}; give --audit another name.")


def _cmd_analyze(args: argparse.Namespace) -> int:
    import json
    import os

    from .analysis.audit import audit_record, dump_record, render_table, validate_audit, write_table_and_audit
    from .analysis.plan import load_plan, run_plan, with_seed

    plan = load_plan(args.plan)
    data = read_data(args.data)
    audit_path = _default_audit_path(args)
    out_path = Path(args.out) if args.out else None
    _check_output_paths(args, audit_path, out_path)
    # everything is computed and checked before anything is written
    analysis = run_plan(plan, data, seed=args.seed, progress=not args.quiet)
    table = analysis.report(adjust=args.adjust)
    rel = None if out_path is None else os.path.relpath(out_path.resolve(), audit_path.resolve().parent)
    record = audit_record(analysis, table, plan=with_seed(plan.raw, analysis.seed), data_source=str(args.data),
                          adjust=args.adjust, output={"file": rel, "format": args.format, "columns": args.columns})
    text = render_table(table, args.format, args.columns, record=record)
    audit_text = dump_record(record)
    validate_audit(json.loads(audit_text), str(audit_path))  # what is written can be read back
    try:
        write_table_and_audit(out_path, text, audit_path, audit_text)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out + ' and ' if args.out else ''}{audit_path}: {exc}") from None
    if out_path is None:
        sys.stdout.write(text)
    if not args.quiet:
        where = f"{args.out} and " if args.out else ""
        print(f"wrote {where}{audit_path}", file=sys.stderr)
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    from .analysis.audit import read_audit, render_table, table_from_audit

    record = read_audit(args.audit)
    sys.stdout.write(render_table(table_from_audit(record), args.format, args.columns, record=record))
    return EXIT_OK


def verify(record: dict, data, *, audit_path=None, table_path=None) -> list[str]:
    """Recompute an audit record from the data; return the differences found (empty if none).

    See :func:`selective.analysis.audit.verify_audit`: every field is recomputed and compared
    exactly, and the table file checked against its recorded SHA-256.
    """
    from .analysis.audit import verify_audit

    return verify_audit(record, data, audit_path=audit_path, table_path=table_path)


_MAX_LISTED = 40


def _cmd_verify(args: argparse.Namespace) -> int:
    from .analysis.audit import read_audit

    record = read_audit(args.audit)
    data = read_data(args.data)
    diffs = verify(record, data, audit_path=args.audit, table_path=args.table)
    if diffs:
        print(f"verification FAILED: {len(diffs)} difference(s)")
        for d in diffs[:_MAX_LISTED]:
            print(f"- {d}")
        if len(diffs) > _MAX_LISTED:
            print(f"- ... and {len(diffs) - _MAX_LISTED} more")
        return EXIT_MISMATCH
    table = args.table or record["output"]["file"]
    also = f" (and the table file {table} matches it)" if table else ""
    print(f"verified: {args.audit} reproduces exactly from {args.data}{also}")
    return EXIT_OK


def _check_plot_flags(args: argparse.Namespace, *flags: str) -> None:
    """A figure asked for without matplotlib fails before a long run, not after it."""
    asked = [f for f in flags if getattr(args, f, None)]
    if asked and importlib.util.find_spec("matplotlib") is None:
        raise UsageError(f"`--{asked[0].replace('_', '-')}` needs matplotlib, which is not installed; got "
                         f"{getattr(args, asked[0])!r}. Install it (pip install 'selective[plot]') or drop the flag.")


def _cmd_experiment(args: argparse.Namespace) -> int:
    from .validation.experiments import DEFAULT_K_GRID, holdout_reuse_experiment, plot_holdout_reuse

    _check_plot_flags(args, "plot")

    ks = DEFAULT_K_GRID if args.k is None else tuple(int(k) for k in args.k.split(","))
    frame = holdout_reuse_experiment(n=args.n, d=args.d, k_grid=ks, n_reps=args.reps,
                                     n_informative=20 if args.signal else 0, rng=args.seed,
                                     progress=not args.quiet, n_jobs=args.jobs)
    table = frame.groupby(["method", "split", "k"])["accuracy"].agg(["mean", "std"]).round(4)
    if args.out:
        from .analysis.audit import atomic_write_text

        atomic_write_text(args.out, frame.to_csv(index=False))
    print(table.unstack("split").to_markdown())
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        axes = plot_holdout_reuse(frame)
        axes[0].figure.savefig(args.plot, dpi=120, bbox_inches="tight")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validation.scenarios import SCENARIOS, get_scenario
    from .validation.validate import FAILURE_P, VALIDITY_LEVELS, plot_validation, validate, verdicts

    names = [args.scenario] if args.scenario else list(SCENARIOS)
    for n in names:
        get_scenario(n)  # unknown names fail before anything runs
    _check_plot_flags(args, "plot", "power_plot")
    for flag in ("plot", "power_plot", "output"):  # a missing folder fails before a long run, not after it
        path = getattr(args, flag)
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and not os.path.isdir(folder):
            raise ValueError(f"`--{flag.replace('_', '-')}` must be a file in an existing folder; got {path!r} "
                             f"(no folder {folder!r}).")
    results = validate(names, n_reps=args.reps, alpha=args.alpha, seed=args.seed, n_jobs=args.jobs,
                       progress=not args.quiet)
    # the validity levels, plus --alpha when it is another level (a run at alpha/N is judged there too)
    levels = tuple(sorted({*VALIDITY_LEVELS, args.alpha}, reverse=True))
    table = verdicts(results, levels=levels)
    for name, res in results.items():
        sc = get_scenario(name)
        print(f"## {name} ({res.n_reps} replications, alpha = {res.alpha:g}, {res.elapsed_seconds:.1f} s)\n")
        print(f"{sc.truth}\n")
        print(res.to_markdown())
        print()
        mine = table[table.scenario == name]
        for _, v in mine[mine.verdict != "holds"].iterrows():
            print(f"- {v.column} ({v.method}): {v.verdict}" + (f": {v.reason}" if v.reason else ""))
        print()
    failing = table[table.verdict == "FAILS"]
    print(f"Validity: {int((table.verdict == 'holds').sum())} valid column(s) hold their level at alpha "
          f"{', '.join(f'{a:g}' for a in levels)} (one-sided exact binomial, p > {FAILURE_P:g}); "
          f"{len(failing)} fail.")
    if args.plot:
        fig = plot_validation(results)
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        if not args.quiet:
            print(f"plot written to {args.plot}", file=sys.stderr)
    figure = None
    if args.power_plot:
        from .validation.validate import plot_power, power_table

        power = power_table(results, alpha=VALIDITY_LEVELS[0])
        if power.empty:
            print("no power plot: none of these scenarios has real effects", file=sys.stderr)
        else:
            plot_power(power, alpha=VALIDITY_LEVELS[0]).savefig(args.power_plot, dpi=120, bbox_inches="tight")
            figure = args.power_plot
            if not args.quiet:
                print(f"power plot written to {args.power_plot}", file=sys.stderr)
    if args.output:
        from .validation.validate import release_table

        if figure is not None:
            figure = os.path.relpath(figure, os.path.dirname(os.path.abspath(args.output))).replace(os.sep, "/")
        text = release_table(results, command=_validate_command(args), seed=args.seed, power_figure=figure,
                             levels=levels)
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not args.quiet:
            print(f"release table written to {args.output}", file=sys.stderr)
    return EXIT_OK if failing.empty else EXIT_MISMATCH


def _validate_command(args: argparse.Namespace) -> str:
    """The ``selective validate`` command line that reproduces ``args`` (options that change the numbers,
    and the output file)."""
    import shlex

    parts = ["selective", "validate"]
    if args.scenario:
        parts += ["--scenario", args.scenario]
    if args.reps:
        parts += ["--reps", str(args.reps)]
    parts += ["--alpha", f"{args.alpha:g}", "--seed", str(args.seed), "--output", args.output]
    if args.power_plot:
        parts += ["--power-plot", args.power_plot]
    return " ".join(shlex.quote(p) for p in parts)


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {v}")
    return v


def _level(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {v}")
    return v


def add_validate_command(subparsers) -> argparse.ArgumentParser:
    """Register ``validate`` on an argparse subparsers object (``parser.add_subparsers()``).

    ``selective validate [--scenario NAME] [--reps N] [--jobs J] [--alpha A] [--seed S]
    [--plot FILE] [--power-plot FILE] [--output FILE] [--quiet]`` runs the scenario library (or one scenario)
    through :func:`selective.validation.validate.validate` and prints the type-I error and
    power table of each; ``--output`` also writes the Markdown release table
    (:func:`selective.validation.validate.release_table`). The handler is stored as ``func``
    and returns the exit code 0, or 3 when a column labelled valid fails. Unknown scenario
    names raise ``ValueError`` (:func:`main` maps it to exit code 2).

    Parameters
    ----------
    subparsers : argparse subparsers action
        The object returned by ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``validate`` sub-parser.
    """
    from .validation.scenarios import SCENARIOS

    p = subparsers.add_parser("validate", help="simulate the scenario library: type-I error and power of every column",
                              description="Run the adversarial selection scenarios and report the type-I error and "
                                          "power of every p-value column with Monte-Carlo intervals. Scenarios: "
                                          + ", ".join(SCENARIOS) + ".")
    p.add_argument("--scenario", metavar="NAME", help="run only this scenario (default: all)")
    p.add_argument("--reps", type=_positive_int, help="replications per scenario (default: each scenario's own)")
    p.add_argument("--jobs", type=_positive_int, default=1, help="local worker processes (default 1)")
    p.add_argument("--alpha", type=_level, default=0.05, help="level (default 0.05)")
    p.add_argument("--seed", type=int, default=2024, help="root seed (default 2024)")
    p.add_argument("--plot", metavar="FILE", help="write the rejection-rate plot to FILE (png, pdf, svg)")
    p.add_argument("--power-plot", metavar="FILE",
                   help="write the power dot plot (every column in every scenario with real effects, at alpha "
                        "0.05) to FILE (png, pdf, svg); with --output the table embeds it")
    p.add_argument("--output", metavar="FILE",
                   help="write the Markdown release table to FILE: every column of every scenario with its "
                        "rejection rate, Monte-Carlo interval, verdict and reason, the seed and this command line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_validate)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="selective", description="Honest p-values after exploratory analysis.",
        epilog="Exit codes: 0 ok, 2 bad usage or input, 3 verify found a difference, 1 internal error.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the quick-start analysis on the bundled biomarker data")
    demo.add_argument("--k", type=int, default=3, help="how many biomarkers to keep (default 3)")
    demo.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    demo.set_defaults(func=_cmd_demo)

    an = sub.add_parser("analyze", help="run a plan file on a CSV file and print the corrected table")
    an.add_argument("data", help="CSV file with a header row")
    an.add_argument("--plan", required=True, help="plan file (TOML): selection steps and tests")
    an.add_argument("--format", choices=FORMATS, default="md", help="output format (default md)")
    an.add_argument("--columns", choices=("default", "short", "compact", "all"), default="default",
                    help="table columns (default: each format's own set; html is a self-contained report page)")
    an.add_argument("--out", help="write the table to this file instead of standard output")
    an.add_argument("--audit", help="audit JSON path (default: next to --out, else next to the plan)")
    an.add_argument("--seed", type=int, help="override the plan's seed")
    an.add_argument("--adjust", choices=("holm", "bonferroni", "fdr_bh", "fdr_by"),
                    help="multiple-testing adjustment across the tests, on top of the selection correction")
    an.add_argument("--quiet", action="store_true", help="no progress bar or messages on stderr")
    an.set_defaults(func=_cmd_analyze)

    sh = sub.add_parser("show", help="re-render a saved analysis from its audit JSON")
    sh.add_argument("audit", help="audit JSON written by 'selective analyze'")
    sh.add_argument("--format", choices=FORMATS, default="md")
    sh.add_argument("--columns", choices=("default", "short", "compact", "all"), default="default")
    sh.set_defaults(func=_cmd_show)

    ve = sub.add_parser("verify", help="re-run a saved analysis on the data and report every difference (exact)")
    ve.add_argument("audit", help="audit JSON written by 'selective analyze'")
    ve.add_argument("data", help="the CSV file the analysis claims to be about")
    ve.add_argument("--table", help="the table file to check (default: the one the audit names)")
    ve.set_defaults(func=_cmd_verify)

    ex = sub.add_parser("experiment", help="reproduce an experiment of the source papers")
    ex.add_argument("name", choices=("holdout-reuse",), help="holdout-reuse: Dwork et al. 2015, Section 5")
    ex.add_argument("--n", type=int, default=10_000, help="points per set (default 10,000 as in the paper)")
    ex.add_argument("--d", type=int, default=10_000, help="attributes (default 10,000)")
    ex.add_argument("--reps", type=int, default=100, help="independent runs (default 100)")
    ex.add_argument("--k", help="comma-separated grid of k (default up to 500)")
    ex.add_argument("--signal", action="store_true", help="20 informative attributes (the paper's second experiment)")
    ex.add_argument("--seed", type=int, default=2015)
    ex.add_argument("--jobs", type=_positive_int, default=1,
                    help="local worker processes (default 1; the table does not depend on it; "
                         "each worker holds one replication's data)")
    ex.add_argument("--out", help="write the tidy results as CSV")
    ex.add_argument("--plot", help="write the figure (PNG)")
    ex.add_argument("--quiet", action="store_true")
    ex.set_defaults(func=_cmd_experiment)

    add_validate_command(sub)
    cal = sub.add_parser("calibrate", add_help=False,
                         help="rejection rates of every test's p-value at 1e-2..1e-5 under adverse nulls "
                              "(selective calibrate --help)")
    cal.add_argument("args", nargs=argparse.REMAINDER)
    cal.set_defaults(func=_cmd_calibrate)
    return parser


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from .hypotheses.calibration import main as calibrate

    # the calibration's own parser reads its options (it exits 1 when a row fails)
    return EXIT_MISMATCH if calibrate(args.args) else EXIT_OK


def _version() -> str:
    from . import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["calibrate"]:  # its own parser reads every option, --help included
        return _cmd_calibrate(argparse.Namespace(args=argv[1:]))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader went away (e.g. `selective demo | head`): not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")  # silence the flush at exit
        except OSError:
            pass
        return EXIT_OK
    except (UsageError, ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        print(f"selective: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # pragma: no cover - a bug: say so
        print(f"selective: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
