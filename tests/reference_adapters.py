"""Adapters from reference files to the package's public functions.

``evaluate_theory_vector(vector)`` maps one entry of a theory-vector file (schema
"selective theory test vectors v1") to the package's public API, by its ``formula_id``, and
returns the package's outputs under the vector's own output names. Every output that is a
probability is also returned as ``log2_<name>`` when the package computes it in log space, so
that values below the double range (e.g. 3.8e-1205) can be compared exactly.

``run_r_case(case, data_dir)`` runs one R selectiveInference reference case with the package's
own implementation (see ``_r_cases.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from selective import corrections as C
from selective import mechanisms as M
from selective.accounting import bounds as B
from selective.accounting import composition as P
from selective.accounting.certificates import ANY_DISTRIBUTION, MaxInfo, MutualInfo
from selective.accounting.totals import MaxInfoFamily

__all__ = ["evaluate_theory_vector", "run_r_case", "SUPPORTED_FORMULA_IDS"]


def _num(x: Any) -> float:
    return float(x)


def _int(x: Any) -> int:
    f = float(x)
    if not f.is_integer():
        raise ValueError(f"expected an integer input, got {x!r}")
    return int(f)


def _inputs(vector: dict) -> dict[str, Any]:
    return {k: v["value"] for k, v in vector["inputs"].items()}


def _thr(t: C.Threshold, name: str = "gamma") -> dict[str, float]:
    return {name: t.gamma, f"log2_{name}": t.log2_gamma}


def _exact_rr(i):
    eps, n, beta = _num(i["eps"]), _int(i["n"]), _num(i["beta"])
    return {
        "k_exact": B.exact_maxinfo_randomized_response(eps, n, beta),
        "k_bound_thm19_all_distributions": B.maxinfo_pure_dp_all_distributions(eps, n).bits,
        "k_bound_thm20_product": B.maxinfo_pure_dp_product(eps, n, beta).bits,
    }


def _exact_rr_mi(i):
    eps, n = _num(i["eps"]), _int(i["n"])
    bits = B.exact_mutual_information_randomized_response(eps, n)
    return {
        "I_bits": bits,
        "I_nats": B.bits_to_nats(bits),
        "bound_product_bits_n_eps_tanh": B.mi_pure_dp_product(eps, n, form="tanh").bits,
        "bound_product_bits_n_eps2_over_2": B.mi_pure_dp_product(eps, n, form="simple").bits,
    }


def _mi_pure(i):
    eps, n = _num(i["eps"]), _int(i["n"])
    pt = B.mi_pure_dp_product(eps, n, form="tanh")
    ps = B.mi_pure_dp_product(eps, n, form="simple")
    at = B.mi_pure_dp_any_distribution(eps, n, form="tanh")
    as_ = B.mi_pure_dp_any_distribution(eps, n, form="simple")
    return {
        "I_product_tanh_nats": pt.nats, "I_product_tanh_bits": pt.bits,
        "I_product_eps2_nats": ps.nats, "I_product_eps2_bits": ps.bits,
        "I_any_tanh_nats": at.nats, "I_any_tanh_bits": at.bits,
        "I_any_simple_nats": as_.nats, "I_any_simple_bits": as_.bits,
    }


def _mi_zcdp(i):
    rho, n = _num(i["rho"]), _int(i["n"])
    pr, an = B.mi_zcdp_product(rho, n), B.mi_zcdp_any_distribution(rho, n)
    return {"I_product_nats": pr.nats, "I_product_bits": pr.bits, "I_any_nats": an.nats, "I_any_bits": an.bits}


def _mi_gauss(i):
    r = B.mi_gaussian_statistical_queries(_int(i["n_queries"]), _num(i["sigma"]), _int(i["n"]))
    return {"rho": r.rho, "I_product_nats": r.mutual_info.nats, "I_product_bits": r.mutual_info.bits}


def _dl_pvalue(i):
    N, p = _int(i["n_outcomes"]), _num(i["p_naive"])
    return {
        "beta_opt": C.optimal_beta_description_length(p, N),
        "p_corrected_maxinfo_route": C.corrected_pvalue_description_length(p, N),
        "p_corrected_bonferroni": C.corrected_pvalue_bonferroni(p, N),
    }


def _gamma_mi_via(i):
    m, a = _num(i["m"]), _num(i["alpha"])
    opt = C.gamma_mi_via_maxinfo(a, m)
    out = {"k_opt": opt.bits, "beta_opt": opt.beta}
    out.update(_thr(opt, "gamma_optimised"))
    out.update(_thr(C.gamma_mi_via_maxinfo(a, m, form="slide"), "gamma_slide_0.54"))
    out.update(_thr(C.gamma_mi_via_maxinfo(a, m, form="beta_half_alpha"), "gamma_exact_const_beta_half_alpha"))
    return out


def _gamma_rz(i):
    m, a = _num(i["m"]), _num(i["alpha"])
    out = _thr(C.gamma_mi_russo_zou(a, m, form="split"), "gamma_split")
    out.update(_thr(C.gamma_mi_russo_zou(a, m), "gamma_optimised"))
    return out


def _gamma_union(i):
    N, eps, n, a = _int(i["n_outcomes_total"]), _num(i["eps"]), _int(i["n"]), _num(i["alpha"])
    t = C.gamma_union_dl_and_pure_dp_product(a, N, eps, n)
    # max-information route with the all-distribution bound: description length then pure DP
    fam = MaxInfoFamily(n_rows=n, dl_log2_outcomes=(math.log2(N),),
                        fixed_bits=B.maxinfo_pure_dp_all_distributions(eps, n).bits)
    out = {"beta_opt": t.beta, "k_at_beta_opt": t.bits}
    out.update(_thr(t, "gamma_union"))
    out.update(_thr(C.gamma_maxinfo(a, fam), "gamma_maxinfo_all_distributions"))
    return out


def _gamma_dp_product(i):
    t = C.gamma_pure_dp_product(_num(i["alpha"]), _num(i["eps"]), _int(i["n"]))
    out = {"beta_opt": t.beta, "k_at_beta_opt": t.bits}
    out.update(_thr(t))
    return out


def _crossover(i):
    c = C.crossover_mi_routes(_num(i["alpha"]))
    return {"m_star": c.mi_bits, "gamma_at_m_star": c.gamma}


_DISPATCH: dict[str, Callable[[dict], dict]] = {
    "exact_maxinfo_randomized_response": _exact_rr,
    "exact_mutual_information_randomized_response": _exact_rr_mi,
    "maxinfo_pure_dp_all_distributions": lambda i: {
        "k": B.maxinfo_pure_dp_all_distributions(_num(i["eps"]), _int(i["n"])).bits,
        "beta": B.maxinfo_pure_dp_all_distributions(_num(i["eps"]), _int(i["n"])).beta,
    },
    "maxinfo_pure_dp_product": lambda i: {
        "k": B.maxinfo_pure_dp_product(_num(i["eps"]), _int(i["n"]), _num(i["beta"])).bits},
    "maxinfo_description_length": lambda i: {
        "k": B.maxinfo_description_length(_int(i["n_outcomes"]), _num(i["beta"])).bits},
    "maxinfo_from_mutual_information": lambda i: {
        "k": B.maxinfo_from_mutual_information(MutualInfo(_num(i["m"]), ANY_DISTRIBUTION), _num(i["beta"])).bits,
        "k_with_slide_constant_0.54": B.maxinfo_from_mutual_information(
            MutualInfo(_num(i["m"]), ANY_DISTRIBUTION), _num(i["beta"]), constant="slide").bits,
    },
    "maxinfo_composition_dp_then_dl": lambda i: (lambda m: {"k": m.bits, "beta": m.beta, "scope": m.scope})(
        B.compose_maxinfo(B.maxinfo_pure_dp_product(_num(i["eps"]), _int(i["n"]), _num(i["beta1"])),
                          B.maxinfo_description_length(_int(i["n_outcomes"]), _num(i["beta2"])))),
    "maxinfo_composition_dl_then_pure_dp": lambda i: (lambda m: {"k": m.bits, "beta": m.beta, "scope": m.scope})(
        B.compose_maxinfo(B.maxinfo_description_length(_int(i["n_outcomes"]), _num(i["beta1"])),
                          B.maxinfo_pure_dp_all_distributions(_num(i["eps"]), _int(i["n"])))),
    "gamma_from_maxinfo": lambda i: _thr(C.gamma_from_maxinfo(
        _num(i["alpha"]), MaxInfo(bits=_num(i["k"]), beta=_num(i["beta"]), scope=ANY_DISTRIBUTION))),
    "corrected_pvalue_from_maxinfo": lambda i: {"p_corrected": C.corrected_pvalue_from_maxinfo(
        _num(i["p_naive"]), MaxInfo(bits=_num(i["k"]), beta=_num(i["beta"]), scope=ANY_DISTRIBUTION))},
    "gamma_pure_dp_all_distributions": lambda i: _thr(
        C.gamma_pure_dp_all_distributions(_num(i["alpha"]), _num(i["eps"]), _int(i["n"]))),
    "corrected_pvalue_pure_dp_all_distributions": lambda i: {
        "p_corrected": C.corrected_pvalue_pure_dp_all_distributions(_num(i["p_naive"]), _num(i["eps"]), _int(i["n"]))},
    "gamma_pure_dp_product_optimal_beta": _gamma_dp_product,
    "corrected_pvalue_pure_dp_product_optimal_beta": lambda i: {
        "beta_opt": C.optimal_beta_pure_dp_product(_num(i["p_naive"]), _num(i["eps"]), _int(i["n"])),
        "p_corrected": C.corrected_pvalue_pure_dp_product(_num(i["p_naive"]), _num(i["eps"]), _int(i["n"]))},
    "gamma_description_length": lambda i: {
        **_thr(C.gamma_description_length(_num(i["alpha"]), _int(i["n_outcomes"])), "gamma_maxinfo_route"),
        **_thr(C.gamma_bonferroni(_num(i["alpha"]), _int(i["n_outcomes"])), "gamma_bonferroni")},
    "corrected_pvalue_description_length": _dl_pvalue,
    "gamma_mi_via_maxinfo": _gamma_mi_via,
    "corrected_pvalue_mi_via_maxinfo": lambda i: {
        "beta_opt": C.optimal_beta_mi_via_maxinfo(_num(i["p_naive"]), _num(i["m"])),
        "p_corrected": C.corrected_pvalue_mi_via_maxinfo(_num(i["p_naive"]), _num(i["m"]))},
    "gamma_mi_russo_zou": _gamma_rz,
    "corrected_pvalue_mi_russo_zou": lambda i: {
        "p_corrected": C.corrected_pvalue_mi_russo_zou(_num(i["p_naive"]), _num(i["m"]))},
    "gamma_mi_kl": lambda i: _thr(C.gamma_mi_kl(_num(i["alpha"]), _num(i["m"]))),
    "corrected_pvalue_mi_kl": lambda i: {"p_corrected": C.corrected_pvalue_mi_kl(_num(i["p_naive"]), _num(i["m"]))},
    "crossover_mi_routes": _crossover,
    "crossover_slide_forms": lambda i: {"m_star": C.crossover_slide_forms(_num(i["alpha"])).mi_bits},
    "gamma_union_dl_and_pure_dp_product": _gamma_union,
    "corrected_pvalue_union_dl_and_pure_dp_product": lambda i: {
        "beta_opt": C.optimal_beta_union_dl_and_pure_dp_product(
            _num(i["p_naive"]), _int(i["n_outcomes_total"]), _num(i["eps"]), _int(i["n"])),
        "p_corrected": C.corrected_pvalue_union_dl_and_pure_dp_product(
            _num(i["p_naive"]), _int(i["n_outcomes_total"]), _num(i["eps"]), _int(i["n"]))},
    "mi_description_length": lambda i: (lambda m: {"I_bits": m.bits, "I_nats": m.nats})(
        B.mi_description_length(_int(i["n_outcomes"]))),
    "mi_pure_dp": _mi_pure,
    "mi_zcdp": _mi_zcdp,
    "mi_gaussian_statistical_queries": _mi_gauss,
    "zcdp_to_approx_dp": lambda i: {"eps": P.zcdp_to_approx_dp(_num(i["rho"]), _num(i["delta"])).epsilon},
    "advanced_composition": lambda i: (
        lambda r: {"eps_total": r.epsilon, "eps_basic": r.epsilon_basic, "delta_total": r.delta})(
        P.advanced_composition(_num(i["eps"]), _int(i["k"]), _num(i["delta_prime"]), delta=_num(i["delta_each"]))),
}

# Section 5: mechanism parameters (selective.mechanisms)
_DISPATCH.update({
    "laplace_scale": lambda i: (
        lambda r: {"scale_b": r.scale, "std": r.std, "tail_P_abs_ge_3b": r.tail_probability(3.0)})(
        M.laplace_scale(sensitivity=_num(i["sensitivity_l1"]), epsilon=_num(i["eps"]))),
    "gaussian_sigma_classic_and_analytic": lambda i: (lambda kw: (lambda s: {
        "sigma_classic_boundary": M.gaussian_sigma_classic(**kw), "sigma_analytic": s,
        "rho_zcdp_at_sigma_analytic": M.gaussian_rho(sigma=s, sensitivity=kw["sensitivity"])})(
            M.gaussian_sigma_analytic(**kw)))(
        dict(sensitivity=_num(i["sensitivity_l2"]), epsilon=_num(i["eps"]), delta=_num(i["delta"]))),
    "gaussian_sigma_analytic_large_eps": lambda i: {"sigma_analytic": M.gaussian_sigma_analytic(
        sensitivity=_num(i["sensitivity_l2"]), epsilon=_num(i["eps"]), delta=_num(i["delta"]))},
    "gaussian_delta_analytic": lambda i: {"delta": M.gaussian_delta_analytic(
        sigma=_num(i["sigma"]), epsilon=_num(i["eps"]), sensitivity=_num(i["sensitivity_l2"]))},
    "discrete_gaussian_delta": lambda i: (lambda r: {"delta": r.delta, "rho_zcdp": r.rho_zcdp})(
        M.discrete_gaussian_delta(sigma=_num(i["sigma"]), epsilon=_num(i["eps"]),
                                  sensitivity=_int(i["sensitivity_integer"]))),
    "exponential_mechanism_probabilities": lambda i: {"probabilities": list(M.exponential_mechanism_probabilities(
        [float(u) for u in i["utilities"]], epsilon=_num(i["eps"]), sensitivity=_num(i["sensitivity_u"])))},
    "exponential_mechanism_utility_gap": lambda i: (
        lambda r: {"utility_gap": r.utility_gap, "failure_probability": r.failure_probability})(
        M.exponential_mechanism_utility_gap(epsilon=_num(i["eps"]), sensitivity=_num(i["sensitivity_u"]),
                                            n_outcomes=_int(i["n_outcomes"]), n_optimal=_int(i["n_optimal"]),
                                            t=_num(i["t"]))),
    "oneshot_laplace_topk_scale": lambda i: (
        lambda r: {"laplace_scale": r.laplace_scale, "laplace_std": r.laplace_std})(
        M.oneshot_laplace_topk_scale(k=_int(i["k"]), n_candidates=_int(i["d"]), epsilon=_num(i["eps"]),
                                     delta=_num(i["delta"]))),
    "above_threshold_accuracy": lambda i: (lambda r: {"alpha_dr14": r.alpha_dr14, "alpha_smith": r.alpha_smith})(
        M.above_threshold_accuracy(n_queries=_int(i["n_queries"]), beta=_num(i["beta"]), epsilon=_num(i["eps"]),
                                   sensitivity=_num(i["sensitivity"]))),
    "sparse_noise_scales": lambda i: (
        lambda r: {"threshold_scale": r.threshold_scale, "query_scale": r.query_scale})(
        M.sparse_noise_scales(c=_int(i["c"]), epsilon=_num(i["eps"]), delta=_num(i["delta"]),
                              sensitivity=_num(i["sensitivity"]))),
    "svt_lyu_su_li_alg1_scales": lambda i: (lambda r: {"threshold_scale": r.threshold_scale,
                                                       "query_scale": r.query_scale,
                                                       "query_scale_monotone": r.query_scale_monotone})(
        M.svt_lyu_su_li_alg1_scales(c=_int(i["c"]), epsilon=_num(i["eps"]), sensitivity=_num(i["sensitivity"]))),
    "thresholdout_parameters": lambda i: (lambda r: {"T": r.threshold, "sigma": r.sigma, "n0": r.n0, "n1": r.n1,
                                                     "n_required": r.n_required,
                                                     "n1_exact_conditions": r.n1_exact_conditions})(
        M.thresholdout_parameters(_num(i["tau"]), _num(i["beta"]), _int(i["m_queries"]), _int(i["budget_B"]))),
    "thresholdout_privacy": lambda i: (lambda r: {"eps_pure": r.epsilon_pure, "eps_approx": r.epsilon_approx})(
        M.thresholdout_privacy(budget=_int(i["budget_B"]), n=_int(i["n"]), sigma=_num(i["sigma"]),
                               delta=_num(i["delta"]))),
    "sparsevalidate_ell": lambda i: (lambda r: {"ell_exact": r.ell_exact, "ell_as_printed": r.ell_as_printed,
                                                "m_pow_B": r.m_pow_B, "log2_ell_exact": r.log2_ell_exact})(
        M.sparsevalidate_ell(_int(i["i"]), _int(i["budget_B"]), _int(i["m"]))),
})

SUPPORTED_FORMULA_IDS = frozenset(_DISPATCH)


def evaluate_theory_vector(vector: dict) -> dict[str, float]:
    """Evaluate one theory vector with the package and return outputs under the vector's names.

    Raises ``KeyError`` for a ``formula_id`` it does not know.
    """
    fid = vector["formula_id"]
    if fid not in _DISPATCH:
        raise KeyError(f"unknown formula_id {fid!r}")
    return _DISPATCH[fid](_inputs(vector))


def run_r_case(case: dict, data_dir):  # pragma: no cover - thin re-export
    """Run an R selectiveInference reference case with the package (see ``_r_cases.py``)."""
    from _r_cases import run_r_case as _run

    return _run(case, data_dir)
