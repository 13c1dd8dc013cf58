"""proofs/: every step runs, identities are verified symbolically, and each finding
(refutation, incompleteness) is confirmed independently by integrating the compiled flow."""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from theorycheck.proofs.minor_first.theorems import theorems

from theorycheck.api import prove
from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import forms as tc
from theorycheck.symbolic.theorem import ERROR, INCOMPLETE, NUMERIC, REFUTED, VERIFIED, Fact, Identity, verified


@pytest.fixture(scope="module")
def results():
    return {r.theorem.key: r for r in prove(pack="minor-first").results}


def test_every_theorem_of_theory_md_is_registered():
    assert [t.key for t in theorems()] == ["R", "B", "C1", "C2", "C3", "C4", "C5", "C6", "P", "LOCK"]


@pytest.mark.slow
def test_no_step_crashes_and_identities_are_symbolic(results):
    for r in results.values():
        for step, res in r.steps:
            assert res.status != ERROR, (r.theorem.key, step.statement, res.detail)
            if isinstance(step, Identity):
                assert res.status == VERIFIED, (r.theorem.key, step.statement, res.detail)


@pytest.mark.slow
def test_statuses(results):
    assert {k: r.status for k, r in results.items()} == {
        "R": VERIFIED, "B": VERIFIED, "C1": VERIFIED, "C2": REFUTED, "C3": INCOMPLETE,
        "C4": VERIFIED, "C5": REFUTED, "C6": INCOMPLETE, "P": VERIFIED, "LOCK": VERIFIED,
    }
    for r in results.values():
        for _, res in r.steps:
            if res.status in (REFUTED, INCOMPLETE):
                assert res.counterexample, res.detail


def _find(results, key, fragment):
    for step, res in results[key].steps:
        if fragment in step.statement:
            return res
    raise AssertionError(f"no step of {key} mentions {fragment!r}")


def _integrate_balanced(L, opt, z, alpha, rho, tau):
    f = tc.balanced_field(L, opt)
    z = np.asarray(z, float)

    def rhs(_, u):
        N = np.sqrt(f.summand(z, u).sum()) if f.uses_norm else 1.0
        return f.field(z, u, N, rho)

    # smooth cases only: the tests never cross the ℓ∞ discontinuity at u = 0
    sol = solve_ivp(rhs, (0, tau), np.asarray(alpha, float), method="LSODA", rtol=1e-11, atol=1e-13)
    assert sol.success
    return sol.y[:, -1]


@pytest.mark.slow
def test_c2_tie_counterexample_by_integration(results):
    ce = _find(results, "C2", "ties").counterexample
    u = _integrate_balanced(2, "sam-linf", ce["z"], ce["alpha"], ce["rho"], 25.0)  # finite-τ gap ~ e^(−25)
    beta = u**2
    np.testing.assert_allclose(beta / np.linalg.norm(beta), ce["limit_direction"], rtol=1e-6)


@pytest.mark.slow
def test_c2_boundary_counterexample_by_integration(results):
    res = _find(results, "C2", "no α_j > ρ")
    assert res.status == REFUTED
    ce = res.counterexample
    z, alpha, rho = np.array(ce["z"], float), np.array(ce["alpha"], float), ce["rho"]
    tau_zero = np.log(rho / (rho - alpha[1])) / z[1]
    # integrate up to just before u_2 reaches 0 (past it the field is discontinuous: sliding, which proofs/ checks)
    u = _integrate_balanced(2, "sam-linf", z, alpha, rho, tau_zero * (1 - 1e-6))
    assert u[0] == pytest.approx(1.0, abs=1e-12)  # stationary at ρ
    assert 0 < u[1] < 1e-5


@pytest.mark.slow
def test_c3_odd_depth_below_rho_rises_to_rho(results):
    ce = _find(results, "C3", "α_j < ρ").counterexample
    u = _integrate_balanced(ce["L"], "sam-linf", ce["z"], ce["alpha"], ce["rho"], 2000.0)
    np.testing.assert_allclose(u, ce["rho"], rtol=1e-3)  # u = ρ − 1/(1/(ρ−α) + zτ): error ≈ 1/(zτ)
    assert np.all(u < ce["rho"])


@pytest.mark.slow
def test_c5_counterexamples_are_what_the_compiled_field_says(results):
    f = tc.balanced_field(2, "sam-l2", log=True)
    ce = _find(results, "C5", "ties at the top").counterexample
    np.testing.assert_allclose(f.field(np.array(ce["z"], float), 0.0, ce["N0"], ce["rho"]), ce["rates"], rtol=1e-14)
    ce = _find(results, "C5", "negative entry").counterexample
    z = np.array(ce["z"], float)
    N0 = np.sqrt(f.summand(z, np.full(2, np.log(ce["alpha"]))).sum())
    assert N0 == pytest.approx(ce["N0"], rel=1e-12)
    assert np.all(f.field(z, np.log(ce["alpha"]), N0, ce["rho"]) < 0)


@pytest.mark.slow
def test_c5_tie_break_at_second_order_by_integration(results):
    ce = _find(results, "C5", "j†(0+)").counterexample
    z = np.array(ce["z"], float)
    alpha = ce["N0"] / (np.sqrt(2) * np.linalg.norm(z))
    u = _integrate_balanced(2, "sam-l2", z, np.full(3, alpha), ce["rho"], 1e-3)
    assert int(np.argmax(u)) + 1 == ce["initial_index"]


def test_identity_machinery_refutes_false_and_verifies_true():
    x, y = sp.symbols("x y", positive=True)
    bad = Identity("wrong", (x + y) ** 2, x**2 + y**2).check()
    assert bad.status == REFUTED and bad.counterexample
    assert Identity("trig", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1).check().status == VERIFIED
    # an identity sympy's simplify cannot close is never reported as verified
    hard = Identity("opaque", (x + y) ** 2, x**2 + 2 * x * y + y**2, simplifier=lambda e: e).check()
    assert hard.status == NUMERIC
    assert Fact("f", lambda: verified("ok")).check().status == VERIFIED


def test_unknown_keys():
    with pytest.raises(TheorycheckError, match="unknown theorem"):
        prove(["C9"], pack="minor-first")
