"""Scale of the ledger and of the data fingerprint (plain script; prints, no assertions).

1. Seconds to record 10,000 ledger steps, to list their rows (the cumulative bounds after
   every step), to write and read them back as JSON, and to make the corrected report of an
   analysis with that many steps; the same for 1,000 steps, and the ratio. Target: linear, a
   ratio near 10 (it was about 100 when every row recomposed its prefix). The steps mix a first
   DP block, description-length steps and pure-DP steps after selection; ``--worst`` makes
   every description-length step its own block, so that every row solves the Theorem 20
   split anew (the costliest case per step).
2. Peak memory of :func:`selective.analysis.audit.data_fingerprint` on a frame of about
   400 MB (``--quick``: 20 MB) of floats, integers and strings, as the ratio (frame + peak
   traced allocation) / frame. Target: at most 1.5 (the fingerprint hashes in chunks). Its
   speed is shown against a bare SHA-256 of the numeric columns' bytes.

    python benchmarks/bench_ledger.py [--quick] [--worst]
"""

from __future__ import annotations

import argparse
import hashlib
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd

from selective import Analysis
from selective.accounting import DescriptionLength, Ledger, PureDP
from selective.accounting.totals import _composite_nats
from selective.analysis.audit import data_fingerprint
from selective.exceptions import SelectiveWarning
from selective.hypotheses import OneSampleTTest
from selective.selectors.base import Selection


def certificate(i: int, worst: bool):
    if i < 3:
        return PureDP(1e-4)  # the first DP block
    if worst:
        return PureDP(1e-6) if i % 2 else DescriptionLength(7 + i)
    return PureDP(1e-6) if i % 50 == 0 else DescriptionLength(7 + i % 13)


def ledger_times(n_steps: int, worst: bool) -> dict[str, float]:
    """Seconds of each stage; the cache of Theorem 20 splits is emptied before each, so that no
    stage profits from the work of another."""
    out = {}
    _composite_nats.cache_clear()
    t0 = time.perf_counter()
    led = Ledger(n_rows=5_000)
    for i in range(n_steps):
        led.record(certificate(i, worst), label=f"step {i}")
    out["record"] = time.perf_counter() - t0
    _composite_nats.cache_clear()
    t0 = time.perf_counter()
    led.rows()
    led.totals()
    out["rows"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    back = Ledger.from_json(led.to_json())
    out["json"] = time.perf_counter() - t0
    assert len(back) == n_steps
    data = pd.DataFrame({"x": np.random.default_rng(0).normal(size=5_000)})
    analysis = Analysis(data, rng=1)
    for i in range(n_steps):
        analysis.record(Selection(value=("x",), certificate=certificate(i, worst), label=f"step {i}"))
    analysis.test(OneSampleTTest(column="x"))
    _composite_nats.cache_clear()
    t0 = time.perf_counter()
    analysis.report()
    out["report"] = time.perf_counter() - t0
    return out


def frame_of(megabytes: float) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = int(megabytes * 1e6 / (8 * 8 + 8 + 60))  # eight floats, one integer, one short string per row
    d = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(8)})
    d["k"] = rng.integers(0, 1000, size=n)
    d["s"] = pd.Series(rng.choice(["alpha", "beta", "gamma", "delta"], size=n))
    return d


def fingerprint_memory(megabytes: float) -> None:
    d = frame_of(megabytes)
    size = int(d.memory_usage(deep=True).sum())
    tracemalloc.start()
    t0 = time.perf_counter()
    fp = data_fingerprint(d)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t0 = time.perf_counter()
    h = hashlib.sha256()
    for c in d.columns[:9]:
        h.update(d[c].to_numpy().tobytes())
    base = time.perf_counter() - t0
    print(f"frame {size / 1e6:,.0f} MB ({len(d):,} rows): fingerprint {fp[:12]}... in {seconds:.2f} s "
          f"(bare SHA-256 of the numeric columns: {base:.2f} s)")
    print(f"peak extra memory {peak / 1e6:,.1f} MB; (frame + peak) / frame = {(size + peak) / size:.3f}  "
          "(target <= 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worst", action="store_true", help="every description-length step is its own block")
    args = parser.parse_args()
    warnings.simplefilter("ignore", SelectiveWarning)
    small, large = (100, 1_000) if args.quick else (1_000, 10_000)
    a, b = ledger_times(small, args.worst), ledger_times(large, args.worst)
    print(f"ledger ({'worst case' if args.worst else 'mixed steps'}): seconds for {small:,} and {large:,} steps, "
          f"and their ratio (linear: about {large // small})")
    print(f"{'':10s} {small:>10,} {large:>10,} {'ratio':>8s}")
    for key in ("record", "rows", "json", "report"):
        print(f"{key:10s} {a[key]:10.3f} {b[key]:10.3f} {b[key] / max(a[key], 1e-9):8.1f}")
    fingerprint_memory(20 if args.quick else 400)


if __name__ == "__main__":
    main()
