"""LOCK (one example, balanced init, the flow): the lock-in lemma — conditions on a state after
which the dominant index j† can no longer change, so that a final index is proved (on an
enclosure) or checked in floating point (a persisting condition), never read off at the horizon.

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
from theorycheck.proofs.minor_first import lemma_proofs

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import Fact, Theorem, refuted, verified

rho, tau = sy.rho, sy.tau


def _nonneg(expr) -> bool:
    """Whether sympy proves ``expr`` ≥ 0 under the positivity of its symbols (after factoring)."""
    e = sp.factor(sp.simplify(expr))
    return bool(e.is_nonnegative) or e == 0


# ---------------------------------------------------------------- L = 2
def _gap_rate():
    zj, zk = cf.z_j, cf.z_k
    got = TE.l2_log_rate().subs(cf.z_j, zk) - TE.l2_log_rate()
    want = (zk - zj) * (1 - rho * (zj + zk) / cf.N)
    if sp.simplify(got - want) == 0 and sp.simplify(TE.l2_pair_log_gap_rate() - want) == 0:
        return verified("d(θ_k − θ_j)/dτ = (z_k − z_j)(1 − ρ(z_j + z_k)/N) for every init (the rates of C4 do not "
                        "depend on α): for z_k > z_j the gap grows iff N ≥ ρ(z_j + z_k), C4's switch level in N")
    return refuted(f"gap rate {sp.simplify(got)}", {})


def _gap_uniform():
    Nb = sp.Symbol("Nbar", positive=True)
    Ip = sp.Symbol("I", positive=True)
    th = TE.l2_theta().subs(cf.I, Ip)
    gap = th.subs(cf.z_j, cf.z_k) - th
    want = (cf.z_k - cf.z_j) * Ip * (Nb - TE.l2_switch_level())
    if sp.simplify(gap - want.subs(Nb, tau / Ip)) == 0:
        return verified("uniform α: θ_k − θ_j = (z_k − z_j) I (N̄ − ρ(z_j + z_k)), N̄ = τ/I: j† is a function of N̄ "
                        "alone (C4), and moves to larger z exactly while N̄ grows")
    return refuted("gap is not (z_k − z_j) I (N̄ − level)", {})


def _norm_derivative():
    th = sp.Function("theta")(tau)
    summand = cf.balanced_norm_summand(2).subs(cf.u_j, sp.exp(th))
    d = sp.diff(summand, tau).subs(sp.Derivative(th, tau), TE.l2_log_rate())
    want = 4 * cf.z_j**2 * sp.exp(2 * th) * TE.l2_log_rate()
    if sp.simplify(d - want) == 0:
        return verified("d/dτ (2 z_j² u_j²) = 4 z_j² u_j² · z_j(1 − ρz_j/N): so N N' = Σ_j 2 z_j² u_j² r_j with "
                        "r_j = z_j(1 − ρz_j/N) the log-rate of coordinate j")
    return refuted(f"d/dτ term = {d}", {})


def _growth_persists():
    zmax, t, s = sp.Symbol("z_max", positive=True), sp.Symbol("t", nonnegative=True), sp.Symbol("s", nonnegative=True)
    # z_j = z_max (1 − t), 0 ≤ t ≤ 1 ... written as z_j = z_max/(1 + t) ∈ (0, z_max]; N = ρ z_max + s
    rate = TE.l2_log_rate().subs({cf.z_j: zmax / (1 + t), cf.N: rho * zmax + s})
    if _nonneg(rate):
        return verified("N ≥ ρ z_max ⇒ every rate z_j(1 − ρz_j/N) ≥ 0 for 0 ≤ z_j ≤ z_max (sympy: nonnegative for "
                        "z_j = z_max/(1+t), N = ρz_max + s, t, s ≥ 0; z_j = 0 gives 0): every term of N N' is ≥ 0, "
                        "N is nondecreasing, and every level c ≥ ρ z_max that N has reached stays reached")
    return refuted(f"rate {sp.factor(rate)} not provably ≥ 0", {})


def _lockin_l2():
    zmax, znext = sp.Symbol("z_max", positive=True), sp.Symbol("z_next", nonnegative=True)
    t, s = sp.Symbol("t", nonnegative=True), sp.Symbol("s", nonnegative=True)
    level = TE.l2_lockin_level().subs({cf.z_1st: zmax, cf.z_2nd: znext})
    # any z_j ≤ z_next (z_j = z_next/(1+t)), N = level + s
    rate = TE.l2_pair_log_gap_rate().subs({cf.z_k: zmax, cf.z_j: znext / (1 + t), cf.N: level + s})
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
    f = TE.l2_index_score().subs(cf.z_j, zc)
    v = sp.solve(sp.diff(f, zc), zc)
    lv = TE.l2_switch_level()
    if v == [cf.N_bar / (2 * rho)] and sp.simplify(lv.subs({cf.z_j: 1, cf.z_k: 2}) - lv.subs({cf.z_j: 1, cf.z_k: 1})) != 0:
        return verified("j† is the z nearest N̄/(2ρ) (C4); the switch levels ρ(v_i + v_{i+1}) of consecutive distinct "
                        "values v_1 < … < v_m increase with i. So while N̄ is monotone, j† runs through every distinct "
                        "value between the current one and the end in order (ties: the smallest index): after "
                        "N ≥ max(ρ z_max, N̄) (N̄ → ∞ since N → ∞ when z has two distinct values) up to argmax z, "
                        "after N < ρ z_min and N ≤ N̄ down to argmin z")
    return refuted("vertex or level order fails", {})


def _collapse_bounds():
    zc, n = sp.Symbol("zeta", positive=True), sp.Symbol("N", positive=True)
    f = TE.l2_log_rate().subs({cf.z_j: zc, cf.N: n})
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


# ---------------------------------------------------------------- L ≥ 3: theorycheck.proofs.minor_first.lock_proof.lock_steps
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
    for st in lemma_proofs.steps("LOCK"):  # the L ≥ 3 steps, for a symbolic L
        yield Fact(st.statement + " [symbolic L]", st.fn)

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
