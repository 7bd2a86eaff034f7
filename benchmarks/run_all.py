"""Run every benchmark script of this folder (``make bench``); pass --quick for small sizes."""

from __future__ import annotations

import pathlib
import subprocess
import sys


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).resolve().parent
    status = 0
    for script in sorted(here.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        code = subprocess.call([sys.executable, str(script), *argv])
        if code != 0:
            print(f"{script.name} exited with {code}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
