"""Shared pytest configuration: hypothesis profiles (fast for CI, thorough on demand)."""

import os

import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("fast", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("THEORYCHECK_PROFILE", "fast"))


@pytest.fixture(autouse=True)
def _reset_mpmath_precision():
    """mpmath's precision is global state: no test may leak a change of it."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


#: tests of 3–32 s each (measured with --durations on the 2-core host): they run in the full tier
#: (the README's test command, CI), not in the quick loop `-m "not slow"`
SLOW_IDS = frozenset({
    "tests/test_api.py::test_prove_refutes_c2_as_stated_and_matches_the_cli",
    "tests/test_claims.py::test_verdicts[C5.saddle]",
    "tests/test_claims.py::test_verdicts[E1.sam-limit]",
    "tests/test_new_claims.py::test_e1_sam_limit_orthant_not_unrestricted",
    "tests/test_integrate.py::test_collapse_l2_float_and_mp_agree[0.05]",
    "tests/test_claims_runner.py::test_a_claim_verdict_is_the_same_alone_and_after_other_claims",
    # 3–32 s each under load (--durations=80 on the 2-core host): each has a cheaper sibling of the same
    # feature in the quick loop (named after it)
    "tests/test_packs_equal.py::test_every_pack_runs_through_prove_verify_and_reproduce_listings[minor_first]",  # the other four packs
    "tests/test_depth_float.py::test_scaling_laws",  # test_threshold_width_and_theta_flow_agrees[4-z0]
    "tests/test_depth_float.py::test_threshold_width_and_theta_flow_agrees[4-z1]",
    "tests/test_depth_float.py::test_threshold_width_and_theta_flow_agrees[4-z2]",
    "tests/test_depth_float.py::test_threshold_width_and_theta_flow_agrees[6-z1]",
    "tests/test_depth_float.py::test_threshold_width_and_theta_flow_agrees[6-z2]",
    "tests/cnn/test_cnn_experiment.py::test_end_to_end_json_keys_and_sane_values",  # test_docs_keys[cnn]
    "tests/test_claims.py::test_verdicts[C1.several-examples]",  # the other C1 verdicts
    "tests/test_claims.py::test_verdicts[E1.sam-order]",
    "tests/test_new_claims.py::test_e1_sam_order_refined_holds_and_its_pin_goes_down_then_up",
    "tests/test_regression_flows.py::test_per_coordinate_alpha_and_the_effective_scale",
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[uv-n-sam-0.01]",  # [uv-gd-0.01]
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[uv-1-sam-1.0]",
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[pm-n-sam-0.01]",
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[pm-gd-0.01]",
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[uv-n-sam-1.0]",
    "tests/test_numerics.py::test_reproduce_cli_single_experiment_json",  # test_docs_keys[reproduce]
    "tests/test_certificate_depth.py::test_depth_certificate_accepted_and_tampering_rejected",  # certificates_of_today
    "tests/test_regime_map.py::test_pieces_agree_with_float_trajectories[0.505-0.51-growth]",
    "tests/cnn/test_cnn_sam.py::test_one_step_equals_symbolic_iteration[3-asam]",  # the L = 2 cases
    "tests/cnn/test_cnn_sam.py::test_one_step_equals_symbolic_iteration[3-sam-l2]",
    "tests/cnn/test_cnn_sam.py::test_one_step_equals_symbolic_iteration[3-sam-linf]",
    "tests/test_exact_inputs.py::test_a_17_digit_bracket_of_decimal_inputs_meets_the_exact_scaling[1,2,3-z_int1-0.1]",
    "tests/test_certificate_forgeries.py::test_forgeries_are_rejected_for_what_they_fail_to_prove[a bracket wider than the runs' \\u03b1-depth]",
    "tests/test_lemmas.py::test_wrong_field_is_not_cooperative_by_the_same_proof",  # test_wrong_ratio_field_is_refuted
    "tests/test_lemmas.py::test_wrong_weights_are_refuted",
    "tests/test_lemmas.py::test_wrong_blowup_is_refuted",
    "tests/test_integrate.py::test_blowup_times[20-3-sam-linf]",
    "tests/test_integrate.py::test_blowup_times[20-4-gd]",
    "tests/test_integrate.py::test_blowup_times[20-4-sam-linf]",
    "tests/test_integrate.py::test_blowup_times[20-5-sam-linf]",
    "tests/test_sam_regression.py::test_the_identity_holds_along_flows_to_rounding",
    "tests/test_discrete.py::test_discrete_converges_to_the_flow_along_the_path[gd-0.0]",  # [sam-l2], [asam]
    "tests/test_regression_flows.py::test_engine_agrees_with_an_independent_integration[pm-1-sam-1.0]",
    "tests/test_depth_float.py::test_threshold_width_and_theta_flow_agrees[6-z0]",
    "tests/test_certificate_examples.py::test_readme_l2_certificates_are_accepted[6]",  # [12]
})


def pytest_configure(config):
    """With pytest-xdist (``-n N``) every worker is a process of its own, one per core: thread pools of
    their own (OpenBLAS, OpenMP for torch) would put 2N threads on N cores. The workers are started
    after this hook and inherit the environment; a run without ``-n`` keeps the defaults."""
    if getattr(config.option, "numprocesses", None):
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in SLOW_IDS:
            item.add_marker(pytest.mark.slow)
