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
