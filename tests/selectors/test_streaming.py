"""Streaming statistics and the scores built on them: merges against numpy and scipy, grid
sums exact over any chunking, pandas against Dask (no cluster: the synchronous scheduler)."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from selective import TopK
from selective.selectors import (
    CandidateScores,
    ClippedMeanScores,
    ProportionScores,
    SignedClippedMeanScores,
    SignedMeanScore,
    TwoGroupScores,
    candidate_scores,
    welch_t_scores,
)
from selective.selectors.base import NonFiniteScoreError
from selective.selectors.streaming import GRID_BITS, CoMoments, GridSums, Moments, reduce_frame

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

RNG = np.random.default_rng(20260807)
COLS = [f"x{i}" for i in range(12)]
DATA = pd.DataFrame(RNG.normal(size=(3000, 12)) * RNG.uniform(0.1, 50, 12) + RNG.normal(size=12) * 100, columns=COLS)
DATA["arm"] = RNG.choice(["t", "c", "other"], size=3000, p=[0.45, 0.45, 0.1])
DATA["y"] = DATA["x0"] * 0.01 + RNG.normal(size=3000)
DATA["flag"] = RNG.integers(0, 2, size=3000)


@pytest.fixture(autouse=True)
def _synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _splits(n, cuts):
    edges = sorted({0, n, *(c % (n + 1) for c in cuts)})
    return list(zip(edges[:-1], edges[1:], strict=False))


class TestMoments:
    @settings(max_examples=60, deadline=None)
    @given(cuts=st.lists(st.integers(0, 400), max_size=8))
    def test_merge_against_numpy(self, cuts):
        x = DATA[COLS].to_numpy()[:400]
        m = Moments.of(x[:0])
        for a, b in _splits(400, cuts):
            m = m.merge(Moments.of(x[a:b]))
        assert m.n == 400
        np.testing.assert_allclose(m.mean, x.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(m.var, x.var(axis=0, ddof=1), rtol=1e-11)

    def test_large_mean_keeps_precision(self):
        # mean 1e9, sd 1: the sum-of-squares formula loses every digit (n var ~ 1e3 against n mean^2 ~ 1e21)
        x = 1e9 + RNG.normal(size=(100_000, 1))
        m = reduce_frame(pd.DataFrame(x, columns=["a"]), ["a"], lambda c: Moments.of(c.to_numpy()), chunk_rows=977)
        np.testing.assert_allclose(m.var, x.var(axis=0, ddof=1), rtol=1e-9)
        naive = (np.sum(x * x) - x.shape[0] * np.mean(x) ** 2) / (x.shape[0] - 1)
        assert abs(naive - float(m.var[0])) > 1e-3  # what the stable merge avoids

    @settings(max_examples=40, deadline=None)
    @given(cuts=st.lists(st.integers(0, 300), max_size=6))
    def test_comoments_against_numpy(self, cuts):
        x, y = DATA[COLS].to_numpy()[:300], DATA["y"].to_numpy()[:300]
        c = CoMoments.of(x[:0], y[:0])
        for a, b in _splits(300, cuts):
            c = c.merge(CoMoments.of(x[a:b], y[a:b]))
        expect = ((x - x.mean(axis=0)) * (y - y.mean())[:, None]).sum(axis=0)
        np.testing.assert_allclose(c.cxy, expect, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(c.y_m2, ((y - y.mean()) ** 2).sum(), rtol=1e-12)


class TestGridSums:
    @settings(max_examples=60, deadline=None)
    @given(cuts=st.lists(st.integers(0, 500), max_size=10), clip=st.floats(0.01, 1e3))
    def test_any_chunking_gives_the_same_bits(self, cuts, clip):
        x = DATA[COLS].to_numpy()[:500] / 40.0
        whole = GridSums.of(x, clip)
        parts = [GridSums.of(x[a:b], clip) for a, b in _splits(500, cuts)]
        merged = parts[0]
        for p in parts[1:]:
            merged = merged.merge(p)
        assert merged == whole
        got = whole.to_floats(whole.exact_means())
        assert np.array_equal(got, merged.to_floats(merged.exact_means()))
        # against the definition, value by value in exact arithmetic
        u = Fraction(whole.unit)
        assert whole.unit <= clip / 2**GRID_BITS < 2 * whole.unit
        q = [[int(Fraction(float(np.clip(v, -clip, clip))) / u) for v in col] for col in x.T[:3]]  # toward 0
        assert [float(Fraction(sum(c), 500) * u) for c in q] == got[:3].tolist()

    def test_grid_values_stay_within_the_clip(self):
        # the sensitivity argument: |q u| <= c for every value, so one row moves a sum by <= 2c
        for clip in (1e-3, 0.7, 3.0, 12345.678):
            g = GridSums.of(np.array([[1e300], [-1e300], [clip], [-clip]]), clip, groups=[np.eye(4, dtype=bool)[i]
                                                                                         for i in range(4)])
            assert all(abs(Fraction(s[0]) * Fraction(g.unit)) <= Fraction(clip) for s in g.sums)

    def test_missing_values_flag_the_column(self):
        x = np.array([[1.0, np.nan], [2.0, 3.0]])
        g = GridSums.of(x[:1], 5.0).merge(GridSums.of(x[1:], 5.0))
        out = g.to_floats(g.exact_means())
        assert out[0] == 1.5 and np.isnan(out[1])

    def test_merge_iv(self):
        with pytest.raises(ValueError, match="different grids"):
            GridSums.of(np.ones((2, 1)), 1.0).merge(GridSums.of(np.ones((2, 1)), 2.0))


class TestScoresOnDask:
    @pytest.mark.parametrize("npartitions", [1, 4, 9])
    def test_grid_scores_are_bit_identical(self, npartitions):
        ddf = dd.from_pandas(DATA, npartitions=npartitions)
        for score in (ClippedMeanScores(COLS, clip=40.0), SignedClippedMeanScores(COLS, "arm", "t", clip=25.0),
                      ProportionScores(["flag"], value=1), ClippedMeanScores(COLS, clip=0.5, absolute=True)):
            a, b = score(DATA), score(ddf)
            assert a.index.tolist() == b.index.tolist()
            assert np.array_equal(a.to_numpy(), b.to_numpy()), type(score).__name__

    @pytest.mark.parametrize("npartitions", [1, 5])
    def test_float_scores_agree_with_the_in_memory_path(self, npartitions):
        ddf = dd.from_pandas(DATA, npartitions=npartitions)
        for kind, target in (("mean", None), ("t", None), ("corr", "y"), ("t", "y")):
            np.testing.assert_allclose(candidate_scores(ddf, COLS, target=target, kind=kind),
                                       candidate_scores(DATA, COLS, target=target, kind=kind), rtol=1e-11)
        np.testing.assert_allclose(welch_t_scores(ddf, COLS, "arm", ("t", "c")),
                                   welch_t_scores(DATA, COLS, "arm", ("t", "c")), rtol=1e-11)
        score = CandidateScores(COLS, kind="corr", target="y", absolute=True)
        np.testing.assert_allclose(score(ddf), score(DATA), rtol=1e-11)

    def test_two_group_scores_against_scipy(self):
        a = DATA.loc[DATA.arm == "t", COLS].to_numpy()
        b = DATA.loc[DATA.arm == "c", COLS].to_numpy()
        for kind, equal_var in (("welch_t", False), ("student_t", True)):
            ref = scipy.stats.ttest_ind(a, b, axis=0, equal_var=equal_var).statistic
            got = TwoGroupScores(COLS, "arm", ("t", "c"), kind=kind, absolute=False)(DATA)
            np.testing.assert_allclose(got, ref, rtol=1e-11)
        diff = TwoGroupScores(COLS, "arm", ("t", "c"), kind="difference", absolute=False)(DATA)
        np.testing.assert_allclose(diff, a.mean(axis=0) - b.mean(axis=0), rtol=1e-11)

    def test_welch_scores_against_scipy_per_column(self):
        got = welch_t_scores(DATA, COLS, "arm", ("t", "c"))
        for c in COLS[:4]:
            ref = scipy.stats.ttest_ind(DATA.loc[DATA.arm == "t", c], DATA.loc[DATA.arm == "c", c], equal_var=False)
            assert got[c] == pytest.approx(abs(ref.statistic), rel=1e-13)

    def test_signed_grid_score_is_the_signed_mean_score_up_to_the_grid(self):
        a = SignedClippedMeanScores(COLS, "arm", "t", clip=25.0)(DATA)
        b = SignedMeanScore(tuple(COLS), "arm", "t", clip=25.0)(DATA)
        assert np.max(np.abs(a - b)) <= 25.0 / 2**31 + 1e-12

    def test_missing_value_is_refused_by_name_through_the_selector(self):
        d = DATA.copy()
        d.loc[7, "x3"] = np.nan
        sel = TopK(k=1, score=ClippedMeanScores(COLS, clip=3.0), candidates=COLS)
        for data in (d, dd.from_pandas(d, npartitions=3)):
            scores = sel.score(data)
            assert np.isnan(scores["x3"]) and np.isfinite(scores.drop("x3")).all()
        with pytest.raises(NonFiniteScoreError, match="'x3'"):
            sel.select(d)

    def test_sensitivities(self):
        assert ClippedMeanScores(COLS, clip=3.0).sensitivity(600) == 6.0 / 600
        assert SignedClippedMeanScores(COLS, "arm", "t", clip=2.0).sensitivity(100) == 0.04
        assert ProportionScores(["flag"]).sensitivity(8) == 0.125

    def test_iv(self):
        with pytest.raises(ValueError, match="`clip` must be"):
            ClippedMeanScores(COLS, clip=0.0)
        with pytest.raises(ValueError, match="`kind` must be one of 'welch_t', 'student_t', 'difference'"):
            TwoGroupScores(COLS, "arm", ("t", "c"), kind="z")
        with pytest.raises(TypeError, match="`levels` must be a pair"):
            TwoGroupScores(COLS, "arm", ("t",))
        with pytest.raises(ValueError, match="`group` 'x1' must not be one of `columns`"):
            TwoGroupScores(COLS, "x1", ("t", "c"))
        with pytest.raises(ValueError, match="`sign_column` 'x1' must not be one of `columns`"):
            SignedClippedMeanScores(COLS, "x1", 1.0)
        with pytest.raises(TypeError, match="`absolute` must be True or False"):
            ProportionScores(["flag"], absolute=1)
        with pytest.raises(TypeError, match="`data` must be a pandas or Dask DataFrame; got ndarray"):
            ClippedMeanScores(COLS)(DATA.to_numpy())
        with pytest.raises(ValueError, match=r"`columns` names 1 column\(s\) not in `data`: \['zz'\]"):
            ClippedMeanScores(["zz"])(dd.from_pandas(DATA, npartitions=2))
        with pytest.raises(TypeError, match="on a Dask DataFrame `target` must be the label of one of its columns"):
            candidate_scores(dd.from_pandas(DATA, npartitions=2), COLS, target=np.ones(3000), kind="corr")
        with pytest.raises(TypeError, match="candidate columns must be numeric"):
            candidate_scores(dd.from_pandas(DATA, npartitions=2), ["arm"], kind="mean")
