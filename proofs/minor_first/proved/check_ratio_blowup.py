"""The even-L ≥ 4 run checker (:class:`theorycheck.proved.check.RunChecker` for the blown-up ratio system), code
that shares nothing with the integrator but the ball arithmetic.

The field is evaluated by walking its sympy tree (:class:`theorycheck.proved.tape.TreeEval`); the Taylor and
variational coefficients, the Jacobian (sympy.diff) and the inclusions are its own: the initial set contains the
start on the ray r(0) = c z (from the perturbation ratio at u = α·1, at the checker's balls of the exact inputs),
each Picard box passes the Picard test, each end set contains the Taylor polynomial at the centre plus the
remainder over the Picard image plus the mean-value term DΦ(X̄)·A·R (in the end set's coordinates:
A'^{-1}(Φ(c) + Z − c') + (A'^{-1} DΦ A) R ⊂ R'; at the step's order K, or at K + 4 when the remainder of order K,
bounded by another method than the integrator's, is too coarse), each step starts where the previous one ended,
and the lemma the run names (every ω_j > 0, or every ω_j < 0) holds at the end.
"""

from __future__ import annotations

from functools import lru_cache

from theorycheck.proofs.minor_first.proved.ratio_blowup import RatioBlowup

from theorycheck.proved.check import (
    EXTRA_ORDER,
    CertificateClaim,
    CertificateError,
    RunChecker,
    ball,
    exact_ball,
    items,
    order_of,
    serious,
)
from theorycheck.proved.tape import TreeEval, TreeEvals

__all__ = ["RatioBlowupChecker"]

#: the lemmas a run may end in, by fate (the names the depth-L system writes)
LEMMA_NAMES = RatioBlowup.LEMMA_NAMES


class RatioBlowupChecker(RunChecker):
    """The checker of ``theorycheck-validated-certificate-depth/2`` (even L ≥ 4)."""

    FORMAT = RatioBlowup.FORMAT
    LEMMAS = RatioBlowup.LEMMAS
    LEMMA_NAMES = RatioBlowup.LEMMA_NAMES

    def depth_rule(self, L: int) -> str | None:
        return None if L >= 4 and L % 2 == 0 else f"depth {L}: this format is for even L ≥ 4 (L = 2: the L = 2 format)"

    def fields(self, L: int, d: int):
        from theorycheck.symbolic import validated_fields as S

        return S.ratio_blowup_system(L, d)[3]

    def check_run(self, claim: CertificateClaim, ri: int, run: dict, fails: list, stop: bool) -> int:
        return _check_run(claim, ri, run, fails, stop)


class _System:
    """The blown-up ratio system of (L, d) as the checker evaluates it, on the coordinates of a run's Lohner
    sets: the states, then the parameters carried as states (field 0); its Jacobian (sympy.diff) on them; the
    perturbation ratios at the start."""

    def __init__(self, L: int, d: int, carried: tuple):
        import sympy as sp

        from theorycheck.symbolic import validated_fields as S

        _t, y, p, fields = S.ratio_blowup_system(L, d)
        by_name = {str(v): v for v in p}
        syms = [*y, *(by_name[c] for c in carried)]
        exprs = [*fields, *([sp.Integer(0)] * len(carried))]
        self.names = [str(v) for v in syms]
        self.carried = carried
        self.field = TreeEvals(exprs)  # the field's components, one tape
        self.jac = TreeEvals([sp.diff(e, s) for e in exprs for s in syms])  # its Jacobian, row by row
        u, _pr, ratios = S.balanced_forms(L, d)
        self.u = [str(v) for v in u]
        self.ratios = [TreeEval(r) for r in ratios]
        self.states = len(y)


@lru_cache(maxsize=8)
def _system(L: int, d: int, carried: tuple) -> _System:
    return _System(L, d, carried)


def _coordinates(claim: CertificateClaim, run: dict, ri: int) -> tuple:
    """The parameters run ``ri`` carries as states (after λ, ω_1 … ω_d), each a z_k named once."""
    from theorycheck.symbolic import validated_fields as S

    coords = run.get("coordinates")
    _t, y, p, _f = S.ratio_blowup_system(claim.depth, claim.d)
    states, params = [str(v) for v in y], {str(v) for v in p}
    if not isinstance(coords, list) or coords[:len(states)] != states:
        raise CertificateError(f"run {ri + 1}: coordinates must start with the states {', '.join(states)}")
    carried = tuple(coords[len(states):])
    if len(set(carried)) != len(carried) or not set(carried) <= params:
        raise CertificateError(f"run {ri + 1}: coordinates beyond the states must be distinct parameters z_k")
    return carried


def _check_run(claim: CertificateClaim, ri: int, run: dict, fails: list, stop: bool) -> int:
    """The start on the ray, every step, and the lemma the run names at its end. Returns the steps checked."""
    system = _system(claim.depth, claim.d, _coordinates(claim, run, ri))
    zb = claim.z_balls()
    fixed = {f"z{j + 1}": zb[j] for j in range(claim.d) if f"z{j + 1}" not in system.carried}
    c, A, R = _read_set(run.get("set0"), len(system.names), f"run {ri + 1}: set0")
    if not _contains(_box(c, A, R), _start(system, claim, ri, zb)):
        fails.append(f"run {ri + 1}: the initial set does not contain the start on the ray r(0) = c z")
    from flint import arb

    t_prev, n = arb(0), 0
    for ki, st in enumerate(items(run, "steps", f"run {ri + 1}")):
        if stop and serious(fails):
            return n
        n += 1
        where = f"run {ri + 1} (α = {run.get('alpha')}), step {ki + 1}"
        c, A, R, t_prev = _check_step(system, fixed, st, (c, A, R), t_prev, where, fails)
    if n == 0:
        fails.append(f"run {ri + 1}: no steps")
        return n
    om = _box(c, A, R)[1:1 + claim.d]
    lemma = run.get("lemma")
    holds = all(w > 0 for w in om) if lemma == LEMMA_NAMES["collapse"][0] else all(w < 0 for w in om)
    if not holds and not (stop and serious(fails)):
        fails.append(f"run {ri + 1} (α = {run.get('alpha')}): {lemma} does not hold at the end")
    return n


def _start(system: _System, claim: CertificateClaim, ri: int, zb: list) -> list:
    """(λ, ω, carried z) at the start: r(0) = the perturbation ratios at u = α·1, λ = ln|r − 1|, ω = (r − 1)/|r − 1|."""
    alpha = exact_ball(claim.alpha(ri))
    env = {f"z{j + 1}": zb[j] for j in range(claim.d)}
    env.update(rho=claim.rho_ball(), **{name: alpha for name in system.u})
    s0 = [ev(env) - 1 for ev in system.ratios]
    R0 = sum((v * v for v in s0[1:]), s0[0] * s0[0]).sqrt()
    return [R0.log(), *[v / R0 for v in s0], *(env[c] for c in system.carried)]


def _box(c, A, R) -> list:
    from flint import arb

    n = len(c)
    return [c[i] + sum((A[i, j] * R[j] for j in range(n)), arb(0)) for i in range(n)]


def _contains(box, point) -> bool:
    return len(box) == len(point) and all(b.contains(p) for b, p in zip(box, point))


def _read_set(S, n: int, where: str):
    from flint import arb_mat

    if not isinstance(S, dict):
        raise CertificateError(f"{where}: a Lohner set is an object {{c, A, R}}")
    c, R, rows = items(S, "c", where), items(S, "R", where), items(S, "A", where)
    if len(c) != n or len(R) != n or len(rows) != n or any(not isinstance(r, list) or len(r) != n for r in rows):
        raise CertificateError(f"{where}: a Lohner set of {n} coordinates needs c, R of {n} balls and A {n} × {n}")
    A = arb_mat(n, n, [ball(rows[i][j], where) for i in range(n) for j in range(n)])
    return [ball(v, where) for v in c], A, [ball(v, where) for v in R]


def _check_step(system: _System, fixed: dict, st, S, t_prev, where: str, fails: list):
    """One Lohner step: start time, Picard test, and the end set's inclusion of the checker's own enclosure.
    Returns the end set and time."""
    from flint import arb

    if not isinstance(st, dict):
        raise CertificateError(f"{where}: a step is an object")
    n = len(system.names)
    c, A, R = S
    t0, h, K = ball(st.get("t0"), f"{where}: t0"), ball(st.get("h"), f"{where}: h"), order_of(st, where)
    Bx = [ball(v, f"{where}: picard_box") for v in items(st, "picard_box", where)]
    end = _read_set(st.get("end"), n, f"{where}: end")
    if len(Bx) != n:
        raise CertificateError(f"{where}: picard_box must hold {n} balls")
    if not (h > 0 and t0.contains(t_prev)):
        fails.append(f"{where}: the step does not start where the previous one ended")
    Xb = _box(c, A, R)
    H = arb(h / 2, (h / 2).upper())  # [0, h]
    env = dict(fixed, varsigma=t0 + H, **{system.names[i]: Bx[i] for i in range(n)})
    F = system.field(env)
    P = [Xb[i] + H * F[i] for i in range(n)]
    if not all(Bx[i].contains_interior(P[i]) for i in range(n)):
        fails.append(f"{where}: the Picard box fails the Picard test")
    elif not any(_end_contains(system, fixed, t0, h, k, (c, A, R), Xb, P, end) for k in (K, K + EXTRA_ORDER)):
        fails.append(f"{where}: the end set does not contain the Taylor enclosure")
    return (*end, t0 + h)


def _end_contains(system: _System, fixed: dict, t0, h, K: int, S, Xb, P, end) -> bool:
    """A'^{-1}(Φ(c) + Z − c') + (A'^{-1} DΦ(X̄) A) R ⊂ R': the Taylor polynomial at the centre, the remainder over
    the Picard image P, the Jacobian of the Taylor map over the box X̄ (own series, own variational equation)."""
    from flint import arb, arb_mat

    c, A, R = S
    c1, A1, R1 = end
    n = len(c)
    T = t0 + arb(h / 2, (h / 2).upper())
    Xc = _series_solution(system, t0, c, K, fixed)
    phi = [_horner([_coef(Xc[i], k) for k in range(K + 1)], h) for i in range(n)]
    XP = _series_solution(system, T, P, K + 1, fixed)
    Z = [_coef(XP[i], K + 1) * h ** (K + 1) for i in range(n)]
    V = _variational(system, t0, _series_solution(system, t0, Xb, K, fixed), K, fixed)
    D = arb_mat(n, n, [_horner([V[k][i][j] for k in range(K + 1)], h) for i in range(n) for j in range(n)])
    Ainv = A1.inv()
    M = Ainv * (D * A)
    for i in range(n):
        acc = sum((Ainv[i, j] * (phi[j] + Z[j] - c1[j]) for j in range(n)), arb(0))
        acc += sum((M[i, j] * R[j] for j in range(n)), arb(0))
        if not R1[i].contains(acc):
            return False
    return True


def _series_solution(system: _System, t0, x0, K, env_fixed):
    """Own Taylor series of the solution through (t0, x0): Picard sweeps on series, the length set per sweep."""
    from flint import arb, arb_series, ctx

    old = ctx.cap
    try:
        n = len(x0)
        ctx.cap = 1
        X = [arb_series([v]) for v in x0]
        for m in range(1, K + 1):
            ctx.cap = m + 1
            env = dict(env_fixed, varsigma=arb_series([t0, arb(1)]), **{system.names[i]: X[i] for i in range(n)})
            F = [_lift(f) for f in system.field(env)]
            X = [F[i].integral() + x0[i] for i in range(n)]
        if any(x.prec < K + 1 for x in X):
            raise ArithmeticError("series truncated")
        return X
    finally:
        ctx.cap = old


def _lift(v):
    from flint import arb, arb_series

    return arb_series([v]) if isinstance(v, arb) else v


def _coef(s, k):
    from flint import arb

    c = s.coeffs()
    return c[k] if k < len(c) else arb(0)


def _variational(system: _System, t0, X, K, env_fixed):
    """Own ∂x_i/∂x0_j series along the state series X: V' = J(x(s)) V, V(0) = I; V[k][i][j] coefficient k."""
    from flint import arb, arb_series, ctx

    n = len(X)
    old = ctx.cap
    try:
        ctx.cap = K + 1
        env = dict(env_fixed, varsigma=arb_series([t0, arb(1)]), **{system.names[i]: X[i] for i in range(n)})
        flat = system.jac(env)
        J = [[_lift(flat[i * n + j]) for j in range(n)] for i in range(n)]
        one, zero = arb(1), arb(0)
        V0 = [[one if i == j else zero for j in range(n)] for i in range(n)]
        ctx.cap = 1
        V = [[arb_series([V0[i][j]]) for j in range(n)] for i in range(n)]
        for m in range(1, K + 1):
            ctx.cap = m + 1
            V = [[sum((J[i][k] * V[k][j] for k in range(1, n)), J[i][0] * V[0][j]).integral() + V0[i][j]
                  for j in range(n)] for i in range(n)]
        return [[[_coef(V[i][j], k) for j in range(n)] for i in range(n)] for k in range(K + 1)]
    finally:
        ctx.cap = old


def _horner(coefs, h):
    acc = coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = acc * h + c
    return acc
