"""The Analysis facade, the corrected table and its renderings, the bundled data and the demo."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from selective import (
    Analysis,
    ApproxDP,
    CompositionOrderError,
    CorrectedTable,
    DescriptionLength,
    NoisyTopK,
    PureDP,
    Selection,
    SelectiveWarning,
    TopK,
)
from selective.analysis.report import TABLE_COLUMNS, format_pvalue
from selective.cli import main
from selective.corrections import corrected_pvalue_bonferroni
from selective.datasets import BIOMARKERS_SEED, load_biomarkers, simulate_biomarkers
from selective.demo import run_demo
from selective.hypotheses import CoefficientTest, TwoSampleTTest
from selective.selectors import welch_t_scores


@pytest.fixture(scope="module")
def demo():
    return run_demo()


class FixedSelector:
    """A selector that returns a fixed value with a given certificate (for facade tests)."""

    def __init__(self, certificate, value=("m07",)):
        self.cert = certificate
        self.value = value
        self.calls = 0

    def certificate(self):
        return self.cert

    def select(self, data, rng=None):
        self.calls += 1
        return Selection(value=self.value, certificate=self.cert, label="fixed")


class TestAnalysis:
    def test_analysis_iv(self):
        with pytest.raises(TypeError, match="`data` must be a pandas DataFrame"):
            Analysis([[1, 2]])
        with pytest.raises(ValueError, match="at least one row"):
            Analysis(pd.DataFrame({"a": []}))
        with pytest.raises(ValueError, match=r"`alpha` must be a real number in \(0, 1\); got 1.5"):
            Analysis(pd.DataFrame({"a": [1.0]}), alpha=1.5)
        with pytest.raises(TypeError, match="`rng`"):
            Analysis(pd.DataFrame({"a": [1.0]}), rng="seed")
        a = Analysis(pd.DataFrame({"a": [1.0]}))
        with pytest.raises(ValueError, match="no test has been run"):
            a.report()
        with pytest.raises(TypeError, match="`selector` must have a select"):
            a.select(3)
        with pytest.raises(TypeError, match="`spec` must be a test spec"):
            a.test("t-test")

    def test_refused_selection_is_never_run_and_leaves_no_trace(self):
        a = Analysis(load_biomarkers(), rng=1)
        a.select(FixedSelector(DescriptionLength(10)))
        before = a.ledger.to_json()
        sel = FixedSelector(ApproxDP(0.5, 1e-8))
        with pytest.raises(CompositionOrderError):
            a.select(sel)
        assert sel.calls == 0  # the data were not touched
        assert a.ledger.to_json() == before and len(a.selections) == 1

    def test_report_columns_and_bonferroni(self, demo):
        analysis, table = demo
        assert isinstance(table, CorrectedTable)
        assert list(table.frame.columns) == list(TABLE_COLUMNS)
        f = table.frame
        np.testing.assert_allclose(f.pvalue_bonferroni, corrected_pvalue_bonferroni(f.pvalue_naive.to_numpy(), 120))
        routes = f[["pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni"]]
        assert (f.pvalue_best <= routes.min(axis=1) + 1e-15).all()
        assert (f.pvalue_best >= f.pvalue_naive).all()
        # corrected intervals contain the naive ones (a higher level); a row whose p-value had to
        # come from a permutation at the corrected level has no trusted interval there, and says so
        shown = f.ci_corrected_low.notna()
        assert shown.any()
        assert (f.ci_corrected_low[shown] <= f.ci_low[shown]).all()
        assert (f.ci_corrected_high[shown] >= f.ci_high[shown]).all()
        assert f.note[~shown].str.contains("permutation p-value used").all()

    def test_demo_shows_a_false_positive_removed_and_a_real_effect_kept(self, demo):
        analysis, table = demo
        f = table.frame
        assert analysis.selections[0].value == ("m07", "m22", "m26")
        real = f.loc["m07: treatment - control (Welch)"]
        assert real.pvalue_naive < 1e-4 and real.pvalue_best < 0.05
        nulls = f.loc[["m22: treatment - control (Welch)", "m26: treatment - control (Welch)"]]
        assert (nulls.pvalue_naive < 0.05).all() and (nulls.pvalue_best > 0.05).all()
        # 300 rows per arm of near-normal data: the second-order rule trusts Welch's p-value at
        # the Bonferroni threshold (4.2e-4), so its corrected interval is shown and excludes 0;
        # the max-information threshold is smaller than the trusted level and that column is
        # withheld, with the reason
        assert real.ci_corrected_low > 0 and real.best_route == "Bonferroni"
        assert np.isnan(real.pvalue_maxinfo) and "max-info, mutual-information withheld: threshold below" in real.note
        adjusted = f.loc["m07: arm effect adjusted for age, sex (OLS)"]
        assert adjusted.ci_corrected_low > 0 and adjusted.pvalue_best < 0.05

    def test_adjust(self, demo):
        analysis, _ = demo
        t = analysis.report(adjust="holm")
        assert (t.frame.pvalue_adjusted >= t.frame.pvalue_best - 1e-15).all()
        assert "holm" in t.footnote
        with pytest.raises(ValueError, match="`adjust` must be one of"):
            analysis.report(adjust="magic")

    def test_dp_then_description_length(self):
        data = load_biomarkers()
        cols = tuple(c for c in data.columns if c.startswith("m"))
        from selective.selectors.topk import SignedMeanScore

        score = SignedMeanScore(columns=cols, sign_column="arm", positive="treatment")
        screen = NoisyTopK(k=5, epsilon=0.5, sensitivity=score.sensitivity(len(data)),
                           score=lambda d: score(d).abs(), candidates=cols)

        def run(preregister: bool):
            a = Analysis(data, rng=7, n_candidates=len(cols))
            if preregister:
                a.preregister(screen, DescriptionLength(10))
            five = a.select(screen).value
            two = a.select(TopK(k=2, candidates=five,
                                score=lambda d: welch_t_scores(d, list(five), "arm", ("treatment", "control")))).value
            for c in two:
                a.test(TwoSampleTTest(column=c, group="arm", levels=("treatment", "control"), usevar="unequal"))
            return a, a.report()

        a, t = run(preregister=True)
        assert not a.adaptive
        assert [s.role for s in a.ledger.steps] == ["first DP block", "after selection"]
        # every route's column is computed; a column whose threshold lies below the level where
        # Welch's p-value is trusted is shown only when it cannot reject there (THEORY.md 7.1)
        for col in ("pvalue_maxinfo", "pvalue_mutual_info"):
            assert (t.frame[col].notna() | t.frame.note.str.contains("withheld")).all()
        assert t.frame.pvalue_maxinfo.notna().any()
        assert "product" in t.footnote
        best = t.frame[["pvalue_maxinfo", "pvalue_mutual_info", "pvalue_bonferroni"]].min(axis=1)
        np.testing.assert_array_equal(t.frame.pvalue_best.to_numpy(), best.to_numpy())
        # the same steps, not declared in advance: only the routes valid under adaptivity, and the
        # best column pays for combining the union route with Bonferroni (THEORY.md 3.2a)
        a2, t2 = run(preregister=False)
        assert a2.adaptive
        assert t2.frame.pvalue_mutual_info.isna().all()
        assert "expected, not the realized" in t2.footnote
        merged = np.minimum(1.0, 2 * t2.frame[["pvalue_maxinfo", "pvalue_bonferroni"]].min(axis=1))
        np.testing.assert_allclose(t2.frame.pvalue_best.to_numpy(), merged.to_numpy(), rtol=0, atol=0)
        assert (t2.frame.pvalue_maxinfo >= t.frame.pvalue_maxinfo).all()  # Theorem 19 only, realized counts

    def test_a_withheld_max_info_cell_names_no_route(self):
        """A row whose max-info cell is withheld does not also say which route that cell used."""
        data = load_biomarkers()
        cols = [c for c in data.columns if c.startswith("m")]
        a = Analysis(data, rng=2026, n_candidates=len(cols))
        chosen = a.select(TopK(k=3, candidates=tuple(cols),
                               score=lambda d: welch_t_scores(d, cols, "arm", ("treatment", "control")))).value
        for c in chosen:
            a.test(TwoSampleTTest(column=c, group="arm", levels=("treatment", "control"), usevar="unequal"))
        frame = a.report().frame
        withheld = frame.pvalue_maxinfo.isna()
        assert withheld.any() and (~withheld).any()
        assert not frame.note[withheld].str.contains("max-info: ").any()
        assert frame.note[~withheld].str.contains("max-info: union bound").all()

    def test_no_step_is_not_adaptive(self):
        """Tests without any selection step: every route is fixed before the data are read, so the best
        column is the smallest valid one, with no merge and no note about adaptive steps."""
        rng = np.random.default_rng(0)
        frame = pd.DataFrame({"y": rng.normal(size=300), "treat": (rng.random(300) < 0.5).astype(float)})
        a = Analysis(frame, rng=1, n_candidates=21)
        a.test(CoefficientTest(formula="y ~ treat", term="treat"))
        t = a.report()
        assert not a.adaptive
        row = t.frame.iloc[0]
        assert row.pvalue_best == pytest.approx(row.pvalue_naive) and row.pvalue_bonferroni == 1.0
        assert "adaptive" not in t.footnote.lower() and "merge" not in str(row.best_route)
        if row.pvalue_best < 1.0:  # nothing was selected: the route says so rather than naming a composition
            assert row.best_route == "no selection step (0 bits)"
        assert "max-info: 0 bits, no selection step" in row.note and "composition" not in row.note

    def test_reproducible_with_a_seed(self):
        data = load_biomarkers()
        cols = tuple(c for c in data.columns if c.startswith("m"))

        def run(seed):
            a = Analysis(data, rng=seed)
            return a.select(NoisyTopK(k=3, epsilon=1.0, sensitivity=0.01, score=lambda d: d[list(cols)].mean().abs(),
                                      candidates=cols)).value

        assert run(5) == run(5)


class TestRenderings:
    def test_markdown_latex_html_csv(self, demo, tmp_path):
        _, table = demo
        md = table.to_markdown()
        assert "| hypothesis" in md and "p (naive)" in md and "p (best valid)" in md
        assert "m07: treatment - control (Welch)" in md and "< 1e-04" in md
        assert "Bonferroni over 120 declared hypotheses" in md
        tex = table.to_latex(caption="Selected biomarkers", label="tab:bio")
        assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
        assert r"$<10^{-4}$" in tex and r"\label{tab:bio}" in tex
        assert tex.count(r"\\") >= len(table.frame) + 1
        html = table.to_html()
        assert "<table" in html and "selective-footnote" in html
        path = tmp_path / "t.csv"
        table.to_csv(path)
        back = pd.read_csv(path, index_col=0)
        np.testing.assert_allclose(back.pvalue_best, table.frame.pvalue_best, rtol=1e-12)

    def test_format_pvalue(self):
        assert format_pvalue(0.0123) == "0.012"
        assert format_pvalue(5e-5) == "< 1e-04"
        assert format_pvalue(float("nan")) == "n/a"
        assert format_pvalue(1.0) == "1"
        assert format_pvalue(0.00042) == "4.2e-04"

    def test_plots(self, demo):
        import matplotlib

        matplotlib.use("Agg")
        _, table = demo
        ax = table.plot()
        assert ax.get_xscale() == "log" and len(ax.get_yticks()) == len(table.frame)
        ax = table.plot_ledger()
        assert ax.get_ylabel() == "bits"


class TestData:
    def test_bundled_file_matches_its_generator(self):
        bundled = load_biomarkers()
        regenerated = simulate_biomarkers()
        pd.testing.assert_frame_equal(bundled, regenerated, check_exact=False, rtol=0, atol=1e-12)
        assert BIOMARKERS_SEED == 20261128

    def test_generator_iv(self):
        with pytest.raises(ValueError, match="`n_rows` must be even"):
            simulate_biomarkers(n_rows=7)
        with pytest.raises(ValueError, match="`effects` names 'x1'"):
            simulate_biomarkers(effects={"x1": 1.0})


class TestCLI:
    def test_demo_command_prints_the_table(self, capsys):
        assert main(["demo"]) == 0
        out = capsys.readouterr().out
        assert "p (naive)" in out and "p (best valid)" in out and "m07" in out
        assert "2 after correction" in out and "4 naive rejection(s)" in out

    def test_usage_errors_exit_2(self, capsys):
        assert main([]) == 2
        with pytest.raises(SystemExit) as e:
            main(["no-such-command"])
        assert e.value.code == 2


def test_record_interactive_selection():
    data = load_biomarkers()
    a = Analysis(data, rng=1)
    sel = a.record(Selection(value=("m07",), certificate=PureDP(0.001), label="thresholdout queries"))
    assert a.selections == (sel,) and a.ledger.steps[0].label == "thresholdout queries"
    a.record(Selection(value=("m07",), certificate=DescriptionLength(3), label="pick"))
    before = a.ledger.to_json()
    with pytest.raises(CompositionOrderError):
        a.record(Selection(value=(), certificate=ApproxDP(0.1, 1e-9)))
    assert a.ledger.to_json() == before and len(a.selections) == 2
    with pytest.raises(TypeError, match="`selection` must be a Selection"):
        a.record(PureDP(0.1))


class TestSelectAccounting:
    def test_failed_selector_is_recorded_with_one_more_outcome(self):
        class Failing(FixedSelector):
            def select(self, data, rng=None):
                self.calls += 1
                raise RuntimeError("score blew up")

        a = Analysis(load_biomarkers())
        with pytest.raises(RuntimeError, match="blew up"):
            a.select(Failing(DescriptionLength(10)), label="broken top-k")
        assert a.ledger.certificates == (DescriptionLength(11),)
        assert "failed: RuntimeError" in a.ledger.steps[0].label and a.selections == ()

    def test_inconsistent_certificate_is_refused_but_recorded(self):
        class Liar(FixedSelector):
            def select(self, data, rng=None):
                return Selection(value=("m07",), certificate=DescriptionLength(2), label="liar")

        a = Analysis(load_biomarkers())
        with pytest.raises(ValueError, match="declared DescriptionLength"):
            a.select(Liar(DescriptionLength(10)))
        assert a.ledger.certificates == (DescriptionLength(10),) and a.selections == ()

    def test_undeclared_certificate_warns(self):
        class Undeclared:
            def select(self, data, rng=None):
                return Selection(value=("m07",), certificate=DescriptionLength(3), label="x")

        a = Analysis(load_biomarkers())
        with pytest.warns(SelectiveWarning, match="declares no certificate"):
            a.select(Undeclared())
        assert a.ledger.certificates == (DescriptionLength(3),)


def test_refused_step_after_a_look_voids_the_information_corrections():
    from selective import BudgetExceededError

    data = load_biomarkers()
    a = Analysis(data, budget_epsilon=0.5, n_candidates=60)
    with pytest.raises(BudgetExceededError):
        a.record(Selection(value=("answers seen",), certificate=PureDP(2.0), label="thresholdout"))
    assert a.void_reasons and "thresholdout" in a.void_reasons[0]
    a.test(TwoSampleTTest(column="m07", group="arm", levels=("treatment", "control"), usevar="unequal"))
    t = a.report()
    row = t.frame.iloc[0]
    assert np.isnan(row.pvalue_maxinfo) and np.isnan(row.pvalue_mutual_info)
    # the declaration-based route stays; not preregistered, so the best column keeps the
    # merge factor of the two routes it could have combined (fixed before the data: THEORY.md 3.2a)
    assert row.pvalue_best == min(1.0, 2 * row.pvalue_bonferroni)
    assert "void" in t.footnote
    b = Analysis(data)  # no Bonferroni: nothing valid remains
    b.record(Selection(value=("x",), certificate=DescriptionLength(5)))
    with pytest.raises(CompositionOrderError):
        b.record(Selection(value=("y",), certificate=ApproxDP(0.1, 1e-6)))
    b.test(TwoSampleTTest(column="m07", group="arm", levels=("treatment", "control")))
    assert np.isnan(b.report().frame.pvalue_best.iloc[0])


def test_selecting_after_testing_warns():
    data = load_biomarkers()
    a = Analysis(data)
    a.test(TwoSampleTTest(column="m07", group="arm", levels=("treatment", "control")))
    with pytest.warns(SelectiveWarning, match="after tests have been run"):
        a.record(Selection(value=("m07",), certificate=DescriptionLength(2)))


class Raising(FixedSelector):
    """A selector that reads the data, then raises ``exc``."""

    def __init__(self, certificate, exc):
        super().__init__(certificate)
        self.exc = exc

    def select(self, data, rng=None):
        self.calls += 1
        data["m01"].iloc[0]  # reads a value
        raise self.exc


class Returning(FixedSelector):
    """A selector that reads the data, then returns ``out``."""

    def __init__(self, certificate, out):
        super().__init__(certificate)
        self.out = out

    def select(self, data, rng=None):
        self.calls += 1
        return self.out


def _relabelled(selection, label):
    object.__setattr__(selection, "label", label)  # a Selection that bypassed its own checks
    return selection


class TestEveryExitIsAccounted:
    """Once a selector has touched the data, every exit leaves a ledger step or a void (THEORY.md 3.2a)."""

    def test_label_is_checked_before_the_data(self):
        a = Analysis(load_biomarkers())
        sel = FixedSelector(DescriptionLength(10))
        before = a.ledger.to_json()
        with pytest.raises(TypeError, match=r"`label` must be a string or None; got 5 \(int\)"):
            a.select(sel, label=5)
        assert sel.calls == 0 and a.ledger.to_json() == before and not a.void_reasons

    @pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3), RuntimeError("x"), KeyError("m99")])
    def test_description_length_failures_cost_one_outcome(self, exc):
        a = Analysis(load_biomarkers())
        with pytest.raises(type(exc)):
            a.select(Raising(DescriptionLength(10), exc), label="broken")
        assert a.ledger.certificates == (DescriptionLength(11),) and not a.void_reasons
        assert f"failed: {type(exc).__name__}" in a.ledger.steps[0].label

    @pytest.mark.parametrize("exc", [SystemExit(3), RuntimeError("x")])
    def test_dp_failures_are_recorded_and_void_the_corrections(self, exc):
        a = Analysis(load_biomarkers(), n_candidates=60)
        with pytest.raises(type(exc)):
            a.select(Raising(PureDP(0.1), exc))
        assert a.ledger.certificates == (PureDP(0.1),)
        assert a.void_reasons and "does not cover a data-dependent failure" in a.void_reasons[0]

    def test_dp_step_interrupted_is_recorded_without_voiding(self):
        a = Analysis(load_biomarkers())
        with pytest.raises(KeyboardInterrupt):
            a.select(Raising(PureDP(0.1), KeyboardInterrupt()))
        assert a.ledger.certificates == (PureDP(0.1),) and not a.void_reasons

    @pytest.mark.parametrize("out", [None, ("m07",), "m07", DescriptionLength(10)])
    def test_junk_returned_is_a_failure(self, out):
        a = Analysis(load_biomarkers())
        with pytest.raises(TypeError, match="must return a Selection"):
            a.select(Returning(DescriptionLength(10), out))
        assert a.ledger.certificates == (DescriptionLength(11),) and a.selections == ()

    def test_selection_with_a_bad_label_is_a_failure(self):
        a = Analysis(load_biomarkers())
        bad = _relabelled(Selection(value=("m07",), certificate=DescriptionLength(10), label="x"), 5)
        with pytest.raises(TypeError, match="label is not a string"):
            a.select(Returning(DescriptionLength(10), bad))
        assert a.ledger.certificates == (DescriptionLength(11),)

        class BuildsBadLabel(FixedSelector):
            def select(self, data, rng=None):
                return Selection(value=("m07",), certificate=self.cert, label=5)

        with pytest.raises(TypeError, match=r"`label` must be a string; got 5"):
            a.select(BuildsBadLabel(DescriptionLength(3)))
        assert a.ledger.certificates == (DescriptionLength(11), DescriptionLength(4))

    def test_undeclared_selector_failure_voids(self):
        class Undeclared:
            def select(self, data, rng=None):
                raise KeyboardInterrupt

        a = Analysis(load_biomarkers())
        with pytest.warns(SelectiveWarning), pytest.raises(KeyboardInterrupt):
            a.select(Undeclared())
        assert len(a.ledger) == 0 and "declared no certificate" in a.void_reasons[0]

    def test_non_finite_score_costs_one_outcome_per_message(self):
        cands = ("m01", "m02", "m03", "m04")
        top = TopK(k=1, score=lambda d: pd.Series([1.0, np.nan, 2.0, 0.0], index=list(cands)), candidates=cands)
        a = Analysis(load_biomarkers())
        with pytest.raises(ValueError, match="for 'm02' \\(the first such in the declared order"):
            a.select(top)
        assert a.ledger.certificates == (DescriptionLength(4 + 4),)

    def test_ledger_refusal_after_the_look_voids(self):
        class Liar(FixedSelector):
            def certificate(self):
                return None  # declares nothing, then returns a certificate the ledger refuses

            def select(self, data, rng=None):
                return Selection(value=("m07",), certificate=ApproxDP(0.1, 1e-9), label="liar")

        a = Analysis(load_biomarkers())
        a.select(FixedSelector(DescriptionLength(3)))
        with pytest.warns(SelectiveWarning), pytest.raises(CompositionOrderError):
            a.select(Liar(None))
        assert len(a.ledger) == 1 and "refused by the ledger" in a.void_reasons[0]

    def test_record_refusals_void_and_leave_the_ledger_unchanged(self):
        a = Analysis(load_biomarkers())
        a.record(Selection(value=("m07",), certificate=DescriptionLength(3), label="pick"))
        before = a.ledger.to_json()
        bad = _relabelled(Selection(value=("m07",), certificate=PureDP(0.1), label="x"), 7)
        with pytest.raises(TypeError, match="`selection.label` a string"):
            a.record(bad)
        assert a.ledger.to_json() == before and len(a.void_reasons) == 1
        with pytest.raises(TypeError, match="`selection` must be a Selection"):
            a.record(("m07",))
        assert a.ledger.to_json() == before and len(a.void_reasons) == 2


class TestChecksBeforeTheData:
    def test_missing_declared_columns_are_refused_before_the_data(self):
        from selective.selectors import ForwardStepwise, LassoSupport, SignedMeanScore

        data = load_biomarkers()
        a = Analysis(data)
        before = a.ledger.to_json()
        with pytest.raises(ValueError, match=r"`target` names 1 column\(s\) not in `data`: \['outcome'\]"):
            a.select(LassoSupport(target="outcome", features=["m01", "m02"], lam=1.0, max_size=1))
        with pytest.raises(ValueError, match=r"`features` names 2 column\(s\) not in `data`: \['m1', 'm2'\]"):
            a.select(ForwardStepwise(target="m01", features=["m1", "m2", "m03"], steps=1))
        score = SignedMeanScore(columns=("m01", "mX"), sign_column="arm", positive="treatment")
        with pytest.raises(ValueError, match=r"`score.columns` names 1 column\(s\) not in `data`: \['mX'\]"):
            a.select(NoisyTopK(k=1, epsilon=0.1, sensitivity=0.1, score=score, candidates=("m01", "mX")))
        assert a.ledger.to_json() == before and not a.void_reasons and not a.selections

    def test_duplicate_column_labels_are_refused(self):
        data = pd.DataFrame(np.zeros((3, 3)), columns=["a", "b", "a"])
        with pytest.raises(ValueError, match=r"`data` has more than one column labelled \['a'\]"):
            Analysis(data)


def test_candidate_scores_object_declares_its_columns():
    from selective.selectors import CandidateScores

    data = load_biomarkers()
    a = Analysis(data)
    typo = ("m01", "m02", "m3")
    with pytest.raises(ValueError, match=r"`score.candidates` names 1 column\(s\) not in `data`: \['m3'\]"):
        a.select(TopK(k=1, score=CandidateScores(typo, kind="t", absolute=True), candidates=typo))
    assert len(a.ledger) == 0 and not a.void_reasons
    cands = ("m01", "m02", "m07")
    sel = a.select(TopK(k=1, score=CandidateScores(cands, kind="t", absolute=True), candidates=cands))
    expected = data[list(cands)].mean() / (data[list(cands)].std() / np.sqrt(len(data)))
    assert sel.value == (expected.abs().idxmax(),) and a.ledger.certificates == (DescriptionLength(3),)


def test_a_frame_edited_in_place_after_the_analysis_started_is_refused():
    """The selections were made on the values the Analysis was given: an in-place edit (a new
    column, a changed value) is refused at the next step and at report(), naming what to do."""
    import warnings

    from selective.hypotheses import OneSampleTTest
    from selective.selectors import CandidateScores

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(50, 4)), columns=list("abcd"))
    a = Analysis(frame, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = a.select(TopK(k=1, score=CandidateScores(list("abcd"), kind="mean", absolute=True),
                            candidates=list("abcd")))
    a.test(OneSampleTTest(column=sel.value[0]))
    a.report()                                    # unchanged: fine
    frame["e"] = 1.0
    with pytest.raises(ValueError, match=r"modified in place .*found at report.*Analysis\(df.copy\(\)"):
        a.report()
    del frame["e"]
    assert a.report() is not None                 # the same values again: the digest matches
