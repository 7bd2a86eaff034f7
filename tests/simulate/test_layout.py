"""The layout of the validation layer: the scenarios and the harness do not import each other,
the library keeps its order (``validate`` seeds by position), and every name of the 0.1
modules ``selective.simulate`` and ``selective.scenarios`` still resolves.

No randomness beyond fixed seeds: every assertion here is exact.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from selective import cli
from selective.validation import harness
from selective.validation import validate as validate_module
from selective.validation.outcomes import replication_seed
from selective.validation.scenarios import SCENARIOS, get_scenario, scenario_names

ROOT = Path(__file__).resolve().parents[2]

# the public names of the 0.1 modules, which the deprecated aliases must keep exposing
SIMULATE_NAMES = ("PVALUE_COLUMNS", "MEASURES", "FRAME_COLUMNS", "DEFAULT_ALPHAS", "Outcomes", "RowSplit",
                  "SimulationResult", "simulate", "replication_seed", "replication_rng", "split_rows",
                  "data_splitting", "clopper_pearson", "plot_rejection_curves", "plot_validation", "validate",
                  "add_validate_command")
SCENARIO_NAMES = ("Scenario", "Preregistered", "TopKNoise", "SparseVectorThreshold", "HoldoutReuse",
                  "FreedmanScreening", "LassoFixedLambda", "ForwardStepwisePath", "DPThenDescriptionLength",
                  "FreedmanSummary", "freedman_paradox", "SCENARIOS", "get_scenario", "scenario_names")


def _loaded_after_import(module: str) -> set[str]:
    """The selective.validation modules loaded by importing ``module`` in a fresh interpreter."""
    code = (f"import sys, {module}; "
            "print('\\n'.join(m for m in sys.modules if m.startswith('selective.validation')))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return set(proc.stdout.split())


def test_the_scenarios_never_load_the_harness_or_validate():
    loaded = _loaded_after_import("selective.validation.scenarios")
    assert "selective.validation.scenarios.registry" in loaded  # the probe sees the package's modules
    assert not loaded & {"selective.validation.harness", "selective.validation.validate"}, loaded


def test_the_harness_never_loads_the_scenarios():
    loaded = _loaded_after_import("selective.validation.harness")
    assert "selective.validation.outcomes" in loaded
    assert not any(m.startswith("selective.validation.scenarios") for m in loaded), loaded
    assert "selective.validation.validate" not in loaded


def test_the_library_keeps_its_order():
    """validate() seeds scenario i by its position i: new scenarios go at the end."""
    assert list(SCENARIOS) == ["preregistered", "topk_noise", "sparse_vector_threshold", "holdout_reuse", "freedman",
                               "lasso_support", "forward_stepwise", "dp_then_dl", "topk_signal",
                               "adaptive_family", "repeated_measures", "noisy_topk_thm20",
                               "trusted_two_proportion_rare", "trusted_welch_skewed",
                               "trusted_studentised_mean_skewed", "trusted_spearman_small_n",
                               "trusted_poisson_exposure", "unknown_sigma_stepwise", "noisy_topk_thm20_eps0.3",
                               "noisy_topk_thm20_eps2", "trusted_t_mean_skewed", "trusted_student_skewed",
                               "sharp_topk_winners_fission", "sharp_topk_signal", "sharp_noisy_topk_randomized",
                               "sharp_noisy_topk_signal", "preregistered_signal",
                               "sparse_vector_threshold_signal", "holdout_reuse_signal", "freedman_signal",
                               "lasso_support_signal", "forward_stepwise_signal", "dp_then_dl_signal",
                               "adaptive_family_signal", "repeated_measures_signal", "noisy_topk_thm20_signal",
                               "unknown_sigma_stepwise_signal", "trusted_welch_skewed_signal",
                               "trusted_two_proportion_rare_signal", "trusted_poisson_exposure_signal",
                               "trusted_spearman_small_n_signal", "trusted_student_skewed_signal",
                               "sharp_signed_noisy_topk", "sharp_signed_noisy_topk_signal",
                               "thinning_binomial_counts", "thinning_binomial_counts_signal"]
    assert scenario_names() == tuple(SCENARIOS)
    assert all(get_scenario(name) is sc for name, sc in SCENARIOS.items())


def test_validate_seeds_each_scenario_by_its_position():
    alone = validate_module.validate("holdout_reuse", n_reps=40, seed=9, progress=False)["holdout_reuse"]
    both = validate_module.validate(["preregistered", "holdout_reuse"], n_reps=40, seed=9, progress=False)
    direct = harness.simulate(get_scenario("holdout_reuse"), n_reps=40, seed=replication_seed(9, 3), progress=False)
    pd.testing.assert_frame_equal(alone.frame, direct.frame)
    pd.testing.assert_frame_equal(both["holdout_reuse"].frame, direct.frame)
    other = harness.simulate(get_scenario("holdout_reuse"), n_reps=40, seed=replication_seed(9, 2), progress=False)
    assert not alone.frame.equals(other.frame)  # the position matters


@pytest.mark.parametrize(("name", "home"), [("validate", validate_module), ("add_validate_command", cli)])
def test_names_moved_out_of_the_harness_resolve_with_a_deprecation_warning(name, home):
    harness.__dict__.pop(name, None)
    with pytest.warns(DeprecationWarning, match=f"selective.validation.harness.{name}` has moved"):
        value = getattr(harness, name)
    assert value is getattr(home, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        harness.no_such_name  # noqa: B018


@pytest.mark.parametrize(("old", "names"), [("selective.simulate", SIMULATE_NAMES),
                                             ("selective.scenarios", SCENARIO_NAMES)])
def test_the_0_1_aliases_expose_every_name_they_had(old, names):
    sys.modules.pop(old, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(old)
        missing = [n for n in names if not hasattr(module, n)]
    sys.modules.pop(old, None)
    assert not missing, f"{old} lost {missing}"


def test_validate_help_lists_every_scenario(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["validate", "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--scenario NAME" in out
    assert ", ".join(SCENARIOS) in out
