"""Sphinx extension: execute the vignettes and write them, with their outputs, as MyST pages.

Each vignette (``vignettes/*.md``, jupytext's Markdown format) is run top to bottom in one
namespace, in a temporary working directory, like a notebook: after each ```python block come
what it printed, the value of its last expression and the matplotlib figures it left open (as
PNG files). A block that raises stops the build with the vignette's name and the block number.

``SELECTIVE_DOCS_VIGNETTES=01,05`` (name prefixes) renders only those vignettes, for a quick
local build.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import tempfile
from pathlib import Path

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```\n?", re.S | re.M)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def _run_block(code: str, namespace: dict, name: str) -> tuple[str, object]:
    """Run one block; return (captured stdout, value of a final expression or None)."""
    tree = ast.parse(code, filename=name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, name, "exec"), namespace)
        value = eval(compile(last, name, "eval"), namespace) if last is not None else None
    return out.getvalue(), value


def _figures(target: Path, stem: str, start: int) -> list[str]:
    import matplotlib.pyplot as plt

    names = []
    for k, num in enumerate(plt.get_fignums()):
        fig = plt.figure(num)
        name = f"{stem}-fig{start + k}.png"
        fig.savefig(target / name, dpi=110, bbox_inches="tight")
        names.append(name)
    plt.close("all")
    return names


def render_vignette(path: Path, target: Path) -> Path:
    """Execute ``path`` and write ``target/<name>.md`` with the outputs; return that file."""
    import matplotlib

    matplotlib.use("Agg")
    text = FRONT_MATTER.sub("", path.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "__vignette__"}
    pieces, pos, n_figures = [], 0, 0
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        try:
            for i, m in enumerate(FENCE.finditer(text), 1):
                pieces.append(text[pos:m.end()])
                pos = m.end()
                try:
                    printed, value = _run_block(m.group(1), namespace, f"{path.name}[block {i}]")
                except Exception as exc:
                    raise RuntimeError(f"{path.name}, block {i} failed: {type(exc).__name__}: {exc}") from exc
                shown = printed + ("" if value is None else repr(value) + "\n")
                if shown.strip():
                    pieces.append("\n```text\n" + shown.rstrip("\n").replace("```", "'''") + "\n```\n")
                for name in _figures(target, path.stem, n_figures):
                    n_figures += 1
                    pieces.append(f"\n![Figure {n_figures} of {path.stem}]({name})\n")
        finally:
            os.chdir(cwd)
    pieces.append(text[pos:])
    out = target / path.name
    out.write_text("".join(pieces), encoding="utf-8")
    return out


def _generate(app) -> None:
    source = Path(app.config.vignettes_source)
    target = Path(app.srcdir) / "_generated" / "vignettes"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    only = [x for x in os.environ.get("SELECTIVE_DOCS_VIGNETTES", "").split(",") if x]  # quick local builds
    for path in sorted(source.glob("*.md")):
        if not only or any(path.name.startswith(prefix) for prefix in only):
            render_vignette(path, target)


def setup(app):
    app.add_config_value("vignettes_source", "", "env")
    app.connect("builder-inited", _generate)
    return {"version": "1", "parallel_read_safe": True}
