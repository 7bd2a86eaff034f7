"""The holdout-reuse experiment (THEORY.md 6.1, 6.2) at reduced size.

Monte-Carlo margins: with n = 2,000 each accuracy has standard deviation at most 0.0112 per
replication, so the averages over 4 replications have standard deviation 0.0056 and the
tolerances below (>= 0.03) are more than 5 standard deviations wide: a correct implementation
fails one of these checks with probability below 1e-6 each. The fixed seeds make the run
deterministic anyway.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from selective.selectors.thresholdout import ThresholdoutExperiment
from selective.validation.experiments import (
    holdout_reuse_experiment,
    holdout_reuse_summary,
    plot_holdout_reuse,
    thresholdout_gaussian_answers,
)


def test_vectorised_thresholdout_matches_the_selector_class():
    rng = np.random.default_rng(0)
    train = pd.DataFrame(rng.normal(size=(300, 40)))
    hold = pd.DataFrame(rng.normal(size=(300, 40)) + np.linspace(0, 0.3, 40))
    thr = ThresholdoutExperiment(train, hold, threshold=0.04, sigma=0.01, rng=np.random.default_rng(9))
    by_class = [thr.query(lambda d, j=j: (d[j] > 0).astype(float)) for j in range(40)]
    t = (train > 0).mean().to_numpy()
    h = (hold > 0).mean().to_numpy()
    vec = thresholdout_gaussian_answers(t, h, threshold=0.04, sigma=0.01, rng=np.random.default_rng(9))
    np.testing.assert_allclose(vec, by_class, rtol=0, atol=1e-12)
    assert (vec != t).any() and (vec == t).any()  # some queries went over the threshold, some not


@pytest.fixture(scope="module")
def null_run():
    return holdout_reuse_experiment(n=2000, d=2000, k_grid=(10, 50, 100), n_reps=4, rng=20261122)


def summary(frame):
    return frame.groupby(["method", "split", "k"]).accuracy.mean()


def test_standard_holdout_overfits_and_thresholdout_does_not(null_run):
    s = summary(null_run)
    for method in ("standard holdout", "thresholdout"):
        for k in (10, 50, 100):
            assert abs(s[method, "fresh", k] - 0.5) < 0.03  # no classifier beats 50%
    assert s["standard holdout", "holdout", 100] > s["standard holdout", "fresh", 100] + 0.08
    assert s["standard holdout", "holdout", 100] > 0.58
    for k in (10, 50, 100):
        assert abs(s["thresholdout", "holdout", k] - s["thresholdout", "fresh", k]) < 0.06


def test_tidy_frame_and_reproducibility(null_run):
    assert list(null_run.columns) == ["rep", "method", "k", "split", "accuracy"]
    assert len(null_run) == 4 * 2 * 3 * 3
    again = holdout_reuse_experiment(n=2000, d=2000, k_grid=(10, 50, 100), n_reps=4, rng=20261122)
    pd.testing.assert_frame_equal(null_run, again)


def test_signal_variant_is_found_by_both():
    f = holdout_reuse_experiment(n=2000, d=2000, k_grid=(10, 20), n_reps=2, n_informative=20, rng=5)
    s = summary(f)
    for method in ("standard holdout", "thresholdout"):
        assert s[method, "fresh", 10] > 0.56


def test_plot(null_run):
    import matplotlib

    matplotlib.use("Agg")
    axes = plot_holdout_reuse(null_run)
    assert len(axes) == 2 and axes[0].get_ylabel() == "accuracy"


def test_experiment_iv():
    with pytest.raises(ValueError, match="`n_reps` must be an integer >= 1"):
        holdout_reuse_experiment(n_reps=0)
    with pytest.raises(ValueError, match="`sigma`"):
        holdout_reuse_experiment(n=10, d=10, n_reps=1, sigma=0)
    with pytest.raises(ValueError, match="`n_informative`"):
        holdout_reuse_experiment(n=10, d=10, n_reps=1, n_informative=11)


def test_experiment_command(tmp_path, capsys):
    from selective.cli import main

    code = main(["experiment", "holdout-reuse", "--n", "500", "--d", "400", "--reps", "2", "--k", "5,20",
                 "--out", str(tmp_path / "r.csv"), "--plot", str(tmp_path / "f.png"), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "standard holdout" in out and "thresholdout" in out
    assert len(pd.read_csv(tmp_path / "r.csv")) == 2 * 2 * 2 * 3
    assert (tmp_path / "f.png").stat().st_size > 0


def test_summary_has_flat_readable_headers(null_run):
    table = holdout_reuse_summary(null_run)
    assert list(table.columns) == ["method", "k", "training mean", "training sd", "holdout mean", "holdout sd",
                                   "fresh mean", "fresh sd"]
    assert not isinstance(table.columns, pd.MultiIndex) and all(isinstance(c, str) for c in table.columns)
    markdown = table.to_markdown(index=False)
    assert "(" not in markdown.splitlines()[0]  # no tuple headers such as ('mean', 'fresh')
    # the numbers are the group means and standard deviations of the tidy frame
    sub = null_run[(null_run.method == "thresholdout") & (null_run.k == 50) & (null_run.split == "holdout")]
    row = table[(table.method == "thresholdout") & (table.k == 50)].iloc[0]
    assert row["holdout mean"] == round(sub.accuracy.mean(), 4)
    assert row["holdout sd"] == round(sub.accuracy.std(), 4)
    assert len(table) == 2 * 3  # two methods, three k
    with pytest.raises(ValueError, match="`frame` must be the tidy frame of holdout_reuse_experiment"):
        holdout_reuse_summary(null_run.drop(columns="split"))


def test_same_table_for_any_number_of_jobs(null_run):
    # replication r always draws from the r-th spawned stream, and the frame is assembled in order
    two = holdout_reuse_experiment(n=2000, d=2000, k_grid=(10, 50, 100), n_reps=4, rng=20261122, n_jobs=2)
    pd.testing.assert_frame_equal(null_run, two)
    with pytest.raises(ValueError, match="`n_jobs` must be an integer >= 1"):
        holdout_reuse_experiment(n=10, d=10, n_reps=1, n_jobs=0)


def test_experiment_command_jobs(capsys):
    from selective.cli import main

    args = ["experiment", "holdout-reuse", "--n", "300", "--d", "200", "--reps", "3", "--k", "5,20", "--quiet"]
    assert main(args) == 0
    one = capsys.readouterr().out
    assert main([*args, "--jobs", "2"]) == 0
    assert capsys.readouterr().out == one
    with pytest.raises(SystemExit):
        main([*args, "--jobs", "0"])
    assert "--jobs" in capsys.readouterr().err
