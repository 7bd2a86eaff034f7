"""The ``selective`` command.

Exit codes: 0 success; 2 bad usage or input (the message names the file, the field and what
was expected); 1 internal error.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    import pandas as pd

    from .demo import run_demo

    analysis, table = run_demo(k=args.k, seed=args.seed)
    print("selective demo: 600 simulated participants, 60 biomarkers, one real treatment effect (m07).")
    print("Exploration: keep the biomarkers with the largest |Welch t| between arms, then test them")
    print("on the same data. Naive p-values ignore that choice; corrected ones account for it.\n")
    print(table.to_markdown(columns="short", footnote=False))
    print()
    print("Ledger:")
    rows = pd.DataFrame(analysis.ledger.rows())
    print(rows[["step", "label", "certificate", "cumulative_maxinfo_bits", "cumulative_mutual_info_bits"]]
          .to_markdown(index=False, floatfmt=".3g"))
    print()
    print(table.footnote)
    sig_naive = (table.frame["pvalue_naive"] <= table.alpha).sum()
    sig_best = (table.frame["pvalue_best"] <= table.alpha).sum()
    print(f"\nAt alpha = {table.alpha:g}: {sig_naive} naive rejection(s), {sig_best} after correction.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="selective", description="Honest p-values after exploratory analysis.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run the quick-start analysis on the bundled biomarker data")
    demo.add_argument("--k", type=int, default=3, help="how many biomarkers to keep (default 3)")
    demo.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    demo.set_defaults(func=_cmd_demo)
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"selective: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
