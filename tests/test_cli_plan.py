"""`selective analyze / show / verify` on plan files, the audit trail, and bad input."""

from __future__ import annotations

import json
import os
import re
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
        # naive significant (the Welch p-value at the corrected level is a permutation one, with
        # the note saying so), best corrected not
        assert float(cells[3]) < 0.05 and cells[7] == "1"
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
""", r"\[\[test\]\] #1: unknown field\(s\) 'colour' for kind 'welch_t'; allowed: kind, for_each, .*column"),
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
    from selective.analysis import files as A

    target = tmp_path / "a.json"
    target.write_text("old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(A.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        A.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind


# ------------------------------------------------------------------------------------------
# Forged audits: verify recomputes and compares every field
# ------------------------------------------------------------------------------------------

RICH_PLAN = """
[analysis]
alpha = 0.1
seed = 11
n_candidates = 40

[[select]]
selector = "noisy_top_k"
k = 2
candidates_like = "m0*"
score = "signed_mean"
group = "arm"
positive = "treatment"
epsilon = 2.0
label = "noisy screen"

[[select]]
selector = "top_k"
k = 1
candidates = ["m10", "m11", "m12"]
score = "abs_corr"
target = "age"

[[test]]
kind = "welch_t"
for_each = 1
column = "{selected}"
group = "arm"
levels = ["treatment", "control"]
exchangeable = true

[[test]]
kind = "pearson"
for_each = 2
column1 = "{selected}"
column2 = "age"
label = "corr({selected}, age)"
"""


@pytest.fixture()
def rich_audit(work, capsys):
    """A real audit (two steps, one of them DP, three tests, an adjustment) and its table file,
    on a smaller copy of the data (``data.csv`` in the folder is replaced by it)."""
    d = pd.read_csv(work / "data.csv")
    d[["arm", "age"] + [f"m{i:02d}" for i in range(1, 13)]].iloc[:240].to_csv(work / "data.csv", index=False)
    plan = write_plan(work / "rich.toml", RICH_PLAN)
    code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "rich.md", "--adjust",
                        "bonferroni", "--quiet"], capsys)
    assert code == 0, err
    return work / "rich.audit.json"


def _leaves(x, path=()):
    """Every leaf of a JSON value with its path, and every list item and dict key (structure)."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield ("drop", path + (k,), None)
            yield from _leaves(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield ("drop", path + (i,), None)
            yield from _leaves(v, path + (i,))
    else:
        yield ("edit", path, x)


def _edited(value):
    """A different value of the same kind, as small a change as possible."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return float(np.nextafter(value, np.inf))  # one ulp
    if isinstance(value, str):
        if value in ("nan", "inf", "-inf"):
            return "inf" if value == "nan" else "nan"
        if len(value) == 64 and all(ch in "0123456789abcdef" for ch in value):
            return value[:-1] + ("0" if value[-1] != "0" else "1")
        return value + " "
    return 1  # null


def _apply(record, kind, path, value):
    rec = json.loads(json.dumps(record))
    *parent_path, last = path
    parent = rec
    for p in parent_path:
        parent = parent[p]
    if kind == "drop":
        del parent[last]
    else:
        parent[last] = _edited(value)
    return rec


def test_every_single_field_edit_fails_verification(work, rich_audit):
    """Edit each field of a real audit in turn (each number by one ulp or one unit, each text by
    one character, each item or key removed): the edited record is refused as malformed or
    verify reports a difference. Only when and from which file name the record was made are
    metadata that nothing recomputes."""
    from selective.analysis.audit import UNVERIFIED_FIELDS, validate_audit, verify_audit
    from selective.exceptions import RecordFormatError

    record = read_audit(rich_audit)
    data = pd.read_csv(work / "data.csv")
    assert verify_audit(record, data, audit_path=rich_audit) == []
    assert record["adjust"] == "bonferroni" and len(record["tests"]) == 3 and len(record["ledger"]["steps"]) == 2
    unverified = {tuple(p) for p in UNVERIFIED_FIELDS}
    silent, n_refused, n_detected = [], 0, 0
    for kind, path, value in _leaves(record):
        if path in unverified or path[:1] == ("created",):
            continue
        forged = _apply(record, kind, path, value)
        try:
            validate_audit(forged, "forged")
        except RecordFormatError:
            n_refused += 1
            continue
        if verify_audit(forged, data, audit_path=rich_audit):
            n_detected += 1
        else:
            silent.append((kind, path))
    assert silent == []
    assert n_detected > 100 and n_refused > 100  # both defences are exercised


def test_forged_columns_are_detected(work, rich_audit, capsys):
    """The fields the reviewer forged: the adjusted p-value, the footnote, n_candidates, a test
    result, and a change far below 1e-10; verify names each, in plain numbers."""
    rec = json.loads(rich_audit.read_text())
    cols = rec["table"]["columns"]
    forgeries = [
        lambda r: r["table"]["rows"][0].__setitem__(cols.index("pvalue_adjusted"), 0.001),
        lambda r: r["table"].__setitem__("footnote", r["table"]["footnote"].replace("Bonferroni", "Bonferoni")),
        lambda r: r.__setitem__("n_candidates", 4),
        lambda r: r["tests"][0]["result"].__setitem__("pvalue_naive", r["tests"][0]["result"]["pvalue_naive"] / 2),
        lambda r: r["table"]["rows"][1].__setitem__(cols.index("pvalue_best"),
                                                    r["table"]["rows"][1][cols.index("pvalue_best")] * (1 + 1e-15)),
    ]
    names = ["pvalue_adjusted", "table.footnote", "n_candidates", "tests[0].result.pvalue_naive", "pvalue_best"]
    for forge, name in zip(forgeries, names, strict=True):
        r = json.loads(json.dumps(rec))
        forge(r)
        write_audit(work / "forged.json", r)
        code, out, _ = run(["verify", work / "forged.json", work / "data.csv", "--table", work / "rich.md"], capsys)
        assert code == 3, name
        assert name in out and "np.float64" not in out


def test_verify_prints_plain_numbers(work, rich_audit, capsys):
    rec = json.loads(rich_audit.read_text())
    col = rec["table"]["columns"].index("pvalue_adjusted")
    rec["table"]["rows"][0][col] = 0.001
    write_audit(work / "forged.json", rec)
    code, out, _ = run(["verify", work / "forged.json", work / "data.csv", "--table", work / "rich.md"], capsys)
    assert code == 3
    assert "pvalue_adjusted: recorded 0.001, the run gives " in out and "np." not in out


def test_audit_without_its_plan_is_refused(work, rich_audit, capsys):
    """`plan: null` used to make verify replay the recorded ledger: an audit with an empty
    ledger and naive p-values as "best valid" verified. Now such a record is refused."""
    rec = json.loads(rich_audit.read_text())
    rec["plan"] = None
    rec["ledger"]["steps"] = []
    write_audit(work / "noplan.json", rec)
    code, out, err = run(["verify", work / "noplan.json", work / "data.csv"], capsys)
    assert code == 2 and "verified" not in out
    assert "noplan.json" in err and "'plan'" in err and "refuses a record without one" in err


def test_missing_or_replaced_table_file_fails(work, rich_audit, capsys):
    code, out, _ = run(["verify", rich_audit, work / "data.csv"], capsys)
    assert code == 0 and "rich.md matches" in out
    (work / "rich.md").write_text((work / "rich.md").read_text().replace("0.", "0,", 1))
    code, out, _ = run(["verify", rich_audit, work / "data.csv"], capsys)
    assert code == 3 and "is not the table the audit records" in out
    (work / "rich.md").unlink()
    code, out, _ = run(["verify", rich_audit, work / "data.csv"], capsys)
    assert code == 3 and "is missing" in out


def test_verify_on_data_with_missing_values_is_a_mismatch(work, rich_audit, capsys):
    d = pd.read_csv(work / "data.csv")
    d.loc[3, "m01"] = np.nan
    d.to_csv(work / "nan.csv", index=False)
    code, out, _ = run(["verify", rich_audit, work / "nan.csv"], capsys)
    assert code == 3
    assert "fingerprint differs" in out and "does not run on these data" in out and "missing value" in out


def test_version_1_audits_are_refused_with_a_reason(work, rich_audit, capsys):
    rec = json.loads(rich_audit.read_text())
    rec["version"] = 1
    write_audit(work / "old.json", rec)
    code, _, err = run(["show", work / "old.json"], capsys)
    assert code == 2 and "Version 1 audits (CSV fingerprints) are no longer read" in err


# ------------------------------------------------------------------------------------------
# Seeds, progress, writing
# ------------------------------------------------------------------------------------------

DP_PLAN_NO_SEED = """
[[select]]
selector = "noisy_top_k"
k = 2
candidates_like = "m0*"
score = "clipped_mean"
epsilon = 0.5
[[test]]
kind = "one_sample_t"
for_each = 1
column = "{selected}"
"""


def test_dp_plan_without_seed_draws_records_and_verifies(work, capsys):
    plan = write_plan(work / "dp.toml", DP_PLAN_NO_SEED)
    seeds = []
    for name in ("a", "b"):
        code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / f"{name}.md", "--quiet"],
                           capsys)
        assert code == 0, err
        rec = read_audit(work / f"{name}.audit.json")
        assert rec["seed"] == rec["plan"]["analysis"]["seed"]
        seeds.append(rec["seed"])
        code, out, _ = run(["verify", work / f"{name}.audit.json", work / "data.csv"], capsys)
        assert code == 0, out
    assert seeds[0] != seeds[1] and min(seeds) > 2**64  # 128 bits of entropy, drawn afresh


def test_seed_override_is_written_into_the_plan(work, capsys):
    code, _, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--seed", "5", "--quiet",
                        "--audit", work / "a.json"], capsys)
    assert code == 0, err
    rec = read_audit(work / "a.json")
    assert rec["seed"] == 5 and rec["plan"]["analysis"]["seed"] == 5
    assert run(["verify", work / "a.json", work / "data.csv"], capsys)[0] == 0


def test_no_progress_bar_for_a_short_run(work, capsys):
    code, out, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md"], capsys)
    assert code == 0
    assert err.strip().splitlines() == [f"wrote {work / 't.md'} and {work / 't.audit.json'}"]


def test_output_files_keep_their_mode(work, capsys):
    argv = ["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"]
    assert run(argv, capsys)[0] == 0
    umask = os.umask(0)
    os.umask(umask)
    assert (work / "t.md").stat().st_mode & 0o777 == 0o666 & ~umask  # new files: the usual mode
    os.chmod(work / "t.md", 0o640)
    os.chmod(work / "t.audit.json", 0o604)
    assert run(argv + ["--format", "csv"], capsys)[0] == 0
    assert (work / "t.md").stat().st_mode & 0o777 == 0o640
    assert (work / "t.audit.json").stat().st_mode & 0o777 == 0o604
    assert (work / "t.md").read_text().startswith("hypothesis,")


@pytest.mark.parametrize("failing_call", [1, 2])
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_interrupted_write_leaves_no_temporary_file_and_no_mismatch(work, capsys, monkeypatch, failing_call, error):
    """An interrupt or an error at the first rename (the audit) or the second (the table): no
    temporary file is left, and no table sits next to an audit it does not match."""
    argv = ["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"]
    assert run(argv, capsys)[0] == 0
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == failing_call:
            raise error("stop")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            main([str(a) for a in argv + ["--format", "csv"]])
    else:
        code, _, err = run(argv + ["--format", "csv"], capsys)
        assert code == 2 and "cannot write" in err and "stop" in err
    monkeypatch.setattr(os, "replace", real)
    names = sorted(p.name for p in work.iterdir())
    assert not [n for n in names if n.endswith(".tmp")], names
    assert "t.md" not in names  # the previous table went first, the new one never arrived
    assert "t.audit.json" in names
    read_audit(work / "t.audit.json")


def test_a_failure_before_writing_changes_nothing(work, capsys, monkeypatch):
    """Everything is computed and checked before the first byte is written."""
    from selective.analysis import audit as A

    argv = ["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "t.md", "--quiet"]
    assert run(argv, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in work.iterdir()}

    def broken(*args, **kwargs):
        raise ValueError("the audit record cannot be written as JSON: NaN")

    monkeypatch.setattr(A, "dump_record", broken)
    code, _, err = run(argv + ["--format", "csv"], capsys)
    assert code == 2 and "cannot be written" in err
    assert {p.name: p.read_bytes() for p in work.iterdir()} == before


def test_outputs_may_not_overwrite_inputs(work, capsys):
    code, _, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--audit", work / "data.csv"],
                       capsys)
    assert code == 2 and "is the data file" in err
    code, _, err = run(["analyze", work / "data.csv", "--plan", work / "plan.toml", "--out", work / "x.json",
                        "--audit", work / "x.json"], capsys)
    assert code == 2 and "same file" in err


# ------------------------------------------------------------------------------------------
# Plan files: unknown keys, real booleans, errors that name the file and the section
# ------------------------------------------------------------------------------------------

_SELECT = """
[[select]]
selector = "top_k"
k = 1
candidates = ["m01", "m02"]
score = "abs_mean"
{extra}
[[test]]
kind = "one_sample_t"
for_each = 1
column = "{{selected}}"
"""

STRICT_PLANS = [
    ("unknown select key", 'colour = "red"',
     r"\[\[select\]\] #1: unknown field\(s\) 'colour' for selector 'top_k' with score 'abs_mean'; allowed: "
     r"selector, label, k, candidates, candidates_like, score, ordered\."),
    ("misspelt score option", "clp = 2.0", r"unknown field\(s\) 'clp'"),
    ("string for a boolean", 'ordered = "no"', r"\[\[select\]\] #1 ordered: must be true or false \(a TOML boolean\); "
                                               r"got 'no'"),
    ("integer for a boolean", "ordered = 0", r"ordered: must be true or false"),
    ("date as a label", "label = 1979-05-27", r"\[\[select\]\] #1 label: must be a string; got datetime.date"),
    ("boolean for k", "k2 = 1", r"unknown field\(s\) 'k2'"),
]


@pytest.mark.parametrize("name,extra,match", STRICT_PLANS, ids=[p[0] for p in STRICT_PLANS])
def test_plans_are_checked_strictly(work, capsys, name, extra, match):
    plan = write_plan(work / "strict.toml", _SELECT.format(extra=extra))
    before = set(work.iterdir())
    code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2
    assert "strict.toml" in err
    import re

    assert re.search(match, err), err
    assert set(work.iterdir()) == before


MORE_BAD_PLANS = [
    ("non-finite epsilon", """
[[select]]
selector = "noisy_top_k"
k = 1
candidates = ["m01", "m02"]
score = "clipped_mean"
epsilon = nan
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #1 epsilon: must be a finite positive number"),
    ("boolean k", """
[[select]]
selector = "top_k"
k = true
candidates = ["m01", "m02"]
score = "abs_mean"
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #1 k: must be an integer >= 1; got True"),
    ("unknown analysis key", """
[analysis]
alpah = 0.05
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[analysis\]: unknown field\(s\) 'alpah' in \[analysis\]; allowed: alpha, seed"),
    ("date in a test", """
[[test]]
kind = "one_sample_t"
column = "m01"
value = 2020-01-01T00:00:00
""", r"\[\[test\]\] #1 value: must be a string, a number, a boolean or an array"),
    ("bad test value at construction", """
[[test]]
kind = "one_sample_t"
column = "m01"
confidence_level = 1.5
""", r"\[\[test\]\] #1: ValueError: .*confidence_level"),
    ("formula error while running", """
[[test]]
kind = "ols"
formula = "m01 ~ C(arm"
term = "age"
""", r"\[\[test\]\] #1: \w+Error"),
    ("group value absent from the data", """
[[select]]
selector = "top_k"
k = 1
candidates = ["m01", "m02"]
score = "welch_t"
group = "arm"
levels = ["treatment", "nobody"]
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #1 levels: 'nobody' is not a value of column 'arm'; it has \['control', 'treatment'\]"),
    ("score that fails on the data", """
[[select]]
selector = "top_k"
k = 1
candidates = ["m01", "m02"]
score = "abs_corr"
target = "arm"
[[test]]
kind = "one_sample_t"
column = "m01"
""", r"\[\[select\]\] #1: \w+Error"),
]


@pytest.mark.parametrize("name,text,match", MORE_BAD_PLANS, ids=[p[0] for p in MORE_BAD_PLANS])
def test_errors_name_the_file_and_the_section(work, capsys, name, text, match):
    plan = write_plan(work / "bad.toml", text)
    before = set(work.iterdir())
    code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2, err
    assert "bad.toml" in err
    import re

    assert re.search(match, err), err
    assert set(work.iterdir()) == before


def test_units_in_a_plan(work, capsys):
    d = pd.read_csv(work / "data.csv")
    d["site"] = np.arange(len(d)) // 3
    d.to_csv(work / "sites.csv", index=False)
    text = (work / "plan.toml").read_text().replace("n_candidates = 120", 'n_candidates = 120\nunits = "site"')
    plan = write_plan(work / "units.toml", text)
    code, out, err = run(["analyze", work / "sites.csv", "--plan", plan, "--out", work / "u.md", "--quiet"], capsys)
    assert code == 0, err
    assert "n = 200 independent units ('site', up to 3 rows each" in (work / "u.md").read_text()
    assert run(["verify", work / "u.audit.json", work / "sites.csv"], capsys)[0] == 0


# ------------------------------------------------------------------------------------------
# Fingerprints and big certificates in audits
# ------------------------------------------------------------------------------------------


def test_fingerprint_kinds_names_and_chunks():
    d = pd.DataFrame({"x": [1.0, np.nan, -0.0], "n": [1, 2, 3], "s": ["a", None, "é"], "b": [True, False, True]})
    fp = data_fingerprint(d)
    assert fp == data_fingerprint(d, chunk_bytes=16)  # chunking does not change it
    assert fp == data_fingerprint(d.copy())
    variants = [
        d.rename(columns={"x": "y"}),
        d[["n", "x", "s", "b"]],
        d.iloc[::-1].reset_index(drop=True),
        d.assign(x=[1.0, np.nan, 0.0]),  # -0.0 and 0.0 differ
        d.assign(n=[1.0, 2.0, 3.0]),  # integers and floats differ
        d.assign(s=["a", "", "é"]),  # a missing value is not an empty string
        d.assign(s=["a", None, "e"]),
        d.iloc[:2],
    ]
    assert len({fp} | {data_fingerprint(v) for v in variants}) == len(variants) + 1
    assert data_fingerprint(d.set_index("n")) != fp  # the index is not hashed, but the columns are
    nan_payload = np.array([np.nan, np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), dtype=float)[0]])
    one, other = (data_fingerprint(pd.DataFrame({"x": nan_payload[i:i + 1]})) for i in (0, 1))
    assert one == other  # every NaN is the same missing value


def test_huge_description_length_in_an_audit():
    import math

    from selective import Analysis
    from selective.accounting import DescriptionLength
    from selective.analysis.audit import audit_record, dump_record, table_from_audit, validate_audit, verify_audit
    from selective.exceptions import RecordFormatError
    from selective.selectors.base import Selection

    d = pd.read_csv(DATA)
    a = Analysis(d, rng=1)
    big = math.comb(20_000, 2_000)  # about 2,750 decimal digits... and far more bits than a double holds exactly
    a.record(Selection(value=("m01",), certificate=DescriptionLength(big), label="huge"))
    a.test(TwoSampleTTest(column="m01", group="arm", levels=("treatment", "control"), usevar="unequal"))
    rec = audit_record(a, a.report())
    text = dump_record(rec)
    assert len(repr(DescriptionLength(big))) < 80
    back = validate_audit(json.loads(text), "api.json")  # written without a plan: it can be read and shown ...
    cert = back["ledger"]["steps"][0]["certificate"]
    assert cert["n_outcomes"] == hex(big) and cert["log2_n_outcomes"] == math.log2(big)
    assert len(table_from_audit(back).frame) == 1
    with pytest.raises(RecordFormatError, match="api.json: field 'plan'.*refuses a record without one"):
        verify_audit(back, d, source="api.json")  # ... but not verified


# ------------------------------------------------------------------------------------------
# Fission and conditional columns from a plan file, audited and verified
# ------------------------------------------------------------------------------------------

_SHARP_PLAN = """
[analysis]
seed = 5
n_candidates = 60
{fission}
[[select]]
selector = "top_k"
k = 2
candidates_like = "m*"
score = "welch_t"
group = "arm"
levels = ["treatment", "control"]

[[test]]
kind = "welch_t"
for_each = 1
{conditional}column = "{{selected}}"
group = "arm"
levels = ["treatment", "control"]
"""
_FISSION = '[fission]\ncolumns_like = "m*"\nmethod = "gaussian"\nsigma = 1.0\ntau = 1.0\n'


@pytest.mark.parametrize("fission, conditional, column", [
    (_FISSION, "", "p (fission)"),
    ("", "conditional = true\n", "p (conditional)"),
], ids=["fission", "conditional"])
def test_fission_and_conditional_plans_run_audit_and_verify(work, capsys, fission, conditional, column):
    plan = write_plan(work / "sharp.toml", _SHARP_PLAN.format(fission=fission, conditional=conditional))
    code, out, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "t.md", "--quiet"], capsys)
    assert code == 0, err
    assert column in (work / "t.md").read_text()
    record = read_audit(work / "t.audit.json")
    # the optional columns are audited: fission's, or after a top_k screen the conditional and hybrid ones
    assert record["table"]["columns"][-2] == ("pvalue_fission" if fission else "ci_hybrid_high")
    if conditional:
        assert "pvalue_conditional" in record["table"]["columns"] and "pvalue_hybrid" in record["table"]["columns"]
    code, out, err = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
    assert code == 0 and "verified" in out, err
    # a forged cell of the optional column is found
    clean = json.loads(json.dumps(record))
    col = record["table"]["columns"].index("pvalue_fission" if fission else "pvalue_conditional")
    record["table"]["rows"][1][col] = 0.0001
    write_audit(work / "t.audit.json", record)
    code, out, err = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
    assert code != 0 and ("pvalue_fission" if fission else "pvalue_conditional") in out + err
    if conditional:  # and so is a forged hybrid cell (the conditional cell restored)
        record = clean
        record["table"]["rows"][0][record["table"]["columns"].index("pvalue_hybrid")] = 0.0123
        write_audit(work / "t.audit.json", record)
        code, out, err = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
        assert code != 0 and "pvalue_hybrid" in out + err


_BINOMIAL_PLAN = """
[analysis]
seed = 3
[fission]
columns_like = "s*"
method = "binomial"
trials = "m"
epsilon = 0.5
[[select]]
selector = "top_k"
k = 1
candidates_like = "s*"
score = "abs_corr"
target = "x"
[[test]]
kind = "logit"
for_each = 1
formula = "{selected} + I(m - {selected}) ~ x"
term = "x"
"""


def test_binomial_thinning_plan_runs_and_verifies(work, capsys):
    rng = np.random.default_rng(7)
    m = rng.integers(3, 21, size=150)
    frame = pd.DataFrame(rng.binomial(m[:, None], 0.3, size=(150, 8)), columns=[f"s{i}" for i in range(8)])
    frame["m"], frame["x"] = m, rng.standard_normal(150)
    frame.to_csv(work / "counts.csv", index=False)
    plan = write_plan(work / "counts.toml", _BINOMIAL_PLAN)
    code, out, err = run(["analyze", work / "counts.csv", "--plan", plan, "--out", work / "c.md", "--quiet"], capsys)
    assert code == 0, err
    assert "p (fission)" in (work / "c.md").read_text()
    assert "'m': the numbers of trials, split with the counts" in (work / "c.audit.json").read_text()
    code, out, err = run(["verify", work / "c.audit.json", work / "counts.csv"], capsys)
    assert code == 0 and "verified" in out, err
    bad = write_plan(work / "bad.toml", _BINOMIAL_PLAN.replace('trials = "m"\n', ""))
    code, _, err = run(["analyze", work / "counts.csv", "--plan", bad, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2 and "method \"binomial\" needs `trials`, the name of the column of numbers of trials" in err


SHARP_ERRORS = [
    ("gaussian without sigma", _SHARP_PLAN.format(fission='[fission]\ncolumns_like = "m*"\nmethod = "gaussian"\n',
                                                  conditional=""), r"\[fission\]: method \"gaussian\" needs `sigma`"),
    ("unknown fission key", _SHARP_PLAN.format(fission=_FISSION + "colour = 1\n", conditional=""),
     r"\[fission\]: unknown field\(s\) 'colour'"),
    # the message names the plan's field, not Analysis.fission's argument `column`
    ("fission column not in the data", _SHARP_PLAN.format(
        fission='[fission]\ncolumns = ["m01", "nope"]\nmethod = "gaussian"\nsigma = 1.0\n', conditional=""),
     r"\[fission\]: ValueError: `columns` .*'nope'"),
    ("conditional without for_each", """
[[test]]
kind = "one_sample_t"
conditional = true
column = "m01"
""", r"\[\[test\]\] #1 conditional: needs `for_each`"),
    ("conditional not a boolean", _SHARP_PLAN.format(fission="", conditional='conditional = "yes"\n'),
     r"conditional: must be true or false"),
]


@pytest.mark.parametrize("name, text, match", SHARP_ERRORS, ids=[e[0] for e in SHARP_ERRORS])
def test_fission_and_conditional_plan_errors(work, capsys, name, text, match):
    plan = write_plan(work / "bad.toml", text)
    code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2
    assert re.search(match, err), err
    assert not (work / "o.md").exists()


_DP_CONDITIONAL_PLAN = """
[analysis]
seed = 4
[[select]]
selector = "noisy_top_k"
k = 1
epsilon = 1.0
candidates_like = "m*"
score = "clipped_mean"
clip = 3.0
[[test]]
kind = "z"
for_each = 1
conditional = true
column = "{{selected}}"
clip = {clip}
"""


def test_a_plan_reaches_the_randomized_column_after_a_dp_screen(work, capsys):
    # noisy_top_k by clipped means, then the z-test of the winner's clipped mean conditional
    # on the screen: the randomized selective inference column, audited and verified
    plan = write_plan(work / "dp.toml", _DP_CONDITIONAL_PLAN.format(clip="3.0"))
    code, _, err = run(["analyze", work / "data.csv", "--plan", plan, "--out", work / "t.md", "--quiet"], capsys)
    assert code == 0, err
    assert "p (conditional)" in (work / "t.md").read_text()
    record = read_audit(work / "t.audit.json")
    cols = record["table"]["columns"]
    row = record["table"]["rows"][0]
    assert "randomized selective inference" in row[cols.index("note")]
    assert "clip(" in (work / "t.md").read_text()
    code, out, err = run(["verify", work / "t.audit.json", work / "data.csv"], capsys)
    assert code == 0 and "verified" in out, err
    # a test that does not clip as the screen did is refused, naming the block and the field
    bad = write_plan(work / "bad.toml", _DP_CONDITIONAL_PLAN.format(clip="2.0"))
    code, _, err = run(["analyze", work / "data.csv", "--plan", bad, "--out", work / "o.md", "--quiet"], capsys)
    assert code == 2 and "[[test]] #1" in err and "give the test clip=3.0; got clip=2.0" in err, err
    assert not (work / "o.md").exists()

def test_a_parquet_file_gives_the_table_of_its_csv(work, capsys):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    pd.read_csv(work / "data.csv").to_parquet(work / "data.parquet")
    plan = write_plan(work / "sharp.toml", _SHARP_PLAN.format(fission="", conditional="conditional = true\n"))
    dp = write_plan(work / "dp.toml", """
[analysis]
seed = 3
[[select]]
selector = "noisy_top_k"
k = 2
epsilon = 0.05
candidates_like = "m*"
score = "clipped_mean"
[[test]]
kind = "one_sample_t"
for_each = 1
column = "{selected}"
""")
    for p in (plan, dp):  # the same selections (the grid scores are exact), ledger and table
        for name in ("data.csv", "data.parquet"):
            code, _, err = run(["analyze", work / name, "--plan", p, "--out", work / f"{name}.md", "--quiet"], capsys)
            assert code == 0, err
        assert (work / "data.csv.md").read_text() == (work / "data.parquet.md").read_text()
    code, out, err = run(["verify", work / "data.parquet.audit.json", work / "data.csv"], capsys)
    assert code == 0 and "verified" in out, err
    code, _, err = run(["analyze", work / "missing.parquet", "--plan", plan, "--quiet"], capsys)
    assert code == 2 and "does not exist" in err


def _analyze_regression_plan(tmp_path, capsys, plan_text, *, seed, n, p, coefs):
    """d.csv: n rows of p standard normal x's and y = x'coefs + noise; analyze it with the plan into
    c.md (and c.audit.json). Returns the frame and the table's text."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p))
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(p)])
    frame["y"] = x[:, : len(coefs)] @ np.asarray(coefs) + rng.standard_normal(n)
    frame.to_csv(tmp_path / "d.csv", index=False)
    plan = write_plan(tmp_path / "plan.toml", plan_text)
    code, _, err = run(["analyze", tmp_path / "d.csv", "--plan", plan, "--out", tmp_path / "c.md", "--quiet"], capsys)
    assert code == 0, err
    return frame, (tmp_path / "c.md").read_text()


def _verified_and_forged_cell_caught(tmp_path, audit, capsys) -> dict:
    """``audit`` of d.csv verifies, and halving a shown conditional p-value is reported; returns the record."""
    code, out, _ = run(["verify", audit, tmp_path / "d.csv"], capsys)
    assert code == 0 and "verified" in out
    rec = json.loads(audit.read_text())
    col = rec["table"]["columns"].index("pvalue_conditional")
    row = next(i for i, r in enumerate(rec["table"]["rows"]) if isinstance(r[col], float))
    forged = json.loads(json.dumps(rec))
    forged["table"]["rows"][row][col] = rec["table"]["rows"][row][col] / 2
    write_audit(tmp_path / "forged.json", forged)
    code, out, _ = run(["verify", tmp_path / "forged.json", tmp_path / "d.csv"], capsys)
    assert code == 3 and "pvalue_conditional" in out
    return rec


CARVING_PLAN = """
[analysis]
alpha = 0.05
seed = 8

[[select]]
selector = "randomized_lasso"
target = "y"
candidates_like = "x*"
lam = 20.0
max_size = 6
sigma = 1.0

[[test]]
kind = "ols"
for_each = 1
formula = "y ~ {support}"
term = "{selected}"
conditional = true
"""


def test_carving_plan_analyzes_verifies_and_catches_a_forged_conditional_cell(tmp_path, capsys):
    """A randomized-lasso plan: the table has the carving column; verify recomputes the
    randomization from the seed and the column from the data, so a forged conditional p-value or
    seed is reported."""
    _, text = _analyze_regression_plan(tmp_path, capsys, CARVING_PLAN, seed=4, n=300, p=6, coefs=(0.5, 0.3))
    assert "p (conditional)" in text and "carving" in text
    rec = _verified_and_forged_cell_caught(tmp_path, tmp_path / "c.audit.json", capsys)
    reseeded = json.loads(json.dumps(rec))
    reseeded["seed"] = rec["seed"] + 1
    write_audit(tmp_path / "reseeded.json", reseeded)
    code, out, _ = run(["verify", tmp_path / "reseeded.json", tmp_path / "d.csv"], capsys)
    assert code == 3


SCREEN_PLAN = CARVING_PLAN.replace('selector = "randomized_lasso"', 'selector = "t_screen"').replace(
    "lam = 20.0\nmax_size = 6\nsigma = 1.0", "keep_below = 0.25")


def test_screen_plan_analyzes_verifies_and_catches_a_forged_conditional_cell(tmp_path, capsys):
    """A t-test screen plan: the table has the conditional column after the screen; verify recomputes
    it from the data, so a forged conditional p-value, or a data row changed, is reported."""
    frame, text = _analyze_regression_plan(tmp_path, capsys, SCREEN_PLAN, seed=5, n=120, p=8, coefs=(0.3, 0.2))
    assert "p (conditional)" in text and "t-test screen of step 1" in text
    audit = tmp_path / "c.audit.json"
    _verified_and_forged_cell_caught(tmp_path, audit, capsys)
    frame.loc[7, "y"] += 1e-6
    frame.to_csv(tmp_path / "d2.csv", index=False)
    code, out, _ = run(["verify", audit, tmp_path / "d2.csv"], capsys)
    assert code == 3
