"""Speed and memory of the simulation harness (plain script; prints, no assertions).

1. Replications per second of the ``topk_noise`` scenario serially and with 2 local jobs
   (joblib/loky; the worker pool is started by a warm-up run first, and the cold figure is
   printed too). Target speed-up >= 1.7x on 2 cores.
2. Peak traced memory (tracemalloc) of a serial run of 100,000 replications against one of
   1,000 (``--quick``: 10,000 against 1,000). Target: flat (ratio close to 1), since chunks
   return counts only.

    python benchmarks/bench_simulate.py [--quick] [--reps N] [--jobs J]
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

from selective.validation.harness import simulate
from selective.validation.scenarios import TopKNoise, get_scenario


def rate(scenario, n_reps: int, n_jobs: int) -> float:
    t0 = time.perf_counter()
    simulate(scenario, n_reps=n_reps, seed=1, n_jobs=n_jobs, progress=False)
    return n_reps / (time.perf_counter() - t0)


def peak_memory(scenario, n_reps: int) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    simulate(scenario, n_reps=n_reps, seed=2, progress=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--reps", type=int, help="replications for the speed comparison")
    ap.add_argument("--jobs", type=int, default=2, help="local jobs to compare with serial (default 2)")
    args = ap.parse_args(argv)
    sc = get_scenario("topk_noise")
    n_speed = args.reps or (4_000 if args.quick else 20_000)
    big = 10_000 if args.quick else 100_000
    print(f"cores available: {os.cpu_count()}; scenario {sc.name}: {sc.description}")

    rate(sc, 200, 1)  # import and cache warm-up
    t0 = time.perf_counter()
    rate(sc, 200, args.jobs)  # starts the loky pool
    print(f"worker pool start-up and first chunk: {time.perf_counter() - t0:.2f} s")
    serial = rate(sc, n_speed, 1)
    parallel = rate(sc, n_speed, args.jobs)
    print(f"speed ({n_speed} replications): serial {serial:,.0f} reps/s; {args.jobs} jobs {parallel:,.0f} reps/s; "
          f"speed-up {parallel / serial:.2f}x (target >= 1.7x on 2 cores)")

    small_peak = peak_memory(sc, 1_000)
    big_peak = peak_memory(sc, big)
    print(f"tracemalloc peak: 1,000 replications {small_peak / 2**20:.2f} MiB; {big:,} replications "
          f"{big_peak / 2**20:.2f} MiB; ratio {big_peak / small_peak:.2f} (target: flat, about 1)")
    light = TopKNoise(name="topk_small", n_features=10, n_obs=40)
    print(f"(lighter replications, {light.n_obs}x{light.n_features}: serial {rate(light, n_speed, 1):,.0f} reps/s, "
          f"{args.jobs} jobs {rate(light, n_speed, args.jobs):,.0f} reps/s)")


if __name__ == "__main__":
    main()
