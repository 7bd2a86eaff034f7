"""The quick-start analysis run by ``selective demo`` (and the first vignette)."""

from __future__ import annotations

from .accounting.certificates import DescriptionLength
from .analysis.facade import Analysis
from .analysis.report import CorrectedTable
from .datasets import load_biomarkers
from .hypotheses import CoefficientTest, TwoSampleTTest
from .selectors.scores import welch_t_scores
from .selectors.topk import TopK

__all__ = ["welch_t_scores", "run_demo"]


def run_demo(*, k: int = 3, seed: int = 2026) -> tuple[Analysis, CorrectedTable]:
    """Explore 60 biomarkers, keep the top ``k`` by |Welch t|, test them on the same data.

    Declared before looking: 60 candidate biomarkers, each with two possible tests (Welch t,
    and an OLS arm coefficient adjusted for age and sex), so 120 candidate hypotheses; and the
    two selection steps (the top ``k`` of 60, then the one of those ``k`` that also gets the
    adjusted OLS test), so that the thresholds are fixed in advance.
    """
    data = load_biomarkers()
    biomarkers = [c for c in data.columns if c.startswith("m")]
    levels = ("treatment", "control")
    analysis = Analysis(data, alpha=0.05, rng=seed, n_candidates=2 * len(biomarkers))
    screen = TopK(k=k, candidates=tuple(biomarkers), name="|Welch t|",
                  score=lambda d: welch_t_scores(d, biomarkers, "arm", levels))
    analysis.preregister(screen, DescriptionLength(k))
    picked = analysis.select(screen, label=f"top-{k} of {len(biomarkers)} biomarkers by |Welch t|").value
    (best,) = analysis.select(
        TopK(k=1, candidates=tuple(picked), name="|Welch t|",
             score=lambda d: welch_t_scores(d, list(picked), "arm", levels)),
        label=f"top-1 of the {k} for the adjusted model",
    ).value
    for column in picked:
        analysis.test(TwoSampleTTest(column=column, group="arm", levels=levels, usevar="unequal",
                                     label=f"{column}: treatment - control (Welch)"))
    analysis.test(CoefficientTest(formula=f"{best} ~ C(arm, Treatment('control')) + age + C(sex)",
                                  term="C(arm, Treatment('control'))[T.treatment]", model="ols",
                                  label=f"{best}: arm effect adjusted for age, sex (OLS)"))
    return analysis, analysis.report()
