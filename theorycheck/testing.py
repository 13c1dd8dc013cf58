"""A pack's claims as pytest tests, in one line of a user's test suite.

    # tests/test_theorems.py
    from theorycheck.testing import pack_tests

    test_kernel_rich = pack_tests("kernel-rich", profile="fast")

Each claim of the pack becomes one parametrised test (id = the claim's key) that runs the
claim exactly as ``theorycheck verify --pack NAME --profile P`` does: it passes when the
verdict is ``holds``, fails with the shrunk counterexample when it is ``fails`` or ``error``,
and is skipped when ``inconclusive`` (a check gave no verdict: a budget ran out, data are missing; pass ``inconclusive="fail"`` to fail
instead). Claims whose failure is known and expected (a statement the tool refines) are
listed in ``expect_fail``: they pass when they fail *and* their refined statement holds.

This module is also a pytest plugin (entry point ``pytest11``): it adds the option
``--theorycheck-profile {fast,thorough}``, which overrides the profile of every
``pack_tests`` in the run. Importing it is light (no sympy until a test runs).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["pack_tests", "pytest_addoption"]


def pytest_addoption(parser) -> None:
    group = parser.getgroup("theorycheck")
    group.addoption("--theorycheck-profile", choices=["fast", "thorough"], default=None,
                    help="profile of the claims run by theorycheck.testing.pack_tests (default: each call's own)")


def pack_tests(pack: str | None = None, *, profile: str = "fast", examples: int | None = None, seed: int = 0,
               claims: Iterable[str] | None = None, expect_fail: Iterable[str] = (), inconclusive: str = "skip"):
    """A pytest test function parametrised over the claims of ``pack`` (None: every installed
    pack), optionally only those matching ``claims`` (keys or prefixes, as ``verify --claims``).
    Needs pytest (the extra ``theorycheck[pack]``)."""
    try:
        import pytest
    except ImportError:
        from theorycheck.errors import TheorycheckError

        raise TheorycheckError("pack_tests needs pytest: pip install 'theorycheck[pack]' (or pip install pytest)") from None

    from theorycheck import packs

    if inconclusive not in ("skip", "fail", "pass"):
        raise ValueError("inconclusive must be 'skip', 'fail' or 'pass'")
    pairs = packs.select_claims(pack, list(claims) if claims else None)
    expected = set(expect_fail)
    unknown = expected - {c.key for _, c in pairs}
    if unknown:
        raise ValueError(f"expect_fail names claims not selected: {', '.join(sorted(unknown))}")

    @pytest.mark.parametrize("claim", [c for _, c in pairs], ids=[c.key for _, c in pairs])
    def test_claim(claim, request):
        from theorycheck.claims.claim import Verdict
        from theorycheck.claims.runner import PROFILES, run_claim

        prof = request.config.getoption("--theorycheck-profile", default=None) or profile
        n = examples if examples is not None else PROFILES[prof]
        v = run_claim(claim, examples=n, seed_=seed)
        where = f"{claim.key}: {claim.statement}"
        if v.status == Verdict.ERROR:
            pytest.fail(f"{where}\n{v.message}\ninput: {v.counterexample}", pytrace=False)
        if claim.key in expected:
            if v.status != Verdict.FAILS:
                pytest.fail(f"{where}\nexpected to fail, but the verdict is {v.status}", pytrace=False)
            if v.refined is not None and v.refined.status not in (Verdict.HOLDS, Verdict.INCONCLUSIVE):
                pytest.fail(f"{where}\nfails as expected, but its refined statement {v.refined.key} "
                            f"{v.refined.status}: {v.refined.counterexample}", pytrace=False)
            return
        if v.status == Verdict.FAILS:
            pytest.fail(f"{where}\n{v.message}\ncounterexample: {v.counterexample}\nobserved: "
                        f"{v.counterexample_detail}", pytrace=False)
        if v.status == Verdict.INCONCLUSIVE:
            msg = f"{where}\n{v.message}"
            if inconclusive == "fail":
                pytest.fail(msg, pytrace=False)
            if inconclusive == "skip":
                pytest.skip(msg)

    return test_claim
