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


#: tests of 7–24 s each (measured with --durations on the 2-core host): they run in the full tier
#: (the README's test command, CI), not in the quick loop `-m "not slow"`
SLOW_IDS = frozenset({
    "tests/test_api.py::test_prove_refutes_c2_as_stated_and_matches_the_cli",
    "tests/test_claims.py::test_verdicts[C5.saddle]",
    "tests/test_claims.py::test_verdicts[E1.sam-limit]",
    "tests/test_new_claims.py::test_e1_sam_limit_orthant_not_unrestricted",
    "tests/test_integrate.py::test_collapse_l2_float_and_mp_agree[0.05]",
    "tests/test_claims_runner.py::test_a_claim_verdict_is_the_same_alone_and_after_other_claims",
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
