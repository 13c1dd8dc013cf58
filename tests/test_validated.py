"""Validated (ball-arithmetic) integration: enclosures of exact solutions, the series-cap trap, interval
parameters, budgets, and proved fates / brackets of α_c."""

from __future__ import annotations

import mpmath as mp
import pytest
import sympy as sp
from flint import arb, arb_series, ctx

from theorycheck.arith.balls import arb_context
from theorycheck.proved.validated import integrate
from theorycheck.proved.validated.taylor import coefficient, series_solution
from theorycheck.status import Budget, Status
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import validated_fields as S


def _system(name, spec):
    t, x, p, f = spec
    return C.arb_system(name, t, x, p, f)


def test_gd_l2_encloses_the_exact_solution_tightly():
    # GD, L = 2: u_j(τ) = α e^{z_j τ} (C6's closed form)
    sysm = _system("gd-2", S.balanced_system(2, "gd", 2))
    fp = integrate(sysm, ["0.5", "0.5"], params=[1, 2, 1], t_end=1, order=20, prec=128)
    assert fp.status is Status.T_MAX and fp.n_steps > 1
    with arb_context(prec=128):
        for j, z in enumerate((1, 2)):
            exact = arb("0.5") * (arb(z)).exp()
            assert fp.end[j].contains(exact)
            assert float(fp.end[j].rad()) < 1e-30 * float(exact.mid())


def test_gd_l3_encloses_the_blowup_solution():
    # GD, L = 3: du/dτ = z u², u(τ) = 1/(1/α − z τ)
    sysm = _system("gd-3", S.balanced_system(3, "gd", 1))
    fp = integrate(sysm, ["0.5"], params=[1, 1], t_end="1.5", order=16, prec=96)
    assert fp.status is Status.T_MAX
    with arb_context(prec=96):
        exact = 1 / (2 - arb("1.5"))
        assert fp.end[0].contains(exact) and float(fp.end[0].rad()) < 1e-20


def test_default_series_cap_drops_coefficients_and_the_integrator_sets_it():
    # x' = x through x(0) = 1: the k-th Taylor coefficient is 1/k!
    def field(T, X):
        return (X,)

    assert ctx.cap == 10
    X = arb_series([arb(1)])
    for _ in range(20):  # an order-20 Picard iteration that forgets the cap
        X = field(None, X)[0].integral() + 1
    assert coefficient(X, 15) == 0  # python-flint truncated the series at length 10: the coefficient is lost
    good = series_solution(lambda T, x: (x,), arb(0), [arb(1)], 20)[0]
    assert good.prec == 21 and coefficient(good, 15).overlaps(arb(1) / arb(int(sp.factorial(15))))
    assert ctx.cap == 10  # restored


def test_a_truncated_series_is_refused():
    with arb_context(cap=4):
        short = arb_series([arb(0)])  # O(x^4): adding it truncates whatever it meets

    with pytest.raises(ArithmeticError, match="truncated"):
        series_solution(lambda T, x: (x + short,), arb(0), [arb(1)], 8)


def test_compiled_field_encloses_the_sympy_value():
    t, u, p, f = S.balanced_system(4, "sam-l2", 3)
    fn = C.arb_function((t, *u), f, p)
    vals = {u[0]: sp.Rational(3, 10), u[1]: sp.Rational(1, 2), u[2]: sp.Rational(7, 10),
            p[0]: 1, p[1]: 2, p[2]: 3, p[3]: sp.Rational(1, 4)}
    with arb_context(prec=128):
        got = fn(arb(0), arb(3) / 10, arb(1) / 2, arb(7) / 10, arb(1), arb(2), arb(3), arb(1) / 4)
    with mp.workdps(50):
        for g, e in zip(got, f):
            exact = mp.mpf(sp.N(e.subs(vals), 50))
            assert abs(mp.mpf(g.mid().str(45, radius=False)) - exact) <= 2 * mp.mpf(g.rad().str(5, radius=False))


def test_interval_alpha_encloses_every_alpha_in_the_box():
    sysm = _system("l2", S.reduced_l2_system(3))
    box = integrate(sysm, [0], params=[1, 2, 3, ["0.5", "0.001"], 1], t_end="0.5", order=12, prec=64)
    assert box.status is Status.T_MAX and box.states == ("I", "alpha")
    for a in ("0.499", "0.4995", "0.5", "0.501"):
        pt = integrate(sysm, [0], params=[1, 2, 3, a, 1], t_end="0.5", order=12, prec=64)
        with arb_context(prec=64):
            assert box.end[0].contains(pt.end[0]), a


def test_budgets_end_the_run_with_a_named_status():
    sysm = _system("gd-2", S.balanced_system(2, "gd", 1))
    fp = integrate(sysm, ["0.5"], params=[1, 1], t_end=100, order=10, prec=64, budget=Budget(max_steps=3))
    assert fp.status is Status.MAX_STEPS and fp.n_steps == 3
    fp = integrate(sysm, ["0.5"], params=[1, 1], t_end=100, order=10, prec=64, budget=Budget(max_seconds=1e-9))
    assert fp.status is Status.MAX_SECONDS
    fp = integrate(sysm, ["0.5"], params=[1, 1], order=10, prec=64, stop=lambda s: "past 1" if s.t1 > 1 else None)
    assert fp.status is Status.PROVED_EVENT and fp.event == "past 1" and fp.t_end > 1


def test_proved_fates_on_both_sides_of_alpha_c():
    from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

    pr = ReducedL2([1, 2, 3], 1.0, 6)
    lo = pr.run("0.38")  # α_c ≈ 0.4197 for z = (1, 2, 3), ρ = 1
    hi = pr.run("0.46")
    assert lo.fate == "collapse" and lo.lemma.startswith("collapse")
    assert hi.fate == "growth" and hi.lemma.startswith("growth")


def test_all_equal_z_is_proved_at_the_start():
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    r = prove_alpha_c([2, 2], 1.0, digits=8)
    assert r.status == "proved" and r.digits >= 8
    with mp.workdps(30):  # α_c = ρ z_min/(√2‖z‖₂) = 1/2 exactly
        assert mp.mpf(r.lower) < mp.mpf("0.5") < mp.mpf(r.upper)
    assert r.collapses.tau == ["0", "0"] and r.grows.tau == ["0", "0"]


@pytest.mark.slow
def test_proved_30_digit_bracket_contains_the_certified_alpha_c():
    from theorycheck.proofs.minor_first.predict.alpha_c import collapse_threshold
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    z = [1.0, 2.0, 3.0, 4.0, 5.0]
    r = prove_alpha_c(z, 1.0, digits=30, max_seconds=600)
    assert r.status == "proved" and r.digits >= 30
    c = collapse_threshold(z, 1.0, digits=30)
    lo_c, hi_c = c.check["bracket"]
    with mp.workdps(60):
        assert mp.mpf(r.lower) <= mp.mpf(hi_c) and mp.mpf(lo_c) <= mp.mpf(r.upper)
        assert mp.mpf(r.lower) < mp.mpf(c.value_text) < mp.mpf(r.upper) or r.value_text == c.value_text[: len(r.value_text)]


@pytest.mark.slow
def test_depth4_bracket_is_proved_through_the_degenerate_equilibrium():
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c

    r = prove_alpha_c([1.0, 2.0, 3.0], 1.0, depth=4, digits=12)
    assert r.status == "proved" and r.digits >= 12
    with mp.workdps(30):  # inside the floating certified bracket [0.286312, 0.286427]
        assert mp.mpf("0.286312") < mp.mpf(r.lower) < mp.mpf(r.upper) < mp.mpf("0.286427")


# ---------------------------------------------------------------- certificates
@pytest.fixture(scope="module")
def certificate():
    from types import SimpleNamespace

    from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

    from theorycheck.proved.certificate import certificate_of

    pr = ReducedL2([1, 2, 3], 1.0, 4)
    lo, hi = pr.run("0.38", record=True), pr.run("0.46", record=True)
    assert lo.fate == "collapse" and hi.fate == "growth"
    return certificate_of(SimpleNamespace(lower="0.38", upper="0.46", collapses=lo, grows=hi), pr)


def _tampered(cert, edit):
    import copy

    c = copy.deepcopy(cert)
    edit(c)
    return c


def test_certificate_is_accepted(certificate):
    from theorycheck.proofs.minor_first.proved.checker import check_certificate

    res = check_certificate(certificate)
    assert res.ok and res.digest_ok and res.failures == []
    assert res.steps == sum(len(s["steps"]) for r in certificate["runs"] for s in r["segments"]) > 2


def test_one_changed_digit_is_rejected_with_its_step(certificate):
    from theorycheck.proofs.minor_first.proved.checker import check_certificate

    def edit(c):
        box = c["runs"][0]["segments"][0]["steps"][1]["end"][0]
        mid = box[0]
        i = next(k for k, ch in enumerate(mid) if ch in "123456789") + 4  # the fifth significant digit
        box[0] = mid[:i] + ("1" if mid[i] != "1" else "2") + mid[i + 1:]
    res = check_certificate(_tampered(certificate, edit), stop_at_first=True)
    assert not res.ok and not res.digest_ok
    assert any("segment 1, step 2" in f for f in res.failures), res.failures


def test_wrong_step_size_dropped_step_and_changed_alpha_are_rejected(certificate):
    from theorycheck.proofs.minor_first.proved.checker import check_certificate

    def step_size(c):
        c["runs"][0]["segments"][0]["steps"][0]["h"][0] = str(float(c["runs"][0]["segments"][0]["steps"][0]["h"][0]) * 1.5)

    def dropped(c):
        del c["runs"][0]["segments"][0]["steps"][1]

    def alpha(c):
        c["runs"][0]["alpha"] = "0.39"
    for edit, where in ((step_size, "step"), (dropped, "segment 1, step 2"), (alpha, "α")):
        res = check_certificate(_tampered(certificate, edit), stop_at_first=True)
        assert not res.ok and not res.digest_ok
        assert any(where in f for f in res.failures if not f.startswith("digest")), (where, res.failures)


def test_a_valid_but_edited_certificate_fails_its_digest(certificate):
    from theorycheck.proofs.minor_first.proved.checker import check_certificate

    def wider(c):  # a larger radius keeps every inclusion true: only the digest notices
        box = c["runs"][1]["segments"][-1]["steps"][-1]["end"][0]
        box[1] = str(float(box[1]) * 2)
    res = check_certificate(_tampered(certificate, wider))
    assert not res.ok and not res.digest_ok and len(res.failures) == 1


def _riccati(T, X):
    return (T - X * X,)


def _riccati_fj(T, X):  # (f, ∂f/∂x)
    return (T - X * X, X * (-2))


def test_newton_series_encloses_the_picard_series_of_every_sampled_point():
    # x' = t − x² (non-autonomous, nonlinear): the Newton series over balls (t0, x0) must contain the
    # (point) Picard series of every point sampled in them
    K = 25
    with arb_context(prec=160):
        t0, x0 = arb("0.3", "0.05"), arb("-0.2", "0.1")
        wide = series_solution(_riccati, t0, [x0], K, field_jacobian=_riccati_fj)[0]
        assert wide.prec == K + 1
        for i in range(5):
            tp = arb(t0.mid()) + arb(t0.rad().mid()) * arb(i - 2) * arb("0.45")  # inside the balls
            xp = arb(x0.mid()) + arb(x0.rad().mid()) * arb(2 - i) * arb("0.45")
            exact = series_solution(_riccati, tp, [xp], K)[0]
            point = series_solution(_riccati, tp, [xp], K, field_jacobian=_riccati_fj)[0]
            for k in range(K + 1):
                assert wide.coeffs()[k].contains(coefficient(exact, k))
                assert coefficient(point, k).overlaps(coefficient(exact, k))
                assert float(coefficient(point, k).rad()) <= 1e-35 * (1 + abs(float(coefficient(exact, k).mid())))


def test_newton_series_refuses_a_truncated_series():
    with arb_context(cap=4):
        short = arb_series([arb(0)])

    with pytest.raises(ArithmeticError, match="truncated"):
        series_solution(_riccati, arb(0), [arb(1)], 8, field_jacobian=lambda T, x: (T - x * x + short, x * (-2)))
    with pytest.raises(ArithmeticError, match="truncated"):
        series_solution(_riccati, arb(0), [arb(1)], 8, field_jacobian=lambda T, x: (T - x * x, x * (-2) + short))


def test_newton_series_of_the_reduced_l2_field_matches_picard():
    # the compiled field and ∂f/∂w of C4's reduced ODE (moving frame): Newton's series (what the integrator uses
    # for one state) overlaps Picard's, and is about as tight, at a point and over a box
    t, x, p, f = S.reduced_l2_system(3, frame=True)
    sysm = C.arb_system("l2-reduced-frame-d3", t, x, p, f)
    with arb_context(prec=140):
        params = [arb(1) / 2, arb(3) / 4, arb(1), arb("0.3"), arb(1), arb(2)]
        g = sysm.field.bind(*params, series=True)
        gj = sysm.field_and_state_jacobian.bind(*params, series=True)
        for t0, x0, slack in ((arb(2), arb("0.1"), 100), (arb(2, "0.01"), arb("0.1", "0.02"), 1e3)):
            pic = series_solution(g, t0, [x0], 30)[0]
            new = series_solution(g, t0, [x0], 30, field_jacobian=gj)[0]
            for k in range(31):
                a, b = coefficient(pic, k), coefficient(new, k)
                assert a.overlaps(b)
                assert float(b.rad()) <= slack * float(a.rad()) + 1e-60


def test_newton_series_of_a_two_state_field_encloses_the_point_picard_series():
    # x' = y x, y' = t − x² (coupled, nonlinear): the d-dimensional Newton recurrence (J row by row)
    def f(T, X, Y):
        return (Y * X, T - X * X)

    def fj(T, X, Y):
        return (Y * X, T - X * X, Y, X, X * (-2), arb(0))

    K = 18
    with arb_context(prec=128):
        t0, x0, y0 = arb("0.5", "0.02"), arb("0.4", "0.03"), arb("-0.3", "0.01")
        wide = series_solution(f, t0, [x0, y0], K, field_jacobian=fj)
        for s in (-1, 0, 1):
            pt = [arb(b.mid()) + arb(b.rad().mid()) * arb(s) * arb("0.9") for b in (t0, x0, y0)]
            exact = series_solution(f, pt[0], pt[1:], K)
            for i in range(2):
                for k in range(K + 1):
                    assert wide[i].coeffs()[k].contains(coefficient(exact[i], k))


def test_one_state_runs_use_newton_series_and_enclose_the_exact_solution():
    # GD, L = 3: du/dτ = z u², u(τ) = 1/(1/α − z τ). With Newton's series a step costs ~log₂ K field evaluations
    # on series per series (plus the ball evaluations of the Picard test) instead of K sweeps; both enclose u
    import dataclasses

    sysm = _system("gd-3", S.balanced_system(3, "gd", 1))
    picard = dataclasses.replace(sysm, field_and_state_jacobian=None)
    K = 16
    runs = [integrate(s, ["0.5"], params=[1, 1], t_end="1.5", order=K, prec=96) for s in (sysm, picard)]
    with arb_context(prec=96):
        exact = 1 / (2 - arb("1.5"))
        for fp in runs:
            assert fp.status is Status.T_MAX and fp.end[0].contains(exact) and float(fp.end[0].rad()) < 1e-20
    newton, pic = runs  # the same steps rule: about as many steps, far fewer field evaluations
    assert abs(newton.n_steps - pic.n_steps) <= 2
    assert 2 * newton.evaluations < pic.evaluations


def test_variational_coefficients_of_a_linear_field_are_exact():
    # u_j' = z_j u_j (GD, L = 2): ∂u_j/∂u_j(0) = e^{z_j s}, ∂u_j/∂z_j = u_j(0) s e^{z_j s}: coefficients z^k/k! and
    # u0 z^(k−1)/(k−1)!; the other entries are 0
    from theorycheck.proved.validated.taylor import variational_coefficients

    sysm = _system("gd-2", S.balanced_system(2, "gd", 2))
    K = 12
    with arb_context(prec=128):
        z = [arb(1) / 3, arb(5) / 4]
        u0 = [arb("0.5", "1e-20"), arb("0.25")]
        X = series_solution(sysm.field.bind(*z, arb(1), series=True), arb(0), u0, K)
        V = variational_coefficients(sysm.jacobian.bind(*z, arb(1), series=True), arb(0), X, K, [0, 1, 2, 3])
        for k in range(K + 1):
            fact = arb(int(sp.factorial(k)))
            for j in range(2):
                assert V[k][j][j].overlaps(z[j] ** k / fact)
                assert V[k][j][1 - j].contains(0) and float(V[k][j][1 - j].rad()) == 0
                want = u0[j] * z[j] ** (k - 1) / arb(int(sp.factorial(k - 1))) if k else arb(0)
                assert V[k][j][2 + j].overlaps(want) and V[k][j][3 - j].contains(0)
