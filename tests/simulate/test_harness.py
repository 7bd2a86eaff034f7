"""The harness: reproducibility across execution modes, exact-null calibration, intervals, data
splitting, the CLI hook and bad input.

False-failure rate of each rate assertion: FALSE_FAILURE_RATE = 1e-6 (binomial tests in
``stats_helpers``).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_helpers import assert_rate_near

from selective.cli import add_validate_command
from selective.validation.harness import (
    PVALUE_COLUMNS,
    clopper_pearson,
    data_splitting,
    plot_rejection_curves,
    replication_rng,
    replication_seed,
    simulate,
    split_rows,
)
from selective.validation.scenarios import Preregistered, TopKNoise, get_scenario
from selective.validation.validate import validate

ALPHA = 0.05


class TestReplicationStreams:
    def test_replication_seed_is_the_spawned_child(self):
        children = np.random.SeedSequence(123).spawn(7)
        for i, child in enumerate(children):
            mine = replication_seed(123, i)
            assert mine.entropy == child.entropy and mine.spawn_key == child.spawn_key
            assert np.array_equal(replication_rng(123, i).random(4), np.random.default_rng(child).random(4))

    def test_nested_seed_sequence(self):
        parent = np.random.SeedSequence(5).spawn(3)[2]
        assert replication_seed(parent, 4).spawn_key == parent.spawn(5)[4].spawn_key


class TestSimulateNullCalibration:
    @pytest.mark.slow
    def test_simulate_every_column_at_alpha_without_selection_against_theory(self):
        """No selection, exact Student t: every column is uniform, so each rejects at exactly
        alpha. 20,000 replications; a column rejecting at 5.9% (or 4.2%) fails in most runs."""
        res = simulate(Preregistered(), n_reps=20_000, seed=20_261_201, progress=False)
        assert set(res.columns) == {"pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni",
                                    "pvalue_best", "pvalue_split"}
        for col in res.columns:
            row = res.rate(col)
            assert row.n_trials == 20_000
            assert_rate_near(row.n_events, row.n_trials, ALPHA)
            assert row.ci_method == "clopper-pearson"


class TestSimulateReproducibility:
    def test_same_seed_same_table_serial_and_two_jobs(self):
        sc = TopKNoise(n_features=20)
        a = simulate(sc, n_reps=600, seed=77, progress=False)
        b = simulate(sc, n_reps=600, seed=77, progress=False, n_jobs=2)
        c = simulate(sc, n_reps=600, seed=77, progress=False, chunk_size=37)
        pd.testing.assert_frame_equal(a.frame, b.frame)
        pd.testing.assert_frame_equal(a.frame, c.frame)
        assert a == b
        d = simulate(sc, n_reps=600, seed=78, progress=False)
        assert not a.frame.equals(d.frame)

    @pytest.mark.slow
    def test_same_seed_same_table_on_a_local_dask_cluster(self):
        pytest.importorskip("dask")
        distributed = pytest.importorskip("distributed")
        sc = TopKNoise(n_features=20)
        a = simulate(sc, n_reps=400, seed=91, progress=False)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            b = simulate(sc, n_reps=400, seed=91, progress=False, backend="dask", client=client)
            pipe = simulate(_two_row_pipeline, n_reps=60, seed=5, progress=False, backend="dask", client=client)
        pd.testing.assert_frame_equal(a.frame, b.frame)
        pd.testing.assert_frame_equal(pipe.frame, simulate(_two_row_pipeline, n_reps=60, seed=5, progress=False).frame)

    def test_vectorised_scenario_equals_the_analysis_pipeline(self):
        """The fast path and the real Analysis + TopK + TwoSampleTTest + data_splitting pipeline
        give the same p-values replication by replication, hence the same table."""
        sc = TopKNoise(n_features=12, n_obs=400)  # large enough that the report trusts the t p-value at gamma
        for i in range(4):
            fast = sc.replicate(replication_rng(3, i))
            slow = sc.pipeline(replication_rng(3, i))
            for col in ("pvalue_naive", "pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni", "pvalue_best",
                        "pvalue_split"):
                assert slow[col].to_numpy() == pytest.approx(fast[col].to_numpy(), rel=1e-9), col
        a = simulate(sc, n_reps=30, seed=4, progress=False)
        b = simulate(sc.pipeline, n_reps=30, seed=4, progress=False, n_tests=1, name=sc.name)
        pd.testing.assert_frame_equal(a.frame, b.frame)


def _two_row_pipeline(rng):
    """Two tests per replication: one null (uniform p), one real effect (p ~ Beta(0.2, 1))."""
    p = np.array([rng.random(), rng.beta(0.2, 1.0)])
    return pd.DataFrame({"pvalue_naive": p, "pvalue_best": np.minimum(1, 2 * p)}, index=["h0", "h1"])


class TestSimulatePipelines:
    def test_pipeline_with_two_tests_uses_korn_graubard_and_counts_truth(self):
        res = simulate(_two_row_pipeline, n_reps=4000, seed=8, nonnull={"h1"}, progress=False)
        t1 = res.rate("pvalue_naive")
        assert t1.n_trials == 8000 and t1.ci_method == "korn-graubard"
        # false rejections per slot: P[U <= a] / 2 per replication
        assert t1.ci_low < ALPHA / 2 < t1.ci_high or abs(t1.rate - ALPHA / 2) < 5 * t1.mc_se
        pw = res.rate("pvalue_naive", "power")
        assert pw.n_trials == 4000 and pw.ci_method == "clopper-pearson"
        assert abs(pw.rate - ALPHA**0.2) < 5 * pw.mc_se
        fw = res.rate("pvalue_naive", "fwer")
        assert fw.n_trials == 4000

    def test_is_null_column_overrides_nonnull(self):
        def pipe(rng):
            return pd.DataFrame({"pvalue_naive": [0.0], "is_null": [False]}, index=["h"])

        res = simulate(pipe, n_reps=10, seed=1, progress=False)
        assert res.rate("pvalue_naive").n_events == 0
        assert res.rate("pvalue_naive", "power").rate == 1.0

    def test_result_renders(self):
        res = simulate(Preregistered(), n_reps=200, seed=1, progress=False)
        md = res.to_markdown()
        assert "pvalue_naive" in md and "| column |" in md
        assert list(res.frame.columns)[:4] == ["scenario", "column", "measure", "alpha"]
        assert set(res.frame.measure) == {"type_one_error", "fwer", "power", "discovery_rate"}
        assert 0.05 in res.alphas


class TestClopperPearson:
    def test_clopper_pearson_against_scipy(self):
        for k, n in ((0, 10), (3, 10), (10, 10), (57, 1000)):
            ci = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
            assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)

    def test_clopper_pearson_iv(self):
        with pytest.raises(ValueError, match="`n_events`"):
            clopper_pearson(5, 3)
        with pytest.raises(ValueError, match="`confidence_level`"):
            clopper_pearson(1, 3, confidence_level=1.5)


class TestDataSplitting:
    def test_split_rows_is_a_stratified_partition(self):
        labels = np.array(["a"] * 30 + ["b"] * 70)
        s = split_rows(100, fraction=0.3, rng=1, stratify=labels)
        assert len(np.intersect1d(s.select, s.test)) == 0
        assert len(s.select) + len(s.test) == 100
        assert (labels[s.select] == "a").sum() == 9 and (labels[s.select] == "b").sum() == 21

    def test_data_splitting_tests_on_the_other_part(self):
        from selective.hypotheses import OneSampleTTest

        rng = np.random.default_rng(2)
        d = pd.DataFrame(rng.standard_normal((60, 3)), columns=["u", "v", "w"])
        out = data_splitting(d, select=lambda part: part.mean().idxmax(), fraction=0.5, rng=9,
                             tests=lambda col: [OneSampleTTest(column=col)])
        parts = split_rows(60, fraction=0.5, rng=np.random.default_rng(9))
        chosen = d.iloc[parts.select].mean().idxmax()
        expect = scipy.stats.ttest_1samp(d.iloc[parts.test][chosen], 0.0).pvalue
        assert out["pvalue_split"].iloc[0] == pytest.approx(expect, rel=1e-10)
        assert out["n_test_rows"].iloc[0] == 30

    def test_split_rows_iv(self):
        with pytest.raises(ValueError, match="`fraction`"):
            split_rows(10, fraction=1.0)
        with pytest.raises(ValueError, match="`n_rows`"):
            split_rows(1)


class TestSimulateIV:
    def test_simulate_iv(self):
        sc = Preregistered()
        with pytest.raises(ValueError, match="`n_reps`"):
            simulate(sc, n_reps=0)
        with pytest.raises(ValueError, match="`n_jobs`"):
            simulate(sc, n_reps=10, n_jobs=0)
        with pytest.raises(ValueError, match="`alpha`"):
            simulate(sc, n_reps=10, alpha=1.5)
        with pytest.raises(ValueError, match="`backend`"):
            simulate(sc, n_reps=10, backend="spark")
        with pytest.raises(ValueError, match="`columns`"):
            simulate(sc, n_reps=10, columns=["pvalue_magic"])
        with pytest.raises(TypeError, match="`target`"):
            simulate(42, n_reps=10)
        with pytest.raises(TypeError, match="`seed`"):
            simulate(sc, n_reps=10, seed=-1)
        with pytest.raises(TypeError, match="CorrectedTable or a pandas DataFrame"):
            simulate(lambda rng: 3, n_reps=2, progress=False)

    def test_unknown_scenario_name(self):
        with pytest.raises(ValueError, match="`scenario` must be one of .*topk_noise.*got 'nope'"):
            get_scenario("nope")
        with pytest.raises(ValueError, match="got 'nope'"):
            validate("nope")


class TestValidateCommand:
    def _parser(self):
        parser = argparse.ArgumentParser(prog="selective")
        add_validate_command(parser.add_subparsers(dest="command"))
        return parser

    def test_validate_command_prints_tables_and_plots(self, tmp_path, capsys):
        import matplotlib

        matplotlib.use("Agg")
        args = self._parser().parse_args(["validate", "--scenario", "preregistered", "--reps", "300", "--quiet",
                                          "--plot", str(tmp_path / "v.png"), "--seed", "3", "--jobs", "1"])
        assert args.func(args) == 0
        out = capsys.readouterr().out
        assert "## preregistered (300 replications" in out and "pvalue_best" in out
        assert (tmp_path / "v.png").stat().st_size > 0

    def test_validate_command_iv(self, capsys):
        parser = self._parser()
        for bad in (["--reps", "0"], ["--jobs", "0"], ["--alpha", "2"], ["--reps", "x"]):
            with pytest.raises(SystemExit):
                parser.parse_args(["validate", *bad])
        args = parser.parse_args(["validate", "--scenario", "nope", "--quiet"])
        with pytest.raises(ValueError, match="`scenario` must be one of"):
            args.func(args)


def test_plot_rejection_curves_has_alpha_line_and_bands():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = simulate(TopKNoise(n_features=10), n_reps=300, seed=1, progress=False)
    ax = plot_rejection_curves(res)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "alpha" in labels and "naive" in labels and "best valid" in labels
    assert len(ax.collections) == len(res.columns)  # one band per column
    plt.close("all")
    assert set(res.columns) <= set(PVALUE_COLUMNS)
