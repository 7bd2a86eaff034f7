"""The README's examples run, and the demo output it shows is what ``selective demo`` prints.

Every ```python block of README.md is executed in order in one namespace, in a temporary
working directory (as a reader pasting them one after the other would). A block whose first
line is a comment containing "needs R" is skipped, with the reason, when R is not available.

The demo output between the ``selective-demo-output`` markers must equal the command's output;
after a deliberate change of the demo, regenerate it with ``python tests/test_readme.py
--regenerate``.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
DEMO = re.compile(r"(<!-- selective-demo-output: start[^\n]*-->\n```text\n)(.*?)"
                  r"(```\n<!-- selective-demo-output: end -->)", re.S)


def python_blocks() -> list[str]:
    return FENCE.findall(README.read_text(encoding="utf-8"))


def demo_output() -> str:
    """What ``selective demo`` prints (its default arguments)."""
    from selective.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["demo"])
    assert code == 0
    return buf.getvalue()


def test_readme_has_python_blocks():
    assert len(python_blocks()) >= 3


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    skipped = []
    for i, block in enumerate(python_blocks(), 1):
        first = block.lstrip().splitlines()[0] if block.strip() else ""
        if first.startswith("#") and "needs R" in first:
            from selective.interop.rbridge import why_r_unavailable

            reason = why_r_unavailable()
            if reason:
                skipped.append(f"block {i}: {reason}")
                continue
        try:
            exec(compile(block, f"README.md[block {i}]", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message says which block failed
            raise AssertionError(f"README.md, python block {i} failed: {type(exc).__name__}: {exc}") from exc
    import matplotlib.pyplot as plt

    plt.close("all")
    if skipped:
        pytest.skip("README blocks that need R were skipped: " + "; ".join(skipped))


def test_readme_demo_output_is_what_the_command_prints():
    match = DEMO.search(README.read_text(encoding="utf-8"))
    assert match, "README.md lacks the selective-demo-output markers around a ```text block"
    shown = [line.rstrip() for line in match.group(2).splitlines()]
    printed = [line.rstrip() for line in demo_output().splitlines()]
    assert shown == printed, ("README.md's demo output differs from `selective demo`; regenerate it with "
                              "`python tests/test_readme.py --regenerate`")


def regenerate() -> None:
    """Write the current ``selective demo`` output into README.md between the markers."""
    text = README.read_text(encoding="utf-8")
    out = "\n".join(line.rstrip() for line in demo_output().splitlines()) + "\n"
    new, n = DEMO.subn(lambda m: m.group(1) + out + m.group(3), text)
    if n != 1:
        raise SystemExit("README.md: expected exactly one selective-demo-output block")
    README.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        raise SystemExit("usage: python tests/test_readme.py --regenerate")
