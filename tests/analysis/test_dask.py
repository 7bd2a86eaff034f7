"""Analysis on a Dask DataFrame (and on Parquet / CSV paths) on a two-worker LocalCluster:
same selections, certificates, ledger and table as on the pandas frame; the fingerprint; the
limit on collected columns."""

import json

import numpy as np
import pandas as pd
import pytest

from selective import Analysis, NoisyTopK, TopK
from selective.accounting.certificates import DescriptionLength
from selective.analysis.audit import audit_record, dump_record, validate_audit
from selective.analysis.fingerprint import data_fingerprint, data_fingerprint_v2
from selective.analysis.sources import CollectTooLargeError, spec_columns
from selective.analysis.verify import verify_audit
from selective.datasets import load_biomarkers
from selective.hypotheses import TwoSampleTTest
from selective.selectors import FiniteChoice, SignedClippedMeanScores, TwoGroupScores

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")

DATA = load_biomarkers()
CANDS = tuple(c for c in DATA.columns if c.startswith("m"))
LEVELS = ("treatment", "control")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def _run(data, seed=11, report=True):
    a = Analysis(data, rng=seed, n_candidates=60)
    dp = NoisyTopK(k=3, epsilon=1.0, sensitivity=2 * 3.0 / len(DATA), candidates=CANDS, name="signed clipped mean",
                   score=SignedClippedMeanScores(CANDS, "arm", "treatment", clip=3.0, absolute=True))
    dl = TopK(k=2, candidates=CANDS, name="|Welch t|", score=TwoGroupScores(CANDS, "arm", LEVELS))
    a.preregister(dp, dl)
    chosen = a.select(dp).value + a.select(dl).value
    for c in chosen:
        a.test(TwoSampleTTest(column=c, group="arm", levels=LEVELS, usevar="unequal"))
    return a, (a.report() if report else None)


def _same(a, b):
    (pa, ta), (pb, tb) = a, b
    assert [s.value for s in pa.selections] == [s.value for s in pb.selections]
    assert [s.certificate for s in pa.selections] == [s.certificate for s in pb.selections]
    assert pa.ledger.to_json() == pb.ledger.to_json()
    assert [r.pvalue_naive for r in pa.results] == [r.pvalue_naive for r in pb.results]
    if ta is not None:
        pd.testing.assert_frame_equal(ta.frame, tb.frame, check_exact=True)
        assert ta.to_markdown() == tb.to_markdown()


@pytest.mark.parametrize("npartitions", [1, 7])
def test_same_selections_and_table_as_pandas(client, npartitions):
    ddf = dd.from_pandas(DATA, npartitions=npartitions)
    full = npartitions > 1  # the whole table and its audit once (the report reruns permutation tests)
    a, b = _run(DATA, report=full), _run(ddf, report=full)
    _same(a, b)
    if full:  # the audit records too: same fingerprint, rows, ledger, selections, table
        ra, rb = (json.loads(dump_record(audit_record(p, t, created="x"))) for p, t in (a, b))
        assert ra == rb and ra["data"]["n_rows"] == len(DATA)
    for seed in (12, 13, 14):  # the noise is drawn here from the same stream: the same DP choice every time
        _same(_run(DATA, seed, report=False), _run(ddf, seed, report=False))
    assert Analysis(ddf).is_dask and Analysis(ddf).n_rows == len(DATA)


def test_parquet_and_csv_paths_are_read_lazily(client, tmp_path):
    DATA.to_parquet(tmp_path / "b.parquet")
    DATA.to_csv(tmp_path / "b.csv", index=False)
    ref = _run(pd.read_csv(tmp_path / "b.csv"), report=False)
    for path in (tmp_path / "b.parquet", str(tmp_path / "b.csv")):
        _same(ref, _run(path, report=False))


def test_fingerprint_is_the_same_in_memory_and_on_any_partitions(client, tmp_path):
    fp = data_fingerprint(DATA)
    assert fp == data_fingerprint(DATA, chunk_bytes=40)
    for n in (1, 3, 16):
        assert data_fingerprint(dd.from_pandas(DATA, npartitions=n)) == fp
    DATA.to_parquet(tmp_path / "b.parquet")
    assert data_fingerprint(tmp_path / "b.parquet") == fp
    changed = DATA.copy()
    changed.loc[599, "m07"] = np.nextafter(changed.loc[599, "m07"], np.inf)  # one ulp in the last row
    assert data_fingerprint(dd.from_pandas(changed, npartitions=4)) != fp
    swapped = DATA.iloc[[1, 0, *range(2, len(DATA))]].reset_index(drop=True)  # from_pandas sorts by the index
    assert data_fingerprint(dd.from_pandas(swapped, npartitions=4)) != fp
    assert data_fingerprint_v2(DATA) != fp  # the older format is a different stream


def test_verify_reads_a_version_2_audit_in_memory_only():
    # an audit of version 2 (whole-stream fingerprint) still verifies its fingerprint on a pandas frame
    plan = {"analysis": {"alpha": 0.05, "seed": 3, "n_candidates": 60},
            "select": [{"selector": "top_k", "k": 2, "candidates_like": "m*", "score": "welch_t", "group": "arm",
                        "levels": list(LEVELS)}],
            "test": [{"kind": "welch_t", "for_each": 1, "column": "{selected}", "group": "arm",
                      "levels": list(LEVELS)}]}
    from selective.analysis.audit import plan_sha256
    from selective.analysis.plan import parse_plan, run_plan

    a = run_plan(parse_plan(plan, source="plan"), DATA)
    record = json.loads(dump_record(audit_record(a, a.report(), plan=plan)))
    record["plan_sha256"] = plan_sha256(plan)
    assert verify_audit(validate_audit(record), DATA) == []
    old = dict(record, version=2, data=dict(record["data"], sha256=data_fingerprint_v2(DATA)))
    assert verify_audit(validate_audit(old), DATA) == []
    bad = dict(old, data=dict(old["data"], sha256=data_fingerprint(DATA)))
    assert any("fingerprint differs" in d for d in verify_audit(bad, DATA))
    out = verify_audit(old, dd.from_pandas(DATA, npartitions=2))
    assert len(out) == 1 and "version 2" in out[0] and "in memory" in out[0]


def test_collected_columns_respect_the_limit(client):
    ddf = dd.from_pandas(DATA, npartitions=3)
    a = Analysis(ddf, rng=1, max_collect_bytes=600 * 8 + 600 * 64)  # one float column and one text column
    spec = TwoSampleTTest(column="m07", group="arm", levels=LEVELS, usevar="unequal")
    assert spec_columns(spec, ddf.columns) == ["arm", "m07"]
    assert a.test(spec).pvalue_naive == spec.run(DATA).pvalue_naive
    with pytest.raises(CollectTooLargeError, match=r"\['m22'\]: 600 rows, about 0\.0 MiB .* above "
                                                   r"`max_collect_bytes` = 0\.0 MiB\. Raise it"):
        a.test(TwoSampleTTest(column="m22", group="arm", levels=LEVELS))
    assert len(a.results) == 1


def test_other_selectors_are_refused_before_the_data_are_touched(client):
    a = Analysis(dd.from_pandas(DATA, npartitions=2), rng=1)
    before = a.ledger.to_json()
    with pytest.raises(TypeError, match="on a Dask DataFrame, `selector` must be one of TopK, NoisyTopK, "
                                        "OrderedTopK, SparseVectorScreen .* got FiniteChoice. Nothing was recorded"):
        a.select(FiniteChoice(("a", "b"), lambda d: "a"))
    assert a.ledger.to_json() == before and not a.void_reasons


def test_a_lazy_dask_score_is_computed(client):
    ddf = dd.from_pandas(DATA, npartitions=4)
    a = Analysis(ddf, rng=1)
    sel = a.select(TopK(k=2, candidates=CANDS, score=lambda d: d[list(CANDS)].mean().abs()))
    ref = Analysis(DATA, rng=1).select(TopK(k=2, candidates=CANDS, score=lambda d: d[list(CANDS)].mean().abs()))
    assert sel.value == ref.value and sel.certificate == DescriptionLength(1770)


def test_units_on_dask(client):
    d = DATA.assign(site=np.arange(len(DATA)) // 3)
    a = Analysis(dd.from_pandas(d, npartitions=4), units="site")
    assert (a.n_units, a.group_size) == (200, 3)


def test_sources_iv(tmp_path):
    with pytest.raises(ValueError, match="`data` names the path .*nope.parquet.*, which does not exist"):
        Analysis(tmp_path / "nope.parquet")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="`data` must be a Parquet path .* got .*x.json"):
        Analysis(tmp_path / "x.json")
    with pytest.raises(TypeError, match="`data` must be a pandas DataFrame, a Dask DataFrame or the path"):
        Analysis([1, 2, 3])
    with pytest.raises(ValueError, match="`max_collect_bytes` must be"):
        Analysis(DATA, max_collect_bytes=-1)


def test_the_package_imports_and_runs_without_dask():
    import subprocess
    import sys

    code = ("import sys; sys.modules['dask'] = None\n"  # makes `import dask` raise ImportError
            "from selective import Analysis, TopK\n"
            "from selective.datasets import load_biomarkers\n"
            "from selective.selectors import ClippedMeanScores\n"
            "from selective.analysis.fingerprint import data_fingerprint\n"
            "d = load_biomarkers(); c = [x for x in d.columns if x.startswith('m')]\n"
            "print(Analysis(d, rng=1).select(TopK(k=1, candidates=c, score=ClippedMeanScores(c))).value,"
            " data_fingerprint(d)[:8])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("(") and data_fingerprint(DATA)[:8] in out.stdout
