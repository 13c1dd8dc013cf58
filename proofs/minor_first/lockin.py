"""LOCK (one example, balanced init, the flow): the lock-in lemma — conditions on a state after
which the dominant index j† can no longer change, so that a final index is proved (on an
enclosure) or certified (in floating point), never read off at the horizon.

L = 2 (ℓ2-SAM; GD is ρ = 0), any α_j > 0, z ≥ 0:
  d(θ_k − θ_j)/dτ = (z_k − z_j)(1 − ρ(z_j + z_k)/N); N keeps growing once N ≥ ρ z_max. Hence once
  j† = argmax z and N ≥ ρ(z_(d) + z_next) (z_next the largest value strictly below z_(d)), j† never
  changes again. What THEORY.md's N̄-form suggests ("N̄ past the last switch level") needs N̄
  nondecreasing, which holds only while N ≥ N̄: it follows once N is nondecreasing and N ≥ N̄ at
  one time (the harmonic-mean step below), and then the rest of j†'s sequence is determined:
  upwards through every distinct z value above the current one (uniform α). The collapse side
  is the mirror image: once N < ρ z_min (and N ≤ N̄), j† only moves to smaller z, visits every
  distinct value below the current one, ends at argmin z, and β = 0 at a time τ_c enclosed by
  τ0 + [ln(ρz_max/(ρz_max − N0))/z_max, ln(ρz_min/(ρz_min − N0))/z_min].

L ≥ 3 (ℓ2-SAM; GD is ρ = 0; ℓ∞-SAM is GD on w = u − ρ), z_k > 0: the blow-up order. If
  u_k ≥ ρ√L, j† = k, and every rival j with z_j > z_k has
  z_j max(u_j, ρ/√L)^{L−2} < z_k u_k^{L−2} (1 − ρ/(√L u_k))^{L−1},
  then j† = k until the blow-up, which comes within t* · [1, 1/c], t* = 1/((L−2) z_k u_k^{L−2}).
"""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.theorem import Fact, Identity, Theorem, refuted, verified

rho, tau = sy.rho, sy.tau


def _nonneg(expr) -> bool:
    """Whether sympy proves ``expr`` ≥ 0 under the positivity of its symbols (after factoring)."""
    e = sp.factor(sp.simplify(expr))
    return bool(e.is_nonnegative) or e == 0


# ---------------------------------------------------------------- L = 2
def _gap_rate():
    zj, zk = cf.z_j, cf.z_k
    got = cf.l2_log_rate().subs(cf.z_j, zk) - cf.l2_log_rate()
    want = (zk - zj) * (1 - rho * (zj + zk) / cf.N)
    if sp.simplify(got - want) == 0 and sp.simplify(cf.l2_pair_log_gap_rate() - want) == 0:
        return verified("d(θ_k − θ_j)/dτ = (z_k − z_j)(1 − ρ(z_j + z_k)/N) for every init (the rates of C4 do not "
                        "depend on α): for z_k > z_j the gap grows iff N ≥ ρ(z_j + z_k), C4's switch level in N")
    return refuted(f"gap rate {sp.simplify(got)}", {})


def _gap_uniform():
    Nb = sp.Symbol("Nbar", positive=True)
    Ip = sp.Symbol("I", positive=True)
    th = cf.l2_theta().subs(cf.I, Ip)
    gap = th.subs(cf.z_j, cf.z_k) - th
    want = (cf.z_k - cf.z_j) * Ip * (Nb - cf.l2_switch_level())
    if sp.simplify(gap - want.subs(Nb, tau / Ip)) == 0:
        return verified("uniform α: θ_k − θ_j = (z_k − z_j) I (N̄ − ρ(z_j + z_k)), N̄ = τ/I: j† is a function of N̄ "
                        "alone (C4), and moves to larger z exactly while N̄ grows")
    return refuted("gap is not (z_k − z_j) I (N̄ − level)", {})


def _norm_derivative():
    th = sp.Function("theta")(tau)
    summand = cf.balanced_norm_summand(2).subs(cf.u_j, sp.exp(th))
    d = sp.diff(summand, tau).subs(sp.Derivative(th, tau), cf.l2_log_rate())
    want = 4 * cf.z_j**2 * sp.exp(2 * th) * cf.l2_log_rate()
    if sp.simplify(d - want) == 0:
        return verified("d/dτ (2 z_j² u_j²) = 4 z_j² u_j² · z_j(1 − ρz_j/N): so N N' = Σ_j 2 z_j² u_j² r_j with "
                        "r_j = z_j(1 − ρz_j/N) the log-rate of coordinate j")
    return refuted(f"d/dτ term = {d}", {})


def _growth_persists():
    zmax, t, s = sp.Symbol("z_max", positive=True), sp.Symbol("t", nonnegative=True), sp.Symbol("s", nonnegative=True)
    # z_j = z_max (1 − t), 0 ≤ t ≤ 1 ... written as z_j = z_max/(1 + t) ∈ (0, z_max]; N = ρ z_max + s
    rate = cf.l2_log_rate().subs({cf.z_j: zmax / (1 + t), cf.N: rho * zmax + s})
    if _nonneg(rate):
        return verified("N ≥ ρ z_max ⇒ every rate z_j(1 − ρz_j/N) ≥ 0 for 0 ≤ z_j ≤ z_max (sympy: nonnegative for "
                        "z_j = z_max/(1+t), N = ρz_max + s, t, s ≥ 0; z_j = 0 gives 0): every term of N N' is ≥ 0, "
                        "N is nondecreasing, and every level c ≥ ρ z_max that N has reached stays reached")
    return refuted(f"rate {sp.factor(rate)} not provably ≥ 0", {})


def _lockin_l2():
    zmax, znext = sp.Symbol("z_max", positive=True), sp.Symbol("z_next", nonnegative=True)
    t, s = sp.Symbol("t", nonnegative=True), sp.Symbol("s", nonnegative=True)
    level = cf.l2_lockin_level().subs({cf.z_1st: zmax, cf.z_2nd: znext})
    # any z_j ≤ z_next (z_j = z_next/(1+t)), N = level + s
    rate = cf.l2_pair_log_gap_rate().subs({cf.z_k: zmax, cf.z_j: znext / (1 + t), cf.N: level + s})
    rate_gap = sp.factor(rate.subs(znext, zmax / (1 + sp.Symbol("g", positive=True))))  # z_next < z_max
    if sp.expand(level - rho * zmax - rho * znext) == 0 and _nonneg(rate_gap):
        return verified("N ≥ ρ(z_(d) + z_next) ≥ ρ z_max persists (growth step), and then for every z_j ≤ z_next: "
                        "d(θ_d − θ_j)/dτ = (z_d − z_j)(1 − ρ(z_d + z_j)/N) ≥ 0 (sympy, N = level + s): if j† = argmax z "
                        "at that time, every gap θ_j† − θ_j is nondecreasing and j† never changes again (coordinates "
                        "with z_j = z_(d) keep a constant gap)")
    return refuted(f"gap rate {rate_gap}", {})


def _harmonic_mean():
    I0, J, t0, t1 = sp.symbols("I_0 J tau_0 tau", positive=True)
    N0, N1 = sp.symbols("N_0 N_tau", positive=True)
    lhs = (I0 + J) - t1 / N1  # I(τ) − τ/N(τ), I(τ) = I0 + J, J = ∫_{τ0}^{τ} ds/N(s)
    rhs = (I0 - t0 / N0) + t0 * (1 / N0 - 1 / N1) + (J - (t1 - t0) / N1)
    if sp.simplify(lhs - rhs) == 0:
        return verified("I(τ) − τ/N(τ) = [I(τ0) − τ0/N(τ0)] + τ0 (1/N(τ0) − 1/N(τ)) + ∫_{τ0}^{τ} (1/N(s) − 1/N(τ)) ds. "
                        "If N is nondecreasing on [τ0, τ] and N(τ0) ≥ N̄(τ0) (⇔ I(τ0) ≥ τ0/N(τ0)), each bracket is ≥ 0, "
                        "so N(τ) ≥ N̄(τ): N ≥ N̄ persists, and with C4's dN̄/dτ = (1 − N̄/N)/I N̄ is nondecreasing "
                        "(the mirror statement holds with every inequality reversed)")
    return refuted("the decomposition fails", {})


def _sequence_after():
    zc = sp.Symbol("zeta", positive=True)
    f = cf.l2_index_score().subs(cf.z_j, zc)
    v = sp.solve(sp.diff(f, zc), zc)
    lv = cf.l2_switch_level()
    if v == [cf.N_bar / (2 * rho)] and sp.simplify(lv.subs({cf.z_j: 1, cf.z_k: 2}) - lv.subs({cf.z_j: 1, cf.z_k: 1})) != 0:
        return verified("j† is the z nearest N̄/(2ρ) (C4); the switch levels ρ(v_i + v_{i+1}) of consecutive distinct "
                        "values v_1 < … < v_m increase with i. So while N̄ is monotone, j† runs through every distinct "
                        "value between the current one and the end in order (ties: the smallest index): after "
                        "N ≥ max(ρ z_max, N̄) (N̄ → ∞ since N → ∞ when z has two distinct values) up to argmax z, "
                        "after N < ρ z_min and N ≤ N̄ down to argmin z")
    return refuted("vertex or level order fails", {})


def _collapse_bounds():
    zc, n = sp.Symbol("zeta", positive=True), sp.Symbol("N", positive=True)
    f = cf.l2_log_rate().subs({cf.z_j: zc, cf.N: n})
    df = sp.diff(f, zc)
    # f is decreasing for ζ > N/(2ρ); N < ρ z_min puts every z_j ≥ z_min > N/ρ in that range
    w = sp.Symbol("w", positive=True)
    dec = sp.simplify(df.subs(zc, n / (2 * rho) + w))
    zm = sp.Symbol("z_min", positive=True)
    bound = sp.simplify(f.subs(zc, zm) * n - zm * (n - rho * zm))
    if dec.is_negative and bound == 0:
        return verified("∂/∂ζ [ζ(1 − ρζ/N)] < 0 for ζ > N/(2ρ); when N < ρ z_min every z_j lies there, so "
                        "f(z_max) ≤ f(z_j) ≤ f(z_min) and N N' = Σ 2z_j²u_j² f(z_j) gives "
                        "z_max(N − ρ z_max) ≤ N' ≤ z_min(N − ρ z_min) < 0: N falls, the collapse certificate "
                        "persists, and every gap of a larger z over a smaller one falls (j† only moves down)")
    return refuted(f"∂f = {dec}, bound {bound}", {})


def _collapse_time():
    c, n0, t = sp.Symbol("c", positive=True), sp.Symbol("N_0", positive=True), sp.Symbol("t", nonnegative=True)
    y = rho * c + (n0 - rho * c) * sp.exp(c * t)
    ode = sp.simplify(sp.diff(y, t) - c * (y - rho * c))
    tz = sp.log(rho * c / (rho * c - n0)) / c
    zero = sp.simplify(y.subs(t, tz))
    x = sp.Symbol("x", positive=True)
    g = -x * sp.log(1 - x)  # ρ · (time to zero) / N0 as a function of x = N0/(ρ c) ∈ (0, 1)
    dg = sp.diff(g, x)
    mono = sp.simplify(dg - (-sp.log(1 - x) + x / (1 - x)))
    if ode == 0 and zero == 0 and mono == 0:
        return verified("y' = c(y − ρc), y(0) = N0 < ρc is y = ρc + (N0 − ρc)e^{ct}, zero at ln(ρc/(ρc − N0))/c; "
                        "by comparison with c = z_max (N' ≥) and c = z_min (N' ≤) the collapse time lies in "
                        "τ0 + [ln(ρz_max/(ρz_max − N0))/z_max, ln(ρz_min/(ρz_min − N0))/z_min] (the time to zero "
                        "decreases in c: d/dx[−x ln(1−x)] = −ln(1−x) + x/(1−x) > 0); N' ≥ −ρ z_max² makes "
                        "I = ∫ds/N diverge at τ_c, so N̄ → 0 and j† reaches argmin z before β = 0")
    return refuted(f"ode {ode}, zero {zero}", {})


# ---------------------------------------------------------------- L ≥ 3
Ls = (3, 4, 5, 6)


def _ratio_bound():
    L = cf.L_sym
    u, z, n = sp.Symbol("u", positive=True), sp.Symbol("z", positive=True), sp.Symbol("N", positive=True)
    r = rho * z * u ** (L - 2) / n
    at = sp.simplify((r**2).subs(n, sp.sqrt(L) * z * u ** (L - 1)))
    floor = sp.simplify((rho / (sp.sqrt(L) * u)).subs(u, cf.depth_lockin_floor()))
    if sp.simplify(at - rho**2 / (L * u**2)) == 0 and sp.simplify(floor - sp.Rational(1, 1) / L) == 0:
        return verified("N² = L Σ z_i² u_i^{2L−2} ≥ L z_j² u_j^{2L−2}, so r_j = ρ z_j u_j^{L−2}/N ≤ ρ/(√L u_j); at "
                        "u_j = ρ√L the bound is 1/L. So u_j ≥ ρ√L gives r_j ≤ 1/L ≤ 1: û_j ≥ 0, u_j is nondecreasing "
                        "and u_j ≥ ρ√L persists")
    return refuted(f"bound {at}, floor {floor}", {})


def _field_monotone_in_z():
    bad = []
    for L in Ls:
        u, z, n = sp.Symbol("u", positive=True), sp.Symbol("z", real=True), sp.Symbol("N", positive=True)
        g = cf.balanced_field(L, "sam-l2").subs({cf.u_j: u, cf.z_j: z, cf.N: n})
        r = rho * z * u ** (L - 2) / n
        want = u ** (L - 1) * (1 - r) ** (L - 2) * (1 - L * r)
        if sp.simplify(sp.diff(g, z) - want) != 0:
            bad.append(L)
    if not bad:
        return verified("∂/∂z [z û^{L−1}] = u^{L−1}(1 − r)^{L−2}(1 − L r), r = ρ z u^{L−2}/N (L = 3..6): at a crossing "
                        "u_j = u_k = u ≥ ρ√L with z_j < z_k, r ≤ r(z_k) ≤ 1/L along [z_j, z_k], so u_k' > u_j': no "
                        "smaller z_j overtakes j† while u_j† ≥ ρ√L (r < 0 for z ≤ 0 only helps)")
    return refuted(f"derivative differs for L = {bad}", {})


def _rival_speed():
    u, rr = sp.Symbol("u", positive=True), sp.Symbol("r", nonnegative=True)
    uhat = u * (1 - rr)
    small = sp.simplify(u - uhat)  # r ≤ 1: 0 ≤ û ≤ u
    big = sp.simplify(-uhat - u * rr)  # r > 1: |û| = u r − u ≤ u r ≤ ρ/√L
    if small == u * rr and big == -u:
        return verified("û_j = u_j(1 − r_j) with 0 ≤ r_j ≤ ρ/(√L u_j): for r_j ≤ 1, 0 ≤ û_j ≤ u_j; for r_j > 1, "
                        "|û_j| = u_j r_j − u_j < u_j r_j ≤ ρ/√L. So |û_j| ≤ max(u_j, ρ/√L) and u_j stays below GD "
                        "started from max(u_j, ρ/√L): a rival's blow-up score is at most z_j max(u_j, ρ/√L)^{L−2}")
    return refuted(f"{small}, {big}", {})


def _race():
    bad = []
    for L in Ls:
        u, z, rr = sp.Symbol("u", positive=True), sp.Symbol("z", positive=True), sp.Symbol("r", nonnegative=True)
        v = u ** (-(L - 2))
        uf = sp.Function("u")(tau)
        dv = sp.diff(uf ** (-(L - 2)), tau).subs(sp.Derivative(uf, tau), z * (uf * (1 - rr)) ** (L - 1))
        want = -(L - 2) * z * (1 - rr) ** (L - 1)
        if sp.simplify(dv - want) != 0:
            bad.append(L)
            continue
        lo, hi = cf.depth_lockin_blowup_bounds(L)
        c = cf.depth_lockin_rate_factor(L).subs(cf.u_j, u)
        lo, hi = lo.subs({cf.z_j: z, cf.u_j: u}), hi.subs({cf.z_j: z, cf.u_j: u})
        if sp.simplify(lo - v / ((L - 2) * z)) != 0 or sp.simplify(hi - v / ((L - 2) * z * c)) != 0:
            bad.append(L)
    if bad:
        return refuted(f"v' or the blow-up bounds differ for L = {bad}", {})
    # the race: v_k(s) ≤ v_k0 − (L−2) z_k c s hits 0 by s* = v_k0/((L−2) z_k c); a rival's ṽ_j(s) =
    # ṽ_j0 − (L−2) z_j s stays above v_k on [0, s*] iff it does at both ends (linear in s)
    vk, vj, zk, zj, c, Lp = sp.symbols("v_k v_j z_k z_j c L", positive=True)
    s_star = vk / ((Lp - 2) * zk * c)
    end = sp.simplify((vj - (Lp - 2) * zj * s_star) * zk * c)
    if sp.simplify(end - (zk * c * vj - zj * vk)) == 0:
        return verified("v = u^{−(L−2)} obeys v' = −(L−2) z (1 − r)^{L−1} (L = 3..6), in [−(L−2) z, −(L−2) z c] for the "
                        "winner (c = (1 − ρ/(√L u_k0))^{L−1}, u_k ≥ u_k0): it blows up within "
                        "[v_k0/((L−2)z_k), v_k0/((L−2)z_k c)] (closed_forms.depth_lockin_blowup_bounds). A rival's "
                        "majorant ṽ_j = ṽ_j0 − (L−2) z_j s stays above v_k until then iff ṽ_j0 > v_k0 and "
                        "z_k c ṽ_j0 − z_j v_k0 > 0, i.e. z_j max(u_j, ρ/√L)^{L−2} < z_k c u_k0^{L−2}: the log scores "
                        "of closed_forms.depth_lockin_rival_log_score / winner_log_score")
    return refuted(f"race end {end}", {})


def _scores_match():
    bad = []
    for L in Ls:
        th = sp.Symbol("theta", real=True)
        z = sp.Symbol("z", positive=True)
        u = sp.exp(th)
        c = cf.depth_lockin_rate_factor(L).subs(cf.u_j, u)
        w = cf.depth_lockin_winner_log_score(L).subs({cf.theta_j: th, cf.z_j: z})
        if sp.simplify(sp.exp(w) - z * u ** (L - 2) * c) != 0:
            bad.append(L)
    if not bad:
        return verified("the winner's log score is ln(z u^{L−2} c) and the rival's ln(z max(u, ρ/√L)^{L−2}) (L = 3..6)")
    return refuted(f"winner score differs for L = {bad}", {})


def _nbar_can_fall():
    """The N̄-form is not a lock-in by itself: N̄ beyond the last level can fall back (N < N̄)."""
    # uniform α, z = (1, 2, 3), ρ = 1: N̄ is a harmonic mean; if N drops below N̄ while N̄ > 5, N̄ falls.
    Nb, n, Ip = sp.Symbol("Nbar", positive=True), sp.Symbol("N", positive=True), sp.Symbol("I", positive=True)
    dNb = (1 - Nb / n) / Ip
    val = dNb.subs({Nb: 6, n: 4, Ip: 1})
    if val < 0:
        return verified("why the lemma is stated in N and not in N̄ alone: N̄ > ρ(z_(d) + z_next) can be followed by a "
                        "fall of N̄ (dN̄/dτ = (1 − N̄/N)/I < 0 whenever N < N̄; e.g. N̄ = 6 > 5, N = 4, I = 1 for "
                        "z = (1, 2, 3), ρ = 1 gives dN̄/dτ = −1/2). The N̄-form locks j† in only together with N "
                        "nondecreasing (N ≥ ρ z_max) and N ≥ N̄; the N-form (j† = argmax z, N ≥ ρ(z_(d) + z_next)) "
                        "needs neither")
    return refuted("dN̄/dτ is not negative at N < N̄", {"dNbar_dtau": float(val)})


def build():
    yield Fact("L = 2: d(θ_k − θ_j)/dτ = (z_k − z_j)(1 − ρ(z_j + z_k)/N) (any α)", _gap_rate)
    yield Fact("L = 2, uniform α: θ_k − θ_j = (z_k − z_j) I (N̄ − ρ(z_j + z_k))", _gap_uniform)
    yield Fact("L = 2: d(N²)/dτ = Σ 4 z_j² u_j² · z_j(1 − ρ z_j/N)", _norm_derivative)
    yield Fact("L = 2: N ≥ ρ z_max persists (N nondecreasing)", _growth_persists)
    yield Fact("L = 2 lock-in: j† = argmax z and N ≥ ρ(z_(d) + z_next) ⇒ j† never changes", _lockin_l2)
    yield Fact("the N̄-form alone is no lock-in (N̄ can fall while N < N̄)", _nbar_can_fall)
    yield Fact("harmonic mean: N nondecreasing and N ≥ N̄ at τ0 ⇒ N ≥ N̄ (and N̄ nondecreasing) after τ0",
               _harmonic_mean)
    yield Fact("after the growth (or collapse) certificate with N ≥ N̄ (N ≤ N̄), j† runs through every distinct value "
               "up to argmax z (down to argmin z)", _sequence_after)
    yield Fact("L = 2 collapse: N < ρ z_min ⇒ z_max(N − ρz_max) ≤ N' ≤ z_min(N − ρz_min)", _collapse_bounds)
    yield Fact("L = 2 collapse time enclosure from N0 = N(τ0) < ρ z_min", _collapse_time)
    yield Fact("L ≥ 3: r_j ≤ ρ/(√L u_j); u_j ≥ ρ√L persists", _ratio_bound)
    yield Fact("L ≥ 3: no smaller z_j overtakes j† while u_j† ≥ ρ√L", _field_monotone_in_z)
    yield Fact("L ≥ 3: |û_j| ≤ max(u_j, ρ/√L)", _rival_speed)
    yield Fact("L ≥ 3: the blow-up race and the blow-up time enclosure", _race)
    yield Identity("L ≥ 3: the lock-in floor ρ√L is where ρ/(√L u) = 1/L",
                   sp.solve(sp.Eq(rho / (sp.sqrt(cf.L_sym) * sp.Symbol("u", positive=True)), 1 / cf.L_sym),
                            sp.Symbol("u", positive=True))[0], cf.depth_lockin_floor())
    yield Fact("L ≥ 3: the log scores of closed_forms are the race's scores", _scores_match)


THEOREM = Theorem(
    key="LOCK",
    title="the lock-in lemma: when j† can no longer change",
    statement="L = 2 (ℓ2-SAM, GD = ρ 0), one example, z ≥ 0, any α_j > 0: once j† = argmax z and "
              "N ≥ ρ(z_(d) + z_next), j† never changes. Uniform α: after N ≥ max(ρ z_max, N̄) j† runs up through every "
              "larger distinct z to argmax z; after N < ρ z_min, N ≤ N̄ down through every smaller one to argmin z, "
              "then β = 0 within τ0 + [ln(ρz_max/(ρz_max − N0))/z_max, ln(ρz_min/(ρz_min − N0))/z_min]. L ≥ 3: "
              "u_k ≥ ρ√L, j† = k and z_j max(u_j, ρ/√L)^{L−2} < z_k u_k^{L−2}(1 − ρ/(√L u_k))^{L−1} for every z_j > z_k "
              "⇒ j† = k until the blow-up, within t*[1, 1/c], t* = 1/((L−2) z_k u_k^{L−2}).",
    build=build,
    notes="THEORY.md's form (N̄ past the last switch level) is not a lock-in by itself: N̄ can fall while N < N̄.",
)
