"""Bundled datasets (shipped in ``data/``, installed as ``selective._data``) and their generators.

Every bundled simulated dataset is the exact output of a generator in this module with a fixed
seed, so its provenance can be checked: ``simulate_biomarkers()`` reproduces
``biomarkers.csv`` to the digit. The one real dataset, ``anes96.csv`` (public domain), is a
copy of the subset of the 1996 American National Election Study that statsmodels ships; the
test suite checks it against statsmodels' copy.
"""

from __future__ import annotations

import io
from importlib import resources

import numpy as np
import pandas as pd

from ._validation import check_int, check_real, check_rng

__all__ = ["load_biomarkers", "simulate_biomarkers", "load_anes96", "bundled_path", "BIOMARKERS_SEED",
           "BIOMARKERS_TRUE_EFFECTS", "ANES96_COLUMNS"]

#: Seed of the bundled ``biomarkers.csv``.
BIOMARKERS_SEED = 20261128
#: The only biomarker whose mean differs between arms in ``biomarkers.csv`` (in SD units).
BIOMARKERS_TRUE_EFFECTS = {"m07": 0.5}
_DECIMALS = 4
#: Columns of ``anes96.csv``, in order (see ``data/README.md`` for their codes).
ANES96_COLUMNS = ("popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "age", "educ", "income", "vote")


def simulate_biomarkers(*, n_rows: int = 600, n_biomarkers: int = 60, effects: dict[str, float] | None = None,
                        rng=BIOMARKERS_SEED) -> pd.DataFrame:
    """A simulated two-arm study with many biomarkers, only a few of which respond to treatment.

    Columns: ``id``, ``arm`` ("treatment" / "control", balanced), ``age`` (40-75), ``sex``
    ("F" / "M"), and ``m01 .. m<k>``: standard normal biomarkers, shifted by ``effects[name]``
    standard deviations in the treatment arm. Values are rounded to 4 decimals.

    Parameters
    ----------
    n_rows : int
        Number of participants (even), default 600.
    n_biomarkers : int
        Number of biomarker columns, default 60.
    effects : dict, optional
        Mean shift in the treatment arm per biomarker (default :data:`BIOMARKERS_TRUE_EFFECTS`).
    rng : Generator or int
        Random source; the default reproduces the bundled file.
    """
    n = check_int("n_rows", n_rows, low=4)
    if n % 2:
        raise ValueError(f"`n_rows` must be even (balanced arms); got {n}.")
    k = check_int("n_biomarkers", n_biomarkers, low=1, high=999)
    effects = dict(BIOMARKERS_TRUE_EFFECTS if effects is None else effects)
    names = [f"m{j + 1:02d}" for j in range(k)]
    for name, v in effects.items():
        if name not in names:
            raise ValueError(f"`effects` names {name!r}, which is not among the biomarkers m01..m{k:02d}.")
        check_real(f"effects[{name!r}]", v)
    g = check_rng(rng)
    arm = np.array(["treatment"] * (n // 2) + ["control"] * (n // 2))
    g.shuffle(arm)
    age = g.integers(40, 76, size=n)
    sex = np.where(g.random(n) < 0.5, "F", "M")
    x = g.standard_normal((n, k))
    treated = arm == "treatment"
    for name, v in effects.items():
        x[treated, names.index(name)] += v
    frame = pd.DataFrame({"id": np.arange(1, n + 1), "arm": arm, "age": age, "sex": sex})
    frame = pd.concat([frame, pd.DataFrame(np.round(x, _DECIMALS), columns=names)], axis=1)
    return frame


def load_biomarkers() -> pd.DataFrame:
    """The bundled ``biomarkers.csv`` (see ``data/README.md``): 600 participants, 60 biomarkers,
    one real treatment effect (``m07``, 0.5 SD)."""
    text = resources.files("selective._data").joinpath("biomarkers.csv").read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text))


def load_anes96() -> pd.DataFrame:
    """The bundled ``anes96.csv`` (see ``data/README.md``): 944 respondents of the 1996 American
    National Election Study, 10 integer-coded variables (public domain).

    Columns :data:`ANES96_COLUMNS`: ``popul`` (population of the census place, thousands),
    ``TVnews`` (days a week watching TV news), ``selfLR``, ``ClinLR``, ``DoleLR`` (placement
    of oneself, Clinton and Dole from 1, extremely liberal, to 7, extremely conservative),
    ``PID`` (party identification, 0 strong Democrat to 6 strong Republican), ``age``,
    ``educ`` (1 to 7), ``income`` (household income bracket, 1 to 24) and ``vote`` (expected
    vote: 0 Clinton, 1 Dole). A plan file for it ships as ``anes96_plan.toml``.

    Returns
    -------
    pandas.DataFrame
        944 rows, integer columns.
    """
    text = resources.files("selective._data").joinpath("anes96.csv").read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text))


def bundled_path(name: str):
    """The path of a bundled file (a dataset or a plan) for use outside Python.

    Parameters
    ----------
    name : str
        A file name in ``data/``, such as ``"anes96.csv"`` or ``"anes96_plan.toml"``.

    Returns
    -------
    importlib.resources.abc.Traversable
        Usable with ``open`` and ``read_text``; a real file path in a normal installation.
    """
    entry = resources.files("selective._data").joinpath(name)
    if not entry.is_file():
        names = sorted(p.name for p in resources.files("selective._data").iterdir()
                       if p.name.endswith((".csv", ".toml")))
        raise ValueError(f"`name` must be a bundled file, one of {names}; got {name!r}.")
    return entry
