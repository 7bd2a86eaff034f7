"""Fuzzing plan files, ledger JSON and audit JSON: only the package's documented errors.

Every input is either accepted or refused with the documented error of its reader:
:class:`~selective.analysis.plan.PlanError` for plan files (parsing and running them on data),
:class:`~selective.exceptions.RecordFormatError` for ledger and audit records. Anything else
(an AttributeError, a KeyError, a RecursionError, an OverflowError, ...) fails the test. What
is accepted must also work downstream: a plan that runs gives a report and an audit that reads
back; a ledger that loads writes itself back exactly; an audit that reads verifies (with or
without differences) without raising.

About 10,600 cases in all, derandomized (the same cases on every run) and small, so that the
suite runs in well under a minute.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from selective.accounting import ZCDP, DescriptionLength, Ledger, MaxInfo, PureDP
from selective.analysis.audit import audit_record, dump_record, validate_audit, verify_audit
from selective.analysis.plan import SELECTORS, PlanError, load_plan, parse_plan, run_plan, with_seed
from selective.exceptions import RecordFormatError, SelectiveWarning


def fuzz_settings(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@functools.lru_cache(maxsize=1)
def small_data() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 48
    d = pd.DataFrame({
        "arm": np.where(np.arange(n) % 2 == 0, "treatment", "control"),
        "sex": np.where(rng.uniform(size=n) < 0.5, "f", "m"),
        "age": rng.normal(50, 10, size=n).round(1),
        "y": (rng.uniform(size=n) < 0.4).astype(int),
        "count": rng.poisson(3, size=n),
    })
    for j in range(1, 7):
        d[f"m0{j}"] = rng.normal(size=n) + (0.8 * (d["arm"] == "treatment") if j == 2 else 0.0)
    return d


# ------------------------------------------------------------------------------------------
# Plans
# ------------------------------------------------------------------------------------------

COLUMNS = ["arm", "sex", "age", "y", "count", "m01", "m02", "m03", "m04", "m05", "m06"]
SECTION_KEYS = ["analysis", "select", "test"]
ANALYSIS_KEYS = ["alpha", "seed", "n_candidates", "budget_bits", "budget_beta", "budget_epsilon", "units"]
SELECT_KEYS = ["selector", "label", "k", "candidates", "candidates_like", "score", "ordered", "epsilon", "group",
               "levels", "target", "clip", "positive", "value", "certificate", "lam", "max_size", "sigma",
               "noise_sd", "steps", "threshold", "max_selected"]
TEST_KEYS = ["kind", "for_each", "label", "alternative", "confidence_level", "missing", "column", "column1", "column2",
             "group", "levels", "value", "usevar", "success", "variance", "formula", "term", "terms", "model", "use_f"]
WORDS = (COLUMNS + ["top_k", "noisy_top_k", "declared", "welch_t", "abs_mean", "abs_corr", "clipped_mean",
                    "signed_mean", "one_sample_t", "pearson", "ols", "logit", "poisson", "proportion", "z",
                    "two_proportions", "chi2_independence", "joint_wald", "paired_t", "spearman", "student_t",
                    "two_sample_z", "treatment", "control", "{selected}", "m0*", "two-sided", "larger", "smaller",
                    "raise", "drop", "pooled", "unequal", "m02 ~ age", "{selected} ~ C(arm)", "y ~ m01",
                    "count ~ age", "age", "C(arm)[T.treatment]", "description_length", "pure_dp", "approx_dp",
                    "", "f", "no"])

toml_scalars = st.one_of(
    st.sampled_from(WORDS), st.text(max_size=6), st.integers(-3, 130), st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(0, 1), st.booleans(),
    st.dates(), st.datetimes(), st.times(),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["kind", "n_outcomes", "epsilon",
                                                                                    "delta", "rho", "x"]) | st.text(
                                                                                        max_size=4), inner, max_size=3),
    max_leaves=6,
)

small_ints = st.integers(-2, 6) | st.sampled_from([0, 1, 2, 12, 120, 2**63 - 1])
numbers = st.floats(-1, 10) | st.sampled_from([0.0, 0.05, 0.5, 1.0, 2.0, 1e-300, 1e300, -0.0])
words = st.sampled_from(WORDS)
certificate_tables = st.fixed_dictionaries(
    {"kind": st.sampled_from(["description_length", "pure_dp", "approx_dp", "zcdp", "max_info", "mutual_info",
                              "other"])},
    optional={"n_outcomes": small_ints, "epsilon": numbers, "delta": numbers, "rho": numbers, "bits": numbers,
              "beta": numbers, "scope": st.sampled_from(["product", "any distribution", "x"])})
#: values of the right shape for some key, most of the time; anything TOML can hold otherwise
plausible = st.one_of(small_ints, numbers, st.booleans(), words, words, st.lists(words, max_size=4),
                      certificate_tables, toml_values)


columns = st.sampled_from(COLUMNS + ["{selected}", "nope"])
#: values of the right type for each key, so that many mutated plans parse and run
KEY_VALUES = {
    "alpha": st.floats(0, 1), "seed": small_ints, "n_candidates": small_ints, "budget_bits": numbers,
    "budget_beta": st.floats(0, 1), "budget_epsilon": numbers, "units": columns,
    "selector": st.sampled_from(list(SELECTORS)), "label": st.text(max_size=6) | words,
    "lam": numbers, "max_size": small_ints, "sigma": numbers, "noise_sd": numbers, "steps": small_ints,
    "threshold": numbers, "max_selected": small_ints, "keep_below": st.floats(-1, 2) | numbers,
    "k": small_ints, "candidates": st.lists(columns, max_size=4), "candidates_like": st.sampled_from(
        ["m0*", "m*", "*", "z*", "m0[1-3]"]), "score": st.sampled_from(["welch_t", "abs_mean", "abs_corr",
                                                                        "clipped_mean", "signed_mean"]),
    "ordered": st.booleans(), "epsilon": numbers, "group": columns, "target": columns, "clip": numbers,
    "levels": st.lists(st.sampled_from(["treatment", "control", "f", "m", 0, 1]), max_size=3),
    "positive": st.sampled_from(["treatment", "control", "f", 1]), "value": numbers | st.lists(columns, max_size=2),
    "certificate": certificate_tables, "kind": st.sampled_from(WORDS[11:34]), "for_each": small_ints,
    "alternative": st.sampled_from(["two-sided", "larger", "smaller", "less"]), "confidence_level": st.floats(0, 1),
    "missing": st.sampled_from(["raise", "drop", "keep"]), "column": columns, "column1": columns,
    "column2": columns, "usevar": st.sampled_from(["pooled", "unequal"]), "success": st.sampled_from([0, 1, "f"]),
    "variance": st.sampled_from(["null", "observed", "x"]), "formula": st.sampled_from(
        ["m02 ~ age", "{selected} ~ C(arm)", "y ~ m01", "count ~ age", "m01 ~ ", "age ~ nope", "age ~ {support}",
         "age ~ {support} + m01", "age ~ {support} - 1"]),
    "term": st.sampled_from(["age", "m01", "C(arm)[T.treatment]", "nope", "{selected}"]),
    "terms": st.lists(st.sampled_from(["age", "m01", "C(arm)[T.treatment]"]), max_size=3),
    "model": st.sampled_from(["ols", "logit", "poisson", "x"]), "use_f": st.booleans(),
}

BASE_PLANS = [
    {"analysis": {"seed": 4},
     "select": [{"selector": "randomized_lasso", "target": "age", "candidates_like": "m0*", "lam": 30.0,
                 "max_size": 6, "sigma": 10.0}],
     "test": [{"kind": "ols", "for_each": 1, "formula": "age ~ {support}", "term": "{selected}",
               "conditional": True}]},
    {"analysis": {"seed": 5},
     "select": [{"selector": "randomized_stepwise", "target": "age", "candidates": ["m01", "m02", "m03"],
                 "steps": 2, "sigma": 10.0, "noise_sd": 5.0},
                {"selector": "sparse_vector", "candidates_like": "m0*", "score": "clipped_mean", "clip": 2.0,
                 "threshold": 0.3, "epsilon": 1.0, "max_selected": 1}],
     "test": [{"kind": "ols", "for_each": 1, "formula": "age ~ {support}", "term": "{selected}",
               "conditional": True},
              {"kind": "z", "for_each": 2, "column": "{selected}", "clip": 2.0, "conditional": True}]},
    {"analysis": {"seed": 6},
     "select": [{"selector": "t_screen", "target": "age", "candidates_like": "m0*", "keep_below": 0.5}],
     "test": [{"kind": "ols", "for_each": 1, "formula": "age ~ {support}", "term": "{selected}",
               "conditional": True}]},
    {"analysis": {"alpha": 0.05, "seed": 1, "n_candidates": 12},
     "select": [{"selector": "top_k", "k": 2, "candidates_like": "m0*", "score": "welch_t", "group": "arm",
                 "levels": ["treatment", "control"]}],
     "test": [{"kind": "welch_t", "for_each": 1, "column": "{selected}", "group": "arm",
               "levels": ["treatment", "control"]}]},
    {"analysis": {"seed": 2, "budget_epsilon": 5.0},
     "select": [{"selector": "noisy_top_k", "k": 1, "candidates": ["m01", "m02", "m03"], "score": "clipped_mean",
                 "epsilon": 1.0, "clip": 2.0},
                {"selector": "declared", "value": ["m04"], "certificate": {"kind": "description_length",
                                                                           "n_outcomes": 6}}],
     "test": [{"kind": "one_sample_t", "for_each": 1, "column": "{selected}"},
              {"kind": "ols", "formula": "m04 ~ age + C(arm)", "term": "age"}]},
    {"select": [{"selector": "top_k", "k": 1, "candidates": ["m05", "m06"], "score": "abs_corr", "target": "age",
                 "ordered": True, "label": "corr screen"}],
     "test": [{"kind": "pearson", "for_each": 1, "column1": "{selected}", "column2": "age"},
              {"kind": "proportion", "column": "y", "value": 0.5, "success": 1}]},
    {"analysis": {"alpha": 0.1, "seed": 3},
     "select": [{"selector": "noisy_top_k", "k": 2, "candidates_like": "m0*", "score": "signed_mean", "group": "arm",
                 "positive": "treatment", "epsilon": 3.0}],
     "test": [{"kind": "two_sample_z", "for_each": 1, "column": "{selected}", "group": "arm",
               "levels": ["treatment", "control"]},
              {"kind": "chi2_independence", "column1": "arm", "column2": "sex"}]},
]


@st.composite
def mutated_plans(draw, max_mutations: int = 3):
    plan = json.loads(json.dumps(draw(st.sampled_from(BASE_PLANS))))
    for _ in range(draw(st.integers(0, max_mutations))):
        op = draw(st.sampled_from(["set"] * 6 + ["drop", "drop", "add_block", "drop_block", "section"]))
        section = draw(st.sampled_from(SECTION_KEYS))
        if op == "section":
            plan[draw(st.sampled_from(SECTION_KEYS + ["extra"]) | st.text(max_size=4))] = draw(toml_values)
            continue
        if section == "analysis":
            block = plan.setdefault("analysis", {})
            if not isinstance(block, dict):
                continue
            keys = ANALYSIS_KEYS
        else:
            blocks = plan.setdefault(section, [])
            if not isinstance(blocks, list):
                continue
            if op == "add_block" or not blocks:
                blocks.append({})
            if op == "drop_block":
                blocks.pop(draw(st.integers(0, len(blocks) - 1)))
                continue
            block = blocks[draw(st.integers(0, len(blocks) - 1))]
            if not isinstance(block, dict):
                continue
            keys = SELECT_KEYS if section == "select" else TEST_KEYS
        key = draw(st.sampled_from(keys) | st.sampled_from(keys) | st.text(max_size=5))
        if op == "drop":
            block.pop(key, None)
        elif key in KEY_VALUES and draw(st.booleans()):
            block[key] = draw(KEY_VALUES[key])
        else:
            block[key] = draw(plausible)
    return plan


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


@fuzz_settings(3000)
@given(raw=mutated_plans() | st.dictionaries(st.text(max_size=4), toml_values, max_size=3) | toml_values)
def test_parsing_plans_raises_only_plan_errors(raw):
    try:
        plan = parse_plan(raw, source="fuzz.toml")
    except PlanError as exc:
        assert str(exc).startswith("fuzz.toml: ")
        event("refused")
        return
    event("parsed")
    assert plan.test  # a parsed plan has at least one test


@fuzz_settings(1200)
@given(raw=mutated_plans(max_mutations=2))
def test_running_plans_raises_only_plan_errors(raw):
    """A plan that parses runs, or is refused naming the file; what runs reports, and its audit
    reads back."""
    try:
        plan = parse_plan(raw, source="fuzz.toml")
    except PlanError:
        event("refused when parsed")
        return
    w = _quiet()
    try:
        try:
            analysis = run_plan(plan, small_data())
        except PlanError as exc:
            assert str(exc).startswith("fuzz.toml: ")
            event("refused when run")
            return
        event("ran")
        table = analysis.report()
        record = audit_record(analysis, table, plan=with_seed(plan.raw, analysis.seed), data_source="small.csv")
        validate_audit(json.loads(dump_record(record)), "fuzz.audit.json")
    finally:
        w.__exit__(None, None, None)


FRAGMENTS = ["[analysis]\n", "[[select]]\n", "[[test]]\n", "alpha = 0.05\n", "seed = 1\n", 'selector = "top_k"\n',
             "k = 1\n", 'candidates = ["m01", "m02"]\n', 'score = "abs_mean"\n', 'kind = "one_sample_t"\n',
             'column = "m01"\n', "for_each = 1\n", 'column = "{selected}"\n', "ordered = true\n", 'ordered = "no"\n',
             "x = 1979-05-27\n", "clip = inf\n", "k = nan\n", "[", "]", "=", '"', "\n", "{", "}", "a = [" * 5,
             "b = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
             "\x00", "é", "\\u00"]


@fuzz_settings(1000)
@given(parts=st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=14))
def test_loading_plan_text_raises_only_plan_errors(parts, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "fuzz_plan.toml"
    path.write_bytes("".join(parts).encode("utf-8", "surrogatepass"))
    try:
        load_plan(path)
    except PlanError as exc:
        assert "fuzz_plan.toml" in str(exc)


def test_deeply_nested_plan_text_is_a_plan_error(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(PlanError, match="deep.toml"):
        load_plan(path)


# ------------------------------------------------------------------------------------------
# Ledger records
# ------------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                         st.text(max_size=6), st.sampled_from(["selective.ledger", "pure_dp", "description_length",
                                                               "0x1f", "0xZZ", "max_info", "product",
                                                               "any distribution"]))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["format", "version", "n_rows", "budget", "steps", "index", "label", "certificate", "kind",
                     "epsilon", "n_outcomes", "bits", "beta", "scope", "rho", "delta"]) | st.text(max_size=4),
    inner, max_size=5), max_leaves=12)

certificates = st.one_of(
    st.builds(PureDP, epsilon=st.floats(1e-6, 5.0)),
    st.builds(DescriptionLength, n_outcomes=st.integers(1, 10**30) | st.integers(2**53, 2**300)),
    st.builds(ZCDP, rho=st.floats(1e-8, 1.0)),
    st.builds(MaxInfo, bits=st.floats(0, 30), beta=st.floats(0, 0.01), scope=st.just("any distribution")),
)


def _ledger(certs) -> Ledger:
    led = Ledger(n_rows=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SelectiveWarning)
        for c in certs:
            try:
                led.record(c, label="s")
            except ValueError:
                pass
    return led


def _paths(x, path=()):
    yield path
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, path + (i,))


@st.composite
def near(draw, old):
    """A value like ``old`` (same type, a small change) most of the time; any JSON value otherwise."""
    if draw(st.integers(0, 9)) < 3:
        return draw(json_values)
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw(st.sampled_from([old + 1, old - 1, 0, -old, 2 * old + 1, 2**64]))
    if isinstance(old, float):
        return draw(st.sampled_from([float(np.nextafter(old, np.inf)), old * 1.5, -old, 0.0, old + 1.0, 1e308]))
    if isinstance(old, str):
        return draw(st.sampled_from([old + "x", old[:-1], "", "nan", "inf", old.upper()]) | words)
    if isinstance(old, list) and old:
        i = draw(st.integers(0, len(old) - 1))
        return draw(st.sampled_from([old[:i] + old[i + 1:], old + [old[i]], old[::-1]]))
    return draw(json_values)


@st.composite
def mutated_records(draw, record):
    rec = json.loads(json.dumps(record))
    for _ in range(draw(st.integers(1, 2))):
        paths = [p for p in _paths(rec) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = rec
        for p in path[:-1]:
            parent = parent[p]
        op = draw(st.sampled_from(["set"] * 6 + ["drop", "add"]))
        if op == "drop":
            del parent[path[-1]]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=4))] = draw(json_values)
        else:
            parent[path[-1]] = draw(near(parent[path[-1]]))
    return rec


def _flat(x, path=()):
    """(path, leaf) pairs of a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _flat(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _flat(v, path + (i,))
    else:
        yield path, x


def _check_loaded(led: Ledger) -> None:
    back = Ledger.from_json(led.to_json())
    assert back == led
    rows = led.rows()
    assert len(rows) == len(led)
    led.totals()


@fuzz_settings(1000)
@given(value=json_values)
def test_arbitrary_json_as_a_ledger(value):
    try:
        led = Ledger.from_json(json.dumps(value), source="fuzz.json")
    except RecordFormatError as exc:
        assert str(exc).startswith("fuzz.json")
        return
    _check_loaded(led)


@fuzz_settings(1500)
@given(data=st.data(), certs=st.lists(certificates, max_size=5))
def test_mutated_ledger_records(data, certs):
    record = _ledger(certs).to_dict()
    rec = data.draw(mutated_records(record))
    try:
        led = Ledger.from_dict(rec, source="fuzz.json")
    except RecordFormatError as exc:
        assert str(exc).startswith("fuzz.json")
        event("refused")
        return
    event("loaded")
    _check_loaded(led)


@fuzz_settings(500)
@given(certs=st.lists(certificates, max_size=4), cut=st.integers(0, 400), junk=st.text(max_size=3),
       depth=st.integers(0, 3000))
def test_mutated_ledger_text(certs, cut, junk, depth):
    text = _ledger(certs).to_json()
    for candidate in (text[:cut] + junk + text[cut:], text[:cut], "[" * depth + text + "]" * depth,
                      text.replace("1", "1" * (cut % 50 + 1)), text.replace(":", ": NaN,", 1)):
        try:
            led = Ledger.from_json(candidate, source="fuzz.json")
        except RecordFormatError:
            continue
        _check_loaded(led)


# ------------------------------------------------------------------------------------------
# Audit records
# ------------------------------------------------------------------------------------------

AUDIT_PLAN = {
    "analysis": {"alpha": 0.1, "seed": 5, "n_candidates": 12},
    "select": [{"selector": "noisy_top_k", "k": 2, "candidates_like": "m0*", "score": "clipped_mean",
                "epsilon": 2.0, "label": "noisy"},
               {"selector": "top_k", "k": 1, "candidates": ["m05", "m06"], "score": "abs_mean"}],
    "test": [{"kind": "welch_t", "for_each": 1, "column": "{selected}", "group": "arm",
              "levels": ["treatment", "control"]},
             {"kind": "one_sample_t", "for_each": 2, "column": "{selected}"}],
}


@functools.lru_cache(maxsize=1)
def real_audit() -> dict:
    plan = parse_plan(AUDIT_PLAN, source="audit-plan.toml")
    analysis = run_plan(plan, small_data())
    table = analysis.report(adjust="bonferroni")
    record = audit_record(analysis, table, plan=with_seed(plan.raw, analysis.seed), data_source="small.csv",
                          adjust="bonferroni")
    record = json.loads(dump_record(record))
    assert verify_audit(record, small_data()) == []
    return record


@fuzz_settings(1500)
@given(data=st.data())
def test_mutated_audit_records(data):
    rec = data.draw(mutated_records(real_audit()))
    try:
        validate_audit(rec, "fuzz.audit.json")
    except RecordFormatError as exc:
        assert str(exc).startswith("fuzz.audit.json")
        event("refused")
        return
    w = _quiet()
    try:
        diffs = verify_audit(rec, small_data(), source="fuzz.audit.json")
    except RecordFormatError as exc:  # a record without a plan reads, but is not verified
        assert rec["plan"] is None and str(exc).startswith("fuzz.audit.json: field 'plan'")
        event("refused by verify")
        return
    finally:
        w.__exit__(None, None, None)
    assert isinstance(diffs, list)
    event("verified: " + ("differences" if diffs else "no difference"))
    if not diffs:  # then nothing but the unverified metadata may have changed
        before, after = dict(_flat(real_audit())), dict(_flat(rec))
        changed = {p for p in set(before) | set(after) if before.get(p, "<none>") != after.get(p, "<none>")}
        assert changed <= {("created",), ("data", "source")}, changed


@fuzz_settings(400)
@given(cut=st.integers(0, 20_000), junk=st.text(max_size=3), depth=st.integers(0, 3000))
def test_mutated_audit_text(cut, junk, depth):
    from selective.accounting.ledger import load_json

    text = dump_record(real_audit())
    for candidate in (text[:cut] + junk + text[cut:], text[:cut], "[" * depth + text + "]" * depth):
        try:
            validate_audit(load_json(candidate, "fuzz.audit.json"), "fuzz.audit.json")
        except RecordFormatError as exc:
            assert str(exc).startswith("fuzz.audit.json")


def test_case_count_is_at_least_ten_thousand():
    """The suite's size, from the settings above (each test's max_examples)."""
    tests = [test_parsing_plans_raises_only_plan_errors, test_running_plans_raises_only_plan_errors,
             test_loading_plan_text_raises_only_plan_errors, test_arbitrary_json_as_a_ledger,
             test_mutated_ledger_records, test_mutated_ledger_text, test_mutated_audit_records,
             test_mutated_audit_text]
    total = sum(t._hypothesis_internal_use_settings.max_examples for t in tests)
    assert total >= 10_000


def test_audit_dates_and_non_finite_values_are_refused():
    rec = json.loads(json.dumps(real_audit()))
    rec["plan"]["select"][0]["label"] = dt.date(2020, 1, 1).isoformat()  # text is fine ...
    validate_audit(rec, "a.json")
    rec["alpha"] = "nan"  # ... a non-number where a number belongs is not
    with pytest.raises(RecordFormatError, match="a.json: field 'alpha'"):
        validate_audit(rec, "a.json")
    assert not math.isnan(real_audit()["alpha"])
