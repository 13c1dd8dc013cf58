"""The batched one-example systems at every scale of the data: they integrate ẑ = z/2^k in the
time τ̂ = 2^k τ (Î = 2^(2k) I), an exact invariance of the flows, and map the results back.

Before: C4's reduced ℓ2 system (numpy engine and numba kernel) ended ``non_finite`` in every cell
from |z| ≈ 1e±154 on (ln z_j² and 2ρ z_j² I left float64), and from |z| ≈ 1e2 its absolute
tolerance on I ~ 1/z² no longer controlled anything (collapse times off by 3e-8 at 1e2, by
1e-2 at 1e6, where one member's regime came out wrong)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import sympy as sp
from _hang import hang_guard
from theorycheck.proofs.minor_first.reduced import REDUCTIONS
from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

from theorycheck.batched import engine as bt
from theorycheck.batched import systems as bsys
from theorycheck.batched.ops import NumpyOps
from theorycheck.errors import TheorycheckError
from theorycheck.status import Status
from theorycheck.sweep.recipes import heatmap as _heatmap
from theorycheck.sweep.run import RunOptions
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import theory_forms as MF

Z = np.array([1.0, 2.0, 1.5])
TIMES = np.array([0.5, 1.0, 2.0, 4.0])
ALPHAS = np.geomspace(0.05, 3.0, 12)  # collapse for the small ones, sequential amplification for the rest

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
heatmap = functools.partial(_heatmap, reductions=REDUCTIONS)


def _backends():
    from theorycheck.proofs.minor_first.reduced import kernel

    return ["numpy", "numba"] if kernel.available() else ["numpy"]


def _l2(z, times, backend):
    return heatmap(z, optimizer="sam-l2", rho=0.5, alphas=ALPHAS, times=times, backend="serial",
                   opts=RunOptions(array_backend=backend))


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("c", [1e2, 1e6, 1e-154, 1e154, 1e-300, 1e300])
def test_reduced_l2_heatmap_at_every_scale_is_the_unit_answer(backend, c):
    """z → cz with τ → τ/c: the same j† and statuses in every cell, collapse times c times
    smaller, I c² times smaller (where I is representable). The two runs are integrations of
    data that differ by the rounding of z·c (one ulp), each to rtol 1e-8: their event times
    agree to a few rtol (seen: ≤ 2e-10)."""
    ref = _l2(Z, TIMES, backend)
    with hang_guard(120):
        got = _l2(Z * c, TIMES / c, backend)
    np.testing.assert_array_equal(got["jdag"], ref["jdag"])
    np.testing.assert_array_equal(got["status"], ref["status"])
    assert set(np.unique(ref["status"])) == {Status.DONE.code, Status.COLLAPSE.code}
    col = np.isfinite(ref["event_collapse"])
    np.testing.assert_allclose(got["event_collapse"][col] * c, ref["event_collapse"][col], rtol=1e-7)
    np.testing.assert_allclose(got["t_stop"][col] * c, ref["t_stop"][col], rtol=1e-7)
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        I_ref = ref["I"] / c / c
    ok = np.isfinite(ref["I"]) & (np.abs(I_ref) > 1e-290) & (np.abs(I_ref) < 1e290)
    np.testing.assert_allclose(got["I"][ok], I_ref[ok], rtol=1e-7)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("k", [-1000, -600, 600, 1000])
def test_reduced_l2_at_a_power_of_two_is_bitwise_the_unit_run(backend, k):
    """z·2^k is the same problem exactly: the same steps, j† and statuses, and the times 2^k
    times smaller bit for bit."""
    ref = _l2(Z, TIMES, backend)
    got = _l2(np.ldexp(Z, k), np.ldexp(TIMES, -k), backend)
    for key in ("jdag", "status", "steps"):
        np.testing.assert_array_equal(got[key], ref[key])
    np.testing.assert_array_equal(np.ldexp(got["t_stop"], k), ref["t_stop"])
    np.testing.assert_array_equal(np.ldexp(got["event_collapse"], k), ref["event_collapse"])


def test_reduced_l2_log_norm_observable_maps_back():
    s0 = ReducedL2(Z, ALPHAS[-3:], 0.5, observe_norm=True)
    s1 = ReducedL2(np.ldexp(Z, 900), ALPHAS[-3:], 0.5, observe_norm=True)
    a = bt.integrate(s0, TIMES)
    b = bt.integrate(s1, np.ldexp(TIMES, -900))
    np.testing.assert_allclose(b.obs["log_norm"], a.obs["log_norm"] + 900 * math.log(2.0), rtol=1e-15)
    assert b.meta["data_log2_scale"] == 901 and a.meta["data_log2_scale"] == 1


@pytest.mark.parametrize("optimizer,depth", [("gd", 2), ("sam-linf", 2), ("sam-linf", 3), ("sam-l2", 2)])
@pytest.mark.parametrize("k", [-1000, 1000])
def test_balanced_log_at_a_power_of_two_is_bitwise_the_unit_run(optimizer, depth, k):
    """The balanced one-example field (θ = ln u) is homogeneous of degree 1 in (z, N): at z·2^k
    the same run, bit for bit (ℓ∞ at |z| ~ 1e300 ended non_finite: its event rate e^30·‖z‖
    overflowed)."""
    kw = {"method": "balanced"} if optimizer == "sam-l2" else {}
    ref = heatmap(Z, optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0], times=TIMES[:3], depth=depth,
                  backend="serial", **kw)
    got = heatmap(np.ldexp(Z, k), optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0],
                  times=np.ldexp(TIMES[:3], -k), depth=depth, backend="serial", **kw)
    for key in ("jdag", "status", "steps", "log_beta_max"):
        np.testing.assert_array_equal(got[key], ref[key])
    for key in ("t_stop", "event_collapse", "event_first_zero", "event_blowup"):
        if key in ref.arrays:
            np.testing.assert_array_equal(np.ldexp(got[key], k), ref[key])


def test_a_time_grid_outside_float64_in_the_data_units_is_a_one_line_error():
    with pytest.raises(TheorycheckError, match="float64 range") as e:
        bt.integrate(ReducedL2(Z * 1e300, [0.5], 0.5), [1.0, 1e10])
    assert "\n" not in str(e.value)


def test_tiny_entries_beside_large_ones_keep_their_term():
    """ẑ_j far below the largest (1e-200 beside 1): ẑ_j² underflowed, ln of the term was −inf
    and the coordinate dropped out of N. Its term is now K_j = ln 2 + 2 ln α + 2 ln|z_j|."""
    z = np.array([1e-200, 1.0])
    s = ReducedL2(z, [0.7], 0.5)
    K = np.asarray(s.coef[0]).reshape(-1)
    assert K[0] == pytest.approx(math.log(2.0) + 2 * math.log(0.7) + 2 * math.log(1e-200), rel=1e-15)
    b = bsys.BalancedLog(z, [0.7], 0.5, optimizer="sam-l2")
    lnN = b.log_norm(np.arange(1), np.log(np.array([[1e-300, 1e-300]])))
    # N² = 2 z_1² u_1² + 2 z_2² u_2²: the second term alone
    assert lnN[0] == pytest.approx(0.5 * math.log(2.0) + math.log(1e-300), rel=1e-14)


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf", "sam-l2"])
def test_several_tiny_examples_finish(optimizer):
    """Rows of size 1e-213, ℓ2-SAM: ln(term j of S²) squared G ~ 1e-213 and every member ended
    non_finite; the term is now evaluated at G/2^e plus 2e ln 2."""
    Zt = np.array([[1.0, 2.0], [2.0, 1.0]]) * 1e-213
    res = heatmap(Zt, optimizer=optimizer, rho=0.1, alphas=[0.5, 1.0], times=[1e212, 2e212], backend="serial")
    assert {Status.from_code(c) for c in res["status"]} <= {Status.DONE, Status.COLLAPSE}
    done = res["status"] == Status.DONE.code
    assert np.all(res["jdag"][done] >= 1)


def test_log_square_summand_is_the_log_of_the_square_everywhere():
    f = C.balanced_multi_log(2, "sam-l2").log_summand
    x = np.array([[1e-213, 3.0, -2e-300, 0.0, 1e250, 5e-324, -1e300]])
    th = np.array([[0.0, 1.0, -2.0, 0.0, 0.5, 0.0, 3.0]])
    with np.errstate(divide="ignore"):
        want = math.log(2.0) + 2 * th + 2 * np.log(np.abs(x))
        got = bsys.log_square_summand(NumpyOps(), f, x, th)
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-15)
    assert got[0, 3] == -np.inf
    y = np.array([[0.3, 1.0, 1.7]])  # no entry out of range: bitwise f itself
    np.testing.assert_array_equal(bsys.log_square_summand(NumpyOps(), f, y, th[:, :3]), f(y, th[:, :3]))


# ---------------------------------------------------------------- the invariances, on the symbolic forms
c_ = sp.Symbol("c", positive=True)


def test_reduced_l2_is_invariant_under_the_unit_change():
    """ln(term j of N²)(z/c, cτ, c² I) = ln(term j of N²)(z, τ, I) − 2 ln c, so N̂ = N/c and
    dÎ/dτ̂ = c dI/dτ = 1/N̂: the same ODE in the new units. Its τ-free part is ln z_j² plus
    terms free of z (what ReducedL2 evaluates at z_j·2^e)."""
    e = TE.l2_reduced_log_summand()
    moved = e.subs({cf.z_j: cf.z_j / c_, sy.tau: c_ * sy.tau, cf.I: c_**2 * cf.I}, simultaneous=True)
    assert sp.simplify(sp.expand_log(moved - e + 2 * sp.log(c_), force=True)) == 0
    lin = MF.reduced_l2_log_linear("numpy")
    c0 = TE.l2_reduced_log_summand().subs({sy.tau: 0, cf.I: 0})
    assert sp.simplify(sp.diff(c0, cf.z_j) - 2 / cf.z_j) == 0
    assert lin.c0(2.0, 0.5, 1.0) - lin.c0(1.0, 0.5, 1.0) == pytest.approx(2 * math.log(2.0), rel=1e-15)
    assert sp.simplify(TE.l2_switch_level().subs({cf.z_j: c_ * cf.z_j, cf.z_k: c_ * cf.z_k}) - c_ * TE.l2_switch_level()) == 0


@pytest.mark.parametrize("L,optimizer", [(2, "gd"), (2, "sam-l2"), (2, "sam-linf"), (3, "gd"), (3, "sam-linf")])
def test_balanced_field_is_homogeneous_in_z_and_n(L, optimizer):
    """dθ_j/dτ(cz, θ, N c) = c·dθ_j/dτ(z, θ, N) and ln(term of N²)(cz) = ln(term)(z) + 2 ln c:
    the balanced one-example flow at data cz is the flow at z in the time τ/c."""
    f = cf.balanced_log_field_factored(L, optimizer)
    moved = f.subs({cf.z_j: c_ * cf.z_j, cf.lnN: cf.lnN + sp.log(c_)}, simultaneous=True)
    assert sp.simplify(moved - c_ * f) == 0
    s = cf.balanced_log_norm_summand(L)
    zp = sp.Symbol("zp", positive=True)
    assert sp.simplify(sp.expand_log((s.subs(cf.z_j, c_ * zp) - s.subs(cf.z_j, zp)), force=True) - 2 * sp.log(c_)) == 0
    g = sp.Symbol("g", positive=True)
    m = cf.balanced_multi_log_norm_summand(L)
    assert sp.simplify(sp.expand_log(m.subs(cf.G_j, c_ * g) - m.subs(cf.G_j, g), force=True) - 2 * sp.log(c_)) == 0
