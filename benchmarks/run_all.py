"""Run every benchmark script of this folder (``make bench``); pass --quick for small sizes.

Each script runs with one BLAS thread (``OMP_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``,
``MKL_NUM_THREADS=1``) unless these are set already: the baselines (R's reference BLAS, a bare
numpy expression) run single-threaded too, and on a small shared machine several BLAS threads
make the timings noisier, not faster."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).resolve().parent
    status = 0
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    for script in sorted(here.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        code = subprocess.call([sys.executable, str(script), *argv], env=env)
        if code != 0:
            print(f"{script.name} exited with {code}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
