"""Every vignette runs top to bottom.

Vignettes are Markdown files (jupytext's markdown format) whose ```python blocks are executed
in order in one namespace, in a temporary working directory, with ``SELECTIVE_VIGNETTE_FAST=1``
so that vignettes with long simulations use their reduced sizes. Assertions inside the
vignettes check their claims.
"""

from __future__ import annotations

import pathlib
import re

import pytest

VIGNETTES = sorted((pathlib.Path(__file__).resolve().parents[1] / "vignettes").glob("*.md"))
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def code_blocks(path: pathlib.Path) -> list[str]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


def test_there_are_vignettes():
    assert VIGNETTES, "no vignette found"


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs(path, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SELECTIVE_VIGNETTE_FAST", "1")
    blocks = code_blocks(path)
    assert blocks, f"{path.name} has no python block"
    namespace: dict = {"__name__": "__vignette__"}
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message says which block failed
            raise AssertionError(f"{path.name}, block {i} failed: {type(exc).__name__}: {exc}") from exc
    import matplotlib.pyplot as plt

    plt.close("all")
