"""`selective analyze` killed at random moments never leaves a table its audit does not match.

Each run writes a differently formatted table (so the tables of successive runs differ) next to
the previous run's files, and is killed with SIGKILL at a random time. Afterwards, whenever a
table file is present, ``verify`` must find that its audit reproduces it and names it. To make
kills land inside the few milliseconds of writing, the forked runs sleep before every file
operation (the writing code itself is unchanged); a few runs are real interpreter processes.
Fixed seeds make the kill times reproducible; the test has no timed assertion.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from selective.analysis.audit import read_audit, verify_audit

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "biomarkers.csv"
PLAN = """
[analysis]
alpha = 0.05
seed = 7
[[select]]
selector = "top_k"
k = 2
candidates_like = "m0*"
score = "welch_t"
group = "arm"
levels = ["treatment", "control"]
[[test]]
kind = "welch_t"
for_each = 1
column = "{selected}"
group = "arm"
levels = ["treatment", "control"]
"""
FORMATS = ("md", "csv", "html", "tex")
N_FORKED_KILLS = 40
N_PROCESS_KILLS = 4
TIME_CAP_SECONDS = 45.0  # stop early on a slow machine; the runs done still count

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="needs fork and SIGKILL")


def _argv(work: Path, i: int) -> list[str]:
    return ["analyze", str(work / "data.csv"), "--plan", str(work / "plan.toml"), "--out", str(work / "out" / "t.txt"),
            "--audit", str(work / "out" / "t.audit.json"), "--format", FORMATS[i % len(FORMATS)],
            "--columns", ("short", "all")[i % 2], "--quiet"]


def _slow_file_operations(delay: float, marker_fd: int) -> None:
    """In a child process only: sleep before each file operation of the writer, and tell the
    parent (one byte on ``marker_fd``) when the first one starts."""
    told = []

    def slowed(real):
        def call(*args, **kwargs):
            if not told:
                told.append(True)
                os.write(marker_fd, b"w")
            time.sleep(delay)
            return real(*args, **kwargs)
        return call

    for name in ("open", "fsync", "chmod", "replace", "unlink"):
        setattr(os, name, slowed(getattr(os, name)))


def _fork_run(argv: list[str], delay: float) -> tuple[int, int]:
    """Fork a run of ``selective`` with ``argv``; return its pid and the read end of its marker pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: run the command, never return into pytest
        code = 1
        try:
            os.close(r)
            from selective.cli import main

            _slow_file_operations(delay, w)
            code = main(argv)
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _wait_for_writing(r: int) -> bool:
    """Block until the child starts writing (True) or ends without writing (False)."""
    try:
        return os.read(r, 1) == b"w"
    finally:
        os.close(r)


def _check_consistent(work: Path, data: pd.DataFrame) -> bool:
    """If a table is present, its audit exists, names it and verifies; True if a table was there."""
    table, audit = work / "out" / "t.txt", work / "out" / "t.audit.json"
    if not table.exists():
        return False
    assert audit.exists(), "a table without its audit"
    record = read_audit(audit)
    assert record["output"]["file"] == "t.txt"
    diffs = verify_audit(record, data, audit_path=audit)
    assert diffs == [], diffs
    return True


def _leftovers(work: Path) -> set[str]:
    return {p.name for p in (work / "out").iterdir()} - {"t.txt", "t.audit.json"}


def test_kills_never_leave_a_mismatched_table(tmp_path):
    shutil.copy(DATA, tmp_path / "data.csv")
    (tmp_path / "plan.toml").write_text(PLAN)
    data = pd.read_csv(tmp_path / "data.csv")
    delay = 0.01
    # a complete run first (the previous run's files), timed to place the kills
    start = time.perf_counter()
    pid, r = _fork_run(_argv(tmp_path, 0), delay)
    assert _wait_for_writing(r)
    writing = time.perf_counter()
    _, status = os.waitpid(pid, 0)
    full, window = time.perf_counter() - start, time.perf_counter() - writing
    assert os.waitstatus_to_exitcode(status) == 0
    assert _check_consistent(tmp_path, data)
    rng = random.Random(20261123)
    began, kills, with_table = time.perf_counter(), 0, 0
    for i in range(1, N_FORKED_KILLS + 1):
        pid, r = _fork_run(_argv(tmp_path, i), delay)
        if i % 4:  # three kills in four land while the files are written, one anywhere in the run
            _wait_for_writing(r)
            time.sleep(rng.uniform(0.0, 1.05 * window))
        else:
            os.close(r)
            time.sleep(rng.uniform(0.0, 1.1 * full))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # pragma: no cover - already reaped
            pass
        os.waitpid(pid, 0)
        kills += 1
        with_table += _check_consistent(tmp_path, data)
        if time.perf_counter() - began > TIME_CAP_SECONDS:
            break
    assert kills >= 10
    # whatever a kill left behind is only temporary files, named as such
    assert all(name.startswith(".") and name.endswith(".tmp") for name in _leftovers(tmp_path))


def test_kills_of_real_processes(tmp_path):
    shutil.copy(DATA, tmp_path / "data.csv")
    (tmp_path / "plan.toml").write_text(PLAN)
    data = pd.read_csv(tmp_path / "data.csv")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = "import sys; from selective.cli import main; sys.exit(main(sys.argv[1:]))"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *_argv(tmp_path, 0)], env=env, timeout=120)
    full = time.perf_counter() - start
    assert done.returncode == 0
    rng = random.Random(7)
    for i in range(1, N_PROCESS_KILLS + 1):
        proc = subprocess.Popen([sys.executable, "-c", code, *_argv(tmp_path, i)], env=env)
        time.sleep(rng.uniform(0.5 * full, 1.1 * full))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        _check_consistent(tmp_path, data)
    assert all(name.startswith(".") and name.endswith(".tmp") for name in _leftovers(tmp_path))
