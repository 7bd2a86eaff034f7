"""The documentation's sources: every public module has an API page, and the vignette executor
renders a vignette with its outputs and figures (the full build is ``make docs``)."""

from __future__ import annotations

import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_DOCUMENTED = {"selective.cli", "selective.demo"}  # the command and its quick-start: documented in README


def public_modules() -> set[str]:
    names = set()
    for path in (ROOT / "selective").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(p.startswith("_") for p in parts):  # private modules and packages' __init__
            continue
        names.add(".".join(parts))
    packages_with_api_in_init = {"selective.validation.scenarios"}
    for path in (ROOT / "selective").rglob("__init__.py"):
        name = ".".join(path.relative_to(ROOT).parent.parts)
        if name in packages_with_api_in_init:
            names.add(name)
    return names - NOT_DOCUMENTED


def test_every_public_module_has_an_api_page():
    listed = set(re.findall(r"^   api/(\S+)$", (DOCS / "api.rst").read_text(), re.M))
    pages = {p.stem for p in (DOCS / "api").glob("*.rst")}
    missing = public_modules() - listed
    assert not missing, f"modules without an API page (add them to docs/api.rst and docs/api/): {sorted(missing)}"
    assert listed == pages, f"docs/api.rst and docs/api/ disagree: {sorted(listed ^ pages)}"
    for name in pages:
        assert f".. automodule:: {name}" in (DOCS / "api" / f"{name}.rst").read_text()


def test_vignette_executor_writes_outputs_and_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("SELECTIVE_VIGNETTE_FAST", "1")
    spec = importlib.util.spec_from_file_location("docs_vignettes", DOCS / "_ext" / "vignettes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.render_vignette(ROOT / "vignettes" / "05_results_section.md", tmp_path).read_text()
    assert not page.startswith("---"), "the jupytext front matter should be dropped"
    assert page.count("```python") == (ROOT / "vignettes" / "05_results_section.md").read_text().count("```python")
    assert "```text\nCorrected p-values after selection" in page  # a block's printed output follows it
    figures = re.findall(r"!\[[^\]]*\]\((\S+\.png)\)", page)
    assert len(figures) >= 2
    for name in figures:
        assert (tmp_path / name).stat().st_size > 5000


def test_api_page_titles_are_underlined_to_their_length():
    # docutils warns on a short underline, and `make docs` treats warnings as errors
    short = []
    for page in sorted((DOCS / "api").glob("*.rst")):
        lines = page.read_text(encoding="utf-8").splitlines()
        if len(lines) > 1 and set(lines[1]) == {"="} and len(lines[1]) < len(lines[0]):
            short.append(page.name)
    assert not short, f"title underline shorter than the title in {short}"
