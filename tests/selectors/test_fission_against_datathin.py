"""Fission and thinning against R datathin, the reference implementation, through the rpy2 bridge.

Needs R, rpy2 and the R package datathin (vendored as a source package in
``third_party/datathin``, installed by ``.ci/run``); skips with the install command otherwise.

Both implementations are randomized, so they are compared in law. Each row's value X_i is
repeated in ``B`` columns, so every column is an independent draw of the parts given X_i. For each
decomposition and each implementation the test checks:

* the exact identities (the parts add up to X; for Gaussian fission, ``g - X = -(f - X) / tau^2``);
* the law of the exploration part given X against the stated one (chi-square over all rows, or a
  Kolmogorov-Smirnov test of the standardised Gaussian noise);
* the two implementations against each other (chi-square homogeneity per row, summed; KS two-sample).

Each comparison rejects at 1e-6 with fixed seeds, so a correct implementation fails one with
probability about 1e-6 per check (deterministic given the seeds). ``B`` is large enough that the
errors these checks guard against fail them: for example, giving the exploration the share
``1 - epsilon`` (0.7 instead of 0.3) or a noise scale 10% off.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from selective.interop.rbridge import r_eval, why_r_unavailable
from selective.selectors.fission import binomial_thinning, gaussian_fission, poisson_thinning

_WHY = why_r_unavailable("datathin")
REASON = (None if _WHY is None else
          f"comparison with R datathin skipped: {_WHY} The package is vendored: "
          "R CMD INSTALL -l .r-lib third_party/datathin/datathin_1.0.tar.gz, then R_LIBS=.r-lib")
pytestmark = [pytest.mark.needs_r, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

LEVEL = 1e-6
B = 4000


def _datathin(x: np.ndarray, family: str, epsilon: tuple[float, float], arg: float | None = None,
              *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """R ``datathin(X, family, epsilon = epsilon, arg = arg)`` with X holding ``x`` in each of B
    columns; the two folds, shape (B, n)."""
    code = ("set.seed(seed); X <- matrix(x, nrow = length(x), ncol = B); "
            "out <- if (is.null(arg)) datathin::datathin(X, family = family, epsilon = eps) "
            "else datathin::datathin(X, family = family, epsilon = eps, arg = arg); "
            "stopifnot(identical(dim(out), c(length(x), B, 2L))); c(out)")
    out = np.asarray(r_eval(code, x=x.astype(float), B=B, family=family, eps=np.asarray(epsilon, dtype=float),
                            arg=arg, seed=seed), dtype=float)
    folds = out.reshape((x.size, B, 2), order="F")
    return folds[:, :, 0].T, folds[:, :, 1].T


def _chisq_fit(draws: np.ndarray, pmfs: list) -> float:
    """One chi-square goodness-of-fit p-value over all rows: draws (B, n) of integers, pmfs[i] the
    stated law of row i's draws; cells with expected count below 5 are pooled per row."""
    stat, df = 0.0, 0
    for i, pmf in enumerate(pmfs):
        k = np.arange(int(draws[:, i].max()) + 1)
        expected = pmf(k) * draws.shape[0]
        observed = np.bincount(draws[:, i].astype(np.int64), minlength=k.size).astype(float)
        keep = expected >= 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], draws.shape[0] - expected[keep].sum())
        if exp[-1] < 5:  # nothing left to pool: the kept cells carry the whole law
            obs, exp = obs[:-1], exp[:-1]
        if obs.size < 2:
            continue
        stat += float(((obs - exp) ** 2 / exp).sum())
        df += obs.size - 1
    assert df > 0
    return float(scipy.stats.chi2.sf(stat, df))


def _chisq_same(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square homogeneity of two samples of integer draws, summed over rows (columns of a, b)."""
    stat, df = 0.0, 0
    for i in range(a.shape[1]):
        values = np.union1d(a[:, i], b[:, i])
        if values.size < 2:
            continue
        table = np.array([[np.sum(s[:, i] == v) for v in values] for s in (a, b)], dtype=float)
        # pool the sparse cells (expected count below 5 in either sample) into one
        sparse = table.sum(axis=0) < 10
        table = np.column_stack([table[:, ~sparse], table[:, sparse].sum(axis=1)]) if sparse.any() else table
        table = table[:, table.sum(axis=0) > 0]
        if table.shape[1] < 2:
            continue
        res = scipy.stats.chi2_contingency(table, correction=False)
        stat, df = stat + float(res.statistic), df + int(res.dof)
    assert df > 0
    return float(scipy.stats.chi2.sf(stat, df))


def test_poisson_thinning_matches_datathin_in_law():
    x = np.array([0, 1, 2, 3, 5, 8, 13, 40])
    eps = 0.3
    r_explore, r_confirm = _datathin(x, "poisson", (eps, 1 - eps), seed=11)
    ours = poisson_thinning(np.tile(x, B), epsilon=eps, rng=12)
    py_explore, py_confirm = ours.explore.reshape(B, x.size), ours.confirm.reshape(B, x.size)
    for explore, confirm in ((r_explore, r_confirm), (py_explore, py_confirm)):
        np.testing.assert_array_equal(explore + confirm, np.broadcast_to(x, explore.shape))
    laws = [lambda k, m=m: scipy.stats.binom.pmf(k, m, eps) for m in x]
    assert _chisq_fit(r_explore, laws) > LEVEL
    assert _chisq_fit(py_explore, laws) > LEVEL
    assert _chisq_same(r_explore, py_explore) > LEVEL
    # the check has power: the share 1 - epsilon given to the exploration fails it
    assert _chisq_same(r_explore, py_confirm) < LEVEL


def test_binomial_thinning_matches_datathin_in_law():
    trials, eps = 10, 0.3  # 3 of the 10 trials to the exploration, in both implementations
    x = np.array([0, 1, 2, 4, 5, 7, 9, 10])
    r_explore, r_confirm = _datathin(x, "binomial", (eps, 1 - eps), arg=float(trials), seed=21)
    ours = binomial_thinning(np.tile(x, B), np.full(x.size * B, trials), epsilon=eps, rng=22)
    py_explore, py_confirm = ours.explore.reshape(B, x.size), ours.confirm.reshape(B, x.size)
    np.testing.assert_array_equal(ours.confirm_scale, trials - 3)
    for explore, confirm in ((r_explore, r_confirm), (py_explore, py_confirm)):
        np.testing.assert_array_equal(explore + confirm, np.broadcast_to(x, explore.shape))
    # successes among the 3 exploration trials, drawn without replacement from the 10
    laws = [lambda k, s=s: scipy.stats.hypergeom.pmf(k, trials, s, 3) for s in x]
    assert _chisq_fit(r_explore, laws) > LEVEL
    assert _chisq_fit(py_explore, laws) > LEVEL
    assert _chisq_same(r_explore, py_explore) > LEVEL


def test_gaussian_fission_is_datathin_normal_thinning_rescaled():
    """Gaussian fission with tau is datathin's normal thinning with epsilon = 1 / (1 + tau^2),
    rescaled: f = X1 / epsilon, g = X2 / (1 - epsilon) (docs/THEORY.md, fission)."""
    sigma, tau = 2.0, 0.5
    eps = 1.0 / (1.0 + tau**2)
    x = np.array([-3.0, 0.0, 0.5, 7.25])
    x1, x2 = _datathin(x, "normal", (eps, 1 - eps), arg=sigma**2, seed=31)  # arg: the variance
    np.testing.assert_allclose(x1 + x2, np.broadcast_to(x, x1.shape), rtol=0, atol=1e-12)
    f_r, g_r = x1 / eps, x2 / (1 - eps)
    ours = gaussian_fission(np.tile(x, B), sigma=sigma, tau=tau, rng=32)
    f_py, g_py = ours.explore.reshape(B, x.size), ours.confirm.reshape(B, x.size)
    np.testing.assert_allclose(ours.confirm_scale, sigma * np.sqrt(1 + tau**-2))
    noise = {}
    for name, f, g in (("datathin", f_r, g_r), ("selective", f_py, g_py)):
        # the same exact relation between the parts: both are X plus one normal draw, scaled
        np.testing.assert_allclose(g - x, -(f - x) / tau**2, rtol=0, atol=1e-9)
        noise[name] = ((f - x) / (tau * sigma)).ravel()  # standard normal if the laws agree
        assert scipy.stats.kstest(noise[name], "norm").pvalue > LEVEL, name
    assert scipy.stats.ks_2samp(noise["datathin"], noise["selective"]).pvalue > LEVEL
    # the check has power: a noise scale 10% off fails it
    assert scipy.stats.ks_2samp(noise["datathin"], 1.1 * noise["selective"]).pvalue < LEVEL
