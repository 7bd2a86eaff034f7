"""`selective analyze / show / verify` on plan files, the audit trail, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from selective.analysis.audit import (
    data_fingerprint,
    read_audit,
    spec_from_dict,
    spec_to_dict,
    write_audit,
)
from selective.cli import main
from selective.hypotheses import CoefficientTest, TwoSampleTTest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "biomarkers.csv"
PLAN = ROOT / "data" / "biomarkers_plan.toml"


@pytest.fixture()
def work(tmp_path):
    shutil.copy(DATA, tmp_path / "data.csv")
    shutil.copy(PLAN, tmp_path / "plan.toml")
    return tmp_path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


class TestAnalyze:
    def test_markdown_output_content(self, work, capsys):
        code, out, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--quiet"], capsys)
        assert code == 0, err
        lines = [line for line in out.splitlines() if line.startswith("| m")]
        assert len(lines) == 6  # 3 selected biomarkers x 2 tests
        assert {line.split("|")[1].strip().split(":")[0] for line in lines} == {"m07", "m22", "m26"}
        row = next(line for line in lines if line.startswith("| m22: treatment"))
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[3] == "0.018" and cells[7] == "1"  # naive significant, best corrected not
        assert "Bonferroni over 120 declared hypotheses" in out
        assert (work / "plan.audit.json").exists()

    def test_latex_output_to_file_and_audit_next_to_it(self, work, capsys):
        out_file = work / "results" / "table.tex"
        code, out, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--format", "tex",
                              "--out", out_file, "--quiet"], capsys)
        assert code == 0, err
        tex = out_file.read_text()
        assert tex.startswith(r"\begin{table}") and r"\toprule" in tex and r"\bottomrule" in tex
        assert "m07: treatment - control (Welch)" in tex and r"$<10^{-4}$" in tex
        assert sum(line.endswith(r"\\") for line in tex.splitlines()) == 7  # header + 6 rows
        audit = read_audit(work / "results" / "table.audit.json")
        assert audit["data"]["sha256"] == data_fingerprint(pd.read_csv(DATA))
        assert audit["seed"] == 2026 and audit["plan"]["analysis"]["n_candidates"] == 120

    def test_show_reproduces_the_table_exactly(self, work, capsys):
        run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"], capsys)
        code, out, _ = run(["show", work / "t.audit.json"], capsys)
        assert code == 0
        assert out == (work / "t.md").read_text()
        code, out, _ = run(["show", work / "t.audit.json", "--format", "csv"], capsys)
        assert code == 0 and out.splitlines()[0].startswith("hypothesis,estimate")

    def test_verify_passes_then_detects_changed_data(self, work, capsys):
        run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"], capsys)
        code, out, _ = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
        assert code == 0 and "verified" in out
        d = pd.read_csv(work / "data.csv")
        d.loc[d.arm == "treatment", "m22"] += 0.3  # a different dataset
        d.to_csv(work / "other.csv", index=False)
        code, out, _ = run(["verify", work / "t.audit.json", work / "other.csv"], capsys)
        assert code == 3
        assert "fingerprint differs" in out and "m22" in out

    def test_verify_detects_a_tampered_table(self, work, capsys):
        run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"], capsys)
        rec = json.loads((work / "t.audit.json").read_text())
        col = rec["table"]["columns"].index("pvalue_best")
        rec["table"]["rows"][1][col] = 0.001
        write_audit(work / "t.audit.json", rec)
        code, out, _ = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
        assert code == 3 and "pvalue_best" in out

    def test_seed_override(self, work, capsys):
        code, _, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--seed", "5", "--quiet",
                            "--audit", work / "a.json"], capsys)
        assert code == 0, err
        assert read_audit(work / "a.json")["seed"] == 5


def write_plan(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


BAD_PLANS = [
    ("unknown column", """
[[select]]
selector = "top_k"
k = 1
candidates = ["m01", "zz9"]
score = "abs_mean"
[[test]]
kind = "one_sample_t"
for_each = 1
column = "{selected}"
""", r"\[\[select\]\] #1 candidates: unknown column\(s\) \['zz9'\]"),
    ("approximate DP after description length", """
[[select]]
selector = "declared"
value = ["m01"]
certificate = {kind = "description_length", n_outcomes = 60}
[[select]]
selector = "declared"
value = ["m02"]
certificate = {kind = "approx_dp", epsilon = 1.0, delta = 1e-6}
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #2: Cannot record ApproxDP.*after a description-length step"),
    ("alpha outside (0, 1)", """
[analysis]
alpha = 1.5
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[analysis\] alpha: must be a number in \(0, 1\); got 1.5"),
    ("unknown test field", """
[[test]]
kind = "welch_t"
column = "m01"
group = "arm"
colour = "red"
""", r"\[\[test\]\] #1: unknown field\(s\) \['colour'\]"),
    ("unknown test column", """
[[test]]
kind = "one_sample_t"
column = "m99"
""", r"\[\[test\]\] #1 column: unknown column 'm99'"),
    ("non-numeric candidates", """
[[select]]
selector = "top_k"
k = 1
candidates = ["sex", "m01"]
score = "abs_mean"
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"column 'sex' must be numeric"),
    ("no tests", """
[analysis]
alpha = 0.05
""", r"at least one \[\[test\]\]"),
    ("bad selector", """
[[select]]
selector = "lasso_magic"
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #1 selector: must be one of"),
]


@pytest.mark.parametrize("name,text,match", BAD_PLANS, ids=[b[0] for b in BAD_PLANS])
def test_bad_plans_exit_2_and_write_nothing(work, capsys, name, text, match):
    plan = write_plan(work / "bad.toml", text)
    before = set(work.iterdir())
    code, out, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2
    assert "bad.toml" in err or "<plan>" in err
    import re

    assert re.search(match, err), err
    assert set(work.iterdir()) == before  # nothing written


def test_bad_data_files(work, capsys):
    d = pd.read_csv(work / "data.csv")
    d.loc[3, "m07"] = np.nan
    d.to_csv(work / "missing.csv", index=False)
    code, _, err = run(["analyze", work / "missing.csv", "--plan", work / "plan.toml", "--quiet"], capsys)
    assert code == 2 and "'m07'" in err and "1 missing value" in err
    code, _, err = run(["analyze", work / "nope.csv", "--plan", work / "plan.toml"], capsys)
    assert code == 2 and "does not exist" in err
    (work / "empty.csv").write_text("")
    code, _, err = run(["analyze", work / "empty.csv", "--plan", work / "plan.toml"], capsys)
    assert code == 2 and "empty.csv" in err
    (work / "bad.toml").write_text("[[select]\nk=")
    code, _, err = run(["analyze", work / "data.csv", "--plan", work / "bad.toml"], capsys)
    assert code == 2 and "not valid TOML" in err
    code, _, err = run(["show", work / "nothing.json"], capsys)
    assert code == 2 and "does not exist" in err


def test_spec_round_trip():
    for spec in (TwoSampleTTest(column="m01", group="arm", levels=("treatment", "control"), usevar="unequal"),
                 CoefficientTest(formula="m01 ~ age", term="age", model="ols", label="x")):
        assert spec_from_dict(json.loads(json.dumps(spec_to_dict(spec)))) == spec
    with pytest.raises(ValueError, match="unknown test spec class"):
        spec_from_dict({"class": "os.system", "fields": {}})


def test_fingerprint_sensitivity():
    d = pd.read_csv(DATA)
    fp = data_fingerprint(d)
    assert fp == data_fingerprint(pd.read_csv(DATA))
    d2 = d.copy()
    d2.iloc[5, 7] = np.nextafter(d2.iloc[5, 7], np.inf)  # one ulp
    assert data_fingerprint(d2) != fp


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    from selective import audit as A

    target = tmp_path / "a.json"
    target.write_text("old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(A.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        A.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind
