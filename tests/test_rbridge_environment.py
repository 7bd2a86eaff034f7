"""Starting R through the bridge must not break child processes (joblib / Dask workers)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from selective.interop import rbridge

REASON = rbridge.why_r_unavailable()


@pytest.mark.skipif(REASON is not None, reason=f"R unavailable: {REASON}")
def test_child_python_still_starts_after_r_did():
    before = os.environ.get("LD_LIBRARY_PATH")
    rbridge.r_eval("1 + 1")
    assert os.environ.get("LD_LIBRARY_PATH") == before
    # a fresh interpreter that imports an extension module (ssl) starts cleanly
    out = subprocess.run([sys.executable, "-c", "import ssl, numpy; print('ok')"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert float(rbridge.r_eval("sum(c(1, 2, 3))")) == 6.0  # R itself still works
