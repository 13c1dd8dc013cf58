"""One definition per formula: every numerical code path that evaluates a unified formula
(C4's reduced ODE with its clocks, C5's certificate and stop levels, Lo and ∂Lo/∂β) against
the sympy expression it comes from, evaluated independently at 50 digits (mpmath), on
random inputs over many scales."""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from theorycheck.proofs.minor_first.reduced import kernel as kn
from theorycheck.proofs.minor_first.reduced.batch import ReducedL2
from theorycheck.proofs.minor_first.reduced.flow import ReducedL2System

from theorycheck import status as S_
from theorycheck.batched import systems as bsys
from theorycheck.solvers import discrete
from theorycheck.solvers.backends import FloatBackend, MpBackend
from theorycheck.solvers.systems import LayersSystem, Thresholds
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import theory_forms as MF

EPS = float(np.finfo(float).eps)
DPS = 50


# ---------------------------------------------------------------- references (plain sympy, 50 digits)
@functools.cache
def _plain_reduced(kind):
    """The plain sympy forms (not the rewritten ones the solvers compile), for mpmath."""
    return (sp.lambdify((cf.z_j, sy.tau, cf.I, cf.alpha, sy.rho), TE.l2_reduced_summand(), "mpmath"),
            sp.lambdify((cf.N, TE.c_clock), TE.l2_reduced_clocked(kind), "mpmath"),
            sp.lambdify((cf.z_min, sy.rho), TE.l2_clock_scale(), "mpmath"))


def _ref_reduced(z, alpha, rho, tau, I, kind="smooth"):
    """(ln N, dτ/ds, dI/ds, scale) of C4's reduced ODE from the plain forms: N² = Σ_j
    l2_reduced_summand, (κ, κ/N) with κ = N/(N + c), c = l2_clock_scale at the smallest
    positive z. ``scale`` bounds the exponents (for the float error)."""
    summand, clocked, cscale = _plain_reduced(kind)
    with mpmath.workdps(DPS):
        mp = mpmath.mpf
        N2 = mpmath.fsum(summand(mp(zj), mp(tau), mp(I), mp(alpha), mp(rho)) for zj in z)
        N = mpmath.sqrt(N2)
        c = cscale(mp(float(min(x for x in z if x > 0))), mp(rho))
        dtau, dI = clocked(N, c)
        scale = max(abs(mpmath.log(2 * mp(zj) ** 2)) + abs(mpmath.log(alpha)) + 2 * abs(zj * tau)
                    + 2 * abs(rho * zj**2 * I) for zj in z if zj != 0)
        return mpmath.log(N), mp(dtau), mp(dI), float(scale)


def _random_members(rng, count):
    """(z, α, ρ, τ, I) over many scales: z with 1–8 entries in [1e-3, 1e3] (some negative or
    zero, at least one positive), α in [1e-6, 1e6], ρ 0 or in [1e-4, 1e4], τ in [0, 1e3],
    I in [0, 1e3]."""
    out = []
    for _ in range(count):
        d = int(rng.integers(1, 9))
        z = 10 ** rng.uniform(-3, 3, d)
        z[rng.random(d) < 0.2] *= -1
        z[rng.random(d) < 0.1] = 0.0
        z[int(rng.integers(d))] = abs(z[int(rng.integers(d))]) or 1.0
        if not np.any(z > 0):
            z[0] = 1.0
        alpha = float(10 ** rng.uniform(-6, 6))
        rho = 0.0 if rng.random() < 0.15 else float(10 ** rng.uniform(-4, 4))
        tau = 0.0 if rng.random() < 0.1 else float(10 ** rng.uniform(-6, 3))
        I = 0.0 if rng.random() < 0.1 else float(10 ** rng.uniform(-6, 3))
        out.append((z, alpha, rho, tau, I))
    return out


def _assert_reduced(lnN, dtau, dI, ref, what):
    rl, rt, ri, scale = ref
    tol = 64 * EPS * (1 + scale)  # absolute in ln N: the exponents carry |·|·eps each
    assert abs(float(lnN) - float(rl)) <= tol, (what, float(lnN), float(rl), tol)
    for got, want in ((dtau, rt), (dI, ri)):
        w = float(want)
        if w < 1e-300:  # underflows in float64: 0 or a subnormal
            assert float(got) < 1e-290, (what, float(got), w)
        elif w == np.inf:  # overflows in float64 (the arc clock's dτ/ds = N at N > 1.8e308)
            assert float(got) == np.inf, (what, float(got))
        else:
            assert abs(float(got) / w - 1) <= 2 * tol + 8 * EPS, (what, float(got), w, tol)


MEMBERS = _random_members(np.random.default_rng(20260301), 120)


def _in_units(s, tau, I):
    """(τ̂, Î) = (2^k τ, 2^(2k) I): the units a one-example batched system integrates in
    (ẑ = z/2^k; theorycheck/batched/systems/__init__.py, Units). There N̂ = N/2^k, the clock κ is the
    same and dÎ/dŝ = 2^k dI/ds."""
    k = s.time_log2
    return np.ldexp(tau, k), np.ldexp(I, 2 * k)


def test_batched_reduced_l2_rates_equal_the_symbolic_ode():
    """batched ReducedL2: ln N (affine coefficients) and the smooth clock (compiled)."""
    for z, alpha, rho, tau, I in MEMBERS:
        s = ReducedL2(z, [alpha], [rho])
        idx = np.arange(1)
        th, Ih = _in_units(s, tau, I)
        lnN = s.log_norm(idx, np.array([th]), np.array([Ih]))[0] + s.time_log2 * math.log(2.0)
        with np.errstate(all="ignore"):
            dtau, dI = s.rates(idx, np.array([th]), np.array([[Ih]]))
        dI = np.ldexp(dI, -s.time_log2)
        _assert_reduced(lnN, dtau[0], dI[0, 0], _ref_reduced(z, alpha, rho, tau, I), (z, alpha, rho, tau, I))


def test_numba_kernel_field_equals_the_compiled_symbolic_form():
    """The compiled kernel's hand-written ln N and clock (``_log_norm``, ``_field``) against
    the compiled symbolic form (log summand + smooth clock) and the 50-digit reference, on
    many random members at extreme scales (the kernel is kept hand-written for speed)."""
    log_summand = MF.reduced_l2_log("numpy")
    clocked = MF.reduced_l2_clocked("smooth", "numpy")
    for z, alpha, rho, tau, I in MEMBERS:
        s = ReducedL2(z, [alpha, 2 * alpha], [rho])
        K, A, G = (np.ascontiguousarray(np.asarray(c, dtype=float)) for c in s.coef)
        for b, a in enumerate((alpha, 2 * alpha)):
            buf, out = np.empty(z.size), np.empty(2)
            lc = float(np.asarray(s.log_c).reshape(-1)[min(b, np.asarray(s.log_c).size - 1)])
            th, Ih = _in_units(s, tau, I)
            shift = s.time_log2 * math.log(2.0)  # ln N − ln N̂
            lnN = kn._field(K, A, G, b, lc, th, Ih, buf, out)
            assert lnN == kn._log_norm(K, A, G, b, th, Ih, buf)
            lnN += shift
            with np.errstate(all="ignore"):
                terms = log_summand(z, tau, I, a, rho)
                m = np.max(terms)
                want_lnN = C.log_norm("numpy")(np.log(np.sum(np.exp(terms - m))) + m)
                want = clocked(want_lnN - shift, lc)
            ref = _ref_reduced(z, a, rho, tau, I)
            tol = 64 * EPS * (1 + ref[3])
            assert abs(lnN - want_lnN) <= tol
            for got, w in zip(out, want):
                assert got == pytest.approx(float(w), rel=2 * tol + 8 * EPS, abs=1e-300)
            _assert_reduced(lnN, out[0], np.ldexp(out[1], -s.time_log2), ref, ("kernel", z, a, rho, tau, I))


@pytest.mark.parametrize("backend", ["float", "mpmath"])
def test_reduced_system_rhs_in_both_clocks(backend):
    """solve's ReducedL2System: dI/dτ = 1/N in the time clock, (dI/ds, dτ/ds) = (1, N) in the arc clock."""
    rng = np.random.default_rng(7)
    for z, alpha, rho, tau, I in _random_members(rng, 25 if backend == "mpmath" else 80):
        bk = MpBackend(30) if backend == "mpmath" else FloatBackend()
        with mpmath.workdps(30):
            sysm = ReducedL2System(bk, z, alpha, rho, Thresholds.for_backend(bk))
            f_time = sysm.rhs(bk.num(tau), bk.array([I]))
            arc = sysm.copy()
            arc.clock = "arc"
            f_arc = arc.rhs(bk.num(0), bk.array([I, tau]))
            lnN = sysm.lnN(bk.num(tau), bk.num(I))
        ref_t = _ref_reduced(z, alpha, rho, tau, I, "time")
        _assert_reduced(lnN, 1.0, f_time[0], ref_t, ("time", z, alpha, rho, tau, I))
        ref_a = _ref_reduced(z, alpha, rho, tau, I, "arc")
        _assert_reduced(lnN, f_arc[1], f_arc[0], ref_a, ("arc", z, alpha, rho, tau, I))


def test_smooth_clock_branches_are_the_clock():
    """The overflow-free form of κ = N/(N + c): each branch of the Piecewise equals κ, and
    dI/ds = κ/N; the time and arc forms are (1, 1/N) and (N, 1)."""
    kappa, dI = TE.l2_reduced_clocked_log("smooth")
    plain_k, plain_i = (e.subs({cf.N: sp.exp(cf.lnN), TE.c_clock: sp.exp(TE.ln_c)}) for e in TE.l2_reduced_clocked("smooth"))
    for branch, _ in kappa.args:
        assert sp.simplify(branch - plain_k) == 0
    assert sp.simplify(dI.subs(kappa, plain_k) - plain_i) == 0
    assert TE.l2_reduced_clocked("time") == (1, 1 / cf.N)
    assert TE.l2_reduced_clocked("arc") == (cf.N, 1)
    with pytest.raises(ValueError, match="unknown clock"):
        TE.l2_reduced_clock("wall")
    # extreme arguments: no NaN, the right limits
    f = MF.reduced_l2_clocked("smooth")
    with np.errstate(all="ignore"):
        k, i = f(np.array([-800.0, 800.0, 0.0, 5.0]), np.array([0.0, 0.0, -np.inf, 5.0]))
    np.testing.assert_array_equal(k, [0.0, 1.0, 1.0, 0.5])
    assert i[0] == pytest.approx(1.0) and i[1] == 0.0 and i[2] == 1.0 and i[3] == pytest.approx(0.5 * np.exp(-5.0))


# ---------------------------------------------------------------- C5's certificates
def test_certificate_levels_equal_the_symbolic_ones_everywhere_they_are_used():
    rng = np.random.default_rng(11)
    for _ in range(25):
        d = int(rng.integers(1, 7))
        z = 10 ** rng.uniform(-3, 3, d)
        z[rng.random(d) < 0.25] *= -1
        z[int(rng.integers(d))] = abs(z[0]) + 0.5
        rho = np.array([0.0, float(10 ** rng.uniform(-4, 4))])
        tol = float(10 ** rng.uniform(-14, -6))
        zpos, zmax, m = z[z > 0].min(), z.max(), np.abs(z[z != 0]).min()
        want = {"collapse": TE.l2_collapse_certificate().subs({cf.z_min: zpos, sy.rho: rho[1]}),
                "no_collapse": TE.l2_no_collapse_certificate().subs({cf.z_1st: zmax, sy.rho: rho[1]}),
                "stop": TE.l2_collapse_stop_level().subs({TE.z_abs_min: m, cf.z_1st: zmax, sy.rho: rho[1],
                                                          TE.stop_tol: tol}),
                "clock_scale": TE.l2_clock_scale().subs({cf.z_min: zpos, sy.rho: rho[1]})}
        lv = MF.l2_certificate_levels(z, rho, tol)
        for k, v in want.items():
            assert lv[k][0] == 0.0 and lv[k][1] == pytest.approx(float(v), rel=4 * EPS), k
        # the batched systems (and through them the kernel's inputs) hold their logs, in their
        # units ẑ = z/2^k (the levels are homogeneous of degree 1 in z: ln level − k ln 2)
        s = ReducedL2(z, [0.3, 0.3], rho, collapse_tol=tol)
        lvh = MF.l2_certificate_levels(np.ldexp(z, -s.time_log2), rho, tol)
        with np.errstate(divide="ignore"):
            for attr, k in (("log_c", "clock_scale"), ("log_cert", "collapse"), ("log_safe", "no_collapse"),
                            ("log_stop", "stop")):
                np.testing.assert_array_equal(np.asarray(getattr(s, attr)), np.log(lvh[k]), err_msg=attr)
                np.testing.assert_allclose(np.asarray(getattr(s, attr))[1] + s.time_log2 * math.log(2.0),
                                           np.log(lv[k][1]), rtol=1e-14, atol=1e-14, err_msg=attr)
        b = bsys.BalancedLog(z, [0.3, 0.3], rho, optimizer="sam-l2", collapse_tol=tol)
        assert b.time_log2 == s.time_log2
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(np.asarray(b.log_stop), np.log(lvh["stop"]))
            np.testing.assert_array_equal(np.asarray(b.log_cert), np.log(lvh["collapse"]))
    # the certificates are where the rates of l2_log_rate change sign
    rate = TE.l2_log_rate()
    assert sp.simplify(rate.subs({cf.z_j: cf.z_min, cf.N: TE.l2_collapse_certificate()})) == 0
    assert sp.simplify(rate.subs({cf.z_j: cf.z_1st, cf.N: TE.l2_no_collapse_certificate()})) == 0


def test_thresholds_classification_uses_the_certificates():
    from theorycheck.proofs.minor_first.predict import alpha_c as AC

    z = np.array([1.0, 2.0, 3.0])
    c = AC.classify_collapse(z, 0.2, 1.0)
    assert c.collapses is True and c.N < float(TE.l2_collapse_certificate().subs({cf.z_min: 1.0, sy.rho: 1.0}))
    c = AC.classify_collapse(z, 3.0, 1.0)
    assert c.collapses is False and c.N >= float(TE.l2_no_collapse_certificate().subs({cf.z_1st: 3.0, sy.rho: 1.0}))


# ---------------------------------------------------------------- Lo and ∂Lo/∂β
@functools.cache
def _plain_risk(n, d, loss):
    W, Zs = sy.layer_symbols(1, d), sy.data_symbols(n, d)
    args = list(W) + list(Zs)
    return (sp.lambdify(args, sy.empirical_loss(W, Zs, loss), "mpmath"),
            sp.lambdify(args, list(sy.loss_gradient_factor(Zs, W, loss)), "mpmath"))


def _ref_risk(beta, Z, loss):
    """(Lo, ∂Lo/∂β) from symbolic.empirical_loss and symbolic.loss_gradient_factor (L = 1: β = w)."""
    lo, g = _plain_risk(*Z.shape, loss)
    with mpmath.workdps(DPS):
        vals = [mpmath.mpf(float(x)) for x in list(beta) + list(Z.reshape(-1))]
        return lo(*vals), [mpmath.mpf(v) for v in g(*vals)]


def _risk_cases(seed=3, count=12):
    rng = np.random.default_rng(seed)
    for k in range(count):
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        Z = rng.normal(size=(n, d)) * 10 ** rng.uniform(-2, 1)
        beta = rng.normal(size=d) * 10 ** rng.uniform(-2, 1.5)
        yield Z, beta, sy.LOSSES[k % 2]


def _close(got, want, scale):
    got = np.asarray(got, dtype=float).reshape(-1)
    want = np.array([float(w) for w in np.ravel(want)])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * scale)


def test_risk_and_gradient_every_path_against_sympy():
    torch = pytest.importorskip("torch")
    for Z, beta, loss in _risk_cases():
        ref_lo, ref_g = _ref_risk(beta, Z, loss)
        dell = C.stable_loss_functions(loss)[1]
        scale = float(np.sum(np.abs(dell(Z @ beta))[:, None] * np.abs(Z)) / Z.shape[0]) + 1e-300
        dot = C.empirical_risk(loss)
        ew = C.empirical_risk(loss, "numpy", "elementwise")
        _close(dot.gradient(beta, Z), ref_g, scale)
        _close(ew.gradient(beta, Z), ref_g, scale)
        _close(ew.gradient(np.stack([beta, beta]), Z)[1], ref_g, scale)  # a batch of members
        _close([dot.value(beta, Z)], [ref_lo], float(ref_lo))
        _close([ew.value(beta, Z)], [ref_lo], float(ref_lo))
        tr = C.empirical_risk(loss, "torch", "elementwise")
        bt_, Zt = torch.tensor(beta[None, :], dtype=torch.float64), torch.tensor(Z, dtype=torch.float64)
        _close(tr.gradient(bt_, Zt).numpy(), ref_g, scale)
        # mpmath object arrays (solve's LayersSystem at high precision)
        bk = MpBackend(30)
        with mpmath.workdps(30):
            mp_r = C.empirical_risk(loss, "mpmath")
            g = mp_r.gradient(bk.array(beta), bk.array(Z), apply=bk.call)
        _close([float(x) for x in g], ref_g, scale)


def test_solvers_use_the_one_risk():
    """solve's LayersSystem.G, the batched MultiExample (gradient and loss observable) and the
    discrete step's layer gradient, against sympy."""
    for Z, beta, loss in _risk_cases(seed=5, count=8):
        ref_lo, ref_g = _ref_risk(beta, Z, loss)
        dell = C.stable_loss_functions(loss)[1]
        scale = float(np.sum(np.abs(dell(Z @ beta))[:, None] * np.abs(Z)) / Z.shape[0]) + 1e-300
        d = Z.shape[1]
        for bk in (FloatBackend(), MpBackend(30)):
            with mpmath.workdps(30):
                lay = LayersSystem(bk, Z, np.abs(beta)[None, :] + 0.1, 1, 0.0, "gd", loss, rescaled=False, tied=False,
                                   thr=Thresholds.for_backend(bk))
                g = lay.G(bk.array(beta[None, :]))
            _close([float(x) for x in g], ref_g, scale)
        # batched, several examples: at u = |β|^{1/2} (L = 2, positive β)
        bpos = np.abs(beta) + 0.05
        ref_lo, ref_g = _ref_risk(bpos, Z, loss)
        scale = float(np.sum(np.abs(dell(Z @ bpos))[:, None] * np.abs(Z)) / Z.shape[0]) + 1e-300
        me = bsys.MultiExample(Z, np.sqrt(bpos)[None, :], [0.0], L=2, optimizer="gd", loss=loss)
        _close(me._G(bpos[None, :])[0], ref_g, scale)
        obs = me.observe(np.arange(1), np.zeros(1), np.log(np.sqrt(bpos))[None, :])
        _close(obs["loss"], [ref_lo], float(ref_lo))
        # the discrete algorithm: ∇_W Lo for L = 2 layers (W = [β/v; v]) against sympy's gradient
        v = np.linspace(0.5, 1.5, d)
        W = np.stack([bpos / v, v])
        Ws, Zs = sy.layer_symbols(2, d), sy.data_symbols(*Z.shape)
        grad = sp.lambdify(list(Ws) + list(Zs), list(sy.gradient(sy.empirical_loss(Ws, Zs, loss), Ws)), "mpmath")
        with mpmath.workdps(DPS):
            want = grad(*[mpmath.mpf(float(x)) for x in list(W.reshape(-1)) + list(Z.reshape(-1))])
        got = discrete._gradient(W, Z, C.empirical_risk(loss), C.layer_gradient(2))
        _close(got.reshape(-1), want, scale * float(np.max(np.abs(W))))


def test_risk_contraction_is_checked():
    with pytest.raises(ValueError, match="contraction"):
        C.empirical_risk("logistic", "numpy", "blas")


def test_scaled_collapse_reaches_its_stop_on_both_engines():
    """(α, ρ) → c(α, ρ) rescales N by c and leaves τ unchanged. At c = 1e-300 the collapse stop
    lies below N = e^{−709}, where κ·e^{−ln N} was 0·∞ or ∞ (status non_finite, no collapse);
    the clock's form for tiny N (1/(N + c)) reaches the stop at the same τ as c = 1."""
    z, grid = np.array([1.0, 2.0]), np.linspace(0.5, 20.0, 40)
    from theorycheck.batched import engine as bt

    for run in (bt.integrate, kn.integrate_reduced):
        if run is kn.integrate_reduced and not kn.available():
            continue
        with np.errstate(all="ignore"):
            r = run(ReducedL2(z, [0.1, 1e-151, 1e-301], [1.0, 1e-150, 1e-300]), grid)
        assert [s.value for s in map(S_.Status.from_code, r.status)] == ["collapse"] * 3
        np.testing.assert_allclose(r.events["collapse"], r.events["collapse"][0], rtol=1e-6)


# ---------------------------------------------------------------- one definition each, the smaller ones
def test_log_norm_is_half_the_log_sum_of_the_summands():
    """ln N = ½ ln Σ_j (term j of N²) (closed_forms.log_norm_of_lse), compiled for every backend,
    against ln √(Σ e^{s_j}) at 50 digits."""
    rng = np.random.default_rng(3)
    f, fm = C.log_norm("numpy"), C.log_norm("mpmath")
    for _ in range(200):
        s_ = rng.normal(0, 10 ** rng.uniform(0, 5), size=rng.integers(1, 7))
        with mpmath.workdps(DPS):
            lse = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(v))) for v in s_))
            want = mpmath.log(mpmath.sqrt(mpmath.fsum(mpmath.exp(mpmath.mpf(float(v))) for v in s_)))
            assert abs(fm(lse) - want) <= mpmath.mpf(10) ** (-40) * (1 + abs(want))
        assert f(float(lse)) == float(lse) / 2  # halving is exact in binary
    assert np.isneginf(f(-np.inf)) and np.isposinf(f(np.inf))


def test_dataset_mean_loss_is_the_symbolic_logistic_loss():
    """predict.dataset.mean_logistic_loss against ℓ(m) = log(1 + e^{−m}) from symbolic.model (50
    digits), at margins from −700 to 1e300 and at ±∞ (where it is exact: 0 and ∞)."""
    from theorycheck.proofs.minor_first.predict.dataset import mean_logistic_loss

    ell = sp.lambdify(sy.s, sy.loss_expr("logistic"), "mpmath")
    for m in (-700.0, -30.0, -1.0, -1e-12, 0.0, 1e-12, 0.5, 3.0, 40.0, 700.0):
        with mpmath.workdps(DPS + int(max(m, 0) / 2)):  # 1 + e^{−m} needs m/ln 10 more digits
            want = ell(mpmath.mpf(m))
        got = mean_logistic_loss([m])
        assert abs(got - float(want)) <= 4 * EPS * float(want), m
    assert mean_logistic_loss([1e5]) == mean_logistic_loss([1e300]) == 0.0  # e^{−m} below the float range
    assert mean_logistic_loss([np.inf, np.inf]) == 0.0
    assert mean_logistic_loss([1.0, -np.inf]) == np.inf
    with mpmath.workdps(DPS):
        want = (ell(mpmath.mpf(1)) + ell(mpmath.mpf(-2))) / 2
    assert mean_logistic_loss([1.0, -2.0]) == pytest.approx(float(want), rel=4 * EPS)


def test_predictor_multiplies_the_layers_in_order():
    """compile.predictor (the model's β = w_1 ⋯ w_L) multiplies in layer order, as the
    single-trajectory solver's products did: bitwise equal to np.prod over the layers, L ≥ 10 too."""
    rng = np.random.default_rng(5)
    for L in (1, 2, 3, 9, 10, 11, 13):
        W = rng.uniform(0.3, 3.0, size=(L, 7)) * rng.choice([-1, 1], size=(L, 7))
        assert np.array_equal(C.predictor(L)(*W), np.prod(W, axis=0)), L
        Wm = np.array([[mpmath.mpf(float(v)) for v in row] for row in W], dtype=object)
        assert all(a == b for a, b in zip(C.predictor(L)(*Wm), np.prod(Wm, axis=0)))


def test_the_critical_point_rule_is_one_rule():
    """solvers.critical: the event value (single trajectories) is < 0 exactly when the batched
    comparison holds (infinities included; neither ratio is nan: an underflowed Lo gives +∞); the
    levels are the start values lowered by SINGULAR_LOG."""
    from theorycheck.solvers import critical

    vals = [-np.inf, -50.0, -9.21, -9.2103403719761836, -1.0, 0.0, 1e-300, 3.0, np.inf]
    for rel in vals:
        for relg in vals:
            for l1, l2 in ((-9.2103403719761836, 0.0), (-np.inf, 2.0), (np.inf, -3.0)):
                with np.errstate(invalid="ignore"):
                    e = critical.excess(rel, relg, l1, l2)
                    b = bool(critical.below(np.array([rel]), np.array([relg]), l1, l2)[0])
                assert (e < 0) == b
    assert critical.levels(1.0, 2.0) == (1.0 + np.log(1e-4), 2.0 + np.log(1e-4))
    assert critical.away_from_zero(0.0, 0.0) and not critical.away_from_zero(np.log(1e-3), 0.0)
    from theorycheck.batched.systems import MultiExample
    from theorycheck.solvers.systems.layers import LayersSystem as LS

    assert LS.SINGULAR_LOG == MultiExample.SINGULAR_LOG == critical.SINGULAR_LOG
